// The replay engine on its own, driven by a scripted fake core instead of a real one: each kind of
// divergence the engine itself detects is reached without any machine's core, and a clean run
// regenerates the schedule's records in bus order with DMA, device and port input, an interrupt
// (with its acknowledge cycle) and register reads.
#include "replay/engine.h"

#include <memory>
#include <string>
#include <vector>

#include "aes/aes_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ims/ims_util.h"
#include "replay/replay.h"

namespace citcat::replay {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kMemory = 1 << 20;
constexpr uint64_t kDevice = 0x10000000;   // a memory-mapped device window
constexpr uint64_t kMailbox = 0x10001000;  // a reserved area
constexpr uint64_t kCode = 0x1000;         // the PC of step 0; each step is 4 bytes
constexpr uint64_t kHole = 0xA0000;        // a hole in main memory, as a PC has
constexpr uint64_t kHoleSize = 0x60000;

// One instruction of the fake core's program.
struct Step {
  enum Kind { kPlain, kBranch, kRead, kWrite, kRegister, kInterrupt } kind = kPlain;
  cat::RecordKind record = cat::RecordKind::kFill;
  uint64_t address = 0;
  std::vector<uint8_t> data;  // written bytes, or as many bytes as are read
  aes::RegisterRead::Register reg = aes::RegisterRead::REGISTER_MIPS_COUNT;
  bool acknowledge = true;  // an interrupt: with its acknowledge cycle
};

Step Plain() { return {}; }
Step Branch() {
  Step s;
  s.kind = Step::kBranch;
  return s;
}
Step Read(cat::RecordKind kind, uint64_t address, size_t size) {
  Step s;
  s.kind = Step::kRead;
  s.record = kind;
  s.address = address;
  s.data.resize(size);
  return s;
}
Step Write(cat::RecordKind kind, uint64_t address, std::vector<uint8_t> data) {
  Step s;
  s.kind = Step::kWrite;
  s.record = kind;
  s.address = address;
  s.data = std::move(data);
  return s;
}
Step RegisterRead(aes::RegisterRead::Register reg) {
  Step s;
  s.kind = Step::kRegister;
  s.reg = reg;
  return s;
}
// An interrupt the core takes by itself before the step's instruction.
Step SpontaneousInterrupt(bool acknowledge = true) {
  Step s;
  s.kind = Step::kInterrupt;
  s.acknowledge = acknowledge;
  return s;
}

// A core that runs a fixed program: step i is at PC kCode + 4 i. Past its end it loops on a
// branch, as an idle loop would. Taking an interrupt is an acknowledge cycle plus a step that
// counts as a control transfer.
class ScriptedCore final : public CoreAdapter {
 public:
  ScriptedCore(Engine& engine, bool observe, const std::vector<Step>& script,
               std::vector<std::vector<uint8_t>>& reads)
      : engine_(engine), observe_(observe), script_(script), reads_(reads) {}

  absl::Status Load(const ims::InitialMachineState& ims) override {
    bc_ = ims.start().branch_count();
    return absl::OkStatus();
  }
  void Run(uint64_t steps) override {
    stop_ = false;
    for (uint64_t i = 0; i < steps && !stop_; ++i) {
      Step();
      if (bc_ >= stop_bc_) break;
    }
  }
  void set_stop_branch_count(uint64_t count) override { stop_bc_ = count; }
  void RequestStop() override { stop_ = true; }
  uint64_t branch_count() const override { return bc_; }
  uint64_t retired() const override { return retired_; }
  uint64_t steps() const override { return retired_ + entries_; }
  uint64_t pc() const override { return kCode + 4 * next_; }
  void Inject(const aes::Interrupt& irq) override {
    while (!engine_.stopped() && bc_ == irq.branch_count() && pc() != irq.pc()) Run(1);
    if (engine_.stopped()) return;
    if (bc_ != irq.branch_count()) {
      engine_.Diverge("the fake core never reached the interrupt's boundary");
      return;
    }
    TakeInterrupt();
  }
  const char* key_pc_name() const override { return "return PC"; }
  std::string Disassemble(uint64_t pc, std::span<const uint8_t>) override {
    return absl::StrCat("step ", (pc - kCode) / 4);
  }
  absl::Status Finish() override { return absl::OkStatus(); }

 private:
  void Step() {
    const uint64_t pc = this->pc();
    const uint8_t bytes[4] = {0xAA, 0xBB, 0xCC, static_cast<uint8_t>(next_)};
    if (observe_) engine_.Instruction(retired_, pc, bytes);
    if (next_ >= script_.size()) {  // the idle loop
      ++retired_;
      ++bc_;
      return;
    }
    const struct Step& s = script_[next_];
    if (s.kind == Step::kInterrupt) {
      TakeInterrupt(s.acknowledge);
      ++next_;
      return;
    }
    cat::BusRecord r;
    r.kind = s.record;
    r.address = s.address;
    r.branch_count = bc_;
    switch (s.kind) {
      case Step::kPlain:
        break;
      case Step::kBranch:
        ++bc_;
        break;
      case Step::kRead: {
        std::vector<uint8_t> data(s.data.size());
        r.data = data;
        engine_.Read(r, data);
        reads_.push_back(data);
        break;
      }
      case Step::kWrite:
        r.data = s.data;
        engine_.Write(r);
        break;
      case Step::kRegister:
        if (const aes::RegisterRead* read = engine_.TakeRegisterRead(s.reg, "a register")) {
          reads_.push_back({static_cast<uint8_t>(read->value())});
        }
        break;
      case Step::kInterrupt:
        break;
    }
    ++next_;
    ++retired_;
  }

  void TakeInterrupt(bool acknowledge = true) {
    if (acknowledge) {
      uint8_t vector = 0;
      cat::BusRecord ack;
      ack.kind = cat::RecordKind::kInterruptAck;
      ack.branch_count = bc_;
      ack.data = std::span<const uint8_t>(&vector, 1);
      engine_.Read(ack, std::span<uint8_t>(&vector, 1));
      reads_.push_back({vector});
    }
    aes::Interrupt key;
    key.set_branch_count(bc_);
    key.set_pc(pc());
    ++bc_;
    ++entries_;
    engine_.InterruptTaken(key);
  }

  Engine& engine_;
  const bool observe_;
  const std::vector<struct Step>& script_;
  std::vector<std::vector<uint8_t>>& reads_;
  size_t next_ = 0;
  uint64_t bc_ = 0, retired_ = 0, entries_ = 0, stop_bc_ = ~uint64_t{0};
  bool stop_ = false;
};

cat::CatHeader Header(const ims::InitialMachineState&) {
  cat::CatHeader h;
  h.memory_bytes = kMemory;
  h.devices = {{"device", cat::WindowKind::kMemoryMapped, kDevice, 0x100}};
  h.magic = {{"mailbox", cat::WindowKind::kMemoryMapped, kMailbox, 16}};
  h.holes = {{kHole, kHoleSize}};
  return h;
}

std::string Bytes(std::initializer_list<uint8_t> b) { return std::string(b.begin(), b.end()); }

// A schedule, its IMS and a script, replayed with the fake core.
class EngineTest : public ::testing::Test {
 protected:
  EngineTest() {
    ims_.set_format_version(ims::kFormatVersion);
    aes_.set_format_version(aes::kFormatVersion);
    ims_.mutable_description()->set_memory_bytes(kMemory);
    ims_.mutable_start()->set_branch_count(10);
    ims_.mutable_start()->set_cat_record(3);
    ims::MemoryExtent* m = ims_.add_memory();
    m->set_address(0x2000);
    m->set_data(Bytes({1, 2, 3, 4}));
  }

  // The schedule of the clean script below.
  void CleanSchedule() {
    script_ = {
        Read(cat::RecordKind::kFill, 0x2000, 4),                // record 0: memory
        Branch(),                                               // bc 11
        Read(cat::RecordKind::kUncachedRead, kDevice + 4, 2),   // record 2 (after the DMA)
        Write(cat::RecordKind::kUncachedWrite, kDevice, {9}),   // record 3
        Read(cat::RecordKind::kPortRead, 0x60, 1),              // record 4
        Write(cat::RecordKind::kUncachedWrite, kMailbox, {7}),  // record 5: reserved area
        Read(cat::RecordKind::kUncachedRead, kMailbox, 1),      // record 6: reads back 7
        RegisterRead(aes::RegisterRead::REGISTER_MIPS_COUNT),   //
        Plain(),                                                // the interrupt comes here
        Branch(),                                               // bc 13 (the entry made 12)
        Read(cat::RecordKind::kFill, 0x3000, 4),                // record 8: DMA'd bytes
    };
    aes::DmaTransfer* d = aes_.add_dma();
    d->set_after_cpu_transactions(1);
    d->set_to_memory(true);
    d->set_device(1);
    d->set_address(0x3000);
    d->set_data(Bytes({5, 6, 7, 8}));
    d->set_branch_count(11);
    AddDevice(false, false, kDevice + 4, {0x12, 0x34});
    AddDevice(true, false, kDevice, {9});
    AddDevice(false, true, 0x60, {0x42});
    aes::RegisterRead* r = aes_.add_register_reads();
    r->set_register_(aes::RegisterRead::REGISTER_MIPS_COUNT);
    r->set_value(77);
    aes::Interrupt* irq = aes_.add_interrupts();
    irq->set_branch_count(11);
    irq->set_pc(kCode + 4 * 8);
    irq->set_vector(0x20);
    irq->set_cat_record(11);
    aes_.mutable_end()->set_branch_count(13);
    aes_.mutable_end()->set_cat_records(9);
    aes_.mutable_end()->set_cpu_transactions(8);
  }

  void AddDevice(bool write, bool port, uint64_t address, std::initializer_list<uint8_t> data) {
    aes::DeviceAccess* e = aes_.add_device_io();
    e->set_write(write);
    e->set_port(port);
    e->set_address(address);
    e->set_data(Bytes(data));
  }

  absl::StatusOr<ReplaySummary> Run(bool observe = false) {
    ReplayMachine machine;
    machine.header = [&](const ims::InitialMachineState& ims) {
      cat::CatHeader h = Header(ims);
      h.memory_bytes = ims.description().memory_bytes();
      h.roms = roms_;
      return h;
    };
    machine.make_core = [&](const ims::InitialMachineState&, Engine& engine,
                            bool watch) -> absl::StatusOr<std::unique_ptr<CoreAdapter>> {
      return std::make_unique<ScriptedCore>(engine, watch, script_, reads_);
    };
    options_.on_record = [&](const cat::BusRecord& r) {
      records_.push_back(cat::OwnedRecord(r));
      return absl::OkStatus();
    };
    if (observe) options_.on_instructions = [](std::span<const ExecutedInstruction>) {};
    reads_.clear();
    records_.clear();
    return Replay(machine, ims_, aes_, options_);
  }

  // The divergence report of a run that must diverge at `record`.
  std::string Divergence(uint64_t record) {
    absl::StatusOr<ReplaySummary> result = Run();
    EXPECT_TRUE(absl::IsAborted(result.status())) << result.status();
    EXPECT_EQ(DivergenceRecord(result.status()), record) << result.status();
    return std::string(result.status().message());
  }

  ims::InitialMachineState ims_;
  aes::EventSchedule aes_;
  ReplayOptions options_;
  std::vector<Step> script_;
  std::vector<std::vector<uint8_t>> reads_;
  std::vector<cat::OwnedRecord> records_;
  std::vector<cat::RomWindow> roms_;  // of the header
};

TEST_F(EngineTest, CleanRunRegeneratesTheScheduleInBusOrder) {
  CleanSchedule();
  absl::StatusOr<ReplaySummary> s = Run();
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->records, 9u);
  EXPECT_EQ(s->interrupts, 1u);
  EXPECT_EQ(s->dma, 1u);
  EXPECT_EQ(s->device_accesses, 3u);
  EXPECT_EQ(s->register_reads, 1u);
  EXPECT_EQ(s->end_branch_count, 13u);
  using K = cat::RecordKind;
  std::vector<K> kinds;
  for (const cat::OwnedRecord& r : records_) kinds.push_back(r.kind);
  EXPECT_EQ(kinds, (std::vector<K>{K::kFill, K::kDmaWrite, K::kUncachedRead, K::kUncachedWrite,
                                   K::kPortRead, K::kUncachedWrite, K::kUncachedRead,
                                   K::kInterruptAck, K::kFill}));
  // What the core read: the IMS's memory, the device queue, the port queue, the reserved area's
  // last store, the register history, the vector, and the DMA's bytes.
  EXPECT_EQ(reads_, (std::vector<std::vector<uint8_t>>{
                        {1, 2, 3, 4}, {0x12, 0x34}, {0x42}, {7}, {77}, {0x20}, {5, 6, 7, 8}}));
}

TEST_F(EngineTest, AnEmptyScheduleHasNoEndPoint) {
  script_ = {Branch()};
  EXPECT_THAT(Divergence(3), HasSubstr("no end point"));
}

TEST_F(EngineTest, ADeviceReadElsewhereThanTheQueueSays) {
  CleanSchedule();
  script_[2].address = kDevice + 8;
  std::string report = Divergence(5);
  EXPECT_THAT(report, HasSubstr("expected a read of 2 bytes at 0x10000004"));
  EXPECT_THAT(report, HasSubstr("the core made a read of 2 bytes at 0x10000008"));
  EXPECT_THAT(report, HasSubstr("instruction 2, PC 0x1008 (branch count 11)"));
}

TEST_F(EngineTest, ADeviceWriteWithOtherData) {
  CleanSchedule();
  script_[3].data = {8};
  EXPECT_THAT(Divergence(6), HasSubstr("the core made a write of 1 bytes at 0x10000000 data=08"));
}

TEST_F(EngineTest, APortReadWhereTheQueueHasAMemoryMappedOne) {
  CleanSchedule();
  aes_.mutable_device_io(2)->set_port(false);
  EXPECT_THAT(Divergence(7), HasSubstr("the core made a read of 1 bytes at port 0x60"));
}

TEST_F(EngineTest, MoreDeviceAccessesThanTheQueueHolds) {
  CleanSchedule();
  aes_.mutable_device_io()->RemoveLast();
  EXPECT_THAT(Divergence(7), HasSubstr("the schedule has no device access left"));
}

TEST_F(EngineTest, AQueuedDeviceAccessTheCoreNeverMakes) {
  CleanSchedule();
  AddDevice(false, false, kDevice + 12, {1});
  aes_.mutable_device_io(3)->set_cat_record(40);
  EXPECT_THAT(Divergence(40), HasSubstr("the core never made a read of 1 bytes at 0x1000000c"));
}

TEST_F(EngineTest, ARegisterReadOfAnotherKind) {
  CleanSchedule();
  script_[7].reg = aes::RegisterRead::REGISTER_MIPS_CAUSE;
  EXPECT_THAT(Divergence(10),
              HasSubstr("the core read a register, the schedule's next register read is Count = "
                        "0x4d"));
}

TEST_F(EngineTest, ARegisterReadTheCoreNeverMakes) {
  CleanSchedule();
  script_[7] = Plain();
  aes_.mutable_register_reads(0)->set_cat_record(33);
  EXPECT_THAT(Divergence(33), HasSubstr("the core never read Count = 0x4d"));
}

TEST_F(EngineTest, AnInterruptAtABoundaryTheCoreNeverReaches) {
  CleanSchedule();
  aes_.mutable_interrupts(0)->set_branch_count(10);    // before the branch at step 1, but...
  aes_.mutable_interrupts(0)->set_pc(kCode + 4 * 20);  // ...at a PC the core never reaches then
  EXPECT_THAT(Divergence(4), HasSubstr("never reached"));
}

TEST_F(EngineTest, AnInterruptTheScheduleDoesNotHave) {
  CleanSchedule();
  script_[8] = SpontaneousInterrupt(/*acknowledge=*/false);
  aes_.mutable_interrupts()->Clear();
  EXPECT_THAT(Divergence(10), HasSubstr("the core took an interrupt at branch count 11, return PC "
                                        "0x1020 that the schedule does not have"));
}

TEST_F(EngineTest, AnAcknowledgeCycleWithNoInterruptScheduled) {
  CleanSchedule();
  script_[8] = SpontaneousInterrupt();
  aes_.mutable_interrupts()->Clear();
  EXPECT_THAT(Divergence(10), HasSubstr("an interrupt acknowledge cycle with no interrupt"));
}

TEST_F(EngineTest, AnInterruptAtAnotherKey) {
  CleanSchedule();
  script_[7] = SpontaneousInterrupt();  // one step early, and no register read
  aes_.mutable_register_reads()->Clear();
  EXPECT_THAT(Divergence(11), HasSubstr("expected the interrupt at branch count 11, return PC "
                                        "0x1020 (reported at CAT record 11), the core took one at "
                                        "branch count 11, return PC 0x101c"));
}

TEST_F(EngineTest, AnInterruptNeverTaken) {
  CleanSchedule();
  aes::Interrupt* late = aes_.add_interrupts();
  late->set_branch_count(50);
  late->set_cat_record(60);
  EXPECT_THAT(Divergence(60), HasSubstr("the interrupt at branch count 50, return PC 0x0 "
                                        "(reported at CAT record 60) was never taken"));
}

TEST_F(EngineTest, ADmaReadOfMemoryThatDiffers) {
  CleanSchedule();
  aes_.mutable_dma(0)->set_to_memory(false);
  aes_.mutable_dma(0)->set_cat_record(4);
  EXPECT_THAT(Divergence(4), HasSubstr("the device's DMA read at 0x3000 got 05060708, the "
                                       "replayed memory holds 00000000"));
}

TEST_F(EngineTest, ADmaOutsideMainMemory) {
  CleanSchedule();
  aes_.mutable_dma(0)->set_address(kMemory - 2);
  aes_.mutable_dma(0)->set_cat_record(4);
  EXPECT_THAT(Divergence(4), HasSubstr("outside main memory"));
}

TEST_F(EngineTest, ADmaWithABranchCountThatDoesNotFitItsBusPosition) {
  CleanSchedule();
  aes_.mutable_dma(0)->set_branch_count(12);
  aes_.mutable_dma(0)->set_cat_record(4);
  EXPECT_THAT(Divergence(4), HasSubstr("has branch count 12, but at its bus position the core is "
                                       "between branch counts 10 and 11"));
}

TEST_F(EngineTest, ATransactionAfterTheEndOfTheSchedule) {
  CleanSchedule();
  // A DMA after the last CPU transaction makes replay run the core on to its branch count; a
  // CPU transaction on the way is beyond the end of the schedule.
  script_.push_back(Read(cat::RecordKind::kFill, 0x4000, 4));
  script_.push_back(Branch());
  aes::DmaTransfer* d = aes_.add_dma();
  d->set_after_cpu_transactions(8);
  d->set_to_memory(true);
  d->set_address(0x5000);
  d->set_data(Bytes({1}));
  d->set_branch_count(14);
  aes_.mutable_end()->set_branch_count(14);
  aes_.mutable_end()->set_cat_records(10);
  EXPECT_THAT(Divergence(12),
              HasSubstr("a fill of 4 bytes at 0x4000 after the end of the schedule"));
}

TEST_F(EngineTest, FewerRecordsThanTheEndPointSays) {
  CleanSchedule();
  aes_.mutable_end()->set_cat_records(10);
  EXPECT_THAT(Divergence(12), HasSubstr("the schedule has 10 records, replay regenerated 9"));
}

TEST_F(EngineTest, AnInstructionBoundStopsACoreThatNeverReachesTheEndPoint) {
  CleanSchedule();
  // One CPU transaction more than the script makes, and an end point far away: the core idles
  // on past its script and nothing else would stop it before the branch count came round.
  aes_.mutable_end()->set_cpu_transactions(9);
  aes_.mutable_end()->set_branch_count(uint64_t{1} << 50);
  options_.max_instructions = 1000;
  absl::StatusOr<ReplaySummary> s = Run();
  ASSERT_TRUE(absl::IsAborted(s.status())) << s.status();
  EXPECT_THAT(s.status().message(),
              HasSubstr("went past the 1000 instructions the manifest records (1001 retired"));
}

TEST_F(EngineTest, AnInstructionBoundIsReachedExactlyByACleanRun) {
  CleanSchedule();
  absl::StatusOr<ReplaySummary> free = Run();
  ASSERT_TRUE(free.ok()) << free.status();
  options_.max_instructions = free->instructions;
  absl::StatusOr<ReplaySummary> bounded = Run();
  ASSERT_TRUE(bounded.ok()) << bounded.status();
  EXPECT_EQ(bounded->instructions, free->instructions);
  options_.max_instructions = free->instructions - 1;
  EXPECT_TRUE(absl::IsAborted(Run().status()));
}

TEST_F(EngineTest, AFillOutsideMainMemory) {
  CleanSchedule();
  script_[0].address = kMemory;
  EXPECT_THAT(Divergence(3), HasSubstr("a fill at 0x100000 outside main memory"));
}

TEST_F(EngineTest, AFillInAHoleOfMainMemory) {
  CleanSchedule();
  script_[0].address = kHole + kHoleSize - 4;
  EXPECT_THAT(Divergence(3), HasSubstr("a fill at 0xffffc outside main memory"));
}

TEST_F(EngineTest, AnUncachedReadInAHoleIsADeviceRead) {
  CleanSchedule();
  script_[2].address = kHole + 0x8000;
  aes_.mutable_device_io(0)->set_address(kHole + 0x8000);
  absl::StatusOr<ReplaySummary> s = Run();
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(reads_[1], (std::vector<uint8_t>{0x12, 0x34}));
}

TEST_F(EngineTest, AnAccessAcrossTheEdgeOfAHoleIsNotMemory) {
  CleanSchedule();
  script_[0].address = kHole - 2;
  EXPECT_THAT(Divergence(3), HasSubstr("a fill at 0x9fffe outside main memory"));
}

TEST_F(EngineTest, TheReportNamesTheLastInstructionsWhenObserving) {
  CleanSchedule();
  script_[3].data = {8};
  absl::StatusOr<ReplaySummary> result = Run(/*observe=*/true);
  ASSERT_TRUE(absl::IsAborted(result.status()));
  const std::string report(result.status().message());
  EXPECT_THAT(report, HasSubstr("last instructions executed:"));
  EXPECT_THAT(report, HasSubstr("0000000000001008  aabbcc02  step 2"));
  EXPECT_THAT(report, HasSubstr("0000000000001000  aabbcc00  step 0"));
}

TEST_F(EngineTest, AFastRunThatDivergesIsRunAgainToNameTheInstructions) {
  CleanSchedule();
  script_[3].data = {8};
  EXPECT_THAT(Divergence(6), HasSubstr("step 3"));
}

TEST_F(EngineTest, AnImsOfAnotherMachineIsRefused) {
  CleanSchedule();
  ims_.mutable_description()->set_machine(ims::MACHINE_I486);
  absl::StatusOr<ReplaySummary> result = Run();
  EXPECT_TRUE(absl::IsInvalidArgument(result.status()));
  EXPECT_THAT(result.status().message(), HasSubstr("the IMS is a state of the i486"));
}

TEST_F(EngineTest, AMemoryExtentOutsideMainMemoryIsRefused) {
  CleanSchedule();
  ims_.mutable_memory(0)->set_address(kMemory - 2);
  absl::StatusOr<ReplaySummary> result = Run();
  EXPECT_TRUE(absl::IsInvalidArgument(result.status()));
  EXPECT_THAT(result.status().message(), HasSubstr("outside main memory"));
}

// ROM: a copy in the hole (as a PC's below 1 MiB) and a window above memory. Reads give the IMS's
// bytes, writes are lost and are no device accesses, and an extent runs from ROM into RAM.
constexpr uint64_t kRomInHole = kHole + kHoleSize - 0x20000, kRomTop = 0xFFFF0000;

TEST_F(EngineTest, RomReadsLikeMemoryAndKeepsItsBytes) {
  roms_ = {{kRomInHole, 0x20000}, {kRomTop, 0x10000}};
  ims_.mutable_description()->set_memory_bytes(2 * kMemory);  // RAM after the hole
  using K = cat::RecordKind;
  const uint64_t last = kHole + kHoleSize - 4;  // the ROM copy's last word, RAM after it
  script_ = {Read(K::kFill, last, 4),
             Write(K::kWriteBack, last, {9, 9, 9, 9}),
             Read(K::kUncachedRead, last, 4),
             Read(K::kUncachedRead, kRomTop + 4, 2),
             Write(K::kUncachedWrite, kRomTop, {1}),
             Read(K::kFill, kHole + kHoleSize, 4)};
  ims_.clear_memory();
  ims::MemoryExtent* m = ims_.add_memory();
  m->set_address(last);
  m->set_data(Bytes({1, 2, 3, 4, 5, 6, 7, 8}));
  m = ims_.add_memory();
  m->set_address(kRomTop + 4);
  m->set_data(Bytes({0xAB, 0xCD}));
  aes_.mutable_end()->set_branch_count(10);
  aes_.mutable_end()->set_cat_records(6);
  aes_.mutable_end()->set_cpu_transactions(6);
  absl::StatusOr<ReplaySummary> s = Run();
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->records, 6u);
  EXPECT_EQ(s->device_accesses, 0u);
  EXPECT_EQ(reads_, (std::vector<std::vector<uint8_t>>{
                        {1, 2, 3, 4}, {1, 2, 3, 4}, {0xAB, 0xCD}, {5, 6, 7, 8}}));
}

TEST_F(EngineTest, AnExtentOutsideRamAndRomIsRefused) {
  roms_ = {{kRomTop, 0x10000}};
  CleanSchedule();
  ims::MemoryExtent* m = ims_.add_memory();
  m->set_address(kRomTop - 2);
  m->set_data(Bytes({1, 2, 3, 4}));
  absl::StatusOr<ReplaySummary> s = Run();
  EXPECT_TRUE(absl::IsInvalidArgument(s.status())) << s.status();
  EXPECT_THAT(s.status().message(), HasSubstr("outside main memory and ROM"));
}

TEST_F(EngineTest, AMemoryMapWithBadRomIsRefused) {
  CleanSchedule();
  roms_ = {{0x1000, 0x1000}};  // in RAM
  EXPECT_THAT(Run().status().message(), HasSubstr("overlaps main memory outside its holes"));
  roms_ = {{uint64_t{1} << 40, uint64_t{1} << 30}};  // a gigabyte
  EXPECT_THAT(Run().status().message(), HasSubstr("a ROM of 1073741824 bytes, more than"));
}

}  // namespace
}  // namespace citcat::replay
