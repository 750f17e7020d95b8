/* The contract between the traced R4400 kernel's CITCAT hooks and everything that reads what they
   store (docs/machines/r4400-system.md, "The reserved area"): the begin marker, the reserved areas
   and the slots of the state dump. One header for the machine, the guest kernel, extract and
   replay. The part outside __cplusplus is #defines of plain numbers only, so that the kernel's C
   and its preprocessed assembler include it too; never give a number a C suffix there. */
#ifndef CITCAT_MACHINE_R4400_CONTRACT_H_
#define CITCAT_MACHINE_R4400_CONTRACT_H_

/* The reserved area: physical base and size. The kernel reaches it uncached through kseg1, with
   one LUI of the upper half of base + 0xA0000000. */
#define CITCAT_R4400_RESERVED_BASE 0x1FE00000
#define CITCAT_R4400_RESERVED_SIZE 0x10000
#define CITCAT_R4400_RESERVED_LUI 0xBFE0

/* The named areas, as offsets from the base, and their sizes. */
#define CITCAT_R4400_TRACE_BEGIN 0x0000 /* the begin marker, one doubleword */
#define CITCAT_R4400_TRACE_BEGIN_SIZE 8
#define CITCAT_R4400_CPU_STATE 0x1000 /* the state dump's slots, below */
#define CITCAT_R4400_CPU_STATE_SIZE 0x1000
#define CITCAT_R4400_TLB 0x2000 /* the TLB dump, below */
#define CITCAT_R4400_TLB_SIZE 0x600
#define CITCAT_R4400_STATE_DONE 0x3000 /* the end of the dump, one doubleword */
#define CITCAT_R4400_STATE_DONE_SIZE 8
#define CITCAT_R4400_EXCEPTION 0x4000 /* the interrupt report: EPC, then Status */
#define CITCAT_R4400_EXCEPTION_SIZE 0x10
#define CITCAT_R4400_EXCEPTION_EPC 0x0    /* doubleword */
#define CITCAT_R4400_EXCEPTION_STATUS 0x8 /* word */
#define CITCAT_R4400_CAUSE 0x5000         /* the Cause echo, one word */
#define CITCAT_R4400_CAUSE_SIZE 4
#define CITCAT_R4400_COUNT 0x5008 /* the Count echo, one word */
#define CITCAT_R4400_COUNT_SIZE 4
#define CITCAT_R4400_CONSOLE 0x6000 /* console output by uncached store, one doubleword */
#define CITCAT_R4400_CONSOLE_SIZE 8

/* The begin marker, "CITCAT" 00 01, in the two halves the kernel builds it from. */
#define CITCAT_R4400_BEGIN_MARKER_HI 0x43495443
#define CITCAT_R4400_BEGIN_MARKER_LO 0x41540001

/* Slots of the state dump, from the start of `cpu-state`: 8 bytes each, big-endian. */
#define CITCAT_R4400_SLOT_GPR 0x000 /* + 8 * n, n = 0 .. 31 */
#define CITCAT_R4400_SLOT_HI 0x100
#define CITCAT_R4400_SLOT_LO 0x108
#define CITCAT_R4400_SLOT_RESUME_PC 0x110
#define CITCAT_R4400_SLOT_CP0 0x200 /* + 8 * r, r = 0 .. 31, as DMFC0 reads it */
#define CITCAT_R4400_SLOT_FGR 0x300 /* + 8 * n, the 32 physical 64-bit FGRs */
#define CITCAT_R4400_SLOT_FCR31 0x400

/* The TLB dump in `tlb`: entry i at 32 * i, four doublewords as TLBR leaves them in CP0. */
#define CITCAT_R4400_TLB_ENTRIES 48
#define CITCAT_R4400_TLB_ENTRY_BYTES 32
#define CITCAT_R4400_TLB_PAGE_MASK 0
#define CITCAT_R4400_TLB_ENTRY_HI 8
#define CITCAT_R4400_TLB_ENTRY_LO0 16
#define CITCAT_R4400_TLB_ENTRY_LO1 24

#ifdef __cplusplus

#include <cstdint>
#include <span>
#include <string_view>

namespace citcat::r4400 {

inline constexpr uint64_t kReservedBase = CITCAT_R4400_RESERVED_BASE;
inline constexpr uint64_t kReservedSize = CITCAT_R4400_RESERVED_SIZE;
inline constexpr uint64_t kBeginMarker =
    uint64_t{CITCAT_R4400_BEGIN_MARKER_HI} << 32 | CITCAT_R4400_BEGIN_MARKER_LO;

// A named area of the reserved area: its name in the CAT header, offset from the base, size.
struct ReservedArea {
  std::string_view name;
  uint64_t offset;
  uint64_t size;
};
// In the order of the CAT header's reserved areas.
inline constexpr ReservedArea kReservedAreas[] = {
    {"trace-begin", CITCAT_R4400_TRACE_BEGIN, CITCAT_R4400_TRACE_BEGIN_SIZE},
    {"cpu-state", CITCAT_R4400_CPU_STATE, CITCAT_R4400_CPU_STATE_SIZE},
    {"tlb", CITCAT_R4400_TLB, CITCAT_R4400_TLB_SIZE},
    {"state-done", CITCAT_R4400_STATE_DONE, CITCAT_R4400_STATE_DONE_SIZE},
    {"exception", CITCAT_R4400_EXCEPTION, CITCAT_R4400_EXCEPTION_SIZE},
    {"cause", CITCAT_R4400_CAUSE, CITCAT_R4400_CAUSE_SIZE},
    {"count", CITCAT_R4400_COUNT, CITCAT_R4400_COUNT_SIZE},
    {"console", CITCAT_R4400_CONSOLE, CITCAT_R4400_CONSOLE_SIZE},
};
static_assert(CITCAT_R4400_TLB_SIZE == CITCAT_R4400_TLB_ENTRIES * CITCAT_R4400_TLB_ENTRY_BYTES);

// Instructions the driver retires from its `dmfc0 Random` (included) to the resume point
// (docs/machines/r4400-guest.md, "Driver end"): the dumped Random is this many steps ahead of the
// value replay starts with. Not a #define: the kernel does not state it, its driver's code does.
inline constexpr uint32_t kRandomReadToResume = 37;

// A big-endian value of up to 8 bytes, as the hooks store them.
constexpr uint64_t LoadBE(std::span<const uint8_t> bytes) {
  uint64_t v = 0;
  for (uint8_t b : bytes) v = v << 8 | b;
  return v;
}

}  // namespace citcat::r4400

#endif /* __cplusplus */

#endif /* CITCAT_MACHINE_R4400_CONTRACT_H_ */
