// The i486's test registers (Intel486 manual, "Testability"): TR3-TR5 test the on-chip cache,
// TR6 and TR7 the TLB. MOV to a test register may start an operation on the Cache or the Tlb;
// MOV from one reads what the last operation left. None of it makes a bus cycle: the operations
// reach the arrays directly, never memory. The privilege rules (CPL 0 or real mode) are the
// interpreter's (Cpu, cpu_test_registers.cc); TR0-TR2 do not exist (#UD, at decode).
//
// Layouts (bit positions; "-" reserved, reads as 0):
//   TR3  31:0  cache data: the fill-buffer doubleword written, or the read-buffer one read,
//              at TR5's entry field
//   TR4  31:11 tag (physical address bits 31:11)   10 V (valid bit of the entry)
//        9:7   LRU bits of the set (read only)      6:3 valid bits of ways 3..0 (read only)
//   TR5  10:4  set select   3:2 entry select   1:0 control: 00 buffer access (TR3), 01 cache
//              write, 10 cache read, 11 flush
//   TR6  31:12 linear address   11 V   10 D   9 D#   8 U   7 U#   6 W   5 W#   0 C (0 write,
//              1 lookup)
//   TR7  31:12 physical address   11 PCD   10 PWT   9:7 LRU bits of the set (lookup)
//        4 PL (write: REP chooses the way; lookup: hit)   3:2 REP (the way)
// The choices where the manual leaves a behaviour open are in docs/machines/i486-core.md ("Test
// registers").
#ifndef CITCAT_SIMCORE_X86_TEST_REGISTERS_H_
#define CITCAT_SIMCORE_X86_TEST_REGISTERS_H_

#include <array>
#include <cstdint>

#include "simcore/x86/cache.h"
#include "simcore/x86/tlb.h"

namespace citcat::x86 {

inline constexpr uint32_t kTr4Tag = 0xFFFFF800u, kTr4Valid = 1u << 10;
inline constexpr int kTr4LruShift = 7, kTr4ValidBitsShift = 3;
inline constexpr uint32_t kTr4Writable = kTr4Tag | kTr4Valid;

inline constexpr uint32_t kTr5Control = 3;
inline constexpr int kTr5EntryShift = 2, kTr5SetShift = 4;
inline constexpr uint32_t kTr5Writable = 0x7FFu;  // set, entry, control
enum Tr5Control : uint32_t { kTr5Buffer = 0, kTr5CacheWrite = 1, kTr5CacheRead = 2, kTr5Flush = 3 };

inline constexpr uint32_t kTr6Linear = 0xFFFFF000u, kTr6V = 1u << 11, kTr6D = 1u << 10,
                          kTr6NotD = 1u << 9, kTr6U = 1u << 8, kTr6NotU = 1u << 7, kTr6W = 1u << 6,
                          kTr6NotW = 1u << 5, kTr6Lookup = 1u << 0;
inline constexpr uint32_t kTr6Writable = 0xFFFFFFE1u;

inline constexpr uint32_t kTr7Physical = 0xFFFFF000u, kTr7Pcd = 1u << 11, kTr7Pwt = 1u << 10,
                          kTr7Pl = 1u << 4;
inline constexpr int kTr7LruShift = 7, kTr7RepShift = 2;
inline constexpr uint32_t kTr7Writable = kTr7Physical | kTr7Pcd | kTr7Pwt | kTr7Pl | 3u << 2;

// What the test registers hold; a plain value, so a saved state can carry it.
struct TestRegisters {
  std::array<uint32_t, 4> fill_buffer{};  // the line a cache write stores, by doubleword
  std::array<uint32_t, 4> read_buffer{};  // the line the last cache read found
  uint32_t tr4 = 0;
  uint32_t tr5 = 0;
  uint32_t tr6 = 0;
  uint32_t tr7 = 0;

  bool operator==(const TestRegisters&) const = default;
};

// MOV TRn, r32 for n = 3..7: stores `value` (reserved and read-only bits dropped) and runs the
// operation it starts: TR3 fills the fill buffer; TR5 a cache write, read or flush; TR6 a TLB
// write or lookup (whose answer goes to TR7).
void WriteTestRegister(TestRegisters& tr, int n, uint32_t value, Cache& cache, Tlb& tlb);
// MOV r32, TRn for n = 3..7.
uint32_t ReadTestRegister(const TestRegisters& tr, int n);

}  // namespace citcat::x86

#endif  // CITCAT_SIMCORE_X86_TEST_REGISTERS_H_
