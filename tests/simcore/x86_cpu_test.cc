// The i486 core on what Unicorn cannot check: the state after RESET and the first fetch at the
// reset vector, real-mode interrupt delivery through the vector table and IRET, far transfers,
// and REP string instructions running one iteration per step.
#include <cstdint>
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
  // MOV TR3, EAX: the test registers are not modelled.
  PcBus bus;
  bus.Poke(0x1000, {0x0F, 0x26, 0xD8});
  Cpu cpu(bus);
  cpu.SetFlat32();
  cpu.set_eip(0x1000);
  EXPECT_EQ(cpu.Run(1), 0u);
  EXPECT_TRUE(cpu.exception().pending);
  EXPECT_TRUE(cpu.exception().unmodelled);
  EXPECT_EQ(cpu.eip(), 0x1000u);
}

#ifdef CITCAT_X86_ROMS
// A bare-metal ROM of tests/simcore/x86_roms/ in the top 64 KB, the core after RESET with
// exceptions and interrupts delivered; runs it to its HLT.
struct Rom {
  explicit Rom(const std::string& name) : cpu(bus) {
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
