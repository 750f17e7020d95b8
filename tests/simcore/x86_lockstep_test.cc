// The i486 core against Unicorn (QEMU's x86 model) in lock step (x86_unicorn_lockstep.h), on
// seeded random streams over the integer instruction classes, with and without an operand-size
// prefix, in flat 32-bit code and in real mode. Each stream runs several passes over itself; a
// fault (#DE, or an INTO trap) must be raised by both, and a fault ends the stream. Also here:
// the Unicorn deviations the lock step works around, each shown on its own, and a check that the
// lock step reports each kind of difference.
#include <unicorn/unicorn.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "simcore/ram_bus.h"
#include "simcore/x86/cpu.h"
#include "tests/simcore/x86_random_stream.h"
#include "tests/simcore/x86_unicorn_lockstep.h"

namespace citcat::x86 {
namespace {

constexpr uint32_t kRam = 0x40000;
constexpr uint32_t kCode = 0x1000;
constexpr uint32_t kCompared = flag::kOSZAPC | flag::kDF;
constexpr int kDoubleFault = 8;
using testing::kCounter;
using testing::kData;
using testing::kDataBytes;
using testing::kLoops;
using testing::kRealDs;
using testing::kRealSs;
using testing::kStackTop;

// Runs one stream on both in lock step (tests/simcore/x86_unicorn_lockstep.h); returns the
// first difference ("" if none) and counts the instructions compared. Real-mode layout: code at
// CS = 0, the data at DS = ES = FS = GS = kData / 16 with DI = 0, the stack at
// SS = kStackTop / 16 - 0x1000, SP = 0xFFF0. A fault both raise ends the stream.
struct Tally {
  uint64_t compared = 0;
  uint32_t faults = 0;
};

std::string RunStream(uint32_t seed, int length, bool code16, Tally* tally) {
  const std::vector<uint8_t> code = testing::LoopedStream(seed, length, code16);
  std::mt19937 rng(seed * 7919 + 1);

  using testing::UnicornLockstep;
  UnicornLockstep lockstep(code16 ? UnicornLockstep::Mode::kReal16 : UnicornLockstep::Mode::kFlat32,
                           kRam);
  if (code16) lockstep.SetRealSegments(0, kRealDs, kRealSs);
  std::vector<uint8_t> data(kDataBytes);
  for (uint8_t& b : data) b = static_cast<uint8_t>(rng());
  lockstep.Load(kCode, code);
  lockstep.Load(kData, data);
  lockstep.Load(kCounter, std::vector<uint8_t>{kLoops, 0, 0, 0});
  for (int r = 0; r < 8; ++r) {
    const uint32_t stack = code16 ? 0xFFF0 : kStackTop, data_base = code16 ? 0 : kData;
    const uint32_t v = r == kEsp ? stack : r == kEdi ? data_base : static_cast<uint32_t>(rng());
    lockstep.SetReg(r, v);
  }
  lockstep.SetEflags((rng() & flag::kOSZAPC) | 2);
  const UnicornLockstep::Result result =
      lockstep.Run(kCode, kCode + static_cast<uint32_t>(code.size()), ~uint64_t{0});
  tally->compared += result.compared;
  tally->faults += result.fault >= 0;
  return result.mismatch.empty() ? "" : absl::StrFormat("seed %d: %s", seed, result.mismatch);
}

// Unicorn with RAM at 0, recording the vectors UC_HOOK_INTR reports, for the tests that show
// its deviations on their own.
struct Unicorn {
  explicit Unicorn(uc_mode mode = UC_MODE_32) {
    EXPECT_EQ(uc_open(UC_ARCH_X86, mode, &uc), UC_ERR_OK);
    EXPECT_EQ(uc_mem_map(uc, 0, kRam, UC_PROT_ALL), UC_ERR_OK);
    uc_hook hook;
    uc_hook_add(uc, &hook, UC_HOOK_INTR, reinterpret_cast<void*>(&OnInterrupt), this, 1, 0);
  }
  ~Unicorn() { uc_close(uc); }
  static void OnInterrupt(uc_engine* engine, uint32_t number, void* self) {
    static_cast<Unicorn*>(self)->interrupt = static_cast<int>(number);
    uc_emu_stop(engine);
  }
  uint32_t Reg(uc_x86_reg r) const {
    uint32_t v = 0;
    uc_reg_read(uc, r, &v);
    return v;
  }
  void SetReg(uc_x86_reg r, uint32_t v) { uc_reg_write(uc, r, &v); }

  uc_engine* uc = nullptr;
  int interrupt = -1;
};

// The Unicorn defect the lock step works around, shown on its own: it never delivers a fault, so
// after one, every later fault comes back to the interrupt hook as a double fault.
TEST(X86Lockstep, UnicornReportsTheSecondFaultAsADoubleFault) {
  Unicorn u;
  const uint8_t div_ecx[] = {0xF7, 0xF1};  // DIV ECX with ECX = 0
  uc_mem_write(u.uc, kCode, div_ecx, sizeof div_ecx);
  u.SetReg(UC_X86_REG_ECX, 0);
  u.SetReg(UC_X86_REG_ESP, kStackTop);
  uc_emu_start(u.uc, kCode, 0xFFFFFFFF, 0, 1);
  EXPECT_EQ(u.interrupt, kVecDivide);
  u.interrupt = -1;
  uc_emu_start(u.uc, kCode, 0xFFFFFFFF, 0, 1);
  EXPECT_EQ(u.interrupt, kDoubleFault);

  simcore::RamBus bus(kRam);
  Cpu cpu(bus);
  cpu.SetFlat32();
  bus.Poke(kCode, div_ecx);
  cpu.set_eip(kCode);
  cpu.Run(1);
  EXPECT_TRUE(cpu.exception().pending);
  EXPECT_EQ(cpu.exception().vector, kVecDivide);
  EXPECT_EQ(cpu.eip(), kCode);  // the fault is restartable: nothing retired
  EXPECT_EQ(cpu.retired(), 0u);
}

// EFLAGS written from a code hook are lost when an earlier instruction of the same translation
// block set the flags: the lock step copies undefined flags to Unicorn between two runs instead.
TEST(X86Lockstep, UnicornLosesFlagsWrittenFromACodeHook) {
  Unicorn u;
  // ADD EAX, EAX (sets CF with EAX = 80000000h); ADC EBX, 0; HLT.
  const uint8_t code[] = {0x01, 0xC0, 0x83, 0xD3, 0x00, 0xF4};
  uc_mem_write(u.uc, kCode, code, sizeof code);
  u.SetReg(UC_X86_REG_EAX, 0x80000000u);
  u.SetReg(UC_X86_REG_EBX, 0);
  uc_hook hook;
  const auto clear_cf = +[](uc_engine* uc, uint64_t address, uint32_t, void*) {
    if (address != kCode + 2) return;
    uint32_t flags = 0;
    uc_reg_read(uc, UC_X86_REG_EFLAGS, &flags);
    flags &= ~flag::kCF;
    uc_reg_write(uc, UC_X86_REG_EFLAGS, &flags);
  };
  uc_hook_add(u.uc, &hook, UC_HOOK_CODE, reinterpret_cast<void*>(clear_cf), nullptr, 1, 0);
  uc_emu_start(u.uc, kCode, 0xFFFFFFFF, 0, 0);
  EXPECT_EQ(u.Reg(UC_X86_REG_EBX), 1u);  // the ADC still saw CF set
}

// After the iteration that leaves ECX zero, QEMU runs a REP string instruction once more (to see
// the zero count): the code hook sees it twice with ECX = 0 at the end, where the core has gone on.
TEST(X86Lockstep, UnicornVisitsAFinishedRepOnceMore) {
  Unicorn u;
  const uint8_t code[] = {0xF3, 0xAA, 0xF4};  // REP STOSB; HLT
  uc_mem_write(u.uc, kCode, code, sizeof code);
  u.SetReg(UC_X86_REG_ECX, 2);
  u.SetReg(UC_X86_REG_EDI, kData);
  std::vector<uint32_t> counts;
  uc_hook hook;
  const auto record = +[](uc_engine* uc, uint64_t address, uint32_t, void* out) {
    uint32_t ecx = 0;
    uc_reg_read(uc, UC_X86_REG_ECX, &ecx);
    if (address == kCode) static_cast<std::vector<uint32_t>*>(out)->push_back(ecx);
  };
  uc_hook_add(u.uc, &hook, UC_HOOK_CODE, reinterpret_cast<void*>(record), &counts, 1, 0);
  uc_emu_start(u.uc, kCode, 0xFFFFFFFF, 0, 0);
  EXPECT_EQ(counts, (std::vector<uint32_t>{2, 1, 0}));  // two iterations, three visits
}

// With a UC_HOOK_MEM_WRITE hook installed, Unicorn computes some instructions wrongly: ENTER
// with a nesting level of 2 or more stores some other value where it copies the outer frame
// pointer from [EBP - 4], and SHRD on memory sets the wrong flags. The lock step has no memory
// hook (it compares the core's writes with Unicorn's RAM instead).
TEST(X86Lockstep, UnicornsMemoryWriteHookBreaksSomeInstructions) {
  const uint32_t ebp = kStackTop - 0x100, outer = 0x11223344, dest = 0x00400000;
  // ENTER 0Bh, 2; SHRD [EDI], ECX, 23 (CF = bit 22 of the destination: 1); HLT
  const uint8_t code[] = {0xC8, 0x0B, 0x00, 0x02, 0x0F, 0xAC, 0x0F, 0x17, 0xF4};
  const auto run = [&](bool write_hook, uint32_t* copied, uint32_t* flags) {
    Unicorn u;
    uc_mem_write(u.uc, kCode, code, sizeof code);
    uc_mem_write(u.uc, ebp - 4, &outer, 4);
    uc_mem_write(u.uc, kData, &dest, 4);
    u.SetReg(UC_X86_REG_ESP, kStackTop);
    u.SetReg(UC_X86_REG_EBP, ebp);
    u.SetReg(UC_X86_REG_EDI, kData);
    u.SetReg(UC_X86_REG_ECX, 0x12345678);
    uc_hook hook;
    const auto on_write =
        +[](uc_engine*, uc_mem_type, uint64_t, int, int64_t, void*) { return true; };
    if (write_hook) {
      uc_hook_add(u.uc, &hook, UC_HOOK_MEM_WRITE, reinterpret_cast<void*>(on_write), nullptr, 1, 0);
    }
    uc_emu_start(u.uc, kCode, 0xFFFFFFFF, 0, 0);
    uc_mem_read(u.uc, kStackTop - 8, copied, 4);
    *flags = u.Reg(UC_X86_REG_EFLAGS);
  };
  uint32_t copied = 0, flags = 0;
  run(false, &copied, &flags);
  EXPECT_EQ(copied, outer);
  EXPECT_EQ(flags & flag::kCF, flag::kCF);
  run(true, &copied, &flags);
  EXPECT_NE(copied, outer);
  EXPECT_EQ(flags & flag::kCF, 0u);
}

// Unicorn 2.0.1's x87 (QEMU 5.0's) keeps no exception flags: 1 / 3 leaves PE clear, where the
// core (and QEMU 7.2 user mode) set it. The lock step compares the x87 status word's TOP and
// condition codes only.
TEST(X86Lockstep, UnicornKeepsNoX87ExceptionFlags) {
  // FNINIT; FLD1; FIDIV word [EDI] (3); FNSTSW AX; HLT
  const uint8_t code[] = {0xDB, 0xE3, 0xD9, 0xE8, 0xDE, 0x37, 0xDF, 0xE0, 0xF4};
  const uint16_t three = 3;
  Unicorn u;
  uc_mem_write(u.uc, kCode, code, sizeof code);
  uc_mem_write(u.uc, kData, &three, 2);
  u.SetReg(UC_X86_REG_EDI, kData);
  uc_emu_start(u.uc, kCode, 0xFFFFFFFF, 0, 0);
  EXPECT_EQ(u.Reg(UC_X86_REG_EAX) & 0x3F, 0u);

  simcore::RamBus bus(kRam);
  Cpu cpu(bus);
  cpu.SetFlat32();
  bus.Poke(kCode, std::vector<uint8_t>(code, code + sizeof code));
  bus.Poke(kData, std::vector<uint8_t>{3, 0});
  cpu.set_reg(kEdi, kData);
  cpu.set_eip(kCode);
  cpu.Run(4);
  EXPECT_EQ(cpu.reg(kEax) & 0x3F, kExPrecision);
}

// Unicorn runs LOCK XOR CL, CL; the i486 raises #UD for LOCK without a memory destination. The
// random streams lock memory destinations only.
TEST(X86Lockstep, UnicornAcceptsLockOnARegister) {
  const uint8_t code[] = {0xF0, 0x30, 0xC9, 0xF4};  // LOCK XOR CL, CL; HLT
  Unicorn u;
  uc_mem_write(u.uc, kCode, code, sizeof code);
  EXPECT_EQ(uc_emu_start(u.uc, kCode, 0xFFFFFFFF, 0, 0), UC_ERR_OK);
  EXPECT_EQ(u.interrupt, -1);
  EXPECT_EQ(u.Reg(UC_X86_REG_EIP), kCode + 4);

  simcore::RamBus bus(kRam);
  Cpu cpu(bus);
  cpu.SetFlat32();
  bus.Poke(kCode, std::vector<uint8_t>(code, code + sizeof code));
  cpu.set_eip(kCode);
  cpu.Run(1);
  EXPECT_TRUE(cpu.exception().pending);
  EXPECT_EQ(cpu.exception().vector, kVecInvalidOpcode);
}

// Unicorn checks neither segment rights nor limits: it writes through CS in protected mode and
// reads past a real-mode segment's 64 KB limit, where the i486 raises #GP(0). The random streams
// take no CS override in flat code and no negative displacement with 32-bit addresses in real
// mode.
TEST(X86Lockstep, UnicornChecksNoSegmentRightsOrLimits) {
  // MOV BYTE CS:[kData], 1 in flat code; MOV AL, [dword 10000h] in real mode.
  const std::vector<uint8_t> flat = {0x2E, 0xC6, 0x05, 0x00, 0x00, 0x02, 0x00, 0x01, 0xF4};
  const std::vector<uint8_t> real = {0x67, 0xA0, 0x00, 0x00, 0x01, 0x00, 0xF4};
  for (bool code16 : {false, true}) {
    const std::vector<uint8_t>& code = code16 ? real : flat;
    Unicorn u(code16 ? UC_MODE_16 : UC_MODE_32);
    uc_mem_write(u.uc, kCode, code.data(), code.size());
    EXPECT_EQ(uc_emu_start(u.uc, kCode, 0xFFFFFFFF, 0, 0), UC_ERR_OK);
    EXPECT_EQ(u.interrupt, -1);

    simcore::RamBus bus(kRam);
    Cpu cpu(bus);
    if (code16) {
      cpu.SetReal(0, 0, 0);
    } else {
      cpu.SetFlat32();
    }
    bus.Poke(kCode, code);
    cpu.set_eip(kCode);
    cpu.Run(1);
    EXPECT_TRUE(cpu.exception().pending);
    EXPECT_EQ(cpu.exception().vector, kVecGeneralProtection);
  }
}

// A fault both raise ends a lock-step run without a mismatch: #DE through UC_HOOK_INTR, #UD
// through Unicorn's invalid-instruction error.
TEST(X86Lockstep, AFaultBothRaiseEndsTheRun) {
  using testing::UnicornLockstep;
  const std::vector<std::vector<uint8_t>> codes = {{0x40, 0xF7, 0xF1},   // INC EAX; DIV ECX (0)
                                                   {0x40, 0x0F, 0x0B}};  // INC EAX; UD2
  const int vectors[] = {kVecDivide, kVecInvalidOpcode};
  for (int i = 0; i < 2; ++i) {
    UnicornLockstep lockstep(UnicornLockstep::Mode::kFlat32, kRam);
    lockstep.Load(kCode, codes[i]);
    lockstep.SetReg(kEsp, kStackTop);
    const UnicornLockstep::Result r = lockstep.Run(kCode, kCode + 0x100, 100);
    EXPECT_EQ(r.mismatch, "");
    EXPECT_EQ(r.fault, vectors[i]);
    EXPECT_EQ(r.compared, 2u);
    EXPECT_EQ(lockstep.cpu().eip(), kCode + 1);
  }
}

// PUSHAD on a 16-bit stack (real mode) with ESP's upper half set pushes the whole original ESP
// (Intel486 manual, PUSHA/PUSHAD: Temp := (ESP)), not SP; POPAD throws that image away and
// SP wraps without a carry into ESP's upper half. x86_stack_tests has the whole matrix; here
// Unicorn runs the same corner in lock step.
TEST(X86Lockstep, PushadOnA16BitStackPushesTheWholeEsp) {
  using testing::UnicornLockstep;
  // PUSHAD; POPAD; PUSHA; POPA; HLT, with SP = 0010h: each wraps below 0 and back.
  const std::vector<uint8_t> code = {0x66, 0x60, 0x66, 0x61, 0x60, 0x61, 0xF4};
  UnicornLockstep lockstep(UnicornLockstep::Mode::kReal16, kRam);
  lockstep.SetRealSegments(0, kRealDs, kRealSs);
  lockstep.Load(kCode, code);
  for (int r = 0; r < 8; ++r) lockstep.SetReg(r, 0x01010101u * static_cast<uint32_t>(r + 1));
  lockstep.SetReg(kEsp, 0x00020010);
  const UnicornLockstep::Result r = lockstep.Run(kCode, kCode + 0x100, 100);
  EXPECT_EQ(r.mismatch, "");
  EXPECT_TRUE(r.halted);
  EXPECT_EQ(lockstep.cpu().reg(kEsp), 0x00020010u);
  // The PUSHAD's ESP image, at SS:FFFCh (pushed fifth from SP = 0010h).
  EXPECT_EQ(lockstep.core_ram()[(kRealSs << 4) + 0xFFFC + 2], 0x02);
}

// The lock step itself: a register, a flag or a memory byte that differs is reported.
TEST(X86Lockstep, ReportsEachKindOfDifference) {
  using testing::UnicornLockstep;
  // MOV EAX, [EDI]; ADD EAX, 1; ADD [EDI + 4], EAX; HLT
  const std::vector<uint8_t> code = {0x8B, 0x07, 0x83, 0xC0, 0x01, 0x01, 0x47, 0x04, 0xF4};
  const auto run = [&](int corrupt) {
    UnicornLockstep lockstep(UnicornLockstep::Mode::kFlat32, kRam);
    lockstep.Load(kCode, code);
    lockstep.SetReg(kEdi, kData);
    lockstep.SetReg(kEsp, kStackTop);
    if (corrupt == 1) lockstep.cpu().set_reg(kEbx, 5);           // a register
    if (corrupt == 2) lockstep.cpu().set_eflags(flag::kCF | 2);  // a flag the ADD defines...
    if (corrupt == 3) lockstep.cpu().set_eflags(flag::kDF | 2);  // ...or none defines
    if (corrupt == 4) lockstep.core_ram()[kData] = 7;            // memory read
    if (corrupt == 5) lockstep.core_ram()[kData + 4] = 1;        // memory written (same flags)
    if (corrupt == 6) lockstep.core_ram()[kData + 8] = 7;        // memory nobody touches
    return lockstep.Run(kCode, kCode + 0x100, 100);
  };
  const UnicornLockstep::Result good = run(0);
  EXPECT_EQ(good.mismatch, "");
  EXPECT_EQ(good.compared, 4u);
  EXPECT_TRUE(good.halted);
  EXPECT_NE(run(1).mismatch.find("EBX: Unicorn 00000000, core 00000005"), std::string::npos);
  EXPECT_NE(run(2).mismatch.find("EFLAGS"), std::string::npos);
  EXPECT_NE(run(3).mismatch.find("EFLAGS"), std::string::npos);
  const std::string eax = run(4).mismatch;
  EXPECT_NE(eax.find("after 1 instructions, at EIP 00001002: EAX"), std::string::npos) << eax;
  EXPECT_NE(eax.find("mov eax, dword ptr [edi]"), std::string::npos) << eax;
  EXPECT_NE(run(5).mismatch.find("memory at 00020004: Unicorn 01, core 02"), std::string::npos);
  EXPECT_NE(run(6).mismatch.find("memory at 00020008: Unicorn 00, core 07 (found by the whole-RAM"),
            std::string::npos);
}

// Seeds 1..`streams`, each a stream of 300 random instructions run kLoops times; prints the
// summary line the test log is read for.
void RunStreams(const char* name, bool code16, uint32_t streams, uint64_t at_least) {
  Tally tally;
  for (uint32_t seed = 1; seed <= streams; ++seed) {
    const std::string diff = RunStream(seed, 300, code16, &tally);
    ASSERT_EQ(diff, "");
  }
  EXPECT_GT(tally.compared, at_least);
  EXPECT_GT(tally.faults, 0u);  // the fault path was taken too
  testing::PrintCompared(
      "Unicorn", name, tally.compared,
      absl::StrFormat("%d streams, %d ended by a fault both raised", streams, tally.faults));
}

TEST(X86Lockstep, RandomIntegerStreamsAgreeWithUnicorn) {
  RunStreams("random flat 32-bit streams", /*code16=*/false, 1000, 3000000);
}

TEST(X86Lockstep, RandomRealModeStreamsAgreeWithUnicorn) {
  RunStreams("random real-mode streams", /*code16=*/true, 500, 1500000);
}

}  // namespace
}  // namespace citcat::x86
