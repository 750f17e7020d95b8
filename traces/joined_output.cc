#include "traces/joined_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "absl/strings/str_cat.h"

namespace citcat::traces {

class JoinedOutput::PieceOutput final : public ByteOutput {
 public:
  PieceOutput(JoinedOutput& joined, size_t k) : joined_(joined), k_(k) {}
  absl::Status Write(absl::string_view bytes) override { return joined_.Write(k_, bytes); }
  absl::Status Close() override { return joined_.Close(k_); }

 private:
  JoinedOutput& joined_;
  const size_t k_;
};

absl::StatusOr<std::unique_ptr<JoinedOutput>> JoinedOutput::Create(const std::string& path,
                                                                   uint64_t memory_budget) {
  absl::StatusOr<std::unique_ptr<io::OutputFile>> file = io::OutputFile::Create(path);
  if (!file.ok()) return file.status();
  // Scratch files go next to a file (the same file system, with room for it), else (standard
  // output, a device) to the temporary directory.
  std::string dir = std::filesystem::temp_directory_path().string();
  struct stat st;
  if (path != "-" && (stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode))) {
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    dir = parent.empty() ? "." : parent.string();
  }
  return std::unique_ptr<JoinedOutput>(
      new JoinedOutput(*std::move(file), std::move(dir), memory_budget));
}

JoinedOutput::~JoinedOutput() {
  for (Piece& p : pieces_) {
    if (p.spill_fd >= 0) close(p.spill_fd);
  }
}

std::unique_ptr<ByteOutput> JoinedOutput::AddPiece() {
  std::lock_guard lock(mutex_);
  pieces_.emplace_back();
  return std::make_unique<PieceOutput>(*this, pieces_.size() - 1);
}

void JoinedOutput::Fail(absl::Status s) {
  if (status_.ok()) status_ = std::move(s);
}

absl::Status JoinedOutput::Write(size_t k, absl::string_view bytes) {
  std::unique_lock lock(mutex_);
  if (!status_.ok() || bytes.empty()) return status_;
  Piece& p = pieces_[k];
  if (k == head_ && !draining_) {
    // Only the head's own thread writes the file now: a drain starts at a head's Close.
    lock.unlock();
    absl::Status s = file_->Write(bytes);
    if (!s.ok()) {
      lock.lock();
      Fail(s);
    }
    return s;
  }
  if (held_bytes_ + bytes.size() <= budget_) {
    // Into a buffer written out before, so that memory once touched is used again.
    Held& h = p.held.emplace_back();
    if (!spare_.empty()) {
      h.bytes = std::move(spare_.back());
      spare_.pop_back();
    }
    h.bytes.assign(bytes.data(), bytes.size());
    held_bytes_ += bytes.size();
    return absl::OkStatus();
  }
  lock.unlock();
  Held range;
  absl::Status s = Spill(p, bytes, range);
  lock.lock();
  if (!s.ok()) {
    Fail(s);
    return s;
  }
  if (!p.held.empty() && p.held.back().bytes.empty() &&
      p.held.back().spill_end == range.spill_begin) {
    p.held.back().spill_end = range.spill_end;
  } else {
    p.held.push_back(std::move(range));
  }
  // It may have become the head while the lock was free: nobody else drains it then.
  if (k == head_ && !draining_) {
    draining_ = true;
    Drain(lock);
  }
  return status_;
}

absl::Status JoinedOutput::Close(size_t k) {
  std::unique_lock lock(mutex_);
  pieces_[k].closed = true;
  if (k == head_ && !draining_) {
    draining_ = true;
    Drain(lock);
  }
  return status_;
}

// With draining_ set: writes what the head holds, and moves on to the next piece each time the
// head is complete, until the head is a piece still being written that holds nothing (its thread
// then writes straight to the file) or the last piece added.
void JoinedOutput::Drain(std::unique_lock<std::mutex>& lock) {
  while (head_ < pieces_.size()) {
    Piece& p = pieces_[head_];
    while (!p.held.empty()) {
      Held h = std::move(p.held.front());
      p.held.pop_front();
      held_bytes_ -= h.bytes.size();
      lock.unlock();
      absl::Status s = h.bytes.empty() ? CopySpill(p, h) : file_->Write(h.bytes);
      lock.lock();
      if (!s.ok()) Fail(s);
      if (!h.bytes.empty()) spare_.push_back(std::move(h.bytes));
    }
    if (!p.closed) break;
    if (p.spill_fd >= 0) close(p.spill_fd);
    p.spill_fd = -1;
    ++head_;
  }
  draining_ = false;
}

// Appends `bytes` to the piece's scratch file (made on first use); `range` says where they are.
absl::Status JoinedOutput::Spill(Piece& p, absl::string_view bytes, Held& range) {
  if (p.spill_fd < 0) {
    std::string name = absl::StrCat(spill_dir_, "/.citcat-piece-XXXXXX");
    std::vector<char> buffer(name.begin(), name.end());
    buffer.push_back('\0');
    const int fd = mkstemp(buffer.data());
    if (fd < 0) {
      return absl::UnavailableError(
          absl::StrCat(spill_dir_, ": cannot make a scratch file: ", std::strerror(errno)));
    }
    unlink(buffer.data());  // gone with its descriptor, whatever happens to the command
    p.spill_fd = fd;
  }
  range.spill_begin = p.spill_size;
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n =
        pwrite(p.spill_fd, bytes.data() + done, bytes.size() - done, p.spill_size + done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return absl::UnavailableError(
          absl::StrCat(spill_dir_, ": cannot write a scratch file: ", std::strerror(errno)));
    }
    done += static_cast<size_t>(n);
  }
  p.spill_size += bytes.size();
  range.spill_end = p.spill_size;
  return absl::OkStatus();
}

absl::Status JoinedOutput::CopySpill(const Piece& p, const Held& range) {
  std::vector<char> buffer(1 << 20);
  for (uint64_t at = range.spill_begin; at < range.spill_end;) {
    const size_t want =
        static_cast<size_t>(std::min<uint64_t>(buffer.size(), range.spill_end - at));
    const ssize_t n = pread(p.spill_fd, buffer.data(), want, static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return absl::UnavailableError(
          absl::StrCat(spill_dir_, ": cannot read a scratch file back: ", std::strerror(errno)));
    }
    if (absl::Status s = file_->Write(absl::string_view(buffer.data(), static_cast<size_t>(n)));
        !s.ok()) {
      return s;
    }
    at += static_cast<uint64_t>(n);
  }
  return absl::OkStatus();
}

absl::Status JoinedOutput::Commit() {
  std::lock_guard lock(mutex_);
  if (!status_.ok()) return status_;
  if (head_ != pieces_.size()) {
    return absl::InternalError("a piece of the joined output was not closed");
  }
  return file_->Commit();
}

uint64_t JoinedOutput::bytes_written() const {
  std::lock_guard lock(mutex_);
  return file_->bytes_written();
}

}  // namespace citcat::traces
