// The writers on a real replay of a small capture, read back by readers written from the layouts
// in docs/trace-formats.md (not from the writers' code): a ChampSim record reader, a Penn line
// parser, a din parser and an IDtrace entry reader.
#include <unistd.h>

#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "systems/system.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cat_parser/reader.h"
#include "gtest/gtest.h"
#include "replay/replay.h"
#include "tests/replay/r4400_guest.h"
#include "traces/mips_registers.h"
#include "traces/output.h"
#include "traces/sink.h"
#include "traces/writers.h"

namespace citcat::traces {
namespace {

// What the records must reproduce, kept in memory: fine for a small capture.
struct Kept {
  uint64_t index, pc, next_pc;
  uint32_t word;  // the bytes read as a big-endian word
  uint8_t size, privilege;
  Mode mode;
  const RegisterSet* registers;
  absl::string_view mnemonic;
  int64_t immediate;
  BranchKind branch;
  bool taken, delay_slot, raised, before;
  uint64_t target, before_pc;
  std::vector<MemoryAccess> accesses;
};

class Keep : public TraceSink {
 public:
  absl::Status Consume(const Record& r) override {
    const uint32_t word = uint32_t{r.bytes[0]} << 24 | uint32_t{r.bytes[1]} << 16 |
                          uint32_t{r.bytes[2]} << 8 | r.bytes[3];
    Kept k{r.index,
           r.pc,
           r.next_pc,
           word,
           r.size,
           r.privilege,
           r.mode,
           r.registers,
           r.mnemonic,
           r.immediate,
           r.branch,
           r.taken,
           r.delay_slot,
           r.raised.present,
           r.taken_before.present,
           r.target,
           r.taken_before.pc,
           {}};
    k.accesses.assign(r.accesses.begin(), r.accesses.end());
    kept.push_back(std::move(k));
    return absl::OkStatus();
  }
  std::vector<Kept> kept;
};

// Fans one replay out to several sinks.
class Tee : public TraceSink {
 public:
  explicit Tee(std::vector<TraceSink*> sinks) : sinks_(std::move(sinks)) {}
  absl::Status Consume(const Record& r) override {
    for (TraceSink* s : sinks_) {
      if (absl::Status st = s->Consume(r); !st.ok()) return st;
    }
    return absl::OkStatus();
  }
  absl::Status Finish() override {
    for (TraceSink* s : sinks_) {
      if (absl::Status st = s->Finish(); !st.ok()) return st;
    }
    return absl::OkStatus();
  }

 private:
  std::vector<TraceSink*> sinks_;
};

struct Replayed {
  std::vector<Kept> records;
  replay::ReplaySummary summary;
  std::string champsim, penn, din, idtrace, text, idtrace_exec;
};

std::string Temp(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/traces-", getpid(), "-", name);
}

const Replayed& ReplayOnce() {
  static const Replayed* result = [] {
    auto* out = new Replayed;
    const std::string cat_path = Temp("capture.cat");
    replay_test::CaptureGuest(3, {}, cat_path);
    auto reader = cat::CatReader::Open(cat_path);
    EXPECT_TRUE(reader.ok()) << reader.status();
    auto x = systems::Extract(**reader);
    EXPECT_TRUE(x.ok()) << x.status();
    Keep keep;
    std::vector<std::unique_ptr<TraceSink>> writers;
    const std::vector<std::pair<Format, std::string>> files = {
        {Format::kChampSim, Temp("t.champsim.xz")},
        {Format::kPenn, Temp("t.penn.zst")},
        {Format::kDin, Temp("t.din")},
        {Format::kIdtrace, Temp("t.idt")},
        {Format::kText, Temp("t.txt")},
        {Format::kIdtraceExec, Temp("t.idx")}};
    std::vector<TraceSink*> sinks = {&keep};
    for (const auto& [format, path] : files) {
      auto w = OpenWriter(format, path);
      EXPECT_TRUE(w.ok()) << w.status();
      sinks.push_back(w->get());
      writers.push_back(*std::move(w));
    }
    Tee tee(sinks);
    replay::ReplayOptions options;
    options.sink = &tee;
    auto summary = systems::Replay(x->ims, x->aes, options);
    EXPECT_TRUE(summary.ok()) << summary.status();
    EXPECT_TRUE(tee.Finish().ok());
    out->summary = *summary;
    out->records = std::move(keep.kept);
    std::string* texts[] = {&out->champsim, &out->penn, &out->din,
                            &out->idtrace,  &out->text, &out->idtrace_exec};
    for (size_t i = 0; i < files.size(); ++i) {
      auto bytes = ReadDecompressed(files[i].second);
      EXPECT_TRUE(bytes.ok()) << bytes.status();
      *texts[i] = *bytes;
    }
    return out;
  }();
  return *result;
}

TEST(TraceRoundTrip, OneRecordPerInstruction) {
  const Replayed& r = ReplayOnce();
  ASSERT_GT(r.records.size(), 10000u);
  uint64_t completed = 0, raised = 0, before = 0;
  for (const Kept& k : r.records) {
    completed += !k.raised;
    raised += k.raised;
    before += k.before;
  }
  EXPECT_EQ(completed, r.summary.instructions);
  EXPECT_GT(before, 0u);  // the guest takes timer interrupts
  EXPECT_GT(raised, 0u);  // and TLB refills: the faulting instruction has a record too
  // Every instruction's index is the count retired before it.
  uint64_t expected = r.records.front().index;
  for (const Kept& k : r.records) {
    ASSERT_EQ(k.index, expected) << std::hex << k.pc;
    expected += !k.raised;
  }
}

// The R4400 is big-endian: its words lie in memory most significant byte first, and the
// operation the decoder named is the one in the word's opcode field.
TEST(TraceRoundTrip, InstructionBytesLengthPrivilegeAndRegisterTable) {
  const Replayed& r = ReplayOnce();
  uint64_t loads = 0, upper = 0;
  for (const Kept& k : r.records) {
    ASSERT_EQ(k.size, 4) << std::hex << k.pc;
    ASSERT_EQ(k.next_pc, k.pc + 4) << std::hex << k.pc;
    ASSERT_EQ(k.registers, &MipsRegisters());
    ASSERT_LE(k.privilege, 2);
    ASSERT_EQ(k.mode, k.privilege == 0   ? Mode::kKernel
                      : k.privilege == 1 ? Mode::kSupervisor
                                         : Mode::kUser);
    if (k.mnemonic == "lw") {
      ASSERT_EQ(k.word >> 26, 0x23u) << std::hex << k.pc;
      ++loads;
    } else if (k.mnemonic == "lui") {
      ASSERT_EQ(k.word >> 26, 0x0Fu) << std::hex << k.pc;
      ASSERT_EQ(k.word & 0xFFFF, static_cast<uint64_t>(k.immediate)) << std::hex << k.pc;
      ++upper;
    }
  }
  EXPECT_GT(loads, 1000u);
  EXPECT_GT(upper, 100u);
}

TEST(TraceRoundTrip, BranchOutcomesMatchWhereExecutionWent) {
  const Replayed& r = ReplayOnce();
  int checked = 0;
  for (size_t i = 0; i + 2 < r.records.size(); ++i) {
    const Kept& b = r.records[i];
    if (b.branch == BranchKind::kNone || !b.delay_slot) continue;
    const Kept& slot = r.records[i + 1];
    if (slot.pc != b.pc + 4) continue;  // a nullified slot (branch-likely) or an event
    const Kept& next = r.records[i + 2];
    if (slot.raised || next.before) continue;
    EXPECT_EQ(next.pc, b.taken ? b.target : b.pc + 8) << std::hex << b.pc;
    ++checked;
  }
  EXPECT_GT(checked, 1000);
}

TEST(TraceRoundTrip, ChampSimReader) {
  const Replayed& r = ReplayOnce();
  // The documented layout, read field by field.
  struct Instr {
    uint64_t ip;
    uint8_t is_branch, branch_taken, dst[2], src[4];
    uint64_t dst_mem[2], src_mem[4];
  };
  static_assert(sizeof(Instr) == 64);
  ASSERT_EQ(r.champsim.size() % 64, 0u);
  std::vector<Instr> in(r.champsim.size() / 64);
  std::memcpy(in.data(), r.champsim.data(), r.champsim.size());  // little-endian host
  // The same instructions: every retired one, branches after their delay slots.
  std::vector<uint64_t> want;
  for (size_t i = 0; i < r.records.size(); ++i) {
    const Kept& k = r.records[i];
    if (k.raised) continue;
    if (k.branch != BranchKind::kNone && k.delay_slot && i + 1 < r.records.size()) {
      const Kept& slot = r.records[i + 1];
      if (slot.pc == k.pc + 4 && !slot.before) {
        if (!slot.raised) {
          want.push_back(slot.pc);
          want.push_back(k.pc);
        }
        ++i;
        continue;
      }
      if (slot.before && slot.before_pc == k.pc + 4) continue;  // runs again after the handler
    }
    want.push_back(k.pc);
  }
  ASSERT_EQ(in.size(), want.size());
  size_t loads = 0, branches = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_EQ(in[i].ip, want[i]) << i;
    branches += in[i].is_branch;
    loads += in[i].src_mem[0] != 0;
    // The special registers appear only on branches.
    if (!in[i].is_branch) {
      for (uint8_t s : in[i].src) EXPECT_NE(s, 26);
      for (uint8_t d : in[i].dst) EXPECT_NE(d, 26);
    }
  }
  EXPECT_GT(branches, 1000u);
  EXPECT_GT(loads, 1000u);
}

TEST(TraceRoundTrip, PennParser) {
  const Replayed& r = ReplayOnce();
  std::istringstream lines(r.penn);
  std::string line;
  size_t macro = 0;
  while (std::getline(lines, line)) {
    std::vector<std::string> f = absl::StrSplit(line, ' ');
    ASSERT_EQ(f.size(), 14u) << line;
    int uop;
    uint64_t pc, address, fallthrough;
    int64_t imm;
    ASSERT_TRUE(absl::SimpleAtoi(f[0], &uop));
    ASSERT_TRUE(absl::SimpleHexAtoi(f[1], &pc));
    ASSERT_TRUE(absl::SimpleAtoi(f[8], &imm));
    ASSERT_TRUE(absl::SimpleHexAtoi(f[9], &address));
    ASSERT_TRUE(absl::SimpleHexAtoi(f[10], &fallthrough));
    for (int i : {2, 3, 4}) {
      int reg;
      ASSERT_TRUE(absl::SimpleAtoi(f[i], &reg));
      ASSERT_GE(reg, -1);
    }
    ASSERT_EQ(f[5].size(), 1u);
    ASSERT_NE(std::string("RW-").find(f[5]), std::string::npos);
    ASSERT_NE(std::string("TN-").find(f[6]), std::string::npos);
    ASSERT_NE(std::string("LS-").find(f[7]), std::string::npos);
    if (uop == 1) {
      ASSERT_LT(macro, r.records.size());
      const Kept& k = r.records[macro++];
      ASSERT_EQ(pc, k.pc);
      ASSERT_EQ(f[6] == "-", k.branch == BranchKind::kNone);
      if (k.branch != BranchKind::kNone) {
        ASSERT_EQ(f[6] == "T", k.taken);
      }
      ASSERT_EQ(address, k.accesses.empty() ? 0 : k.accesses[0].address);
    }
  }
  EXPECT_EQ(macro, r.records.size());
}

TEST(TraceRoundTrip, DinParser) {
  const Replayed& r = ReplayOnce();
  std::istringstream lines(r.din);
  std::string line;
  size_t fetches = 0, reads = 0, writes = 0;
  size_t want_reads = 0, want_writes = 0;
  for (const Kept& k : r.records) {
    for (const MemoryAccess& a : k.accesses) (a.store ? want_writes : want_reads) += 1;
  }
  while (std::getline(lines, line)) {
    int label;
    uint64_t address;
    std::vector<std::string> f = absl::StrSplit(line, ' ');
    ASSERT_EQ(f.size(), 2u) << line;
    ASSERT_TRUE(absl::SimpleAtoi(f[0], &label));
    ASSERT_TRUE(absl::SimpleHexAtoi(f[1], &address));
    if (label == 2) {
      ASSERT_LT(fetches, r.records.size());
      ASSERT_EQ(address, r.records[fetches].pc);
      ++fetches;
    } else {
      ASSERT_TRUE(label == 0 || label == 1) << line;
      (label == 0 ? reads : writes) += 1;
    }
  }
  EXPECT_EQ(fetches, r.records.size());
  EXPECT_EQ(reads, want_reads);
  EXPECT_EQ(writes, want_writes);
}

TEST(TraceRoundTrip, IdtraceEntries) {
  const Replayed& r = ReplayOnce();
  ASSERT_EQ(r.idtrace.size() % 5, 0u);
  size_t data = 0, lines = 0, want_data = 0;
  for (const Kept& k : r.records) want_data += k.accesses.size();
  for (size_t i = 0; i < r.idtrace.size(); i += 5) {
    const uint8_t tag = static_cast<uint8_t>(r.idtrace[i]);
    uint32_t address;
    std::memcpy(&address, &r.idtrace[i + 1], 4);
    if (tag == 0x60) {
      EXPECT_EQ(address % 16, 0u);
      ++lines;
    } else {
      ASSERT_TRUE((tag & 0xF0) == 0x10 || (tag & 0xF0) == 0x20) << int{tag};
      ASSERT_TRUE((tag & 0x0F) >= 1 && (tag & 0x0F) <= 4) << int{tag};
      ++data;
    }
  }
  EXPECT_EQ(data, want_data);
  EXPECT_GT(lines, r.records.size() / 8);
}

TEST(TraceRoundTrip, IdtraceExecEntries) {
  const Replayed& r = ReplayOnce();
  ASSERT_EQ(r.idtrace_exec.size() % 5, 0u);
  size_t blocks = 0, data = 0, targets = 0;
  size_t want_blocks = 0, want_data = 0, want_targets = 0;
  for (size_t i = 0; i < r.records.size(); ++i) {
    const Kept& k = r.records[i];
    want_blocks += i == 0 || k.pc != r.records[i - 1].pc + 4;
    want_data += k.accesses.size();
    want_targets += k.branch != BranchKind::kNone && k.taken && !k.raised;
  }
  uint64_t expected_block = 0;
  size_t record = 0;
  for (size_t i = 0; i < r.idtrace_exec.size(); i += 5) {
    const uint8_t tag = static_cast<uint8_t>(r.idtrace_exec[i]);
    uint32_t address;
    std::memcpy(&address, &r.idtrace_exec[i + 1], 4);
    if (tag == 0x70) {
      ++blocks;
      // Walk the records to the block's start: it must be a non-sequential one.
      while (record < r.records.size() &&
             (record > 0 && r.records[record].pc == r.records[record - 1].pc + 4)) {
        ++record;
      }
      ASSERT_LT(record, r.records.size());
      expected_block = static_cast<uint32_t>(r.records[record].pc);
      EXPECT_EQ(address, expected_block);
      ++record;
    } else if (tag == 0x90) {
      ++targets;
    } else {
      ASSERT_TRUE((tag & 0xF0) == 0x10 || (tag & 0xF0) == 0x20) << int{tag};
      ++data;
    }
  }
  EXPECT_EQ(blocks, want_blocks);
  EXPECT_EQ(data, want_data);
  EXPECT_EQ(targets, want_targets);
}

TEST(TraceRoundTrip, TextHasEveryInstructionAndEvent) {
  const Replayed& r = ReplayOnce();
  std::istringstream lines(r.text);
  std::string line;
  size_t instructions = 0, events = 0;
  while (std::getline(lines, line)) {
    if (line.find(" ! ") == 12) {
      ++events;
    } else {
      ++instructions;
    }
  }
  EXPECT_EQ(instructions, r.records.size());
  EXPECT_GT(events, 0u);
  EXPECT_NE(r.text.find("interrupt taken"), std::string::npos);
}

}  // namespace
}  // namespace citcat::traces
