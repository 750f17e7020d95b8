// A replay of the real i486 guest cut into segments (docs/archive-format.md, "Segments"): each
// segment replays alone from its own IMS and AES, and the segments' regenerated records and
// instruction traces in every format, concatenated, are those of the whole replay, byte for
// byte.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "archive/archive.h"
#include "cat_parser/reader.h"
#include "core_state/i486_state.h"
#include "gtest/gtest.h"
#include "io/file.h"
#include "replay/replay.h"
#include "simcore/ram_bus.h"
#include "systems/system.h"
#include "tests/support/guest_capture.h"
#include "tests/support/replay_output.h"
#include "tests/support/run_citcat.h"
#include "traces/output.h"
#include "traces/writers.h"

namespace citcat::replay {
namespace {

using citcat::testing::ReplayOf;
using Output = citcat::testing::ReplayOutput;

TEST(I486Segments, ConcatenatedSegmentsAreTheWhole) {
  // REP strings, the disk's DMA and interrupts, paging, the x87: state in the TLB and the cache
  // at every cut.
  const uint64_t length = CITCAT_LONG_TESTS ? 4'000'000 : 1'500'000;
  const citcat::testing::GuestCapture c =
      citcat::testing::CaptureGuest("i486", "rep,io,x87", 3, length);
  const extract::Extraction& x = c.x;
  const Output whole = ReplayOf(x.ims, x.aes);
  ASSERT_TRUE(whole.status.ok()) << whole.status;
  ASSERT_GT(whole.instructions, length * 9 / 10);

  std::vector<Segment> segments;
  ReplayOptions cutting;
  for (uint64_t at = length / 11; at < whole.instructions; at += length / 11) {
    cutting.cut_at_instructions.push_back(at);
  }
  cutting.on_segment = [&](Segment s) {
    segments.push_back(std::move(s));
    return absl::OkStatus();
  };
  const Output cut = ReplayOf(x.ims, x.aes, cutting);
  EXPECT_TRUE(cut.status.ok()) << cut.status;
  // Cutting changes nothing in the replay that cuts.
  EXPECT_EQ(cut.records, whole.records);
  EXPECT_TRUE(cut.traces == whole.traces);
  ASSERT_EQ(segments.size(), cutting.cut_at_instructions.size() + 1);

  std::string records;
  std::vector<std::string> traces(citcat::testing::AllFormats().size());
  uint64_t cached_lines = 0, tlb_entries = 0;
  for (size_t i = 0; i < segments.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("segment ", i));
    const Segment& s = segments[i];
    EXPECT_EQ(s.ims.start().segment(), i > 0);
    if (i > 0) {
      EXPECT_GE(s.ims.start().instructions(), cutting.cut_at_instructions[i - 1]);
    }
    cached_lines += s.ims.x86().cache().lines_size();
    tlb_entries += s.ims.x86().tlb_size();
    const Output part = ReplayOf(s.ims, s.aes);
    EXPECT_TRUE(part.status.ok()) << part.status;
    records += part.records;
    for (size_t f = 0; f < traces.size(); ++f) traces[f] += part.traces[f];
  }
  EXPECT_GT(cached_lines, 1000u);
  EXPECT_GT(tlb_entries, 50u);
  EXPECT_EQ(records.size(), whole.records.size());
  EXPECT_TRUE(records == whole.records);
  for (size_t f = 0; f < traces.size(); ++f) {
    SCOPED_TRACE(absl::StrCat("format ", f));
    EXPECT_EQ(traces[f].size(), whole.traces[f].size());
    EXPECT_TRUE(traces[f] == whole.traces[f]);
  }
}

// A cut asked for just before an interrupt is taken waits for the instruction after its entry:
// the trace shows the entry with that instruction, which a segment that began after the entry
// would not (the text trace would lose its "! interrupt" line).
TEST(I486Segments, CutsWaitForTheInstructionAfterAnInterrupt) {
  const citcat::testing::GuestCapture c = citcat::testing::CaptureGuest("i486", "io", 3, 600'000);
  const Output whole = ReplayOf(c.x.ims, c.x.aes);
  ASSERT_TRUE(whole.status.ok()) << whole.status;
  const std::vector<uint64_t> after =
      citcat::testing::InstructionsAfterInterrupts(whole.traces[0], 8);
  ASSERT_GE(after.size(), 4u);
  std::vector<Segment> segments;
  ReplayOptions cutting;
  uint64_t before = 0;
  for (uint64_t i : after) {
    if (i - 1 > before) cutting.cut_at_instructions.push_back(i - 1);
    before = i - 1;
  }
  cutting.on_segment = [&](Segment s) {
    segments.push_back(std::move(s));
    return absl::OkStatus();
  };
  ASSERT_TRUE(ReplayOf(c.x.ims, c.x.aes, cutting).status.ok());
  ASSERT_GE(segments.size(), 4u);
  std::vector<std::string> traces(citcat::testing::AllFormats().size());
  for (size_t i = 0; i < segments.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("segment ", i));
    const Segment& s = segments[i];
    if (i > 0) {  // never at the handler's first instruction
      EXPECT_EQ(std::count(after.begin(), after.end(), s.ims.start().instructions()), 0);
    }
    const Output part = ReplayOf(s.ims, s.aes);
    ASSERT_TRUE(part.status.ok()) << part.status;
    for (size_t f = 0; f < traces.size(); ++f) traces[f] += part.traces[f];
  }
  for (size_t f = 0; f < traces.size(); ++f) {
    SCOPED_TRACE(absl::StrCat("format ", f));
    EXPECT_TRUE(traces[f] == whole.traces[f]);
  }
}

// What a segment's start holds beyond the architectural registers comes back as it was saved,
// and a state that no i486 could hold is refused.
TEST(I486Segments, StateRoundTrip) {
  simcore::RamBus bus(1 << 20);
  x86::Cpu cpu(bus);
  cpu.SetFlat32(0);
  cpu.set_cr0(cpu.cr0() & ~(x86::kCr0Cd | x86::kCr0Nw));
  cpu.set_reg(x86::kEbx, 0x1234);
  cpu.tlb().WriteEntry(2, 0x40002000, true, 0x00123000 | x86::kPteWritable);
  std::array<uint8_t, x86::Cache::kLineBytes> line{};
  line[3] = 0x5A;
  cpu.cache().WriteLine(5, 1, 0x7050, true, line);
  cpu.cache().set_lru_bits(5, 3);
  x86::TestRegisters t;
  t.tr6 = 0x40002001;
  cpu.set_test_registers(t);
  cpu.set_interrupt_shadow(true);
  cpu.set_nmi_blocked(true);

  ims::X86State saved;
  core_state::SaveX86State(cpu, saved);
  ASSERT_EQ(saved.tlb_size(), 1);
  EXPECT_EQ(saved.tlb(0).page(), 0x40002000u);
  ASSERT_EQ(saved.cache().lines_size(), 1);
  EXPECT_EQ(saved.cache().lines(0).address(), 0x7050u);
  EXPECT_EQ(saved.cache().lines(0).data()[3], 0x5A);
  EXPECT_EQ(saved.cache().replacement()[5], 3);
  EXPECT_EQ(saved.test_registers_size(), 12);

  simcore::RamBus other_bus(1 << 20);
  x86::Cpu other(other_bus);
  ASSERT_TRUE(core_state::LoadX86State(saved, other).ok());
  ims::X86State again;
  core_state::SaveX86State(other, again);
  EXPECT_EQ(again.SerializeAsString(), saved.SerializeAsString());
  EXPECT_TRUE(other.cache().Contains(0x7050));
  EXPECT_TRUE(other.interrupt_shadow());

  ims::X86State wrong = saved;
  wrong.mutable_cache()->mutable_lines(0)->set_set(6);  // the address is in set 5
  EXPECT_FALSE(core_state::LoadX86State(wrong, other).ok());
  wrong = saved;
  wrong.mutable_cache()->mutable_lines(0)->set_dirty(true);  // write-through: never dirty
  EXPECT_FALSE(core_state::LoadX86State(wrong, other).ok());
  wrong = saved;
  wrong.mutable_tlb(0)->set_way(4);
  EXPECT_FALSE(core_state::LoadX86State(wrong, other).ok());
}

// The command line: `citcat split` writes segment archives that each replay alone and whose
// traces join to the whole's, and `citcat replay --jobs 2` writes what `--jobs 1` does.
TEST(I486Segments, SplitAndJobsOnTheCommandLine) {
  const std::filesystem::path dir = citcat::testing::FreshTestDir("i486-split");
  auto run = [&](const std::string& args) { return citcat::testing::RunCitcat(dir, args); };
  auto read = [&](const std::string& name) { return citcat::testing::ReadFile(dir / name); };
  const std::string d = dir.string() + "/";
  auto r =
      run(absl::StrCat("capture --quiet --machine i486 --workload rep,io --seed 5 "
                       "--instructions 1500000 -o ",
                       d, "c.cat"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(run(absl::StrCat("extract --quiet ", d, "c.cat -o ", d, "x")).exit_code, 0);
  ASSERT_EQ(run(absl::StrCat("pack --quiet ", d, "x -o ", d, "t.citcat")).exit_code, 0);
  r = run(absl::StrCat("replay --quiet ", d, "t.citcat --format champsim -o ", d, "whole.champsim",
                       " --cat ", d, "whole.cat"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(run(absl::StrCat("replay --quiet ", d, "t.citcat -o ", d, "whole.txt")).exit_code, 0);

  r = run(absl::StrCat("split --quiet ", d, "t.citcat --segments 3 -o ", d, "segs"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string joined;
  for (int k = 1; k <= 3; ++k) {
    const std::string segment = absl::StrCat(d, "segs/segment-000", k, ".citcat");
    ASSERT_TRUE(std::filesystem::exists(segment)) << segment;
    r = run(absl::StrCat("replay --quiet ", segment, " --format champsim -o ", d, "piece-", k));
    ASSERT_EQ(r.exit_code, 0) << r.err;  // its own manifest checked
    joined += read(absl::StrCat("piece-", k));
  }
  EXPECT_FALSE(std::filesystem::exists(d + "segs/segment-0004.citcat"));
  EXPECT_TRUE(joined == read("whole.champsim"));

  // --jobs: the same trace (compressed: the same bytes decompressed) and the same CAT, from an
  // archive (its checksums checked across the segments) and from IMS and AES files.
  r = run(absl::StrCat("replay --quiet --jobs 2 ", d, "t.citcat --format champsim -o ", d,
                       "jobs.champsim.xz --cat ", d, "jobs.cat"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto xz = traces::ReadDecompressed(d + "jobs.champsim.xz");
  ASSERT_TRUE(xz.ok()) << xz.status();
  EXPECT_TRUE(*xz == read("whole.champsim"));
  EXPECT_TRUE(read("jobs.cat") == read("whole.cat"));
  r = run(absl::StrCat("replay --quiet --jobs 3 --ims ", d, "x/ims.pb --aes ", d, "x/aes.pb -o ", d,
                       "jobs.txt"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(read("jobs.txt") == read("whole.txt"));

  // An archive packed with the starts of its segments: --jobs replays them all at once, with no
  // replay of the whole, to the same trace and CAT; without them, replay says what bounds it.
  r = run(absl::StrCat("pack --quiet --segment-starts 4 ", d, "x -o ", d, "s.citcat"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(std::filesystem::file_size(d + "s.citcat"), std::filesystem::file_size(d + "t.citcat"));
  r = run(absl::StrCat("stats ", d, "s.citcat"));  // what they cost, beside IMS + AES
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("segment starts                3 "), std::string::npos) << r.out;
  r = run(absl::StrCat("replay --jobs 2 ", d, "s.citcat --format champsim -o ", d,
                       "s.champsim --cat ", d, "s.cat"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(read("s.champsim") == read("whole.champsim"));
  EXPECT_TRUE(read("s.cat") == read("whole.cat"));
  EXPECT_EQ(r.err.find("no segment starts"), std::string::npos) << r.err;
  r = run(absl::StrCat("replay ", d, "s.citcat -o ", d, "s.txt"));  // one thread: the same
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(read("s.txt") == read("whole.txt"));
  r = run(absl::StrCat("replay --jobs 2 ", d, "t.citcat -o ", d, "t2.txt"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("records no segment starts, so a replay of the whole cuts it"),
            std::string::npos)
      << r.err;
  // With nothing to write, cutting would only repeat the replay of the whole: one replay, which
  // still checks the manifest.
  r = run(absl::StrCat("replay --jobs 2 ", d, "t.citcat"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("no segment starts; with no output, a replay of the whole is as fast"),
            std::string::npos)
      << r.err;
  r = run(absl::StrCat("replay --jobs 2 --ims ", d, "x/ims.pb --aes ", d, "x/aes.pb"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("with no output, a replay of the whole is as fast as --jobs could make it "
                       "(an archive packed"),
            std::string::npos)
      << r.err;

  // Starts that are not this trace's: refused before anything is replayed (one line), or by
  // the replay and the manifest's checksums; either way no output is left.
  const auto damaged = [&](const std::string& name, const auto& damage) {
    absl::StatusOr<archive::Archive> a = archive::Read(d + "s.citcat");
    EXPECT_TRUE(a.ok()) << a.status();
    if (!a.ok()) return citcat::testing::CommandResult{};
    damage(a->segment_starts);
    absl::StatusOr<std::unique_ptr<io::OutputFile>> out = io::OutputFile::Create(d + name);
    EXPECT_TRUE(out.ok() && archive::Write(*a, **out).ok() && (*out)->Commit().ok());
    const citcat::testing::CommandResult result = run(absl::StrCat(
        "replay --quiet --jobs 2 ", d, name, " --format champsim -o ", d, name, ".champsim"));
    EXPECT_NE(result.exit_code, 0) << name;
    EXPECT_FALSE(std::filesystem::exists(d + name + ".champsim")) << name;
    return result;
  };
  r = damaged("order.citcat", [](ims::SegmentStarts& s) {
    s.mutable_starts(1)->mutable_state()->mutable_start()->set_instructions(1);
  });
  EXPECT_NE(r.err.find("segment start 3 (section 'segs'): out of order"), std::string::npos)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  r = damaged("far.citcat", [](ims::SegmentStarts& s) {
    ims::MemoryExtent& e = *s.mutable_starts(0)->mutable_state()->add_memory();
    e.set_address(uint64_t{1} << 40);
    e.set_data("x");
  });
  EXPECT_NE(r.err.find("outside main memory"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  r = damaged("byte.citcat", [](ims::SegmentStarts& s) {
    std::string& data = *s.mutable_starts(0)->mutable_state()->mutable_memory(0)->mutable_data();
    data[0] = static_cast<char>(data[0] ^ 0x5A);  // a byte the segment reads first
  });
  EXPECT_TRUE(r.err.find("divergence") != std::string::npos ||
              r.err.find("does not match the archive's manifest") != std::string::npos)
      << r.err;

  // The directory of segment archives: no replay of the whole to cut it, each segment checked
  // against its own manifest, on one thread or two, to the same trace and CAT.
  for (int jobs : {1, 2}) {
    r = run(absl::StrCat("replay --quiet --jobs ", jobs, " ", d, "segs --format champsim -o ", d,
                         "dir.champsim.zst --cat ", d, "dir.cat"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto zst = traces::ReadDecompressed(d + "dir.champsim.zst");
    ASSERT_TRUE(zst.ok()) << zst.status();
    EXPECT_TRUE(*zst == read("whole.champsim"));
    EXPECT_TRUE(read("dir.cat") == read("whole.cat"));
  }
  r = run(absl::StrCat("replay --quiet --jobs 2 ", d, "segs -o ", d, "dir.txt"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(read("dir.txt") == read("whole.txt"));
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().string().find(".piece-"), std::string::npos) << entry.path();
  }

  // A directory with a segment missing, or with one out of its place: refused in one line, and
  // no output is left.
  std::filesystem::create_directory(d + "gap");
  std::filesystem::copy_file(d + "segs/segment-0001.citcat", d + "gap/segment-0001.citcat");
  std::filesystem::copy_file(d + "segs/segment-0003.citcat", d + "gap/segment-0003.citcat");
  r = run(absl::StrCat("replay --quiet --jobs 2 ", d, "gap -o ", d, "gap.txt"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("segment-0002.citcat is missing"), std::string::npos) << r.err;
  std::filesystem::rename(d + "gap/segment-0003.citcat", d + "gap/segment-0002.citcat");
  r = run(absl::StrCat("replay --quiet --jobs 2 ", d, "gap -o ", d, "gap.txt"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("a segment missing, extra or out of its place"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(d + "gap.txt"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;

  // Refusals, each one line.
  r = run(absl::StrCat("split --quiet ", d, "t.citcat -o ", d, "segs2"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--segments K or --every N"), std::string::npos) << r.err;
  r = run(absl::StrCat("split --quiet ", d, "t.citcat --segments 2 -o ", d, "segs"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("exists"), std::string::npos) << r.err;
  r = run(absl::StrCat("replay --quiet --jobs 0 ", d, "t.citcat -o ", d, "j0.txt"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--jobs"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace citcat::replay
