/* The contract between the traced i486 kernel's CITCAT hooks and everything that reads what they
   store (docs/machines/i486-system.md, "The reserved area"): the begin marker, the reserved areas,
   the slots of the state dump and the interrupt report. One header for the machine, the guest
   kernel, extract and replay. The part outside __cplusplus is #defines of plain numbers only, so
   that the kernel's C and its preprocessed assembler include it too; never give a number a C
   suffix there.

   Every value is stored little-endian, as the i486 stores it. The area is memory-mapped outside
   RAM and never cacheable, so every store to it is one bus record (a dword store one record of 4
   bytes, a word store one of 2). */
#ifndef CITCAT_MACHINE_I486_CONTRACT_H_
#define CITCAT_MACHINE_I486_CONTRACT_H_

/* The reserved area: physical base and size (above the largest RAM, below the boot ROM). The
   kernel maps it linear = physical, supervisor-only, PCD set. */
#define CITCAT_I486_RESERVED_BASE 0xFE000000
#define CITCAT_I486_RESERVED_SIZE 0x10000

/* The named areas, as offsets from the base, and their sizes. */
#define CITCAT_I486_TRACE_BEGIN 0x0000 /* the begin marker, one dword */
#define CITCAT_I486_TRACE_BEGIN_SIZE 4
#define CITCAT_I486_CPU_STATE 0x1000 /* the state dump's slots, below */
#define CITCAT_I486_CPU_STATE_SIZE 0x1000
#define CITCAT_I486_STATE_DONE 0x3000 /* the end of the dump, one dword */
#define CITCAT_I486_STATE_DONE_SIZE 4
#define CITCAT_I486_INTERRUPT 0x4000 /* the interrupt report, below */
#define CITCAT_I486_INTERRUPT_SIZE 0x10

/* The begin marker: the bytes "CITC" in memory order. */
#define CITCAT_I486_BEGIN_MARKER 0x43544943

/* Slots of the state dump, from the start of `cpu-state`. Each holds the register as it is when
   the instruction after the `state-done` store starts: the resume point, where replay begins.
   Dword slots unless noted. */
#define CITCAT_I486_SLOT_GPR 0x000 /* + 4 * n, n = 0 .. 7: EAX ECX EDX EBX ESP EBP ESI EDI */
#define CITCAT_I486_SLOT_EIP 0x020 /* the resume point's EIP */
#define CITCAT_I486_SLOT_EFLAGS 0x024
#define CITCAT_I486_SLOT_CR0 0x028
#define CITCAT_I486_SLOT_CR2 0x02C
#define CITCAT_I486_SLOT_CR3 0x030
#define CITCAT_I486_SLOT_DR 0x040  /* + 4 * n, n = 0 .. 3: DR0 .. DR3 */
#define CITCAT_I486_SLOT_DR6 0x050
#define CITCAT_I486_SLOT_DR7 0x054
#define CITCAT_I486_SLOT_GDTR 0x060 /* 6 bytes as SGDT stores them: limit (word), base (dword) */
#define CITCAT_I486_SLOT_IDTR 0x068 /* 6 bytes as SIDT stores them */
/* Selectors, one word each in the low half of a dword slot, in this order: ES CS SS DS FS GS,
   then LDTR and TR. */
#define CITCAT_I486_SLOT_SELECTOR 0x070 /* + 4 * n, n = 0 .. 7 */
/* The descriptor each selector was loaded from (8 bytes as the GDT or LDT holds it, accessed bit
   and TSS busy bit included), same order: the hidden descriptor caches follow from them, since
   the driver loads every segment register again right before it copies them. A null selector's
   slot holds zero. */
#define CITCAT_I486_SLOT_DESCRIPTOR 0x090 /* + 8 * n, n = 0 .. 7 */
#define CITCAT_I486_SLOT_FPU 0x100 /* the FPU image, 108 bytes as a 32-bit protected-mode FSAVE */
#define CITCAT_I486_FPU_IMAGE_SIZE 108

/* The interrupt report: the kernel's entry for every external interrupt stores, before anything
   else reaches the bus, the interrupted EIP and ECX (REP's count register, whatever instruction
   was interrupted), then CS and EFLAGS as the interrupt frame holds them. Extract keys the
   interrupt by the branch count of the interrupt acknowledge record before it, this EIP and this
   ECX; the vector is the acknowledge record's. */
#define CITCAT_I486_INTERRUPT_EIP 0x0
#define CITCAT_I486_INTERRUPT_ECX 0x4
#define CITCAT_I486_INTERRUPT_CS 0x8
#define CITCAT_I486_INTERRUPT_EFLAGS 0xC

#ifdef __cplusplus

#include <cstdint>
#include <span>
#include <string_view>

namespace citcat::i486 {

inline constexpr uint64_t kReservedBase = CITCAT_I486_RESERVED_BASE;
inline constexpr uint64_t kReservedSize = CITCAT_I486_RESERVED_SIZE;
inline constexpr uint32_t kBeginMarker = CITCAT_I486_BEGIN_MARKER;

// A named area of the reserved area: its name in the CAT header, offset from the base, size.
struct ReservedArea {
  std::string_view name;
  uint64_t offset;
  uint64_t size;
};
// In the order of the CAT header's reserved areas.
inline constexpr ReservedArea kReservedAreas[] = {
    {"trace-begin", CITCAT_I486_TRACE_BEGIN, CITCAT_I486_TRACE_BEGIN_SIZE},
    {"cpu-state", CITCAT_I486_CPU_STATE, CITCAT_I486_CPU_STATE_SIZE},
    {"state-done", CITCAT_I486_STATE_DONE, CITCAT_I486_STATE_DONE_SIZE},
    {"interrupt", CITCAT_I486_INTERRUPT, CITCAT_I486_INTERRUPT_SIZE},
};

// A little-endian value of up to 8 bytes, as the hooks store them.
constexpr uint64_t LoadLE(std::span<const uint8_t> bytes) {
  uint64_t v = 0;
  for (size_t i = bytes.size(); i > 0; --i) v = v << 8 | bytes[i - 1];
  return v;
}

}  // namespace citcat::i486

#endif /* __cplusplus */

#endif /* CITCAT_MACHINE_I486_CONTRACT_H_ */
