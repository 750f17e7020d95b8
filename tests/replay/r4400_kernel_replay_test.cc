// Replay of the real guest kernel's captures (guest/r4400): exact through the file path
// (extract -> replay -> regenerated CAT -> verify), and damaged schedules that must fail at the
// right first divergence with the kernel's own interrupt handler, driver and devices.
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"
#include "aes/aes_util.h"
#include "cat_parser/reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "guest/r4400/guest_paths.h"
#include "machine/r4400/capture.h"
#include "replay/r4400_adapter.h"
#include "replay/replay.h"
#include "replay/verify.h"
#include "systems/system.h"
#include "tests/support/instruction_log_check.h"

namespace citcat::replay {
namespace {

using ::testing::HasSubstr;

struct Captured {
  std::string cat_path;
  extract::Extraction x;
  uint64_t traced_instructions = 0;
};

Captured Capture(const std::string& workloads, uint64_t seed, uint64_t max_traced = 20'000'000) {
  Captured c;
  machine::CaptureSettings settings;
  settings.max_traced = max_traced;
  settings.kernel_path = CITCAT_R4400_KERNEL_ELF;
  std::ifstream disk(CITCAT_R4400_DISK_IMAGE, std::ios::binary);
  settings.disk.assign(std::istreambuf_iterator<char>(disk), std::istreambuf_iterator<char>());
  settings.workloads = workloads;
  settings.seed = seed;
  c.cat_path =
      absl::StrCat(::testing::TempDir(), "/kernel-", workloads, "-", seed, "-", max_traced, ".cat");
  auto result = machine::CaptureR4400(settings, c.cat_path);
  EXPECT_TRUE(result.ok()) << result.status();
  if (result.ok()) c.traced_instructions = result->summary.traced_instructions;
  auto reader = cat::CatReader::Open(c.cat_path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  auto x = systems::Extract(**reader);
  EXPECT_TRUE(x.ok()) << x.status();
  c.x = *std::move(x);
  return c;
}

const Captured& Io() {
  static const Captured* c = new Captured(Capture("io", 3));
  return *c;
}

VerifyResult Check(const Captured& c, const aes::EventSchedule& aes) {
  auto result = systems::ReplayAgainst(c.cat_path, c.x.ims, aes, {}, nullptr);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *result : VerifyResult{};
}

TEST(R4400KernelReplay, AllWorkloadsThroughTheFiles) {
  Captured c = Capture("sort,hash,compress,int64,fp,memcpy,chase,io", 9);
  std::string regenerated = ::testing::TempDir() + "/kernel-all-regenerated.cat";
  auto writer = cat::CatWriter::Create(regenerated, *systems::CatHeaderFor(c.x.ims));
  ASSERT_TRUE(writer.ok());
  ReplayOptions options;
  options.regenerated = writer->get();
  auto summary = systems::Replay(c.x.ims, c.x.aes, options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_TRUE((*writer)->Finish().ok());
  EXPECT_GT(summary->instructions, 10'000'000u);
  EXPECT_GT(summary->interrupts, 500u);
  EXPECT_GT(summary->dma, 100u);
  // Some interrupts come in a delay slot (Cause.BD in the handler's echo): the boundary after
  // the branch, not before it.
  int in_delay_slot = 0;
  for (const aes::RegisterRead& r : c.x.aes.register_reads()) {
    in_delay_slot += r.register_() == aes::RegisterRead::REGISTER_MIPS_CAUSE && (r.value() >> 31);
  }
  EXPECT_GT(in_delay_slot, 10);
  auto v = systems::CompareCats(c.cat_path, regenerated);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(v->identical) << v->report;
  EXPECT_EQ(v->compared, c.x.aes.end().cat_records());
}

TEST(R4400KernelReplay, IoWorkloadIsExact) {
  VerifyResult v = Check(Io(), Io().x.aes);
  EXPECT_TRUE(v.identical) << v.report;
  EXPECT_GT(Io().x.aes.dma_size(), 10);
}

// Traces cut short while the kernel waits for the disk: the last records are DMA the machine
// did after its last CPU transaction, further on in the idle loop.
TEST(R4400KernelReplay, TracesEndingInDma) {
  int ending_in_dma = 0;
  for (uint64_t n = 300'000; n <= 2'000'000; n += 200'000) {
    Captured c = Capture("io", 2, n);
    const aes::EventSchedule& aes = c.x.aes;
    if (aes.dma_size() > 0 &&
        aes.dma(aes.dma_size() - 1).after_cpu_transactions() == aes.end().cpu_transactions()) {
      ++ending_in_dma;
    }
    VerifyResult v = Check(c, aes);
    EXPECT_TRUE(v.identical) << n << ": " << v.report;
  }
  EXPECT_GE(ending_in_dma, 1);
}

TEST(R4400KernelReplay, InterruptDropped) {
  aes::EventSchedule aes = Io().x.aes;
  const int k = aes.interrupts_size() / 2;
  const aes::Interrupt dropped = aes.interrupts(k);
  aes.mutable_interrupts()->DeleteSubrange(k, 1);
  VerifyResult v = Check(Io(), aes);
  ASSERT_FALSE(v.identical);
  EXPECT_LE(v.first_difference, dropped.cat_record()) << v.report;
  EXPECT_GT(v.first_difference, aes.interrupts(k - 1).cat_record()) << v.report;
}

TEST(R4400KernelReplay, InterruptMovedByOneInstruction) {
  aes::EventSchedule aes = Io().x.aes;
  const int k = aes.interrupts_size() / 3;
  aes::Interrupt& irq = *aes.mutable_interrupts(k);
  irq.set_pc(irq.pc() + 4);
  VerifyResult v = Check(Io(), aes);
  ASSERT_FALSE(v.identical);
  EXPECT_LE(v.first_difference, irq.cat_record()) << v.report;
  EXPECT_GT(v.first_difference, aes.interrupts(k - 1).cat_record()) << v.report;
}

TEST(R4400KernelReplay, DmaByteChanged) {
  aes::EventSchedule aes = Io().x.aes;
  aes::DmaTransfer& d = *aes.mutable_dma(aes.dma_size() / 2);
  (*d.mutable_data())[7] ^= 1;
  VerifyResult v = Check(Io(), aes);
  ASSERT_FALSE(v.identical);
  EXPECT_EQ(v.first_difference, d.cat_record()) << v.report;
}

TEST(R4400KernelReplay, DeviceReadsSwapped) {
  aes::EventSchedule aes = Io().x.aes;
  int k = aes.device_io_size() / 2;
  while (k + 1 < aes.device_io_size() &&
         (aes.device_io(k).write() || aes.device_io(k + 1).write() ||
          aes.device_io(k).address() == aes.device_io(k + 1).address())) {
    ++k;
  }
  ASSERT_LT(k + 1, aes.device_io_size());
  const uint64_t first = aes.device_io(k).cat_record();
  aes.mutable_device_io()->SwapElements(k, k + 1);
  VerifyResult v = Check(Io(), aes);
  ASSERT_FALSE(v.identical);
  EXPECT_EQ(v.first_difference, first) << v.report;
  EXPECT_THAT(v.report, HasSubstr("last instructions executed"));
}

TEST(R4400KernelReplay, CountValueChanged) {
  aes::EventSchedule aes = Io().x.aes;
  int k = aes.register_reads_size() / 2;
  while (aes.register_reads(k).register_() != aes::RegisterRead::REGISTER_MIPS_COUNT) ++k;
  aes::RegisterRead& r = *aes.mutable_register_reads(k);
  r.set_value(r.value() ^ 0x10);
  VerifyResult v = Check(Io(), aes);
  ASSERT_FALSE(v.identical);
  EXPECT_EQ(v.first_difference, r.cat_record()) << v.report;
}

// A schedule of this format version with nothing in it.
aes::EventSchedule NothingScheduled() {
  aes::EventSchedule aes;
  aes.set_format_version(aes::kFormatVersion);
  return aes;
}

TEST(R4400KernelReplay, EmptySchedule) {
  auto result = systems::Replay(Io().x.ims, NothingScheduled(), {});
  ASSERT_TRUE(absl::IsAborted(result.status())) << result.status();
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("no end point"));
  VerifyResult v = Check(Io(), NothingScheduled());
  ASSERT_FALSE(v.identical);
  EXPECT_EQ(v.first_difference, Io().x.ims.start().cat_record()) << v.report;
}

TEST(R4400KernelReplay, OnlyTheEndPoint) {
  aes::EventSchedule aes = NothingScheduled();
  *aes.mutable_end() = Io().x.aes.end();
  // Against the original, the first record that differs is at or before the first interrupt's
  // report: the core went on without the interrupt.
  VerifyResult v = Check(Io(), aes);
  ASSERT_FALSE(v.identical);
  EXPECT_LE(v.first_difference, Io().x.aes.interrupts(0).cat_record()) << v.report;
}

// With no trace and no sink, the core writes each instruction into replay's ring from its run
// loop, fused pairs and branches with their delay slots included (CoreAdapter::LogInstructions),
// instead of telling an observer of each: the same instructions, in the same order, with the same
// index, PC and bytes, through interrupts, exceptions, untaken branch-likely instructions and
// uncached code. An archive's instruction checksum is made from them.
TEST(R4400KernelReplay, TheInstructionLogIsWhatAnObserverIsTold) {
  static const Captured* c = new Captured(Capture("io,hash,sort", 5, 3'000'000));
  testing::ExpectTheLogIsWhatAnObserverIsTold(
      [](const ReplayOptions& options) { return systems::Replay(c->x.ims, c->x.aes, options); },
      2'000'000);
}

}  // namespace
}  // namespace citcat::replay
