#include "citcat/progress.h"

#include <unistd.h>

#include <cstdio>

#include "absl/flags/flag.h"
#include "citcat/command.h"

namespace citcat::cli {

Progress::Progress(std::string what, uint64_t total, std::string unit)
    : what_(std::move(what)),
      unit_(std::move(unit)),
      total_(total),
      enabled_(isatty(STDERR_FILENO) && !absl::GetFlag(FLAGS_quiet)),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

void Progress::Draw(uint64_t done) {
  auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  double seconds = std::chrono::duration<double>(now - start_).count();
  double rate = seconds > 0 ? static_cast<double>(done) / seconds / 1e6 : 0;
  if (total_ > 0) {
    std::fprintf(stderr, "\r%s: %5.1f%%  %.1f M%s/s ", what_.c_str(), 100.0 * done / total_, rate,
                 unit_.c_str());
  } else {
    std::fprintf(stderr, "\r%s: %.1f M%s  %.1f M%s/s ", what_.c_str(), done / 1e6, unit_.c_str(),
                 rate, unit_.c_str());
  }
  drawn_ = true;
}

void Progress::Finish() {
  if (drawn_) std::fprintf(stderr, "\r\033[K");
  drawn_ = false;
}

}  // namespace citcat::cli
