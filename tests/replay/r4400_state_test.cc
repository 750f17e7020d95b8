// The R4400 core's state through the IMS (core_state/r4400_state.h) on a core with a secondary
// cache, which the replayed machine does not have: saved at a boundary and loaded into a new core
// on a copy of memory, the new core goes on exactly as the old one (the same bus transactions, the
// same state after), from a delay slot too.
#include "core_state/r4400_state.h"

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simcore/mips/cpu.h"
#include "simcore/ram_bus.h"
#include "tests/simcore/mips_asm.h"

namespace citcat::replay {
namespace {

using namespace mips::as;  // NOLINT
using ::testing::HasSubstr;

constexpr uint64_t kCode = 0xFFFFFFFF80001000ull;  // kseg0, physical 0x1000
constexpr uint64_t kMemory = 8 << 20;

mips::CpuConfig Config() {
  mips::CpuConfig c;
  c.scache_bytes = 64 * 1024;
  c.scache_line = 64;
  return c;
}

// A loop over 160 KB with a stride of 40 bytes: loads, stores and LL/SC that keep every cache
// busy (dirty primary and secondary lines, secondary evictions), branches with delay slots.
void LoadProgram(simcore::RamBus& bus) {
  const uint32_t words[] = {
      Lui(1, 0x8010),     // 0: r1 = the array
      Addiu(2, 0, 0),     // 1: i = 0
      Addiu(3, 0, 4000),  // 2
      Lw(4, 0, 1),        // 3: loop
      Addu(4, 4, 2),      // 4
      Sw(4, 0, 1),        // 5
      Ll(5, 8, 1),        // 6
      Addiu(5, 5, 1),     // 7
      Sc(5, 8, 1),        // 8
      Addiu(1, 1, 40),    // 9
      Addiu(2, 2, 1),     // 10
      Bne(2, 3, -9),      // 11: to 3
      Addiu(6, 6, 3),     // 12: its delay slot
      J(0x80001000),      // 13: again
      Nop(),              // 14
  };
  uint64_t pa = kCode & 0x1FFFFFFF;
  for (uint32_t w : words) {
    bus.PokeWordBE(pa, w);
    pa += 4;
  }
}

struct Core {
  Core() : bus(kMemory), cpu(std::make_unique<mips::Cpu>(bus, Config())) {
    cpu->WriteCp0(mips::kCp0Status, 0);  // kernel, BEV=0, ERL=0, interrupts off
  }
  simcore::RamBus bus;
  std::unique_ptr<mips::Cpu> cpu;
};

// Runs a core to `steps` and on to a boundary in a delay slot (or not), saves it, loads the state
// into a new core on a copy of memory, and runs both on.
void ExpectTheSameAfterLoading(uint64_t steps, bool in_delay_slot) {
  Core a;
  LoadProgram(a.bus);
  a.cpu->SetPc(kCode);
  a.cpu->Run(steps);
  while (a.cpu->in_delay_slot() != in_delay_slot) a.cpu->Step();
  ims::MipsState saved;
  core_state::SaveMipsState(*a.cpu, saved);
  EXPECT_EQ(saved.delay_slot(), in_delay_slot);
  EXPECT_GT(saved.secondary_cache().lines_size(), 100);
  EXPECT_GT(saved.primary_icache().lines_size(), 0);
  int dirty = 0;
  for (const ims::CacheLine& l : saved.secondary_cache().lines()) dirty += l.dirty();
  for (const ims::CacheLine& l : saved.primary_dcache().lines()) dirty += l.dirty();
  EXPECT_GT(dirty, 100);

  Core b;
  std::copy(a.bus.ram().begin(), a.bus.ram().end(), b.bus.ram().begin());
  const absl::Status loaded_ok = core_state::LoadMipsState(saved, a.cpu->retired(), *b.cpu);
  ASSERT_TRUE(loaded_ok.ok()) << loaded_ok;
  b.cpu->set_branch_count(a.cpu->branch_count());
  ims::MipsState loaded;
  core_state::SaveMipsState(*b.cpu, loaded);
  EXPECT_EQ(loaded.SerializeAsString(), saved.SerializeAsString());

  a.bus.set_logging(true);
  b.bus.set_logging(true);
  a.cpu->Run(100'000);
  b.cpu->Run(100'000);
  ASSERT_EQ(a.bus.log().size(), b.bus.log().size());
  EXPECT_GT(a.bus.log().size(), 1000u);
  for (size_t i = 0; i < a.bus.log().size(); ++i) {
    const cat::OwnedRecord &x = a.bus.log()[i], &y = b.bus.log()[i];
    ASSERT_TRUE(x.kind == y.kind && x.address == y.address && x.data == y.data &&
                x.branch_count == y.branch_count)
        << "record " << i;
  }
  ims::MipsState after_a, after_b;
  core_state::SaveMipsState(*a.cpu, after_a);
  core_state::SaveMipsState(*b.cpu, after_b);
  EXPECT_EQ(after_a.SerializeAsString(), after_b.SerializeAsString());
  EXPECT_EQ(a.cpu->retired(), b.cpu->retired());
  EXPECT_TRUE(std::equal(a.bus.ram().begin(), a.bus.ram().end(), b.bus.ram().begin()));
}

TEST(R4400State, LoadingASavedStateGoesOnTheSame) { ExpectTheSameAfterLoading(50'000, false); }

TEST(R4400State, LoadingInADelaySlotGoesOnTheSame) { ExpectTheSameAfterLoading(70'001, true); }

TEST(R4400State, ASecondaryLineOutsideTheCacheIsRefused) {
  Core a;
  LoadProgram(a.bus);
  a.cpu->SetPc(kCode);
  a.cpu->Run(20'000);
  ims::MipsState saved;
  core_state::SaveMipsState(*a.cpu, saved);
  ASSERT_GT(saved.secondary_cache().lines_size(), 0);
  ims::CacheLine& l = *saved.mutable_secondary_cache()->mutable_lines(0);
  l.set_address(l.address() ^ 64);  // the next set's line
  Core b;
  const absl::Status s = core_state::LoadMipsState(saved, 0, *b.cpu);
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_THAT(s.message(), HasSubstr("mips.secondary_cache"));
  EXPECT_THAT(s.message(), HasSubstr("does not belong in that set"));
  EXPECT_THAT(s.message(), HasSubstr("1024 lines of 64 bytes"));
}

}  // namespace
}  // namespace citcat::replay
