// The i486 test registers TR3-TR7 from the Intel486 manual's rules ("Testability"): TLB entries
// written through TR6/TR7 and used without a walk, lookups that hit and miss, cache lines
// written and read back through TR3/TR4/TR5 (data, tag, valid and replacement bits), the flush
// command, predecoded code after a cache write, and the privilege rules. No oracle here models
// the test registers (Unicorn and QEMU do not), so these are unit tests.
#include <array>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "simcore/ram_bus.h"
#include "simcore/x86/cache.h"
#include "simcore/x86/cpu.h"
#include "simcore/x86/test_registers.h"
#include "simcore/x86/tlb.h"
#include "tests/simcore/pc_bus.h"

namespace citcat::x86 {
namespace {

using testing::PcBus;

// A little assembler for the programs below (32-bit code).
struct Code {
  std::vector<uint8_t> bytes;
  int count = 0;  // instructions

  Code& MovImm(int r, uint32_t v) {  // MOV r32, imm32
    bytes.push_back(static_cast<uint8_t>(0xB8 + r));
    for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<uint8_t>(v >> 8 * i));
    ++count;
    return *this;
  }
  Code& ToTr(int n, int r) {  // MOV TRn, r32
    bytes.insert(bytes.end(), {0x0F, 0x26, static_cast<uint8_t>(0xC0 | n << 3 | r)});
    ++count;
    return *this;
  }
  Code& FromTr(int r, int n) {  // MOV r32, TRn
    bytes.insert(bytes.end(), {0x0F, 0x24, static_cast<uint8_t>(0xC0 | n << 3 | r)});
    ++count;
    return *this;
  }
  Code& Tr(int n, uint32_t v) { return MovImm(kEax, v).ToTr(n, kEax); }
  Code& Load(int r, uint32_t address) {  // MOV r32, [address]
    bytes.insert(bytes.end(), {0x8B, static_cast<uint8_t>(0x05 | r << 3)});
    for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<uint8_t>(address >> 8 * i));
    ++count;
    return *this;
  }
  Code& Store(uint32_t address, int r) {  // MOV [address], r32
    bytes.insert(bytes.end(), {0x89, static_cast<uint8_t>(0x05 | r << 3)});
    for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<uint8_t>(address >> 8 * i));
    ++count;
    return *this;
  }
  Code& Raw(std::vector<uint8_t> b, int instructions = 1) {
    bytes.insert(bytes.end(), b.begin(), b.end());
    count += instructions;
    return *this;
  }
};

// Flat 32-bit protected mode at ring 0 with the caches on; programs run from 1000h.
struct Machine {
  explicit Machine(int cpl = 0) : cpu(bus) { cpu.SetFlat32(cpl); }
  void Long(uint32_t a, uint32_t v) {
    bus.Poke(a, {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8),
                 static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 24)});
  }
  uint32_t Long(uint32_t a) {
    return bus.ByteAt(a) | bus.ByteAt(a + 1) << 8 | bus.ByteAt(a + 2) << 16 |
           uint32_t{bus.ByteAt(a + 3)} << 24;
  }
  // Runs `code` at `at` (placed in memory without a bus cycle: a program at an address whose
  // lines are in the cache must go elsewhere); returns the instructions retired.
  uint64_t Run(const Code& code, uint32_t at = 0x1000) {
    bus.Poke(at, code.bytes);
    cpu.set_eip(at);
    return cpu.Run(static_cast<uint64_t>(code.count));
  }
  PcBus bus;
  Cpu cpu;
};

// TR6 and TR7 values.
constexpr uint32_t kAnyAttributes = kTr6D | kTr6NotD | kTr6U | kTr6NotU | kTr6W | kTr6NotW;
uint32_t Rep(uint32_t way) { return kTr7Pl | way << kTr7RepShift; }

// Page tables at 40000h (directory at 43000h) mapping the first 4 MB onto themselves; nothing
// else is present, so a walk for 400000h and above raises #PF.
void IdentityTables(Machine& m) {
  for (uint32_t i = 0; i < 1024; ++i) m.Long(0x40000 + 4 * i, i << 12 | 7);
  m.Long(0x43000, 0x40007);
}
// MOV CR3, 43000h (flushing the TLB) first; paging on last.
Code& PagingOn(Code& c) {
  return c.MovImm(kEax, kCr0Pe | kCr0Et | kCr0Pg).Raw({0x0F, 0x22, 0xC0});  // MOV CR0, EAX
}

bool TouchesTables(const PcBus& bus, size_t from) {
  for (size_t i = from; i < bus.log().size(); ++i) {
    const uint64_t a = bus.log()[i].address;
    if ((a >= 0x40000 && a < 0x41000) || (a >= 0x43000 && a < 0x44000)) return true;
  }
  return false;
}

TEST(X86TestRegisters, ATlbEntryWrittenThroughTr6IsUsedWithoutAWalk) {
  Machine m;
  IdentityTables(m);
  m.Long(0x200000, 0xCAFEBABE);
  m.Long(0x400000, 0x11111111);  // what an identity mapping would read
  Code c;
  c.MovImm(kEax, 0x43000).Raw({0x0F, 0x22, 0xD8});  // MOV CR3, EAX: the TLB is empty
  // 400000h -> 200000h, valid, dirty, supervisor, writable; into way 2 of set 0 by REP.
  c.Tr(7, 0x200000 | Rep(2));
  c.Tr(6, 0x400000 | kTr6V | kTr6D | kTr6NotU | kTr6W);
  PagingOn(c);
  c.Raw({0x90});  // NOP: its fetch walks for the code's page
  const int setup = c.count;
  c.Load(kEbx, 0x400004).MovImm(kEcx, 0x5A5A5A5A).Store(0x400008, kEcx);
  m.bus.Poke(0x1000, c.bytes);
  m.cpu.set_eip(0x1000);
  ASSERT_EQ(m.cpu.Run(static_cast<uint64_t>(setup)), static_cast<uint64_t>(setup));
  const TlbEntry& e = m.cpu.paging().tlb().entry(0, 2);
  EXPECT_TRUE(e.valid());
  EXPECT_EQ(e.page & kPteFrame, 0x400000u);
  EXPECT_EQ(e.frame(), 0x200000u);
  EXPECT_TRUE(e.dirty() && e.writable());
  EXPECT_FALSE(e.user() || e.pcd() || e.pwt());

  // The directory has no entry for 400000h: only the TLB can translate it.
  const size_t before = m.bus.log().size();
  ASSERT_EQ(m.cpu.Run(3), 3u) << int{m.cpu.exception().vector};
  EXPECT_EQ(m.cpu.reg(kEbx), m.Long(0x200004));
  EXPECT_EQ(m.Long(0x200008), 0x5A5A5A5Au);  // the store went to 200008h
  EXPECT_EQ(m.Long(0x400008), 0u);
  EXPECT_FALSE(TouchesTables(m.bus, before));  // no page-table bus cycle for it
}

TEST(X86TestRegisters, AWriteThroughAnEntryWithoutDirtyWalks) {
  // D clear in the entry: a store must walk to set the dirty bit in memory, and the directory has
  // nothing for 400000h, so the store raises #PF; the load before it ran from the TLB.
  Machine m;
  IdentityTables(m);
  Code c;
  c.MovImm(kEax, 0x43000).Raw({0x0F, 0x22, 0xD8});
  c.Tr(7, 0x200000 | Rep(0));
  c.Tr(6, 0x400000 | kTr6V | kTr6NotD | kTr6NotU | kTr6W);
  PagingOn(c);
  c.Load(kEbx, 0x400000).Store(0x400000, kEbx);
  EXPECT_EQ(m.Run(c), static_cast<uint64_t>(c.count - 1));
  EXPECT_EQ(m.cpu.exception().vector, kVecPageFault);
  EXPECT_EQ(m.cpu.exception().error_code, 2u);  // not present, write, supervisor
  EXPECT_EQ(m.cpu.cr2(), 0x400000u);
}

TEST(X86TestRegisters, ATlbLookupHitsWithTheWayAndThePhysicalAddress) {
  Machine m;
  Code c;
  c.Tr(7, 0x00ABC000 | kTr7Pcd | kTr7Pwt | Rep(3));
  c.Tr(6, 0x12345000 | kTr6V | kTr6D | kTr6NotU | kTr6NotW);  // set 5, way 3
  c.Tr(7, 0x00DEF000 | Rep(1));
  c.Tr(6, 0x7777D000 | kTr6V | kTr6NotD | kTr6U | kTr6W);  // set 5, way 1
  // Lookups: any attributes; D must be set; D must be clear (a miss); another page (a miss);
  // D and D# both clear (a miss whatever the entry holds).
  c.Tr(6, 0x12345000 | kTr6V | kAnyAttributes | kTr6Lookup).FromTr(kEbx, 7);
  c.Tr(6, 0x7777D000 | kTr6V | kTr6NotD | kTr6U | kTr6NotU | kTr6W | kTr6Lookup).FromTr(kEcx, 7);
  c.Tr(6, 0x12345000 | kTr6V | kTr6NotD | kTr6U | kTr6NotU | kTr6W | kTr6NotW | kTr6Lookup)
      .FromTr(kEdx, 7);
  c.Tr(6, 0x1234D000 | kTr6V | kAnyAttributes | kTr6Lookup).FromTr(kEsi, 7);
  c.Tr(6, 0x12345000 | kTr6V | kTr6U | kTr6NotU | kTr6W | kTr6NotW | kTr6Lookup).FromTr(kEdi, 7);
  const size_t before = m.bus.log().size();
  ASSERT_EQ(m.Run(c), static_cast<uint64_t>(c.count));
  // The writes touched way 3 then way 1: B0 = 1, B1 = 0, B2 = 0 (plru.h); lookups touch nothing.
  const uint32_t lru = PlruTouch(PlruTouch(0, 3), 1);
  ASSERT_EQ(m.cpu.paging().tlb().lru_bits(5), lru);
  EXPECT_EQ(m.cpu.reg(kEbx),
            0x00ABC000 | kTr7Pcd | kTr7Pwt | lru << kTr7LruShift | kTr7Pl | 3u << kTr7RepShift);
  EXPECT_EQ(m.cpu.reg(kEcx), 0x00DEF000 | lru << kTr7LruShift | kTr7Pl | 1u << kTr7RepShift);
  for (int r : {kEdx, kEsi, kEdi}) {
    EXPECT_FALSE(m.cpu.reg(r) & kTr7Pl) << r;  // HT clear
    EXPECT_EQ(m.cpu.reg(r), lru << kTr7LruShift) << r;
  }
  EXPECT_EQ(ReadTestRegister(m.cpu.test_registers(), 6) & kTr6Lookup, kTr6Lookup);
  // Caches on, code fetched: only code fills, no data cycle for any test register access.
  for (size_t i = before; i < m.bus.log().size(); ++i) {
    EXPECT_TRUE(m.bus.log()[i].flags & cat::kFlagCode) << i;
  }
}

TEST(X86TestRegisters, ATlbWriteWithoutPlFollowsTheReplacementRule) {
  Machine m;
  Code c;
  // Set 0: two writes without PL go to ways 0 and 1 (first invalid); an invalid write (V
  // clear) through REP empties way 0; the next write without PL refills way 0.
  c.Tr(7, 0x00100000).Tr(6, 0x00000000 | kTr6V | kTr6D | kTr6NotU | kTr6W);
  c.Tr(7, 0x00200000).Tr(6, 0x00008000 | kTr6V | kTr6D | kTr6NotU | kTr6W);
  c.Tr(7, Rep(0)).Tr(6, 0x00010000 | kTr6NotD | kTr6NotU | kTr6NotW);
  c.Tr(7, 0x00300000).Tr(6, 0x00018000 | kTr6V | kTr6D | kTr6NotU | kTr6W);
  const uint32_t epoch = m.cpu.paging().tlb().epoch();
  ASSERT_EQ(m.Run(c), static_cast<uint64_t>(c.count));
  const Tlb& tlb = m.cpu.paging().tlb();
  EXPECT_EQ(tlb.epoch(), epoch + 4);  // every write changes the epoch
  EXPECT_EQ(tlb.entry(0, 0).page, 0x00018000u | 1);
  EXPECT_EQ(tlb.entry(0, 0).frame(), 0x00300000u);
  EXPECT_EQ(tlb.entry(0, 1).page, 0x00008000u | 1);
  EXPECT_EQ(tlb.entry(0, 1).frame(), 0x00200000u);
  EXPECT_FALSE(tlb.entry(0, 2).valid());
  EXPECT_EQ(tlb.lru_bits(0), kPlruB0 | kPlruB1);  // way 0 written last
  // All four valid: the pseudo-LRU victim. Ways 2 and 3 written by REP leave B0 = 0 (the last
  // access went to L2/L3) and B1 = 1 (of L0/L1, L0 was last): the victim is way 1.
  Code d;
  d.Tr(7, 0x00400000 | Rep(2)).Tr(6, 0x00020000 | kTr6V | kTr6D | kTr6NotU | kTr6W);
  d.Tr(7, 0x00500000 | Rep(3)).Tr(6, 0x00028000 | kTr6V | kTr6D | kTr6NotU | kTr6W);
  d.Tr(7, 0x00600000).Tr(6, 0x00030000 | kTr6V | kTr6D | kTr6NotU | kTr6W);
  ASSERT_EQ(m.Run(d, 0x3000), static_cast<uint64_t>(d.count));
  EXPECT_EQ(tlb.entry(0, 1).page, 0x00030000u | 1);
  EXPECT_EQ(tlb.entry(0, 1).frame(), 0x00600000u);
}

// A line of four doublewords written through the fill buffer, TR4 and TR5.
Code& WriteLine(Code& c, uint32_t set, uint32_t way, uint32_t tag, bool valid,
                const std::array<uint32_t, 4>& data) {
  for (uint32_t i = 0; i < 4; ++i) c.Tr(5, i << kTr5EntryShift | kTr5Buffer).Tr(3, data[i]);
  c.Tr(4, tag | (valid ? kTr4Valid : 0));
  return c.Tr(5, set << kTr5SetShift | way << kTr5EntryShift | kTr5CacheWrite);
}

TEST(X86TestRegisters, ACacheLineWrittenThroughTr3Tr4Tr5ReadsBack) {
  Machine m;
  const std::array<uint32_t, 4> data = {0x03020100, 0x17161514, 0x2B2A2928, 0x3F3E3D3C};
  // Set 40h, way 2, line 20400h (tag bits 31:11 = 20000h). Memory there holds something else.
  Code c;
  WriteLine(c, 0x40, 2, 0x20000, true, data);
  // Read back: cache read of set 40h way 2, TR4, then each read-buffer doubleword.
  c.Tr(5, 0x40 << kTr5SetShift | 2 << kTr5EntryShift | kTr5CacheRead).FromTr(kEbx, 4);
  c.Tr(5, 0 << kTr5EntryShift).FromTr(kEcx, 3);
  c.Tr(5, 1 << kTr5EntryShift).FromTr(kEdx, 3);
  c.Tr(5, 2 << kTr5EntryShift).FromTr(kEsi, 3);
  c.Tr(5, 3 << kTr5EntryShift).FromTr(kEdi, 3);
  const size_t before = m.bus.log().size();
  ASSERT_EQ(m.Run(c), static_cast<uint64_t>(c.count));
  for (size_t i = before; i < m.bus.log().size(); ++i) {
    EXPECT_TRUE(m.bus.log()[i].flags & cat::kFlagCode) << i;  // no data cycle
  }
  const Cache& cache = m.cpu.cache();
  EXPECT_TRUE(cache.valid(0x40, 2));
  EXPECT_EQ(cache.line_address(0x40, 2), 0x20400u);
  EXPECT_EQ(cache.line_data(0x40, 2)[5], 0x15);
  EXPECT_EQ(cache.lru_bits(0x40), PlruTouch(0, 2));
  EXPECT_EQ(m.cpu.reg(kEbx), 0x20000 | kTr4Valid | uint32_t{PlruTouch(0, 2)} << kTr4LruShift |
                                 (1u << 2) << kTr4ValidBitsShift);
  EXPECT_EQ(m.cpu.reg(kEcx), data[0]);
  EXPECT_EQ(m.cpu.reg(kEdx), data[1]);
  EXPECT_EQ(m.cpu.reg(kEsi), data[2]);
  EXPECT_EQ(m.cpu.reg(kEdi), data[3]);

  // A load of 20404h now hits the line the test wrote: no bus cycle, the test's bytes.
  m.Long(0x20404, 0xDEADBEEF);
  Code load;
  load.Load(kEbx, 0x20404);
  const size_t at = m.bus.log().size();
  ASSERT_EQ(m.Run(load, 0x3000), 1u);
  EXPECT_EQ(m.cpu.reg(kEbx), data[1]);
  for (size_t i = at; i < m.bus.log().size(); ++i) EXPECT_NE(m.bus.log()[i].address, 0x20400u);
}

TEST(X86TestRegisters, Tr4ReportsTheReplacementAndValidBitsAfterAccesses) {
  Machine m;
  // Four lines of set 40h (100400h + k * 800h) loaded in order fill ways 0 to 3; a load of the
  // second one again touches way 1. Per the manual's rule: after 0, 1, 2, 3 the bits are 000,
  // and way 1 then sets B0 and clears B1: 001.
  Code c;
  for (uint32_t k = 0; k < 4; ++k) c.Load(kEbx, 0x100400 + k * 0x800);
  c.Load(kEbx, 0x100C00);
  c.Tr(5, 0x40 << kTr5SetShift | 3 << kTr5EntryShift | kTr5CacheRead).FromTr(kEbx, 4);
  c.Tr(5, 0x40 << kTr5SetShift | 1 << kTr5EntryShift | kTr5CacheRead).FromTr(kEcx, 4);
  ASSERT_EQ(m.Run(c), static_cast<uint64_t>(c.count));
  EXPECT_EQ(m.cpu.cache().lru_bits(0x40), 0b001);
  EXPECT_EQ(m.cpu.reg(kEbx), 0x101800u | kTr4Valid | 0b001u << kTr4LruShift | 0xFu << 3);
  EXPECT_EQ(m.cpu.reg(kEcx), 0x100800u | kTr4Valid | 0b001u << kTr4LruShift | 0xFu << 3);
  // The cache reads themselves touched nothing.
  EXPECT_EQ(m.cpu.cache().lru_bits(0x40), 0b001);
}

TEST(X86TestRegisters, TheFlushCommandEmptiesTheCache) {
  Machine m;
  Code c;
  c.Load(kEbx, 0x30000).Load(kEbx, 0x30010);
  c.Tr(5, kTr5Flush);
  c.Tr(5, kTr5CacheRead).FromTr(kEcx, 4);  // set 0, way 0
  ASSERT_EQ(m.Run(c), static_cast<uint64_t>(c.count));
  EXPECT_FALSE(m.cpu.cache().Contains(0x30000));
  EXPECT_FALSE(m.cpu.cache().Contains(0x30010));
  // The flush came before the last two instructions were fetched: only their own line is
  // valid in set 0 then, or none (the code is at 1000h, set 0). Whatever it is, 30000h is not.
  EXPECT_NE(m.cpu.reg(kEcx) & kTr4Tag, 0x30000u & kTr4Tag);
  // A load of 30000h fills again.
  Code load;
  load.Load(kEbx, 0x30000);
  const size_t at = m.bus.log().size();
  ASSERT_EQ(m.Run(load, 0x3000), 1u);
  bool filled = false;
  for (size_t i = at; i < m.bus.log().size(); ++i) {
    filled |= m.bus.log()[i].kind == cat::RecordKind::kFill && m.bus.log()[i].address == 0x30000;
  }
  EXPECT_TRUE(filled);
}

TEST(X86TestRegisters, PredecodedCodeFollowsACacheWrite) {
  for (bool fast : {true, false}) {
    Machine m;
    m.cpu.set_fast_paths(fast);
    // At 2000h: MOV EAX, 1 (memory); fetched, cached and predecoded.
    m.bus.Poke(0x2000, {0xB8, 0x01, 0x00, 0x00, 0x00});
    m.cpu.set_eip(0x2000);
    ASSERT_EQ(m.cpu.Run(1), 1u);
    ASSERT_EQ(m.cpu.reg(kEax), 1u);
    const int way = m.cpu.cache().WayOf(0x2000);
    ASSERT_GE(way, 0);
    // The test interface puts MOV EAX, 2 into that line; memory keeps MOV EAX, 1.
    Code c;
    WriteLine(c, Cache::SetOf(0x2000), static_cast<uint32_t>(way), 0x2000, true,
              {0x000002B8, 0x90909000, 0x90909090, 0x90909090});
    ASSERT_EQ(m.Run(c, 0x1800), static_cast<uint64_t>(c.count));
    EXPECT_EQ(m.bus.ByteAt(0x2001), 0x01);
    m.cpu.set_eip(0x2000);
    ASSERT_EQ(m.cpu.Run(1), 1u);
    EXPECT_EQ(m.cpu.reg(kEax), 2u) << "fast paths " << fast;
  }
}

TEST(X86TestRegisters, PredecodedCodeFollowsATlbWrite) {
  for (bool fast : {true, false}) {
    Machine m;
    m.cpu.set_fast_paths(fast);
    IdentityTables(m);
    m.bus.Poke(0x5000, {0xB8, 0x01, 0x00, 0x00, 0x00});  // MOV EAX, 1
    m.bus.Poke(0x6000, {0xB8, 0x02, 0x00, 0x00, 0x00});  // MOV EAX, 2
    Code on;
    on.MovImm(kEax, 0x43000).Raw({0x0F, 0x22, 0xD8});
    PagingOn(on).Raw({0x90});  // NOP: its fetch puts the page of 1000h in the TLB
    ASSERT_EQ(m.Run(on), static_cast<uint64_t>(on.count));
    // Linear 5000h runs through the identity mapping, its translation in the TLB (set 5).
    m.cpu.set_eip(0x5000);
    ASSERT_EQ(m.cpu.Run(1), 1u);
    ASSERT_EQ(m.cpu.reg(kEax), 1u);
    uint32_t way = 0;
    while (way < 4 && m.cpu.paging().tlb().entry(5, way).page != (0x5000 | 1)) ++way;
    ASSERT_LT(way, 4u);
    // TR6/TR7 point that entry at 6000h.
    Code c;
    c.Tr(7, 0x6000 | Rep(way)).Tr(6, 0x5000 | kTr6V | kTr6D | kTr6NotU | kTr6W);
    // From the page of the first program (its translation cached already: no walk, which would
    // change the TLB by itself), in lines other than 5000h's.
    const uint32_t epoch = m.cpu.paging().tlb().epoch();
    ASSERT_EQ(m.Run(c, 0x1800), static_cast<uint64_t>(c.count));
    EXPECT_EQ(m.cpu.paging().tlb().epoch(), epoch + 1);
    m.cpu.set_eip(0x5000);
    ASSERT_EQ(m.cpu.Run(1), 1u);
    EXPECT_EQ(m.cpu.reg(kEax), 2u) << "fast paths " << fast;
  }
}

// A LineObserver that records what it is told.
struct Observer : LineObserver {
  void OnLineChanged(uint32_t line) override { lines.push_back(line); }
  void OnAllInvalidated() override { ++all; }
  std::vector<uint32_t> lines;
  int all = 0;
};

TEST(X86TestRegisters, ACacheWriteTellsTheLineObserverAndChangesTheGeneration) {
  simcore::RamBus bus(1 << 20);
  uint64_t branches = 0;
  Cache cache(bus, branches);
  Observer observer;
  cache.set_observer(&observer);
  Tlb tlb;
  TestRegisters tr;
  uint8_t byte[1];
  cache.Read(0x5010, byte, {});  // set 1, way 0
  ASSERT_EQ(cache.WayOf(0x5010), 0);
  const uint32_t generation = cache.generation(1 * Cache::kWays + 0);
  const size_t records = bus.log().size();
  WriteTestRegister(tr, 4, 0x7800 | kTr4Valid, cache, tlb);
  WriteTestRegister(tr, 5, 1 << kTr5SetShift | kTr5CacheWrite, cache, tlb);
  EXPECT_EQ(observer.lines, (std::vector<uint32_t>{0x5010, 0x7810}));  // what left, what came
  EXPECT_NE(cache.generation(1 * Cache::kWays + 0), generation);
  EXPECT_TRUE(cache.Contains(0x7810));
  EXPECT_FALSE(cache.Contains(0x5010));
  // Written invalid: the line leaves, no new one comes.
  observer.lines.clear();
  WriteTestRegister(tr, 4, 0x7800, cache, tlb);
  WriteTestRegister(tr, 5, 1 << kTr5SetShift | kTr5CacheWrite, cache, tlb);
  EXPECT_EQ(observer.lines, (std::vector<uint32_t>{0x7810}));
  EXPECT_FALSE(cache.Contains(0x7810));
  WriteTestRegister(tr, 5, kTr5Flush, cache, tlb);
  EXPECT_EQ(observer.all, 1);
  EXPECT_EQ(bus.log().size(), records);  // none of it reached the bus
}

TEST(X86TestRegisters, ReservedAndReadOnlyBitsAreNotStored) {
  simcore::RamBus bus(1 << 16);
  uint64_t branches = 0;
  Cache cache(bus, branches);
  Tlb tlb;
  TestRegisters tr;
  WriteTestRegister(tr, 4, 0xFFFFFFFF, cache, tlb);
  EXPECT_EQ(ReadTestRegister(tr, 4), kTr4Tag | kTr4Valid);
  WriteTestRegister(tr, 5, 0xFFFFF000 | 0x7F0 | 2 << kTr5EntryShift, cache, tlb);  // buffer access
  EXPECT_EQ(ReadTestRegister(tr, 5), 0x7F0u | 2 << kTr5EntryShift);
  WriteTestRegister(tr, 7, 0xFFFFFFFF, cache, tlb);
  EXPECT_EQ(ReadTestRegister(tr, 7), 0xFFFFFC1Cu);   // LRU (9:7) and 6:5, 1:0 not written
  WriteTestRegister(tr, 6, 0xFFFFFFFE, cache, tlb);  // a write (C = 0), reserved 4:1 dropped
  EXPECT_EQ(ReadTestRegister(tr, 6), 0xFFFFFFE0u);
  // TR3 writes go to the fill buffer doubleword TR5 selects; reads come from the read buffer.
  WriteTestRegister(tr, 3, 0x12345678, cache, tlb);
  EXPECT_EQ(tr.fill_buffer[2], 0x12345678u);
  EXPECT_EQ(ReadTestRegister(tr, 3), 0u);
}

TEST(X86TestRegisters, OnlyCpl0AndRealModeMayUseThem) {
  // CPL 3: #GP(0) for both directions, nothing changed.
  for (const std::vector<uint8_t>& insn :
       {std::vector<uint8_t>{0x0F, 0x26, 0xF0}, std::vector<uint8_t>{0x0F, 0x24, 0xFB}}) {
    Machine m(3);
    m.cpu.set_reg(kEax, 0x00100000 | kTr6V);
    m.cpu.set_reg(kEbx, 0x1234);
    Code c;
    c.Raw(insn);  // MOV TR6, EAX / MOV EBX, TR7
    EXPECT_EQ(m.Run(c), 0u);
    EXPECT_TRUE(m.cpu.exception().pending);
    EXPECT_EQ(m.cpu.exception().vector, kVecGeneralProtection);
    EXPECT_EQ(m.cpu.exception().error_code, 0u);
    EXPECT_EQ(m.cpu.eip(), 0x1000u);
    EXPECT_EQ(m.cpu.reg(kEbx), 0x1234u);
    EXPECT_EQ(m.cpu.test_registers(), TestRegisters{});
    EXPECT_FALSE(m.cpu.paging().tlb().entry(0, 0).valid());
  }
  // V86 mode (CPL 3 whatever IOPL): #GP(0).
  {
    Machine m;
    m.cpu.set_eflags(flag::kVM | flag::kIOPL);
    m.cpu.set_cpl(3);
    for (int s = 0; s < 6; ++s) m.cpu.set_segment(s, {0x100, 0x1000, 0xFFFF, false, 0xF3});
    m.bus.Poke(0x1000, {0x0F, 0x26, 0xE0});  // MOV TR4, EAX
    m.cpu.set_eip(0);
    EXPECT_EQ(m.cpu.Run(1), 0u);
    EXPECT_EQ(m.cpu.exception().vector, kVecGeneralProtection);
    EXPECT_EQ(m.cpu.exception().error_code, 0u);
  }
  // Real mode: allowed (always 32 bits, no operand-size prefix needed).
  {
    PcBus bus;
    Cpu cpu(bus);
    cpu.SetReal(0, 0, 0);
    cpu.set_reg(kEax, 0xFFFFF800 | kTr4Valid);
    bus.Poke(0x1000, {0x0F, 0x26, 0xE0, 0x0F, 0x24, 0xE3});  // MOV TR4, EAX; MOV EBX, TR4
    cpu.set_eip(0x1000);
    EXPECT_EQ(cpu.Run(2), 2u);
    EXPECT_EQ(cpu.reg(kEbx), 0xFFFFF800 | kTr4Valid);
  }
  // CPL 0 with DR7.GD set: general detect guards the debug registers only.
  {
    Machine m;
    m.cpu.set_debug({}, 0xFFFF0FF0u, 0x400 | kDr7Gd);
    m.cpu.set_reg(kEax, 0x800 | kTr4Valid);
    Code c;
    c.ToTr(4, kEax).FromTr(kEcx, 4);
    EXPECT_EQ(m.Run(c), 2u);
    EXPECT_EQ(m.cpu.reg(kEcx), 0x800 | kTr4Valid);
  }
}

TEST(X86TestRegisters, Tr0ToTr2DoNotExist) {
  for (uint8_t modrm : {0xC0, 0xC8, 0xD0}) {
    for (uint8_t opcode : {0x24, 0x26}) {
      Machine m;
      m.bus.Poke(0x1000, {0x0F, opcode, modrm});
      m.cpu.set_eip(0x1000);
      EXPECT_EQ(m.cpu.Run(1), 0u);
      EXPECT_EQ(m.cpu.exception().vector, kVecInvalidOpcode) << int{opcode} << " " << int{modrm};
    }
  }
}

}  // namespace
}  // namespace citcat::x86
