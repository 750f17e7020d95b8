// What an interrupted command leaves behind: nothing. Temporaries (an output not yet renamed into
// place, a scratch directory) are registered here, and a SIGINT, SIGTERM or SIGHUP removes them,
// prints one line and exits 128 + the signal number (130, 143, 129); a SIGPIPE (the reader of
// `-o -` or of a FIFO stopped) removes them and exits 141 without a word, as programs in a
// pipeline do.
#ifndef CITCAT_IO_CLEANUP_H_
#define CITCAT_IO_CLEANUP_H_

#include <csignal>
#include <string>

namespace citcat::io {

// Installs the handlers; `program` ("citcat replay") starts the line printed on a signal.
void RemoveTemporariesOnSignal(const std::string& program);

// A path removed on a signal (a directory is removed after every file, and only if empty), from
// construction until Release() or destruction. Registration never fails the caller: when the
// table of temporaries is full, the path is simply not removed on a signal.
class SignalCleanup {
 public:
  SignalCleanup() = default;
  explicit SignalCleanup(const std::string& path, bool directory = false);
  // A directory removed on a signal with every file in it (one level, no subdirectories), even
  // while other threads are writing there: it is renamed out of their way first, so that none
  // can add a file after the removal has listed it.
  static SignalCleanup Tree(const std::string& directory);
  ~SignalCleanup() { Release(); }
  SignalCleanup(SignalCleanup&& other) noexcept : slot_(other.slot_) { other.slot_ = -1; }
  SignalCleanup& operator=(SignalCleanup&& other) noexcept;
  SignalCleanup(const SignalCleanup&) = delete;
  SignalCleanup& operator=(const SignalCleanup&) = delete;

  // The path is no temporary any more (renamed into place, or removed).
  void Release();

 private:
  SignalCleanup(const std::string& path, int kind);  // kind: cleanup.cc's Kind
  int slot_ = -1;
};

// Holds SIGINT, SIGTERM, SIGHUP and SIGPIPE back while it exists, so that a file can be created and
// registered as one step.
class BlockSignals {
 public:
  BlockSignals();
  ~BlockSignals();

 private:
  sigset_t old_;
};

}  // namespace citcat::io

#endif  // CITCAT_IO_CLEANUP_H_
