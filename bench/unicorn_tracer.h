// The peer of trace_figures: the tracer a user would build on Unicorn to get a ChampSim trace of
// a MIPS program, running one R4400 guest workload's own ELF (user code, o32, big-endian) with
// UC_HOOK_CODE and UC_HOOK_MEM hooks and writing one 64-byte `input_instr` per instruction
// (traces/champsim.h) to a file.
#ifndef CITCAT_BENCH_UNICORN_TRACER_H_
#define CITCAT_BENCH_UNICORN_TRACER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace citcat::bench {

struct UnicornTrace {
  uint64_t instructions = 0;  // code hooks (also on the slot of a branch-likely not taken)
  uint64_t records = 0;       // written: the instructions run
  uint64_t syscalls = 0;
  int exit_code = -1;
};

// Runs the guest program `elf_path` to its exit system call, writing the trace to `out_path`.
absl::StatusOr<UnicornTrace> TraceWithUnicorn(const std::string& elf_path,
                                              const std::string& out_path);

}  // namespace citcat::bench

#endif  // CITCAT_BENCH_UNICORN_TRACER_H_
