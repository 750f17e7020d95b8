// Each writer against a hand-checked snippet: a few records built by hand, the bytes or lines
// worked out from docs/trace-formats.md.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "traces/mips_registers.h"
#include "traces/output.h"
#include "traces/sink.h"
#include "traces/writers.h"

namespace citcat::traces {
namespace {

class FixedText : public Disassembler {
 public:
  absl::string_view Text(const Record& r) override {
    switch (r.pc & 0xFF) {
      case 0x00:
        return "lw $a0, 0x10($sp)";
      case 0x04:
        return "beq $a0, $zero, 0x80001020";
      case 0x08:
        return "sw $a0, 0($a1)";
      case 0x20:
        return "jal 0x80002000";
      case 0x24:
        return "mult $a0, $a1";
      default:
        return "?";
    }
  }
};

FixedText fixed_text;

// A MIPS record's instruction: the big-endian word, the next PC, the MIPS register table.
void SetWord(Record& r, uint32_t word) {
  const uint8_t bytes[4] = {static_cast<uint8_t>(word >> 24), static_cast<uint8_t>(word >> 16),
                            static_cast<uint8_t>(word >> 8), static_cast<uint8_t>(word)};
  r.SetBytes(bytes);
  r.next_pc = r.pc + 4;
  r.registers = &MipsRegisters();
}

// lw $a0, 16($sp); beq $a0, $0 (taken); sw $a0, 0($a1) in the slot; jal (at the target, into
// its slot = mult); then a syscall that raises its exception.
std::vector<Record> Snippet() {
  std::vector<Record> v;
  Record r;
  r.disassembler = &fixed_text;
  r.index = 7;
  r.pc = 0xFFFFFFFF80001000;
  SetWord(r, 0x8FA40010);
  r.mnemonic = "lw";
  r.immediate = 16;
  r.AddRead(29);
  r.AddWritten(4);
  r.accesses.push_back({0xFFFFFFFF8000FFF0, 4, false, true, 0x12});
  r.fallthrough = r.pc + 4;
  v.push_back(r);

  r = Record();
  r.disassembler = &fixed_text;
  r.index = 8;
  r.pc = 0xFFFFFFFF80001004;
  SetWord(r, 0x10800006);
  r.mnemonic = "beq";
  r.immediate = 6;
  r.AddRead(4);
  r.branch = BranchKind::kConditional;
  r.taken = true;
  r.target = 0xFFFFFFFF80001020;
  r.delay_slot = true;
  r.fallthrough = r.pc + 8;
  v.push_back(r);

  r = Record();
  r.disassembler = &fixed_text;
  r.index = 9;
  r.pc = 0xFFFFFFFF80001008;
  SetWord(r, 0xACA40000);
  r.mnemonic = "sw";
  r.AddRead(4);
  r.AddRead(5);
  r.accesses.push_back({0xFFFFFFFF80004000, 4, true, true, 0x12});
  r.fallthrough = r.pc + 4;
  v.push_back(r);

  r = Record();
  r.disassembler = &fixed_text;
  r.index = 10;
  r.pc = 0xFFFFFFFF80001020;
  SetWord(r, 0x0C000800);
  r.mnemonic = "jal";
  r.immediate = 0x800;
  r.AddWritten(31);
  r.branch = BranchKind::kDirectCall;
  r.taken = true;
  r.target = 0xFFFFFFFF80002000;
  r.delay_slot = true;
  r.fallthrough = r.pc + 8;
  v.push_back(r);

  r = Record();
  r.disassembler = &fixed_text;
  r.index = 11;
  r.pc = 0xFFFFFFFF80001024;
  SetWord(r, 0x00850018);
  r.mnemonic = "mult";
  r.AddRead(4);
  r.AddRead(5);
  r.AddWritten(kMipsHi);
  r.AddWritten(kMipsLo);
  r.fallthrough = r.pc + 4;
  r.mode = Mode::kUser;
  v.push_back(r);

  r = Record();
  r.index = 12;
  r.pc = 0xFFFFFFFF80002000;
  SetWord(r, 0x0000000C);
  r.mnemonic = "syscall";
  r.fallthrough = r.pc + 4;
  r.raised = {true, 8, r.pc, "syscall"};
  v.push_back(r);
  return v;
}

std::string Write(Format format, const std::vector<Record>& records) {
  std::string out;
  std::unique_ptr<TraceSink> w = NewWriter(format, std::make_unique<StringOutput>(&out));
  for (const Record& r : records) EXPECT_TRUE(w->Consume(r).ok());
  EXPECT_TRUE(w->Finish().ok());
  return out;
}

TEST(TraceWriters, Text) {
  EXPECT_EQ(
      Write(Format::kText, Snippet()),
      "           7 k ffffffff80001000 8fa40010  lw $a0, 0x10($sp)  r=sp  w=a0  "
      "ld4[ffffffff8000fff0]=00000012\n"
      "           8 k ffffffff80001004 10800006  beq $a0, $zero, 0x80001020  r=a0  "
      "conditional=T:ffffffff80001020\n"
      "           9 k ffffffff80001008 aca40000  sw $a0, 0($a1)  r=a0,a1  "
      "st4[ffffffff80004000]=00000012\n"
      "          10 k ffffffff80001020 0c000800  jal 0x80002000  w=ra  call=T:ffffffff80002000\n"
      "          11 u ffffffff80001024 00850018  mult $a0, $a1  r=a0,a1  w=hi,lo\n"
      "          12 k ffffffff80002000 0000000c  \n"
      "             ! syscall raised (code 8) at ffffffff80002000\n");
}

TEST(TraceWriters, Penn) {
  EXPECT_EQ(Write(Format::kPenn, Snippet()),
            "1 ffffffff80001000 29 -1 4 - - L 16 ffffffff8000fff0 ffffffff80001004 0 LW LOAD\n"
            "1 ffffffff80001004 4 -1 -1 - T - 6 0 ffffffff8000100c ffffffff80001020 BEQ BRANCH\n"
            "1 ffffffff80001008 4 5 -1 - - S 0 ffffffff80004000 ffffffff8000100c 0 SW STORE\n"
            "1 ffffffff80001020 -1 -1 31 - T - 2048 0 ffffffff80001028 ffffffff80002000 JAL "
            "CALL_IMM\n"
            "1 ffffffff80001024 4 5 32 - - - 0 0 ffffffff80001028 0 MULT ALU\n"
            "2 ffffffff80001024 4 5 33 - - - 0 0 ffffffff80001028 0 MULT ALU\n"
            "1 ffffffff80002000 -1 -1 -1 - - - 0 0 ffffffff80002004 0 SYSCALL ALU\n");
}

TEST(TraceWriters, Din) {
  EXPECT_EQ(Write(Format::kDin, Snippet()),
            "2 ffffffff80001000\n"
            "0 ffffffff8000fff0\n"
            "2 ffffffff80001004\n"
            "2 ffffffff80001008\n"
            "1 ffffffff80004000\n"
            "2 ffffffff80001020\n"
            "2 ffffffff80001024\n"
            "2 ffffffff80002000\n");
}

TEST(TraceWriters, Idtrace) {
  const std::string expected = std::string(
      // line 0x80001000, lword read at 0x8000fff0
      "\x60\x00\x10\x00\x80"
      "\x13\xf0\xff\x00\x80"
      // beq and sw in the same line; lword write at 0x80004000
      "\x23\x00\x40\x00\x80"
      // jal: a jump into line 0x80001020; mult follows in it
      "\x60\x20\x10\x00\x80"
      // syscall: line 0x80002000
      "\x60\x00\x20\x00\x80",
      25);
  EXPECT_EQ(Write(Format::kIdtrace, Snippet()), expected);
}

TEST(TraceWriters, IdtraceExec) {
  const std::string expected = std::string(
      // block at 0x80001000; lw's lword read; beq's target
      "\x70\x00\x10\x00\x80"
      "\x13\xf0\xff\x00\x80"
      "\x90\x20\x10\x00\x80"
      // sw in the slot
      "\x23\x00\x40\x00\x80"
      // block at the target: jal and its target (mult in the slot has no entry)
      "\x70\x20\x10\x00\x80"
      "\x90\x00\x20\x00\x80"
      // block at 0x80002000: the syscall
      "\x70\x00\x20\x00\x80",
      35);
  EXPECT_EQ(Write(Format::kIdtraceExec, Snippet()), expected);
}

// The 64-byte record, by the offsets of the documented layout.
std::string ChampSim(uint64_t ip, uint8_t is_branch, uint8_t taken, std::vector<uint8_t> dst,
                     std::vector<uint8_t> src, std::vector<uint64_t> dst_mem,
                     std::vector<uint64_t> src_mem) {
  std::string r(64, '\0');
  auto put64 = [&](int at, uint64_t v) {
    for (int i = 0; i < 8; ++i) r[at + i] = static_cast<char>(v >> (8 * i));
  };
  put64(0, ip);
  r[8] = static_cast<char>(is_branch);
  r[9] = static_cast<char>(taken);
  for (size_t i = 0; i < dst.size(); ++i) r[10 + i] = static_cast<char>(dst[i]);
  for (size_t i = 0; i < src.size(); ++i) r[12 + i] = static_cast<char>(src[i]);
  for (size_t i = 0; i < dst_mem.size(); ++i) put64(16 + 8 * i, dst_mem[i]);
  for (size_t i = 0; i < src_mem.size(); ++i) put64(32 + 8 * i, src_mem[i]);
  return r;
}

TEST(TraceWriters, ChampSim) {
  // GPR n is register n + 32, HI 64, LO 65; branches come after their delay slots; the syscall
  // that raised its exception did not retire.
  const std::string expected =
      ChampSim(0xFFFFFFFF80001000, 0, 0, {36}, {61}, {}, {0xFFFFFFFF8000FFF0}) +
      ChampSim(0xFFFFFFFF80001008, 0, 0, {}, {36, 37}, {0xFFFFFFFF80004000}, {}) +
      ChampSim(0xFFFFFFFF80001004, 1, 1, {26}, {26, 25, 36}, {}, {}) +
      ChampSim(0xFFFFFFFF80001024, 0, 0, {64, 65}, {36, 37}, {}, {}) +
      ChampSim(0xFFFFFFFF80001020, 1, 1, {6, 26}, {6, 26}, {}, {});
  EXPECT_EQ(Write(Format::kChampSim, Snippet()), expected);
}

TEST(TraceWriters, ChampSimBranchesByRegisterPattern) {
  auto one = [](BranchKind kind, uint16_t reads) {
    Record r;
    r.pc = 0x1000;
    r.registers = &MipsRegisters();
    r.branch = kind;
    r.taken = true;
    r.AddRead(reads);
    return Write(Format::kChampSim, {r});
  };
  EXPECT_EQ(one(BranchKind::kDirectJump, 0), ChampSim(0x1000, 1, 1, {26}, {}, {}, {}));
  EXPECT_EQ(one(BranchKind::kIndirectJump, 8), ChampSim(0x1000, 1, 1, {26}, {40}, {}, {}));
  EXPECT_EQ(one(BranchKind::kIndirectCall, 25),
            ChampSim(0x1000, 1, 1, {6, 26}, {6, 26, 57}, {}, {}));
  EXPECT_EQ(one(BranchKind::kReturn, 31), ChampSim(0x1000, 1, 1, {6, 26}, {6, 63}, {}, {}));
  EXPECT_EQ(one(BranchKind::kExceptionReturn, 0), ChampSim(0x1000, 1, 1, {26}, {6, 26}, {}, {}));
}

TEST(TraceWriters, CompressedByTheFileNameSuffix) {
  const std::string plain = Write(Format::kChampSim, Snippet());
  for (const char* suffix : {".xz", ".zst", ""}) {
    const std::string path =
        absl::StrCat(::testing::TempDir(), "/writers-", getpid(), ".trace", suffix);
    auto w = OpenWriter(Format::kChampSim, path);
    ASSERT_TRUE(w.ok()) << w.status();
    for (const Record& r : Snippet()) ASSERT_TRUE((*w)->Consume(r).ok());
    ASSERT_TRUE((*w)->Finish().ok());
    auto back = ReadDecompressed(path);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, plain) << suffix;
    std::remove(path.c_str());
  }
}

TEST(TraceWriters, NothingAppearsWithoutFinish) {
  const std::string path = absl::StrCat(::testing::TempDir(), "/unfinished-", getpid(), ".din");
  {
    auto w = OpenWriter(Format::kDin, path);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Consume(Snippet()[0]).ok());
  }
  EXPECT_FALSE(ReadDecompressed(path).ok());
}

TEST(TraceWriters, UnknownFormat) {
  auto f = ParseFormat("pin");
  EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(f.status().message()), ::testing::HasSubstr("champsim"));
}

TEST(TraceFilter, ByModeAndIdleRange) {
  std::string out;
  std::unique_ptr<TraceSink> din = NewDinWriter(std::make_unique<StringOutput>(&out));
  Filter f;
  f.mode = Mode::kKernel;
  f.idle_begin = 0xFFFFFFFF80001004;
  f.idle_end = 0xFFFFFFFF80001020;
  FilterSink filter(f, *din);
  for (const Record& r : Snippet()) ASSERT_TRUE(filter.Consume(r).ok());
  ASSERT_TRUE(filter.Finish().ok());
  EXPECT_EQ(out,
            "2 ffffffff80001000\n0 ffffffff8000fff0\n2 ffffffff80001020\n2 ffffffff80002000\n");
}

}  // namespace
}  // namespace citcat::traces
