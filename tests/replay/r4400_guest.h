// A small hand-assembled guest for the traced R4400 system that follows the CITCAT contract of
// docs/machines/r4400-system.md, for end-to-end replay tests until the real guest kernel runs:
// a begin-of-trace driver (cache flush, begin marker, CP0/TLB/HI/LO/GPR dump, Random read 37
// instructions before the resume point, state-done in the delay slot of `jr k0`), a general
// exception vector with the interrupt report (Cause echo, one branch, EPC and Status stores), a
// TLB refill handler, a timer, a disk read by DMA, echoed Count reads and device reads.
#ifndef CITCAT_TESTS_REPLAY_R4400_GUEST_H_
#define CITCAT_TESTS_REPLAY_R4400_GUEST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "machine/r4400/machine.h"

namespace citcat::replay_test {

struct GuestOptions {
  int iterations = 3000;         // of the work loop (about 20 instructions each)
  bool read_random = false;      // the workload stores CP0 Random where the CAT shows it
  uint32_t timer_period = 1500;  // Count ticks between timer interrupts
  // The work loop reads and echoes Count with interrupts masked, as the contract requires; false
  // breaks that rule (an interrupt between a read and its echo reorders the echoes).
  bool mask_count_reads = true;
};

struct GuestCapture {
  machine::RunSummary summary;
  std::string console;
  cat::CatHeader header;
};

// Runs the guest on the traced machine with the outside world's `seed` and writes the CAT.
GuestCapture CaptureGuest(uint64_t seed, const GuestOptions& options, const std::string& cat_path);

}  // namespace citcat::replay_test

#endif  // CITCAT_TESTS_REPLAY_R4400_GUEST_H_
