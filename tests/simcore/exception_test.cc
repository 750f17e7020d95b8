// Exceptions, interrupts, ERET and the mode rules, from the R4000/R4400 manuals.
#include "gtest/gtest.h"
#include "tests/simcore/cpu_fixture.h"

namespace citcat::mips {
namespace {

using namespace as;  // NOLINT

constexpr uint64_t kGeneral = 0xFFFFFFFF80000180ull;
constexpr uint64_t kXRefill = 0xFFFFFFFF80000080ull;

uint32_t ExcCodeOf(const Cpu& cpu) { return (cpu.cause() >> 2) & 31; }

class ExceptionTest : public CpuTest {};

TEST_F(ExceptionTest, SyscallEntersGeneralVectorWithEpcAndExl) {
  Load({Nop(), Syscall()});
  const uint64_t bc = cpu_->branch_count();
  cpu_->Run(2);
  EXPECT_EQ(cpu_->pc(), kGeneral);
  EXPECT_EQ(cpu_->epc(), kCode + 4);
  EXPECT_EQ(ExcCodeOf(*cpu_), kExcSys);
  EXPECT_TRUE(cpu_->status() & kStatusExl);
  EXPECT_FALSE(cpu_->cause() & kCauseBd);
  EXPECT_EQ(cpu_->branch_count(), bc + 1);  // exception entry counts
}

TEST_F(ExceptionTest, DelaySlotExceptionSetsBdAndEpcOfBranch) {
  Load({Beq(0, 0, 4), Break()});
  const uint64_t bc = cpu_->branch_count();
  cpu_->Run(2);
  EXPECT_EQ(cpu_->pc(), kGeneral);
  EXPECT_EQ(ExcCodeOf(*cpu_), kExcBp);
  EXPECT_TRUE(cpu_->cause() & kCauseBd);
  EXPECT_EQ(cpu_->epc(), kCode);
  EXPECT_EQ(cpu_->branch_count(), bc + 1);  // the branch did not retire; the entry did
}

TEST_F(ExceptionTest, OverflowLeavesDestinationUnchanged) {
  Load({Lui(1, 0x7FFF), Ori(1, 1, 0xFFFF), Addiu(2, 0, 77), Add(2, 1, 1)});
  cpu_->Run(4);
  EXPECT_EQ(ExcCodeOf(*cpu_), kExcOv);
  EXPECT_EQ(R(2), 77u);
  EXPECT_EQ(cpu_->epc(), kCode + 12);
}

TEST_F(ExceptionTest, TrapAndReserved) {
  Load({Teq(0, 0)});
  cpu_->Run(1);
  EXPECT_EQ(ExcCodeOf(*cpu_), kExcTr);
  cpu_->WriteCp0(kCp0Status, 0);
  Put(kCode + 0x40, {0x70000000});  // opcode 0x1C: reserved on the R4400
  cpu_->SetPc(kCode + 0x40);
  cpu_->Run(1);
  EXPECT_EQ(ExcCodeOf(*cpu_), kExcRi);
}

TEST_F(ExceptionTest, DataAddressErrors) {
  Load({Lui(1, 0x8010), Lw(2, 2, 1)});
  cpu_->Run(2);
  EXPECT_EQ(ExcCodeOf(*cpu_), kExcAdel);
  EXPECT_EQ(cpu_->bad_vaddr(), 0xFFFFFFFF80100002ull);
  cpu_->WriteCp0(kCp0Status, 0);
  Put(kCode + 0x40, {Sh(2, 1, 1)});
  cpu_->SetPc(kCode + 0x40);
  cpu_->Run(1);
  EXPECT_EQ(ExcCodeOf(*cpu_), kExcAdes);
  EXPECT_EQ(cpu_->bad_vaddr(), 0xFFFFFFFF80100001ull);
}

TEST_F(ExceptionTest, MisalignedJumpTargetFaultsOnFetchAfterDelaySlot) {
  Load({Lui(1, 0x8000), Ori(1, 1, 0x2002), Jr(1), Addiu(3, 0, 3)});
  cpu_->Run(5);
  EXPECT_EQ(R(3), 3u);  // the delay slot ran
  EXPECT_EQ(ExcCodeOf(*cpu_), kExcAdel);
  EXPECT_EQ(cpu_->epc(), 0xFFFFFFFF80002002ull);
  EXPECT_EQ(cpu_->bad_vaddr(), 0xFFFFFFFF80002002ull);
  EXPECT_FALSE(cpu_->cause() & kCauseBd);
}

TEST_F(ExceptionTest, BootstrapVectorsWhenBev) {
  cpu_->WriteCp0(kCp0Status, kStatusBev);
  Load({Syscall()});
  cpu_->Run(1);
  EXPECT_EQ(cpu_->pc(), 0xFFFFFFFFBFC00380ull);
}

TEST_F(ExceptionTest, NestedExceptionKeepsEpcAndUsesGeneralVector) {
  cpu_->WriteCp0(kCp0Status, kStatusExl);
  cpu_->WriteCp0(kCp0Epc, 0x1234);
  Load({Lw(1, 0, 0)});  // kuseg address 0 with an empty TLB: a refill, but EXL=1
  cpu_->Run(1);
  EXPECT_EQ(cpu_->pc(), kGeneral);
  EXPECT_EQ(ExcCodeOf(*cpu_), kExcTlbl);
  EXPECT_EQ(cpu_->epc(), 0x1234u);
}

TEST_F(ExceptionTest, EretReturnsAndCountsAsControlTransfer) {
  Load({Syscall(), Addiu(1, 0, 1)});
  Put(kGeneral, {Mfc0(26, kCp0Epc), Addiu(26, 26, 4), Mtc0(26, kCp0Epc), Eret()});
  cpu_->Run(1);
  const uint64_t bc = cpu_->branch_count();
  cpu_->Run(4);
  EXPECT_EQ(cpu_->pc(), kCode + 4);
  EXPECT_FALSE(cpu_->status() & kStatusExl);
  EXPECT_EQ(cpu_->branch_count(), bc + 1);
}

TEST_F(ExceptionTest, EretWithErlUsesErrorEpc) {
  cpu_->WriteCp0(kCp0Status, kStatusErl);
  cpu_->WriteCp0(kCp0ErrorEpc, kCode + 0x20);
  Load({Eret()});
  cpu_->Run(1);
  EXPECT_EQ(cpu_->pc(), kCode + 0x20);
  EXPECT_FALSE(cpu_->status() & kStatusErl);
}

TEST_F(ExceptionTest, UserModeRules) {
  // User mode (KSU=2), 32-bit: kernel addresses, CP0 and 64-bit operations are refused.
  const uint32_t user = 2u << kStatusKsuShift;
  cpu_->WriteCp0(kCp0Status, user);
  cpu_->SetPc(0x1000);  // kuseg: needs a TLB entry, so run from a mapped page
  cpu_->WriteCp0(kCp0EntryHi, 0);
  // VA 0x1000 is the odd page of the pair at VPN2 0: map it to physical 0x5000.
  cpu_->WriteCp0(kCp0EntryLo0, 0x6);
  cpu_->WriteCp0(kCp0EntryLo1, 5 << 6 | 0x3 << 3 | 0x6);  // PFN 5, C=3, D, V
  cpu_->WriteCp0(kCp0Index, 0);
  cpu_->WriteCp0(kCp0PageMask, 0);
  Put(0x80005000, {Lui(1, 0x8000), Lw(2, 0, 1)});
  cpu_->Run(2);
  EXPECT_EQ(ExcCodeOf(*cpu_), kExcTlbl) << "no TLB entry written yet";
  // Write the TLB through the kernel's path.
  cpu_->WriteCp0(kCp0Status, 0);
  Put(kCode, {Tlbwi()});
  cpu_->SetPc(kCode);
  cpu_->Run(1);
  cpu_->WriteCp0(kCp0Status, user);
  cpu_->SetPc(0x1000);
  cpu_->Run(2);
  EXPECT_EQ(ExcCodeOf(*cpu_), kExcAdel);
  EXPECT_EQ(cpu_->bad_vaddr(), 0xFFFFFFFF80000000ull);

  // Each case in a fresh I-cache line: RAM written behind the I-cache is not seen (as on the
  // hardware), so reusing one address would run the old instruction.
  uint32_t line = 0;
  auto run_user = [&](uint32_t word, uint32_t status) {
    line += 0x20;
    cpu_->WriteCp0(kCp0Status, status);
    Put(0x80005000 + line, {word});
    cpu_->SetPc(0x1000 + line);
    cpu_->Run(1);
  };
  run_user(Mfc0(1, kCp0Status), user);
  EXPECT_EQ(ExcCodeOf(*cpu_), kExcCpu);
  EXPECT_EQ((cpu_->cause() >> 28) & 3, 0u);
  run_user(Mtc1(1, 0), user);
  EXPECT_EQ(ExcCodeOf(*cpu_), kExcCpu);
  EXPECT_EQ((cpu_->cause() >> 28) & 3, 1u);
  run_user(Daddu(1, 2, 3), user);
  EXPECT_EQ(ExcCodeOf(*cpu_), kExcRi);
  run_user(Ld(1, 0, 0), user);
  EXPECT_EQ(ExcCodeOf(*cpu_), kExcRi);
  // UX=1 enables 64-bit operations in user mode.
  cpu_->set_gpr(2, 1);
  cpu_->set_gpr(3, 2);
  run_user(Daddu(1, 2, 3), user | kStatusUx);
  EXPECT_EQ(R(1), 3u);
  EXPECT_FALSE(cpu_->status() & kStatusExl);
  // CU0=1 makes CP0 usable in user mode.
  run_user(Mfc0(1, kCp0PrId), user | kStatusCu0);
  EXPECT_EQ(R(1), 0x0440u);
}

TEST_F(ExceptionTest, ThirtyTwoBitKernelRejectsNonSignExtendedAddresses) {
  cpu_->set_gpr(1, 0x0000000080000000ull);  // not a sign-extended 32-bit address
  Load({Lw(2, 0, 1)});
  cpu_->Run(1);
  EXPECT_EQ(ExcCodeOf(*cpu_), kExcAdel);
  // With KX=1 the same address is in xkuseg (mapped): a TLB refill via the XTLB vector.
  cpu_->WriteCp0(kCp0Status, kStatusKx);
  cpu_->SetPc(kCode);
  cpu_->Run(1);
  EXPECT_EQ(ExcCodeOf(*cpu_), kExcTlbl);
  EXPECT_EQ(cpu_->pc(), kXRefill);
}

TEST_F(ExceptionTest, XkphysIsUnmappedIn64BitKernelMode) {
  cpu_->WriteCp0(kCp0Status, kStatusKx);
  bus_.PokeWordBE(0x200000, 0xCAFEF00D);
  cpu_->set_gpr(1, 0x9000000000200000ull);  // xkphys, cache algorithm 2 (uncached)
  cpu_->set_gpr(2, 0x9800000000200000ull);  // xkphys, algorithm 3 (cached)
  Load({Lw(3, 0, 1), Lw(4, 0, 2)});
  cpu_->Run(2);
  EXPECT_EQ(R(3), 0xFFFFFFFFCAFEF00Dull);
  EXPECT_EQ(R(4), 0xFFFFFFFFCAFEF00Dull);
}

TEST_F(ExceptionTest, InterruptTakenAtBoundaryWhenEnabled) {
  Load({Addiu(1, 0, 1), Addiu(2, 0, 2), Addiu(3, 0, 3)});
  cpu_->WriteCp0(kCp0Status, kStatusIe | (1u << (kStatusImShift + 4)));  // IM4
  cpu_->Run(1);
  cpu_->SetInterruptLine(4, true);
  cpu_->Run(1);
  EXPECT_EQ(cpu_->pc(), kGeneral);
  EXPECT_EQ(ExcCodeOf(*cpu_), kExcInt);
  EXPECT_EQ(cpu_->epc(), kCode + 4);
  EXPECT_EQ(R(2), 0u);
  EXPECT_TRUE(cpu_->cause() & (1u << (kCauseIpShift + 4)));
}

TEST_F(ExceptionTest, InterruptMaskedByImIeExlErl) {
  Load({Nop(), Nop(), Nop(), Nop(), Nop()});
  cpu_->SetInterruptLine(3, true);
  const uint32_t im3 = 1u << (kStatusImShift + 3);
  for (uint32_t status :
       {im3, kStatusIe, kStatusIe | im3 | kStatusExl, kStatusIe | im3 | kStatusErl}) {
    cpu_->WriteCp0(kCp0Status, status);
    cpu_->SetPc(kCode);
    cpu_->Run(1);
    EXPECT_EQ(cpu_->pc(), kCode + 4) << std::hex << status;
  }
}

TEST_F(ExceptionTest, SoftwareInterruptAndDelaySlotInterrupt) {
  Load({Beq(0, 0, 4), Nop()});
  cpu_->WriteCp0(kCp0Status, kStatusIe | (1u << kStatusImShift));  // IM0
  cpu_->Run(1);                                                    // the branch
  cpu_->WriteCp0(kCp0Cause, 1u << kCauseIpShift);                  // IP0 by software
  cpu_->Run(1);
  EXPECT_EQ(ExcCodeOf(*cpu_), kExcInt);
  EXPECT_TRUE(cpu_->cause() & kCauseBd);  // taken before a delay slot: EPC names the branch
  EXPECT_EQ(cpu_->epc(), kCode);
}

class FakeClock : public Cp0Hooks {
 public:
  uint32_t ReadCount(Cpu&) override { return ++reads * 1000; }
  void WriteCount(Cpu&, uint32_t v) override { count_written = v; }
  void WriteCompare(Cpu& cpu, uint32_t v) override {
    compare_written = v;
    cpu.SetInterruptLine(7, false);  // writing Compare acknowledges the timer
  }
  uint32_t reads = 0, count_written = 0, compare_written = 0;
};

TEST_F(ExceptionTest, CountAndCompareGoThroughHooks) {
  FakeClock clock;
  cpu_->set_cp0_hooks(&clock);
  cpu_->SetInterruptLine(7, true);
  Load({Mfc0(1, kCp0Count), Mfc0(2, kCp0Count), Addiu(3, 0, 55), Mtc0(3, kCp0Compare),
        Mtc0(3, kCp0Count)});
  cpu_->Run(5);
  EXPECT_EQ(R(1), 1000u);
  EXPECT_EQ(R(2), 2000u);
  EXPECT_EQ(clock.compare_written, 55u);
  EXPECT_EQ(clock.count_written, 55u);
  EXPECT_FALSE(cpu_->cause() & (1u << (kCauseIpShift + 7)));
}

TEST_F(ExceptionTest, Cp0WriteMasks) {
  cpu_->WriteCp0(kCp0Cause, 0xFFFFFFFF);
  EXPECT_EQ(cpu_->cause(), 0x300u);  // only IP0/IP1
  cpu_->WriteCp0(kCp0PageMask, 0xFFFFFFFF);
  EXPECT_EQ(cpu_->ReadCp0(kCp0PageMask), 0x01FFE000u);
  cpu_->WriteCp0(kCp0EntryHi, ~uint64_t{0});
  EXPECT_EQ(cpu_->ReadCp0(kCp0EntryHi), 0xC00000FFFFFFE0FFull);
  cpu_->WriteCp0(kCp0EntryLo0, ~uint64_t{0});
  EXPECT_EQ(cpu_->ReadCp0(kCp0EntryLo0), 0x3FFFFFFFu);
  cpu_->WriteCp0(kCp0Index, 0xFFFFFFFF);
  EXPECT_EQ(cpu_->ReadCp0(kCp0Index), 0x3Fu);
  cpu_->WriteCp0(kCp0Wired, 0xFFFF);
  EXPECT_EQ(cpu_->ReadCp0(kCp0Wired), 0x3Fu);
  cpu_->WriteCp0(kCp0Context, ~uint64_t{0});
  EXPECT_EQ(cpu_->ReadCp0(kCp0Context), ~uint64_t{0} << 23);
  cpu_->WriteCp0(kCp0BadVAddr, 5);
  EXPECT_EQ(cpu_->ReadCp0(kCp0BadVAddr), 0u);  // read-only
  cpu_->WriteCp0(kCp0PrId, 5);
  EXPECT_EQ(cpu_->ReadCp0(kCp0PrId), 0x0440u);
  cpu_->WriteCp0(kCp0WatchHi, 0xFF);
  EXPECT_EQ(cpu_->ReadCp0(kCp0WatchHi), 0xFu);
  cpu_->WriteCp0(kCp0Config, 0);
  EXPECT_EQ(cpu_->ReadCp0(kCp0Config) & 0xFFF0, 0x8000u | (2u << 9) | (2u << 6) | 0x30u);
}

}  // namespace
}  // namespace citcat::mips

namespace citcat::mips {
namespace {

class Recorder : public simcore::Observer {
 public:
  explicit Recorder(Cpu& cpu) : cpu_(cpu) {}
  void OnInstruction(uint64_t, std::span<const uint8_t>) override {}
  void OnEvent(simcore::EventKind kind, uint32_t code, uint64_t pc) override {
    kinds.push_back(kind);
    codes.push_back(static_cast<ExcCode>(code));
    pcs.push_back(pc);
    if (stop) cpu_.RequestStop();
  }
  std::vector<simcore::EventKind> kinds;
  std::vector<ExcCode> codes;
  std::vector<uint64_t> pcs;
  bool stop = false;

 private:
  Cpu& cpu_;
};

class ObserverTest : public CpuTest {};

TEST_F(ObserverTest, SeesEveryEntryAndCanStopTheRun) {
  Recorder rec(*cpu_);
  rec.stop = true;
  cpu_->set_observer(&rec);
  Put(kCode, {as::Nop(), as::Syscall(), as::Nop()});
  EXPECT_EQ(cpu_->Run(100), 2u);  // stopped right after the exception entry
  ASSERT_EQ(rec.codes.size(), 1u);
  EXPECT_EQ(rec.kinds[0], simcore::EventKind::kFault);
  EXPECT_EQ(rec.codes[0], kExcSys);
  EXPECT_EQ(rec.pcs[0], kCode + 4);
}

// What the core reports of each access: the value as the register holds it, from its own load
// and store paths (a partial-word access: the aligned unit and the whole register), and nothing
// for a store that did not happen.
class AccessLog : public simcore::Observer {
 public:
  struct Access {
    uint64_t address;
    int size;
    bool write;
    uint64_t value;
    bool operator==(const Access&) const = default;
  };
  void OnInstruction(uint64_t, std::span<const uint8_t>) override {}
  void OnAccess(uint64_t address, int size, bool write, uint64_t value) override {
    accesses.push_back({address, size, write, value});
  }
  std::vector<Access> accesses;
};

TEST_F(ObserverTest, AccessesCarryTheRegistersValue) {
  bus_.PokeWordBE(Phys(kData), 0x8899AABB);
  cpu_->set_gpr(1, kData);
  cpu_->set_gpr(3, 0x11223344);
  AccessLog log;
  cpu_->set_observer(&log);
  Put(kCode, {as::Lb(2, 0, 1),   // the byte, as loaded (sign-extended in $2)
              as::Sb(3, 5, 1),   // the byte stored
              as::Lwl(3, 1, 1),  // the aligned word, the merged register
              as::Sc(3, 8, 1),   // LLbit clear: fails, stores nothing ($3 = 0)
              as::Ll(4, 0, 1), as::Sc(3, 12, 1)});
  cpu_->Run(6);
  using A = AccessLog::Access;
  EXPECT_EQ(log.accesses, (std::vector<A>{{kData, 1, false, 0x88},
                                          {kData + 5, 1, true, 0x44},
                                          {kData, 4, false, 0xFFFFFFFF99AABB44},
                                          {kData, 4, false, 0x8899AABB},
                                          {kData + 12, 4, true, 0}}));
  EXPECT_EQ(cpu_->gpr(3), 1u);  // the second SC stored
}

TEST_F(ObserverTest, WatchpointOnStore) {
  // WatchLo: PAddr0 = PA[31:3], W (bit 0) enabled.
  cpu_->WriteCp0(kCp0WatchLo, 0x100008 | 1);
  cpu_->set_gpr(1, kData);
  Put(kCode, {as::Lw(2, 8, 1), as::Sw(2, 0, 1), as::Sw(2, 12, 1)});
  cpu_->Run(3);
  EXPECT_EQ((cpu_->cause() >> 2) & 31, kExcWatch);
  EXPECT_EQ(cpu_->epc(), kCode + 8);  // the load (R not enabled) and the other word pass
}

}  // namespace
}  // namespace citcat::mips

namespace citcat::mips {
namespace {

class PcRecorder : public simcore::Observer {
 public:
  void OnInstruction(uint64_t pc, std::span<const uint8_t> bytes) override {
    pcs.push_back(pc);
    words.push_back(BytesWord(bytes.data(), /*big_endian=*/true));
  }
  std::vector<uint64_t> pcs;
  std::vector<uint32_t> words;
};

class RunControlTest : public CpuTest {};

TEST_F(RunControlTest, ObserverSeesEachInstructionWithItsWord) {
  Put(kCode, {as::Addiu(1, 0, 1), as::Beq(0, 0, 2), as::Nop(), as::Break(), as::Addiu(2, 0, 2)});
  PcRecorder rec;
  cpu_->set_observer(&rec);
  cpu_->Run(4);
  EXPECT_EQ(rec.pcs, (std::vector<uint64_t>{kCode, kCode + 4, kCode + 8, kCode + 16}));
  EXPECT_EQ(rec.words[0], as::Addiu(1, 0, 1));
  EXPECT_EQ(R(2), 2u);
}

TEST_F(RunControlTest, StopsAtBranchCount) {
  // A loop of two branches; stop once the count has advanced by 3.
  Put(kCode, {as::Beq(0, 0, 1), as::Nop(), as::Beq(0, 0, -3), as::Nop()});
  cpu_->set_stop_branch_count(cpu_->branch_count() + 3);
  const uint64_t steps = cpu_->Run(1000);
  EXPECT_EQ(steps, 6u);
  EXPECT_EQ(cpu_->pc(), kCode + 8);  // after the third branch took effect
}

TEST_F(RunControlTest, LoadCp0SetsReadOnlyFieldsWithoutMasks) {
  cpu_->LoadCp0(kCp0BadVAddr, 0x1234);
  cpu_->LoadCp0(kCp0Cause, 0x8000007C);
  cpu_->LoadCp0(kCp0Random, 20);
  EXPECT_EQ(cpu_->bad_vaddr(), 0x1234u);
  EXPECT_EQ(cpu_->cause(), 0x8000007Cu);
  EXPECT_EQ(cpu_->random(), 20u);
}

}  // namespace
}  // namespace citcat::mips

namespace citcat::mips {
namespace {

class ResetTest : public CpuTest {};

TEST_F(ResetTest, NmiEntersResetVectorAndEretReturns) {
  Put(kCode,
      {as::Addiu(1, 0, 1), as::Beq(0, 0, 2), as::Addiu(2, 0, 2), as::Nop(), as::Addiu(3, 0, 3)});
  cpu_->Run(2);  // stop between the branch and its delay slot
  ASSERT_TRUE(cpu_->in_delay_slot());
  const uint64_t bc = cpu_->branch_count();
  cpu_->Nmi();
  EXPECT_EQ(cpu_->pc(), 0xFFFFFFFFBFC00000ull);
  EXPECT_EQ(cpu_->error_epc(), kCode + 4);  // the branch
  EXPECT_EQ(cpu_->status() & (kStatusBev | kStatusSr | kStatusErl),
            kStatusBev | kStatusSr | kStatusErl);
  EXPECT_EQ(cpu_->branch_count(), bc + 1);
  // The handler (in uncached boot ROM space: RAM here is 8 MB, so put it in kseg1 RAM instead)
  // returns with ERET to ErrorEPC: the branch runs again with its delay slot.
  cpu_->WriteCp0(kCp0Status, kStatusErl);
  Put(0xFFFFFFFFA0002000ull, {as::Eret()});
  cpu_->SetPc(0xFFFFFFFFA0002000ull);
  cpu_->Run(4);
  EXPECT_EQ(R(2), 2u);
  EXPECT_EQ(R(3), 3u);
  EXPECT_FALSE(cpu_->status() & kStatusErl);
}

}  // namespace
}  // namespace citcat::mips
