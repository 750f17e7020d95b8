#include "aes/schedule.h"

#include <malloc.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace citcat::aes {
namespace {

using ::testing::HasSubstr;

EventSchedule Sample() {
  EventSchedule s;
  s.set_format_version(1);
  s.set_machine(ims::MACHINE_R4400);
  for (int i = 0; i < 5; ++i) {
    Interrupt& irq = *s.add_interrupts();
    irq.set_branch_count(100 * i + 7);
    irq.set_pc(0x80001000 + 4 * i);
    DeviceAccess& io = *s.add_device_io();
    io.set_address(0x1F000000 + i);
    io.set_data(std::string(i + 1, static_cast<char>('a' + i)));
    RegisterRead& r = *s.add_register_reads();
    r.set_register_(i % 2 ? RegisterRead::REGISTER_MIPS_CAUSE : RegisterRead::REGISTER_MIPS_COUNT);
    r.set_value(i * 1000);
  }
  s.add_dma()->set_address(0x2000);
  s.mutable_end()->set_branch_count(12345);
  s.mutable_end()->set_cat_records(678);
  return s;
}

// Every list of `schedule`, popped, as the message's own serialization.
template <typename Event>
std::string Drain(EventQueue<Event>& list) {
  std::string all;
  while (!list.empty()) all += list.Pop().SerializeAsString() + "|";
  return all;
}

template <typename Event>
std::string Join(const google::protobuf::RepeatedPtrField<Event>& list) {
  std::string all;
  for (const Event& e : list) all += e.SerializeAsString() + "|";
  return all;
}

void ExpectSame(const Schedule& s, const EventSchedule& m) {
  EXPECT_EQ(s.format_version(), m.format_version());
  EXPECT_EQ(s.machine(), m.machine());
  EXPECT_EQ(s.end().SerializeAsString(), m.end().SerializeAsString());
  EXPECT_EQ(s.interrupts(), static_cast<uint64_t>(m.interrupts_size()));
  EXPECT_EQ(s.dma(), static_cast<uint64_t>(m.dma_size()));
  EXPECT_EQ(s.device_io(), static_cast<uint64_t>(m.device_io_size()));
  EXPECT_EQ(s.register_reads(), static_cast<uint64_t>(m.register_reads_size()));
  // Twice: each reader starts again at the front.
  for (int round = 0; round < 2; ++round) {
    auto r = s.Read();
    // Interleaved the way replay consumes them: one cursor does not disturb another.
    ASSERT_NE(r->register_reads().Peek(), nullptr);
    EXPECT_EQ(r->interrupts().Pop().SerializeAsString(), m.interrupts(0).SerializeAsString());
    EXPECT_EQ(r->register_reads().Pop().SerializeAsString(),
              m.register_reads(0).SerializeAsString());
    EXPECT_EQ(r->interrupts().taken(), 1u);
    EXPECT_EQ(Drain(r->interrupts()),
              Join(m.interrupts()).substr(m.interrupts(0).SerializeAsString().size() + 1));
    EXPECT_EQ(Drain(r->dma()), Join(m.dma()));
    EXPECT_EQ(Drain(r->device_io()), Join(m.device_io()));
    EXPECT_EQ(r->register_reads().taken(), 1u);
    EXPECT_EQ(r->interrupts().taken(), static_cast<uint64_t>(m.interrupts_size()));
    EXPECT_TRUE(r->status().ok());
  }
}

TEST(Schedule, BytesReadAsTheMessageIs) {
  const EventSchedule m = Sample();
  ExpectSame(Schedule(m), m);
  auto parsed = Schedule::Parse(BytesInMemory(m.SerializeAsString(), "aes.pb"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ExpectSame(*parsed, m);

  const std::string path = ::testing::TempDir() + "/schedule-test-aes.pb";
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
  auto from_file = Schedule::Parse(BytesInFile(path));
  ASSERT_TRUE(from_file.ok()) << from_file.status();
  ExpectSame(*from_file, m);
  std::filesystem::remove(path);
}

TEST(Schedule, PeekLooksAheadWithoutTaking) {
  const EventSchedule m = Sample();
  auto parsed = Schedule::Parse(BytesInMemory(m.SerializeAsString(), "aes.pb"));
  ASSERT_TRUE(parsed.ok());
  auto r = parsed->Read();
  EventQueue<RegisterRead>& reads = r->register_reads();
  ASSERT_NE(reads.Peek(4), nullptr);
  EXPECT_EQ(reads.Peek(4)->value(), 4000u);
  EXPECT_EQ(reads.Peek(5), nullptr);
  EXPECT_EQ(reads.taken(), 0u);
  EXPECT_EQ(reads.Pop().value(), 0u);
  EXPECT_EQ(reads.Peek(3)->value(), 4000u);
}

// What the whole-message parser would keep or merge, the streaming one does too: fields in any
// order, a repeated end point merged, fields this schema does not know skipped.
TEST(Schedule, FieldOrderRepeatedEndAndUnknownFields) {
  EventSchedule first, second;
  first.add_register_reads()->set_value(1);
  first.mutable_end()->set_branch_count(5);
  second.add_interrupts()->set_pc(0x10);
  second.add_register_reads()->set_value(2);
  second.mutable_end()->set_cat_records(9);
  second.set_format_version(1);
  std::string bytes = first.SerializeAsString();
  bytes += std::string("\xA0\x06\x07", 3);  // field 100, varint 7: unknown
  bytes += second.SerializeAsString();
  EventSchedule whole;
  ASSERT_TRUE(whole.ParseFromString(bytes));
  auto parsed = Schedule::Parse(BytesInMemory(bytes, "aes.pb"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ExpectSame(*parsed, whole);
}

TEST(Schedule, BytesThatDoNotParseAreRefusedInOneLine) {
  const std::string good = Sample().SerializeAsString();
  for (const std::string& bad : {good.substr(0, good.size() - 3), std::string("\xFF\xFF\xFF", 3),
                                 std::string("\x1A\x7F\x00", 3), good + "\x07"}) {
    EventSchedule whole;
    EXPECT_FALSE(whole.ParseFromString(bad)) << absl::CHexEscape(bad);
    auto parsed = Schedule::Parse(BytesInMemory(bad, "broken/aes.pb"));
    ASSERT_FALSE(parsed.ok()) << absl::CHexEscape(bad);
    EXPECT_EQ(std::string(parsed.status().message()),
              "broken/aes.pb: not a citcat.aes.EventSchedule message");
  }
  auto missing = Schedule::Parse(BytesInFile(::testing::TempDir() + "/no-such-aes.pb"));
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("no-such-aes.pb"));
}

// Appended in batches, the lists come out whole and in field order: the bytes of the message.
TEST(ScheduleWriter, WritesTheBytesOfTheWholeMessage) {
  const EventSchedule whole = Sample();
  const std::string path = ::testing::TempDir() + "/writer-aes.pb";
  auto writer = ScheduleWriter::Create(path);
  ASSERT_TRUE(writer.ok()) << writer.status();
  for (int i = 0; i < 5; ++i) {
    EventSchedule batch;
    *batch.add_interrupts() = whole.interrupts(i);
    *batch.add_register_reads() = whole.register_reads(i);
    if (i < 4) *batch.add_device_io() = whole.device_io(i);
    ASSERT_TRUE((*writer)->Append(batch).ok());
    EXPECT_EQ(batch.interrupts_size() + batch.register_reads_size() + batch.device_io_size(), 0);
  }
  EventSchedule head;  // the last device access and the DMA come with the head
  head.set_format_version(whole.format_version());
  head.set_machine(whole.machine());
  *head.mutable_end() = whole.end();
  *head.add_device_io() = whole.device_io(4);
  *head.add_dma() = whole.dma(0);
  ASSERT_TRUE((*writer)->Finish(head).ok());
  std::ifstream in(path, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_EQ(bytes, whole.SerializeAsString());
  EXPECT_EQ((*writer)->counts(), (std::array<uint64_t, 4>{5, 1, 5, 5}));
  EXPECT_EQ((*writer)->bytes(), bytes.size());
  // The scratch files have no names: nothing but the output is left.
  std::filesystem::remove(path);
  EXPECT_TRUE(std::filesystem::is_empty(std::filesystem::temp_directory_path()));
}

// Without a file: the same bytes, read from the scratch files, as often as needed.
TEST(ScheduleWriter, FinishedInScratchReadsAsTheWholeMessage) {
  const EventSchedule whole = Sample();
  auto writer = ScheduleWriter::Create("extracted");
  ASSERT_TRUE(writer.ok()) << writer.status();
  EventSchedule batch = whole;
  batch.clear_end();
  ASSERT_TRUE((*writer)->Append(batch).ok());
  EventSchedule head;
  head.set_format_version(whole.format_version());
  head.set_machine(whole.machine());
  *head.mutable_end() = whole.end();
  auto bytes = (*writer)->FinishInScratch(head);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  writer->reset();  // the bytes outlive the writer
  for (int round = 0; round < 2; ++round) {
    auto all = ReadAll(**bytes, 1 << 20);
    ASSERT_TRUE(all.ok());
    EXPECT_EQ(*all, whole.SerializeAsString());
  }
  auto parsed = Schedule::Parse(*bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ExpectSame(*parsed, whole);
  EXPECT_TRUE(std::filesystem::is_empty(std::filesystem::temp_directory_path()));
}

TEST(ScheduleWriter, AnUnfinishedWriterLeavesNoFile) {
  const std::string path = ::testing::TempDir() + "/unfinished-aes.pb";
  {
    auto writer = ScheduleWriter::Create(path);
    ASSERT_TRUE(writer.ok());
    EventSchedule batch = Sample();
    ASSERT_TRUE((*writer)->Append(batch).ok());
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  // Where the output cannot go is found when it is written.
  auto nowhere = ScheduleWriter::Create("/nonexistent-dir/aes.pb");
  ASSERT_TRUE(nowhere.ok());
  EventSchedule head = Sample();
  const absl::Status s = (*nowhere)->Finish(head);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("/nonexistent-dir"));
}

size_t HeapInUse() { return mallinfo2().uordblks; }

// Memory stays flat however long the schedule: reading a million events through a reader holds
// a handful of them, where the whole message holds all of them.
TEST(Schedule, ReadingAMillionEventsHoldsAFew) {
  std::string bytes;
  {
    EventSchedule m;
    m.set_format_version(1);
    for (int i = 0; i < 1'000'000; ++i) {
      RegisterRead& r = *m.add_register_reads();
      r.set_value(i);
      r.set_cat_record(i);
    }
    bytes = m.SerializeAsString();
  }
  const std::string path = ::testing::TempDir() + "/schedule-test-million.pb";
  std::ofstream(path, std::ios::binary) << bytes;
  const size_t file_bytes = bytes.size();
  bytes.clear();
  bytes.shrink_to_fit();

  const size_t before = HeapInUse();
  auto parsed = Schedule::Parse(BytesInFile(path));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->register_reads(), 1'000'000u);
  auto r = parsed->Read();
  size_t peak = 0;
  uint64_t sum = 0;
  while (!r->register_reads().empty()) {
    sum += r->register_reads().Pop().value();
    if (r->register_reads().taken() % 10'000 == 0) peak = std::max(peak, HeapInUse() - before);
  }
  EXPECT_EQ(sum, uint64_t{999'999} * 1'000'000 / 2);
  EXPECT_LT(peak, size_t{1} << 20) << "the file holds " << file_bytes << " bytes";
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace citcat::aes
