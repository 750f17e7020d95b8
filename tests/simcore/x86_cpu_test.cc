// The i486 core on what Unicorn cannot check: the state after RESET and the first fetch at the
// reset vector, real-mode interrupt delivery through the vector table and IRET, far transfers,
// REP string instructions running one iteration per step, debug registers; task switches, V86
// mode and DR7.GD rule by rule; and the bare-metal ROMs of x86_roms/ from RESET to their HLT.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "machine/elf_loader.h"
#include "simcore/ram_bus.h"
#include "simcore/x86/cpu.h"
#include "tests/simcore/pc_bus.h"

namespace citcat::x86 {
namespace {

using testing::PcBus;

TEST(X86Cpu, ResetStateAndTheFirstFetchAtTheResetVector) {
  PcBus bus;
  bus.Poke(0xFFFFFFF0u, {0xEA, 0x00, 0x7C, 0x00, 0x00});  // JMP FAR 0000:7C00
  bus.Poke(0x7C00, {0x90});
  Cpu cpu(bus);
  EXPECT_TRUE(cpu.real_mode());
  EXPECT_EQ(cpu.cr0(), kCr0Cd | kCr0Nw | kCr0Et);
  EXPECT_EQ(cpu.segment(kCs).selector, 0xF000);
  EXPECT_EQ(cpu.segment(kCs).base, 0xFFFF0000u);
  EXPECT_EQ(cpu.eip(), 0xFFF0u);
  EXPECT_EQ(cpu.eflags(), 2u);
  EXPECT_EQ(cpu.reg(kEdx), 0x0401u);  // i486DX, model 0, stepping 1
  ASSERT_EQ(cpu.Run(2), 2u);
  EXPECT_EQ(cpu.segment(kCs).selector, 0);
  EXPECT_EQ(cpu.segment(kCs).base, 0u);
  EXPECT_EQ(cpu.eip(), 0x7C01u);
  EXPECT_EQ(cpu.branch_count(), 1u);
  // Caches off after RESET (CD = NW = 1): the first fetch is an uncached code read at the top.
  ASSERT_FALSE(bus.log().empty());
  EXPECT_EQ(bus.log()[0].kind, cat::RecordKind::kUncachedRead);
  EXPECT_EQ(bus.log()[0].address, 0xFFFFFFF0u);
  EXPECT_TRUE(bus.log()[0].flags & cat::kFlagCode);
}

// A real-mode program at 0000:1000 with the stack at 0000:8000, caches on.
struct Real {
  explicit Real(std::vector<uint8_t> code) : cpu(bus) {
    bus.Poke(0x1000, std::move(code));
    cpu.SetReal(0, 0, 0);
    cpu.set_reg(kEsp, 0x8000);
    cpu.set_eip(0x1000);
  }
  uint16_t Word(uint32_t a) {
    return static_cast<uint16_t>(bus.ByteAt(a) | bus.ByteAt(a + 1) << 8);
  }
  PcBus bus;
  Cpu cpu;
};

TEST(X86Cpu, RealModeIntGoesThroughTheVectorTableAndIretComesBack) {
  Real r({0xCD, 0x21, 0x90});                      // INT 21h; NOP
  r.bus.Poke(0x21 * 4, {0x00, 0x20, 0x00, 0x01});  // vector 21h -> 0100:2000
  r.bus.Poke(0x3000, {0xCF});                      // at 0100:2000 (physical 3000): IRET
  r.cpu.set_deliver_interrupts(true);
  r.cpu.set_eflags(flag::kIF | flag::kCF);
  ASSERT_EQ(r.cpu.Run(1), 1u);
  EXPECT_EQ(r.cpu.segment(kCs).selector, 0x0100);
  EXPECT_EQ(r.cpu.eip(), 0x2000u);
  EXPECT_FALSE(r.cpu.eflags() & flag::kIF);
  EXPECT_EQ(r.cpu.reg(kEsp), 0x8000u - 6);
  EXPECT_EQ(r.Word(0x8000 - 2), (flag::kIF | flag::kCF | 2));  // FLAGS
  EXPECT_EQ(r.Word(0x8000 - 4), 0);                            // CS
  EXPECT_EQ(r.Word(0x8000 - 6), 0x1002);                       // IP after INT 21h
  ASSERT_EQ(r.cpu.Run(2), 2u);                                 // IRET, NOP
  EXPECT_EQ(r.cpu.segment(kCs).selector, 0);
  EXPECT_EQ(r.cpu.eip(), 0x1003u);
  EXPECT_EQ(r.cpu.eflags(), flag::kIF | flag::kCF | 2);
  EXPECT_EQ(r.cpu.reg(kEsp), 0x8000u);
  EXPECT_EQ(r.cpu.branch_count(), 2u);  // the interrupt entry and the IRET
}

// What the manual leaves undefined for a 32-bit register destination, as measured on an i486DX:
// SMSW writes all of CR0 (its upper bits, CD and NW at reset, included), MOV from a segment
// register zeroes the upper half. Into memory SMSW stores a word.
TEST(X86Cpu, SmswIntoA32BitRegisterWritesAllOfCr0) {
  Real r({0x66, 0x0F, 0x01, 0xE0,          // SMSW EAX
          0x66, 0x8C, 0xDB,                // MOV EBX, DS
          0x0F, 0x01, 0x26, 0x00, 0x50});  // SMSW [5000h]
  r.cpu.set_cr0(kCr0Cd | kCr0Nw | kCr0Et);
  r.cpu.set_reg(kEax, 0xDEADBEEF);
  r.cpu.set_reg(kEbx, 0xDEADBEEF);
  r.bus.Poke(0x5000, {0xEF, 0xBE, 0xAD, 0xDE});
  ASSERT_EQ(r.cpu.Run(3), 3u);
  EXPECT_EQ(r.cpu.reg(kEax), kCr0Cd | kCr0Nw | kCr0Et);
  EXPECT_EQ(r.cpu.reg(kEbx), 0u);
  EXPECT_EQ(r.Word(0x5000), kCr0Et);
  EXPECT_EQ(r.Word(0x5002), 0xDEAD);
}

TEST(X86Cpu, IntrWakesHltThroughAnAcknowledgeCycleAfterTheStiShadow) {
  // STI; HLT; NOP. The interrupt comes after HLT (STI holds it off for one instruction).
  Real r({0xFB, 0xF4, 0x90});
  r.bus.Poke(0x08 * 4, {0x00, 0x30, 0x00, 0x00});  // vector 8 -> 0000:3000
  r.bus.Poke(0x3000, {0xCF});                      // IRET
  r.bus.vector = 0x08;
  r.cpu.set_deliver_interrupts(true);
  r.cpu.SetIntr(true);
  EXPECT_EQ(r.cpu.Run(1), 1u);  // STI
  EXPECT_EQ(r.cpu.eip(), 0x1001u);
  EXPECT_EQ(r.cpu.Run(1), 1u);  // HLT: the shadow kept the interrupt off until after it ran
  EXPECT_EQ(r.cpu.eip(), 0x1002u);
  EXPECT_TRUE(r.cpu.halted());
  r.cpu.Run(1);  // the interrupt entry ends the halt
  EXPECT_FALSE(r.cpu.halted());
  EXPECT_EQ(r.cpu.eip(), 0x3000u);
  EXPECT_FALSE(r.cpu.eflags() & flag::kIF);
  EXPECT_EQ(r.Word(0x8000 - 6), 0x1002);  // the return address: the instruction after HLT
  r.cpu.SetIntr(false);
  EXPECT_EQ(r.cpu.Run(2), 2u);  // IRET, NOP
  EXPECT_EQ(r.cpu.eip(), 0x1003u);
  int acks = 0;
  for (const cat::OwnedRecord& rec : r.bus.log()) {
    if (rec.kind == cat::RecordKind::kInterruptAck) ++acks;
  }
  EXPECT_EQ(acks, 1);
}

TEST(X86Cpu, AnInterruptBetweenRepIterationsResumesWithTheRemainingCount) {
  // REP STOSB with CX = 5 at 0:0700; an interrupt after two iterations.
  Real r({0xF3, 0xAA, 0x90});
  r.bus.Poke(0x20 * 4, {0x00, 0x30, 0x00, 0x00});
  r.bus.Poke(0x3000, {0xCF});
  r.bus.vector = 0x20;
  r.cpu.set_deliver_interrupts(true);
  r.cpu.set_eflags(flag::kIF);
  r.cpu.set_reg(kEcx, 5);
  r.cpu.set_reg(kEax, 0x77);
  r.cpu.set_reg(kEdi, 0x700);
  EXPECT_EQ(r.cpu.Run(2), 0u);
  EXPECT_EQ(r.cpu.reg(kEcx), 3u);
  r.cpu.SetIntr(true);
  r.cpu.Run(1);  // the interrupt: at the REP instruction's EIP, with CX = 3 left
  r.cpu.SetIntr(false);
  EXPECT_EQ(r.cpu.eip(), 0x3000u);
  EXPECT_EQ(r.Word(0x8000 - 6), 0x1000);
  EXPECT_EQ(r.cpu.Run(1), 1u);  // IRET
  EXPECT_EQ(r.cpu.eip(), 0x1000u);
  EXPECT_EQ(r.cpu.Run(3), 1u);  // the three iterations left; the REP retires with the last
  EXPECT_EQ(r.cpu.reg(kEcx), 0u);
  EXPECT_EQ(r.cpu.eip(), 0x1002u);
  EXPECT_EQ(r.bus.ByteAt(0x704), 0x77);
  EXPECT_EQ(r.bus.ByteAt(0x705), 0);
}

TEST(X86Cpu, WithoutDeliveryASoftwareInterruptStopsTheCoreAfterTheInstruction) {
  Real r({0xCC});  // INT3
  EXPECT_EQ(r.cpu.Run(5), 1u);
  EXPECT_TRUE(r.cpu.exception().pending);
  EXPECT_TRUE(r.cpu.exception().trap);
  EXPECT_EQ(r.cpu.exception().vector, kVecBreakpoint);
  EXPECT_EQ(r.cpu.exception().eip, 0x1001u);
  EXPECT_EQ(r.cpu.eip(), 0x1001u);
}

TEST(X86Cpu, FarCallAndFarReturnWithImmediate) {
  // CALL FAR 0200:0010; at 0200:0010 (physical 2010): RETF 4.
  Real r({0x9A, 0x10, 0x00, 0x00, 0x02, 0x90});
  r.bus.Poke(0x2010, {0xCA, 0x04, 0x00});
  ASSERT_EQ(r.cpu.Run(1), 1u);
  EXPECT_EQ(r.cpu.segment(kCs).selector, 0x0200);
  EXPECT_EQ(r.cpu.segment(kCs).base, 0x2000u);
  EXPECT_EQ(r.cpu.eip(), 0x10u);
  EXPECT_EQ(r.Word(0x8000 - 2), 0);       // CS
  EXPECT_EQ(r.Word(0x8000 - 4), 0x1005);  // IP
  ASSERT_EQ(r.cpu.Run(1), 1u);
  EXPECT_EQ(r.cpu.segment(kCs).selector, 0);
  EXPECT_EQ(r.cpu.eip(), 0x1005u);
  EXPECT_EQ(r.cpu.reg(kEsp), 0x8004u);
}

TEST(X86Cpu, FarJumpThroughMemoryAndLds) {
  // LDS SI, [0x500]; JMP FAR [0x504]
  Real r({0xC5, 0x36, 0x00, 0x05, 0xFF, 0x2E, 0x04, 0x05});
  r.bus.Poke(0x500, {0x34, 0x12, 0x00, 0x03});
  r.bus.Poke(0x3504, {0x20, 0x00, 0x00, 0x04});  // read through the new DS = 0300
  ASSERT_EQ(r.cpu.Run(2), 2u);
  EXPECT_EQ(r.cpu.reg(kEsi) & 0xFFFF, 0x1234u);
  EXPECT_EQ(r.cpu.segment(kDs).selector, 0x0300);
  EXPECT_EQ(r.cpu.segment(kDs).base, 0x3000u);
  EXPECT_EQ(r.cpu.segment(kCs).selector, 0x0400);
  EXPECT_EQ(r.cpu.eip(), 0x20u);
}

TEST(X86Cpu, RepMovsRunsOneIterationPerStepAndRetiresOnce) {
  // CLD; REP MOVSB with CX = 3 from 0:0600 to 0:0700
  Real r({0xFC, 0xF3, 0xA4, 0x90});
  r.bus.Poke(0x600, {1, 2, 3, 4});
  r.cpu.set_reg(kEcx, 3);
  r.cpu.set_reg(kEsi, 0x600);
  r.cpu.set_reg(kEdi, 0x700);
  ASSERT_EQ(r.cpu.Run(1), 1u);  // CLD
  for (uint32_t left = 2; left > 0; --left) {
    EXPECT_EQ(r.cpu.Run(1), 0u);  // an iteration: nothing retires
    EXPECT_EQ(r.cpu.eip(), 0x1001u);
    EXPECT_EQ(r.cpu.reg(kEcx), left);
  }
  EXPECT_EQ(r.cpu.Run(1), 1u);  // the last iteration retires the instruction
  EXPECT_EQ(r.cpu.eip(), 0x1003u);
  EXPECT_EQ(r.cpu.reg(kEcx), 0u);
  EXPECT_EQ(r.bus.ByteAt(0x700), 1);
  EXPECT_EQ(r.bus.ByteAt(0x702), 3);
  EXPECT_EQ(r.bus.ByteAt(0x703), 0);
}

// KEN# is asked once per 4 KB page the core moves to, with the page's address, and its answer
// holds for every access there: stores alternating between RAM and a device page are
// write-throughs and uncached writes in turn.
TEST(X86Cpu, CacheabilityIsAskedPerPageAndEachStoreTakesItsPages) {
  //   1000: MOV [5004h], AL   A2 04 50
  //   1003: MOV [A0010h], AL  (a device page, through ES = A000h) 26 A2 10 00
  //   1007: MOV [5008h], AL   A2 08 50
  Real r({0xA2, 0x04, 0x50, 0x26, 0xA2, 0x10, 0x00, 0xA2, 0x08, 0x50});
  r.cpu.set_cr0(kCr0Et);  // caches on
  Segment es;
  es.selector = 0xA000;
  es.base = 0xA0000;
  r.cpu.set_segment(kEs, es);
  std::vector<uint32_t> asked;
  r.cpu.set_cacheable([&](uint32_t page) {
    asked.push_back(page);
    return page < 0xA0000;
  });
  ASSERT_EQ(r.cpu.Run(3), 3u);
  std::vector<std::pair<cat::RecordKind, uint64_t>> stores;
  for (const cat::OwnedRecord& rec : r.bus.log()) {
    if (rec.kind == cat::RecordKind::kWriteThrough || rec.kind == cat::RecordKind::kUncachedWrite) {
      stores.emplace_back(rec.kind, rec.address);
    }
  }
  EXPECT_EQ(stores, (std::vector<std::pair<cat::RecordKind, uint64_t>>{
                        {cat::RecordKind::kWriteThrough, 0x5004},
                        {cat::RecordKind::kUncachedWrite, 0xA0010},
                        {cat::RecordKind::kWriteThrough, 0x5008}}));
  for (uint32_t page : asked) EXPECT_EQ(page % 4096, 0u) << std::hex << page;
  EXPECT_EQ(std::count(asked.begin(), asked.end(), 0xA0000u), 1);
}

TEST(X86Cpu, AStoreIntoCodeIsSeenByTheNextFetchOfIt) {
  // A loop that runs MOV AL, imm8 twice; between the runs a store changes its immediate. The
  // instruction was predecoded on the first run: the store into its line must drop that.
  //   1000: MOV AL, 11h       B0 11
  //   1002: MOV [1001h], 22h  C6 06 01 10 22
  //   1007: JMP 1000h         EB F7
  Real r({0xB0, 0x11, 0xC6, 0x06, 0x01, 0x10, 0x22, 0xEB, 0xF7});
  r.cpu.set_cr0(kCr0Et);  // caches on, so the code sits in a cache line
  ASSERT_EQ(r.cpu.Run(4), 4u);
  EXPECT_EQ(r.cpu.reg(kEax) & 0xFF, 0x22u);
}

TEST(X86Cpu, AStoreIntoTheSecondLineOfAnInstructionIsSeenByItsNextFetch) {
  // MOV EAX, imm32 across a line boundary, run twice; between the runs a store into the next
  // line changes the immediate's last byte. The instruction was predecoded with both lines.
  //   1000: JMP 100Ch               EB 0A
  //   100C: MOV EAX, 11223344h      66 B8 44 33 22 11   (1010 and 1011 in the next line)
  //   1012: MOV BYTE [1011h], 55h   C6 06 11 10 55
  //   1017: JMP 100Ch               EB F3
  std::vector<uint8_t> code(0x19, 0x90);
  const uint8_t program[][7] = {{0xEB, 0x0A},
                                {0x66, 0xB8, 0x44, 0x33, 0x22, 0x11},
                                {0xC6, 0x06, 0x11, 0x10, 0x55},
                                {0xEB, 0xF3}};
  const size_t at[] = {0x00, 0x0C, 0x12, 0x17}, length[] = {2, 6, 5, 2};
  for (int i = 0; i < 4; ++i) std::copy_n(program[i], length[i], code.begin() + at[i]);
  Real r(code);
  r.cpu.set_cr0(kCr0Et);  // caches on, so the code sits in cache lines
  ASSERT_EQ(r.cpu.Run(4), 4u);
  EXPECT_EQ(r.cpu.reg(kEax), 0x11223344u);
  ASSERT_EQ(r.cpu.Run(1), 1u);
  EXPECT_EQ(r.cpu.reg(kEax), 0x55223344u);
}

TEST(X86Cpu, CodeRefilledIntoTheCacheRunsWhatItsBytesSayNow) {
  // A loop whose first line is evicted by four reads into its set and refilled by the jump back,
  // each time with the immediate of its first instruction incremented in memory meanwhile (by a
  // store that misses the cache) and its jump unchanged. Run long enough for the core to keep
  // what it decoded by physical address (Cpu::Known): an instruction decoded before is taken
  // from there only with the same bytes.
  //   1000: MOV AL, 11h          B0 11        (line 1000h, set 0)
  //   1002: JMP 1020h            EB 1C
  //   1020: MOV BL, [1800h] ... [3000h]       (four lines of set 0: the last evicts line 1000h)
  //   1030: INC BYTE [1001h]     FE 06 01 10
  //   1034: JMP 1000h            EB CA
  std::vector<uint8_t> code(0x36, 0x90);
  const std::vector<std::pair<size_t, std::vector<uint8_t>>> program = {
      {0x00, {0xB0, 0x11, 0xEB, 0x1C}},
      {0x20, {0x8A, 0x1E, 0x00, 0x18, 0x8A, 0x1E, 0x00, 0x20, 0x8A, 0x1E, 0x00, 0x28}},
      {0x2C, {0x8A, 0x1E, 0x00, 0x30, 0xFE, 0x06, 0x01, 0x10, 0xEB, 0xCA}}};
  for (const auto& [at, bytes] : program) std::copy(bytes.begin(), bytes.end(), code.begin() + at);
  constexpr uint64_t kRounds = 20000;  // two decodes each: the core keeps them after 8192
  const auto run = [&](bool fast) {
    auto r = std::make_unique<Real>(code);
    r->cpu.set_cr0(kCr0Et);  // caches on
    r->cpu.set_fast_paths(fast);
    EXPECT_EQ(r->cpu.Run(8 * kRounds + 1), 8 * kRounds + 1);
    EXPECT_EQ(r->cpu.reg(kEax) & 0xFF, (0x11 + kRounds) & 0xFF);  // each round's own immediate
    EXPECT_EQ(r->cpu.eip(), 0x1002u);
    return r;
  };
  const std::unique_ptr<Real> fast = run(true), plain = run(false);
  const auto code_fills = [](const Real& r) {
    return std::count_if(r.bus.log().begin(), r.bus.log().end(), [](const cat::OwnedRecord& rec) {
      return rec.kind == cat::RecordKind::kFill && rec.address == 0x1000;
    });
  };
  EXPECT_EQ(code_fills(*fast), static_cast<long>(kRounds + 1));  // refilled every round
  EXPECT_TRUE(fast->bus.log() == plain->bus.log());
}

TEST(X86Cpu, BoundChecksTheSignedRegisterAgainstBothBounds) {
  // BOUND AX, [0600h] with bounds 10h and 20h: inside, above, and below (negative).
  for (const auto& [ax, in_bounds] : {std::pair{0x15, true}, {0x25, false}, {0xFFF0, false}}) {
    Real r({0x62, 0x06, 0x00, 0x06});
    r.bus.Poke(0x600, {0x10, 0x00, 0x20, 0x00});
    r.cpu.set_reg(kEax, static_cast<uint32_t>(ax));
    EXPECT_EQ(r.cpu.Run(1), in_bounds ? 1u : 0u) << ax;
    EXPECT_EQ(r.cpu.exception().pending, !in_bounds) << ax;
    if (!in_bounds) {
      EXPECT_EQ(r.cpu.exception().vector, kVecBound);
      EXPECT_FALSE(r.cpu.exception().trap);  // a fault: EIP stays at the BOUND
      EXPECT_EQ(r.cpu.eip(), 0x1000u);
    }
  }
}

TEST(X86Cpu, IcebpIsADebugTrapAfterIt) {
  Real r({0xF1, 0x90});  // ICEBP (INT1)
  EXPECT_EQ(r.cpu.Run(1), 1u);
  ASSERT_TRUE(r.cpu.exception().pending);
  EXPECT_EQ(r.cpu.exception().vector, kVecDebug);
  EXPECT_TRUE(r.cpu.exception().trap);
  EXPECT_EQ(r.cpu.exception().eip, 0x1001u);
}

TEST(X86Cpu, SingleStepTrapsAfterEachInstructionButNotAfterInt) {
  Real r({0x90, 0x40, 0xCD, 0x21, 0x90});  // NOP; INC AX; INT 21h; NOP
  r.bus.Poke(0x21 * 4, {0x00, 0x30, 0x00, 0x00});
  r.bus.Poke(0x3000, {0xCF});  // IRET
  r.cpu.set_eflags(flag::kTF);
  EXPECT_EQ(r.cpu.Run(1), 1u);  // NOP, then the trap: pending with delivery off
  ASSERT_TRUE(r.cpu.exception().pending);
  EXPECT_TRUE(r.cpu.exception().trap);
  EXPECT_EQ(r.cpu.exception().vector, kVecDebug);
  EXPECT_EQ(r.cpu.exception().eip, 0x1001u);
  EXPECT_TRUE(r.cpu.dr6() & kDr6Bs);
  r.cpu.ClearException();
  // With delivery on the trap goes through vector 1; INT 21h clears TF and takes none.
  r.cpu.set_deliver_interrupts(true);
  r.bus.Poke(0x01 * 4, {0x00, 0x40, 0x00, 0x00});
  r.bus.Poke(0x4000, {0xCF});   // the #DB handler: IRET (TF comes back with the flags)
  EXPECT_EQ(r.cpu.Run(1), 1u);  // INC AX, and the #DB entry
  EXPECT_EQ(r.cpu.eip(), 0x4000u);
  EXPECT_EQ(r.Word(0x8000 - 6), 0x1002);  // the trap's return address: after INC AX
  EXPECT_FALSE(r.cpu.eflags() & flag::kTF);
  EXPECT_EQ(r.cpu.Run(1), 1u);  // IRET: TF set again, no trap after the IRET itself
  EXPECT_EQ(r.cpu.eip(), 0x1002u);
  EXPECT_TRUE(r.cpu.eflags() & flag::kTF);
  EXPECT_EQ(r.cpu.Run(1), 1u);  // INT 21h: its entry clears TF, no #DB
  EXPECT_EQ(r.cpu.eip(), 0x3000u);
}

TEST(X86Cpu, DebugRegisterBreakpoints) {
  // 1000: MOV [0600h], AL    A2 00 06
  // 1003: NOP                90
  // 1004: NOP                90
  Real r({0xA2, 0x00, 0x06, 0x90, 0x90});
  // DR0: an instruction breakpoint at 1004h; DR1: a one-byte write breakpoint at 0600h.
  // MOV EAX, 1004h; MOV DR0, EAX; MOV EAX, 600h; MOV DR1, EAX; MOV EAX, 00100407h; MOV DR7, EAX
  r.bus.Poke(0x2000,
             {0x66, 0xB8, 0x04, 0x10, 0x00, 0x00, 0x0F, 0x23, 0xC0, 0x66, 0xB8, 0x00, 0x06, 0x00,
              0x00, 0x0F, 0x23, 0xC8, 0x66, 0xB8, 0x0F, 0x04, 0x10, 0x00, 0x0F, 0x23, 0xF8});
  r.cpu.set_eip(0x2000);
  ASSERT_EQ(r.cpu.Run(6), 6u);
  EXPECT_EQ(r.cpu.dr7(), 0x0010040Fu);  // L0, G0, L1, G1; R/W1 = 01 (writes); bit 10 reads 1
  r.cpu.set_eip(0x1000);
  EXPECT_EQ(r.cpu.Run(1), 1u);  // the store: it completes, then the data breakpoint's trap
  ASSERT_TRUE(r.cpu.exception().pending);
  EXPECT_EQ(r.cpu.exception().vector, kVecDebug);
  EXPECT_TRUE(r.cpu.exception().trap);
  EXPECT_EQ(r.cpu.exception().eip, 0x1003u);
  EXPECT_EQ(r.cpu.dr6() & 0xF, 0x2u);  // B1
  r.cpu.ClearException();
  EXPECT_EQ(r.cpu.Run(2), 1u);  // NOP; then the instruction breakpoint: a fault before 1004h
  ASSERT_TRUE(r.cpu.exception().pending);
  EXPECT_EQ(r.cpu.exception().vector, kVecDebug);
  EXPECT_FALSE(r.cpu.exception().trap);
  EXPECT_EQ(r.cpu.eip(), 0x1004u);
  EXPECT_EQ(r.cpu.dr6() & 0xF, 0x1u);  // B0
  r.cpu.ClearException();
  r.cpu.set_eflags(r.cpu.eflags() | flag::kRF);  // as a handler's IRET would leave it
  EXPECT_EQ(r.cpu.Run(1), 1u);                   // RF holds the breakpoint off for one instruction
  EXPECT_EQ(r.cpu.eip(), 0x1005u);
  EXPECT_FALSE(r.cpu.eflags() & flag::kRF);  // and is cleared once it completed
}

// Near branches check their target against the CS limit and fault themselves, with nothing
// changed; code that runs off the end of its segment faults at the instruction that would.
TEST(X86Cpu, CodeSegmentLimitChecks) {
  //   1000: JMP 2000h       E9 FB 0F 00 00   (beyond a limit of 1FFFh)
  //   1005: CALL 2000h      E8 F6 0F 00 00
  //   100A: LOOP 100Ah + 2000h is never reached; 1FFE: NOP; NOP; then 2000 is beyond the limit
  PcBus bus;
  bus.Poke(0x1000, {0xE9, 0xFB, 0x0F, 0x00, 0x00, 0xE8, 0xF6, 0x0F, 0x00, 0x00});
  bus.Poke(0x1FFE, {0x90, 0x90, 0x90});
  Cpu cpu(bus);
  cpu.SetFlat32();
  Segment cs = cpu.segment(kCs);
  cs.limit = 0x1FFF;
  cpu.set_segment(kCs, cs);
  cpu.set_reg(kEsp, 0x8000);
  cpu.set_eip(0x1000);
  for (uint32_t at : {0x1000u, 0x1005u}) {
    cpu.set_eip(at);
    EXPECT_EQ(cpu.Run(1), 0u);
    ASSERT_TRUE(cpu.exception().pending);
    EXPECT_EQ(cpu.exception().vector, kVecGeneralProtection);
    EXPECT_EQ(cpu.eip(), at);
    EXPECT_EQ(cpu.reg(kEsp), 0x8000u);  // CALL pushed nothing
    EXPECT_EQ(cpu.branch_count(), 0u);
    cpu.ClearException();
  }
  cpu.set_eip(0x1FFE);
  EXPECT_EQ(cpu.Run(3), 2u);  // two NOPs; the third lies beyond the limit
  ASSERT_TRUE(cpu.exception().pending);
  EXPECT_EQ(cpu.exception().vector, kVecGeneralProtection);
  EXPECT_EQ(cpu.eip(), 0x2000u);
}

TEST(X86Cpu, AlignmentCheckAtCpl3) {
  // MOV EAX, [2001h] twice: first with AC clear, then with AC set (CR0.AM set throughout).
  PcBus bus;
  bus.Poke(0x1000, {0xA1, 0x01, 0x20, 0x00, 0x00, 0xA1, 0x01, 0x20, 0x00, 0x00});
  Cpu cpu(bus);
  cpu.SetFlat32(3);
  cpu.set_cr0(cpu.cr0() | kCr0Am);
  cpu.set_eip(0x1000);
  EXPECT_EQ(cpu.Run(1), 1u);  // AC clear: no check
  cpu.set_eflags(flag::kAC);
  EXPECT_EQ(cpu.Run(1), 0u);
  ASSERT_TRUE(cpu.exception().pending);
  EXPECT_EQ(cpu.exception().vector, kVecAlignment);
  EXPECT_EQ(cpu.exception().error_code, 0u);
  EXPECT_EQ(cpu.eip(), 0x1005u);
  // The same access at CPL 0 is not checked.
  Cpu kernel(bus);
  kernel.SetFlat32(0);
  kernel.set_cr0(kernel.cr0() | kCr0Am);
  kernel.set_eflags(flag::kAC);
  kernel.set_eip(0x1005);
  EXPECT_EQ(kernel.Run(1), 1u);
}

TEST(X86Cpu, WhatIsNotModelledStopsTheCoreInsteadOfRunningWrongly) {
  // FNINIT; FLD1; FADD ST(0), ST(0); F2XM1: F2XM1 of 2, whose result the i486 leaves
  // undefined.
  PcBus bus;
  bus.Poke(0x1000, {0xDB, 0xE3, 0xD9, 0xE8, 0xD8, 0xC0, 0xD9, 0xF0});
  Cpu cpu(bus);
  cpu.SetFlat32();
  cpu.set_eip(0x1000);
  EXPECT_EQ(cpu.Run(4), 3u);
  EXPECT_TRUE(cpu.exception().pending);
  EXPECT_TRUE(cpu.exception().unmodelled);
  EXPECT_EQ(cpu.eip(), 0x1006u);
}

// ---- task switches, V86 mode and general detect, rule by rule ----

// Flat protected mode at ring 0 with a GDT, an IDT and the current task's TSS (A) in memory, and
// TSS images for other tasks to switch to. Code runs from 10000h.
struct System {
  // Selectors of the GDT.
  static constexpr uint16_t kCode0 = 0x08, kData0 = 0x10, kCode3 = 0x1B, kData3 = 0x23,
                            kTssA = 0x28, kTssB = 0x30, kTssC = 0x38, kLdt = 0x40, kGateB = 0x48,
                            kAbsent = 0x50, kConforming = 0x58, kCode1 = 0x60;
  static constexpr uint32_t kGdt = 0x1000, kIdt = 0x2000, kA = 0x3000, kB = 0x3100, kC = 0x3200,
                            kLdtBase = 0x3800, kCode = 0x10000, kCodeB = 0x11000,
                            kHandler = 0x12000, kStack0 = 0x80000, kStackB = 0x70000;
  // What a 32-bit TSS image holds for a task to be switched to.
  struct Task {
    uint32_t eip = kCodeB, eflags = 2;
    uint32_t gpr[8] = {0xB0, 0xB1, 0xB2, 0xB3, kStackB, 0xB5, 0xB6, 0xB7};
    uint16_t seg[6] = {kData0, kCode0, kData0, kData0, 0, 0};  // ES CS SS DS FS GS
    uint16_t ldt = 0;
    uint32_t cr3 = 0;
    bool trap = false;
  };

  System() : cpu(bus) {
    cpu.SetFlat32(0);
    cpu.set_deliver_interrupts(true);
    Segment(1, 0, 0xFFFFF, 0x9B, 0xC);
    Segment(2, 0, 0xFFFFF, 0x93, 0xC);
    Segment(3, 0, 0xFFFFF, 0xFB, 0xC);
    Segment(4, 0, 0xFFFFF, 0xF3, 0xC);
    Segment(5, kA, 0x88, 0x89);  // with an I/O bitmap at 68h: only port 80h allowed
    Segment(6, kB, 0x67, 0x89);
    Segment(7, kC, 0x2B, 0x81);  // 16-bit
    Segment(8, kLdtBase, 0x0F, 0x82);
    Gate(kGdt + 9 * 8, kTssB, 0, 0x85);
    Segment(10, 0, 0xFFFFF, 0x13, 0xC);              // data, not present
    Segment(11, 0, 0xFFFFF, 0x9F, 0xC);              // conforming ring 0 code
    Segment(12, 0, 0xFFFFF, 0xBB, 0xC);              // ring 1 code
    Segment32(kLdtBase, 0x120000, 0xFFFF, 0x93, 0);  // LDT entry 0: selector 04h
    Long(kA + 4, kStack0);
    Long(kA + 8, kData0);
    Word(kA + 0x66, 0x68);
    for (uint32_t i = 0; i < 32; ++i) bus.Poke(kA + 0x68 + i, {0xFF});
    bus.Poke(kA + 0x68 + 0x10, {0xFE});  // port 80h
    // LGDT [500h]; LIDT [506h]; MOV AX, 28h; LTR AX
    Word(0x500, 64 * 8 - 1);
    Long(0x502, kGdt);
    Word(0x506, 256 * 8 - 1);
    Long(0x508, kIdt);
    Code(0xF000, {0x0F, 0x01, 0x15, 0x00, 0x05, 0x00, 0x00, 0x0F, 0x01, 0x1D, 0x06,
                  0x05, 0x00, 0x00, 0x66, 0xB8, 0x28, 0x00, 0x0F, 0x00, 0xD8});
    cpu.set_eip(0xF000);
    EXPECT_EQ(cpu.Run(4), 4u);
    cpu.set_eip(kCode);
    cpu.set_reg(kEsp, kStack0);
  }

  void Long(uint32_t a, uint32_t v) {
    bus.Poke(a, {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8),
                 static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 24)});
  }
  void Word(uint32_t a, uint32_t v) {
    bus.Poke(a, {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8)});
  }
  uint32_t Long(uint32_t a) { return Word(a) | Word(a + 2) << 16; }
  uint32_t Word(uint32_t a) { return bus.ByteAt(a) | bus.ByteAt(a + 1) << 8; }
  void Code(uint32_t a, const std::vector<uint8_t>& bytes) { bus.Poke(a, bytes); }
  // A segment descriptor at `a`; `flags` are G and D/B (8 and 4).
  void Segment32(uint32_t a, uint32_t base, uint32_t limit, uint8_t access, uint8_t flags) {
    Long(a, base << 16 | (limit & 0xFFFF));
    Long(a + 4, (base & 0xFF000000u) | flags << 20 | (limit & 0xF0000u) | access << 8 |
                    ((base >> 16) & 0xFF));
  }
  void Segment(int index, uint32_t base, uint32_t limit, uint8_t access, uint8_t flags = 0) {
    Segment32(kGdt + 8 * index, base, limit, access, flags);
  }
  void Gate(uint32_t a, uint16_t selector, uint32_t offset, uint8_t access) {
    Long(a, uint32_t{selector} << 16 | (offset & 0xFFFF));
    Long(a + 4, (offset & 0xFFFF0000u) | access << 8);
  }
  void Idt(int vector, uint16_t selector, uint32_t offset, uint8_t access = 0x8E) {
    Gate(kIdt + 8 * vector, selector, offset, access);
  }
  void Tss(uint32_t a, const Task& t) {
    Long(a + 0x1C, t.cr3);
    Long(a + 0x20, t.eip);
    Long(a + 0x24, t.eflags);
    for (int r = 0; r < 8; ++r) Long(a + 0x28 + 4 * r, t.gpr[r]);
    for (int s = 0; s < 6; ++s) Long(a + 0x48 + 4 * s, t.seg[s]);
    Word(a + 0x60, t.ldt);
    Word(a + 0x64, t.trap ? 1 : 0);
    Word(a + 0x66, 0x68);
  }
  uint8_t Type(uint16_t selector) { return bus.ByteAt(kGdt + (selector & ~7u) + 5) & 0x1F; }
  // Runs `code` at kCode with delivery `on` or off; returns the instructions retired.
  uint64_t Run(const std::vector<uint8_t>& code, uint64_t steps, bool deliver = true) {
    Code(kCode, code);
    cpu.set_deliver_interrupts(deliver);
    return cpu.Run(steps);
  }
  const Exception& Pending() const { return cpu.exception(); }

  PcBus bus;
  Cpu cpu;
};

constexpr uint8_t kJmpFar = 0xEA, kCallFar = 0x9A;
std::vector<uint8_t> Far(uint8_t opcode, uint16_t selector) {
  return {opcode, 0, 0, 0, 0, static_cast<uint8_t>(selector), static_cast<uint8_t>(selector >> 8)};
}

TEST(X86Tasks, AJmpToATssSavesTheOldTaskAndLoadsTheNewOneWithoutNesting) {
  System s;
  System::Task b;
  b.eflags = 2 | flag::kCF | flag::kIF;
  b.seg[kDs] = 0x04;  // through its LDT
  b.ldt = System::kLdt;
  b.cr3 = 0x5000;  // paging is off: not loaded
  s.Tss(System::kB, b);
  s.cpu.set_reg(kEax, 0xA0);
  s.cpu.set_reg(kEdi, 0xA7);
  s.cpu.set_eflags(2 | flag::kZF);
  // DR7: L0 and G1 set; a task switch clears the local enables.
  s.cpu.set_reg(kEbx, 0x9);
  s.Code(System::kCode - 3, {0x0F, 0x23, 0xFB});  // MOV DR7, EBX
  s.cpu.set_eip(System::kCode - 3);
  ASSERT_EQ(s.Run(Far(kJmpFar, System::kTssB), 2), 2u) << int{s.Pending().vector};
  // The old task's state in its TSS, with the EIP after the JMP; it is no longer busy.
  EXPECT_EQ(s.Long(System::kA + 0x20), System::kCode + 7);
  EXPECT_EQ(s.Long(System::kA + 0x24), 2 | flag::kZF);
  EXPECT_EQ(s.Long(System::kA + 0x28), 0xA0u);
  EXPECT_EQ(s.Long(System::kA + 0x44), 0xA7u);
  EXPECT_EQ(s.Long(System::kA + 0x38), System::kStack0);
  EXPECT_EQ(s.Word(System::kA + 0x4C), System::kCode0);
  EXPECT_EQ(s.Word(System::kA + 0x54), System::kData0);
  EXPECT_EQ(s.Type(System::kTssA), 0x09);
  EXPECT_EQ(s.Type(System::kTssB), 0x0B);
  EXPECT_EQ(s.Word(System::kB), 0u);  // no back link
  // The new one's.
  EXPECT_EQ(s.cpu.tr().selector, System::kTssB);
  EXPECT_EQ(s.cpu.tr().base, System::kB);
  EXPECT_EQ(s.cpu.eip(), System::kCodeB);
  EXPECT_EQ(s.cpu.eflags(), 2 | flag::kCF | flag::kIF);  // NT clear: not nested
  EXPECT_EQ(s.cpu.reg(kEax), 0xB0u);
  EXPECT_EQ(s.cpu.reg(kEsp), System::kStackB);
  EXPECT_EQ(s.cpu.ldtr().selector, System::kLdt);
  EXPECT_EQ(s.cpu.segment(kDs).selector, 0x04);
  EXPECT_EQ(s.cpu.segment(kDs).base, 0x120000u);
  EXPECT_TRUE(s.cpu.cr0() & kCr0Ts);
  EXPECT_EQ(s.cpu.cr3(), 0u);
  EXPECT_EQ(s.cpu.dr7(), 0x400u | 0x8);
}

TEST(X86Tasks, ACallNestsAndIretReturnsThroughTheBackLink) {
  System s;
  s.Tss(System::kB, {});
  s.Code(System::kCodeB, {0xCF});  // IRET
  std::vector<uint8_t> code = Far(kCallFar, System::kGateB);
  code.push_back(0x90);
  ASSERT_EQ(s.Run(code, 1), 1u);
  EXPECT_EQ(s.cpu.tr().selector, System::kTssB);
  EXPECT_EQ(s.cpu.eflags() & flag::kNT, flag::kNT);
  EXPECT_EQ(s.Word(System::kB), System::kTssA);  // the back link
  EXPECT_EQ(s.Type(System::kTssA), 0x0B);        // both busy
  EXPECT_EQ(s.Type(System::kTssB), 0x0B);
  ASSERT_EQ(s.cpu.Run(1), 1u);  // IRET: back to A
  EXPECT_EQ(s.cpu.tr().selector, System::kTssA);
  EXPECT_EQ(s.cpu.eip(), System::kCode + 7);
  EXPECT_EQ(s.cpu.eflags() & flag::kNT, 0u);
  EXPECT_EQ(s.Type(System::kTssB), 0x09);  // no longer busy
  EXPECT_EQ(s.Type(System::kTssA), 0x0B);
  EXPECT_EQ(s.Long(System::kB + 0x24) & flag::kNT, 0u);  // cleared in B's saved image
  EXPECT_EQ(s.Long(System::kB + 0x20), System::kCodeB + 1);
}

TEST(X86Tasks, A16BitTssHoldsTheLowHalvesAndNoFsOrGs) {
  System s;
  // C: link, SP0-SS2, IP, FLAGS, AX CX DX BX SP BP SI DI, ES CS SS DS, LDT.
  const uint16_t c[22] = {0,
                          0,
                          0,
                          0,
                          0,
                          0,
                          0,
                          0x1000,
                          0x0002 | 0x1,  // CF
                          0xC0,
                          0xC1,
                          0xC2,
                          0xC3,
                          0x9000,
                          0xC5,
                          0xC6,
                          0xC7,
                          System::kData0,
                          System::kCode0,
                          System::kData0,
                          System::kData0,
                          0};
  for (int i = 0; i < 22; ++i) s.Word(System::kC + 2 * i, c[i]);
  s.Code(0x1000, {0xCF});  // C: IRET
  s.cpu.set_reg(kEax, 0x12345678);
  s.cpu.set_eflags(2 | flag::kAC);
  ASSERT_EQ(s.Run(Far(kCallFar, System::kTssC), 1), 1u);
  EXPECT_EQ(s.cpu.reg(kEax), 0x123400C0u);  // the upper half kept
  EXPECT_EQ(s.cpu.reg(kEsp), (System::kStack0 & 0xFFFF0000u) | 0x9000);
  EXPECT_EQ(s.cpu.eip(), 0x1000u);
  EXPECT_EQ(s.cpu.eflags(), 2 | flag::kCF | flag::kNT);  // AC (upper half) cleared
  EXPECT_EQ(s.cpu.segment(kFs).selector, 0);
  EXPECT_EQ(s.cpu.segment(kGs).access, 0);  // null: unusable
  s.cpu.set_reg(kEcx, 0xFFFF1234);
  ASSERT_EQ(s.cpu.Run(1), 1u);                           // IRET: C is saved in the 16-bit format
  EXPECT_EQ(s.Word(System::kC + 0x0E), 0x1001u);         // IP
  EXPECT_EQ(s.Word(System::kC + 0x10), 2u | flag::kCF);  // FLAGS, NT cleared
  EXPECT_EQ(s.Word(System::kC + 0x14), 0x1234u);         // CX
  EXPECT_EQ(s.Word(System::kC + 0x24), System::kCode0);  // CS
  EXPECT_EQ(s.cpu.reg(kEax), 0x12345678u);               // A's from its 32-bit TSS
  EXPECT_EQ(s.cpu.eflags(), 2 | flag::kAC);
}

TEST(X86Tasks, FaultsBeforeTheSwitchComeInTheOldTask) {
  struct Case {
    const char* what;
    std::function<void(System&)> setup;
    std::vector<uint8_t> code;
    uint8_t vector;
    uint32_t error;
  };
  const std::vector<Case> cases = {
      {"a busy TSS", [](System&) {}, Far(kJmpFar, System::kTssA), kVecGeneralProtection,
       System::kTssA},
      {"a TSS limit below 67h", [](System& s) { s.Segment(6, System::kB, 0x50, 0x89); },
       Far(kJmpFar, System::kTssB), kVecInvalidTss, System::kTssB},
      {"a 16-bit TSS limit below 2Bh", [](System& s) { s.Segment(7, System::kC, 0x2A, 0x81); },
       Far(kCallFar, System::kTssC), kVecInvalidTss, System::kTssC},
      {"a TSS not present", [](System& s) { s.Segment(6, System::kB, 0x67, 0x09); },
       Far(kJmpFar, System::kTssB), kVecSegmentNotPresent, System::kTssB},
      {"a TSS of DPL 0 named with RPL 3", [](System&) {}, Far(kJmpFar, System::kTssB | 3),
       kVecGeneralProtection, System::kTssB},
      {"a task gate not present",
       [](System& s) { s.Gate(System::kGdt + 9 * 8, System::kTssB, 0, 0x05); },
       Far(kJmpFar, System::kGateB), kVecSegmentNotPresent, System::kGateB},
      {"a task gate to an LDT selector",
       [](System& s) { s.Gate(System::kGdt + 9 * 8, System::kTssB | 4, 0, 0x85); },
       Far(kJmpFar, System::kGateB), kVecGeneralProtection, System::kTssB | 4},
      {"a task gate to a busy TSS",
       [](System& s) { s.Gate(System::kGdt + 9 * 8, System::kTssA, 0, 0x85); },
       Far(kCallFar, System::kGateB), kVecGeneralProtection, System::kTssA},
      {"an IRET whose back link is not busy",
       [](System& s) {
         s.Word(System::kA, System::kTssB);
         s.cpu.set_eflags(2 | flag::kNT);
       },
       {0xCF},
       kVecInvalidTss,
       System::kTssB},
      {"an IRET whose back link is in the LDT",
       [](System& s) {
         s.Word(System::kA, System::kTssB | 4);
         s.cpu.set_eflags(2 | flag::kNT);
       },
       {0xCF},
       kVecInvalidTss,
       System::kTssB | 4},
  };
  for (const Case& c : cases) {
    System s;
    s.Tss(System::kB, {});
    c.setup(s);
    const uint32_t flags = s.cpu.eflags();
    EXPECT_EQ(s.Run(c.code, 1, false), 0u) << c.what;
    ASSERT_TRUE(s.Pending().pending) << c.what;
    EXPECT_EQ(s.Pending().vector, c.vector) << c.what;
    EXPECT_EQ(s.Pending().error_code, c.error) << c.what;
    EXPECT_EQ(s.Pending().eip, System::kCode) << c.what;
    // Nothing changed: the same task, busy, its TSS untouched.
    EXPECT_EQ(s.cpu.tr().selector, System::kTssA) << c.what;
    EXPECT_EQ(s.cpu.eflags(), flags) << c.what;
    EXPECT_EQ(s.Type(System::kTssA), 0x0B) << c.what;
    EXPECT_EQ(s.Long(System::kA + 0x20), 0u) << c.what;
    EXPECT_FALSE(s.cpu.cr0() & kCr0Ts) << c.what;
  }
}

TEST(X86Tasks, FaultsLoadingTheNewTaskComeInTheNewTaskBeforeItsFirstInstruction) {
  struct Case {
    const char* what;
    std::function<void(System::Task&)> image;
    uint8_t vector;
    uint32_t error;
  };
  const std::vector<Case> cases = {
      {"DS not present", [](System::Task& t) { t.seg[kDs] = System::kAbsent; },
       kVecSegmentNotPresent, System::kAbsent},
      {"SS not present", [](System::Task& t) { t.seg[kSs] = System::kAbsent; }, kVecStackFault,
       System::kAbsent},
      {"SS of another privilege", [](System::Task& t) { t.seg[kSs] = System::kData3; },
       kVecInvalidTss, System::kData3 & ~3u},
      {"a null SS", [](System::Task& t) { t.seg[kSs] = 0; }, kVecInvalidTss, 0},
      {"a data segment as CS", [](System::Task& t) { t.seg[kCs] = System::kData0; }, kVecInvalidTss,
       System::kData0},
      {"CS of DPL 1 with RPL 0", [](System::Task& t) { t.seg[kCs] = System::kCode1 & ~3u; },
       kVecInvalidTss, System::kCode1 & ~3u},
      {"CS beyond the GDT", [](System::Task& t) { t.seg[kCs] = 0x3F8; }, kVecInvalidTss, 0x3F8},
      {"ES of DPL 0 at CPL 3",
       [](System::Task& t) {
         t.seg[kCs] = System::kCode3;
         t.seg[kSs] = System::kData3;
         t.seg[kDs] = System::kData3;
       },
       kVecInvalidTss, System::kData0},
      {"an LDT selector with TI set", [](System::Task& t) { t.ldt = System::kLdt | 4; },
       kVecInvalidTss, System::kLdt | 4},
      {"an LDT selector naming a TSS", [](System::Task& t) { t.ldt = System::kTssA; },
       kVecInvalidTss, System::kTssA},
  };
  for (const Case& c : cases) {
    System s;
    System::Task b;
    c.image(b);
    s.Tss(System::kB, b);
    EXPECT_EQ(s.Run(Far(kJmpFar, System::kTssB), 1, false), 1u) << c.what;  // the JMP is done
    ASSERT_TRUE(s.Pending().pending) << c.what;
    EXPECT_EQ(s.Pending().vector, c.vector) << c.what;
    EXPECT_EQ(s.Pending().error_code, c.error) << c.what;
    EXPECT_EQ(s.Pending().eip, System::kCodeB) << c.what;
    EXPECT_EQ(s.cpu.tr().selector, System::kTssB) << c.what;
    EXPECT_EQ(s.cpu.segment(kCs).selector, b.seg[kCs]) << c.what;
    EXPECT_EQ(s.cpu.segment(kSs).selector, b.seg[kSs]) << c.what;
    EXPECT_EQ(s.cpu.segment(kDs).selector, b.seg[kDs]) << c.what;
    EXPECT_EQ(s.Long(System::kA + 0x20), System::kCode + 7) << c.what;  // A was saved
  }
  // An EIP beyond the new CS's limit: #GP(0).
  System s;
  System::Task b;
  s.Segment(1, 0, 0xFFFF, 0x9B, 0x4);  // a 64 KB code segment
  b.eip = 0x10000;
  s.Tss(System::kB, b);
  EXPECT_EQ(s.Run(Far(kJmpFar, System::kTssB), 1, false), 1u);
  EXPECT_EQ(s.Pending().vector, kVecGeneralProtection);
  EXPECT_EQ(s.Pending().error_code, 0u);
}

TEST(X86Tasks, AnExceptionThroughATaskGatePushesItsErrorCodeOnTheNewTasksStack) {
  System s;
  s.Tss(System::kB, {});
  s.Idt(kVecGeneralProtection, System::kTssB, 0, 0x85);
  // MOV AX, 1230h; MOV ES, AX: #GP(1230h), a selector beyond the GDT.
  ASSERT_EQ(s.Run({0x66, 0xB8, 0x30, 0x12, 0x8E, 0xC0}, 2), 1u);
  EXPECT_EQ(s.cpu.tr().selector, System::kTssB);
  EXPECT_EQ(s.cpu.eip(), System::kCodeB);
  EXPECT_EQ(s.cpu.reg(kEsp), System::kStackB - 4);
  EXPECT_EQ(s.Long(System::kStackB - 4), 0x1230u);
  EXPECT_EQ(s.Long(System::kA + 0x20), System::kCode + 4);  // the faulting instruction
  EXPECT_EQ(s.Word(System::kB), System::kTssA);
  EXPECT_EQ(s.cpu.eflags() & flag::kNT, flag::kNT);
  // A 16-bit TSS gets a word.
  System w;
  const uint16_t c[22] = {0,
                          0,
                          0,
                          0,
                          0,
                          0,
                          0,
                          0x1000,
                          2,
                          0,
                          0,
                          0,
                          0,
                          0x9000,
                          0,
                          0,
                          0,
                          System::kData0,
                          System::kCode0,
                          System::kData0,
                          System::kData0,
                          0};
  for (int i = 0; i < 22; ++i) w.Word(System::kC + 2 * i, c[i]);
  w.Idt(kVecGeneralProtection, System::kTssC, 0, 0x85);
  ASSERT_EQ(w.Run({0x66, 0xB8, 0x30, 0x12, 0x8E, 0xC0}, 2), 1u);
  const uint32_t esp = (System::kStack0 & 0xFFFF0000u) | (0x9000 - 2);  // SP from the TSS
  EXPECT_EQ(w.cpu.reg(kEsp), esp);
  EXPECT_EQ(w.Word(esp), 0x1230u);
}

TEST(X86Tasks, AnExternalInterruptThroughATaskGate) {
  System s;
  s.Tss(System::kB, {});
  s.Idt(0x40, System::kTssB, 0, 0x85);
  s.bus.vector = 0x40;
  s.cpu.set_eflags(2 | flag::kIF);
  s.cpu.SetIntr(true);
  s.Run({0x90}, 1);
  EXPECT_EQ(s.cpu.tr().selector, System::kTssB);
  EXPECT_EQ(s.cpu.eip(), System::kCodeB);
  EXPECT_EQ(s.cpu.reg(kEsp), System::kStackB);          // no error code
  EXPECT_EQ(s.Long(System::kA + 0x20), System::kCode);  // the instruction it would have run
  EXPECT_EQ(s.Long(System::kA + 0x24), 2 | flag::kIF);
  EXPECT_EQ(s.cpu.eflags() & flag::kNT, flag::kNT);
}

TEST(X86Tasks, TheTBitTrapsBeforeTheNewTasksFirstInstruction) {
  for (bool by_int : {false, true}) {
    System s;
    System::Task b;
    b.trap = true;
    s.Tss(System::kB, b);
    s.Idt(0x40, System::kTssB, 0, 0x85);
    s.Idt(kVecDebug, System::kCode0, System::kHandler);
    const std::vector<uint8_t> code =
        by_int ? std::vector<uint8_t>{0xCD, 0x40} : Far(kJmpFar, System::kTssB);
    ASSERT_EQ(s.Run(code, 1), 1u);
    EXPECT_EQ(s.cpu.eip(), System::kHandler) << by_int;
    EXPECT_EQ(s.cpu.tr().selector, System::kTssB);
    EXPECT_TRUE(s.cpu.dr6() & kDr6Bt);
    EXPECT_EQ(s.Long(System::kStackB - 12), System::kCodeB);  // a trap: B's first instruction
    if (by_int) continue;  // without delivery INT n itself stops the core
    // Without delivery, the trap is left pending at B's first instruction.
    System t;
    t.Tss(System::kB, b);
    t.Idt(0x40, System::kTssB, 0, 0x85);
    ASSERT_EQ(t.Run(code, 1, false), 1u);
    ASSERT_TRUE(t.Pending().pending);
    EXPECT_EQ(t.Pending().vector, kVecDebug);
    EXPECT_TRUE(t.Pending().trap);
    EXPECT_EQ(t.Pending().eip, System::kCodeB);
  }
  // An exception through a task gate: the trap comes once the error code is pushed.
  System s;
  System::Task b;
  b.trap = true;
  s.Tss(System::kB, b);
  s.Idt(kVecGeneralProtection, System::kTssB, 0, 0x85);
  s.Idt(kVecDebug, System::kCode0, System::kHandler);
  s.Run({0x66, 0xB8, 0x30, 0x12, 0x8E, 0xC0}, 2);
  EXPECT_EQ(s.cpu.eip(), System::kHandler);
  EXPECT_EQ(s.Long(System::kStackB - 4), 0x1230u);
  EXPECT_EQ(s.Long(System::kStackB - 16), System::kCodeB);
}

// MOV EAX, 43000h; MOV CR3, EAX; MOV EAX, CR0; OR EAX, 80000000h; MOV CR0, EAX: paging on with
// the page directory at 43000h.
const std::vector<uint8_t> kPagingOn = {0xB8, 0x00, 0x30, 0x04, 0x00, 0x0F, 0x22, 0xD8, 0x0F, 0x20,
                                        0xC0, 0x0D, 0x00, 0x00, 0x00, 0x80, 0x0F, 0x22, 0xC0};

// A page table at 40000h mapping the first 4 MB onto themselves (user pages), and a directory at
// 43000h.
void IdentityPaging(System& s) {
  for (uint32_t i = 0; i < 1024; ++i) s.Long(0x40000 + 4 * i, i << 12 | 7);
  s.Long(0x43000, 0x40007);
}

TEST(X86Tasks, TheNewTasksPageDirectoryIsLoadedWithPagingOn) {
  System s;
  IdentityPaging(s);
  // A's directory maps 400000h to 500000h; B's (at 44000h) to 600000h.
  s.Long(0x41000, 0x500003);
  s.Long(0x42000, 0x600003);
  s.Long(0x43004, 0x41003);
  s.Long(0x44000, 0x40003);
  s.Long(0x44004, 0x42003);
  s.Long(0x500000, 0xAAAA);
  s.Long(0x600000, 0xBBBB);
  System::Task b;
  b.cr3 = 0x44000;
  s.Tss(System::kB, b);
  std::vector<uint8_t> code = kPagingOn;
  for (uint8_t x : {0x8B, 0x1D, 0x00, 0x00, 0x40, 0x00}) code.push_back(x);  // MOV EBX, [400000h]
  for (uint8_t x : Far(kJmpFar, System::kTssB)) code.push_back(x);
  s.Code(System::kCodeB, {0x8B, 0x0D, 0x00, 0x00, 0x40, 0x00});  // MOV ECX, [400000h]
  ASSERT_EQ(s.Run(code, 8), 8u) << int{s.Pending().vector};
  EXPECT_EQ(s.Long(System::kA + 0x34), 0xAAAAu);  // A's EBX, saved
  EXPECT_EQ(s.cpu.cr3(), 0x44000u);
  EXPECT_EQ(s.cpu.reg(kEcx), 0xBBBBu);  // the TLB did not keep A's translation
}

TEST(X86Tasks, APageFaultOnTheNewTssComesBeforeTheSwitchChangesAnything) {
  System s;
  IdentityPaging(s);
  s.Segment(6, 0x5000, 0x67, 0x89);  // TSS B at 5000h, a page not present
  s.Long(0x40000 + 4 * 5, 0);
  std::vector<uint8_t> code = kPagingOn;
  for (uint8_t x : Far(kJmpFar, System::kTssB)) code.push_back(x);
  EXPECT_EQ(s.Run(code, 6, false), 5u);
  ASSERT_TRUE(s.Pending().pending);
  EXPECT_EQ(s.Pending().vector, kVecPageFault);
  EXPECT_EQ(s.Pending().error_code, 0u);  // a supervisor read, not present
  EXPECT_EQ(s.cpu.cr2(), 0x5000u);
  EXPECT_EQ(s.Pending().eip, System::kCode + kPagingOn.size());
  EXPECT_EQ(s.cpu.tr().selector, System::kTssA);
  EXPECT_EQ(s.Type(System::kTssA), 0x0B);
  EXPECT_EQ(s.Long(System::kA + 0x20), 0u);  // A not saved
  EXPECT_FALSE(s.cpu.cr0() & kCr0Ts);
}

// A fault is delivered at once, so what faults must not have changed SS, ESP or CPL yet: a
// #PF pushing an interrupt's frame on the ring 0 stack is the ring 3 code's, which the #PF task
// (through a task gate) finds saved in its TSS.
TEST(X86Tasks, APageFaultOnTheInnerStackIsTakenWithTheOuterState) {
  System s;
  IdentityPaging(s);
  s.Long(0x40000 + 4 * 0x7F, 0);  // the page below ESP0 (80000h) is not present
  System::Task b;
  b.cr3 = 0x43000;
  s.Tss(System::kB, b);
  s.Idt(kVecPageFault, System::kTssB, 0, 0x85);
  s.Idt(0x80, System::kCode0, System::kHandler, 0xEE);
  // Paging on; IRET to ring 3 at the INT 80h that follows.
  const uint32_t int80 = System::kCode + static_cast<uint32_t>(kPagingOn.size()) + 1;
  const uint32_t to_ring3[5] = {int80, System::kCode3, 2, 0x60000, System::kData3};
  for (int i = 0; i < 5; ++i) s.Long(0x70000 - 20 + 4 * i, to_ring3[i]);
  s.cpu.set_reg(kEsp, 0x70000 - 20);
  std::vector<uint8_t> code = kPagingOn;
  for (uint8_t x : {0xCF, 0xCD, 0x80}) code.push_back(x);
  s.Run(code, 7);
  EXPECT_EQ(s.cpu.tr().selector, System::kTssB);
  EXPECT_EQ(s.cpu.cr2(), 0x7FFFCu);
  EXPECT_EQ(s.Long(System::kStackB - 4), 2u);   // a supervisor write, not present
  EXPECT_EQ(s.Long(System::kA + 0x20), int80);  // the INT
  EXPECT_EQ(s.Word(System::kA + 0x4C), System::kCode3);
  EXPECT_EQ(s.Word(System::kA + 0x50), System::kData3);
  EXPECT_EQ(s.Long(System::kA + 0x38), 0x60000u);
}

// A RETF to ring 3 whose SS is not ring 3's: the #GP handler finds the stack as it was before
// the RETF, below the frame its entry pushed.
TEST(X86Tasks, AFaultingFarReturnLeavesTheStackForTheHandler) {
  System s;
  s.Idt(kVecGeneralProtection, System::kCode0, System::kHandler);
  const uint32_t sp = System::kStack0 - 16;
  const uint32_t frame[4] = {System::kCode + 1, System::kCode3, 0x60000, System::kData0 | 3};
  for (int i = 0; i < 4; ++i) s.Long(sp + 4 * i, frame[i]);
  s.cpu.set_reg(kEsp, sp);
  s.Run({0xCB}, 1);  // RETF
  EXPECT_EQ(s.cpu.eip(), System::kHandler);
  EXPECT_EQ(s.cpu.reg(kEsp), sp - 16);
  EXPECT_EQ(s.Long(sp - 16), uint32_t{System::kData0});  // the error code: the SS selector
  EXPECT_EQ(s.Long(sp - 12), System::kCode);             // the RETF
  EXPECT_EQ(s.cpu.cpl(), 0);
}

// ---- faults leave the state as it was before the instruction ----

// DS becomes a read-only data segment (GDT entry 68h), so stores through it raise #GP(0).
void ReadOnlyDs(System& s) {
  s.Segment(13, 0, 0xFFFFF, 0x91, 0xC);
  s.cpu.set_segment(kDs, {0x68, 0, 0xFFFFFFFF, true, 0x91});
  s.Idt(kVecGeneralProtection, System::kCode0, System::kHandler);
}

// SUB [100h], EAX computes flags before its store faults: the handler must find the flags (and
// the IF the interrupt gate then clears) as they were, and the frame must hold those.
TEST(X86Faults, AFaultingStoreLeavesTheFlagsAsTheyWere) {
  System s;
  ReadOnlyDs(s);
  s.cpu.set_eflags(flag::kIF);
  s.cpu.set_reg(kEax, 0x68);
  s.Run({0x29, 0x05, 0x00, 0x01, 0x00, 0x00}, 1);  // SUB [100h], EAX
  ASSERT_EQ(s.cpu.eip(), System::kHandler);
  const uint32_t sp = s.cpu.reg(kEsp);
  EXPECT_EQ(s.Long(sp), 0u);                 // error code
  EXPECT_EQ(s.Long(sp + 4), System::kCode);  // the SUB
  // EFLAGS before it, not its result's, with RF set as for every fault (Intel SDM vol. 3,
  // 17.3.1.1), so that the return does not check an instruction breakpoint again.
  EXPECT_EQ(s.Long(sp + 12), flag::kRF | flag::kIF | 2);
  EXPECT_EQ(s.cpu.eflags(), 2u);  // the gate cleared IF, nothing else
}

// The RF of the EFLAGS image an event saves (Intel SDM vol. 3, 17.3.1.1): set between two
// iterations of a REP string instruction, so that the return does not check an instruction
// breakpoint on it again; as it is (clear) once the instruction is done.
TEST(X86Faults, AnInterruptBetweenRepIterationsSavesRfSet) {
  System s;
  s.Idt(0x20, System::kCode0, System::kHandler);
  s.bus.vector = 0x20;
  s.cpu.set_eflags(flag::kIF | 2);
  s.cpu.set_reg(kEcx, 2);
  s.cpu.set_reg(kEdi, 0x40000);
  s.Run({0xF3, 0xAA, 0x90}, 1);  // REP STOSB (one iteration); NOP
  ASSERT_EQ(s.cpu.eip(), System::kCode);
  ASSERT_EQ(s.cpu.reg(kEcx), 1u);
  s.cpu.SetIntr(true);
  s.cpu.Run(1);
  s.cpu.SetIntr(false);
  ASSERT_EQ(s.cpu.eip(), System::kHandler);
  EXPECT_EQ(s.Long(s.cpu.reg(kEsp)), System::kCode);  // back to the REP STOSB
  EXPECT_EQ(s.Long(s.cpu.reg(kEsp) + 8), flag::kRF | flag::kIF | 2);
  EXPECT_EQ(s.cpu.eflags() & flag::kRF, 0u);

  // The last iteration, then the interrupt: RF as it is.
  s.cpu.set_eip(System::kCode);
  s.cpu.set_eflags(flag::kIF | 2);
  s.cpu.Run(1);
  ASSERT_EQ(s.cpu.reg(kEcx), 0u);
  ASSERT_EQ(s.cpu.eip(), System::kCode + 2);
  s.cpu.SetIntr(true);
  s.cpu.Run(1);
  s.cpu.SetIntr(false);
  ASSERT_EQ(s.cpu.eip(), System::kHandler);
  EXPECT_EQ(s.Long(s.cpu.reg(kEsp) + 8), flag::kIF | 2);
}

// INT n clears RF as it begins: its image has RF clear even when RF was set (by an IRET).
TEST(X86Faults, IntNSavesRfClear) {
  System s;
  s.Idt(0x30, System::kCode0, System::kHandler, 0xEE);
  s.cpu.set_eflags(flag::kRF | 2);
  s.Run({0xCD, 0x30}, 1);
  ASSERT_EQ(s.cpu.eip(), System::kHandler);
  EXPECT_EQ(s.Long(s.cpu.reg(kEsp) + 8), 2u);
}

// POP [100h] increments ESP before its store faults: the frame goes below the ESP the POP began
// with, and the handler's ESP is that frame's.
TEST(X86Faults, AFaultingPopLeavesEspAsItWas) {
  System s;
  ReadOnlyDs(s);
  const uint32_t sp = System::kStack0 - 4;
  s.cpu.set_reg(kEsp, sp);
  s.Run({0x8F, 0x05, 0x00, 0x01, 0x00, 0x00}, 1);  // POP DWORD [100h]
  ASSERT_EQ(s.cpu.eip(), System::kHandler);
  EXPECT_EQ(s.cpu.reg(kEsp), sp - 16);
  EXPECT_EQ(s.Long(sp - 12), System::kCode);
}

// Double faults only for the pairs the i486 makes them of: a contributory fault while
// delivering a contributory one; a benign event (an external interrupt) whose delivery faults
// gets that fault delivered instead.
TEST(X86Faults, DoubleFaultsForContributoryPairsOnly) {
  constexpr uint32_t kDoubleFaultHandler = System::kHandler + 0x100;
  {
    System s;
    ReadOnlyDs(s);
    s.Idt(kVecGeneralProtection, System::kCode0, System::kHandler, 0x0E);  // not present: #NP
    s.Idt(kVecSegmentNotPresent, System::kCode0, System::kHandler + 0x200);
    s.Idt(kVecDoubleFault, System::kCode0, kDoubleFaultHandler);
    s.Run({0x29, 0x05, 0x00, 0x01, 0x00, 0x00}, 1);  // #GP, then #NP delivering it
    EXPECT_EQ(s.cpu.eip(), kDoubleFaultHandler);
    EXPECT_EQ(s.Long(s.cpu.reg(kEsp)), 0u);  // #DF's error code
    // A double fault is an abort, not a fault: its EFLAGS image keeps RF as it was (clear).
    EXPECT_EQ(s.Long(s.cpu.reg(kEsp) + 12) & flag::kRF, 0u);
  }
  {
    System s;
    s.Idt(0x40, System::kCode0, System::kHandler, 0x0E);  // not present
    s.Idt(kVecSegmentNotPresent, System::kCode0, System::kHandler + 0x200);
    s.Idt(kVecDoubleFault, System::kCode0, kDoubleFaultHandler);
    s.bus.vector = 0x40;
    s.cpu.set_eflags(flag::kIF);
    s.cpu.SetIntr(true);
    s.Run({0x90}, 1);
    s.cpu.SetIntr(false);
    EXPECT_EQ(s.cpu.eip(), System::kHandler + 0x200);       // #NP, not #DF
    EXPECT_EQ(s.Long(s.cpu.reg(kEsp)), 0x40u * 8 + 2 + 1);  // IDT entry, IDT bit, EXT
  }
}

// CR0.WP: supervisor writes to a read-only page succeed without it and fault with it.
TEST(X86Faults, WriteProtectAppliesToSupervisorWrites) {
  for (bool wp : {false, true}) {
    System s;
    IdentityPaging(s);
    s.Long(0x40000 + 4 * 0x200, 0x200000 | 5);  // 200000h: user, read-only
    s.Idt(kVecPageFault, System::kCode0, System::kHandler);
    std::vector<uint8_t> code = kPagingOn;
    if (wp) {
      for (uint8_t x : {0x0D, 0x00, 0x00, 0x01, 0x00, 0x0F, 0x22, 0xC0}) code.push_back(x);
    }
    for (uint8_t x : {0xA3, 0x00, 0x00, 0x20, 0x00}) code.push_back(x);  // MOV [200000h], EAX
    s.Run(code, wp ? 8 : 6);
    if (wp) {
      EXPECT_EQ(s.cpu.eip(), System::kHandler);
      EXPECT_EQ(s.Long(s.cpu.reg(kEsp)), 3u);  // present, write, supervisor
      EXPECT_EQ(s.cpu.cr2(), 0x200000u);
    } else {
      EXPECT_NE(s.cpu.eip(), System::kHandler);
      EXPECT_EQ(s.Long(0x200000), s.cpu.reg(kEax));
    }
  }
}

// Enters V86 mode by IRET from ring 0 with `eflags` (VM added): CS:IP 0800:0000 (`code` at
// 8000h), SS:SP 0700:1000, DS and ES 0900h, FS and GS 0.
void EnterV86(System& s, uint32_t eflags, const std::vector<uint8_t>& code) {
  s.Code(0x8000, code);
  const uint32_t frame[9] = {0, 0x0800, eflags | flag::kVM, 0x1000, 0x0700, 0x0900, 0x0900, 0, 0};
  const uint32_t sp = System::kStack0 - 36;
  for (int i = 0; i < 9; ++i) s.Long(sp + 4 * i, frame[i]);
  s.cpu.set_reg(kEsp, sp);
  EXPECT_EQ(s.Run({0xCF}, 1), 1u);  // IRET
}

constexpr uint32_t kIopl3 = flag::kIOPL;

TEST(X86V86, AnIretAtCpl0EntersV86ModeWith8086Segments) {
  System s;
  // MOV AX, 1234h; MOV DS, AX; MOV [0], AX
  EnterV86(s, 2 | kIopl3, {0xB8, 0x34, 0x12, 0x8E, 0xD8, 0xA3, 0x00, 0x00});
  EXPECT_TRUE(s.cpu.v86());
  EXPECT_EQ(s.cpu.cpl(), 3);
  EXPECT_EQ(s.cpu.eflags(), 2 | kIopl3 | flag::kVM);
  EXPECT_EQ(s.cpu.eip(), 0u);
  EXPECT_EQ(s.cpu.reg(kEsp), 0x1000u);
  const uint16_t selectors[6] = {0x0900, 0x0800, 0x0700, 0x0900, 0, 0};
  for (int seg = 0; seg < 6; ++seg) {
    EXPECT_EQ(s.cpu.segment(seg).selector, selectors[seg]) << seg;
    EXPECT_EQ(s.cpu.segment(seg).base, uint32_t{selectors[seg]} << 4) << seg;
    EXPECT_EQ(s.cpu.segment(seg).limit, 0xFFFFu) << seg;
  }
  ASSERT_EQ(s.cpu.Run(3), 3u);
  EXPECT_EQ(s.cpu.segment(kDs).base, 0x12340u);
  EXPECT_EQ(s.Word(0x12340), 0x1234u);
}

TEST(X86V86, AnIretToV86ModeBeyond64KbIsGpBeforeItChangesAnything) {
  System s;
  const uint32_t frame[9] = {0x10005, 0x0800, 2 | flag::kVM, 0x1000, 0x0700, 0, 0, 0, 0};
  const uint32_t sp = System::kStack0 - 36;
  for (int i = 0; i < 9; ++i) s.Long(sp + 4 * i, frame[i]);
  s.cpu.set_reg(kEsp, sp);
  EXPECT_EQ(s.Run({0xCF}, 1, false), 0u);
  EXPECT_EQ(s.Pending().vector, kVecGeneralProtection);
  EXPECT_EQ(s.Pending().error_code, 0u);
  EXPECT_FALSE(s.cpu.v86());
  EXPECT_EQ(s.cpu.reg(kEsp), sp);
}

TEST(X86V86, IoplSensitiveInstructionsAreGpBelowIopl3) {
  const std::vector<std::vector<uint8_t>> sensitive = {{0xFA},       {0xFB}, {0x9C},      {0x9D},
                                                       {0xCD, 0x21}, {0xCF}, {0x66, 0x9C}};
  for (const std::vector<uint8_t>& code : sensitive) {
    System s;
    EnterV86(s, 2 | flag::kIF, code);
    s.cpu.set_deliver_interrupts(false);
    EXPECT_EQ(s.cpu.Run(1), 0u) << int{code[0]};
    ASSERT_TRUE(s.Pending().pending);
    EXPECT_EQ(s.Pending().vector, kVecGeneralProtection) << int{code[0]};
    EXPECT_EQ(s.Pending().error_code, 0u);
    EXPECT_EQ(s.cpu.eip(), 0u);
    EXPECT_EQ(s.cpu.reg(kEsp), 0x1000u);
    EXPECT_EQ(s.cpu.eflags(), 2 | flag::kIF | flag::kVM);
  }
  // INT3 is not IOPL-sensitive: it goes to the IDT (pending here, delivery off).
  System s;
  EnterV86(s, 2, {0xCC});
  s.cpu.set_deliver_interrupts(false);
  EXPECT_EQ(s.cpu.Run(1), 1u);
  EXPECT_EQ(s.Pending().vector, kVecBreakpoint);
  // With IOPL 3 they run: CLI; PUSHF; POPF of an image with IOPL 0 and IF set: IOPL stays.
  System t;
  EnterV86(t, 2 | kIopl3 | flag::kIF, {0xFA, 0x9C, 0x68, 0x02, 0x02, 0x9D});
  ASSERT_EQ(t.cpu.Run(4), 4u);
  EXPECT_EQ(t.Word(0x7000 + 0x1000 - 2), 2 | kIopl3);  // PUSHF after CLI
  EXPECT_EQ(t.cpu.eflags(), 2 | kIopl3 | flag::kIF | flag::kVM);
}

TEST(X86V86, An8086IretWithIopl3KeepsIoplAndVm) {
  System s;
  EnterV86(s, 2 | kIopl3, {0xCF});
  s.Word(0x8000 - 6, 0x0010);  // IP, CS, FLAGS (IOPL 0, CF) at 0700:0FFA
  s.Word(0x8000 - 4, 0x0800);
  s.Word(0x8000 - 2, 0x0003);
  s.cpu.set_reg(kEsp, 0x1000 - 6);
  ASSERT_EQ(s.cpu.Run(1), 1u);
  EXPECT_EQ(s.cpu.eip(), 0x10u);
  EXPECT_EQ(s.cpu.reg(kEsp), 0x1000u);
  EXPECT_EQ(s.cpu.eflags(), 3 | kIopl3 | flag::kVM);
}

TEST(X86V86, InterruptsGoToRing0WithTheV86SegmentsOnTheTssStack) {
  System s;
  s.Idt(0x21, System::kCode0, System::kHandler, 0xEF);  // a 32-bit trap gate, DPL 3
  EnterV86(s, 2 | kIopl3 | flag::kIF, {0xCD, 0x21});
  ASSERT_EQ(s.cpu.Run(1), 1u);
  EXPECT_FALSE(s.cpu.v86());
  EXPECT_EQ(s.cpu.cpl(), 0);
  EXPECT_EQ(s.cpu.eip(), System::kHandler);
  EXPECT_EQ(s.cpu.segment(kCs).selector, System::kCode0);
  EXPECT_EQ(s.cpu.segment(kSs).selector, System::kData0);  // SS0:ESP0 of the TSS
  EXPECT_EQ(s.cpu.reg(kEsp), System::kStack0 - 36);
  const uint32_t frame[9] = {
      2, 0x0800, 2 | kIopl3 | flag::kIF | flag::kVM, 0x1000, 0x0700, 0x0900, 0x0900, 0, 0};
  for (int i = 0; i < 9; ++i) EXPECT_EQ(s.Long(System::kStack0 - 36 + 4 * i), frame[i]) << i;
  for (int seg : {kEs, kDs, kFs, kGs}) {
    EXPECT_EQ(s.cpu.segment(seg).selector, 0) << seg;
    EXPECT_EQ(s.cpu.segment(seg).access, 0) << seg;  // null
  }
  EXPECT_EQ(s.cpu.eflags(), 2 | kIopl3 | flag::kIF);  // VM clear; a trap gate keeps IF
  // An exception pushes its error code too; a 16-bit gate pushes words.
  System e;
  e.Idt(kVecGeneralProtection, System::kCode0, 0x6000, 0x86);  // a 16-bit interrupt gate
  EnterV86(e, 2, {0xFA});                                      // CLI with IOPL 0
  e.cpu.Run(1);
  EXPECT_EQ(e.cpu.eip(), 0x6000u);
  EXPECT_EQ(e.cpu.reg(kEsp), System::kStack0 - 20);
  const uint16_t words[10] = {0, 0, 0x0800, 2 | 0, 0x1000, 0x0700, 0x0900, 0x0900, 0, 0};
  for (int i = 0; i < 10; ++i) {
    const uint32_t expected = i == 3 ? 2 : words[i];  // FLAGS: VM is in the upper half
    EXPECT_EQ(e.Word(System::kStack0 - 20 + 2 * i), expected) << i;
  }
}

TEST(X86V86, AnInterruptFromV86ModeNeedsANonConformingRing0Handler) {
  for (uint16_t code : {System::kCode3, System::kConforming, System::kCode1}) {
    System s;
    s.Gate(System::kIdt + 8 * 0x21, code, System::kHandler, 0xEE);
    s.Idt(kVecGeneralProtection, System::kCode0, System::kHandler + 0x100);
    EnterV86(s, 2 | kIopl3, {0xCD, 0x21});
    s.cpu.Run(1);
    EXPECT_EQ(s.cpu.eip(), System::kHandler + 0x100) << code;     // #GP, from V86 mode
    EXPECT_EQ(s.Long(System::kStack0 - 40), code & ~3u) << code;  // its error code
    EXPECT_EQ(s.Long(System::kStack0 - 36), 0u) << code;          // at the INT
  }
}

TEST(X86V86, PortsGoThroughTheIoBitmapWhateverIopl) {
  for (uint32_t iopl : {0u, kIopl3}) {
    System s;
    EnterV86(s, 2 | iopl, {0xE6, 0x80, 0xE6, 0x81});  // OUT 80h, AL; OUT 81h, AL
    s.cpu.set_deliver_interrupts(false);
    EXPECT_EQ(s.cpu.Run(2), 1u) << iopl;
    EXPECT_EQ(s.Pending().vector, kVecGeneralProtection);
    EXPECT_EQ(s.cpu.eip(), 2u);
    int writes = 0;
    for (const cat::OwnedRecord& r : s.bus.log()) {
      if (r.kind == cat::RecordKind::kPortWrite) {
        ++writes;
        EXPECT_EQ(r.address, 0x80u);
      }
    }
    EXPECT_EQ(writes, 1);
  }
}

TEST(X86V86, WhatV86ModeDoesNotRun) {
  const std::vector<std::vector<uint8_t>>
      undefined = {{0x0F, 0x02, 0xC0}, {0x0F, 0x03, 0xC0}, {0x0F, 0x00, 0xE0}, {0x0F, 0x00, 0xE8},
                   {0x63, 0xC0},       {0x0F, 0x00, 0xC0}, {0x0F, 0x00, 0xC8}, {0x0F, 0x00, 0xD0},
                   {0x0F, 0x00, 0xD8}};  // LAR LSL VERR VERW ARPL SLDT STR LLDT LTR
  const std::vector<std::vector<uint8_t>> privileged = {
      {0x0F, 0x20, 0xC0},
      {0x0F, 0x22, 0xC0},
      {0x0F, 0x21, 0xF8},
      {0x0F, 0x23, 0xF8},
      {0xF4},
      {0x0F, 0x01, 0x16, 0x00, 0x00},
      {0x0F, 0x06},
      {0x0F, 0x08}};  // MOV from/to CR0, from/to DR7, HLT, LGDT, CLTS, INVD
  for (bool ud : {true, false}) {
    for (const std::vector<uint8_t>& code : ud ? undefined : privileged) {
      System s;
      EnterV86(s, 2 | kIopl3, code);
      s.cpu.set_deliver_interrupts(false);
      EXPECT_EQ(s.cpu.Run(1), 0u);
      EXPECT_EQ(s.Pending().vector, ud ? kVecInvalidOpcode : kVecGeneralProtection) << int{code[1]};
      EXPECT_EQ(s.Pending().error_code, 0u);
    }
  }
  // SMSW and SGDT run.
  System s;
  EnterV86(s, 2, {0x0F, 0x01, 0xE0, 0x0F, 0x01, 0x06, 0x00, 0x00});
  EXPECT_EQ(s.cpu.Run(2), 2u);
  EXPECT_EQ(s.cpu.reg(kEax) & 0xFFFF, s.cpu.cr0() & 0xFFFF);
  EXPECT_EQ(s.Word(0x9000), 64u * 8 - 1);  // the GDT's limit at DS:0
}

TEST(X86V86, AnIretAboveCpl0IgnoresTheVmBitOfItsImage) {
  System s;
  // To ring 3 by IRET, then at ring 3 an IRET whose EFLAGS image has VM set.
  const uint32_t to_ring3[5] = {System::kCode + 1, System::kCode3, 2, 0x60000, System::kData3};
  for (int i = 0; i < 5; ++i) s.Long(System::kStack0 - 20 + 4 * i, to_ring3[i]);
  s.cpu.set_reg(kEsp, System::kStack0 - 20);
  const uint32_t image[3] = {System::kCode + 2, System::kCode3, 2 | flag::kVM | flag::kCF};
  for (int i = 0; i < 3; ++i) s.Long(0x60000 + 4 * i, image[i]);
  ASSERT_EQ(s.Run({0xCF, 0xCF, 0x90}, 2), 2u);
  EXPECT_FALSE(s.cpu.v86());
  EXPECT_EQ(s.cpu.cpl(), 3);
  EXPECT_EQ(s.cpu.eip(), System::kCode + 2);
  EXPECT_EQ(s.cpu.eflags(), 2 | flag::kCF);
  EXPECT_EQ(s.cpu.segment(kCs).base, 0u);
}

TEST(X86V86, ATaskSwitchToATssWithVmStartsAV86Task) {
  System s;
  System::Task b;
  b.eip = 0x0010;
  b.eflags = 2 | kIopl3 | flag::kVM;
  b.gpr[kEsp] = 0x0800;
  for (int seg = 0; seg < 6; ++seg) b.seg[seg] = static_cast<uint16_t>(0x0100 * (seg + 1));
  b.ldt = System::kLdt;
  s.Tss(System::kB, b);
  ASSERT_EQ(s.Run(Far(kJmpFar, System::kTssB), 1), 1u);
  EXPECT_TRUE(s.cpu.v86());
  EXPECT_EQ(s.cpu.cpl(), 3);
  EXPECT_EQ(s.cpu.eip(), 0x10u);
  for (int seg = 0; seg < 6; ++seg) {
    EXPECT_EQ(s.cpu.segment(seg).base, 0x1000u * (seg + 1)) << seg;
  }
  EXPECT_EQ(s.cpu.ldtr().selector, System::kLdt);
  // Back to A through a task gate: the V86 task's state is saved with VM.
  s.Idt(0x40, System::kTssA, 0, 0xE5);
  s.Long(System::kA + 0x20, System::kCode + 7);  // A's saved image, as the JMP left it
  s.Code(0x2010, {0xCD, 0x40});                  // INT 40h at 0200:0010
  ASSERT_EQ(s.cpu.Run(1), 1u);
  EXPECT_FALSE(s.cpu.v86());
  EXPECT_EQ(s.cpu.tr().selector, System::kTssA);
  EXPECT_EQ(s.Long(System::kB + 0x24), 2 | kIopl3 | flag::kVM);
  EXPECT_EQ(s.Word(System::kB + 0x4C), 0x0200u);
}

// ---- DR7.GD ----

TEST(X86Debug, GeneralDetectIsAFaultBeforeAnyMovWithADebugRegister) {
  System s;
  s.Idt(kVecDebug, System::kCode0, System::kHandler);
  s.Code(System::kHandler, {0x0F, 0x21, 0xF1, 0xCF});  // MOV ECX, DR6; IRET
  // MOV EAX, 2000h; MOV DR7, EAX; MOV EBX, DR0
  const std::vector<uint8_t> code = {0xB8, 0x00, 0x20, 0x00, 0x00, 0x0F,
                                     0x23, 0xF8, 0x0F, 0x21, 0xC3};
  s.cpu.set_reg(kEbx, 0x55);
  EXPECT_EQ(s.Run(code, 3, false), 2u);
  ASSERT_TRUE(s.Pending().pending);
  EXPECT_EQ(s.Pending().vector, kVecDebug);
  EXPECT_FALSE(s.Pending().trap);
  EXPECT_EQ(s.Pending().eip, System::kCode + 8);
  EXPECT_EQ(s.cpu.reg(kEbx), 0x55u);
  EXPECT_TRUE(s.cpu.dr6() & kDr6Bd);
  // Delivered: the handler finds GD clear and may use the debug registers; back at the MOV.
  System t;
  t.Idt(kVecDebug, System::kCode0, System::kHandler);
  t.Code(System::kHandler, {0x0F, 0x21, 0xF1, 0xCF});
  EXPECT_EQ(t.Run(code, 3), 2u);
  EXPECT_EQ(t.cpu.eip(), System::kHandler);
  EXPECT_EQ(t.cpu.dr7(), 0x400u);
  EXPECT_EQ(t.Long(System::kStack0 - 12), System::kCode + 8);
  EXPECT_EQ(t.cpu.Run(3), 3u);  // MOV ECX, DR6; IRET; MOV EBX, DR0
  EXPECT_TRUE(t.cpu.reg(kEcx) & kDr6Bd);
  EXPECT_EQ(t.cpu.reg(kEbx), 0u);
  EXPECT_EQ(t.cpu.eip(), System::kCode + 11);
}

TEST(X86Debug, EveryDebugExceptionClearsGd) {
  System s;
  s.Idt(kVecDebug, System::kCode0, System::kHandler);
  // MOV EAX, 2000h; MOV DR7, EAX; NOP with TF set: the single-step trap's entry clears GD.
  s.Code(System::kCode, {0xB8, 0x00, 0x20, 0x00, 0x00, 0x0F, 0x23, 0xF8, 0x90});
  ASSERT_EQ(s.cpu.Run(2), 2u);
  EXPECT_EQ(s.cpu.dr7(), 0x2400u);
  s.cpu.set_eflags(2 | flag::kTF);
  ASSERT_EQ(s.cpu.Run(1), 1u);
  EXPECT_EQ(s.cpu.eip(), System::kHandler);
  EXPECT_EQ(s.cpu.dr7(), 0x400u);
  EXPECT_TRUE(s.cpu.dr6() & kDr6Bs);
}

TEST(X86Debug, GeneralDetectAppliesInRealModeAndComesAfterTheCplCheck) {
  Real r({0x66, 0xB8, 0x00, 0x20, 0x00, 0x00, 0x0F, 0x23, 0xF8, 0x0F, 0x21, 0xC0});
  EXPECT_EQ(r.cpu.Run(3), 2u);
  EXPECT_EQ(r.cpu.exception().vector, kVecDebug);
  EXPECT_EQ(r.cpu.exception().eip, 0x1009u);
  // At CPL 3 a MOV with a debug register is #GP(0), GD or not.
  PcBus bus;
  bus.Poke(0x1000, {0xB8, 0x00, 0x20, 0x00, 0x00, 0x0F, 0x23, 0xF8, 0x0F, 0x21, 0xC0});
  Cpu cpu(bus);
  cpu.SetFlat32(0);
  cpu.set_eip(0x1000);
  ASSERT_EQ(cpu.Run(2), 2u);
  cpu.SetFlat32(3);
  EXPECT_EQ(cpu.Run(1), 0u);
  EXPECT_EQ(cpu.exception().vector, kVecGeneralProtection);
  EXPECT_EQ(cpu.exception().error_code, 0u);
}

#ifdef CITCAT_X86_ROMS
// A bare-metal ROM of tests/simcore/x86_roms/ in the top 64 KB, the core after RESET with
// exceptions and interrupts delivered; runs it to its HLT.
struct Rom {
  explicit Rom(const std::string& name, bool fast_paths = true) : cpu(bus) {
    cpu.set_fast_paths(fast_paths);
    absl::StatusOr<machine::ElfImage> elf =
        machine::LoadElfFile(std::string(CITCAT_X86_ROMS) + "/" + name + ".elf");
    EXPECT_TRUE(elf.ok()) << elf.status();
    if (elf.ok()) {
      for (const machine::ElfSegment& s : elf->segments) {
        bus.Poke(static_cast<uint32_t>(s.vaddr), s.data);
      }
      for (const machine::ElfSymbol& s : elf->symbols) symbols[s.name] = s.value;
    }
    cpu.set_deliver_interrupts(true);
    cpu.Run(100000);
  }
  std::string State() const {
    std::ostringstream out;
    out << std::hex << "EIP " << cpu.eip() << " CS " << cpu.segment(kCs).selector << " CR0 "
        << cpu.cr0() << " ESP " << cpu.reg(kEsp) << std::dec << " retired " << cpu.retired();
    if (cpu.exception().pending) {
      out << " exception " << int{cpu.exception().vector}
          << (cpu.exception().unmodelled ? " (unmodelled)" : "");
    }
    return out.str();
  }
  uint16_t Word(uint32_t a) {
    return static_cast<uint16_t>(bus.ByteAt(a) | bus.ByteAt(a + 1) << 8);
  }
  uint32_t Long(uint32_t a) { return Word(a) | uint32_t{Word(a + 2)} << 16; }
  // The address of a label of the ROM.
  uint32_t Symbol(const std::string& name) const {
    const auto it = symbols.find(name);
    EXPECT_NE(it, symbols.end()) << name;
    return it == symbols.end() ? 0 : static_cast<uint32_t>(it->second);
  }
  PcBus bus;
  Cpu cpu;
  std::map<std::string, uint64_t> symbols;
};

// Real mode to protected mode, paging, a page fault repaired by its handler, INT 0x80 through an
// interrupt gate, HLT.
TEST(X86Cpu, ProtectedModeRomFromResetToHlt) {
  Rom rom("protected");
  const Cpu& cpu = rom.cpu;
  ASSERT_TRUE(cpu.halted()) << rom.State();
  EXPECT_FALSE(cpu.real_mode());
  EXPECT_EQ(cpu.cr0() & (kCr0Pe | kCr0Pg), kCr0Pe | kCr0Pg);
  EXPECT_EQ(cpu.reg(kEcx), 0x12345678u);  // the store ran again after the handler mapped the page
  EXPECT_EQ(cpu.reg(kEsi), 0x300010u);    // CR2 as the handler read it
  EXPECT_EQ(cpu.cr2(), 0x300010u);
  EXPECT_EQ(cpu.reg(kEdx), 2u);        // #PF error code: a supervisor write, not present
  EXPECT_EQ(cpu.reg(kEbx), 0xC0DEu);   // INT 0x80 ran its handler
  EXPECT_EQ(cpu.reg(kEsp), 0x90000u);  // every IRET popped what its entry pushed
  EXPECT_EQ(cpu.segment(kCs).selector, 8);
  EXPECT_EQ(cpu.segment(kSs).selector, 0x10);
}

// Ring 0 to ring 3 by IRET, INT 0x80 up to ring 0 on the TSS's stack and back, a port write at
// ring 3 with IOPL 0 raising #GP(0), whose handler halts.
TEST(X86Cpu, PrivilegeLevelsRomFromResetToHlt) {
  Rom rom("rings");
  const Cpu& cpu = rom.cpu;
  ASSERT_TRUE(cpu.halted()) << rom.State();
  EXPECT_EQ(cpu.cpl(), 0);
  EXPECT_EQ(cpu.tr().selector, 0x28);
  EXPECT_EQ(cpu.reg(kEcx) & 0xFFFF, 0x1Bu);  // CS in ring 3
  EXPECT_EQ(cpu.reg(kEdi), 0xFFFFFFFFu);     // LSL of the ring 3 data segment
  EXPECT_EQ(cpu.reg(kEbx) & 0xFFFF, 0x08u);  // CS in the INT 0x80 handler
  // The handler ran on the ring 0 stack from the TSS, below the five words the entry pushed.
  EXPECT_EQ(cpu.reg(kEbp), 0x80000u - 5 * 4);
  EXPECT_EQ(cpu.reg(kEdx), 0u);     // #GP(0)
  EXPECT_EQ(cpu.reg(kEsi), 0x1Bu);  // raised in ring 3
  // LTR marked the TSS descriptor busy in memory (type 9 became B), in the GDT copied to RAM.
  EXPECT_EQ(rom.bus.ByteAt(0x3000 + 0x28 + 5), 0x8B);
  // The call gate's handler ran in ring 0 with the two parameters copied to its stack.
  EXPECT_EQ(rom.Word(0x3200), 0x3333);
  // Exactly one write to port E9h reached the bus: ring 0's, with its byte.
  int port_writes = 0;
  for (const cat::OwnedRecord& r : rom.bus.log()) {
    if (r.kind != cat::RecordKind::kPortWrite || r.address == 0xF4) continue;
    ++port_writes;
    EXPECT_EQ(r.address, 0xE9u);
    ASSERT_EQ(r.data.size(), 1u);
    EXPECT_EQ(r.data[0], 0x41);
  }
  EXPECT_EQ(port_writes, 1);
}

// The predecoded-line fast paths change nothing a bus monitor or the program could see: the
// same bus records (fills, write-throughs, page walks, port cycles, in the same order with the
// same branch counts) and the same final state as the full path on every fetch.
void ExpectSameBusTrace(const PcBus& fast, const PcBus& full) {
  ASSERT_EQ(fast.log().size(), full.log().size());
  for (size_t i = 0; i < fast.log().size(); ++i) {
    const cat::OwnedRecord &a = fast.log()[i], &b = full.log()[i];
    ASSERT_TRUE(a.kind == b.kind && a.address == b.address && a.flags == b.flags &&
                a.branch_count == b.branch_count && a.data == b.data)
        << "record " << i;
  }
}

TEST(X86Cpu, FastPathsLeaveTheSameBusTraceAsTheFullPath) {
  for (const char* name : {"protected", "rings"}) {
    SCOPED_TRACE(name);
    Rom fast(name), full(name, false);
    EXPECT_EQ(fast.State(), full.State());
    ExpectSameBusTrace(fast.bus, full.bus);
  }
}

TEST(X86Cpu, FastPathsKeepTheReplacementOrderUnderConflicts) {
  // Five data lines and the loop's first code line all in cache set 0, so the loop's fetches
  // and loads keep replacing each other: which line goes depends on every fetch's touch.
  //   1000: MOV AL, [2000h] / [2800h] / [3000h] / [3800h] / [4000h]   A0 lo hi
  //   100F: LOOP 1000h                                                E2 EF
  std::vector<uint8_t> moffs;
  for (uint8_t hi : {0x20, 0x28, 0x30, 0x38, 0x40}) moffs.insert(moffs.end(), {0xA0, 0x00, hi});
  moffs.insert(moffs.end(), {0xE2, 0xEF});
  // The same with the loads in a ModRM form and register-only instructions between them, which
  // the straight loop runs from the line without a new touch:
  //   MOV AL, [BX+2000h] / ... (8A 87 lo hi), INC DX (42), ADD DX, CX (01 CA); LOOP back.
  std::vector<uint8_t> modrm;
  for (uint8_t hi : {0x20, 0x28, 0x30, 0x38, 0x40}) {
    modrm.insert(modrm.end(), {0x8A, 0x87, 0x00, hi, 0x42, 0x01, 0xCA});
  }
  modrm.insert(modrm.end(), {0xE2, static_cast<uint8_t>(-2 - static_cast<int>(modrm.size()))});
  for (const auto& [code, per_iteration] : {std::pair{moffs, 6u}, std::pair{modrm, 16u}}) {
    Real fast(code), full(code);
    full.cpu.set_fast_paths(false);
    for (Real* r : {&fast, &full}) {
      r->cpu.set_cr0(kCr0Et);
      r->cpu.set_reg(kEcx, 40);
      ASSERT_EQ(r->cpu.Run(40 * per_iteration), 40u * per_iteration);
    }
    ExpectSameBusTrace(fast.bus, full.bus);
    EXPECT_EQ(fast.cpu.reg(kEdx), full.cpu.reg(kEdx));
  }
}

// A run of pure forms counted in its first one (RunForms) holds only while the copies after it
// are those it counted: here one of them is decoded again as 16-bit code, with another length,
// and the 32-bit code that comes back must not run that copy.
TEST(X86Cpu, FastPathsForgetARunOfPureFormsWhenItsLineIsDecodedAgain) {
  //   1000: INC EAX                40
  //   1001: MOV EAX, 11223344h     B8 44 33 22 11   (as 16-bit code: MOV AX, 3344h; 3 bytes)
  //   1006: INC EBX; INC ECX       43 41
  //   1008: JMP 1000h              EB F6
  const std::vector<uint8_t> code = {0x40, 0xB8, 0x44, 0x33, 0x22, 0x11, 0x43, 0x41, 0xEB, 0xF6};
  const auto run = [&](bool fast) {
    PcBus bus;
    bus.Poke(0x1000, code);
    Cpu cpu(bus);
    cpu.set_fast_paths(fast);
    cpu.SetFlat32();
    cpu.set_cr0(kCr0Pe | kCr0Et);  // caches on, so the code is predecoded in its line
    const Segment flat = cpu.segment(kCs);
    cpu.set_eip(0x1000);
    EXPECT_EQ(cpu.Run(3 * 5), 3u * 5);  // decoded, then the run counted, then run
    Segment code16 = flat;
    code16.big = false;
    code16.limit = 0xFFFF;
    cpu.set_segment(kCs, code16);
    cpu.set_eip(0x1001);
    cpu.set_reg(kEax, 0);
    EXPECT_EQ(cpu.Run(1), 1u);  // MOV AX, 3344h: 1001h decoded as 16-bit code
    EXPECT_EQ(cpu.reg(kEax), 0x3344u);
    cpu.set_segment(kCs, flat);
    cpu.set_eip(0x1000);
    EXPECT_EQ(cpu.Run(5), 5u);
    EXPECT_EQ(cpu.reg(kEax), 0x11223344u);
    EXPECT_EQ(cpu.eip(), 0x1000u);
    return std::tuple{cpu.reg(kEbx), cpu.reg(kEcx), bus.log()};
  };
  const auto fast = run(true), full = run(false);
  EXPECT_EQ(std::get<0>(fast), 4u);
  EXPECT_EQ(std::get<1>(fast), 4u);
  EXPECT_TRUE(fast == full);
}

// REP string iterations run one after another from their line (RepeatIterations), each fetched
// again after the last one's data accesses. A long REP MOVSB whose source reads keep replacing
// lines of its own cache set (its line stays only if every iteration touches it); and a REP
// STOSB that writes into its own line, so that each iteration finds the line changed and the
// instruction is decoded again, run in pieces of 3 steps so that pieces end between iterations.
TEST(X86Cpu, FastPathsFetchEveryRepIterationAsTheFullPathDoes) {
  //   1000: REP MOVSB   F3 A4   (line 1000h, set 0; CX = 3000h from 2000h: lines of set 0 too)
  //   1002: INC DX      42
  constexpr uint32_t kCount = 0x3000;
  Real fast({0xF3, 0xA4, 0x42}), full({0xF3, 0xA4, 0x42});
  //   1000: REP STOSB   F3 AA   (CX = 13 NOPs over 1003h-100Fh, the rest of its own line)
  //   1002: INC DX      42
  std::vector<uint8_t> stos = {0xF3, 0xAA, 0x42};
  stos.resize(0x10, 0xCC);
  Real fast_stos(stos), full_stos(stos);
  full.cpu.set_fast_paths(false);
  full_stos.cpu.set_fast_paths(false);
  for (Real* r : {&fast, &full}) {
    r->cpu.set_cr0(kCr0Et);  // caches on
    r->cpu.set_reg(kEcx, kCount);
    r->cpu.set_reg(kEsi, 0x2000);
    r->cpu.set_reg(kEdi, 0x6000);
    const uint32_t edx = r->cpu.reg(kEdx);
    ASSERT_EQ(r->cpu.Run(kCount + 1), 2u);
    EXPECT_EQ(r->cpu.reg(kEcx), 0u);
    EXPECT_EQ(r->cpu.reg(kEdx), edx + 1);
    EXPECT_EQ(r->cpu.eip(), 0x1003u);
  }
  ExpectSameBusTrace(fast.bus, full.bus);
  for (Real* r : {&fast_stos, &full_stos}) {
    r->cpu.set_cr0(kCr0Et);
    r->cpu.set_reg(kEcx, 13);
    r->cpu.set_reg(kEdi, 0x1003);
    r->cpu.set_reg(kEax, 0x90);
    while (r->cpu.steps() < 13 + 1 + 13) r->cpu.Run(3);  // the iterations, INC DX, the NOPs
    EXPECT_EQ(r->cpu.retired(), 1u + 1 + 13);
    EXPECT_EQ(r->cpu.eip(), 0x1010u);
  }
  ExpectSameBusTrace(fast_stos.bus, full_stos.bus);
}

// The same with paging on, where the TLB is contested: a loop at 1100h calls a function at 2200h
// that loads from five pages which, like the loop's page, translate through TLB set 1, so the
// loop's translation is evicted while the function runs. Back from the call, the loop's line is
// still in the cache and one a recent fetch used: only the TLB way that translated it says that
// its entry is gone, and the full path walks again. The loads also keep replacing the line of the
// loop's page table entry (cache set 0), so each of those walks shows on the bus as its fill.
// Register-only instructions between the loads are fetched from the line without a touch, each
// load's successor with one.
TEST(X86Cpu, FastPathsFollowTheTlbUnderConflicts) {
  //   1100: CALL 2200h; LOOP 1100h                          E8 rel32, E2 F9
  //   2200: MOV EAX, [9000h]; INC EDX; ADD EDX, EAX (x5)    8B 05 addr32, 42, 01 C2
  //         RET                                            C3
  const std::vector<uint8_t> loop = {0xE8, 0xFB, 0x10, 0x00, 0x00, 0xE2, 0xF9};
  std::vector<uint8_t> function;
  for (uint32_t a : {0x9000u, 0x11000u, 0x19000u, 0x21000u, 0x29000u}) {
    function.insert(function.end(), {0x8B, 0x05, static_cast<uint8_t>(a),
                                     static_cast<uint8_t>(a >> 8), static_cast<uint8_t>(a >> 16),
                                     static_cast<uint8_t>(a >> 24), 0x42, 0x01, 0xC2});
  }
  function.push_back(0xC3);
  constexpr uint32_t kPerIteration = 2 + 5 * 3 + 1;
  PcBus fast_bus, full_bus;
  Cpu fast(fast_bus), full(full_bus);
  full.set_fast_paths(false);
  for (const auto& [bus, cpu] : {std::pair{&fast_bus, &fast}, std::pair{&full_bus, &full}}) {
    // Page tables at 40000h (directory at 43000h) mapping the first 4 MB onto themselves.
    for (uint32_t i = 0; i < 1024; ++i) {
      const uint32_t pte = i << 12 | 7;
      bus->Poke(0x40000 + 4 * i,
                {static_cast<uint8_t>(pte), static_cast<uint8_t>(pte >> 8),
                 static_cast<uint8_t>(pte >> 16), static_cast<uint8_t>(pte >> 24)});
    }
    bus->Poke(0x43000, {0x07, 0x00, 0x04, 0x00});
    bus->Poke(0x1100, loop);
    bus->Poke(0x2200, function);
    cpu->SetFlat32();
    cpu->set_cr3(0x43000);
    cpu->set_cr0(kCr0Pe | kCr0Et | kCr0Pg);
    cpu->set_eip(0x1100);
    cpu->set_reg(kEsp, 0x8000);
    cpu->set_reg(kEcx, 20);
    ASSERT_EQ(cpu->Run(20 * kPerIteration), 20u * kPerIteration);
  }
  ExpectSameBusTrace(fast_bus, full_bus);
  EXPECT_EQ(fast.reg(kEdx), full.reg(kEdx));
  EXPECT_EQ(fast.eip(), 0x1107u);
  int code_walks = 0;
  for (const cat::OwnedRecord& r : fast_bus.log()) {
    code_walks += r.kind == cat::RecordKind::kFill && r.address == 0x40000;
  }
  EXPECT_GE(code_walks, 20);
}

// 16-bit code whose IP wraps at 64 KB in the middle of a line: CS at base 1008h, so IP FFFFh is
// byte 7 of the line at 11000h and IP 0 is at 1008h. The line's bytes after IP FFFFh were run
// before, as code at the start of another segment, and so are predecoded for 16-bit code: a run
// that went on along the line instead of to IP 0 would take them (INC CX) for the next
// instruction.
TEST(X86Cpu, A16BitIpWrapsToTheSegmentsStartInsideALine) {
  for (const bool fast : {true, false}) {
    SCOPED_TRACE(fast ? "fast paths" : "full path");
    PcBus bus;
    Cpu cpu(bus);
    bus.Poke(0x11005, {0x90, 0x90, 0x90, 0x41, 0x41, 0xF4});  // NOP x3 | INC CX x2, HLT
    bus.Poke(0x1008, {0x40, 0x40, 0xF4});                     // INC AX x2, HLT
    cpu.SetFlat32();
    cpu.set_fast_paths(fast);
    const Segment code16 = {0x08, 0x11008, 0xFFFF, false, cpu.segment(kCs).access};
    cpu.set_segment(kCs, code16);
    cpu.set_eip(0);
    ASSERT_EQ(cpu.Run(3), 3u);  // INC CX x2, HLT at 11008h
    ASSERT_EQ(cpu.reg(kEcx), 2u);
    Segment wrapping = code16;
    wrapping.base = 0x1008;
    cpu.set_segment(kCs, wrapping);
    for (int pass = 0; pass < 2; ++pass) {  // the second from the predecoded copies
      cpu.set_halted(false);
      cpu.set_eip(0xFFFD);
      cpu.set_reg(kEax, 0);
      EXPECT_EQ(cpu.Run(6), 6u);  // NOP x3, then at IP 0: INC AX x2, HLT
      EXPECT_EQ(cpu.reg(kEax), 2u);
      EXPECT_EQ(cpu.reg(kEcx), 2u);
      EXPECT_EQ(cpu.eip(), 3u);
    }
  }
}

// Task switches by JMP, CALL (to a TSS and through a task gate), INT n, an exception and IRET, in
// 32- and 16-bit TSSs; faults in the old task and in the new one (tasks.S says what each does).
TEST(X86Cpu, TaskSwitchRomFromResetToHlt) {
  Rom rom("tasks");
  const Cpu& cpu = rom.cpu;
  ASSERT_TRUE(cpu.halted()) << rom.State();
  constexpr uint32_t kResults = 0xA000;
  const auto result = [&](uint32_t offset) { return rom.Long(kResults + offset); };
  // B, entered by a far JMP to its TSS.
  EXPECT_EQ(result(0x00), 0x30u);            // TR
  EXPECT_EQ(result(0x04) & kCr0Ts, kCr0Ts);  // the switch set CR0.TS
  EXPECT_EQ(result(0x08), 0x1DA7A001u);      // DS from its LDT (base 120000h)
  EXPECT_EQ(result(0x0C), 0xBBBB0001u);      // 100000h through B's page directory
  EXPECT_EQ(result(0x10), 0xB4u);            // EBX from B's TSS
  EXPECT_EQ(result(0x20), 0xA1u);            // A's EAX came back from its TSS
  EXPECT_EQ(result(0x24), 0xA7u);            // and EDI
  // B, called through the task gate: nested.
  EXPECT_EQ(result(0x14) & flag::kNT, flag::kNT);
  EXPECT_EQ(result(0x18) & 0xFFFF, 0x28u);  // B's back link: A
  // The 16-bit task C, run by INT 50h and by a CALL to its TSS.
  EXPECT_EQ(rom.Word(kResults + 0x40), 2);
  EXPECT_EQ(rom.Word(kResults + 0x42), 0xE000);  // SP from C's TSS
  EXPECT_EQ(rom.Word(kResults + 0x44) & flag::kNT, flag::kNT);
  EXPECT_EQ(rom.Word(kResults + 0x46), 0);  // FS: null
  // Task D, the #GP handler: two error codes on its own stack.
  EXPECT_EQ(result(0x60), 2u);
  EXPECT_EQ(result(0x64), 0x1230u);  // a selector beyond the GDT
  EXPECT_EQ(result(0x68), 0x28u);    // a JMP to A's own busy TSS
  EXPECT_EQ(result(0x90), 0x78u);    // #TS: TSS F's limit is too small
  // Task E: the #NP for its DS came in task E, at its first instruction.
  EXPECT_EQ(result(0x84), 0x70u);
  EXPECT_EQ(result(0x88), rom.Symbol("task_e"));
  EXPECT_EQ(result(0x80), 0x10u);
  // Back in A: TR, CR0.TS; the busy bits in the GDT (copied to 3000h): only A's.
  EXPECT_EQ(result(0x2C), 0x28u);
  EXPECT_EQ(result(0x28) & kCr0Ts, kCr0Ts);
  EXPECT_EQ(rom.bus.ByteAt(0x3000 + 0x28 + 5), 0x8B);  // A: busy
  EXPECT_EQ(rom.bus.ByteAt(0x3000 + 0x30 + 5), 0x89);  // B: available again
  EXPECT_EQ(rom.bus.ByteAt(0x3000 + 0x38 + 5), 0x81);  // C
  EXPECT_EQ(rom.bus.ByteAt(0x3000 + 0x50 + 5), 0x89);  // D
  EXPECT_EQ(rom.bus.ByteAt(0x3000 + 0x68 + 5), 0x89);  // E
  // B's image, saved by its IRET: NT cleared in it.
  EXPECT_EQ(rom.Long(0x2100 + 0x24) & flag::kNT, 0u);
  EXPECT_EQ(cpu.eflags() & flag::kNT, 0u);
}

// V86 mode entered by IRET and by a task switch; IOPL-sensitive instructions, the I/O bitmap,
// interrupts to ring 0 and the frames they push, what is #UD there (v86.S says what each does).
TEST(X86Cpu, Virtual8086RomFromResetToHlt) {
  Rom rom("v86");
  const Cpu& cpu = rom.cpu;
  ASSERT_TRUE(cpu.halted()) << rom.State();
  constexpr uint32_t kResults = 0x6000, kData = 0x9000;  // ring 0's records, the 8086 data
  const auto result = [&](uint32_t offset) { return rom.Long(kResults + offset); };
  const uint32_t v86_code = rom.Symbol("v86_code");
  // #GP(0) for CLI, STI, PUSHF, POPF, INT 21h, IRET, two denied ports, HLT, MOV from CR0 and
  // INT 7Fh with IOPL 0; with IOPL 3 a denied port still, then gates to ring 3 and conforming
  // code (error code: the code segment's selector).
  ASSERT_EQ(result(0x80), 14u);
  for (uint32_t i = 0; i < 12; ++i) EXPECT_EQ(result(0x84 + 4 * i), 0u) << i;
  EXPECT_EQ(result(0x84 + 4 * 12), 0x18u);
  EXPECT_EQ(result(0x84 + 4 * 13), 0x38u);
  EXPECT_EQ(result(0x30), 3u);  // #UD: LAR, ARPL, SLDT
  // INT3 went to its handler whatever IOPL; the IP after it.
  EXPECT_EQ(result(0x20), rom.Symbol("after_int3") - v86_code);
  // INT 21h with IOPL 3: the V86 DS on the ring 0 stack, EFLAGS with VM and IOPL 3, ES null,
  // and the nine doublewords (and the handler's EAX) on the TSS's ring 0 stack.
  EXPECT_EQ(result(0x10), 0x0900u);
  EXPECT_EQ(result(0x14) & (flag::kVM | flag::kIOPL), flag::kVM | flag::kIOPL);
  EXPECT_EQ(result(0x18), 0u);
  EXPECT_EQ(result(0x1C), 0x90000u - 10 * 4);
  // The 8086 program's own records.
  EXPECT_EQ(rom.Word(kData + 0), 0x1234);
  EXPECT_EQ(rom.Word(kData + 2) & 0x3200, 0x3200);  // PUSHF: IOPL 3, IF
  EXPECT_EQ(rom.Word(kData + 4) & 0x3200, 0x3000);  // POPF changed IF, not IOPL
  EXPECT_EQ(rom.Long(kData + 6) & (flag::kVM | flag::kIOPL | flag::kIF),
            flag::kIOPL | flag::kIF);       // PUSHFD: VM reads as 0
  EXPECT_EQ(rom.Word(kData + 14), 0x5678);  // the far procedure ran
  EXPECT_EQ(rom.Word(kData + 10), 0x0700);  // SS after the 8086 IRET
  EXPECT_EQ(rom.Word(kData + 12), 2);       // the V86 task ran twice
  // INT 22h through a 16-bit gate: a frame of words, SP 18 bytes below the TSS's ESP0.
  const uint16_t frame[9] = {static_cast<uint16_t>(rom.Symbol("v86_far") - v86_code),
                             0x0800,
                             0,
                             0x1000,
                             0x0700,
                             0x0900,
                             0x0900,
                             0,
                             0};
  for (int i = 0; i < 9; ++i) {
    if (i == 2) {
      EXPECT_EQ(rom.Word(kResults + 0x44) & 0x3000, 0x3000);  // FLAGS: IOPL 3 (no VM bit)
    } else {
      EXPECT_EQ(rom.Word(kResults + 0x40 + 2 * i), frame[i]) << i;
    }
  }
  EXPECT_EQ(result(0x54), 0x90000u - 18);
  // The V86 task: its TSS's EFLAGS has VM; it came back through the task gate, nested.
  EXPECT_EQ(result(0x60) & flag::kNT, flag::kNT);
  EXPECT_EQ(result(0x64) & (flag::kVM | flag::kIOPL), flag::kVM | flag::kIOPL);
  EXPECT_EQ(result(0x68), 0x0800u);
  EXPECT_EQ(result(0x6C), 0x30u);
  EXPECT_FALSE(cpu.v86());
  EXPECT_EQ(cpu.cpl(), 0);
  // Two writes to port 80h (allowed by the bitmap), none to E9h (denied).
  int port80 = 0;
  for (const cat::OwnedRecord& r : rom.bus.log()) {
    if (r.kind != cat::RecordKind::kPortWrite || r.address == 0xF4) continue;
    EXPECT_EQ(r.address, 0x80u);
    ++port80;
  }
  EXPECT_EQ(port80, 2);
}
#endif

}  // namespace
}  // namespace citcat::x86
