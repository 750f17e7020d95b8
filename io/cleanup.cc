// The table of temporaries is plain static memory written before a slot is marked in use, so the
// signal handler reads it with nothing but async-signal-safe calls (unlink, rmdir, write, _exit).
#include "io/cleanup.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

namespace citcat::io {
namespace {

constexpr int kSlots = 64;
constexpr size_t kPathBytes = 4096;

struct Slot {
  std::atomic<bool> claimed{false};  // by a thread, which then writes the path
  std::atomic<bool> used{false};     // the path is complete
  bool directory = false;
  char path[kPathBytes];
};
Slot slots[kSlots];
char program_name[128];
bool clear_progress_line = false;

void Remove(bool directories) {
  for (Slot& s : slots) {
    if (!s.used.load(std::memory_order_acquire) || s.directory != directories) continue;
    if (directories) {
      rmdir(s.path);
    } else {
      unlink(s.path);
    }
  }
}

void Append(char* line, size_t& n, size_t size, const char* text) {
  while (*text != '\0' && n + 1 < size) line[n++] = *text++;
}

void OnSignal(int signal) {
  Remove(false);
  Remove(true);
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

SignalCleanup::SignalCleanup(const std::string& path, bool directory) {
  if (path.size() >= kPathBytes) return;
  for (int i = 0; i < kSlots; ++i) {
    Slot& s = slots[i];
    bool free = false;
    if (!s.claimed.compare_exchange_strong(free, true)) continue;
    std::memcpy(s.path, path.c_str(), path.size() + 1);
    s.directory = directory;
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
