// The i486 half of the pipeline without the traced PC: the core runs a small program
// (i486_guest/loop.S) on a bus that records every transaction, with INTR asserted at chosen
// steps, and that record, behind the state dump of its starting state, is the CAT. Extract must
// give back the state and key every interrupt; replay must regenerate the CAT exactly, with
// interrupts inside REP string instructions; a damaged schedule must diverge.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "aes/aes_util.h"
#include "cat_parser/reader.h"
#include "cat_parser/writer.h"
#include "extract/extractor.h"
#include "extract/i486_contract.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "ims/ims_util.h"
#include "machine/elf_loader.h"
#include "machine/i486/contract.h"
#include "machine/i486/system.h"
#include "replay/i486_adapter.h"
#include "replay/replay.h"
#include "replay/verify.h"
#include "simcore/bus.h"
#include "simcore/x86/cpu.h"
#include "systems/system.h"
#include "tests/cat_parser/cat_test_util.h"
#include "tests/support/instruction_log_check.h"

namespace citcat::replay {
namespace {

using cat::OwnedRecord;
using ::testing::HasSubstr;

constexpr uint64_t kRam = 4 << 20;
constexpr uint32_t kGdt = 0x7000, kIdt = 0x8000, kStack = 0x9000;
constexpr uint8_t kVector = 0x20;
constexpr uint16_t kPowerOff = 0x5C8;

const ReplayMachine& Machine() {
  static const ReplayMachine m{
      .machine = ims::MACHINE_I486,
      .make_core = MakeI486Adapter,
      .header = [](const ims::InitialMachineState& ims) { return *systems::CatHeaderFor(ims); },
      .starts_after = extract::I486Contract::EndsStateDump,
      .state_dump = extract::I486Contract::StateDump};
  return m;
}

// RAM and the reserved area, every transaction recorded; port reads give a changing byte (the
// outside world), interrupt acknowledges kVector.
class RecordingBus final : public simcore::Bus {
 public:
  void Read(const cat::BusRecord& r, std::span<uint8_t> data) override {
    if (r.kind == cat::RecordKind::kInterruptAck) {
      data[0] = kVector;
    } else if (r.kind == cat::RecordKind::kPortRead) {
      std::fill(data.begin(), data.end(), static_cast<uint8_t>(0x40 + records.size()));
    } else {
      for (size_t i = 0; i < data.size(); ++i) data[i] = *At(r.address + i);
    }
    records.emplace_back(r);
  }
  void Write(const cat::BusRecord& r) override {
    if (r.kind == cat::RecordKind::kPortWrite) {
      powered_off |= r.address == kPowerOff;
    } else {
      for (size_t i = 0; i < r.data.size(); ++i) *At(r.address + i) = r.data[i];
    }
    records.emplace_back(r);
  }
  bool Peek(uint64_t address, std::span<uint8_t> data) const override {
    if (address + data.size() > kRam) return false;
    std::copy_n(ram.begin() + address, data.size(), data.begin());
    return true;
  }
  void Poke(uint64_t address, std::span<const uint8_t> bytes) {
    std::copy(bytes.begin(), bytes.end(), ram.begin() + address);
  }

  std::vector<uint8_t> ram = std::vector<uint8_t>(kRam);
  std::vector<uint8_t> reserved = std::vector<uint8_t>(i486::kReservedSize);
  std::vector<OwnedRecord> records;
  bool powered_off = false;

 private:
  uint8_t* At(uint64_t a) {
    if (a - i486::kReservedBase < i486::kReservedSize) return &reserved[a - i486::kReservedBase];
    return &ram[a % kRam];
  }
};

ims::X86Segment SegmentOf(const x86::Segment& s) {
  ims::X86Segment out;
  out.set_selector(s.selector);
  out.set_base(s.base);
  out.set_limit(s.limit);
  // A flat segment's descriptor: G set for a 4 GB limit, D/B as the cache says.
  out.set_access_rights(s.access | (s.big ? 0x4000 : 0) | (s.limit > 0xFFFFF ? 0x8000 : 0));
  return out;
}

// The IMS of the capturing core's state, as a state dump would give it.
ims::InitialMachineState Save(const x86::Cpu& cpu) {
  ims::InitialMachineState ims;
  ims.set_format_version(ims::kFormatVersion);
  ims::MachineDescription& d = *ims.mutable_description();
  d.set_machine(ims::MACHINE_I486);
  d.set_byte_order(ims::BYTE_ORDER_LITTLE);
  d.set_memory_bytes(kRam);
  d.set_rom_bytes(0x10000);
  d.set_producer("i486 replay test");
  ims::Cache& c = *d.add_caches();
  c.set_level(1);
  c.set_type(ims::Cache::TYPE_UNIFIED);
  c.set_size_bytes(8192);
  c.set_line_bytes(16);
  c.set_ways(4);
  c.set_write_through(true);
  ims::X86State& s = *ims.mutable_x86();
  for (int i = 0; i < 8; ++i) s.add_gpr(cpu.reg(i));
  s.set_eip(cpu.eip());
  s.set_eflags(cpu.eflags());
  *s.mutable_es() = SegmentOf(cpu.segment(x86::kEs));
  *s.mutable_cs() = SegmentOf(cpu.segment(x86::kCs));
  *s.mutable_ss() = SegmentOf(cpu.segment(x86::kSs));
  *s.mutable_ds() = SegmentOf(cpu.segment(x86::kDs));
  *s.mutable_fs() = SegmentOf(cpu.segment(x86::kFs));
  *s.mutable_gs() = SegmentOf(cpu.segment(x86::kGs));
  s.mutable_ldtr();
  s.mutable_tr();
  s.mutable_gdtr()->set_base(cpu.gdtr().base);
  s.mutable_gdtr()->set_limit(cpu.gdtr().limit);
  s.mutable_idtr()->set_base(cpu.idtr().base);
  s.mutable_idtr()->set_limit(cpu.idtr().limit);
  s.set_cr0(cpu.cr0());
  s.set_cr2(cpu.cr2());
  s.set_cr3(cpu.cr3());
  for (uint32_t v : cpu.dr()) s.add_dr(v);
  s.add_dr(cpu.dr6());
  s.add_dr(cpu.dr7());
  const x86::FpuState f = cpu.fpu().state();
  ims::X87State& x = *s.mutable_x87();
  x.set_control_word(f.cw);
  x.set_status_word(f.sw);
  x.set_tag_word(f.tw);
  for (const x86::Float80& r : f.physical) {
    std::string bytes(10, '\0');
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(r.signif >> (8 * i));
    bytes[8] = static_cast<char>(r.sign_exp);
    bytes[9] = static_cast<char>(r.sign_exp >> 8);
    x.add_st(bytes);
  }
  return ims;
}

void PutDescriptor(RecordingBus& bus, uint32_t at, uint8_t access) {
  const uint8_t d[8] = {0xFF, 0xFF, 0, 0, 0, access, 0xCF, 0};  // base 0, limit 4 GB
  bus.Poke(at, d);
}

struct Capture {
  std::string cat_path;
  ims::InitialMachineState ims;  // the state the capture started from
  uint64_t interrupts = 0;
};

// Runs the program, asserting INTR for one step at each of `at_steps` and letting the disk's
// bus master write 16 bytes into the program's source buffer (snooping the cache, as the traced
// PC does) before each of `dma_steps`, and writes the CAT.
Capture CaptureLoop(const std::vector<uint64_t>& at_steps, const std::string& name,
                    const std::vector<uint64_t>& dma_steps = {}) {
  Capture out;
  RecordingBus bus;
  auto elf = machine::LoadElfFile(CITCAT_I486_LOOP);
  EXPECT_TRUE(elf.ok()) << elf.status();
  if (!elf.ok()) return out;
  for (const machine::ElfSegment& s : elf->segments) {
    std::vector<uint8_t> bytes = s.data;
    bytes.resize(s.memsz, 0);
    bus.Poke(s.vaddr, bytes);
  }
  // GDT: null, code 08h, data 10h (accessed, as loads leave them); IDT: vector 20h, an
  // interrupt gate to `handler`.
  PutDescriptor(bus, kGdt + 8, 0x9B);
  PutDescriptor(bus, kGdt + 16, 0x93);
  const uint32_t handler = static_cast<uint32_t>(elf->FindSymbol("handler")->value);
  const uint8_t gate[8] = {
      static_cast<uint8_t>(handler),       static_cast<uint8_t>(handler >> 8), 0x08, 0, 0, 0x8E,
      static_cast<uint8_t>(handler >> 16), static_cast<uint8_t>(handler >> 24)};
  bus.Poke(kIdt + 8 * kVector, gate);

  x86::Cpu cpu(bus);
  cpu.SetFlat32(0);
  cpu.set_cr0(x86::kCr0Pe | x86::kCr0Et | x86::kCr0Ne);
  cpu.set_gdtr({kGdt, 23, 0});
  cpu.set_idtr({kIdt, 0x7FF, 0});
  cpu.set_reg(x86::kEsp, kStack);
  cpu.set_eip(static_cast<uint32_t>(elf->entry));
  cpu.set_eflags(x86::flag::kIF);
  cpu.set_branch_count(5000);
  cpu.set_deliver_interrupts(true);
  cpu.set_cacheable([](uint32_t page) { return page < kRam; });
  out.ims = Save(cpu);
  out.ims.mutable_start()->set_branch_count(cpu.branch_count());

  const uint32_t src = static_cast<uint32_t>(elf->FindSymbol("src")->value);
  size_t next = 0, next_dma = 0;
  for (uint64_t step = 0; !bus.powered_off && step < 2'000'000; ++step) {
    if (next_dma < dma_steps.size() && dma_steps[next_dma] == step) {
      const uint32_t at = src + 16 * (next_dma % 8);
      std::vector<uint8_t> data(16, static_cast<uint8_t>(0xA0 + next_dma++));
      bus.Poke(at, data);
      cpu.cache().SnoopInvalidate(at);
      cat::BusRecord r;
      r.kind = cat::RecordKind::kDmaWrite;
      r.master = machine::pc::kMasterBusMasterIde;
      r.address = at;
      r.branch_count = cpu.branch_count();
      r.data = data;
      bus.records.emplace_back(r);
    }
    const bool assert_intr = next < at_steps.size() && at_steps[next] == step;
    if (assert_intr) ++next;
    cpu.SetIntr(assert_intr);
    const size_t before = bus.records.size();
    cpu.Run(1);
    for (size_t i = before; i < bus.records.size(); ++i) {
      out.interrupts += bus.records[i].kind == cat::RecordKind::kInterruptAck;
    }
    EXPECT_FALSE(cpu.exception().pending) << "at step " << step;
    if (cpu.exception().pending) break;
  }
  EXPECT_TRUE(bus.powered_off);

  const cat::CatHeader header = *systems::CatHeaderFor(out.ims);
  auto dump = extract::I486Contract::StateDump(header, out.ims);
  EXPECT_TRUE(dump.ok()) << dump.status();
  std::vector<OwnedRecord> records = *dump;
  records.insert(records.end(), bus.records.begin(), bus.records.end());
  out.cat_path = absl::StrCat(::testing::TempDir(), "/i486-", name, "-", getpid(), ".cat");
  std::ofstream(out.cat_path, std::ios::binary) << [&] {
    const std::vector<uint8_t> bytes = cat::testing::EncodeCat(header, records);
    return std::string(bytes.begin(), bytes.end());
  }();
  return out;
}

extract::Extraction ExtractFrom(const Capture& c) {
  auto reader = cat::CatReader::Open(c.cat_path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  extract::I486Contract contract;
  auto x = extract::Extract(**reader, contract);
  EXPECT_TRUE(x.ok()) << x.status();
  return x.ok() ? *x : extract::Extraction{};
}

// Interrupts every `every` steps from `first` on, with some jitter.
std::vector<uint64_t> Steps(uint64_t first, uint64_t every, int count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint64_t> steps;
  uint64_t at = first;
  for (int i = 0; i < count; ++i) {
    steps.push_back(at);
    at += every / 2 + rng() % every;
  }
  return steps;
}

const Capture& Default() {
  static const Capture* c = new Capture(CaptureLoop(Steps(50, 700, 50, 1), "default"));
  return *c;
}

TEST(I486Replay, ExtractGivesBackTheStateAndKeysEveryInterrupt) {
  const Capture& c = Default();
  ASSERT_GT(c.interrupts, 30u);
  const extract::Extraction x = ExtractFrom(c);
  std::string diff;
  google::protobuf::util::MessageDifferencer d;
  d.ReportDifferencesToString(&diff);
  EXPECT_TRUE(d.Compare(c.ims.x86(), x.ims.x86())) << diff;
  EXPECT_EQ(x.ims.start().branch_count(), c.ims.start().branch_count());
  EXPECT_EQ(static_cast<uint64_t>(x.aes.interrupts_size()), c.interrupts);
  int in_rep = 0;
  for (const aes::Interrupt& irq : x.aes.interrupts()) {
    EXPECT_EQ(irq.vector(), kVector);
    in_rep += irq.rep_remaining() > 1 && irq.rep_remaining() < 97;
  }
  EXPECT_GT(in_rep, 10);  // many land inside REP MOVSB or REP STOSD
  EXPECT_GT(x.aes.device_io_size(), 5);
}

TEST(I486Replay, ReplayRegeneratesTheCaptureExactly) {
  const Capture& c = Default();
  const extract::Extraction x = ExtractFrom(c);
  const std::string regenerated =
      absl::StrCat(::testing::TempDir(), "/i486-regenerated-", getpid(), ".cat");
  auto writer = cat::CatWriter::Create(regenerated, *systems::CatHeaderFor(x.ims));
  ASSERT_TRUE(writer.ok());
  ReplayOptions options;
  options.regenerated = writer->get();
  auto summary = Replay(Machine(), x.ims, x.aes, options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_TRUE((*writer)->Finish().ok());
  EXPECT_EQ(summary->interrupts, c.interrupts);
  EXPECT_GT(summary->instructions, 5000u);
  EXPECT_GT(summary->steps, 30000u);  // REP iterations are steps, not instructions
  auto v = CompareCats(Machine(), c.cat_path, regenerated);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(v->identical) << v->report;
  auto again = ReplayAgainst(Machine(), c.cat_path, x.ims, x.aes, {}, nullptr);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->identical) << again->report;
}

// With no trace and no sink, the core writes each instruction into replay's ring from its own
// run loops, fast paths included (CoreAdapter::LogInstructions), instead of telling an observer of
// each: the same instructions (every REP iteration, faulting ones again), in the same order, with
// the same index, PC and bytes. An archive's instruction checksum is made from them.
TEST(I486Replay, TheInstructionLogIsWhatAnObserverIsTold) {
  const extract::Extraction x = ExtractFrom(Default());
  testing::ExpectTheLogIsWhatAnObserverIsTold(
      [&](const ReplayOptions& options) { return Replay(Machine(), x.ims, x.aes, options); },
      30000);
}

// Keyed by what replay needed, an interrupt says how many steps after the core's first arrival at
// its EIP it was taken only where that is not 0: between two iterations of a REP string
// instruction, and then in place of ECX. The schedule with those keys replays the capture
// exactly; without them it does not.
TEST(I486Replay, InterruptKeysCountRepIterationsOnlyWhereNeeded) {
  const Capture& c = Default();
  const extract::Extraction x = ExtractFrom(c);
  std::vector<aes::Interrupt> keys;
  ReplayOptions options;
  options.on_interrupt_key = [&keys](const aes::Interrupt& key) { keys.push_back(key); };
  auto summary = Replay(Machine(), x.ims, x.aes, options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_EQ(keys.size(), static_cast<size_t>(x.aes.interrupts_size()));
  aes::EventSchedule keyed = x.aes, first_arrival = x.aes;
  int with_steps = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const aes::Interrupt& irq = x.aes.interrupts(static_cast<int>(i));
    EXPECT_EQ(keys[i].branch_count(), irq.branch_count());
    EXPECT_EQ(keys[i].pc(), irq.pc());
    EXPECT_EQ(keys[i].vector(), irq.vector());
    EXPECT_FALSE(keys[i].has_cat_record());
    EXPECT_FALSE(keys[i].has_rep_remaining());
    with_steps += keys[i].has_steps_after_arrival();
    *keyed.mutable_interrupts(static_cast<int>(i)) = keys[i];
    first_arrival.mutable_interrupts(static_cast<int>(i))->clear_rep_remaining();
  }
  EXPECT_GT(with_steps, 10);  // the program spends most of its time in REP MOVSB and REP STOSD
  EXPECT_LT(with_steps, static_cast<int>(keys.size()));
  keyed.set_format_version(aes::kPackedFormatVersion);
  auto v = ReplayAgainst(Machine(), c.cat_path, x.ims, keyed, {}, nullptr);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(v->identical) << v->report;
  v = ReplayAgainst(Machine(), c.cat_path, x.ims, first_arrival, {}, nullptr);
  EXPECT_TRUE(!v.ok() || !v->identical);
}

// DMA into a buffer the program keeps in the cache: the traced PC's bus master snoops the lines
// away, and replay must too, or the program would copy stale bytes.
TEST(I486Replay, DmaSnoopsTheCache) {
  const Capture c = CaptureLoop(Steps(100, 900, 20, 9), "dma", Steps(3000, 2500, 12, 10));
  const extract::Extraction x = ExtractFrom(c);
  ASSERT_EQ(x.aes.dma_size(), 12);
  auto v = ReplayAgainst(Machine(), c.cat_path, x.ims, x.aes, {}, nullptr);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(v->identical) << v->report;
}

TEST(I486Replay, ManySchedules) {
  for (uint32_t seed = 2; seed < 8; ++seed) {
    const Capture c =
        CaptureLoop(Steps(seed * 13, 200 + 150 * seed, 40, seed), absl::StrCat("s", seed));
    const extract::Extraction x = ExtractFrom(c);
    auto v = ReplayAgainst(Machine(), c.cat_path, x.ims, x.aes, {}, nullptr);
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_TRUE(v->identical) << "seed " << seed << ": " << v->report;
  }
}

// A damaged schedule diverges at the right place, or verify finds the difference.
TEST(I486Replay, DamagedSchedulesAreCaught) {
  const Capture& c = Default();
  const extract::Extraction x = ExtractFrom(c);
  int rep_irq = -1;
  for (int i = 0; i < x.aes.interrupts_size(); ++i) {
    if (x.aes.interrupts(i).rep_remaining() > 2 && x.aes.interrupts(i).rep_remaining() < 90) {
      rep_irq = i;
      break;
    }
  }
  ASSERT_GE(rep_irq, 0);
  struct Case {
    const char* what;
    std::function<void(aes::EventSchedule&)> edit;
    const char* message;
  };
  const Case cases[] = {
      {"an interrupt dropped",
       [](aes::EventSchedule& a) { a.mutable_interrupts()->DeleteSubrange(3, 1); }, ""},
      {"moved by one REP iteration",
       [&](aes::EventSchedule& a) {
         a.mutable_interrupts(rep_irq)->set_rep_remaining(a.interrupts(rep_irq).rep_remaining() -
                                                          1);
       },
       "interrupt-ack"},  // the core runs one more iteration where the capture took it
      {"a wrong vector", [](aes::EventSchedule& a) { a.mutable_interrupts(5)->set_vector(0x21); },
       ""},
      {"a port read changed",
       [](aes::EventSchedule& a) { (*a.mutable_device_io(2)->mutable_data())[0] ^= 1; }, ""},
      {"an empty schedule", [](aes::EventSchedule& a) { a.Clear(); }, ""},
  };
  for (const Case& k : cases) {
    aes::EventSchedule aes = x.aes;
    k.edit(aes);
    aes.set_format_version(aes::kFormatVersion);
    auto v = ReplayAgainst(Machine(), c.cat_path, x.ims, aes, {}, nullptr);
    const bool caught = !v.ok() || !v->identical;
    EXPECT_TRUE(caught) << k.what;
    if (v.ok() && !v->identical) {
      EXPECT_THAT(v->report, HasSubstr(k.message)) << k.what;
    }
  }
  // A register edited in the IMS fails verify through the state dump, even one (EBP) the
  // program never uses.
  ims::InitialMachineState ims = x.ims;
  ims.mutable_x86()->set_gpr(x86::kEbp, 0x1234);
  auto v = ReplayAgainst(Machine(), c.cat_path, ims, x.aes, {}, nullptr);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_FALSE(v->identical);
  EXPECT_THAT(v->report, HasSubstr("cpu-state+0x"));
}

}  // namespace
}  // namespace citcat::replay
