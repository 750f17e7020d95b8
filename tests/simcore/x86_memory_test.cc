// The i486 memory path from the Intel486 manuals: the pseudo-LRU replacement of the cache and the
// TLB, the bus records of fills, write-throughs, uncached and locked cycles, CR0.CD/NW, INVD,
// snoops, line generations, and the paging walk's rights, accessed/dirty bits and #PF codes.
#include <array>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "simcore/ram_bus.h"
#include "simcore/x86/cache.h"
#include "simcore/x86/paging.h"
#include "simcore/x86/plru.h"
#include "simcore/x86/tlb.h"

namespace citcat::x86 {
namespace {

using cat::OwnedRecord;
using cat::RecordKind;
using Bytes = std::vector<uint8_t>;

OwnedRecord Rec(RecordKind kind, uint64_t address, uint64_t branch_count, Bytes data,
                uint8_t flags = 0) {
  OwnedRecord r;
  r.kind = kind;
  r.flags = flags;
  r.address = address;
  r.branch_count = branch_count;
  r.data = std::move(data);
  return r;
}

// ---- pseudo-LRU ----

TEST(PseudoLru, EachAccessSetsTheBitsTheManualNames) {
  EXPECT_EQ(PlruTouch(0, 0), kPlruB0 | kPlruB1);
  EXPECT_EQ(PlruTouch(0, 1), kPlruB0);
  EXPECT_EQ(PlruTouch(0, 2), kPlruB2);
  EXPECT_EQ(PlruTouch(0, 3), 0);
  // The bit of the other pair is kept.
  EXPECT_EQ(PlruTouch(kPlruB2, 0), kPlruB0 | kPlruB1 | kPlruB2);
  EXPECT_EQ(PlruTouch(kPlruB1, 3), kPlruB1);
  EXPECT_EQ(PlruTouch(kPlruB0 | kPlruB1 | kPlruB2, 1), kPlruB0 | kPlruB2);
}

// Every state and way against the manual's rule, spelled out: an access to L0 or L1 sets B0 and
// records which of the pair in B1; to L2 or L3 clears B0 and records which in B2.
TEST(PseudoLru, EveryStateAndWayFollowsTheRule) {
  for (unsigned bits = 0; bits < 8; ++bits) {
    for (unsigned way = 0; way < 4; ++way) {
      unsigned want = bits;
      if (way < 2) {
        want |= kPlruB0;
        want = way == 0 ? want | kPlruB1 : want & ~unsigned{kPlruB1};
      } else {
        want &= ~unsigned{kPlruB0};
        want = way == 2 ? want | kPlruB2 : want & ~unsigned{kPlruB2};
      }
      EXPECT_EQ(PlruTouch(static_cast<uint8_t>(bits), way), want) << bits << " " << way;
    }
  }
}

TEST(PseudoLru, VictimFollowsB0ThenB1OrB2) {
  EXPECT_EQ(PlruVictim(0), 0u);
  EXPECT_EQ(PlruVictim(kPlruB1), 1u);
  EXPECT_EQ(PlruVictim(kPlruB1 | kPlruB2), 1u);
  EXPECT_EQ(PlruVictim(kPlruB0), 2u);
  EXPECT_EQ(PlruVictim(kPlruB0 | kPlruB1), 2u);
  EXPECT_EQ(PlruVictim(kPlruB0 | kPlruB2), 3u);
}

TEST(PseudoLru, InvalidWaysGoFirstInOrder) {
  EXPECT_EQ(PlruChoose(0b0000, kPlruB0 | kPlruB2), 0u);
  EXPECT_EQ(PlruChoose(0b1011, 0), 2u);
  EXPECT_EQ(PlruChoose(0b0111, 0), 3u);
  EXPECT_EQ(PlruChoose(0b1111, kPlruB0 | kPlruB2), 3u);
}

TEST(PseudoLru, HandMadeSequences) {
  auto run = [](std::initializer_list<unsigned> ways) {
    uint8_t bits = 0;
    for (unsigned w : ways) bits = PlruTouch(bits, w);
    return PlruVictim(bits);
  };
  EXPECT_EQ(run({0, 1, 2, 3}), 0u);  // agrees with true LRU
  EXPECT_EQ(run({3, 2, 1, 0}), 3u);  // agrees with true LRU
  EXPECT_EQ(run({0, 2, 3, 1}), 2u);  // true LRU would pick L0
  EXPECT_EQ(run({1, 0, 3, 2}), 1u);
  EXPECT_EQ(run({2, 3, 0, 1, 0}), 2u);
  EXPECT_EQ(run({0, 1, 2, 3, 1}), 2u);  // true LRU would pick L0
}

// ---- the cache ----

class X86CacheTest : public ::testing::Test {
 protected:
  X86CacheTest() : bus_(1 << 20), cache_(bus_, branch_count_) {
    for (uint32_t a = 0; a < (1u << 20); ++a) bus_.ram()[a] = static_cast<uint8_t>(a * 7 + 3);
    bus_.set_logging(true);
  }
  Bytes Ram(uint32_t a, size_t n) const {
    return Bytes(bus_.ram().begin() + a, bus_.ram().begin() + a + n);
  }
  Bytes Read(uint32_t a, size_t n, Access access = {}) {
    Bytes b(n);
    cache_.Read(a, b, access);
    return b;
  }
  void Write(uint32_t a, Bytes b, Access access = {}) { cache_.Write(a, b, access); }
  // Reads the cache's copy without touching the bus or the replacement bits.
  Bytes Cached(uint32_t a, size_t n) const {
    const int way = cache_.WayOf(a);
    if (way < 0) return {};
    const uint8_t* line = cache_.line_data(Cache::SetOf(a), way);
    return Bytes(line + a % 16, line + a % 16 + n);
  }

  uint64_t branch_count_ = 0;
  simcore::RamBus bus_;
  Cache cache_;
};

TEST_F(X86CacheTest, ReadMissFillsTheLineOnceAsOneBurst) {
  branch_count_ = 41;
  const Bytes line = Ram(0x2000, 16);
  EXPECT_EQ(Read(0x2006, 4), Ram(0x2006, 4));
  EXPECT_EQ(Read(0x200C, 4), Ram(0x200C, 4));
  EXPECT_EQ(Read(0x2001, 1), Ram(0x2001, 1));
  EXPECT_EQ(bus_.log(), (std::vector{Rec(RecordKind::kFill, 0x2000, 41, line)}));
  EXPECT_EQ(cache_.WayOf(0x200F), 0);
}

TEST_F(X86CacheTest, CodeFetchFillsAreFlaggedAsCode) {
  Cache::LineRef ref;
  const uint8_t* line = cache_.FetchLine(0x3004, {.code = true}, &ref);
  ASSERT_NE(line, nullptr);
  EXPECT_EQ(Bytes(line, line + 16), Ram(0x3000, 16));
  EXPECT_EQ(bus_.log(),
            (std::vector{Rec(RecordKind::kFill, 0x3000, 0, Ram(0x3000, 16), cat::kFlagCode)}));
  // A fetch of a line that may not be cached leaves it to the caller.
  EXPECT_EQ(cache_.FetchLine(0x4000, {.pcd = true, .code = true}, &ref), nullptr);
  EXPECT_EQ(bus_.log().size(), 1u);
}

TEST_F(X86CacheTest, ReplacementFollowsPseudoLru) {
  // Five lines of set 0: stride 128 lines.
  const uint32_t a[5] = {0x10000, 0x10800, 0x11000, 0x11800, 0x12000};
  for (int i = 0; i < 4; ++i) Read(a[i], 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(cache_.WayOf(a[i]), i);
  // Hits in the order L0, L2, L3, L1: pseudo-LRU names L2 where true LRU would name L0.
  bus_.clear_log();
  Read(a[0], 4);
  Read(a[2], 4);
  Read(a[3], 4);
  Read(a[1], 4);
  EXPECT_TRUE(bus_.log().empty());
  EXPECT_EQ(cache_.lru_bits(0), kPlruB0);
  Read(a[4], 4);
  EXPECT_EQ(cache_.WayOf(a[4]), 2);
  EXPECT_FALSE(cache_.Contains(a[2]));
  EXPECT_TRUE(cache_.Contains(a[0]));
  EXPECT_EQ(bus_.log(), (std::vector{Rec(RecordKind::kFill, a[4], 0, Ram(a[4], 16))}));
  // A store hit is an access: the fill of L2 left B0 = 0 (L0 would go next); a store to L0
  // turns the choice to the other pair, where B2 = 1 names L3.
  Write(a[0], {1});
  Read(a[2], 4);
  EXPECT_EQ(cache_.WayOf(a[2]), 3);
  EXPECT_FALSE(cache_.Contains(a[3]));
  EXPECT_TRUE(cache_.Contains(a[0]));
}

TEST_F(X86CacheTest, StoresAreWrittenThroughAndUpdateHits) {
  Read(0x2000, 4);
  bus_.clear_log();
  branch_count_ = 5;
  Write(0x2004, {0xAA, 0xBB});
  EXPECT_EQ(Cached(0x2004, 2), (Bytes{0xAA, 0xBB}));
  EXPECT_EQ(Ram(0x2004, 2), (Bytes{0xAA, 0xBB}));
  EXPECT_EQ(Read(0x2004, 2), (Bytes{0xAA, 0xBB}));
  EXPECT_EQ(bus_.log(), (std::vector{Rec(RecordKind::kWriteThrough, 0x2004, 5, {0xAA, 0xBB})}));
}

TEST_F(X86CacheTest, StoreMissDoesNotAllocate) {
  branch_count_ = 6;
  Write(0x5000, {1, 2, 3, 4});
  EXPECT_FALSE(cache_.Contains(0x5000));
  branch_count_ = 7;
  EXPECT_EQ(Read(0x5000, 4), (Bytes{1, 2, 3, 4}));
  EXPECT_EQ(bus_.log(), (std::vector{Rec(RecordKind::kWriteThrough, 0x5000, 6, {1, 2, 3, 4}),
                                     Rec(RecordKind::kFill, 0x5000, 7, Ram(0x5000, 16))}));
}

TEST_F(X86CacheTest, MisalignedStoresSplitAtDwordsHighPartFirst) {
  Read(0x2000, 4);
  bus_.clear_log();
  Write(0x2006, {1, 2, 3, 4});  // crosses 0x2008
  Write(0x200F, {5, 6});        // crosses into line 0x2010, not cached
  Write(0x2021, {7, 8, 9});     // inside one dword: one cycle
  EXPECT_EQ(bus_.log(), (std::vector{Rec(RecordKind::kWriteThrough, 0x2008, 0, {3, 4}),
                                     Rec(RecordKind::kWriteThrough, 0x2006, 0, {1, 2}),
                                     Rec(RecordKind::kWriteThrough, 0x2010, 0, {6}),
                                     Rec(RecordKind::kWriteThrough, 0x200F, 0, {5}),
                                     Rec(RecordKind::kWriteThrough, 0x2021, 0, {7, 8, 9})}));
  EXPECT_EQ(Cached(0x2006, 4), (Bytes{1, 2, 3, 4}));
  EXPECT_EQ(Cached(0x200F, 1), (Bytes{5}));
  EXPECT_FALSE(cache_.Contains(0x2010));
}

TEST_F(X86CacheTest, ReadAcrossLinesFillsTheHigherLineFirst) {
  EXPECT_EQ(Read(0x200E, 4), Ram(0x200E, 4));
  EXPECT_EQ(bus_.log(), (std::vector{Rec(RecordKind::kFill, 0x2010, 0, Ram(0x2010, 16)),
                                     Rec(RecordKind::kFill, 0x2000, 0, Ram(0x2000, 16))}));
}

TEST_F(X86CacheTest, UncacheableReadsAndWritesGoToTheBusAtTheirSize) {
  const Access device{.cacheable = false};
  const Access pcd{.pcd = true};
  EXPECT_EQ(Read(0xF0002, 2, device), Ram(0xF0002, 2));
  EXPECT_EQ(Read(0x6000, 4, pcd), Ram(0x6000, 4));
  EXPECT_EQ(Read(0xF0001, 4, device), Ram(0xF0001, 4));  // misaligned: two cycles
  Write(0xF0010, {9}, device);
  Write(0x6004, {8, 7}, pcd);
  EXPECT_FALSE(cache_.Contains(0xF0000));
  EXPECT_FALSE(cache_.Contains(0x6000));
  EXPECT_EQ(bus_.log(), (std::vector{Rec(RecordKind::kUncachedRead, 0xF0002, 0, Ram(0xF0002, 2)),
                                     Rec(RecordKind::kUncachedRead, 0x6000, 0, Ram(0x6000, 4)),
                                     Rec(RecordKind::kUncachedRead, 0xF0004, 0, Ram(0xF0004, 1)),
                                     Rec(RecordKind::kUncachedRead, 0xF0001, 0, Ram(0xF0001, 3)),
                                     Rec(RecordKind::kUncachedWrite, 0xF0010, 0, {9}),
                                     Rec(RecordKind::kUncachedWrite, 0x6004, 0, {8, 7})}));
}

TEST_F(X86CacheTest, PcdStillServesALineAlreadyCached) {
  Read(0x7000, 4);
  bus_.clear_log();
  EXPECT_EQ(Read(0x7008, 4, {.pcd = true}), Ram(0x7008, 4));
  EXPECT_TRUE(bus_.log().empty());
}

TEST_F(X86CacheTest, CacheDisabledServesHitsWithoutNewFills) {
  Read(0x2000, 4);
  cache_.SetControl(/*cd=*/true, /*nw=*/false);
  bus_.clear_log();
  EXPECT_EQ(Read(0x2008, 4), Ram(0x2008, 4));  // hit
  EXPECT_EQ(Read(0x3000, 4), Ram(0x3000, 4));  // miss: no fill
  Write(0x2000, {1});                          // hit: updated and written through
  EXPECT_FALSE(cache_.Contains(0x3000));
  EXPECT_EQ(Cached(0x2000, 1), (Bytes{1}));
  EXPECT_EQ(bus_.log(), (std::vector{Rec(RecordKind::kUncachedRead, 0x3000, 0, Ram(0x3000, 4)),
                                     Rec(RecordKind::kUncachedWrite, 0x2000, 0, {1})}));
  cache_.SnoopInvalidate(0x2004);  // invalidations still work
  EXPECT_FALSE(cache_.Contains(0x2000));
}

TEST_F(X86CacheTest, CacheDisabledNotWriteThroughFreezesTheCache) {
  Read(0x2000, 4);
  const Bytes before = Ram(0x2000, 4);
  cache_.SetControl(/*cd=*/true, /*nw=*/true);
  bus_.clear_log();
  Write(0x2000, {1, 2, 3, 4});  // hit: the cache only
  Write(0x3000, {5});           // miss: to memory
  EXPECT_EQ(Read(0x2000, 4), (Bytes{1, 2, 3, 4}));
  EXPECT_EQ(Ram(0x2000, 4), before);
  cache_.SnoopInvalidate(0x2000);  // ignored while CD = NW = 1
  EXPECT_TRUE(cache_.Contains(0x2000));
  EXPECT_EQ(bus_.log(), (std::vector{Rec(RecordKind::kUncachedWrite, 0x3000, 0, {5})}));
  cache_.InvalidateAll();  // INVD still empties it; memory keeps the old bytes
  EXPECT_EQ(Read(0x2000, 4), before);
}

TEST(X86CacheControl, NotWriteThroughWithoutCacheDisableIsInvalid) {
  EXPECT_TRUE(Cache::ValidControl(false, false));
  EXPECT_TRUE(Cache::ValidControl(true, false));
  EXPECT_TRUE(Cache::ValidControl(true, true));
  EXPECT_FALSE(Cache::ValidControl(false, true));
}

class RecordingObserver : public LineObserver {
 public:
  void OnLineChanged(uint32_t line_address) override { changed.push_back(line_address); }
  void OnAllInvalidated() override { ++all; }
  std::vector<uint32_t> changed;
  int all = 0;
};

TEST_F(X86CacheTest, InvdEmptiesEveryLine) {
  RecordingObserver obs;
  cache_.set_observer(&obs);
  Read(0x2000, 4);
  Read(0x2800, 4);
  Read(0x9990, 4);
  Cache::LineRef ref;
  cache_.FetchLine(0x2000, {}, &ref);
  cache_.InvalidateAll();
  EXPECT_FALSE(cache_.Current(ref));
  EXPECT_EQ(obs.all, 1);
  for (uint32_t set = 0; set < Cache::kSets; ++set) {
    EXPECT_EQ(cache_.lru_bits(set), 0);
    for (uint32_t way = 0; way < Cache::kWays; ++way) EXPECT_FALSE(cache_.valid(set, way));
  }
  bus_.clear_log();
  Read(0x2000, 4);
  EXPECT_EQ(bus_.log(), (std::vector{Rec(RecordKind::kFill, 0x2000, 0, Ram(0x2000, 16))}));
  EXPECT_EQ(cache_.WayOf(0x2000), 0);
}

TEST_F(X86CacheTest, GenerationsTiePredecodeToTheLine) {
  RecordingObserver obs;
  cache_.set_observer(&obs);
  Cache::LineRef ref;
  cache_.FetchLine(0x10000, {.code = true}, &ref);
  Read(0x10004, 4);
  Write(0x20000, {1});  // miss elsewhere: nothing changes
  EXPECT_TRUE(cache_.Current(ref));
  EXPECT_TRUE(obs.changed.empty());
  Write(0x10008, {0x90});  // self-modifying store hits the line
  EXPECT_FALSE(cache_.Current(ref));
  EXPECT_EQ(obs.changed, (std::vector<uint32_t>{0x10000}));

  // Replacement tells too.
  cache_.FetchLine(0x10000, {.code = true}, &ref);
  obs.changed.clear();
  for (uint32_t a : {0x10800u, 0x11000u, 0x11800u, 0x12000u}) Read(a, 4);
  EXPECT_FALSE(cache_.Current(ref));
  EXPECT_EQ(obs.changed, (std::vector<uint32_t>{0x10000}));

  // And a snoop.
  obs.changed.clear();
  cache_.SnoopInvalidate(0x11804);
  EXPECT_EQ(obs.changed, (std::vector<uint32_t>{0x11800}));
  EXPECT_FALSE(cache_.Contains(0x11800));
}

TEST_F(X86CacheTest, LockedCyclesBypassAndInvalidateTheLine) {
  Read(0x2000, 4);
  bus_.clear_log();
  branch_count_ = 3;
  const Access locked{.locked = true};
  const Bytes old = Ram(0x2004, 4);
  EXPECT_EQ(Read(0x2004, 4, locked), old);
  EXPECT_FALSE(cache_.Contains(0x2000));
  Write(0x2004, {1, 2, 3, 4}, locked);
  EXPECT_EQ(
      bus_.log(),
      (std::vector{Rec(RecordKind::kUncachedRead, 0x2004, 3, old, cat::kFlagLocked),
                   Rec(RecordKind::kWriteThrough, 0x2004, 3, {1, 2, 3, 4}, cat::kFlagLocked)}));
}

TEST_F(X86CacheTest, EveryRecordCarriesTheBranchCountOfItsMoment) {
  branch_count_ = 100;
  Read(0x2000, 1);
  branch_count_ = 101;
  Write(0x2000, {1});
  branch_count_ = 102;
  Read(0xF0000, 1, {.cacheable = false});
  ASSERT_EQ(bus_.log().size(), 3u);
  EXPECT_EQ(bus_.log()[0].branch_count, 100u);
  EXPECT_EQ(bus_.log()[1].branch_count, 101u);
  EXPECT_EQ(bus_.log()[2].branch_count, 102u);
}

// ---- the TLB ----

TEST(X86Tlb, HitMissAndPseudoLruReplacement) {
  Tlb tlb;
  // Five pages of set 0 (linear bits 14:12 = 0).
  const uint32_t page[5] = {0x00000000, 0x00008000, 0x00010000, 0x12340000, 0xFFFF8000};
  for (uint32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(tlb.Lookup(page[i]), nullptr);
    EXPECT_EQ(tlb.Insert(page[i] + 0x123, 0x00100000 * (i + 1) | kPteUser), i);
  }
  for (uint32_t i = 0; i < 4; ++i) {
    const TlbEntry* e = tlb.Lookup(page[i] + 0xFFF);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->frame(), 0x00100000 * (i + 1));
  }
  // Last order L0..L3 -> L0 goes; then hits L1, L0, L3, L2 -> B0 = 0, B1 = 1 -> L1.
  EXPECT_EQ(tlb.Insert(page[4], 0x00500000), 0u);
  EXPECT_EQ(tlb.Lookup(page[0]), nullptr);
  for (uint32_t i : {1u, 4u, 3u, 2u}) ASSERT_NE(tlb.Lookup(page[i]), nullptr);
  EXPECT_EQ(tlb.lru_bits(0), kPlruB1 | kPlruB2);
  EXPECT_EQ(tlb.Insert(page[0], 0x00600000), 1u);
  EXPECT_EQ(tlb.Lookup(page[1]), nullptr);
  // Another set is untouched by all that.
  EXPECT_EQ(tlb.Lookup(0x1000), nullptr);
  EXPECT_EQ(tlb.Insert(0x1000, 0x00700000), 0u);
  EXPECT_EQ(tlb.entry(1, 0).frame(), 0x00700000u);
}

TEST(X86Tlb, ReinsertingAPageReplacesItsEntry) {
  Tlb tlb;
  tlb.Insert(0x5000, 0x1000 | kPteWritable);
  tlb.Insert(0x5000, 0x2000 | kPteDirty | kPtePcd | kPtePwt | kPteAccessed | kPtePresent);
  int count = 0;
  for (uint32_t w = 0; w < Tlb::kWays; ++w) count += tlb.entry(Tlb::SetOf(0x5000), w).valid();
  EXPECT_EQ(count, 1);
  const TlbEntry* e = tlb.Lookup(0x5000);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->frame(), 0x2000u);
  EXPECT_TRUE(e->dirty() && e->pcd() && e->pwt());
  EXPECT_FALSE(e->writable() || e->user());
}

TEST(X86Tlb, FlushAllAndInvlpg) {
  Tlb tlb;
  for (uint32_t p = 0; p < 32; ++p) tlb.Insert(p << 12, p << 12);
  for (uint32_t p = 0; p < 32; ++p) EXPECT_NE(tlb.Lookup(p << 12), nullptr) << p;
  tlb.Invalidate(0x5ABC);
  EXPECT_EQ(tlb.Lookup(0x5000), nullptr);
  EXPECT_NE(tlb.Lookup(0x4000), nullptr);
  EXPECT_NE(tlb.Lookup(0xD000), nullptr);  // same set, other page
  tlb.FlushAll();
  for (uint32_t p = 0; p < 32; ++p) EXPECT_EQ(tlb.Lookup(p << 12), nullptr) << p;
}

// ---- the paging walk ----

constexpr uint32_t kDir = 0x10000;
constexpr uint32_t kTable = 0x11000;
constexpr uint32_t kFrame = 0x200000;
constexpr uint32_t kLinear = 0x00401234;  // directory entry 1, table entry 1
constexpr uint32_t kPdeAddr = kDir + 4;
constexpr uint32_t kPteAddr = kTable + 4;

class X86PagingTest : public ::testing::Test {
 protected:
  X86PagingTest() : bus_(4 << 20), cache_(bus_, branch_count_), tables_(cache_), paging_(tables_) {
    bus_.set_logging(true);
  }

  void Poke32(uint32_t a, uint32_t v) {
    const uint8_t b[4] = {uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24)};
    bus_.Poke(a, b);
  }
  uint32_t Peek32(uint32_t a) const {
    uint8_t b[4];
    bus_.Peek(a, b);
    return b[0] | (b[1] << 8) | (b[2] << 16) | (uint32_t{b[3]} << 24);
  }
  Bytes Le(uint32_t v) { return {uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24)}; }
  // Fresh tables mapping kLinear to kFrame with these low bits, an empty TLB and cache.
  void Map(uint32_t pde_bits, uint32_t pte_bits, uint32_t cr3_bits = 0) {
    Poke32(kPdeAddr, kTable | pde_bits);
    Poke32(kPteAddr, kFrame | pte_bits);
    cache_.InvalidateAll();
    paging_.LoadCr3(kDir | cr3_bits);
    bus_.clear_log();
  }

  uint64_t branch_count_ = 0;
  simcore::RamBus bus_;
  Cache cache_;
  CachedPageTables tables_;
  Paging paging_;
};

constexpr uint32_t kP = kPtePresent, kW = kPteWritable, kU = kPteUser;

TEST_F(X86PagingTest, EveryRightsCombination) {
  // The combined rights (U/S, R/W) x CR0.WP x user/supervisor x read/write, from the Intel486
  // manual's page-protection rules.
  struct Row {
    bool u, w, wp, user, write, allowed;
  };
  const Row rows[] = {
      // supervisor reads: always
      {0, 0, 0, 0, 0, 1},
      {0, 1, 0, 0, 0, 1},
      {1, 0, 0, 0, 0, 1},
      {1, 1, 0, 0, 0, 1},
      {0, 0, 1, 0, 0, 1},
      {0, 1, 1, 0, 0, 1},
      {1, 0, 1, 0, 0, 1},
      {1, 1, 1, 0, 0, 1},
      // supervisor writes: always without WP, only to writable pages with it
      {0, 0, 0, 0, 1, 1},
      {0, 1, 0, 0, 1, 1},
      {1, 0, 0, 0, 1, 1},
      {1, 1, 0, 0, 1, 1},
      {0, 0, 1, 0, 1, 0},
      {0, 1, 1, 0, 1, 1},
      {1, 0, 1, 0, 1, 0},
      {1, 1, 1, 0, 1, 1},
      // user reads: user pages only, whatever WP
      {0, 0, 0, 1, 0, 0},
      {0, 1, 0, 1, 0, 0},
      {1, 0, 0, 1, 0, 1},
      {1, 1, 0, 1, 0, 1},
      {0, 0, 1, 1, 0, 0},
      {0, 1, 1, 1, 0, 0},
      {1, 0, 1, 1, 0, 1},
      {1, 1, 1, 1, 0, 1},
      // user writes: writable user pages only, whatever WP
      {0, 0, 0, 1, 1, 0},
      {0, 1, 0, 1, 1, 0},
      {1, 0, 0, 1, 1, 0},
      {1, 1, 0, 1, 1, 1},
      {0, 0, 1, 1, 1, 0},
      {0, 1, 1, 1, 1, 0},
      {1, 0, 1, 1, 1, 0},
      {1, 1, 1, 1, 1, 1},
  };
  // Each combined bit comes from the directory entry AND the table entry.
  auto pairs = [](bool bit) {
    return bit ? std::vector<std::array<bool, 2>>{{true, true}}
               : std::vector<std::array<bool, 2>>{{false, false}, {false, true}, {true, false}};
  };
  int cases = 0;
  for (const Row& r : rows) {
    for (auto [pde_u, pte_u] : pairs(r.u)) {
      for (auto [pde_w, pte_w] : pairs(r.w)) {
        Map(kP | (pde_u ? kU : 0) | (pde_w ? kW : 0), kP | (pte_u ? kU : 0) | (pte_w ? kW : 0));
        paging_.set_wp(r.wp);
        const Translation t = paging_.Translate(kLinear, r.write, r.user);
        SCOPED_TRACE(testing::Message()
                     << "U " << pde_u << pte_u << " W " << pde_w << pte_w << " WP " << r.wp
                     << " user " << r.user << " write " << r.write);
        EXPECT_EQ(t.ok, r.allowed);
        if (t.ok) {
          EXPECT_EQ(t.paddr, kFrame | 0x234);
        } else {
          EXPECT_EQ(t.error_code,
                    kPfProtection | (r.write ? kPfWrite : 0) | (r.user ? kPfUser : 0));
        }
        // The TLB gives the same answer as the walk.
        const Translation again = paging_.Translate(kLinear, r.write, r.user);
        EXPECT_EQ(again.ok, t.ok);
        EXPECT_EQ(again.error_code, t.error_code);
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 8 * 9 + 8 * 3 + 8 * 3 + 8 * 1);
}

TEST_F(X86PagingTest, NotPresentEntriesFaultWithPClear) {
  for (bool pde_present : {false, true}) {
    for (bool user : {false, true}) {
      for (bool write : {false, true}) {
        Map((pde_present ? kP : 0) | kU | kW, kU | kW);  // the table entry is never present
        const Translation t = paging_.Translate(kLinear, write, user);
        EXPECT_FALSE(t.ok);
        EXPECT_EQ(t.error_code, (write ? kPfWrite : 0) | (user ? kPfUser : 0));
        EXPECT_EQ(Peek32(kPdeAddr) & kPteAccessed, 0u);  // a failed walk marks nothing
      }
    }
  }
}

TEST_F(X86PagingTest, AccessedAndDirtyBitsAsLockedReadModifyWrites) {
  Map(kP | kU | kW, kP | kU | kW);
  branch_count_ = 9;
  const Bytes dir_line = [&] {
    Bytes b(16);
    bus_.Peek(kDir, b);
    return b;
  }();
  Bytes table_line(16);
  bus_.Peek(kTable, table_line);

  Translation t = paging_.Translate(kLinear, /*write=*/false, /*user=*/true);
  ASSERT_TRUE(t.ok);
  EXPECT_EQ(Peek32(kPdeAddr), kTable | kP | kU | kW | kPteAccessed);
  EXPECT_EQ(Peek32(kPteAddr), kFrame | kP | kU | kW | kPteAccessed);
  const uint8_t lk = cat::kFlagLocked;
  EXPECT_EQ(bus_.log(),
            (std::vector{
                Rec(RecordKind::kFill, kDir, 9, dir_line),
                Rec(RecordKind::kFill, kTable, 9, table_line),
                Rec(RecordKind::kUncachedRead, kPdeAddr, 9, Le(kTable | kP | kU | kW), lk),
                Rec(RecordKind::kWriteThrough, kPdeAddr, 9, Le(kTable | kP | kU | kW | 0x20), lk),
                Rec(RecordKind::kUncachedRead, kPteAddr, 9, Le(kFrame | kP | kU | kW), lk),
                Rec(RecordKind::kWriteThrough, kPteAddr, 9, Le(kFrame | kP | kU | kW | 0x20), lk),
            }));

  // Reads hit the TLB; the first write walks again to set the dirty bit, the PDE needs nothing.
  bus_.clear_log();
  EXPECT_TRUE(paging_.Translate(kLinear, false, true).ok);
  EXPECT_TRUE(bus_.log().empty());
  t = paging_.Translate(kLinear, /*write=*/true, /*user=*/true);
  ASSERT_TRUE(t.ok);
  EXPECT_EQ(Peek32(kPdeAddr), kTable | kP | kU | kW | kPteAccessed);
  EXPECT_EQ(Peek32(kPteAddr), kFrame | kP | kU | kW | kPteAccessed | kPteDirty);
  ASSERT_EQ(bus_.log().size(), 4u);
  EXPECT_EQ(bus_.log()[0].kind, RecordKind::kFill);  // the locked cycles invalidated both lines
  EXPECT_EQ(bus_.log()[0].address, kDir);
  EXPECT_EQ(bus_.log()[1].address, kTable);
  EXPECT_EQ(bus_.log()[2],
            Rec(RecordKind::kUncachedRead, kPteAddr, 9, Le(kFrame | kP | kU | kW | 0x20), lk));
  EXPECT_EQ(bus_.log()[3],
            Rec(RecordKind::kWriteThrough, kPteAddr, 9, Le(kFrame | kP | kU | kW | 0x60), lk));
  bus_.clear_log();
  EXPECT_TRUE(paging_.Translate(kLinear + 4, true, true).ok);
  EXPECT_TRUE(bus_.log().empty());
}

TEST_F(X86PagingTest, WriteWalkSetsAccessedAndDirtyTogether) {
  Map(kP | kW | kPteAccessed, kP | kW);
  ASSERT_TRUE(paging_.Translate(kLinear, /*write=*/true, /*user=*/false).ok);
  EXPECT_EQ(Peek32(kPdeAddr), kTable | kP | kW | kPteAccessed);  // directory: never dirty
  EXPECT_EQ(Peek32(kPteAddr), kFrame | kP | kW | kPteAccessed | kPteDirty);
  ASSERT_EQ(bus_.log().size(), 4u);  // two fills, one locked pair on the PTE
}

TEST_F(X86PagingTest, ProtectionFaultOnATlbHitNeedsNoBus) {
  Map(kP | kU | kW, kP | kU | kPteAccessed);  // user, read-only
  ASSERT_TRUE(paging_.Translate(kLinear, false, true).ok);
  bus_.clear_log();
  const Translation t = paging_.Translate(kLinear, /*write=*/true, /*user=*/true);
  EXPECT_FALSE(t.ok);
  EXPECT_EQ(t.error_code, kPfProtection | kPfWrite | kPfUser);
  EXPECT_TRUE(bus_.log().empty());
  EXPECT_EQ(Peek32(kPteAddr) & kPteDirty, 0u);
}

TEST_F(X86PagingTest, InvlpgAndCr3LoadDropStaleTranslations) {
  Map(kP | kW | kPteAccessed, kP | kW | kPteAccessed | kPteDirty);
  ASSERT_EQ(paging_.Translate(kLinear, false, false).paddr, kFrame | 0x234);
  // The guest remaps the page with an ordinary store (written through, the cached line updated).
  const Bytes remap = Le(0x300000 | kP | kW | kPteAccessed | kPteDirty);
  cache_.Write(kPteAddr, remap, {});
  EXPECT_EQ(paging_.Translate(kLinear, false, false).paddr,
            kFrame | 0x234);  // stale, as on hardware
  paging_.tlb().Invalidate(kLinear);
  EXPECT_EQ(paging_.Translate(kLinear, false, false).paddr, 0x300234u);
  cache_.Write(kPteAddr, Le(0x400000 | kP | kW | kPteAccessed | kPteDirty), {});
  paging_.LoadCr3(kDir);
  EXPECT_EQ(paging_.Translate(kLinear, false, false).paddr, 0x400234u);
}

TEST_F(X86PagingTest, CacheDisableBitsReachTheWalkAndTheTranslation) {
  // CR3.PCD: the directory entry is read uncached; PDE.PCD: so is the table entry.
  Map(kP | kW | kPteAccessed | kPtePcd, kP | kW | kPteAccessed | kPtePcd | kPtePwt,
      /*cr3_bits=*/kPtePcd);
  const Translation t = paging_.Translate(kLinear, false, false);
  ASSERT_TRUE(t.ok);
  EXPECT_TRUE(t.pcd);
  EXPECT_TRUE(t.pwt);
  EXPECT_EQ(
      bus_.log(),
      (std::vector{
          Rec(RecordKind::kUncachedRead, kPdeAddr, 0, Le(kTable | kP | kW | 0x20 | 0x10)),
          Rec(RecordKind::kUncachedRead, kPteAddr, 0, Le(kFrame | kP | kW | 0x20 | 0x10 | 0x08)),
      }));
}

}  // namespace
}  // namespace citcat::x86
