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
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "machine/elf_loader.h"
#include "simcore/x86/cpu.h"
#include "tests/simcore/pc_bus.h"

namespace citcat::x86 {
namespace {

// One record of QEMU's -d cpu log: the state before an instruction.
struct QemuState {
  uint32_t gpr[8] = {};
  uint32_t eip = 0, eflags = 0, cr0 = 0, cr2 = 0, cr3 = 0, dr6 = 0, dr7 = 0;
  int cpl = 0;
  uint16_t selector[8] = {};  // ES, CS, SS, DS, FS, GS, LDTR, TR
  uint32_t base[8] = {};
};

uint32_t Hex(absl::string_view s) {
  uint32_t v = 0;
  EXPECT_TRUE(absl::SimpleHexAtoi(s, &v)) << s;
  return v;
}

// "NAME=value" fields of a line.
void Fields(absl::string_view line, QemuState& s) {
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
std::vector<QemuState> RunQemu(const std::string& rom) {
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
  std::vector<QemuState> states;
  std::vector<bool> dropped;
  std::string line;
  while (std::getline(in, line)) {
    if (absl::StartsWith(line, "Trace ")) {
      states.emplace_back();
      dropped.push_back(false);
    } else if (absl::StartsWith(line, "Stopped execution of TB chain before") && !states.empty()) {
      dropped.back() = true;  // that record's instruction did not run
    } else if (!states.empty()) {
      Fields(line, states.back());
    }
  }
  std::filesystem::remove_all(dir);
  std::vector<QemuState> ran;
  for (size_t i = 0; i < states.size(); ++i) {
    if (!dropped[i]) ran.push_back(states[i]);
  }
  return ran;
}

using testing::PcBus;

// The core against QEMU over the whole run of a ROM, up to the first difference.
struct Lockstep {
  std::string error;       // the run could not be compared: QEMU ran nothing, the core stopped
  size_t compared = 0;     // instructions before which both agreed
  std::string difference;  // "EIP is 0x..., QEMU 0x..." before the first one they do not; or ""
  size_t index = 0;        // that instruction's place in QEMU's log
  uint32_t eip = 0;        // and QEMU's CS:EIP before it
  uint16_t cs = 0;
  std::map<std::string, uint32_t> symbols;  // the ROM's labels
};

Lockstep RunLockstep(const std::string& name) {
  Lockstep run;
  const std::string base = std::string(CITCAT_X86_ROMS) + "/" + name;
  const std::vector<QemuState> qemu = RunQemu(base + ".bin");
  if (qemu.size() < 10) {
    run.error = absl::StrCat("QEMU ran ", qemu.size(), " instructions");
    return run;
  }
  absl::StatusOr<machine::ElfImage> elf = machine::LoadElfFile(base + ".elf");
  if (!elf.ok()) {
    run.error = std::string(elf.status().message());
    return run;
  }
  PcBus bus;
  for (const machine::ElfSegment& s : elf->segments) {
    bus.Poke(static_cast<uint32_t>(s.vaddr), s.data);
  }
  for (const machine::ElfSymbol& s : elf->symbols) {
    run.symbols[s.name] = static_cast<uint32_t>(s.value);
  }
  Cpu cpu(bus);
  cpu.set_deliver_interrupts(true);
  // QEMU's 486 identifies itself as family 4 model 8 in EDX at RESET; the core's i486DX does not.
  cpu.set_reg(kEdx, qemu[0].gpr[kEdx]);
  // Flags an instruction left undefined stay out of the comparison until one defines them again.
  uint32_t undefined = 0;
  for (size_t i = 0; i < qemu.size(); ++i) {
    const QemuState& q = qemu[i];
    std::string diff;
    const auto check = [&](const char* what, uint32_t ours, uint32_t theirs) {
      if (diff.empty() && ours != theirs) {
        diff = absl::StrFormat("%s is %#x, QEMU %#x", what, ours, theirs);
      }
    };
    check("EIP", cpu.eip(), q.eip);
    static constexpr const char* kGpr[8] = {"EAX", "ECX", "EDX", "EBX", "ESP", "EBP", "ESI", "EDI"};
    for (int r = 0; r < 8; ++r) check(kGpr[r], cpu.reg(r), q.gpr[r]);
    check("EFLAGS", cpu.eflags() & ~undefined, q.eflags & ~undefined);
    check("CPL", cpu.cpl(), q.cpl);
    static constexpr const char* kSeg[6] = {"ES", "CS", "SS", "DS", "FS", "GS"};
    for (int s = 0; s < 6; ++s) {
      check(absl::StrCat(kSeg[s], " selector").c_str(), cpu.segment(s).selector, q.selector[s]);
      check(absl::StrCat(kSeg[s], " base").c_str(), cpu.segment(s).base, q.base[s]);
    }
    check("LDTR selector", cpu.ldtr().selector, q.selector[6]);
    check("LDTR base", cpu.ldtr().base, q.base[6]);
    check("TR selector", cpu.tr().selector, q.selector[7]);
    check("TR base", cpu.tr().base, q.base[7]);
    check("CR0", cpu.cr0(), q.cr0);
    check("CR2", cpu.cr2(), q.cr2);
    check("CR3", cpu.cr3(), q.cr3);
    check("DR6", cpu.dr6(), q.dr6);
    check("DR7", cpu.dr7(), q.dr7);
    if (!diff.empty()) {
      run.difference = diff;
      run.index = i;
      run.eip = q.eip;
      run.cs = q.selector[kCs];
      return run;
    }
    ++run.compared;
    if (i + 1 == qemu.size()) break;
    const uint32_t linear = cpu.segment(kCs).base + cpu.eip();
    const Instruction in = Decode(bus.Bytes(linear), kMaxInstructionLength, cpu.segment(kCs).big);
    undefined = (undefined & ~(FlagsWritten(in) & ~FlagsUndefined(in))) | FlagsUndefined(in);
    cpu.Run(1);
    if (cpu.exception().pending) {
      run.error =
          absl::StrFormat("instruction %d at %08x stopped the core (vector %d%s)", i, q.eip,
                          cpu.exception().vector, cpu.exception().unmodelled ? ", unmodelled" : "");
      return run;
    }
  }
  return run;
}

// The first difference between the core and QEMU over the whole run of `name`, or "".
std::string Compare(const std::string& name, size_t* compared) {
  const Lockstep run = RunLockstep(name);
  *compared = run.compared;
  if (!run.error.empty()) return absl::StrCat(name, ": ", run.error);
  if (run.difference.empty()) return "";
  return absl::StrFormat("%s: before instruction %d at %04x:%08x: %s", name, run.index, run.cs,
                         run.eip, run.difference);
}

// A quirk ROM shows one way QEMU is not an i486: the core and QEMU agree up to an instruction
// after which register `what` holds `ours` on the core and `theirs` under QEMU, and that is the
// first difference. The values are labels of the ROM or numbers ("0x...").
void ExpectFirstDifference(const std::string& name, const std::string& what,
                           const std::string& ours, const std::string& theirs) {
  const Lockstep run = RunLockstep(name);
  ASSERT_EQ(run.error, "");
  const auto value = [&](const std::string& v) -> uint32_t {
    if (absl::StartsWith(v, "0x")) return Hex(v.substr(2));
    EXPECT_TRUE(run.symbols.count(v)) << v;
    return run.symbols.count(v) ? run.symbols.at(v) : 0;
  };
  EXPECT_EQ(run.difference,
            absl::StrFormat("%s is %#x, QEMU %#x", what, value(ours), value(theirs)));
  EXPECT_GT(run.compared, 20u);
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
