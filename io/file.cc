#include "io/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace citcat::io {
namespace {

constexpr size_t kOutputBufferBytes = 1 << 20;
constexpr size_t kDirectWriteBytes = 32 << 10;

OutputGroup* active_group = nullptr;

absl::Status ErrnoError(const std::string& path, absl::string_view what, int err) {
  std::string message = absl::StrCat(path, ": ", what, ": ", std::strerror(err));
  if (err == ENOENT) return absl::NotFoundError(message);
  if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(message);
  return absl::UnavailableError(message);
}

}  // namespace

absl::StatusOr<std::unique_ptr<InputFile>> InputFile::Open(const std::string& path) {
  int fd = path == "-" ? dup(STDIN_FILENO) : open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(path, "cannot open", errno);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    return ErrnoError(path, "cannot stat", err);
  }
  if (S_ISDIR(st.st_mode)) {
    close(fd);
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory"));
  }
  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  int64_t size = S_ISREG(st.st_mode) ? st.st_size : -1;
  return std::unique_ptr<InputFile>(new InputFile(path, fd, size));
}

std::unique_ptr<InputFile> InputFile::FromMemory(std::string name, std::span<const uint8_t> data) {
  std::unique_ptr<InputFile> file(new InputFile(std::move(name), -1, data.size()));
  file->memory_.assign(data.begin(), data.end());
  return file;
}

InputFile::~InputFile() {
  if (fd_ >= 0) close(fd_);
}

absl::StatusOr<size_t> InputFile::Read(std::span<uint8_t> out) {
  if (fd_ < 0) {
    size_t n = std::min<size_t>(out.size(), memory_.size() - offset_);
    if (n > 0) std::memcpy(out.data(), memory_.data() + offset_, n);
    offset_ += n;
    return n;
  }
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = read(fd_, out.data() + done, out.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(path_, absl::StrCat("read error at offset ", offset_ + done), errno);
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  offset_ += done;
  return done;
}

absl::Status InputFile::ReadExactly(std::span<uint8_t> out, const char* what) {
  uint64_t start = offset_;
  absl::StatusOr<size_t> n = Read(out);
  if (!n.ok()) return n.status();
  if (*n != out.size()) {
    return absl::DataLossError(absl::StrCat(path_, ": offset ", start, ": truncated ", what, " (",
                                            *n, " of ", out.size(), " bytes present)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<OutputFile>> OutputFile::Create(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("an empty output file name");
  if (path == "-") {
    int fd = dup(STDOUT_FILENO);
    if (fd < 0) return ErrnoError(path, "cannot write standard output", errno);
    return std::unique_ptr<OutputFile>(new OutputFile(path, "", fd));
  }
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory"));
    // /dev/stdout and its kind name a stream even when it leads to a regular file: renaming over
    // the name would replace the link in /dev, not write the stream.
    const bool stream = absl::StartsWith(path, "/dev/") || absl::StartsWith(path, "/proc/");
    if (!S_ISREG(st.st_mode) || stream) {
      // A device or a FIFO: renaming a regular file over it would replace the node itself.
      int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0) return ErrnoError(path, "cannot open", errno);
      return std::unique_ptr<OutputFile>(new OutputFile(path, "", fd));
    }
  }
  std::string temp = absl::StrCat(path, ".partial-XXXXXX");
  BlockSignals hold;  // the temporary exists only once it is registered
  int fd = mkstemp(temp.data());
  if (fd < 0) return ErrnoError(path, "cannot create", errno);
  fchmod(fd, 0644);
  std::unique_ptr<OutputFile> out(new OutputFile(path, temp, fd));
  out->cleanup_ = SignalCleanup(temp);
  return out;
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) close(fd_);
  if (!committed_ && !temp_path_.empty()) unlink(temp_path_.c_str());
}

absl::Status OutputFile::Write(std::span<const uint8_t> data) {
  bytes_written_ += data.size();
  // Large blocks (a CAT chunk) go straight to the file, after what is buffered.
  bool direct = data.size() >= kDirectWriteBytes;
  if (direct || buffer_.size() + data.size() > kOutputBufferBytes) {
    if (absl::Status s = Flush(); !s.ok()) return s;
  }
  if (direct) return WriteAll(data);
  buffer_.append(reinterpret_cast<const char*>(data.data()), data.size());
  return absl::OkStatus();
}

absl::Status OutputFile::WriteAll(std::span<const uint8_t> data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd_, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(path_, "write error", errno);
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status OutputFile::Flush() {
  absl::Status s = WriteAll({reinterpret_cast<const uint8_t*>(buffer_.data()), buffer_.size()});
  buffer_.clear();
  return s;
}

absl::Status OutputFile::Commit() {
  if (absl::Status s = Flush(); !s.ok()) return s;
  int fd = fd_;
  fd_ = -1;
  if (close(fd) != 0) return ErrnoError(path_, "write error", errno);
  if (temp_path_.empty()) {
    committed_ = true;
    return absl::OkStatus();
  }
  if (active_group != nullptr && grouped_) {
    active_group->pending_.push_back({temp_path_, path_, std::move(cleanup_)});
    committed_ = true;  // the group owns the temporary now
    return absl::OkStatus();
  }
  if (rename(temp_path_.c_str(), path_.c_str()) != 0)
    return ErrnoError(path_, "cannot rename", errno);
  cleanup_.Release();
  committed_ = true;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<OutputFile>> OutputFile::CreateScratch(const std::string& path) {
  absl::StatusOr<std::unique_ptr<OutputFile>> file = Create(path);
  if (file.ok()) (*file)->grouped_ = false;
  return file;
}

namespace {

// Removes a file, or a directory with what is in it.
void RemovePath(const std::string& path, bool directory) {
  if (!directory) {
    unlink(path.c_str());
    return;
  }
  std::error_code ignored;
  std::filesystem::remove_all(path, ignored);
}

}  // namespace

absl::StatusOr<std::unique_ptr<OutputDirectory>> OutputDirectory::Create(const std::string& path) {
  std::string dir = path;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();  // "out/" names "out"
  if (dir.empty()) return absl::InvalidArgumentError("an empty output directory name");
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      return absl::InvalidArgumentError(absl::StrCat(dir, ": exists and is not a directory"));
    }
    return std::unique_ptr<OutputDirectory>(new OutputDirectory(dir, ""));
  }
  if (errno != ENOENT) return ErrnoError(dir, "cannot create", errno);
  std::error_code error;
  const std::filesystem::path parent = std::filesystem::path(dir).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, error);
  if (error) {
    return absl::UnavailableError(
        absl::StrCat(parent.string(), ": cannot create: ", error.message()));
  }
  std::string temp = absl::StrCat(dir, ".partial-", getpid());
  BlockSignals hold;  // the temporary exists only once it is registered
  if (mkdir(temp.c_str(), 0777) != 0) return ErrnoError(temp, "cannot create", errno);
  std::unique_ptr<OutputDirectory> out(new OutputDirectory(dir, temp));
  out->cleanup_ = SignalCleanup::Tree(temp);
  return out;
}

OutputDirectory::~OutputDirectory() {
  if (!committed_ && !temp_path_.empty()) RemovePath(temp_path_, /*directory=*/true);
}

std::string OutputDirectory::Path(absl::string_view name) const {
  return absl::StrCat(working_path(), "/", name);
}

absl::Status OutputDirectory::Commit() {
  if (temp_path_.empty() || committed_) {
    committed_ = true;
    return absl::OkStatus();
  }
  committed_ = true;
  if (active_group != nullptr) {  // after the files in it, which the group renames first
    active_group->pending_.push_back({temp_path_, path_, std::move(cleanup_), true});
    return absl::OkStatus();
  }
  if (rename(temp_path_.c_str(), path_.c_str()) != 0) {
    const absl::Status error = ErrnoError(path_, "cannot rename", errno);
    RemovePath(temp_path_, /*directory=*/true);
    return error;
  }
  cleanup_.Release();
  return absl::OkStatus();
}

OutputGroup::OutputGroup() { active_group = this; }

OutputGroup::~OutputGroup() {
  active_group = nullptr;
  for (Pending& p : pending_) RemovePath(p.temp, p.directory);
}

absl::Status OutputGroup::Publish() {
  active_group = nullptr;
  for (size_t i = 0; i < pending_.size(); ++i) {
    if (rename(pending_[i].temp.c_str(), pending_[i].path.c_str()) == 0) continue;
    const absl::Status error = ErrnoError(pending_[i].path, "cannot rename", errno);
    for (size_t j = 0; j < i; ++j) RemovePath(pending_[j].path, pending_[j].directory);
    pending_.erase(pending_.begin(), pending_.begin() + i);  // the destructor removes the rest
    return error;
  }
  pending_.clear();
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path, uint64_t max_bytes) {
  absl::StatusOr<std::unique_ptr<InputFile>> in = InputFile::Open(path);
  if (!in.ok()) return in.status();
  std::string data;
  uint8_t block[1 << 16];
  while (true) {
    absl::StatusOr<size_t> n = (*in)->Read(block);
    if (!n.ok()) return n.status();
    if (*n == 0) break;
    if (data.size() + *n > max_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat(path, ": larger than the limit of ", max_bytes, " bytes"));
    }
    data.append(reinterpret_cast<const char*>(block), *n);
  }
  return data;
}

}  // namespace citcat::io
