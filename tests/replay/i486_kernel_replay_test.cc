// Replay of the real i486 guest's captures (guest/i486 on the traced PC): every workload and the
// default mix under several seeds exact through the file path (capture -> extract -> replay ->
// regenerated CAT -> verify), and damaged schedules and states that must fail, never crash.
#include <unistd.h>

#include <random>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "aes/aes_util.h"
#include "cat_parser/reader.h"
#include "cat_parser/writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "guest/i486/guest_paths.h"
#include "machine/elf_loader.h"
#include "replay/i486_adapter.h"
#include "replay/replay.h"
#include "replay/verify.h"
#include "systems/system.h"

namespace citcat::replay {
namespace {

using ::testing::HasSubstr;

struct Captured {
  std::string cat_path;
  extract::Extraction x;
  systems::CaptureReport report;
};

Captured Capture(const std::string& workloads, uint64_t seed, uint64_t max_traced = 0) {
  Captured c;
  auto system = systems::ByName("i486");
  EXPECT_TRUE(system.ok());
  systems::CaptureRequest request;
  request.workloads = workloads;
  request.seed = seed;
  request.max_traced = max_traced;
  c.cat_path = absl::StrCat(::testing::TempDir(), "/i486-kernel-", workloads, "-", seed, "-",
                            max_traced, "-", getpid(), ".cat");
  auto report = (*system)->capture(request, c.cat_path);
  EXPECT_TRUE(report.ok()) << report.status();
  if (report.ok()) c.report = *report;
  auto reader = cat::CatReader::Open(c.cat_path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  auto x = systems::Extract(**reader);
  EXPECT_TRUE(x.ok()) << x.status();
  if (x.ok()) c.x = *std::move(x);
  return c;
}

VerifyResult Check(const Captured& c, const ims::InitialMachineState& ims,
                   const aes::EventSchedule& aes, ReplaySummary* summary = nullptr) {
  auto result = systems::ReplayAgainst(c.cat_path, ims, aes, {}, summary);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *result : VerifyResult{};
}

const Captured& Mix() {
  static const Captured* c = new Captured(Capture("", 1));
  return *c;
}

TEST(I486KernelReplay, TheDefaultMixThroughTheFiles) {
  const Captured& c = Mix();
  ASSERT_TRUE(c.report.halted);
  const std::string regenerated =
      absl::StrCat(::testing::TempDir(), "/i486-kernel-regenerated-", getpid(), ".cat");
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
  EXPECT_GT(summary->device_accesses, 1000u);
  auto verdict = systems::CompareCats(c.cat_path, regenerated);
  ASSERT_TRUE(verdict.ok()) << verdict.status();
  EXPECT_TRUE(verdict->identical) << verdict->report;
  std::printf("REPLAYED i486 default mix: %llu instructions, %d interrupts\n",
              static_cast<unsigned long long>(summary->instructions), c.x.aes.interrupts_size());
}

class Workload : public ::testing::TestWithParam<const char*> {};

TEST_P(Workload, EachAloneUnderTwoSeedsIsExact) {
  for (uint64_t seed : {2, 5}) {
    const Captured c = Capture(GetParam(), seed);
    EXPECT_TRUE(c.report.halted) << GetParam();
    ReplaySummary summary;
    const VerifyResult v = Check(c, c.x.ims, c.x.aes, &summary);
    EXPECT_TRUE(v.identical) << GetParam() << " seed " << seed << ": " << v.report;
    EXPECT_GT(summary.instructions, 100'000u);
  }
}

INSTANTIATE_TEST_SUITE_P(I486KernelReplay, Workload,
                         ::testing::Values("sort", "hash", "compress", "int64", "fp", "memcpy",
                                           "chase", "io", "rep", "x87", "mode16"));

// Is the instruction at `eip` of `elf` a REP string instruction (prefixes 66h, F2h, F3h, then
// MOVS, CMPS, STOS or SCAS, with REP)?
bool IsRepString(const machine::ElfImage& elf, uint64_t eip) {
  uint8_t bytes[4];
  if (!elf.Read(eip, bytes, sizeof bytes)) return false;
  bool rep = false;
  int i = 0;
  for (; i < 3 && (bytes[i] == 0x66 || bytes[i] == 0xF2 || bytes[i] == 0xF3); ++i) {
    rep |= bytes[i] != 0x66;
  }
  const uint8_t op = bytes[i];
  return rep &&
         ((op >= 0xA4 && op <= 0xA7) || (op >= 0xAA && op <= 0xAF && op != 0xAC && op != 0xAD));
}

// The timer interrupts REP string instructions (a REP instruction is one instruction time, so
// the timer takes them at the boundary before the first iteration) and replay resumes them
// exactly.
TEST(I486KernelReplay, InterruptsLandOnRepStringInstructions) {
  auto elf = machine::LoadElfFile(CITCAT_I486_GUEST_DIR "/rep.elf");
  ASSERT_TRUE(elf.ok()) << elf.status();
  for (uint64_t seed : {2, 5}) {
    const Captured c = Capture("rep", seed);
    // The long copies of rep.c start with these counts; an interrupt between two of their
    // iterations finds another count in ECX.
    const std::set<uint64_t> starts = {65536 - 8, 65536 / 2 - 4, 65536 / 4 - 4, 65536 / 4 - 8};
    int on_rep = 0, with_count = 0, inside = 0;
    for (const aes::Interrupt& i : c.x.aes.interrupts()) {
      if (!IsRepString(*elf, i.pc())) continue;
      ++on_rep;
      with_count += i.rep_remaining() != 0;
      inside += i.rep_remaining() > 300 && i.rep_remaining() < 65536 &&
                !starts.contains(i.rep_remaining());
    }
    EXPECT_GT(on_rep, 5) << "seed " << seed;
    EXPECT_GT(with_count, 0) << "seed " << seed;
    EXPECT_GT(inside, 5) << "seed " << seed;
    EXPECT_TRUE(Check(c, c.x.ims, c.x.aes).identical) << "seed " << seed;
    std::printf(
        "rep seed %llu: %d interrupts, %d on a REP string instruction (%d with a count "
        "left, %d between two iterations of a long one)\n",
        static_cast<unsigned long long>(seed), c.x.aes.interrupts_size(), on_rep, with_count,
        inside);
  }
}

TEST(I486KernelReplay, ACaptureCutShortIsExact) {
  const Captured c = Capture("io,chase", 4, 300'000);
  EXPECT_TRUE(c.report.cut_short);
  // The cap counts from the begin of the trace, wherever in the boot's slices that falls (the run
  // goes on only to the end of an interrupt acknowledge's report).
  EXPECT_GE(c.report.traced_instructions, 300'000u);
  EXPECT_LT(c.report.traced_instructions, 300'100u);
  EXPECT_TRUE(Check(c, c.x.ims, c.x.aes).identical);
}

// Each damage fails: a divergence, or a regenerated record verify finds different.
TEST(I486KernelReplay, DamagedSchedulesFail) {
  const Captured& c = Mix();
  const aes::EventSchedule& aes = c.x.aes;
  ASSERT_GT(aes.interrupts_size(), 10);
  ASSERT_GT(aes.dma_size(), 2);
  int read_a = -1, read_b = -1;  // two port reads of different values
  for (int i = 0; i < aes.device_io_size() && read_b < 0; ++i) {
    if (aes.device_io(i).write()) continue;
    if (read_a < 0) {
      read_a = i;
    } else if (aes.device_io(i).data() != aes.device_io(read_a).data()) {
      read_b = i;
    }
  }
  ASSERT_GE(read_b, 0);
  struct Case {
    const char* what;
    std::function<void(aes::EventSchedule&)> edit;
  };
  const Case cases[] = {
      {"an interrupt dropped",
       [](aes::EventSchedule& a) { a.mutable_interrupts()->DeleteSubrange(5, 1); }},
      {"an interrupt moved by one EIP",
       [](aes::EventSchedule& a) { a.mutable_interrupts(5)->set_pc(a.interrupts(5).pc() + 1); }},
      {"an interrupt moved by one branch",
       [](aes::EventSchedule& a) {
         a.mutable_interrupts(5)->set_branch_count(a.interrupts(5).branch_count() + 1);
       }},
      {"an interrupt's ECX by one",
       [](aes::EventSchedule& a) {
         a.mutable_interrupts(5)->set_rep_remaining(a.interrupts(5).rep_remaining() + 1);
       }},
      {"a wrong vector", [](aes::EventSchedule& a) { a.mutable_interrupts(5)->set_vector(0x21); }},
      {"a DMA byte changed",
       [](aes::EventSchedule& a) { (*a.mutable_dma(1)->mutable_data())[100] ^= 1; }},
      {"two port reads swapped",
       [&](aes::EventSchedule& a) {
         std::swap(*a.mutable_device_io(read_a)->mutable_data(),
                   *a.mutable_device_io(read_b)->mutable_data());
       }},
      {"an empty schedule",
       [](aes::EventSchedule& a) {
         a.Clear();
         a.set_format_version(aes::kFormatVersion);
       }},
  };
  for (const Case& k : cases) {
    aes::EventSchedule edited = aes;
    k.edit(edited);
    auto v = systems::ReplayAgainst(c.cat_path, c.x.ims, edited, {}, nullptr);
    EXPECT_TRUE(!v.ok() || !v->identical) << k.what;
    if (v.ok() && !v->identical) {
      EXPECT_THAT(v->report, HasSubstr("record ")) << k.what;
    }
  }
  // Another capture's state: refused at the state dump before anything runs.
  const Captured other = Capture("sort", 3);
  auto v = systems::ReplayAgainst(c.cat_path, other.x.ims, aes, {}, nullptr);
  EXPECT_TRUE(!v.ok() || !v->identical);
}

// Random damage to the serialized IMS and AES ends in a result, a divergence or an input error.
TEST(I486KernelReplay, RandomDamageNeverCrashes) {
  const Captured c = Capture("io", 6, 200'000);
  std::mt19937 rng(7);
  const std::string ims = c.x.ims.SerializeAsString(), aes = c.x.aes.SerializeAsString();
  int refused = 0;
  for (int i = 0; i < 120; ++i) {
    std::string a = ims, b = aes;
    std::string& victim = i % 2 ? a : b;
    for (int k = 0; k < 1 + i % 4; ++k) victim[rng() % victim.size()] ^= 1 << (rng() % 8);
    ims::InitialMachineState damaged_ims;
    aes::EventSchedule damaged_aes;
    if (!damaged_ims.ParseFromString(a) || !damaged_aes.ParseFromString(b)) {
      ++refused;
      continue;
    }
    auto v = systems::ReplayAgainst(c.cat_path, damaged_ims, damaged_aes, {}, nullptr);
    refused += !v.ok() || !v->identical;
  }
  EXPECT_GT(refused, 60);
}

}  // namespace
}  // namespace citcat::replay
