// The guest kernel and its workloads on the traced R4400 machine: every workload's known answer,
// the halt by power-off, and the CITCAT hooks as the CAT shows them (begin marker and state-done
// once and in order, the interrupt reports, every Count read echoed, no pre-trace write-back).
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "cat_parser/reader.h"
#include "cat_parser/writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "guest/r4400/expected.h"
#include "guest/r4400/guest_paths.h"
#include "guest/r4400/tools/disk_image.h"
#include "guest/r4400/tools/guest_info.h"
#include "machine/r4400/machine.h"

namespace citcat::guest {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr uint64_t kMagic = 0x1FE00000;
constexpr uint64_t kBegin = kMagic + 0x0000;
constexpr uint64_t kCpuState = kMagic + 0x1000;
constexpr uint64_t kStateDone = kMagic + 0x3000;
constexpr uint64_t kExcEpc = kMagic + 0x4000;
constexpr uint64_t kExcStatus = kMagic + 0x4008;
constexpr uint64_t kCause = kMagic + 0x5000;
constexpr uint64_t kCount = kMagic + 0x5008;
constexpr uint64_t kConsole = kMagic + 0x6000;
// The driver reads Random this many instructions before the resume point (r4400-guest.md).
constexpr int kRandomDistance = 37;

const std::map<std::string, uint32_t>& Expected() {
  static const auto* m = new std::map<std::string, uint32_t>{
      {"sort", EXPECT_SORT},   {"hash", EXPECT_HASH}, {"compress", EXPECT_COMPRESS},
      {"int64", EXPECT_INT64}, {"fp", EXPECT_FP},     {"memcpy", EXPECT_MEMCPY},
      {"chase", EXPECT_CHASE}, {"io", EXPECT_IO}};
  return *m;
}

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

uint64_t Value(const cat::OwnedRecord& r) {
  uint64_t v = 0;
  for (uint8_t b : r.data) v = v << 8 | b;
  return v;
}

std::unique_ptr<machine::R4400Machine> NewMachine(const std::string& boot, uint64_t seed,
                                                  std::vector<uint8_t> disk = {},
                                                  uint64_t memory = 32 << 20) {
  machine::R4400Options o;
  o.seed = seed;
  o.memory_bytes = memory;
  o.disk = disk.empty() ? ReadFile(CITCAT_R4400_DISK_IMAGE) : std::move(disk);
  o.boot_args = boot;
  auto m = machine::R4400Machine::Create(o);
  EXPECT_TRUE(m.ok()) << m.status();
  auto kernel = machine::LoadElfFile(CITCAT_R4400_KERNEL_ELF);
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_TRUE((*m)->LoadKernel(*kernel).ok());
  return std::move(*m);
}

struct GuestRun {
  std::string console;
  machine::RunSummary summary;
  std::vector<cat::OwnedRecord> records;  // the whole CAT
};

GuestRun RunGuest(const std::string& boot, uint64_t seed = 1, std::vector<uint8_t> disk = {},
                  uint64_t memory = 32 << 20) {
  auto m = NewMachine(boot, seed, std::move(disk), memory);
  std::string path = absl::StrFormat("%s/guest-%d-%s-%d.cat", ::testing::TempDir(), getpid(),
                                     boot.empty() ? "mix" : boot, seed);
  auto writer = cat::CatWriter::Create(path, m->Header());
  GuestRun run;
  EXPECT_TRUE(writer.ok()) << writer.status();
  if (!writer.ok()) return run;
  auto summary = m->Run(writer->get(), ~uint64_t{0}, 200'000'000);
  EXPECT_TRUE(summary.ok()) << summary.status();
  if (!summary.ok()) return run;
  EXPECT_TRUE((*writer)->Finish().ok());
  run.console = m->console();
  run.summary = *summary;
  auto reader = cat::CatReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  cat::BusRecord r;
  while (reader.ok()) {
    auto more = (*reader)->Next(r);
    EXPECT_TRUE(more.ok()) << more.status();
    if (!more.ok() || !*more) break;
    run.records.emplace_back(r);
  }
  std::remove(path.c_str());
  return run;
}

void ExpectChecksums(const GuestRun& run, const std::vector<std::string>& names, int failed = 0) {
  for (const std::string& name : names) {
    EXPECT_THAT(run.console,
                HasSubstr(absl::StrFormat("%s: checksum 0x%08x ok\n", name, Expected().at(name))))
        << run.console;
  }
  EXPECT_THAT(run.console, Not(HasSubstr("BAD")));
  if (failed == 0) {
    EXPECT_THAT(run.console, Not(HasSubstr("killed")));
  }
  EXPECT_THAT(run.console, Not(HasSubstr("panic")));
  EXPECT_THAT(run.console,
              HasSubstr(absl::StrFormat("kernel: all %d tasks done (%d failed)",
                                        static_cast<int>(names.size()) + failed, failed)));
  EXPECT_TRUE(run.summary.halted);
  EXPECT_TRUE(run.summary.began);
}

bool IsStore(const cat::OwnedRecord& r, uint64_t address, size_t size) {
  return r.kind == cat::RecordKind::kUncachedWrite && r.address == address && r.data.size() == size;
}

// The hooks as the CAT shows them.
void ExpectHooks(const GuestRun& run, size_t programs) {
  const auto& rec = run.records;
  ASSERT_FALSE(rec.empty());
  // The trace begins with the marker; state-done comes once, later.
  ASSERT_TRUE(IsStore(rec[0], kBegin, 8));
  EXPECT_EQ(Value(rec[0]), 0x4349544341540001ull);
  size_t done = 0, begins = 0, dones = 0;
  for (size_t i = 0; i < rec.size(); ++i) {
    if (rec[i].address == kBegin && rec[i].kind == cat::RecordKind::kUncachedWrite) ++begins;
    if (IsStore(rec[i], kStateDone, 8)) {
      ++dones;
      done = i;
    }
  }
  EXPECT_EQ(begins, 1u);
  ASSERT_EQ(dones, 1u);
  // Between them only the driver's uncached fetches, stores and reads of the reserved area.
  for (size_t i = 1; i < done; ++i) {
    EXPECT_TRUE(rec[i].kind == cat::RecordKind::kUncachedRead ||
                rec[i].kind == cat::RecordKind::kUncachedWrite)
        << "record " << i << " kind " << int(rec[i].kind) << " at " << std::hex << rec[i].address
        << " bc " << std::dec << rec[i].branch_count;
    if (rec[i].kind == cat::RecordKind::kUncachedWrite) {
      EXPECT_GE(rec[i].address, kMagic);
    }
  }
  // The resume PC lies in kseg0 and k0 holds it; k1 holds the reserved area's kseg1 base.
  uint64_t resume = 0, k0 = 0, k1 = 0;
  for (size_t i = 1; i < done; ++i) {
    if (IsStore(rec[i], kCpuState + 0x110, 8)) resume = Value(rec[i]);
    if (IsStore(rec[i], kCpuState + 8 * 26, 8)) k0 = Value(rec[i]);
    if (IsStore(rec[i], kCpuState + 8 * 27, 8)) k1 = Value(rec[i]);
  }
  EXPECT_EQ(resume >> 29, 0x7FFFFFFFCull) << std::hex << resume;  // 0xFFFFFFFF8xxxxxxx
  EXPECT_EQ(k0, resume);
  EXPECT_EQ(k1, 0xFFFFFFFFBFE00000ull);

  // After state-done: interrupt reports, Cause and Count echoes, no write-back of a line that
  // was not filled in the trace.
  std::set<uint64_t> filled;
  uint64_t reports = 0, count_echoes = 0, console_stores = 0, cause_echoes = 0;
  const cat::OwnedRecord* last_cause = nullptr;
  for (size_t i = done + 1; i < rec.size(); ++i) {
    const cat::OwnedRecord& r = rec[i];
    if (r.kind == cat::RecordKind::kFill) filled.insert(r.address);
    if (r.kind == cat::RecordKind::kWriteBack) {
      EXPECT_TRUE(filled.count(r.address)) << "write-back of pre-trace data at record " << i;
    }
    if (IsStore(r, kCause, 4)) {
      last_cause = &r;
      ++cause_echoes;
    }
    if (IsStore(r, kCount, 4)) ++count_echoes;
    if (IsStore(r, kConsole, 8)) ++console_stores;
    if (IsStore(r, kExcEpc, 8)) {
      ++reports;
      ASSERT_NE(last_cause, nullptr);
      EXPECT_EQ(Value(*last_cause) & 0x7C, 0u) << "an EPC report after a non-interrupt Cause";
      // exactly one branch between the Cause echo (before the BNEZ) and the EPC store
      EXPECT_EQ(r.branch_count, last_cause->branch_count + 1);
      // the Status report follows
      bool status = false;
      for (size_t j = i + 1; j < rec.size() && j < i + 4; ++j)
        status |= IsStore(rec[j], kExcStatus, 4);
      EXPECT_TRUE(status);
      // the interrupt was taken with IE on and EXL off
      last_cause = nullptr;
    }
  }
  EXPECT_EQ(reports, run.summary.interrupts);
  EXPECT_GT(reports, 0u);
  // The driver reads Count once for its dump, unechoed (it is state, not input).
  EXPECT_EQ(count_echoes + 1, run.summary.count_reads);
  EXPECT_EQ(console_stores, programs);
  // The hooks' cost (r4400-guest.md, "Perturbation"): 9 instructions per interrupt, 6 per other
  // exception, 2 per Count read.
  uint64_t hooks = HookInstructions(reports, cause_echoes, count_echoes);
  std::printf(
      "  perturbation: %llu interrupts, %llu other exceptions, %llu Count reads: %llu hook "
      "instructions = %.3f%% of %llu traced\n",
      static_cast<unsigned long long>(reports),
      static_cast<unsigned long long>(cause_echoes - reports),
      static_cast<unsigned long long>(count_echoes), static_cast<unsigned long long>(hooks),
      100.0 * static_cast<double>(hooks) / static_cast<double>(run.summary.traced_instructions),
      static_cast<unsigned long long>(run.summary.traced_instructions));
}

class SingleWorkload : public ::testing::TestWithParam<std::string> {};

TEST_P(SingleWorkload, ChecksumAndHooks) {
  GuestRun run = RunGuest(GetParam());
  ExpectChecksums(run, {GetParam()});
  ExpectHooks(run, 1);
  std::printf("%s: %llu instructions (%llu traced), %llu interrupts, %llu bus records\n",
              GetParam().c_str(), static_cast<unsigned long long>(run.summary.instructions),
              static_cast<unsigned long long>(run.summary.traced_instructions),
              static_cast<unsigned long long>(run.summary.interrupts),
              static_cast<unsigned long long>(run.summary.bus_records));
}

INSTANTIATE_TEST_SUITE_P(Workloads, SingleWorkload,
                         ::testing::Values("sort", "hash", "compress", "int64", "fp", "memcpy",
                                           "chase", "io"),
                         [](const auto& info) { return info.param; });

TEST(DefaultMix, AllChecksumsAndHooks) {
  GuestRun run = RunGuest("");
  std::vector<std::string> names = absl::StrSplit(CITCAT_R4400_DEFAULT_MIX, ',');
  ExpectChecksums(run, names);
  ExpectHooks(run, names.size());
  EXPECT_GT(run.summary.dma_transfers, 10u);
}

TEST(GuestInfo, MatchesTheBuild) {
  std::vector<std::string> names = absl::StrSplit(CITCAT_R4400_WORKLOADS, ',');
  ASSERT_EQ(names.size(), std::size(kWorkloads));
  for (size_t i = 0; i < names.size(); ++i) EXPECT_EQ(names[i], kWorkloads[i].name);
  EXPECT_EQ(kDefaultMix, CITCAT_R4400_DEFAULT_MIX);
}

TEST(Mix, EveryWorkloadAtOnceUnderAnotherSeed) {
  GuestRun run = RunGuest(CITCAT_R4400_WORKLOADS, 7);
  std::vector<std::string> names = absl::StrSplit(CITCAT_R4400_WORKLOADS, ',');
  ExpectChecksums(run, names);
  ExpectHooks(run, names.size());
}

// Two FPU tasks and two 64-bit tasks at once: the lazy FPU switch saves and restores between the
// two fp tasks, and every preemption of an int64 pass must keep the other task's 64-bit values.
TEST(Kernel, TasksKeepTheirFpuAnd64BitRegisters) {
  GuestRun run = RunGuest("fp,int64,fp,int64", 5);
  ExpectChecksums(run, {"fp", "int64", "fp", "int64"});
  EXPECT_EQ(run.console.find("fp: checksum") != run.console.rfind("fp: checksum"), true);
  EXPECT_EQ(run.console.find("int64: checksum") != run.console.rfind("int64: checksum"), true);
  ExpectHooks(run, 4);
}

TEST(Kernel, FaultingTaskIsKilledOthersFinish) {
  GuestRun run = RunGuest("crash,hash");
  EXPECT_THAT(run.console, HasSubstr("crash: storing into the text segment\n"));
  EXPECT_THAT(run.console, HasSubstr("kernel: task 0 (crash) killed: TLB modified at pc 0x004"));
  EXPECT_THAT(run.console, Not(HasSubstr("still alive")));
  ExpectChecksums(run, {"hash"}, 1);
}

// A user's program (the SDK example, built as sdk/README.md says) put on the disk as `elf`, as
// `citcat capture --elf` does.
TEST(Sdk, UserProgramRunsAsElf) {
  auto files = ReadDiskImage(ReadFile(CITCAT_R4400_DISK_IMAGE));
  ASSERT_TRUE(files.ok()) << files.status();
  AddOrReplace(*files, {"elf", ReadFile(CITCAT_R4400_SDK_EXAMPLE_ELF)});
  auto disk = BuildDiskImage(*files);
  ASSERT_TRUE(disk.ok()) << disk.status();
  GuestRun run = RunGuest("elf", 1, *disk);
  EXPECT_THAT(run.console, HasSubstr("hello: fib(20) = 6765\nhello: slept a while\n"));
  EXPECT_THAT(run.console, HasSubstr("kernel: all 1 tasks done (0 failed)"));
  EXPECT_TRUE(run.summary.halted);
}

// The kernel finds the end of RAM: 6 MiB hold chase (512 KB of nodes) and a few more tasks;
// 4 MiB are too little and the kernel says so.
TEST(Kernel, SmallMemory) {
  GuestRun run = RunGuest("chase,hash,io", 2, {}, 6 << 20);
  ExpectChecksums(run, {"chase", "hash", "io"});
  auto m = NewMachine("hash", 1, {}, 4 << 20);
  auto s = m->Run(nullptr, ~uint64_t{0}, 50'000'000);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->halted);
  EXPECT_FALSE(s->began);
  EXPECT_THAT(m->console(), HasSubstr("kernel: panic: at least 5 MiB of RAM needed"));
}

TEST(Kernel, UnknownProgramIsReportedAndSkipped) {
  GuestRun run = RunGuest("nosuch,hash");
  EXPECT_THAT(run.console, HasSubstr("kernel: no program 'nosuch' on the disk"));
  ExpectChecksums(run, {"hash"});
}

// The driver's Random dump is kRandomDistance instructions before the resume point. (The world's
// clock jitter depends on how Run is sliced, so the dump and the check come from one run.)
TEST(Driver, RandomDistanceToTheResumePoint) {
  auto m = NewMachine("hash", 1);
  std::string path = absl::StrFormat("%s/guest-%d-random.cat", ::testing::TempDir(), getpid());
  auto writer = cat::CatWriter::Create(path, m->Header());
  ASSERT_TRUE(writer.ok()) << writer.status();
  // Step until the driver has returned to its caller: the first kseg0 PC after the trace began.
  bool began = false;
  for (uint64_t n = 1; n < 5'000'000; ++n) {
    auto s = m->Run(writer->get(), ~uint64_t{0}, n);
    ASSERT_TRUE(s.ok()) << s.status();
    if (s->began) began = true;
    if (began && (m->cpu().pc() >> 29) == 0x7FFFFFFFCull) break;
  }
  ASSERT_TRUE((*writer)->Finish().ok());
  auto reader = cat::CatReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  uint64_t resume = 0, random = 0, wired = 0;
  bool done = false;
  cat::BusRecord br;
  while (true) {
    auto more = (*reader)->Next(br);
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;
    cat::OwnedRecord r(br);
    if (IsStore(r, kCpuState + 0x110, 8)) resume = Value(r);
    if (IsStore(r, kCpuState + 0x200 + 8 * 1, 8)) random = Value(r);
    if (IsStore(r, kCpuState + 0x200 + 8 * 6, 8)) wired = Value(r);
    if (IsStore(r, kStateDone, 8)) done = true;
  }
  std::remove(path.c_str());
  ASSERT_TRUE(done);
  ASSERT_EQ(m->cpu().pc(), resume);
  uint64_t span = 48 - wired;
  uint64_t expect = wired + ((random - wired + span * 100 - kRandomDistance) % span);
  EXPECT_EQ(m->cpu().random(), expect);
}

TEST(Capture, SameSeedSameTraceOtherSeedOtherSchedule) {
  GuestRun a = RunGuest("io", 3), b = RunGuest("io", 3), c = RunGuest("io", 4);
  ASSERT_EQ(a.records.size(), b.records.size());
  for (size_t i = 0; i < a.records.size(); ++i) {
    ASSERT_EQ(a.records[i].address, b.records[i].address) << i;
    ASSERT_EQ(a.records[i].branch_count, b.records[i].branch_count) << i;
    ASSERT_EQ(a.records[i].data, b.records[i].data) << i;
  }
  bool differ = a.records.size() != c.records.size();
  for (size_t i = 0; !differ && i < a.records.size(); ++i) {
    differ = a.records[i].branch_count != c.records[i].branch_count ||
             a.records[i].address != c.records[i].address;
  }
  EXPECT_TRUE(differ);
}

}  // namespace
}  // namespace citcat::guest

namespace citcat::guest {
namespace {

// The outside world follows retired instructions, so cutting a run into short slices (as a
// debugger or a progress display might) leaves the trace unchanged, timer interrupts and DMA
// included.
TEST(Capture, HowARunIsSlicedDoesNotChangeTheTrace) {
  GuestRun whole = RunGuest("io", 5);
  auto m = NewMachine("io", 5);
  std::string path = absl::StrFormat("%s/guest-%d-sliced.cat", ::testing::TempDir(), getpid());
  auto writer = cat::CatWriter::Create(path, m->Header());
  ASSERT_TRUE(writer.ok()) << writer.status();
  absl::StatusOr<machine::RunSummary> s;
  for (uint64_t total = 997; total < 200'000'000; total += 997) {
    s = m->Run(writer->get(), ~uint64_t{0}, total);
    ASSERT_TRUE(s.ok()) << s.status();
    if (s->halted) break;
  }
  ASSERT_TRUE((*writer)->Finish().ok());
  auto reader = cat::CatReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  cat::BusRecord r;
  size_t i = 0;
  while (*(*reader)->Next(r)) {
    ASSERT_LT(i, whole.records.size());
    ASSERT_EQ(cat::OwnedRecord(r), whole.records[i]) << "record " << i;
    ++i;
  }
  EXPECT_EQ(i, whole.records.size());
  EXPECT_GT(whole.summary.interrupts, 10u);
  EXPECT_GT(whole.summary.dma_transfers, 10u);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace citcat::guest
