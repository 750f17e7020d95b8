// What `citcat capture` can tell about the R4400 guest software without running it: the
// workloads (for --list-workloads) and the cost of the CITCAT hooks (for the perturbation line of
// its summary). docs/machines/r4400-guest.md, "Workloads" and "Perturbation".
#ifndef CITCAT_GUEST_R4400_TOOLS_GUEST_INFO_H_
#define CITCAT_GUEST_R4400_TOOLS_GUEST_INFO_H_

#include <cstdint>
#include <string_view>

namespace citcat::guest {

struct WorkloadInfo {
  std::string_view name;
  std::string_view description;
};

inline constexpr WorkloadInfo kWorkloads[] = {
    {"sort", "quicksort and merge sort of 8000 pseudo-random values"},
    {"hash", "CRC-32, FNV-1a and a multiplicative hash over 48 KB"},
    {"compress", "LZ77 compression and decompression of 24 KB of text, round trip"},
    {"int64", "64-bit multiply, divide, shifts and adds in 64-bit registers (UX = 1)"},
    {"fp", "double precision: matrix product and an N-body integration"},
    {"memcpy", "memcpy, memmove, memset and string functions over sizes and alignments"},
    {"chase", "pointer chasing through 512 KB (memory-bound, TLB refills)"},
    {"io", "disk reads by DMA and console output, CRC of the data"},
};

// The programs the kernel runs for an empty boot string.
inline constexpr std::string_view kDefaultMix = "sort,hash,fp,chase,io";

// Instructions that exist only for the trace.
inline constexpr uint64_t kHookInstructionsPerInterrupt = 9;       // 3 uncached stores
inline constexpr uint64_t kHookInstructionsPerOtherException = 6;  // 1 uncached store
inline constexpr uint64_t kHookInstructionsPerCountRead = 2;       // 1 uncached store

// From what a CAT shows after state-done: EPC reports (stores to `exception` + 0), Cause echoes
// (stores to `cause`, one per exception of any kind) and Count echoes (stores to `count`).
constexpr uint64_t HookInstructions(uint64_t epc_reports, uint64_t cause_echoes,
                                    uint64_t count_echoes) {
  return kHookInstructionsPerInterrupt * epc_reports +
         kHookInstructionsPerOtherException * (cause_echoes - epc_reports) +
         kHookInstructionsPerCountRead * count_echoes;
}

}  // namespace citcat::guest

#endif  // CITCAT_GUEST_R4400_TOOLS_GUEST_INFO_H_
