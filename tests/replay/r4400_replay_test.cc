// End to end on the traced R4400 system: capture -> extract -> replay -> verify with zero
// divergence, and schedules damaged on purpose that must fail at the right first divergence.
#include <cstdio>
#include <fstream>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "aes/aes_util.h"
#include "cat_parser/reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "machine/r4400/contract.h"
#include "replay/r4400_adapter.h"
#include "replay/replay.h"
#include "replay/verify.h"
#include "systems/system.h"
#include "tests/replay/r4400_guest.h"
#include "traces/output.h"

namespace citcat::replay {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

struct Captured {
  std::string cat_path;
  replay_test::GuestCapture capture;
  extract::Extraction x;
};

Captured CaptureAndExtract(uint64_t seed, const replay_test::GuestOptions& options = {}) {
  Captured c;
  c.cat_path = absl::StrCat(::testing::TempDir(), "/replay-", seed, "-", options.iterations,
                            options.read_random ? "-random" : "",
                            options.mask_count_reads ? "" : "-unmasked", ".cat");
  c.capture = replay_test::CaptureGuest(seed, options, c.cat_path);
  auto reader = cat::CatReader::Open(c.cat_path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  auto x = systems::Extract(**reader);
  EXPECT_TRUE(x.ok()) << x.status();
  c.x = *std::move(x);
  return c;
}

// Replays `aes` against the capture: the first divergence or differing record.
VerifyResult Check(const Captured& c, const aes::EventSchedule& aes,
                   ReplaySummary* summary = nullptr) {
  auto result = systems::ReplayAgainst(c.cat_path, c.x.ims, aes, {}, summary);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *result : VerifyResult{};
}

const Captured& Default() {
  static const Captured* c = new Captured(CaptureAndExtract(1));
  return *c;
}

TEST(R4400Replay, TheGuestExercisesTheContract) {
  const Captured& c = Default();
  EXPECT_TRUE(c.capture.summary.began);
  EXPECT_TRUE(c.capture.summary.halted);
  const aes::EventSchedule& aes = c.x.aes;
  EXPECT_GE(aes.interrupts_size(), 5);
  EXPECT_EQ(aes.dma_size(), 2);
  EXPECT_GE(aes.device_io_size(), 50);
  EXPECT_GE(aes.register_reads_size(), 50);
}

// Keyed by what replay needed, an R4400 interrupt carries Cause.BD itself (`delay_slot`) in place
// of the record whose Cause echo told it: the schedule with those keys replays the capture
// exactly, and with one delay slot flag flipped it does not.
TEST(R4400Replay, InterruptKeysCarryTheDelaySlotInsteadOfTheRecord) {
  const Captured& c = Default();
  std::vector<aes::Interrupt> keys;
  ReplayOptions options;
  options.on_interrupt_key = [&keys](const aes::Interrupt& key) { keys.push_back(key); };
  auto summary = systems::Replay(c.x.ims, c.x.aes, options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_EQ(keys.size(), static_cast<size_t>(c.x.aes.interrupts_size()));
  aes::EventSchedule keyed = c.x.aes;
  keyed.set_format_version(aes::kPackedFormatVersion);
  for (size_t i = 0; i < keys.size(); ++i) {
    const aes::Interrupt& irq = c.x.aes.interrupts(static_cast<int>(i));
    EXPECT_EQ(keys[i].branch_count(), irq.branch_count());
    EXPECT_EQ(keys[i].pc(), irq.pc());
    EXPECT_EQ(keys[i].cause_ip(), irq.cause_ip());
    EXPECT_TRUE(keys[i].has_delay_slot());
    EXPECT_FALSE(keys[i].has_cat_record());
    *keyed.mutable_interrupts(static_cast<int>(i)) = keys[i];
  }
  VerifyResult v = Check(c, keyed);
  EXPECT_TRUE(v.identical) << v.report;
  aes::Interrupt& flipped = *keyed.mutable_interrupts(2);
  flipped.set_delay_slot(!flipped.delay_slot());
  EXPECT_FALSE(Check(c, keyed).identical);
}

TEST(R4400Replay, HeaderIsTheMachines) {
  EXPECT_EQ(*systems::CatHeaderFor(Default().x.ims), Default().capture.header);
}

class Seeds : public ::testing::TestWithParam<int> {};

TEST_P(Seeds, CaptureExtractReplayVerifyIsExact) {
  Captured c = CaptureAndExtract(GetParam());
  // Replay to files, as `citcat replay` does, then compare the files.
  std::string regenerated = absl::StrCat(::testing::TempDir(), "/regen-", GetParam(), ".cat");
  std::string trace = absl::StrCat(::testing::TempDir(), "/trace-", GetParam(), ".txt");
  auto writer = cat::CatWriter::Create(regenerated, *systems::CatHeaderFor(c.x.ims));
  ASSERT_TRUE(writer.ok());
  auto trace_file = traces::OpenOutput(trace);
  ASSERT_TRUE(trace_file.ok());
  ReplayOptions options;
  options.regenerated = writer->get();
  options.trace = trace_file->get();
  auto summary = systems::Replay(c.x.ims, c.x.aes, options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_TRUE((*writer)->Finish().ok());
  ASSERT_TRUE((*trace_file)->Close().ok());
  EXPECT_EQ(summary->interrupts, static_cast<uint64_t>(c.x.aes.interrupts_size()));
  EXPECT_EQ(summary->records, c.x.aes.end().cat_records());
  // The machine's count also has the driver's state dump after the begin marker (about 560
  // instructions) and the power-off store's delay slot after the last record.
  EXPECT_LT(summary->instructions, c.capture.summary.traced_instructions);
  EXPECT_GT(summary->instructions + 700, c.capture.summary.traced_instructions);

  auto verdict = systems::CompareCats(c.cat_path, regenerated);
  ASSERT_TRUE(verdict.ok()) << verdict.status();
  EXPECT_TRUE(verdict->identical) << verdict->report;
  EXPECT_EQ(verdict->start, c.x.ims.start().cat_record());
  EXPECT_EQ(verdict->compared, c.x.aes.end().cat_records());

  // The text trace: one line per instruction, interrupts among the events.
  std::ifstream in(trace);
  std::string line, first;
  uint64_t instructions = 0, interrupts = 0;
  while (std::getline(in, line)) {
    if (first.empty()) first = line;
    if (line.find(" - interrupt") != std::string::npos) ++interrupts;
    if (line.find(" - ") == std::string::npos) ++instructions;
  }
  EXPECT_THAT(first, HasSubstr(absl::StrCat(absl::Hex(c.x.ims.mips().pc(), absl::kZeroPad16))));
  EXPECT_GE(instructions, summary->instructions);
  EXPECT_EQ(interrupts, summary->interrupts);

  // And in one go, comparing on the fly.
  EXPECT_TRUE(Check(c, c.x.aes).identical);
}

INSTANTIATE_TEST_SUITE_P(R4400Replay, Seeds, ::testing::Values(1, 2, 3, 4, 5));

// ---- schedules damaged on purpose ----

TEST(R4400ReplayDivergence, InterruptDropped) {
  const Captured& c = Default();
  aes::EventSchedule aes = c.x.aes;
  const int k = aes.interrupts_size() / 2;
  const aes::Interrupt dropped = aes.interrupts(k);
  aes.mutable_interrupts()->DeleteSubrange(k, 1);
  VerifyResult v = Check(c, aes);
  ASSERT_FALSE(v.identical);
  // The handler's first record comes before its report; nothing before the boundary differs.
  EXPECT_LE(v.first_difference, dropped.cat_record()) << v.report;
  EXPECT_GT(v.first_difference, k > 0 ? aes.interrupts(k - 1).cat_record() : 0) << v.report;
}

TEST(R4400ReplayDivergence, InterruptMovedByOneInstruction) {
  const Captured& c = Default();
  for (int k : {0, 1, 2}) {
    aes::EventSchedule aes = c.x.aes;
    aes::Interrupt& irq = *aes.mutable_interrupts(k);
    irq.set_pc(irq.pc() + 4);
    VerifyResult v = Check(c, aes);
    ASSERT_FALSE(v.identical) << k;
    EXPECT_LE(v.first_difference, irq.cat_record()) << v.report;
    EXPECT_GT(v.first_difference, k > 0 ? aes.interrupts(k - 1).cat_record() : 0) << v.report;
  }
}

TEST(R4400ReplayDivergence, DmaByteChanged) {
  const Captured& c = Default();
  aes::EventSchedule aes = c.x.aes;
  aes::DmaTransfer& d = *aes.mutable_dma(1);
  (*d.mutable_data())[100] ^= 0x40;
  VerifyResult v = Check(c, aes);
  ASSERT_FALSE(v.identical);
  EXPECT_EQ(v.first_difference, d.cat_record()) << v.report;
  EXPECT_THAT(v.report, HasSubstr("data differs"));
}

TEST(R4400ReplayDivergence, DeviceReadsSwapped) {
  const Captured& c = Default();
  aes::EventSchedule aes = c.x.aes;
  int k = 0;
  while (k + 1 < aes.device_io_size() &&
         (aes.device_io(k).write() || aes.device_io(k + 1).write() ||
          aes.device_io(k).address() == aes.device_io(k + 1).address())) {
    ++k;
  }
  ASSERT_LT(k + 1, aes.device_io_size());
  const uint64_t first = aes.device_io(k).cat_record();
  aes.mutable_device_io()->SwapElements(k, k + 1);
  VerifyResult v = Check(c, aes);
  ASSERT_FALSE(v.identical);
  EXPECT_EQ(v.first_difference, first) << v.report;
  EXPECT_THAT(v.report, StartsWith(absl::StrCat("divergence at CAT record ", first)));
  EXPECT_THAT(v.report, HasSubstr("last instructions executed"));
}

TEST(R4400ReplayDivergence, CountValueChanged) {
  const Captured& c = Default();
  aes::EventSchedule aes = c.x.aes;
  int k = 0;
  while (aes.register_reads(k).register_() != aes::RegisterRead::REGISTER_MIPS_COUNT) ++k;
  k += 3;  // not the first
  while (aes.register_reads(k).register_() != aes::RegisterRead::REGISTER_MIPS_COUNT) ++k;
  aes::RegisterRead& r = *aes.mutable_register_reads(k);
  r.set_value(r.value() + 1);
  VerifyResult v = Check(c, aes);
  ASSERT_FALSE(v.identical);
  EXPECT_EQ(v.first_difference, r.cat_record()) << v.report;  // the echo store
}

// A schedule of this format version with nothing in it.
aes::EventSchedule NothingScheduled() {
  aes::EventSchedule aes;
  aes.set_format_version(aes::kFormatVersion);
  return aes;
}

TEST(R4400ReplayDivergence, EmptySchedule) {
  const Captured& c = Default();
  auto result = systems::Replay(c.x.ims, NothingScheduled(), {});
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(absl::IsAborted(result.status())) << result.status();
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("no end point"));
  VerifyResult v = Check(Default(), NothingScheduled());
  ASSERT_FALSE(v.identical);
  EXPECT_EQ(v.first_difference, c.x.ims.start().cat_record()) << v.report;
}

TEST(R4400ReplayDivergence, OnlyTheEndPoint) {
  const Captured& c = Default();
  aes::EventSchedule aes = NothingScheduled();
  *aes.mutable_end() = c.x.aes.end();
  auto result = systems::Replay(c.x.ims, aes, {});
  ASSERT_TRUE(absl::IsAborted(result.status())) << result.status();
  // The first thing the workload needs from the outside world is a Count value.
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("the core read Count"));
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("last instructions executed"));
  VerifyResult v = Check(c, aes);
  ASSERT_FALSE(v.identical);
  EXPECT_LE(v.first_difference, c.x.aes.register_reads(0).cat_record()) << v.report;
}

TEST(R4400ReplayDivergence, WrongIms) {
  ims::InitialMachineState ims;
  auto result = systems::Replay(ims, Default().x.aes, {});
  EXPECT_TRUE(absl::IsInvalidArgument(result.status())) << result.status();
}

// Damage of every kind, at random: replay ends with a result, a divergence or an input error,
// never a crash or another kind of failure (the sanitizer build checks memory on the way).
TEST(R4400ReplayDivergence, RandomDamageEndsCleanly) {
  const Captured& c = Default();
  std::mt19937_64 rng(42);
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  int diverged = 0;
  for (int round = 0; round < 150; ++round) {
    ims::InitialMachineState ims = c.x.ims;
    aes::EventSchedule aes = c.x.aes;
    for (int k = 0, n = 1 + pick(3); k < n; ++k) {
      switch (pick(12)) {
        case 0:
          aes.mutable_interrupts()->DeleteSubrange(pick(aes.interrupts_size()), 1);
          break;
        case 1: {
          aes::Interrupt& irq = *aes.mutable_interrupts(pick(aes.interrupts_size()));
          irq.set_branch_count(irq.branch_count() + pick(5) - 2);
          irq.set_cause_ip(rng());
          break;
        }
        case 2: {
          aes::DmaTransfer& d = *aes.mutable_dma(pick(aes.dma_size()));
          d.set_after_cpu_transactions(rng() % (aes.end().cpu_transactions() + 2));
          if (pick(2)) d.set_address(rng() % (64 << 20));
          if (pick(2)) d.mutable_data()->resize(pick(2000));
          d.set_to_memory(pick(2));
          d.set_branch_count(pick(2) ? 0 : d.branch_count() + pick(3) - 1);
          break;
        }
        case 3: {
          aes::DeviceAccess& io = *aes.mutable_device_io(pick(aes.device_io_size()));
          io.set_write(pick(2));
          if (pick(2)) io.mutable_data()->resize(pick(9));
          break;
        }
        case 4:
          aes.mutable_register_reads(pick(aes.register_reads_size()))
              ->set_register_(static_cast<aes::RegisterRead::Register>(pick(3)));
          break;
        case 5:
          aes.mutable_register_reads(pick(aes.register_reads_size()))->set_value(rng());
          break;
        case 6:
          aes.mutable_end()->set_cat_records(rng() % (aes.end().cat_records() + 10));
          aes.mutable_end()->set_cpu_transactions(rng() % (aes.end().cpu_transactions() + 10));
          break;
        case 7:
          aes.mutable_end()->set_branch_count(rng() % (2 * aes.end().branch_count() + 1));
          break;
        case 8:
          ims.mutable_mips()->set_pc(pick(2) ? rng() : ims.mips().pc() + 4 * (pick(9) - 4));
          break;
        case 9:
          ims.mutable_mips()->mutable_cp0()->set_status(rng());
          break;
        case 10: {
          ims::MipsTlbEntry& e = *ims.mutable_mips()->mutable_tlb(pick(48));
          e.set_entry_hi(rng());
          e.set_entry_lo0(rng());
          e.set_page_mask(rng());
          break;
        }
        case 11:
          if (ims.memory_size() > 0) {
            ims::MemoryExtent& m = *ims.mutable_memory(pick(ims.memory_size()));
            if (!m.data().empty()) (*m.mutable_data())[pick(m.data().size())] ^= 1 << pick(8);
          }
          break;
      }
    }
    auto result = systems::Replay(ims, aes, {});
    if (!result.ok()) {
      EXPECT_TRUE(absl::IsAborted(result.status()) || absl::IsInvalidArgument(result.status()))
          << result.status();
      ++diverged;
    }
  }
  EXPECT_GT(diverged, 100);
}

// A register edited in the IMS is caught by a two-file verify even if its value never reaches
// the bus: replay writes the state dump the IMS implies ahead of the regenerated records, and
// verify compares it with the original's. Every GPR, one at a time.
TEST(R4400Replay, TwoFileVerifySeesEveryRegisterOfTheIms) {
  const Captured& c = Default();
  const std::string regenerated = absl::StrCat(::testing::TempDir(), "/regen-gpr.cat");
  for (int r = 1; r < 32; ++r) {
    ims::InitialMachineState ims = c.x.ims;
    ims.mutable_mips()->set_gpr(r, ims.mips().gpr(r) ^ 0x80);
    auto writer = cat::CatWriter::Create(regenerated, *systems::CatHeaderFor(ims));
    ASSERT_TRUE(writer.ok());
    ReplayOptions options;
    options.regenerated = writer->get();
    if (!systems::Replay(ims, c.x.aes, options).ok()) continue;  // a divergence: caught anyway
    ASSERT_TRUE((*writer)->Finish().ok());
    auto verdict = systems::CompareCats(c.cat_path, regenerated);
    ASSERT_TRUE(verdict.ok()) << verdict.status();
    EXPECT_FALSE(verdict->identical) << "GPR " << r;
    EXPECT_THAT(verdict->report,
                HasSubstr(absl::StrCat("cpu-state+0x", absl::Hex(CITCAT_R4400_SLOT_GPR + 8 * r))))
        << "GPR " << r;
  }
  // An IMS no dump could have produced is refused.
  ims::InitialMachineState ims = c.x.ims;
  ims.mutable_mips()->set_ll_bit(true);
  EXPECT_TRUE(absl::IsInvalidArgument(systems::Replay(ims, c.x.aes, {}).status()));
}

// Random follows retired instructions in the traced machine; the driver reads it 37 instructions
// before the resume point and extraction steps it on to there.
TEST(R4400Replay, RandomFromTheDriver) {
  replay_test::GuestOptions options;
  options.read_random = true;
  Captured c = CaptureAndExtract(3, options);
  VerifyResult v = Check(c, c.x.aes);
  EXPECT_TRUE(v.identical) << v.report;
}

TEST(R4400Replay, ManySeeds) {
  for (int seed = 100; seed < 130; ++seed) {
    Captured c = CaptureAndExtract(seed);
    VerifyResult v = Check(c, c.x.aes);
    EXPECT_TRUE(v.identical) << "seed " << seed << ": " << v.report;
  }
}

// A kernel that lets an interrupt come between a Count read and its echo breaks the contract:
// the echoes, and so the AES, are then out of read order. Replay says so.
TEST(R4400ReplayDivergence, InterruptBetweenReadAndEcho) {
  replay_test::GuestOptions options;
  options.iterations = 200000;
  options.mask_count_reads = false;
  int races = 0;
  for (int seed = 11; seed < 31 && races == 0; ++seed) {
    Captured c = CaptureAndExtract(seed, options);
    VerifyResult v = Check(c, c.x.aes);
    if (v.identical) continue;
    EXPECT_THAT(v.report, HasSubstr("interrupts masked")) << v.report;
    ++races;
  }
  EXPECT_EQ(races, 1);
}

// A larger run for the speed figure (printed; the test checks exactness only).
TEST(R4400Replay, LargeRun) {
  replay_test::GuestOptions options;
  options.iterations = 200000;
  Captured c = CaptureAndExtract(11, options);
  ReplaySummary summary;
  VerifyResult v = Check(c, c.x.aes, &summary);
  EXPECT_TRUE(v.identical) << v.report;
  int in_delay_slot = 0;  // interrupts taken in a delay slot (Cause.BD in the handler's echo)
  for (const aes::RegisterRead& r : c.x.aes.register_reads()) {
    in_delay_slot += r.register_() == aes::RegisterRead::REGISTER_MIPS_CAUSE && (r.value() >> 31);
  }
  EXPECT_GT(in_delay_slot, 10);
  std::printf("replayed %llu instructions, %llu records, %llu interrupts in %.3f s: %.1f M/s\n",
              static_cast<unsigned long long>(summary.instructions),
              static_cast<unsigned long long>(summary.records),
              static_cast<unsigned long long>(summary.interrupts), summary.seconds,
              summary.instructions / summary.seconds / 1e6);
}

}  // namespace
}  // namespace citcat::replay
