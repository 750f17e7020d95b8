// The primary caches as the bus sees them: fills, write-backs, uncached accesses, CACHE
// operations, and memory changed behind the caches (DMA).
#include "gtest/gtest.h"
#include "tests/simcore/cpu_fixture.h"

namespace citcat::mips {
namespace {

using namespace as;  // NOLINT
using cat::RecordKind;

class CacheTest : public CpuTest {
 protected:
  // Runs `words` placed at a fresh kseg0 line (the program itself causes I-cache fills, which
  // the tests below filter out by flag).
  void Exec(std::initializer_list<uint32_t> words) {
    next_ += 0x100;
    Put(kCode + next_, words);
    cpu_->SetPc(kCode + next_);
    cpu_->Run(words.size());
  }
  std::vector<cat::OwnedRecord> DataRecords() const {
    std::vector<cat::OwnedRecord> out;
    for (const auto& r : bus_.log()) {
      if (!(r.flags & cat::kFlagCode)) out.push_back(r);
    }
    return out;
  }
  uint64_t next_ = 0;
};

TEST_F(CacheTest, CachedLoadFillsOneLineOnce) {
  bus_.set_logging(true);
  cpu_->set_gpr(1, kData);
  Exec({Lw(2, 4, 1), Lw(3, 8, 1), Lw(4, 28, 1)});
  const auto recs = DataRecords();
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].kind, RecordKind::kFill);
  EXPECT_EQ(recs[0].address, 0x100000u);
  EXPECT_EQ(recs[0].data.size(), 32u);
}

TEST_F(CacheTest, InstructionFillsAreFlaggedAsCode) {
  bus_.set_logging(true);
  Exec({Nop()});
  ASSERT_FALSE(bus_.log().empty());
  EXPECT_EQ(bus_.log()[0].kind, RecordKind::kFill);
  EXPECT_TRUE(bus_.log()[0].flags & cat::kFlagCode);
}

TEST_F(CacheTest, UncachedAccessesGoStraightToTheBus) {
  bus_.PokeWordBE(0x200000, 0x01020304);
  bus_.set_logging(true);
  cpu_->set_gpr(1, 0xFFFFFFFFA0200000ull);  // kseg1
  cpu_->set_gpr(5, 0xAB);
  Exec({Lh(2, 2, 1), Sb(5, 1, 1), Lw(3, 0, 1)});
  const auto recs = DataRecords();
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0].kind, RecordKind::kUncachedRead);
  EXPECT_EQ(recs[0].address, 0x200002u);
  EXPECT_EQ(recs[0].data, (std::vector<uint8_t>{0x03, 0x04}));
  EXPECT_EQ(recs[1].kind, RecordKind::kUncachedWrite);
  EXPECT_EQ(recs[1].address, 0x200001u);
  EXPECT_EQ(recs[1].data, (std::vector<uint8_t>{0xAB}));
  EXPECT_EQ(R(3), 0x01AB0304u);
}

TEST_F(CacheTest, UncachedPartialStoreWritesOnlyItsBytes) {
  bus_.set_logging(true);
  cpu_->set_gpr(1, 0xFFFFFFFFA0200000ull);
  cpu_->set_gpr(5, 0x11223344);
  Exec({Swl(5, 2, 1)});  // big-endian: bytes 2..3 get 0x11 0x22
  const auto recs = DataRecords();
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].address, 0x200002u);
  EXPECT_EQ(recs[0].data, (std::vector<uint8_t>{0x11, 0x22}));
}

TEST_F(CacheTest, DirtyLineWrittenBackOnConflictThenFilled) {
  cpu_->set_gpr(1, kData);
  cpu_->set_gpr(2, kData + 16 * 1024);  // same D-cache index, different tag
  cpu_->set_gpr(5, 0x55);
  bus_.set_logging(true);
  Exec({Sw(5, 0, 1), Lw(6, 0, 2)});
  const auto recs = DataRecords();
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0].kind, RecordKind::kFill);  // write allocate
  EXPECT_EQ(recs[1].kind, RecordKind::kWriteBack);
  EXPECT_EQ(recs[1].address, 0x100000u);
  EXPECT_EQ(recs[1].data[3], 0x55);
  EXPECT_EQ(recs[2].kind, RecordKind::kFill);
  EXPECT_EQ(recs[2].address, 0x104000u);
  EXPECT_EQ(bus_.PeekWordBE(0x100000), 0x55u);
}

TEST_F(CacheTest, IndexWritebackInvalidateAndHitOps) {
  cpu_->set_gpr(1, kData);
  cpu_->set_gpr(5, 0x77);
  Exec({Sw(5, 0, 1)});
  EXPECT_EQ(bus_.PeekWordBE(0x100000), 0u);  // still only in the D-cache
  bus_.set_logging(true);
  Exec({as::Cache(0x6 << 2 | 1, 0, 1)});  // Hit_Writeback D: written, line stays valid and clean
  auto recs = DataRecords();
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].kind, RecordKind::kWriteBack);
  EXPECT_EQ(bus_.PeekWordBE(0x100000), 0x77u);
  bus_.clear_log();
  Exec({as::Cache(0x6 << 2 | 1, 0, 1), as::Cache(0x0 << 2 | 1, 0, 1)});  // clean: nothing to write
  EXPECT_TRUE(DataRecords().empty());
  EXPECT_FALSE(cpu_->dcache().Hit(kData, 0x100000));
  // Hit_Invalidate drops dirty data without writing it.
  Exec({Sw(5, 4, 1), as::Cache(0x4 << 2 | 1, 0, 1)});
  bus_.clear_log();
  Exec({Lw(6, 4, 1)});
  EXPECT_EQ(R(6), 0u);
}

TEST_F(CacheTest, DmaIsInvisibleUntilTheLineIsInvalidated) {
  cpu_->set_gpr(1, kData);
  Exec({Lw(2, 0, 1)});
  bus_.PokeWordBE(0x100000, 0xD1A);  // a device writes memory behind the cache
  Exec({Lw(3, 0, 1)});
  EXPECT_EQ(R(3), 0u);
  Exec({as::Cache(0x4 << 2 | 1, 0, 1), Lw(4, 0, 1)});  // Hit_Invalidate D, reload
  EXPECT_EQ(R(4), 0xD1Au);
}

TEST_F(CacheTest, SelfModifiedCodeNeedsCacheOps) {
  // Store a new instruction over one already in the I-cache: the old one keeps running until
  // the D-cache line is written back and the I-cache line invalidated.
  const uint64_t target = kCode + 0x2000;
  Put(target, {Addiu(7, 0, 1), Jr(31), Nop()});
  cpu_->set_gpr(1, target);
  cpu_->set_gpr(5, Addiu(7, 0, 2));
  auto call = [&] {
    Exec({Jalr(31, 1), Nop()});
    cpu_->Run(3);
  };
  call();
  EXPECT_EQ(R(7), 1u);
  Exec({Sw(5, 0, 1)});
  call();
  EXPECT_EQ(R(7), 1u);  // stale I-cache line (and the new word still in the D-cache)
  Exec(
      {as::Cache(0x6 << 2 | 1, 0, 1), as::Cache(0x4 << 2 | 0, 0, 1)});  // D writeback, I invalidate
  call();
  EXPECT_EQ(R(7), 2u);
}

TEST_F(CacheTest, IndexLoadAndStoreTag) {
  cpu_->set_gpr(1, kData);
  cpu_->set_gpr(5, 1);
  Exec({Sw(5, 0, 1), as::Cache(0x1 << 2 | 1, 0, 1)});  // Index_Load_Tag D
  const uint32_t tag = static_cast<uint32_t>(cpu_->ReadCp0(kCp0TagLo));
  EXPECT_EQ(tag >> 8, 0x100000u >> 12);
  EXPECT_EQ((tag >> 6) & 3, 3u);  // dirty
  cpu_->WriteCp0(kCp0TagLo, 0);
  Exec({as::Cache(0x2 << 2 | 1, 0, 1)});  // Index_Store_Tag D: invalid
  EXPECT_FALSE(cpu_->dcache().valid(cpu_->dcache().Index(kData)));
}

TEST_F(CacheTest, UncachedTlbPageAndBranchCountStamp) {
  cpu_->WriteCp0(kCp0Index, 0);
  cpu_->WriteCp0(kCp0EntryHi, 0x00400000);
  cpu_->WriteCp0(kCp0EntryLo0, (0x300000 >> 12) << 6 | 2 << 3 | 6);  // C=2: uncached
  cpu_->WriteCp0(kCp0EntryLo1, 0);
  cpu_->WriteCp0(kCp0PageMask, 0);
  Exec({Tlbwi()});
  cpu_->set_gpr(1, 0x00400000);
  cpu_->set_branch_count(1000);
  bus_.set_logging(true);
  Exec({Beq(0, 0, 1), Nop(), Nop(), Lw(2, 0, 1)});
  const auto recs = DataRecords();
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].kind, RecordKind::kUncachedRead);
  EXPECT_EQ(recs[0].address, 0x300000u);
  EXPECT_EQ(recs[0].branch_count, 1001u);
}

class SmallLineCacheTest : public CpuTest {
 protected:
  static CpuConfig Config() {
    CpuConfig c;
    c.dcache_line = 16;
    c.icache_line = 16;
    return c;
  }
  SmallLineCacheTest() : CpuTest(Config()) {}
};

TEST_F(SmallLineCacheTest, SixteenByteLines) {
  bus_.set_logging(true);
  Put(kCode, {Lui(1, 0x8010), Lw(2, 0, 1)});
  cpu_->Run(2);
  ASSERT_EQ(bus_.log().size(), 2u);
  EXPECT_EQ(bus_.log()[0].data.size(), 16u);
  EXPECT_EQ(bus_.log()[1].data.size(), 16u);
  EXPECT_EQ(cpu_->ReadCp0(kCp0Config) & 0x30, 0u);
}

}  // namespace
}  // namespace citcat::mips

namespace citcat::mips {
namespace {

class SecondaryCacheTest : public CpuTest {
 protected:
  static CpuConfig Config() {
    CpuConfig c;
    c.scache_bytes = 64 * 1024;
    c.scache_line = 64;
    return c;
  }
  SecondaryCacheTest() : CpuTest(Config()) {}
  void Exec(std::initializer_list<uint32_t> words) {
    next_ += 0x100;
    Put(kCode + next_, words);
    cpu_->SetPc(kCode + next_);
    cpu_->Run(words.size());
  }
  std::vector<cat::OwnedRecord> DataRecords() const {
    std::vector<cat::OwnedRecord> out;
    for (const auto& r : bus_.log()) {
      if (r.address >= 0x100000) out.push_back(r);
    }
    return out;
  }
  uint64_t next_ = 0;
};

TEST_F(SecondaryCacheTest, FillsAndWriteBacksAreSecondaryLines) {
  EXPECT_EQ(cpu_->ReadCp0(kCp0Config) & (1u << 17), 0u);  // SC=0: present
  EXPECT_EQ((cpu_->ReadCp0(kCp0Config) >> 22) & 3, 2u);   // SB: 64-byte blocks
  cpu_->set_gpr(1, kData);
  cpu_->set_gpr(5, 0x99);
  bus_.set_logging(true);
  Exec({as::Lw(2, 0, 1), as::Lw(3, 32, 1), as::Sw(5, 4, 1)});
  auto recs = DataRecords();
  ASSERT_EQ(recs.size(), 1u);  // one 64-byte secondary fill serves both primary lines
  EXPECT_EQ(recs[0].kind, cat::RecordKind::kFill);
  EXPECT_EQ(recs[0].data.size(), 64u);
  // Evict the dirty primary line: the write-back stops in the secondary cache.
  bus_.clear_log();
  cpu_->set_gpr(6, kData + 16 * 1024);
  Exec({as::Lw(7, 0, 6)});
  recs = DataRecords();
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].address, 0x104000u);
  // Hit_Writeback on the secondary (cache field 3) writes the whole secondary line.
  bus_.clear_log();
  Exec({as::Cache(0x6 << 2 | 3, 0, 1)});
  recs = DataRecords();
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].kind, cat::RecordKind::kWriteBack);
  EXPECT_EQ(recs[0].data.size(), 64u);
  EXPECT_EQ(bus_.PeekWordBE(0x100004), 0x99u);
}

TEST_F(SecondaryCacheTest, InclusionWritesBackDirtyPrimaryDataOnSecondaryEviction) {
  cpu_->set_gpr(1, kData);
  cpu_->set_gpr(2, kData + 64 * 1024 + 0x20);  // same secondary line index, next primary line
  cpu_->set_gpr(5, 0x1234);
  Exec({as::Sw(5, 8, 1)});  // dirty in the primary D-cache only
  bus_.set_logging(true);
  Exec({as::Lw(6, 0, 2)});  // replaces the secondary line holding it
  const auto recs = DataRecords();
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].kind, cat::RecordKind::kWriteBack);
  EXPECT_EQ(recs[0].address, 0x100000u);
  EXPECT_EQ(recs[1].kind, cat::RecordKind::kFill);
  EXPECT_EQ(bus_.PeekWordBE(0x100008), 0x1234u);
  EXPECT_FALSE(cpu_->dcache().Hit(kData, 0x100000));
}

}  // namespace
}  // namespace citcat::mips
