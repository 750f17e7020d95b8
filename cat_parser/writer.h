// Streaming CAT writer: records go out in chunks of about 64 KiB, so memory stays flat however
// long the trace. The file appears under its name only after Finish().
#ifndef CITCAT_CAT_PARSER_WRITER_H_
#define CITCAT_CAT_PARSER_WRITER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cat_parser/record.h"
#include "io/file.h"

namespace citcat::cat {

class CatWriter {
 public:
  static absl::StatusOr<std::unique_ptr<CatWriter>> Create(const std::string& path,
                                                           const CatHeader& header);
  // Writes to an already open output (which the writer then owns).
  static absl::StatusOr<std::unique_ptr<CatWriter>> Create(std::unique_ptr<io::OutputFile> out,
                                                           const CatHeader& header);

  absl::Status Write(const BusRecord& record);
  // Ends the trace and renames the file into place. Without it, nothing is left behind.
  absl::Status Finish();

  const CatHeader& header() const { return header_; }
  uint64_t records_written() const { return records_; }
  uint64_t bytes_written() const { return out_->bytes_written() + chunk_.size(); }

 private:
  CatWriter(std::unique_ptr<io::OutputFile> out, CatHeader header)
      : out_(std::move(out)), header_(std::move(header)) {}
  absl::Status FlushChunk();

  std::unique_ptr<io::OutputFile> out_;
  CatHeader header_;
  std::vector<uint8_t> chunk_;  // chunk header placeholder + payload being built
  uint32_t chunk_records_ = 0;
  uint64_t chunk_first_ = 0;
  uint64_t records_ = 0;
};

}  // namespace citcat::cat

#endif  // CITCAT_CAT_PARSER_WRITER_H_
