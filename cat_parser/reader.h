// Streaming CAT reader. It holds one chunk (at most 1 MiB) at a time, checks every checksum and
// every structural rule of docs/cat-format.md, and names the byte offset of any damage.
#ifndef CITCAT_CAT_PARSER_READER_H_
#define CITCAT_CAT_PARSER_READER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cat_parser/record.h"
#include "io/file.h"

namespace citcat::cat {

class CatReader {
 public:
  // Opens a file ("-" for standard input) and reads its header.
  static absl::StatusOr<std::unique_ptr<CatReader>> Open(const std::string& path);
  static absl::StatusOr<std::unique_ptr<CatReader>> Open(std::unique_ptr<io::InputFile> in);

  const CatHeader& header() const { return header_; }
  uint16_t minor_version() const { return minor_version_; }

  // Reads the next record into `record`, whose data stays valid until the next call. Returns
  // false once the end of the trace has been reached and checked.
  absl::StatusOr<bool> Next(BusRecord& record);

  // Index and file offset of the record last returned.
  uint64_t record_index() const { return next_index_ - 1; }
  uint64_t record_offset() const { return record_offset_; }
  // Bytes consumed so far, and the file's size (-1 when not a regular file): for progress.
  uint64_t bytes_read() const { return in_->offset(); }
  int64_t file_size() const { return in_->size(); }
  const std::string& path() const { return in_->path(); }

 private:
  explicit CatReader(std::unique_ptr<io::InputFile> in) : in_(std::move(in)) {}
  absl::Status ReadHeader();
  // Loads the next chunk of records; sets done_ at the end chunk.
  absl::Status LoadChunk();
  absl::Status Corrupt(uint64_t offset, absl::string_view what) const;

  std::unique_ptr<io::InputFile> in_;
  CatHeader header_;
  uint16_t minor_version_ = 0;
  std::vector<uint8_t> payload_;
  size_t cursor_ = 0;            // next record within payload_
  uint64_t payload_offset_ = 0;  // file offset of payload_[0]
  uint32_t chunk_left_ = 0;      // records of the current chunk not yet returned
  uint64_t next_index_ = 0;      // index of the next record in the file
  uint64_t record_offset_ = 0;
  bool done_ = false;
};

}  // namespace citcat::cat

#endif  // CITCAT_CAT_PARSER_READER_H_
