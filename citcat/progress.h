// A one-line progress display on standard error, for long jobs run from a terminal. It stays
// silent when standard error is not a terminal or --quiet is given, and redraws at most ten times
// a second, so calling Update() often costs next to nothing.
#ifndef CITCAT_CITCAT_PROGRESS_H_
#define CITCAT_CITCAT_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <string>

namespace citcat::cli {

class Progress {
 public:
  // `what` names the job ("dump"); `total` is the amount of work in `unit`s, 0 if unknown.
  Progress(std::string what, uint64_t total, std::string unit);
  ~Progress() { Finish(); }

  void Update(uint64_t done) {
    if (enabled_ && ++calls_ % 4096 == 0) Draw(done);
  }
  // The same for a caller that calls seldom (every 100 ms or so): draws each time.
  void Show(uint64_t done) {
    if (enabled_) Draw(done);
  }
  // Clears the line.
  void Finish();

 private:
  void Draw(uint64_t done);

  std::string what_, unit_;
  uint64_t total_;
  bool enabled_;
  bool drawn_ = false;
  uint64_t calls_ = 0;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace citcat::cli

#endif  // CITCAT_CITCAT_PROGRESS_H_
