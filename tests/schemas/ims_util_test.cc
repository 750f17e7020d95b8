// The machine-neutral accessors over the IMS schema: the start PC of either CPU and the machine
// names that archives and tools use.
#include "ims/ims_util.h"

#include "gtest/gtest.h"

namespace citcat::ims {
namespace {

TEST(StartPc, IsTheMipsPc) {
  InitialMachineState s;
  s.mutable_mips()->set_pc(0xffffffff80011f10u);
  EXPECT_EQ(StartPc(s), 0xffffffff80011f10u);
}

TEST(StartPc, IsTheX86LinearAddress) {
  InitialMachineState s;
  X86State& x = *s.mutable_x86();
  x.set_eip(0xfff0);  // the reset vector, real mode: CS:IP = F000:FFF0
  x.mutable_cs()->set_selector(0xf000);
  x.mutable_cs()->set_base(0xf0000);
  EXPECT_EQ(StartPc(s), 0xffff0u);
  x.mutable_cs()->set_base(0xfffff000);  // wraps at 4 GiB as linear addresses do
  x.set_eip(0x2000);
  EXPECT_EQ(StartPc(s), 0x1000u);
}

TEST(StartPc, IsZeroWithoutACpu) { EXPECT_EQ(StartPc(InitialMachineState()), 0u); }

TEST(MachineName, NamesEveryMachineOfTheSchemaAndReadsItBack) {
  EXPECT_EQ(MachineName(MACHINE_R4400), "r4400");
  EXPECT_EQ(MachineName(MACHINE_I486), "i486");
  EXPECT_EQ(MachineName(MACHINE_UNSPECIFIED), "");
  EXPECT_EQ(MachineName(static_cast<Machine>(77)), "");
  for (int m = Machine_MIN; m <= Machine_MAX; ++m) {
    if (!Machine_IsValid(m) || m == MACHINE_UNSPECIFIED) continue;
    EXPECT_EQ(MachineFromName(MachineName(static_cast<Machine>(m))), static_cast<Machine>(m));
  }
  for (const char* other : {"", "unspecified", "R4400", "MACHINE_R4400", "vax", "r4400 "}) {
    EXPECT_EQ(MachineFromName(other), std::nullopt) << other;
  }
}

}  // namespace
}  // namespace citcat::ims
