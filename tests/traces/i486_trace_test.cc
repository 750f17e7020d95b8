// The trace records of a replay of the real i486 guest: user and kernel code, 16-bit code, REP
// string instructions, the x87, page faults, system calls and interrupts. Checked against where
// execution went and against themselves (a kernel byte loaded after a store holds what was
// stored), and every format read back by readers written from docs/trace-formats.md.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <set>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "cat_parser/reader.h"
#include "gtest/gtest.h"
#include "guest/i486/guest_paths.h"
#include "machine/elf_loader.h"
#include "replay/replay.h"
#include "systems/system.h"
#include "tests/support/guest_capture.h"
#include "tests/support/run_citcat.h"
#include "traces/champsim.h"
#include "traces/output.h"
#include "traces/sink.h"
#include "traces/x86_registers.h"

namespace citcat::traces {
namespace {

uint64_t Symbol(const machine::ElfImage& elf, const char* name) {
  const machine::ElfSymbol* s = elf.FindSymbol(name);
  EXPECT_NE(s, nullptr) << name;
  return s == nullptr ? 0 : s->value;
}

// Checks each record against the ones before it, as they stream past.
class Checker : public TraceSink {
 public:
  absl::Status Consume(const Record& r) override {
    ++records_;
    users_ += r.mode == Mode::kUser;
    raised_ += r.raised.present;
    interrupts_ += r.taken_before.present;
    software_interrupts_ += r.branch == BranchKind::kSoftwareInterrupt;
    const bool x87 = r.Reads(kX86St0) ||
                     std::find(r.written.begin(), r.written.end(), kX86St0) != r.written.end();
    x87_ += x87;
    // Where interrupts landed: between two iterations of a REP instruction (the iterations
    // resume after the handler), at a page fault (the handler runs with interrupts off: the
    // interrupt waits for its IRET, before the faulting instruction runs again), between two x87
    // instructions.
    if (r.taken_before.present) {
      rep_interrupted_ += previous_repeated_ && !previous_raised_;
      at_page_fault_ += returned_from_page_fault_;
      in_x87_ += previous_x87_;
    }
    returned_from_page_fault_ = in_page_fault_handler_ && r.branch == BranchKind::kExceptionReturn;
    if (r.raised.present && r.raised.code == 14) in_page_fault_handler_ = true;
    if (r.branch == BranchKind::kExceptionReturn) in_page_fault_handler_ = false;
    previous_x87_ = x87;
    sixteen_bit_ += r.next_pc - r.pc != r.size;  // wraps, or a 32-bit jump across: never
    idle_ += r.pc >= idle_begin && r.pc < idle_end;
    if (r.registers != &X86Registers()) ++foreign_tables_;
    const bool continues = repeats_.Next(r);
    repeated_ += r.repeated;
    rep_runs_ += r.repeated && !continues;
    if (started_) {
      // Where the record before said execution would go.
      if (!r.taken_before.present && !previous_raised_) {
        ++checked_flow_;
        const bool ok =
            continues || (previous_repeated_ && r.pc == previous_pc_) || r.pc == previous_next_;
        wrong_flow_ += !ok;
      }
      // index: the instructions retired before; a REP iteration retires only with the last.
      const uint64_t step = r.index - previous_index_;
      if (previous_raised_ || previous_repeated_) {
        wrong_index_ += step > 1;
      } else {
        wrong_index_ += step != 1;
      }
    }
    started_ = true;
    previous_index_ = r.index;
    previous_pc_ = r.pc;
    previous_raised_ = r.raised.present;
    previous_repeated_ = r.repeated;
    previous_next_ = r.branch != BranchKind::kNone && r.taken ? r.target : r.next_pc;
    // The kernel's own data, byte by byte: a load sees the last store there. An exception or
    // interrupt entry pushes its frame with no record of its own: forget what was known then.
    if (r.taken_before.present || previous_raised_before_) bytes_.clear();
    previous_raised_before_ = r.raised.present;
    for (const MemoryAccess& a : r.accesses) {
      if (a.address < data_begin || a.address + a.size > data_end) continue;
      bool known = true;
      for (int i = 0; i < a.size; ++i) {
        const uint8_t byte = static_cast<uint8_t>(a.value >> (8 * i));
        if (a.store) {
          bytes_[a.address + i] = byte;
          continue;
        }
        auto it = bytes_.find(a.address + i);
        if (it == bytes_.end()) {
          known = false;
        } else if (it->second != byte) {
          ++wrong_loads_;
        }
      }
      checked_loads_ += !a.store && known;
    }
    return absl::OkStatus();
  }

  uint64_t idle_begin = 0, idle_end = 0, data_begin = 0, data_end = 0;
  uint64_t records_ = 0, users_ = 0, raised_ = 0, interrupts_ = 0, software_interrupts_ = 0;
  uint64_t x87_ = 0, sixteen_bit_ = 0, idle_ = 0, foreign_tables_ = 0, repeated_ = 0;
  uint64_t rep_runs_ = 0, checked_flow_ = 0, wrong_flow_ = 0, wrong_index_ = 0;
  uint64_t checked_loads_ = 0, wrong_loads_ = 0;
  uint64_t rep_interrupted_ = 0, at_page_fault_ = 0, in_x87_ = 0;
  uint64_t last_index_() const { return previous_index_; }

 private:
  RepeatRun repeats_;
  bool started_ = false, previous_raised_ = false, previous_repeated_ = false;
  bool previous_raised_before_ = false, previous_x87_ = false, in_page_fault_handler_ = false;
  bool returned_from_page_fault_ = false;
  uint64_t previous_index_ = 0, previous_pc_ = 0, previous_next_ = 0;
  absl::flat_hash_map<uint64_t, uint8_t> bytes_;
};

TEST(I486Trace, RecordsAgreeWithExecution) {
  const citcat::testing::GuestCapture c =
      citcat::testing::CaptureGuest("i486", "rep,x87,mode16,sort", 4, 6'000'000);
  const extract::Extraction& x = c.x;
  auto elf = machine::LoadElfFile(CITCAT_I486_KERNEL_ELF);
  ASSERT_TRUE(elf.ok()) << elf.status();
  Checker checker;
  checker.idle_begin = Symbol(*elf, "citcat_idle_begin");
  checker.idle_end = Symbol(*elf, "citcat_idle_end");
  checker.data_begin = Symbol(*elf, "gdt_ptr");
  checker.data_end = Symbol(*elf, "__kernel_end");
  replay::ReplayOptions options;
  options.sink = &checker;
  // The replay that writes the records is exact: its regenerated CAT is the captured one.
  replay::ReplaySummary replayed;
  auto verified = systems::ReplayAgainst(c.cat_path, x.ims, x.aes, options, &replayed);
  ASSERT_TRUE(verified.ok()) << verified.status();
  ASSERT_TRUE(verified->identical) << verified->report;
  std::remove(c.cat_path.c_str());
  const replay::ReplaySummary* summary = &replayed;

  EXPECT_EQ(checker.foreign_tables_, 0u);
  EXPECT_EQ(checker.last_index_() + 1, summary->instructions);
  EXPECT_GT(checker.checked_flow_, 1'000'000u);
  EXPECT_EQ(checker.wrong_flow_, 0u);
  EXPECT_EQ(checker.wrong_index_, 0u);
  EXPECT_GT(checker.checked_loads_, 1000u);
  EXPECT_EQ(checker.wrong_loads_, 0u);
  EXPECT_GT(checker.users_, checker.records_ / 2);
  EXPECT_GT(checker.raised_, 0u);               // demand paging
  EXPECT_GT(checker.interrupts_, 50u);          // the timer
  EXPECT_GT(checker.software_interrupts_, 0u);  // system calls
  EXPECT_GT(checker.x87_, 1000u);
  EXPECT_GT(checker.repeated_, 100'000u);  // REP iterations, one record each
  EXPECT_GT(checker.rep_runs_, 100u);
  EXPECT_LT(checker.rep_runs_, checker.repeated_ / 10);
  EXPECT_EQ(checker.sixteen_bit_, 0u);
  EXPECT_GT(checker.rep_interrupted_, 0u);
  EXPECT_GT(checker.at_page_fault_, 0u);
  EXPECT_GT(checker.in_x87_, 0u);

  // The idle filter drops exactly the idle loop.
  Checker after;
  Filter f;
  f.idle_begin = checker.idle_begin;
  f.idle_end = checker.idle_end;
  FilterSink filter(f, after);
  options.sink = &filter;
  ASSERT_TRUE(systems::Replay(x.ims, x.aes, options).ok());
  EXPECT_EQ(after.records_, checker.records_ - checker.idle_);

  // --mode user keeps CPL 3 only.
  Checker user;
  Filter u;
  u.mode = Mode::kUser;
  FilterSink user_filter(u, user);
  options.sink = &user_filter;
  ASSERT_TRUE(systems::Replay(x.ims, x.aes, options).ok());
  EXPECT_EQ(user.records_, checker.users_);
}

// One line per reference or record; fields split on single spaces.
std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

// The command line over a capture, every format, each read back from its documented layout and
// compared with the text trace, the one that lists everything.
TEST(I486Trace, EveryFormatFromTheCommandLine) {
  const std::filesystem::path dir = citcat::testing::FreshTestDir("i486-trace-cli");
  auto run = [&](const std::string& args) { return citcat::testing::RunCitcat(dir, args); };
  const std::string d = dir.string();
  auto r =
      run(absl::StrCat("capture --quiet --machine i486 --workload rep,io --seed 2 "
                       "--instructions 2200000 -o ",
                       d, "/c.cat"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(run(absl::StrCat("extract --quiet ", d, "/c.cat -o ", d, "/x")).exit_code, 0);
  const std::string replay =
      absl::StrCat("replay --quiet --ims ", d, "/x/ims.pb --aes ", d, "/x/aes.pb --format ");
  for (const char* f : {"text", "champsim", "penn", "din", "idtrace", "idtrace-exec"}) {
    r = run(absl::StrCat(replay, f, " -o ", d, "/t.", f));
    ASSERT_EQ(r.exit_code, 0) << f << ": " << r.err;
  }
  r = run(absl::StrCat(replay, "champsim -o ", d, "/t.champsim.xz"));
  ASSERT_EQ(r.exit_code, 0) << r.err;

  // The text trace: instruction lines (index, mode, PC, bytes, ...) and event lines.
  struct Line {
    uint64_t pc;
    bool raised = false;  // followed by its "raised" event line
    bool rep = false;
    std::vector<std::pair<char, uint64_t>> accesses;  // 'l' or 's', address
    bool branch = false, taken = false;
  };
  std::vector<Line> text;
  for (const std::string& line : Lines(citcat::testing::ReadFile(dir / "t.text"))) {
    if (absl::StartsWith(line, "             ! ")) {
      if (line.find(" raised ") != std::string::npos) text.back().raised = true;
      continue;
    }
    std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    ASSERT_GE(f.size(), 4u) << line;
    Line l;
    ASSERT_TRUE(absl::SimpleHexAtoi(f[2], &l.pc)) << line;
    ASSERT_EQ(f[2].size(), 16u);
    l.rep = line.find(" rep") != std::string::npos;
    for (const std::string& field : f) {
      if ((absl::StartsWith(field, "ld") || absl::StartsWith(field, "st")) &&
          field.find('[') != std::string::npos) {
        uint64_t a;
        const size_t open = field.find('['), close = field.find(']');
        ASSERT_TRUE(absl::SimpleHexAtoi(field.substr(open + 1, close - open - 1), &a)) << field;
        l.accesses.push_back({field[0] == 'l' ? 'l' : 's', a});
      }
      const size_t eq = field.find("=T:"), ne = field.find("=N:");
      if (eq != std::string::npos || ne != std::string::npos) {
        l.branch = true;
        l.taken = eq != std::string::npos;
      }
    }
    text.push_back(std::move(l));
  }
  ASSERT_GT(text.size(), 1'000'000u);

  // ChampSim: one 64-byte record per instruction that completed, the same ip, loads and stores.
  const std::string champsim = citcat::testing::ReadFile(dir / "t.champsim");
  ASSERT_EQ(champsim.size() % 64, 0u);
  size_t n = 0, branches = 0;
  for (const Line& l : text) {
    if (l.raised) continue;
    ASSERT_LT(n * 64, champsim.size());
    const char* p = champsim.data() + 64 * n++;
    uint64_t ip;
    std::memcpy(&ip, p, 8);
    ASSERT_EQ(ip, l.pc);
    ASSERT_EQ(p[8] != 0, l.branch);
    branches += l.branch;
    if (l.branch) {
      ASSERT_EQ(p[9] != 0, l.taken) << std::hex << l.pc;
    }
    uint64_t first_load = 0, first_store = 0;
    std::memcpy(&first_store, p + 16, 8);
    std::memcpy(&first_load, p + 32, 8);
    for (const auto& [kind, address] : l.accesses) {
      if (kind == 'l' && first_load != 0) {
        ASSERT_EQ(first_load, address);
        break;
      }
    }
    for (const auto& [kind, address] : l.accesses) {
      if (kind == 's') {
        ASSERT_EQ(first_store, address);
        break;
      }
    }
  }
  EXPECT_EQ(n * 64, champsim.size());
  EXPECT_GT(branches, 100'000u);
  auto xz = ReadDecompressed((dir / "t.champsim.xz").string());
  ASSERT_TRUE(xz.ok()) << xz.status();
  EXPECT_EQ(*xz, champsim);

  // din: a fetch per instruction (once per REP instruction, not per iteration), then its data.
  std::vector<std::string> din = Lines(citcat::testing::ReadFile(dir / "t.din"));
  size_t at = 0;
  uint64_t previous_pc = ~uint64_t{0};
  bool previous_rep = false, previous_raised = false;
  for (const Line& l : text) {
    const bool continues = l.rep && previous_rep && l.pc == previous_pc && !previous_raised;
    if (!continues) {
      ASSERT_LT(at, din.size());
      ASSERT_EQ(din[at++], absl::StrCat("2 ", absl::Hex(l.pc)));
    }
    for (const auto& [kind, address] : l.accesses) {
      ASSERT_LT(at, din.size());
      ASSERT_EQ(din[at++], absl::StrCat(kind == 'l' ? "0 " : "1 ", absl::Hex(address)));
    }
    previous_pc = l.pc;
    previous_rep = l.rep;
    previous_raised = l.raised;
  }
  EXPECT_EQ(at, din.size());

  // IDtrace: 5-byte entries; a REP instruction's references carry the repeat tags and end with
  // a repeat-end entry.
  const std::string idt = citcat::testing::ReadFile(dir / "t.idtrace");
  ASSERT_EQ(idt.size() % 5, 0u);
  size_t plain = 0, repeated = 0, ends = 0;
  bool in_rep = false;
  for (size_t i = 0; i < idt.size(); i += 5) {
    const uint8_t tag = static_cast<uint8_t>(idt[i]);
    uint32_t address;
    std::memcpy(&address, idt.data() + i + 1, 4);
    const uint8_t kind = tag & 0xF0, size = tag & 0x0F;
    if (kind == 0x10 || kind == 0x20) {
      ASSERT_TRUE(size >= 1 && size <= 4) << int{tag};
      ++plain;
    } else if (kind == 0x30 || kind == 0x40) {
      ASSERT_TRUE(size >= 1 && size <= 4) << int{tag};
      ++repeated;
      in_rep = true;
    } else if (tag == 0x50) {
      ASSERT_EQ(address, 0u);
      ++ends;
      in_rep = false;
    } else {
      ASSERT_EQ(tag, 0x60);
      ASSERT_EQ(address % 16, 0u);
      ASSERT_FALSE(in_rep) << "a line entry inside a REP instruction's references";
    }
  }
  size_t text_plain = 0, text_repeated = 0;
  for (const Line& l : text) (l.rep ? text_repeated : text_plain) += l.accesses.size();
  EXPECT_EQ(plain, text_plain);
  EXPECT_EQ(repeated, text_repeated);
  EXPECT_GT(repeated, 10'000u);
  EXPECT_GT(ends, 10u);

  // IDtrace execution trace: basic blocks, references and targets; the same references.
  const std::string idx = citcat::testing::ReadFile(dir / "t.idtrace-exec");
  ASSERT_EQ(idx.size() % 5, 0u);
  size_t references = 0, targets = 0;
  for (size_t i = 0; i < idx.size(); i += 5) {
    const uint8_t tag = static_cast<uint8_t>(idx[i]);
    references += (tag & 0xF0) >= 0x10 && (tag & 0xF0) <= 0x40;
    targets += tag == 0x90;
    ASSERT_TRUE(tag == 0x50 || tag == 0x70 || tag == 0x90 ||
                ((tag & 0xF0) >= 0x10 && (tag & 0xF0) <= 0x40))
        << int{tag};
  }
  EXPECT_EQ(references, text_plain + text_repeated);
  size_t taken = 0;
  for (const Line& l : text) taken += l.branch && l.taken && !l.raised;
  EXPECT_EQ(targets, taken);

  // Penn: 14 fields per line, one line per destination, at least one per instruction.
  std::vector<std::string> penn = Lines(citcat::testing::ReadFile(dir / "t.penn"));
  size_t firsts = 0;
  for (const std::string& line : penn) {
    std::vector<std::string> f = absl::StrSplit(line, ' ');
    ASSERT_EQ(f.size(), 14u) << line;
    firsts += f[0] == "1";
  }
  EXPECT_EQ(firsts, text.size());
}

// `citcat replay --filter-idle` finds the i486 kernel's idle loop in its ELF.
TEST(I486Trace, FilterIdleOnTheCommandLine) {
  const std::filesystem::path dir = citcat::testing::FreshTestDir("i486-trace-idle");
  auto run = [&](const std::string& args) { return citcat::testing::RunCitcat(dir, args); };
  const std::string d = dir.string();
  auto r =
      run(absl::StrCat("capture --quiet --machine i486 --workload io --seed 3 -o ", d, "/c.cat"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(run(absl::StrCat("extract --quiet ", d, "/c.cat -o ", d, "/x")).exit_code, 0);
  auto elf = machine::LoadElfFile(CITCAT_I486_KERNEL_ELF);
  ASSERT_TRUE(elf.ok());
  const std::string range =
      absl::StrFormat("%x:%x", Symbol(*elf, "citcat_idle_begin"), Symbol(*elf, "citcat_idle_end"));
  const std::string replay =
      absl::StrCat("replay --quiet --ims ", d, "/x/ims.pb --aes ", d, "/x/aes.pb --format text ");
  ASSERT_EQ(run(absl::StrCat(replay, "-o ", d, "/all.txt")).exit_code, 0);
  r = run(absl::StrCat(replay, "--filter-idle -o ", d, "/filtered.txt"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(run(absl::StrCat(replay, "--idle-range ", range, " -o ", d, "/range.txt")).exit_code,
            0);
  const std::string filtered = citcat::testing::ReadFile(dir / "filtered.txt");
  EXPECT_EQ(filtered, citcat::testing::ReadFile(dir / "range.txt"));
  const std::string all = citcat::testing::ReadFile(dir / "all.txt");
  EXPECT_LT(filtered.size(), all.size());
  EXPECT_NE(all.find(" hlt"), std::string::npos);
  EXPECT_EQ(filtered.find(" hlt"), std::string::npos);
}

}  // namespace
}  // namespace citcat::traces
