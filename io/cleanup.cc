// The table of temporaries is plain static memory written before a slot is marked in use, so the
// signal handler reads it with nothing but async-signal-safe calls (unlink, rmdir, write, _exit).
#include "io/cleanup.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

namespace citcat::io {
namespace {

constexpr int kSlots = 64;
constexpr size_t kPathBytes = 4096;

enum class Kind { kFile, kDirectory, kTree };

struct Slot {
  std::atomic<bool> claimed{false};  // by a thread, which then writes the path
  std::atomic<bool> used{false};     // the path is complete
  Kind kind = Kind::kFile;
  char path[kPathBytes];
};
Slot slots[kSlots];
char program_name[128];
bool clear_progress_line = false;

// Removes the files in `dir` and then `dir`, with system calls alone (getdents64 rather than
// readdir, which may allocate).
void RemoveTree(const char* dir) {
  // Renamed first: a thread still writing builds its paths from the old name, so from here on
  // it can neither create a file in the directory nor rename one into it.
  char moved[kPathBytes + 16];
  size_t n = 0;
  while (dir[n] != '\0' && n < kPathBytes) {
    moved[n] = dir[n];
    ++n;
  }
  const char suffix[] = ".removing";
  for (size_t i = 0; i < sizeof suffix; ++i) moved[n + i] = suffix[i];
  const char* path = rename(dir, moved) == 0 ? moved : dir;
  const int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  alignas(8) char entries[4096];
  for (;;) {
    const long got = syscall(SYS_getdents64, fd, entries, sizeof entries);
    if (got <= 0) break;
    for (long at = 0; at < got;) {
      const auto* e = reinterpret_cast<const struct dirent64*>(entries + at);
      at += e->d_reclen;
      const char* name = e->d_name;
      if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
      unlinkat(fd, name, 0);
    }
  }
  close(fd);
  rmdir(path);
}

void Remove(Kind kind) {
  for (Slot& s : slots) {
    if (!s.used.load(std::memory_order_acquire) || s.kind != kind) continue;
    switch (kind) {
      case Kind::kFile:
        unlink(s.path);
        break;
      case Kind::kDirectory:
        rmdir(s.path);
        break;
      case Kind::kTree:
        RemoveTree(s.path);
        break;
    }
  }
}

void Append(char* line, size_t& n, size_t size, const char* text) {
  while (*text != '\0' && n + 1 < size) line[n++] = *text++;
}

void OnSignal(int signal) {
  Remove(Kind::kFile);
  Remove(Kind::kDirectory);
  Remove(Kind::kTree);
  // A reader that stopped early (`| head`): quiet, as any program in a pipeline.
  if (signal == SIGPIPE) _exit(128 + signal);
  char line[256];
  size_t n = 0;
  if (clear_progress_line) Append(line, n, sizeof line, "\r\033[K");
  Append(line, n, sizeof line, program_name);
  Append(line, n, sizeof line,
         signal == SIGINT    ? ": interrupted (SIGINT)"
         : signal == SIGTERM ? ": terminated (SIGTERM)"
                             : ": hung up (SIGHUP)");
  Append(line, n, sizeof line, ", temporary files removed\n");
  ssize_t ignored = write(STDERR_FILENO, line, n);
  (void)ignored;
  _exit(128 + signal);
}

}  // namespace

void RemoveTemporariesOnSignal(const std::string& program) {
  size_t n = std::min(program.size(), sizeof program_name - 1);
  std::memcpy(program_name, program.data(), n);
  program_name[n] = '\0';
  clear_progress_line = isatty(STDERR_FILENO);
  struct sigaction action = {};
  action.sa_handler = OnSignal;
  sigfillset(&action.sa_mask);
  for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) sigaction(signal, &action, nullptr);
}

SignalCleanup::SignalCleanup(const std::string& path, bool directory)
    : SignalCleanup(path, static_cast<int>(directory ? Kind::kDirectory : Kind::kFile)) {}

SignalCleanup SignalCleanup::Tree(const std::string& directory) {
  return SignalCleanup(directory, static_cast<int>(Kind::kTree));
}

SignalCleanup::SignalCleanup(const std::string& path, int kind) {
  if (path.size() >= kPathBytes) return;
  for (int i = 0; i < kSlots; ++i) {
    Slot& s = slots[i];
    bool free = false;
    if (!s.claimed.compare_exchange_strong(free, true)) continue;
    std::memcpy(s.path, path.c_str(), path.size() + 1);
    s.kind = static_cast<Kind>(kind);
    s.used.store(true, std::memory_order_release);
    slot_ = i;
    return;
  }
}

SignalCleanup& SignalCleanup::operator=(SignalCleanup&& other) noexcept {
  if (this != &other) {
    Release();
    slot_ = other.slot_;
    other.slot_ = -1;
  }
  return *this;
}

void SignalCleanup::Release() {
  if (slot_ < 0) return;
  slots[slot_].used.store(false, std::memory_order_release);
  slots[slot_].claimed.store(false, std::memory_order_release);
  slot_ = -1;
}

BlockSignals::BlockSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) sigaddset(&set, signal);
  sigprocmask(SIG_BLOCK, &set, &old_);
}

BlockSignals::~BlockSignals() { sigprocmask(SIG_SETMASK, &old_, nullptr); }

}  // namespace citcat::io
