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
#include "tests/simcore/x86_rom_lockstep.h"

namespace citcat::x86 {
namespace {

using testing::OracleState;

uint32_t Hex(absl::string_view s) {
  uint32_t v = 0;
  EXPECT_TRUE(absl::SimpleHexAtoi(s, &v)) << s;
  return v;
}

// "NAME=value" fields of a line.
void Fields(absl::string_view line, OracleState& s) {
  static constexpr const char* kGpr[8] = {"EAX", "ECX", "EDX", "EBX", "ESP", "EBP", "ESI", "EDI"};
  static constexpr const char* kSeg[8] = {
      "ES =", "CS =", "SS =", "DS =", "FS =", "GS =", "LDT=", "TR ="};
  for (int i = 0; i < 8; ++i) {
    // "CS =f000 ffff0000 0000ffff 00009b00"
    if (absl::StartsWith(line, kSeg[i])) {
      std::vector<absl::string_view> parts = absl::StrSplit(line.substr(4), ' ');
      if (parts.size() >= 2) {
        s.selector[i] = static_cast<uint16_t>(Hex(parts[0]));
        s.base[i] = Hex(parts[1]);
      }
      return;
    }
  }
  for (absl::string_view field : absl::StrSplit(line, ' ', absl::SkipEmpty())) {
    const size_t eq = field.find('=');
    if (eq == absl::string_view::npos) continue;
    const absl::string_view name = field.substr(0, eq), value = field.substr(eq + 1);
    for (int r = 0; r < 8; ++r) {
      if (name == kGpr[r]) s.gpr[r] = Hex(value);
    }
    if (name == "EIP") s.eip = Hex(value);
    if (name == "EFL") s.eflags = Hex(value);
    if (name == "CPL") s.cpl = static_cast<int>(Hex(value));
    if (name == "CR0") s.cr0 = Hex(value);
    if (name == "CR2") s.cr2 = Hex(value);
    if (name == "CR3") s.cr3 = Hex(value);
    if (name == "DR6") s.dr6 = Hex(value);
    if (name == "DR7") s.dr7 = Hex(value);
  }
}

// Runs the ROM under QEMU and returns the states of the instructions it ran, in order.
std::vector<OracleState> RunQemu(const std::string& rom) {
  const std::string dir = ::testing::TempDir() + "/x86-qemu-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::string log = dir + "/log";
  const std::string command = absl::StrCat(
      CITCAT_QEMU_I386, " -M isapc -cpu 486 -m 16 -bios ", rom,
      " -display none -monitor none -serial none -nodefaults",
      " -device isa-debug-exit,iobase=0xf4,iosize=4 -icount shift=0,sleep=off -singlestep",
      " -d cpu,exec,nochain -D ", log, " >/dev/null 2>&1");
  std::system(command.c_str());  // exits through the debug port with a non-zero status
  std::ifstream in(log);
  std::vector<OracleState> states;
  std::vector<bool> dropped;
  std::string line;
  while (std::getline(in, line)) {
    if (absl::StartsWith(line, "Trace ")) {
      states.emplace_back().has_system = true;
      dropped.push_back(false);
    } else if (absl::StartsWith(line, "Stopped execution of TB chain before") && !states.empty()) {
      dropped.back() = true;  // that record's instruction did not run
    } else if (!states.empty()) {
      Fields(line, states.back());
    }
  }
  std::filesystem::remove_all(dir);
  std::vector<OracleState> ran;
  for (size_t i = 0; i < states.size(); ++i) {
    if (!dropped[i]) ran.push_back(states[i]);
  }
  return ran;
}

using testing::Lockstep;

Lockstep RunLockstep(const std::string& name) {
  const std::string base = std::string(CITCAT_X86_ROMS) + "/" + name;
  testing::LockstepOptions options;
  options.oracle = "QEMU";
  options.rom_writable = true;  // isapc backs its firmware with RAM
  return testing::RunLockstep(base + ".elf", RunQemu(base + ".bin"), options);
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
