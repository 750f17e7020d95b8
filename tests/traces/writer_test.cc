// Each writer against a hand-checked snippet: a few records built by hand, the bytes or lines
// worked out from docs/trace-formats.md.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "traces/champsim.h"
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

// An x86-like machine, built by hand: what the writers must take from any machine's table.
constexpr RegisterInfo kX86Info[] = {
    {"eax", 10}, {"ecx", 11}, {"edx", 12}, {"ebx", 13}, {"esp", champsim::kStackPointer},
    {"ebp", 14}, {"esi", 15}, {"edi", 16}, {"ss", 17},  {"eflags", champsim::kFlags}};
enum X86 : uint16_t { kEax, kEcx, kEdx, kEbx, kEsp, kEbp, kEsi, kEdi, kSs, kEflags };
constexpr RegisterSet kX86("x86-like", kX86Info, kEflags);

class MnemonicText : public Disassembler {
 public:
  absl::string_view Text(const Record& r) override { return r.mnemonic; }
};
MnemonicText mnemonic_text;

Record X86(uint64_t pc, std::vector<uint8_t> bytes, absl::string_view mnemonic) {
  Record r;
  r.pc = pc;
  r.SetBytes(bytes);
  r.next_pc = pc + bytes.size();
  r.fallthrough = r.next_pc;
  r.registers = &kX86;
  r.privilege = 3;
  r.mode = ModeOfRing(3);
  r.mnemonic = mnemonic;
  r.disassembler = &mnemonic_text;
  return r;
}

// PUSHAD with ESP = 0x8010 pushes EAX, ECX, EDX, EBX, the old ESP, EBP, ESI, EDI: 9 registers
// read (SS too), 8 stores over two 64-byte lines; POPAD takes them back: 8 loads, 8 registers
// written.
std::vector<Record> PushadPopad() {
  const uint64_t values[8] = {0xA, 0xC, 0xD, 0xB, 0x8010, 0xE, 0x5, 0xD1};
  Record push = X86(0x401000, {0x60}, "pushad");
  push.index = 40;
  for (uint16_t reg : {kEax, kEcx, kEdx, kEbx, kEsp, kEbp, kEsi, kEdi, kSs}) push.AddRead(reg);
  push.AddWritten(kEsp);
  for (int i = 0; i < 8; ++i) push.accesses.push_back({0x800Cu - 4 * i, 4, true, true, values[i]});
  Record pop = X86(0x401001, {0x61}, "popad");
  pop.index = 41;
  pop.AddRead(kEsp);
  pop.AddRead(kSs);
  for (uint16_t reg : {kEdi, kEsi, kEbp, kEbx, kEdx, kEcx, kEax, kEsp}) pop.AddWritten(reg);
  for (int i = 7; i >= 0; --i) pop.accesses.push_back({0x800Cu - 4 * i, 4, false, true, values[i]});
  return {push, pop};
}

TEST(TraceWriters, TextHasEveryRegisterAndAccessOfAnX86Instruction) {
  EXPECT_EQ(Write(Format::kText, PushadPopad()),
            "          40 u 0000000000401000 60  pushad  r=eax,ecx,edx,ebx,esp,ebp,esi,edi,ss  "
            "w=esp  st4[800c]=0000000a  st4[8008]=0000000c  st4[8004]=0000000d  "
            "st4[8000]=0000000b  st4[7ffc]=00008010  st4[7ff8]=0000000e  st4[7ff4]=00000005  "
            "st4[7ff0]=000000d1\n"
            "          41 u 0000000000401001 61  popad  r=esp,ss  "
            "w=edi,esi,ebp,ebx,edx,ecx,eax,esp  ld4[7ff0]=000000d1  ld4[7ff4]=00000005  "
            "ld4[7ff8]=0000000e  ld4[7ffc]=00008010  ld4[8000]=0000000b  ld4[8004]=0000000d  "
            "ld4[8008]=0000000c  ld4[800c]=0000000a\n");
}

// text-values: each register the core told with its value, as wide as the machine's registers;
// the text format leaves them out.
TEST(TraceWriters, TextValuesGivesTheRegistersWrittenWithTheirValues) {
  static constexpr RegisterSet kX86Narrow("x86-like", kX86Info, kEflags, 4);
  std::vector<Record> records = PushadPopad();
  records[0].accesses.clear();
  records[1].accesses.clear();
  records[0].values.push_back({kEsp, 0x7FF0});
  records[1].registers = &kX86Narrow;
  records[1].values.push_back({kEdi, 0xD1});
  records[1].values.push_back({kEsp, 0x8010});
  records[1].values.push_back({99, 0x12345});  // a number the table does not name
  EXPECT_EQ(Write(Format::kTextValues, records),
            "          40 u 0000000000401000 60  pushad  r=eax,ecx,edx,ebx,esp,ebp,esi,edi,ss  "
            "w=esp  esp=0000000000007ff0\n"
            "          41 u 0000000000401001 61  popad  r=esp,ss  "
            "w=edi,esi,ebp,ebx,edx,ecx,eax,esp  edi=000000d1  esp=00008010  r99=00012345\n");
  const std::string text = Write(Format::kText, records);
  EXPECT_EQ(text.find("esp=0"), std::string::npos) << text;
  std::string unused;
  EXPECT_TRUE(NewWriter(Format::kTextValues, std::make_unique<StringOutput>(&unused))
                  ->WantsRegisterValues());
  EXPECT_FALSE(
      NewWriter(Format::kText, std::make_unique<StringOutput>(&unused))->WantsRegisterValues());
  EXPECT_EQ(*ParseFormat("text-values"), Format::kTextValues);
}

TEST(TraceWriters, ChampSimKeepsEveryLineAnX86InstructionTouches) {
  // The machine's own ChampSim numbers; the first 4 sources and 2 destinations fit; one access
  // per 64-byte line, so both lines of the 8 pushes and pops are there.
  EXPECT_EQ(Write(Format::kChampSim, PushadPopad()),
            ChampSim(0x401000, 0, 0, {6}, {10, 11, 12, 13}, {0x800C, 0x7FFC}, {}) +
                ChampSim(0x401001, 0, 0, {16, 15}, {6, 17}, {}, {0x7FF0, 0x8000}));
}

TEST(TraceWriters, PennTakesFlagsAndDestinationsFromTheTable) {
  Record add = X86(0x401002, {0x01, 0xD8}, "add");  // add eax, ebx
  add.AddRead(kEax);
  add.AddRead(kEbx);
  add.AddWritten(kEax);
  add.AddWritten(kEflags);
  Record pop = PushadPopad()[1];
  pop.accesses.resize(1);
  const std::string out = Write(Format::kPenn, {add, pop});
  EXPECT_THAT(out, ::testing::StartsWith("1 401002 0 3 0 W - - 0 0 401004 0 ADD ALU\n"
                                         "1 401001 4 8 7 - - L 0 7ff0 401002 0 POPAD LOAD\n"
                                         "2 401001 4 8 6 - - L 0 7ff0 401002 0 POPAD LOAD\n"));
  EXPECT_THAT(out, ::testing::EndsWith("8 401001 4 8 4 - - L 0 7ff0 401002 0 POPAD LOAD\n"));
}

// x86 code of 1 to 7 bytes, one instruction running into the next 16-byte line and jumping;
// then a far jump to 16-bit code whose IP wraps: the instruction at 1000:FFFE (linear 0x1fffe)
// is followed by the one at 1000:0000 (linear 0x10000), not by pc + size.
std::vector<Record> VariableLength() {
  std::vector<Record> v;
  v.push_back(X86(0x1000, {0x90}, "nop"));
  v.push_back(X86(0x1001, {0x83, 0xC0, 0x01}, "add"));
  v.push_back(X86(0x1004, {0xC7, 0x45, 0xF8, 0x01, 0x00, 0x00, 0x00}, "mov"));
  Record jmp = X86(0x100B, {0x0F, 0x84, 0x2F, 0x00, 0x00, 0x00}, "jz");  // 0x100b..0x1010
  jmp.branch = BranchKind::kConditional;
  jmp.taken = true;
  jmp.target = 0x1040;
  v.push_back(jmp);
  Record far = X86(0x1040, {0xEA, 0xFE, 0xFF, 0x00, 0x10}, "jmp");
  far.branch = BranchKind::kDirectJump;
  far.taken = true;
  far.target = 0x1FFFE;
  v.push_back(far);
  Record wrap = X86(0x1FFFE, {0x40, 0x90}, "nop");
  wrap.next_pc = 0x10000;
  v.push_back(wrap);
  v.push_back(X86(0x10000, {0x90}, "nop"));
  return v;
}

TEST(TraceWriters, IdtraceFollowsTheRecordsNextPc) {
  EXPECT_EQ(Write(Format::kIdtraceExec, VariableLength()),
            std::string("\x70\x00\x10\x00\x00"   // block at 0x1000 runs to the jz
                        "\x90\x40\x10\x00\x00"   // its target
                        "\x70\x40\x10\x00\x00"   // the far jmp
                        "\x90\xfe\xff\x01\x00"   // its target
                        "\x70\xfe\xff\x01\x00",  // one block across the IP wrap
                        25));
  EXPECT_EQ(Write(Format::kIdtrace, VariableLength()),
            std::string("\x60\x00\x10\x00\x00"   // nop, add, mov, jz in line 0x1000
                        "\x60\x10\x10\x00\x00"   // the jz runs into line 0x1010
                        "\x60\x40\x10\x00\x00"   // far jmp
                        "\x60\xf0\xff\x01\x00"   // line 0x1fff0
                        "\x60\x00\x00\x01\x00",  // line 0x10000
                        25));
}

TEST(TraceWriters, ChampSimFindsTheDelaySlotAtTheNextPc) {
  // MIPS16's 2-byte `jr $ra` has its delay slot at pc + 2: the slot is written first.
  Record jr;
  jr.pc = 0x2000;
  jr.next_pc = 0x2002;
  jr.registers = &MipsRegisters();
  jr.AddRead(31);
  jr.branch = BranchKind::kReturn;
  jr.taken = true;
  jr.target = 0x3000;
  jr.delay_slot = true;
  Record slot;
  slot.pc = 0x2002;
  slot.next_pc = 0x2004;
  Record after;
  after.pc = 0x3000;
  after.next_pc = 0x3002;
  EXPECT_EQ(Write(Format::kChampSim, {jr, slot, after}),
            ChampSim(0x2002, 0, 0, {}, {}, {}, {}) +
                ChampSim(0x2000, 1, 1, {6, 26}, {6, 63}, {}, {}) +
                ChampSim(0x3000, 0, 0, {}, {}, {}, {}));
}

// An interrupt at a branch's delay slot whose handler a mode filter dropped: the next record is
// the branch again, and only its second run retires.
TEST(TraceWriters, ChampSimWritesAnInterruptedBranchOnceWhenTheHandlerIsFiltered) {
  Record jr;
  jr.pc = 0x2000;
  jr.next_pc = 0x2004;
  jr.registers = &MipsRegisters();
  jr.AddRead(31);
  jr.branch = BranchKind::kReturn;
  jr.taken = true;
  jr.target = 0x3000;
  jr.delay_slot = true;
  Record slot;
  slot.pc = 0x2004;
  slot.next_pc = 0x2008;
  Record after;
  after.pc = 0x3000;
  after.next_pc = 0x3004;
  EXPECT_EQ(Write(Format::kChampSim, {jr, jr, slot, after}),
            Write(Format::kChampSim, {jr, slot, after}));
}

TEST(TraceRecord, RingsMapToModes) {
  EXPECT_EQ(ModeOfRing(0), Mode::kKernel);
  EXPECT_EQ(ModeOfRing(1), Mode::kSupervisor);
  EXPECT_EQ(ModeOfRing(2), Mode::kSupervisor);
  EXPECT_EQ(ModeOfRing(3), Mode::kUser);
}

TEST(TraceRecord, BytesAreCappedAtTheLongestX86Instruction) {
  Record r;
  r.SetBytes(std::vector<uint8_t>(20, 0x66));
  EXPECT_EQ(r.size, Record::kMaxInstructionBytes);
  EXPECT_EQ(r.Bytes().size(), 15u);
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
