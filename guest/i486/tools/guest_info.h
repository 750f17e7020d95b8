// What a capture can tell about the i486 guest software without running it: the workloads (for
// --list-workloads) and the cost of the CITCAT hooks (for the perturbation line of its summary).
// docs/machines/i486-guest.md, "Workloads" and "Perturbation".
#ifndef CITCAT_GUEST_I486_TOOLS_GUEST_INFO_H_
#define CITCAT_GUEST_I486_TOOLS_GUEST_INFO_H_

#include <cstdint>
#include <string_view>

namespace citcat::guest::i486 {

struct WorkloadInfo {
  std::string_view name;
  std::string_view description;
};

inline constexpr WorkloadInfo kWorkloads[] = {
    {"sort", "quicksort and merge sort of 8000 pseudo-random values"},
    {"hash", "CRC-32, FNV-1a and a multiplicative hash over 48 KB"},
    {"compress", "LZ77 compression and decompression of 24 KB of text, round trip"},
    {"int64", "64-bit multiply, divide, shifts and adds in 32-bit registers (ADC, MUL, helpers)"},
    {"fp", "double precision on the x87: matrix product and an N-body integration"},
    {"memcpy", "memcpy, memmove, memset and string functions over sizes and alignments"},
    {"chase", "pointer chasing through 512 KB (memory-bound, demand-zero pages, TLB misses)"},
    {"io", "disk reads by bus-master DMA and console output, CRC of the data"},
    // The i486's own (guest/i486/workloads/).
    {"rep", "REP MOVS, STOS, CMPS and SCAS: 64 KB strings and many short ones"},
    {"x87", "x87 precision and rounding control, FSAVE/FLDENV, FSIN, FPTAN, FYL2X..."},
    {"mode16", "a 16-bit ring-3 code segment: far calls into 16-bit code and back"},
};

// The programs the kernel runs for an empty boot string.
inline constexpr std::string_view kDefaultMix = "sort,hash,fp,chase,io";

// Instructions that exist only for the trace: each external interrupt's report (entry.S), four
// uncached stores and one uncached load. The driver runs once and is not counted.
inline constexpr uint64_t kHookInstructionsPerInterrupt = 8;

// From what a CAT shows after state-done: the interrupt reports (stores to `interrupt` + EIP).
constexpr uint64_t HookInstructions(uint64_t interrupt_reports) {
  return kHookInstructionsPerInterrupt * interrupt_reports;
}

}  // namespace citcat::guest::i486

#endif  // CITCAT_GUEST_I486_TOOLS_GUEST_INFO_H_
