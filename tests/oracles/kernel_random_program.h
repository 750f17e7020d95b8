// Seeded generator of random kernel-mode R4400 programs for the full-system QEMU lock-step
// (kernel_lockstep.h): a ROM image that starts at the reset vector, installs TLB refill, XTLB
// refill and general exception handlers (in ROM for BEV=1, copied to RAM for BEV=0), and then runs
// a random body several times:
//   - TLB: TLBWI of random entries (page masks 4 KB..16 MB, random C/D/V/G and ASID), TLBWR after
//     a TLBP miss, TLBP and TLBR with every result copied into GPRs, refills written by TLBWI or
//     TLBWR from the handlers;
//   - loads and stores of every width, aligned or not, across kuseg/xkuseg, kseg0, kseg1,
//     kseg2/ksseg, xkphys, xksseg, xkseg and addresses no segment allows;
//   - random writes to EntryHi/Lo, PageMask, Index, Wired, Context, XContext, Status (KX/SX/UX,
//     BEV, CU0/CU1, IM), Cause, each read back;
//   - SYSCALL, BREAK, traps, overflows, address errors and Coprocessor Unusable, inside and
//     outside (likely) branch delay slots; ERET to the next block.
// Handlers copy BadVAddr, Context, XContext and EntryHi into GPRs and resume after the faulting
// instruction (after its branch when Cause.BD is set), so both models' state is compared there.
//
// Physical memory: handlers at 0 (BEV=0 vectors), a cached region at 16 MB and an uncached one
// at 32 MB, each 16 MB; a physical line is only ever reached through one cache attribute.
#ifndef CITCAT_TESTS_ORACLES_KERNEL_RANDOM_PROGRAM_H_
#define CITCAT_TESTS_ORACLES_KERNEL_RANDOM_PROGRAM_H_

#include <cstdint>
#include <vector>

namespace citcat::oracle {

struct KernelProgramOptions {
  uint32_t seed = 1;
  int items = 1500;     // random blocks in the body
  int iterations = 12;  // times the body runs
};

// The ROM image, to be placed at physical 0x1FC00000.
std::vector<uint8_t> GenerateKernelProgram(const KernelProgramOptions& options);

}  // namespace citcat::oracle

#endif  // CITCAT_TESTS_ORACLES_KERNEL_RANDOM_PROGRAM_H_
