// Writers work out a record's static part once per form (Record::form), and the R4400 recorder
// keeps one record per instruction word at a PC. These tests check that nothing leaks from one
// execution into another: every format is written twice from the same records, once as they
// come and once from copies without a form (memoized_and_not.h), and the bytes must be the same,
// across code that rewrites itself, the same code run in kernel and in user mode, exceptions and
// interrupts in the middle, and filters. kernel_form_test.cc does the same on the guest kernel.
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "simcore/mips/cpu.h"
#include "simcore/ram_bus.h"
#include "tests/simcore/mips_asm.h"
#include "tests/traces/memoized_and_not.h"
#include "traces/mips_recorder.h"
#include "traces/mips_registers.h"

namespace citcat::traces {
namespace {

using namespace mips::as;  // NOLINT: the test programs read as assembly

// Keeps the records (their forms, modes, accesses and events), passes them on.
class Keep final : public TraceSink {
 public:
  explicit Keep(std::vector<TraceSink*> next) : next_(std::move(next)) {}
  absl::Status Consume(const Record& r) override {
    records.push_back(r);
    for (TraceSink* s : next_) {
      if (absl::Status st = s->Consume(r); !st.ok()) return st;
    }
    return absl::OkStatus();
  }
  absl::Status Finish() override {
    for (TraceSink* s : next_) {
      if (absl::Status st = s->Finish(); !st.ok()) return st;
    }
    return absl::OkStatus();
  }
  // The records at `pc`, in order.
  std::vector<Record> At(uint64_t pc) const {
    std::vector<Record> v;
    for (const Record& r : records) {
      if (r.pc == pc) v.push_back(r);
    }
    return v;
  }
  std::vector<Record> records;

 private:
  std::vector<TraceSink*> next_;
};

// ---- the writers alone, on records built by hand ----

Record Load(uint64_t form, uint64_t pc) {
  Record r;
  r.form = form;
  r.pc = pc;
  const uint8_t bytes[4] = {0x8F, 0xA4, 0x00, 0x10};  // lw $a0, 16($sp)
  r.SetBytes(bytes);
  r.next_pc = pc + 4;
  r.fallthrough = pc + 4;
  r.registers = &MipsRegisters();
  r.mnemonic = "lw";
  r.immediate = 16;
  r.AddRead(29);
  r.AddWritten(4);
  r.accesses.push_back({0x1000, 4, false, true, 7});
  return r;
}

TEST(TraceForms, WritersTakeOnlyTheStaticPartFromTheForm) {
  // One form in every dynamic variant: modes, addresses, values, a failed access, events.
  std::vector<Record> records;
  Record r = Load(5, 0x400000);
  records.push_back(r);
  r.index = 1;
  r.mode = Mode::kUser;
  r.privilege = 2;
  r.accesses[0] = {0x2008, 4, false, true, 0xFFFFFFFF};
  records.push_back(r);
  r.accesses.clear();
  r.taken_before = {true, 0, 0x400000, "interrupt"};
  records.push_back(r);
  r.taken_before = Event();
  r.accesses.push_back({0x3000, 4, false, false, 0});
  records.push_back(r);
  MemoizedAndNot both;
  for (const Record& each : records) ASSERT_TRUE(both.Consume(each).ok());
  ASSERT_TRUE(both.Finish().ok());
  both.ExpectSame();
}

TEST(TraceForms, AFormThatTookAnothersSlotIsWorkedOutAgain) {
  // 8192 apart: the writers' caches hold them in the same slot.
  Record a = Load(1, 0x400000), b = Load(1 + 8192, 0x500000);
  b.mnemonic = "lb";
  MemoizedAndNot both;
  for (const Record& r : {a, b, a, b}) ASSERT_TRUE(both.Consume(r).ok());
  ASSERT_TRUE(both.Finish().ok());
  both.ExpectSame();
  EXPECT_NE(both.text().find("0000000000500000"), std::string::npos);
}

// ---- the R4400 recorder on a core ----

// A core on 8 MB of RAM in kernel mode, exception vectors at 0x80000180, observed by a
// MipsRecorder that feeds `sink`, as replay's adapter does.
class Core {
 public:
  explicit Core(TraceSink& sink) : bus_(8 << 20), cpu_(bus_), recorder_(sink, cpu_) {
    cpu_.WriteCp0(mips::kCp0Status, 0);
    cpu_.set_observer(&recorder_);
  }

  // Words at a kseg0 or kseg1 address, straight into RAM.
  void Put(uint64_t vaddr, std::initializer_list<uint32_t> words) {
    uint64_t pa = vaddr & 0x1FFFFFFF;
    for (uint32_t w : words) {
      bus_.PokeWordBE(pa, w);
      pa += 4;
    }
  }
  // Steps from `pc` until the PC reaches `end`; `before_step` may raise interrupt lines.
  void Run(uint64_t pc, uint64_t end, const std::function<void(mips::Cpu&)>& before_step = {}) {
    cpu_.SetPc(pc);
    for (int i = 0; i < 10000 && cpu_.pc() != end; ++i) {
      if (before_step) before_step(cpu_);
      cpu_.Run(1);
    }
    ASSERT_EQ(cpu_.pc(), end);
  }
  void Finish(TraceSink& sink) {
    recorder_.Flush();
    ASSERT_TRUE(recorder_.status().ok());
    ASSERT_TRUE(sink.Finish().ok());
  }
  mips::Cpu& cpu() { return cpu_; }
  const MipsRecorder& recorder() const { return recorder_; }

 private:
  simcore::RamBus bus_;
  mips::Cpu cpu_;
  MipsRecorder recorder_;
};

constexpr uint64_t kVector = 0xFFFFFFFF80000180;
constexpr uint64_t kCode = 0xFFFFFFFF80001000;
constexpr uint64_t kData = 0xFFFFFFFF80100000;
constexpr int kV0 = 2, kV1 = 3, kA0 = 4, kA1 = 5, kA2 = 6, kT0 = 8, kT1 = 9, kT2 = 10, kT3 = 11,
              kK0 = 26, kK1 = 27;

TEST(TraceForms, CodeThatRewritesItselfGetsANewForm) {
  // Uncached code (kseg1, every fetch from memory) overwrites the word at `site` with
  // `lw $v1, 20($t3)`, which loads itself, after running it once as `addiu $v0, $v0, 1`.
  constexpr uint64_t kBase = 0xFFFFFFFFA0001000, kSite = kBase + 5 * 4;
  const uint32_t load = Lw(kV1, 20, kT3);
  MemoizedAndNot both;
  FormChecker checker;
  Keep keep({&both, &checker});
  Core core(keep);
  core.Put(kBase, {Lui(kT2, load >> 16), Ori(kT2, kT2, load & 0xFFFF), Lui(kT3, 0xA000),
                   Ori(kT3, kT3, 0x1000), Addiu(kT1, 0, 2),
                   /* site: */ Addiu(kV0, kV0, 1), Sw(kT2, 20, kT3), Addiu(kT1, kT1, -1),
                   Bne(kT1, 0, -4), Nop()});
  core.Run(kBase, kBase + 10 * 4);
  core.Finish(keep);
  const std::vector<Record> site = keep.At(kSite);
  ASSERT_EQ(site.size(), 2u);
  EXPECT_EQ(site[0].mnemonic, "addiu");
  EXPECT_TRUE(site[0].accesses.empty());
  EXPECT_EQ(site[1].mnemonic, "lw");
  ASSERT_EQ(site[1].accesses.size(), 1u);
  EXPECT_EQ(site[1].accesses[0].value, load);  // the word it loads is itself
  EXPECT_NE(site[0].form, site[1].form);
  EXPECT_EQ(checker.broken(), 0u);
  both.ExpectSame();
  EXPECT_NE(both.text().find("lw $v1, 0x14($t3)"), std::string::npos) << both.text();
}

TEST(TraceForms, TheSameCodeInKernelAndUserModeKeepsItsForm) {
  // kuseg 0x1000 mapped to physical 0x1000 (the odd page of the first TLB pair), run in kernel
  // mode, then in user mode; filtered by mode too.
  constexpr uint64_t kUser = 0x1000;
  MemoizedAndNot both, users({Mode::kUser}), kernels({Mode::kKernel});
  FormChecker checker;
  Keep keep({&both, &users, &kernels, &checker});
  Core core(keep);
  const uint64_t lo1 = (uint64_t{1} << 6) | (3 << 3) | 0x7;  // PFN 1, cached, D, V, G
  core.cpu().tlb().Write(0, 0, 0, 0, lo1);
  core.cpu().FlushTranslations();
  // kCode is physical 0x1000, kUser's page; the data is in the same page.
  core.Put(kCode, {Addiu(kA0, 0, 0x1800), Lw(kT0, 0, kA0), Addiu(kT1, kT0, 1), Sw(kT1, 4, kA0)});
  core.Run(kUser, kUser + 16);
  core.cpu().WriteCp0(mips::kCp0Status, 2 << mips::kStatusKsuShift);
  core.Run(kUser, kUser + 16);
  core.Finish(keep);
  const std::vector<Record> load = keep.At(kUser + 4);
  ASSERT_EQ(load.size(), 2u);
  EXPECT_EQ(load[0].form, load[1].form);
  EXPECT_EQ(load[0].mode, Mode::kKernel);
  EXPECT_EQ(load[1].mode, Mode::kUser);
  EXPECT_EQ(load[1].privilege, 2);
  EXPECT_EQ(checker.broken(), 0u);
  for (const MemoizedAndNot* m : {&both, &users, &kernels}) m->ExpectSame();
  EXPECT_NE(both.text().find(" k 0000000000001004 "), std::string::npos) << both.text();
  EXPECT_NE(both.text().find(" u 0000000000001004 "), std::string::npos) << both.text();
  EXPECT_EQ(users.text().find(" k "), std::string::npos) << users.text();
}

TEST(TraceForms, AnExceptionInTheMiddleLeavesTheFormWhole) {
  // The same load at offsets 0, 2 (an address error: the handler skips it) and 4.
  MemoizedAndNot both;
  FormChecker checker;
  Keep keep({&both, &checker});
  Core core(keep);
  core.Put(kVector,
           {Mfc0(kK0, mips::kCp0Epc), Addiu(kK0, kK0, 4), Mtc0(kK0, mips::kCp0Epc), Eret()});
  core.Put(kCode, {Lui(kA1, 0x8010), Addiu(kT1, 0, 3), Addiu(kA2, 0, 0),
                   /* loop: */ Addu(kA0, kA1, kA2), Lw(kT0, 0, kA0), Addiu(kA2, kA2, 2),
                   Addiu(kT1, kT1, -1), Bne(kT1, 0, -5), Nop()});
  core.Put(kData, {0x11111111, 0x22222222});
  core.Run(kCode, kCode + 9 * 4);
  core.Finish(keep);
  const std::vector<Record> load = keep.At(kCode + 4 * 4);
  ASSERT_EQ(load.size(), 3u);
  EXPECT_TRUE(load[1].raised.present);
  EXPECT_TRUE(load[1].accesses.empty());
  EXPECT_TRUE(load[1].written.empty());
  for (const Record* r : {&load[0], &load[2]}) {
    EXPECT_FALSE(r->raised.present);
    ASSERT_EQ(r->accesses.size(), 1u);
    EXPECT_TRUE(r->accesses[0].value_known);
    ASSERT_EQ(r->written.size(), 1u);
    EXPECT_EQ(r->written[0], kT0);
  }
  EXPECT_EQ(load[0].accesses[0].value, 0x11111111u);
  EXPECT_EQ(load[2].accesses[0].value, 0x22222222u);
  EXPECT_EQ(load[0].form, load[2].form);
  EXPECT_EQ(checker.broken(), 0u);
  both.ExpectSame();
}

TEST(TraceForms, AnInterruptBelongsToOneExecutionOnly) {
  // An interrupt before the loop's second round; later the handler's first instruction runs
  // again without one (a plain jump there, ERET then acting as a return to EPC).
  MemoizedAndNot both;
  FormChecker checker;
  Keep keep({&both, &checker});
  Core core(keep);
  core.Put(kVector, {Addiu(kV1, kV1, 1), Eret()});
  const uint64_t end = kCode + 10 * 4;
  core.Put(kCode, {Addiu(kT1, 0, 3), /* loop: */ Addiu(kV0, kV0, 1), Addiu(kT1, kT1, -1),
                   Bne(kT1, 0, -3), Nop(), Lui(kK1, 0x8000), Ori(kK1, kK1, (end & 0xFFFF)),
                   Mtc0(kK1, mips::kCp0Epc), J(kVector & 0x0FFFFFFF), Nop()});
  core.cpu().WriteCp0(mips::kCp0Status, mips::kStatusIe | (1u << (mips::kStatusImShift + 2)));
  int rounds = 0;
  core.Run(kCode, end, [&](mips::Cpu& cpu) {
    if (cpu.pc() == kCode + 4 && ++rounds == 2) cpu.SetInterruptLine(2, true);
    if (cpu.pc() == kVector) cpu.SetInterruptLine(2, false);
  });
  core.Finish(keep);
  const std::vector<Record> handler = keep.At(kVector);
  ASSERT_EQ(handler.size(), 2u);
  EXPECT_TRUE(handler[0].taken_before.present);
  EXPECT_FALSE(handler[1].taken_before.present);
  EXPECT_EQ(handler[0].form, handler[1].form);
  EXPECT_EQ(keep.At(kCode + 4).size(), 3u);  // the interrupted instruction ran once per round
  EXPECT_EQ(checker.broken(), 0u);
  both.ExpectSame();
}

}  // namespace
}  // namespace citcat::traces
