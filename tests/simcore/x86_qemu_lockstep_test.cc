// The i486 core against full-system QEMU (qemu-system-i386 -M isapc -cpu 486) on the bare-metal
// ROMs of tests/simcore/x86_roms/, from the reset vector, at every instruction: QEMU logs the
// state before each instruction it runs (-d cpu with -singlestep and -icount for a deterministic
// run), and the core, run one step at a time from RESET on the same ROM, must show the same EIP,
// general registers, flags (those the last instruction left undefined aside), CPL, segment
// selectors and bases, the LDTR and TR selectors and bases, CR0, CR2, CR3, DR6 and DR7. This
// reaches what Unicorn cannot: mode switches, paging, page faults, gates, privilege changes and
// their stacks, task switches, V86 mode. See ../shared/ORACLES.md for the command and what QEMU's
// log shows.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/simcore/x86_qemu_system.h"
#include "tests/simcore/x86_rom_lockstep.h"

namespace citcat::x86 {
namespace {

using testing::OracleState;

using testing::Lockstep;

Lockstep RunLockstep(const std::string& name) {
  const std::string base = std::string(CITCAT_X86_ROMS) + "/" + name;
  testing::LockstepOptions options;
  options.oracle = "QEMU";
  options.rom_writable = true;  // isapc backs its firmware with RAM
  return testing::RunLockstep(
      base + ".elf", testing::RunQemuSystem(CITCAT_QEMU_I386, base + ".bin", ::testing::TempDir()),
      options);
}

// The first difference between the core and QEMU over the whole run of `name`, or "".
std::string Compare(const std::string& name, size_t* compared) {
  const Lockstep run = RunLockstep(name);
  *compared = run.compared;
  return testing::Describe(name, run);
}

// A quirk ROM shows one way QEMU is not an i486: the core and QEMU agree up to an instruction
// after which register `what` holds `ours` on the core and `theirs` under QEMU, and that is the
// first difference. The values are labels of the ROM or numbers ("0x...").
void ExpectFirstDifference(const std::string& name, const std::string& what,
                           const std::string& ours, const std::string& theirs) {
  EXPECT_EQ(testing::FirstDifferenceIs(RunLockstep(name), "QEMU", what, ours, theirs), "");
}

TEST(X86QemuLockstep, ProtectedModePagingAndAPageFault) {
  size_t compared = 0;
  EXPECT_EQ(Compare("protected", &compared), "");
  EXPECT_GT(compared, 4000u);
  std::printf("COMPARED QEMU-system ROM protected: %zu instructions (from RESET)\n", compared);
}

TEST(X86QemuLockstep, RingsTheTssStackAndAGeneralProtectionFault) {
  size_t compared = 0;
  EXPECT_EQ(Compare("rings", &compared), "");
  EXPECT_GT(compared, 30u);
  std::printf("COMPARED QEMU-system ROM rings: %zu instructions (from RESET)\n", compared);
}

TEST(X86QemuLockstep, TaskSwitches) {
  size_t compared = 0;
  EXPECT_EQ(Compare("tasks", &compared), "");
  EXPECT_GT(compared, 1000u);
  std::printf("%zu instructions compared\n", compared);
}

TEST(X86QemuLockstep, Virtual8086Mode) {
  size_t compared = 0;
  EXPECT_EQ(Compare("v86", &compared), "");
  EXPECT_GT(compared, 300u);
  std::printf("%zu instructions compared\n", compared);
}

// Where QEMU 7.2 is not an i486, each shown by a ROM whose first difference is that one.

TEST(X86QemuLockstep, QemuIgnoresDr7GeneralDetect) {
  ExpectFirstDifference("quirk_gd", "EIP", "db_handler", "qemu_ran_it");
}

TEST(X86QemuLockstep, QemuIgnoresTheTssTrapBit) {
  ExpectFirstDifference("quirk_tss_trap", "EIP", "db_handler", "task_b");
}

TEST(X86QemuLockstep, QemuReportsAFaultInTheNewTaskAtTheJmp) {
  ExpectFirstDifference("quirk_task_fault_eip", "EBX", "task_b", "jmp_to_b");
}

TEST(X86QemuLockstep, QemuRaisesNpNotSsForTheNewTasksStack) {
  ExpectFirstDifference("quirk_task_ss_np", "EIP", "task_s", "task_n");
}

TEST(X86QemuLockstep, QemuRejectsAConformingCsBelowTheNewCpl) {
  ExpectFirstDifference("quirk_task_conforming_cs", "EIP", "task_b", "task_t");
}

TEST(X86QemuLockstep, QemuEntersANonZeroRingFromV86Mode) {
  ExpectFirstDifference("quirk_v86_ring1", "EIP", "gp_handler", "ring1_handler");
}

TEST(X86QemuLockstep, QemuEntersV86ModeByIretAtCpl3) {
  ExpectFirstDifference("quirk_iret_vm_cpl3", "EIP", "back", "back_in_v86");
}

TEST(X86QemuLockstep, QemuTruncatesTheEipOfAnIretToV86Mode) {
  ExpectFirstDifference("quirk_v86_iret_eip", "EIP", "gp_handler", "0x5");
}

}  // namespace
}  // namespace citcat::x86
