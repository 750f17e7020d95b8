// The i486 core against Bochs (tests/oracles/bochs.h), a third model written independently of
// QEMU and Unicorn, on the bare-metal ROMs of tests/simcore/x86_roms/, from the reset vector: at
// every instruction the EIP, the general registers, the flags (those the last instruction left
// undefined aside) and CS; where the ROM stops, every segment register's selector and base, LDTR,
// TR, the descriptor tables' bases, CR0, CR2, CR3 and the first 640 KiB of memory (page tables
// with their accessed and dirty bits, TSSs, every stack frame pushed).
//
// The ROMs that show where QEMU 7.2 is not an i486 (quirk_*.S, x86_qemu_lockstep_test.cc) run
// here to the end: Bochs agrees with the core, which follows the Intel486 manual, in each.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "tests/simcore/x86_bochs_system.h"
#include "tests/simcore/x86_rom_lockstep.h"

namespace citcat::x86 {
namespace {

using testing::Lockstep;
using testing::OracleState;
using testing::PcBus;

constexpr uint32_t kCompared = 640 << 10;  // memory compared at the end, from 0

// The core against Bochs over the ROM `name`, and then their state where it stopped: *at_end says
// how that differs ("" if not).
Lockstep RunBochsLockstep(const std::string& name, std::string* at_end_difference) {
  const std::string base = std::string(CITCAT_X86_ROMS) + "/" + name;
  oracle::BochsOptions options;
  options.rom = base + ".bin";
  options.work_dir = absl::StrCat(::testing::TempDir(), "/x86-bochs-", name, "-", getpid());
  options.trace = true;
  options.dumps = {{0, kCompared}};
  absl::StatusOr<oracle::BochsRun> bochs = oracle::RunBochs(options);
  Lockstep failed;
  if (!bochs.ok()) {
    failed.error = std::string(bochs.status().message());
    return failed;
  }
  if (!bochs->stopped) {
    failed.error =
        absl::StrCat("Bochs never reached the ROM's end (", bochs->states.size(), " instructions)");
    return failed;
  }
  std::string at_end;
  testing::LockstepOptions lockstep;
  lockstep.oracle = "Bochs";
  lockstep.run_last = true;
  lockstep.at_end = [&](Cpu& cpu, PcBus& bus) {
    const auto check = [&](const std::string& what, uint32_t ours, uint32_t theirs) {
      if (at_end.empty() && ours != theirs) {
        at_end = absl::StrFormat("%s: at the end, %s is %#x, Bochs %#x", name, what, ours, theirs);
      }
    };
    static constexpr const char* kSeg[6] = {"ES", "CS", "SS", "DS", "FS", "GS"};
    const bool protected_mode = (cpu.cr0() & 1) && !(cpu.eflags() & flag::kVM);
    for (int s = 0; s < 6; ++s) {
      check(absl::StrCat(kSeg[s], " selector"), cpu.segment(s).selector,
            bochs->segment[s].selector);
      // A null selector's descriptor is not visible: any access through it faults.
      if (protected_mode && (cpu.segment(s).selector & ~3u) == 0) continue;
      check(absl::StrCat(kSeg[s], " base"), cpu.segment(s).base, bochs->segment[s].base);
    }
    check("LDTR selector", cpu.ldtr().selector, bochs->segment[6].selector);
    check("TR selector", cpu.tr().selector, bochs->segment[7].selector);
    check("TR base", cpu.tr().base, bochs->segment[7].base);
    check("GDTR base", cpu.gdtr().base, bochs->gdtr_base);
    check("IDTR base", cpu.idtr().base, bochs->idtr_base);
    check("CR0", cpu.cr0(), bochs->cr0);
    check("CR2", cpu.cr2(), bochs->cr2);
    check("CR3", cpu.cr3(), bochs->cr3);
    const std::vector<uint8_t>& memory = bochs->dumps[0];
    check("the memory dump's size", kCompared, static_cast<uint32_t>(memory.size()));
    if (at_end.empty()) {
      if (std::string d = testing::FirstMemoryDifference(bus, 0, memory); !d.empty()) {
        at_end = absl::StrCat(name, ": at the end, ", d);
      }
    }
  };
  const Lockstep run = testing::RunLockstep(base + ".elf", testing::BochsStates(*bochs), lockstep);
  *at_end_difference = at_end;
  return run;
}

// The first difference between the core and Bochs over the ROM and at its end, or "".
std::string Compare(const std::string& name, size_t* compared) {
  std::string at_end;
  const Lockstep run = RunBochsLockstep(name, &at_end);
  *compared = run.compared;
  if (std::string d = testing::Describe(name, run); !d.empty()) return d;
  return at_end;
}

class X86BochsLockstep : public ::testing::TestWithParam<const char*> {};

TEST_P(X86BochsLockstep, EveryInstructionAndTheEndStateAgree) {
  if (oracle::FindBochs().empty()) GTEST_SKIP() << "bochs and vgabios are not installed";
  size_t compared = 0;
  EXPECT_EQ(Compare(GetParam(), &compared), "");
  EXPECT_GT(compared, 20u);
  std::printf("COMPARED Bochs ROM %s: %zu instructions (from RESET)\n", GetParam(), compared);
}

INSTANTIATE_TEST_SUITE_P(Roms, X86BochsLockstep,
                         ::testing::Values("protected", "rings", "tasks", "v86", "quirk_tss_trap",
                                           "quirk_task_fault_eip", "quirk_task_ss_np",
                                           "quirk_task_conforming_cs", "quirk_v86_ring1",
                                           "quirk_iret_vm_cpl3", "stack_real"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

// Where Bochs 2.7 is not an i486, as QEMU is not: the first difference is the one the manual
// predicts. An IRET to V86 mode with EIP 10005h: the IRET pseudo-code (RETURN-TO-VIRTUAL-8086-MODE)
// loads EIP whole and checks it against the code segment's limit, #GP(0); Bochs, like QEMU, keeps
// the low 16 bits and runs IP 5.
TEST(X86BochsLockstep, BochsTruncatesTheEipOfAnIretToV86Mode) {
  if (oracle::FindBochs().empty()) GTEST_SKIP() << "bochs and vgabios are not installed";
  std::string at_end;
  const Lockstep run = RunBochsLockstep("quirk_v86_iret_eip", &at_end);
  EXPECT_EQ(testing::FirstDifferenceIs(run, "Bochs", "EIP", "gp_handler", "0x5"), "");
}

// A general-detect #DB is a fault, and Intel SDM vol. 3 (17.3.1.1, for every IA-32 processor)
// has every fault but an instruction breakpoint's #DB save RF set; Bochs saves it clear for every
// #DB. The two agree at every instruction; the EFLAGS image pushed differs in RF alone.
TEST(X86BochsLockstep, BochsSavesRfClearForAGeneralDetectFault) {
  if (oracle::FindBochs().empty()) GTEST_SKIP() << "bochs and vgabios are not installed";
  std::string at_end;
  const Lockstep run = RunBochsLockstep("quirk_gd", &at_end);
  EXPECT_EQ(testing::Describe("quirk_gd", run), "");
  EXPECT_EQ(at_end, "quirk_gd: at the end, the dword at 8fffc is 0x10046, Bochs 0x46");
}

// An interrupt frame that does not fit (frames.S): the Intel486 manual's INT pseudo-code checks
// that the stack has room for the whole frame before it pushes anything ("IF current stack does
// not have room ... THEN #SS(0)", the same for the TSS's stack of a more privileged ring, with its
// selector); Bochs writes the frame value by value and faults at the first that does not fit,
// leaving the ones before it below the stack. The two agree at every instruction, error codes (EXT
// included) and the ESPs the old TSS saved among them; the first difference in memory is the CS
// of the same-level frame of step 1.
TEST(X86BochsLockstep, BochsWritesTheFirstValuesOfAFrameThatDoesNotFit) {
  if (oracle::FindBochs().empty()) GTEST_SKIP() << "bochs and vgabios are not installed";
  std::string at_end;
  const Lockstep run = RunBochsLockstep("frames", &at_end);
  EXPECT_EQ(testing::Describe("frames", run), "");
  EXPECT_GT(run.compared, 250u);
  EXPECT_EQ(at_end, "frames: at the end, the dword at 60000 is 0x5a5a5a5a, Bochs 0x8");
  std::printf("COMPARED Bochs ROM frames: %zu instructions (from RESET)\n", run.compared);
}

}  // namespace
}  // namespace citcat::x86
