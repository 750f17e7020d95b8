// The machine-neutral extractor on its own, driven by a toy contract shaped like a PC's: memory
// with a hole, a device window inside the hole, port I/O, and interrupt evidence in two halves
// (an interrupt acknowledge with the vector, then a hook report over a port with the return
// address and the REP count). No R4400 anywhere.
#include "extract/extractor.h"

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "cat_parser/reader.h"
#include "extract/contract.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cat_parser/cat_test_util.h"

namespace citcat::extract {
namespace {

using cat::OwnedRecord;
using cat::RecordKind;
using ::testing::HasSubstr;

constexpr uint64_t kBegin = 0xFFF00000, kDump = 0xFFF01000, kDone = 0xFFF02000, kReport = 0xE0;
constexpr uint8_t kDisk = 1;

cat::CatHeader ToyHeader() {
  cat::CatHeader h;
  h.machine = cat::Machine::kI486;
  h.byte_order = cat::ByteOrder::kLittle;
  h.memory_bytes = 2 << 20;
  h.holes = {{0xA0000, 0x60000}};
  h.devices = {{"disk", cat::WindowKind::kMemoryMapped, 0xB0000, 0x100},
               {"uart", cat::WindowKind::kPort, 0x3F8, 8}};
  h.magic = {{"begin", cat::WindowKind::kMemoryMapped, kBegin, 8},
             {"dump", cat::WindowKind::kMemoryMapped, kDump, 16},
             {"done", cat::WindowKind::kMemoryMapped, kDone, 8},
             {"report", cat::WindowKind::kPort, kReport, 8}};
  return h;
}

uint64_t LoadLE(std::span<const uint8_t> b) {
  uint64_t v = 0;
  for (size_t i = b.size(); i-- > 0;) v = v << 8 | b[i];
  return v;
}

// The begin marker is "BEGIN!!!" stored to `begin`; the dump's first 8 bytes are the start PC
// and a store to `done` ends it; an interrupt is an acknowledge (the vector) followed by a
// report to the `report` port area: the return address, then the REP count, 4 bytes each.
class ToyContract : public SystemContract {
 public:
  bool carries_ports = true;
  bool knows_reset = false;  // has a reset state: traces from reset are its own

  ims::Machine machine() const override { return ims::MACHINE_I486; }
  absl::string_view name() const override { return "S1"; }
  absl::Status Start(const cat::CatHeader& header) override {
    for (const char* name : {"begin", "dump", "done", "report"}) {
      if (header.FindMagic(name) == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat("header lacks '", name, "'"));
      }
    }
    dump_ = header.FindMagic("dump");
    done_ = header.FindMagic("done");
    report_ = header.FindMagic("report");
    return absl::OkStatus();
  }
  absl::Status ResetState(ims::InitialMachineState& ims) const override {
    if (!knows_reset) return SystemContract::ResetState(ims);
    ims.mutable_x86()->set_eip(0xFFF0);
    return absl::OkStatus();
  }
  bool Carries(RecordKind kind) const override {
    return carries_ports || (kind != RecordKind::kPortRead && kind != RecordKind::kPortWrite);
  }
  bool IsBeginMarker(const cat::BusRecord& r) const override {
    return r.kind == RecordKind::kUncachedWrite && r.address == kBegin &&
           std::string(r.data.begin(), r.data.end()) == "BEGIN!!!";
  }
  absl::StatusOr<bool> DumpStore(const ReservedStore& store, const ReservedMemory& dump,
                                 ims::InitialMachineState& ims) override {
    if (&store.area != done_) return false;
    ims.mutable_x86()->set_eip(static_cast<uint32_t>(LoadLE(dump.Bytes(*dump_).subspan(0, 8))));
    ims.mutable_start()->set_branch_count(store.record.branch_count);
    return true;
  }
  absl::Status HookStore(const ReservedStore& store, aes::EventSchedule& aes) override {
    if (&store.area != report_) return absl::OkStatus();
    if (!ack_) return absl::FailedPreconditionError("a report without its acknowledge");
    aes::Interrupt* irq = aes.add_interrupts();
    irq->set_vector(ack_->data[0]);
    irq->set_branch_count(ack_->branch_count);
    irq->set_pc(LoadLE(store.record.data.subspan(0, 4)));
    irq->set_rep_remaining(LoadLE(store.record.data.subspan(4, 4)));
    irq->set_cat_record(store.index);
    ack_.reset();
    return absl::OkStatus();
  }
  absl::Status InterruptAck(uint64_t, const cat::BusRecord& r, aes::EventSchedule&) override {
    if (ack_) return absl::FailedPreconditionError("a second acknowledge before the report");
    ack_ = OwnedRecord(r);
    return absl::OkStatus();
  }
  absl::Status Finish(aes::EventSchedule&) override {
    return ack_ ? absl::FailedPreconditionError("an acknowledge without its report")
                : absl::OkStatus();
  }

 private:
  const cat::AddressWindow *dump_ = nullptr, *done_ = nullptr, *report_ = nullptr;
  std::optional<OwnedRecord> ack_;
};

OwnedRecord Rec(RecordKind kind, uint64_t address, uint64_t bc, std::vector<uint8_t> data,
                uint8_t master = cat::kMasterCpu) {
  OwnedRecord r;
  r.kind = kind;
  r.address = address;
  r.branch_count = bc;
  r.data = std::move(data);
  r.master = master;
  return r;
}

std::vector<OwnedRecord> Prologue() {
  return {Rec(RecordKind::kUncachedWrite, kBegin, 0, {'B', 'E', 'G', 'I', 'N', '!', '!', '!'}),
          Rec(RecordKind::kUncachedRead, 0xFFFF0, 0, {0x90, 0x90}),  // the driver's fetch
          Rec(RecordKind::kUncachedWrite, kDump, 0, {0x34, 0x12, 0, 0, 0, 0, 0, 0}),
          Rec(RecordKind::kUncachedWrite, kDone, 5, {0, 0, 0, 0, 0, 0, 0, 0})};
}

absl::StatusOr<Extraction> ExtractToy(const std::vector<OwnedRecord>& records,
                                      ToyContract contract = {},
                                      cat::CatHeader header = ToyHeader()) {
  auto reader = cat::CatReader::Open(
      io::InputFile::FromMemory("toy.cat", cat::testing::EncodeCat(header, records)));
  if (!reader.ok()) return reader.status();
  return Extract(**reader, contract);
}

std::vector<OwnedRecord> Trace() {
  std::vector<OwnedRecord> t = Prologue();
  std::vector<OwnedRecord> rest = {
      Rec(RecordKind::kFill, 0x1000, 6, std::vector<uint8_t>(16, 0x11)),         // 4
      Rec(RecordKind::kWriteThrough, 0x2000, 7, {1, 2, 3, 4}),                   // 5
      Rec(RecordKind::kDmaWrite, 0x3000, 8, {9, 9, 9, 9}, kDisk),                // 6
      Rec(RecordKind::kUncachedRead, 0xB0010, 9, {0x02, 0, 0, 0}),               // 7: disk
      Rec(RecordKind::kPortRead, 0x3F8, 10, {0x41}),                             // 8
      Rec(RecordKind::kPortWrite, 0x3F9, 11, {0x0F}),                            // 9
      Rec(RecordKind::kInterruptAck, 0, 20, {0x20}),                             // 10
      Rec(RecordKind::kPortWrite, kReport, 23, {0x34, 0x12, 0, 0, 3, 0, 0, 0}),  // 11
      Rec(RecordKind::kPortRead, kReport, 24, {0x34}),                           // 12
      Rec(RecordKind::kUncachedRead, 0x9FFFC, 25, {5, 6, 7, 8}),                 // 13
      Rec(RecordKind::kDmaRead, 0x100000, 26, {0xAA, 0xBB}, kDisk),              // 14
      Rec(RecordKind::kFill, 0x3000, 40, std::vector<uint8_t>(16, 0x22)),        // 15
  };
  t.insert(t.end(), rest.begin(), rest.end());
  return t;
}

TEST(Extractor, StartPointAndFirstTouchImage) {
  auto x = ExtractToy(Trace());
  ASSERT_TRUE(x.ok()) << x.status();
  EXPECT_EQ(x->ims.description().machine(), ims::MACHINE_I486);
  EXPECT_EQ(x->ims.x86().eip(), 0x1234u);
  EXPECT_EQ(x->ims.start().branch_count(), 5u);
  EXPECT_EQ(x->ims.start().cat_record(), 4u);
  // Read first: kept. Written first (the write-through, the DMA write's 4 bytes that the later
  // fill carries back): left out.
  ASSERT_EQ(x->ims.memory_size(), 4);
  EXPECT_EQ(x->ims.memory(0).address(), 0x1000u);
  EXPECT_EQ(x->ims.memory(0).data(), std::string(16, '\x11'));
  EXPECT_EQ(x->ims.memory(1).address(), 0x3004u);
  EXPECT_EQ(x->ims.memory(1).data(), std::string(12, '\x22'));
  EXPECT_EQ(x->ims.memory(2).address(), 0x9FFFCu);
  EXPECT_EQ(x->ims.memory(2).data(), "\x05\x06\x07\x08");
  EXPECT_EQ(x->ims.memory(3).address(), 0x100000u);
  EXPECT_EQ(x->ims.memory(3).data(), "\xAA\xBB");
}

TEST(Extractor, DmaByBusPosition) {
  auto x = ExtractToy(Trace());
  ASSERT_TRUE(x.ok()) << x.status();
  ASSERT_EQ(x->aes.dma_size(), 2);
  EXPECT_TRUE(x->aes.dma(0).to_memory());
  EXPECT_EQ(x->aes.dma(0).after_cpu_transactions(), 2u);
  EXPECT_EQ(x->aes.dma(0).address(), 0x3000u);
  EXPECT_EQ(x->aes.dma(0).device(), kDisk);
  EXPECT_EQ(x->aes.dma(0).cat_record(), 6u);
  EXPECT_EQ(x->aes.dma(0).branch_count(), 8u);
  EXPECT_FALSE(x->aes.dma(1).to_memory());
  EXPECT_EQ(x->aes.dma(1).after_cpu_transactions(), 9u);
  EXPECT_EQ(x->aes.dma(1).data(), "\xAA\xBB");
}

TEST(Extractor, DeviceAndPortQueueInConsumptionOrder) {
  auto x = ExtractToy(Trace());
  ASSERT_TRUE(x.ok()) << x.status();
  const aes::EventSchedule& aes = x->aes;
  ASSERT_EQ(aes.device_io_size(), 3);  // the reserved port area's report and read are not I/O
  EXPECT_FALSE(aes.device_io(0).write());
  EXPECT_FALSE(aes.device_io(0).port());
  EXPECT_EQ(aes.device_io(0).address(), 0xB0010u);  // a device window in the memory hole
  EXPECT_EQ(aes.device_io(0).data(), std::string("\x02\0\0\0", 4));
  EXPECT_FALSE(aes.device_io(1).write());
  EXPECT_TRUE(aes.device_io(1).port());
  EXPECT_EQ(aes.device_io(1).address(), 0x3F8u);
  EXPECT_EQ(aes.device_io(1).cat_record(), 8u);
  EXPECT_TRUE(aes.device_io(2).write());
  EXPECT_TRUE(aes.device_io(2).port());
  EXPECT_EQ(aes.device_io(2).data(), "\x0F");
}

TEST(Extractor, InterruptEvidenceGoesToTheContract) {
  auto x = ExtractToy(Trace());
  ASSERT_TRUE(x.ok()) << x.status();
  ASSERT_EQ(x->aes.interrupts_size(), 1);
  const aes::Interrupt& irq = x->aes.interrupts(0);
  EXPECT_EQ(irq.vector(), 0x20u);
  EXPECT_EQ(irq.branch_count(), 20u);
  EXPECT_EQ(irq.pc(), 0x1234u);
  EXPECT_EQ(irq.rep_remaining(), 3u);
  EXPECT_EQ(irq.cat_record(), 11u);
}

TEST(Extractor, EndPoint) {
  auto x = ExtractToy(Trace());
  ASSERT_TRUE(x.ok()) << x.status();
  EXPECT_EQ(x->aes.machine(), ims::MACHINE_I486);
  EXPECT_EQ(x->aes.end().branch_count(), 40u);
  EXPECT_EQ(x->aes.end().cat_records(), 12u);
  EXPECT_EQ(x->aes.end().cpu_transactions(), 10u);
}

// With an event writer the events leave as they come, in batches, and the file is the very bytes
// of the whole schedule.
TEST(Extractor, EventsWrittenAsTheyComeMakeTheSameFile) {
  std::vector<OwnedRecord> t = Prologue();
  uint64_t bc = 6;
  for (int i = 0; i < 10'000; ++i) {  // more than two batches
    t.push_back(Rec(RecordKind::kPortRead, 0x3F8, bc++, {static_cast<uint8_t>(i)}));
    if (i % 1000 == 0) t.push_back(Rec(RecordKind::kDmaWrite, 0x3000, bc++, {1, 2}, kDisk));
  }
  auto whole = ExtractToy(t);
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_EQ(whole->aes.device_io_size(), 10'000);

  const std::string path = ::testing::TempDir() + "/streamed-aes.pb";
  auto events = aes::ScheduleWriter::Create(path);
  ASSERT_TRUE(events.ok()) << events.status();
  auto reader = cat::CatReader::Open(
      io::InputFile::FromMemory("toy.cat", cat::testing::EncodeCat(ToyHeader(), t)));
  ASSERT_TRUE(reader.ok());
  ToyContract contract;
  auto streamed = Extract(**reader, contract, {}, events->get());
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  EXPECT_LT(streamed->aes.device_io_size(), 4096);  // the rest went to the writer already
  ASSERT_TRUE((*events)->Finish(streamed->aes).ok());
  EXPECT_EQ((*events)->counts()[1], 10u);
  EXPECT_EQ((*events)->counts()[2], 10'000u);
  std::ifstream in(path, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_EQ(bytes, whole->aes.SerializeAsString());
  EXPECT_EQ((*events)->bytes(), bytes.size());
  std::filesystem::remove(path);
}

struct Inconsistent {
  std::string name;
  std::vector<OwnedRecord> after_prologue;
  std::string error;
  bool carries_ports = true;
};
void PrintTo(const Inconsistent& c, std::ostream* os) { *os << c.name; }

class ExtractorErrors : public ::testing::TestWithParam<Inconsistent> {};

TEST_P(ExtractorErrors, NameTheRecord) {
  std::vector<OwnedRecord> records = Prologue();
  records.insert(records.end(), GetParam().after_prologue.begin(), GetParam().after_prologue.end());
  ToyContract contract;
  contract.carries_ports = GetParam().carries_ports;
  auto x = ExtractToy(records, contract);
  ASSERT_FALSE(x.ok());
  EXPECT_THAT(std::string(x.status().message()), HasSubstr(GetParam().error));
  EXPECT_THAT(std::string(x.status().message()), HasSubstr("toy.cat: "));
}

INSTANTIATE_TEST_SUITE_P(
    Table, ExtractorErrors,
    ::testing::Values(
        Inconsistent{"DmaIntoTheHole",
                     {Rec(RecordKind::kDmaWrite, 0xA0000, 9, {1}, kDisk)},
                     "record 4: DMA outside main memory"},
        Inconsistent{"DmaAcrossTheHoleEdge",
                     {Rec(RecordKind::kDmaWrite, 0x9FFFF, 9, {1, 2}, kDisk)},
                     "record 4: DMA outside main memory"},
        Inconsistent{"LineInTheHole",
                     {Rec(RecordKind::kFill, 0xFFFF0, 9, std::vector<uint8_t>(16))},
                     "record 4: a cache line outside main memory"},
        Inconsistent{"DeviceFill",
                     {Rec(RecordKind::kFill, 0x1000, 9, std::vector<uint8_t>(16), kDisk)},
                     "record 4: a device's fill record"},
        Inconsistent{"KindTheBusLacks",
                     {Rec(RecordKind::kPortRead, 0x3F8, 9, {0})},
                     "record 4: a port-read record on an S1 bus",
                     false},
        Inconsistent{"ReportWithoutAck",
                     {Rec(RecordKind::kFill, 0x1000, 9, std::vector<uint8_t>(16)),
                      Rec(RecordKind::kPortWrite, kReport, 9, {0, 0, 0, 0, 0, 0, 0, 0})},
                     "record 5: a report without its acknowledge"},
        Inconsistent{"AckWithoutReport",
                     {Rec(RecordKind::kInterruptAck, 0, 9, {0x20})},
                     "at the end: an acknowledge without its report"}),
    [](const auto& info) { return info.param.name; });

TEST(Extractor, PhasesAreChecked) {
  std::vector<OwnedRecord> p = Prologue();
  auto no_begin = ExtractToy({p[2], p[3]});
  ASSERT_FALSE(no_begin.ok());
  EXPECT_THAT(std::string(no_begin.status().message()),
              HasSubstr("toy.cat: record 0: the trace does not start with the begin-of-trace"));
  auto in_dump = ExtractToy({p[0], p[1], p[2]});
  ASSERT_FALSE(in_dump.ok());
  EXPECT_THAT(std::string(in_dump.status().message()), HasSubstr("ends inside the begin-of-trace"));
  auto empty = ExtractToy({});
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(std::string(empty.status().message()), HasSubstr("the trace holds no records"));
}

TEST(Extractor, TheContractChecksTheHeader) {
  cat::CatHeader header = ToyHeader();
  header.magic.pop_back();
  auto x = ExtractToy(Prologue(), {}, header);
  ASSERT_FALSE(x.ok());
  EXPECT_THAT(std::string(x.status().message()), HasSubstr("toy.cat: header lacks 'report'"));
}

TEST(Extractor, RefusesAHugeReservedArea) {
  cat::CatHeader header = ToyHeader();
  header.magic.push_back({"huge", cat::WindowKind::kMemoryMapped, 0x100000000, 1ull << 40});
  auto x = ExtractToy(Prologue(), {}, header);
  ASSERT_FALSE(x.ok());
  EXPECT_THAT(std::string(x.status().message()), HasSubstr("reserved area 'huge' is larger"));
}

// ---- traces from reset ----

constexpr uint64_t kRomCopy = 0xE0000, kRomTop = 0xFFFF0000;

// The toy system with its ROM at the top of 4 GiB and a copy of its last 128 KiB in the hole,
// traced from reset.
cat::CatHeader ResetHeader() {
  cat::CatHeader h = ToyHeader();
  h.roms = {{kRomCopy, 0x20000}, {kRomTop, 0x10000}};
  h.from_reset = true;
  return h;
}

std::vector<OwnedRecord> ResetTrace() {
  return {
      Rec(RecordKind::kUncachedRead, 0xFFFFFFF0, 0,
          {0xEA, 0x5B, 0xE0, 0x00}),                                        // 0: the reset vector
      Rec(RecordKind::kFill, kRomCopy, 1, std::vector<uint8_t>(16, 0x22)),  // 1: ROM, cached
      Rec(RecordKind::kWriteBack, kRomCopy, 2, std::vector<uint8_t>(16, 0x99)),  // 2: lost
      Rec(RecordKind::kUncachedWrite, kRomTop + 0x100, 2, {7, 7, 7, 7}),         // 3: lost
      Rec(RecordKind::kFill, kRomCopy, 3, std::vector<uint8_t>(16, 0x22)),       // 4: ROM again
      Rec(RecordKind::kPortWrite, kReport, 3, std::vector<uint8_t>(8, 1)),       // 5: no hook
      Rec(RecordKind::kUncachedWrite, kDump, 3, std::vector<uint8_t>(8, 2)),     // 6: no dump
      Rec(RecordKind::kUncachedRead, 0xB0000, 4, {5, 0, 0, 0}),                  // 7: the disk
      Rec(RecordKind::kFill, 0x1000, 5, std::vector<uint8_t>(16, 0x33)),         // 8: RAM
  };
}

TEST(ExtractorFromReset, TheResetStateTheRomAndNoHooks) {
  ToyContract contract;
  contract.knows_reset = true;
  auto x = ExtractToy(ResetTrace(), contract, ResetHeader());
  ASSERT_TRUE(x.ok()) << x.status();
  const ims::InitialMachineState& ims = x->ims;
  EXPECT_TRUE(ims.start().from_reset());
  EXPECT_EQ(ims.start().branch_count(), 0u);
  EXPECT_EQ(ims.start().cat_record(), 0u);
  EXPECT_EQ(ims.x86().eip(), 0xFFF0u);
  // The last (highest) ROM field: the i486 PC rebuilds its copy below 1 MiB from it.
  EXPECT_EQ(ims.description().rom_base(), kRomTop);
  EXPECT_EQ(ims.description().rom_bytes(), 0x10000u);
  // ROM bytes read are memory; the writes to ROM change nothing.
  ASSERT_EQ(ims.memory_size(), 3);
  EXPECT_EQ(ims.memory(0).address(), 0x1000u);
  EXPECT_EQ(ims.memory(1).address(), kRomCopy);
  EXPECT_EQ(ims.memory(1).data(), std::string(16, 0x22));
  EXPECT_EQ(ims.memory(2).address(), 0xFFFFFFF0u);
  EXPECT_EQ(ims.memory(2).data(), std::string("\xEA\x5B\xE0\x00", 4));
  // Neither the ROM writes nor the stores to reserved areas are device accesses or reports.
  ASSERT_EQ(x->aes.device_io_size(), 1);
  EXPECT_EQ(x->aes.device_io(0).address(), 0xB0000u);
  EXPECT_EQ(x->aes.interrupts_size(), 0);
  EXPECT_EQ(x->aes.end().cat_records(), ResetTrace().size());
  EXPECT_EQ(x->aes.end().cpu_transactions(), ResetTrace().size());
}

TEST(ExtractorFromReset, AContractWithoutAResetStateRefuses) {
  auto x = ExtractToy(ResetTrace(), {}, ResetHeader());
  ASSERT_FALSE(x.ok());
  EXPECT_THAT(std::string(x.status().message()),
              HasSubstr("toy.cat: a trace from reset, which the S1 contract does not know"));
}

TEST(ExtractorFromReset, DmaIntoRomIsRefused) {
  ToyContract contract;
  contract.knows_reset = true;
  std::vector<OwnedRecord> records = ResetTrace();
  records.push_back(Rec(RecordKind::kDmaWrite, kRomCopy, 6, {1, 2, 3, 4}, kDisk));
  auto x = ExtractToy(records, contract, ResetHeader());
  ASSERT_FALSE(x.ok());
  EXPECT_THAT(std::string(x.status().message()), HasSubstr("record 9: DMA outside main memory"));
}

}  // namespace
}  // namespace citcat::extract
