// The trace records of a replay of the real guest kernel running workloads: user and kernel
// mode, TLB refills, syscalls, interrupts, FP, DMA. Checked against where execution went and
// against themselves (a kernel word loaded after a store holds what was stored), and the idle
// filter against the kernel's own symbols.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "systems/system.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cat_parser/reader.h"
#include "gtest/gtest.h"
#include "guest/r4400/guest_paths.h"
#include "machine/elf_loader.h"
#include "machine/r4400/capture.h"
#include "replay/replay.h"
#include "tests/support/run_citcat.h"
#include "traces/sink.h"

namespace citcat::traces {
namespace {

extract::Extraction Capture(const std::string& workloads, uint64_t seed) {
  machine::CaptureSettings settings;
  settings.max_traced = 3'000'000;
  settings.kernel_path = CITCAT_R4400_KERNEL_ELF;
  std::ifstream disk(CITCAT_R4400_DISK_IMAGE, std::ios::binary);
  settings.disk.assign(std::istreambuf_iterator<char>(disk), std::istreambuf_iterator<char>());
  settings.workloads = workloads;
  settings.seed = seed;
  const std::string path =
      absl::StrCat(::testing::TempDir(), "/trace-kernel-", getpid(), "-", seed, ".cat");
  auto result = machine::CaptureR4400(settings, path);
  EXPECT_TRUE(result.ok()) << result.status();
  auto reader = cat::CatReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  auto x = systems::Extract(**reader);
  EXPECT_TRUE(x.ok()) << x.status();
  std::remove(path.c_str());
  return *std::move(x);
}

bool Kseg0(uint64_t a) { return a >= 0xFFFFFFFF80000000 && a < 0xFFFFFFFFA0000000; }

// Checks each record against the ones before it, as they stream past.
class Checker : public TraceSink {
 public:
  absl::Status Consume(const Record& r) override {
    ++records_;
    users_ += r.mode == Mode::kUser;
    raised_ += r.raised.present;
    idle_ += r.pc >= idle_begin && r.pc < idle_end;
    // Where the last branch said execution would go (after its slot).
    if (expect_after_slot_ && slot_seen_) {
      if (!r.taken_before.present && r.pc != expected_pc_) ++wrong_branches_;
      ++checked_branches_;
      expect_after_slot_ = false;
    } else if (expect_after_slot_) {
      if (r.pc == branch_pc_ + 4 && !r.taken_before.present && !r.raised.present) {
        slot_seen_ = true;
      } else {
        expect_after_slot_ = false;  // nullified, interrupted or faulted
      }
    }
    if (r.branch != BranchKind::kNone && r.delay_slot && !r.raised.present) {
      expect_after_slot_ = true;
      slot_seen_ = false;
      branch_pc_ = r.pc;
      expected_pc_ = r.taken ? r.target : r.pc + 8;
    }
    // Kernel words and doublewords (FP context switches use LDC1/SDC1): a load sees the last
    // store to the same bytes (the kernel's own data; no DMA in these workloads).
    const bool partial = r.mnemonic.size() == 3 && (r.mnemonic[2] == 'l' || r.mnemonic[2] == 'r');
    for (const MemoryAccess& a : r.accesses) {
      const bool whole = (a.size == 4 || a.size == 8) && !partial && a.value_known;
      if (a.store) {
        for (uint64_t w = a.address & ~uint64_t{3}; w < a.address + a.size; w += 4) words_.erase(w);
        if (!whole || !Kseg0(a.address)) continue;
        if (a.size == 4) {
          words_[a.address] = static_cast<uint32_t>(a.value);
        } else {
          words_[a.address] = static_cast<uint32_t>(big_endian ? a.value >> 32 : a.value);
          words_[a.address + 4] = static_cast<uint32_t>(big_endian ? a.value : a.value >> 32);
        }
        continue;
      }
      if (!whole || !Kseg0(a.address)) continue;
      auto first = words_.find(a.address);
      if (first == words_.end()) continue;
      uint64_t stored = first->second;
      if (a.size == 8) {
        auto second = words_.find(a.address + 4);
        if (second == words_.end()) continue;
        stored =
            big_endian ? stored << 32 | second->second : uint64_t{second->second} << 32 | stored;
        ++checked_doubles_;
      }
      ++checked_loads_;
      wrong_loads_ += stored != (a.size == 8 ? a.value : static_cast<uint32_t>(a.value));
    }
    return absl::OkStatus();
  }

  uint64_t idle_begin = 0, idle_end = 0;
  uint64_t records_ = 0, users_ = 0, raised_ = 0, idle_ = 0;
  bool big_endian = true;
  uint64_t checked_branches_ = 0, wrong_branches_ = 0, checked_loads_ = 0, wrong_loads_ = 0;
  uint64_t checked_doubles_ = 0;

 private:
  bool expect_after_slot_ = false, slot_seen_ = false;
  uint64_t branch_pc_ = 0, expected_pc_ = 0;
  absl::flat_hash_map<uint64_t, uint32_t> words_;
};

TEST(TraceKernel, RecordsAgreeWithExecution) {
  extract::Extraction x = Capture("sort,fp,hash", 5);
  auto elf = machine::LoadElfFile(CITCAT_R4400_KERNEL_ELF);
  ASSERT_TRUE(elf.ok()) << elf.status();
  Checker checker;
  checker.big_endian = x.ims.description().byte_order() == ims::BYTE_ORDER_BIG;
  checker.idle_begin = 0xFFFFFFFF00000000 | elf->FindSymbol("citcat_idle_begin")->value;
  checker.idle_end = 0xFFFFFFFF00000000 | elf->FindSymbol("citcat_idle_end")->value;
  replay::ReplayOptions options;
  options.sink = &checker;
  auto summary = systems::Replay(x.ims, x.aes, options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(checker.records_ - checker.raised_, summary->instructions);
  EXPECT_GT(checker.users_, checker.records_ / 2);
  EXPECT_GT(checker.raised_, 0u);  // TLB refills and syscalls
  EXPECT_GT(checker.checked_branches_, 100'000u);
  EXPECT_EQ(checker.wrong_branches_, 0u);
  EXPECT_GT(checker.checked_loads_, 1000u);
  EXPECT_GT(checker.checked_doubles_, 100u);
  EXPECT_EQ(checker.wrong_loads_, 0u);

  // The idle filter drops exactly the idle loop.
  Checker after;
  Filter f;
  f.idle_begin = checker.idle_begin;
  f.idle_end = checker.idle_end;
  FilterSink filter(f, after);
  options.sink = &filter;
  ASSERT_TRUE(systems::Replay(x.ims, x.aes, options).ok());
  EXPECT_EQ(after.records_, checker.records_ - checker.idle_);
}

// `citcat replay --filter-idle` finds the idle loop in the kernel ELF: the same as naming its
// range.
TEST(TraceKernel, FilterIdleOnTheCommandLine) {
  const std::filesystem::path dir = citcat::testing::FreshTestDir("trace-kernel-cli");
  auto run = [&](const std::string& args) { return citcat::testing::RunCitcat(dir, args); };
  const std::string d = dir.string();
  auto r = run(absl::StrCat("capture --quiet --workload io --seed 3 --instructions 2000000 -o ", d,
                            "/c.cat"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(run(absl::StrCat("extract --quiet ", d, "/c.cat -o ", d, "/x")).exit_code, 0);
  auto elf = machine::LoadElfFile(CITCAT_R4400_KERNEL_ELF);
  ASSERT_TRUE(elf.ok());
  const std::string range =
      absl::StrFormat("ffffffff%08x:ffffffff%08x", elf->FindSymbol("citcat_idle_begin")->value,
                      elf->FindSymbol("citcat_idle_end")->value);
  const std::string replay =
      absl::StrCat("replay --quiet --ims ", d, "/x/ims.pb --aes ", d, "/x/aes.pb --format din ");
  ASSERT_EQ(run(absl::StrCat(replay, "-o ", d, "/all.din")).exit_code, 0);
  r = run(absl::StrCat(replay, "--filter-idle -o ", d, "/filtered.din"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(run(absl::StrCat(replay, "--idle-range ", range, " -o ", d, "/range.din")).exit_code,
            0);
  const std::string filtered = citcat::testing::ReadFile(dir / "filtered.din");
  EXPECT_EQ(filtered, citcat::testing::ReadFile(dir / "range.din"));
  // The io workload waits for its disk: the idle loop is a good part of the trace.
  EXPECT_LT(filtered.size(), citcat::testing::ReadFile(dir / "all.din").size() * 9 / 10);

  // --kernel names a kernel ELF elsewhere (here a copy): its symbols, not the built kernel's.
  std::filesystem::create_directories(dir / "copy");
  std::filesystem::copy_file(CITCAT_R4400_KERNEL_ELF, dir / "copy" / "kernel.elf");
  const std::string text =
      absl::StrCat("replay --quiet --ims ", d, "/x/ims.pb --aes ", d, "/x/aes.pb --format text ");
  r = run(absl::StrCat(text, "-o ", d, "/t.txt --filter-idle --kernel ", d, "/copy/kernel.elf"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(run(absl::StrCat(text, "--idle-range ", range, " -o ", d, "/range.txt")).exit_code, 0);
  ASSERT_EQ(run(absl::StrCat(text, "-o ", d, "/all.txt")).exit_code, 0);
  const std::string filtered_text = citcat::testing::ReadFile(dir / "t.txt");
  EXPECT_EQ(filtered_text, citcat::testing::ReadFile(dir / "range.txt"));
  EXPECT_LT(filtered_text.size(), citcat::testing::ReadFile(dir / "all.txt").size() * 9 / 10);
}

}  // namespace
}  // namespace citcat::traces
