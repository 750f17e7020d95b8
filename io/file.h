// Files as every tool in the project uses them: input that knows its offset for error messages,
// and output that appears under its final name only once it is complete.
#ifndef CITCAT_IO_FILE_H_
#define CITCAT_IO_FILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "io/cleanup.h"

namespace citcat::io {

// A file opened for sequential reading. "-" reads standard input.
class InputFile {
 public:
  static absl::StatusOr<std::unique_ptr<InputFile>> Open(const std::string& path);
  // Reads a copy of `data` instead of a file, under a name used in messages (tests, fuzzing).
  static std::unique_ptr<InputFile> FromMemory(std::string name, std::span<const uint8_t> data);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  // Reads up to out.size() bytes; returns fewer only at end of file.
  absl::StatusOr<size_t> Read(std::span<uint8_t> out);
  // Reads exactly out.size() bytes or fails with DataLoss naming what was cut short.
  absl::Status ReadExactly(std::span<uint8_t> out, const char* what);

  const std::string& path() const { return path_; }
  uint64_t offset() const { return offset_; }
  // Size in bytes, or -1 when not a regular file.
  int64_t size() const { return size_; }

 private:
  InputFile(std::string path, int fd, int64_t size)
      : path_(std::move(path)), fd_(fd), size_(size) {}
  std::string path_;
  int fd_;  // -1 when reading from memory_
  std::vector<uint8_t> memory_;
  int64_t size_;
  uint64_t offset_ = 0;
};

// A file written under a temporary name in the same directory and renamed into place by Commit(),
// so that readers never see a half-written file. Destroying it uncommitted removes the
// temporary, and so does a signal (cleanup.h). What is not a regular file is written in place:
// "-" (standard output), a character device (/dev/null), a FIFO; Commit() then reports any write
// error; so is a path under /dev or /proc (/dev/stdout). A path naming a directory is refused at
// once.
class OutputFile {
 public:
  static absl::StatusOr<std::unique_ptr<OutputFile>> Create(const std::string& path);
  // The same for a command's scratch file, which it reads back itself: Commit() makes it appear
  // at once, whatever OutputGroup is active.
  static absl::StatusOr<std::unique_ptr<OutputFile>> CreateScratch(const std::string& path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  absl::Status Write(std::span<const uint8_t> data);
  absl::Status Write(absl::string_view text) {
    return Write({reinterpret_cast<const uint8_t*>(text.data()), text.size()});
  }
  // Completes the file; while an OutputGroup exists, the rename waits for its Publish().
  absl::Status Commit();

  const std::string& path() const { return path_; }
  uint64_t bytes_written() const { return bytes_written_; }

 private:
  OutputFile(std::string path, std::string temp_path, int fd)
      : path_(std::move(path)), temp_path_(std::move(temp_path)), fd_(fd) {}
  absl::Status Flush();
  absl::Status WriteAll(std::span<const uint8_t> data);

  std::string path_;
  std::string temp_path_;  // empty when written in place
  SignalCleanup cleanup_;  // of temp_path_
  int fd_;
  std::string buffer_;
  uint64_t bytes_written_ = 0;
  bool grouped_ = true;  // Commit waits for the active OutputGroup
  bool committed_ = false;
};

// A directory of outputs (files, no subdirectories), all or nothing. A new one is built under a
// temporary sibling name (DIR.partial-PID, its parent created if need be), removed with what is
// in it when this is destroyed uncommitted (on any error) or on a signal; Commit() renames it to
// DIR once every file in it is complete (while an OutputGroup exists, at its Publish(), after
// the files in it). A directory that exists already is written in place: its files appear as
// any OutputFile's do, and nothing else is left in it.
class OutputDirectory {
 public:
  static absl::StatusOr<std::unique_ptr<OutputDirectory>> Create(const std::string& path);
  ~OutputDirectory();
  OutputDirectory(const OutputDirectory&) = delete;
  OutputDirectory& operator=(const OutputDirectory&) = delete;

  // Where the file `name` of the directory is written (in the temporary directory until Commit).
  std::string Path(absl::string_view name) const;
  // The directory written now: the temporary one until Commit, or the one that existed.
  const std::string& working_path() const { return temp_path_.empty() ? path_ : temp_path_; }
  absl::Status Commit();

  const std::string& path() const { return path_; }

 private:
  OutputDirectory(std::string path, std::string temp_path)
      : path_(std::move(path)), temp_path_(std::move(temp_path)) {}

  std::string path_;
  std::string temp_path_;  // empty when written in place
  SignalCleanup cleanup_;  // of temp_path_
  bool committed_ = false;
};

// The outputs of one command, all or nothing: while a group exists, OutputFile::Commit()
// completes each file under its temporary name, and Publish() renames them all into place (and
// then the OutputDirectory they are in). A group destroyed unpublished, or a rename that fails,
// leaves none of them behind (the ones already renamed are removed again). One group at a time.
class OutputGroup {
 public:
  OutputGroup();
  ~OutputGroup();
  OutputGroup(const OutputGroup&) = delete;
  OutputGroup& operator=(const OutputGroup&) = delete;

  absl::Status Publish();

 private:
  friend class OutputFile;
  friend class OutputDirectory;
  struct Pending {
    std::string temp, path;
    SignalCleanup cleanup;
    bool directory = false;  // an OutputDirectory: removed with what is in it
  };
  std::vector<Pending> pending_;
};

// Reads a whole (small) file into memory, refusing files larger than max_bytes.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path, uint64_t max_bytes);

}  // namespace citcat::io

#endif  // CITCAT_IO_FILE_H_
