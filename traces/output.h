// Where a writer's bytes go: a file that appears only when complete, compressed with xz or zstd
// when its name ends in .xz or .zst, or a string (tests, in-process use).
#ifndef CITCAT_TRACES_OUTPUT_H_
#define CITCAT_TRACES_OUTPUT_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace citcat::traces {

class ByteOutput {
 public:
  virtual ~ByteOutput() = default;
  // `bytes` must stay as they are until the next Write or Close returns: an output may write
  // them on a thread of its own meanwhile (the plain file does). So an empty Write is the way to
  // wait until the bytes given before are written.
  virtual absl::Status Write(absl::string_view bytes) = 0;
  // Flushes the compressor and makes the file appear. Without Close nothing is left behind.
  virtual absl::Status Close() = 0;
};

// How a trace file is compressed, by the suffix of its name.
enum class Compression { kNone, kXz, kZstd, kGzip };
Compression CompressionOf(absl::string_view name);
absl::string_view SuffixOf(Compression compression);  // ".xz", ".zst", ".gz" or ""
// An InvalidArgument naming the file when its name ends in the suffix of a compression citcat
// does not write (.bz2, .lz4, .zip, ...): never plain bytes under such a name.
absl::Status CheckCompressionSuffix(absl::string_view name);

// Compression by suffix: "x.xz" (liblzma, preset 3), "x.zst" (libzstd, level 3), "x.gz" (gzip
// level 1: ISA-L's igzip, or zlib where the build has no ISA-L), else plain; another
// compression's suffix is refused (CheckCompressionSuffix).
// Compression runs on `compression_threads` threads of the compressor's own (liblzma's
// multi-threaded encoder, zstd's workers); the file's bytes do not depend on how many from 1 up
// (0: zstd on the calling thread, other bytes; xz takes it as 1). A plain file is written on a
// thread of its own, and so is gzip's one compressor. `scratch`: a file the command reads back
// itself (io::OutputFile::CreateScratch).
absl::StatusOr<std::unique_ptr<ByteOutput>> OpenOutput(const std::string& path,
                                                       int compression_threads,
                                                       bool scratch = false);
// What OpenOutput puts in front of its file, by the suffix of `name`, in front of `out` instead,
// which must be done with the bytes it is given when its Write returns (a file, a
// JoinedOutput's piece): the compressor, or the thread that writes plain bytes.
absl::StatusOr<std::unique_ptr<ByteOutput>> EncodeInto(std::unique_ptr<ByteOutput> out,
                                                       absl::string_view name,
                                                       int compression_threads);
// The same with CompressionThreads().
absl::StatusOr<std::unique_ptr<ByteOutput>> OpenOutput(const std::string& path);

// The processors the machine has (at least 1).
int CompressionThreads();

class StringOutput final : public ByteOutput {
 public:
  explicit StringOutput(std::string* out) : out_(out) {}
  absl::Status Write(absl::string_view bytes) override {
    out_->append(bytes.data(), bytes.size());
    return absl::OkStatus();
  }
  absl::Status Close() override { return absl::OkStatus(); }

 private:
  std::string* out_;
};

// Decompresses a file written by OpenOutput (by the same suffix rule; a plain file as it is) in
// pieces of at most 64 KiB handed to `consume`; returns how many bytes it gave. Concatenated xz
// streams, zstd frames and gzip members read as one; data cut short or damaged is a DataLoss
// naming the file.
absl::StatusOr<uint64_t> Decompress(const std::string& path,
                                    const std::function<void(absl::string_view)>& consume);

// Decompresses a whole file written by OpenOutput (by the same suffix rule), for tests and tools
// reading back small traces; concatenated xz streams, zstd frames and gzip members read as one.
absl::StatusOr<std::string> ReadDecompressed(const std::string& path);

// Whether `path` is complete compressed data by the same suffix rule: one or more whole xz
// streams (each with its check), zstd frames or gzip members (zlib), read in pieces of 64 KiB, the
// decompressed bytes thrown away. Returns how many bytes it decompresses to; a plain file's size. A
// file cut short or damaged is a DataLoss naming it.
absl::StatusOr<uint64_t> CheckCompressed(const std::string& path);

}  // namespace citcat::traces

#endif  // CITCAT_TRACES_OUTPUT_H_
