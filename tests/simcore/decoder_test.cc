// The decoder against Capstone (mnemonics over random words), and Describe() from the manuals.
#include "simcore/mips/decoder.h"

#include <capstone/capstone.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "simcore/mips/cpu.h"
#include "simcore/mips/disasm.h"
#include "tests/simcore/mips_asm.h"

namespace citcat::mips {
namespace {

// Capstone prints these aliases (or MIPS32r2 forms of words whose reserved fields the R4400
// ignores) for our operations.
bool IsAlias(std::string_view ours, std::string_view theirs) {
  static const std::set<std::pair<std::string_view, std::string_view>> kAliases = {
      {"beq", "b"},          {"beq", "beqz"},     {"bne", "bnez"},    {"bgezal", "bal"},
      {"or", "move"},        {"addu", "move"},    {"daddu", "move"},  {"nor", "not"},
      {"subu", "negu"},      {"sub", "neg"},      {"dsubu", "dnegu"}, {"dsub", "dneg"},
      {"sll", "nop"},        {"srl", "rotr"},     {"srlv", "rotrv"},  {"dsrl", "drotr"},
      {"dsrl32", "drotr32"}, {"dsrlv", "drotrv"}, {"sll", "ssnop"},   {"sll", "ehb"}};
  return kAliases.count({ours, theirs}) > 0;
}

TEST(Decoder, MnemonicsAgreeWithCapstone) {
  csh h;
  ASSERT_EQ(cs_open(CS_ARCH_MIPS, static_cast<cs_mode>(CS_MODE_MIPS64 | CS_MODE_BIG_ENDIAN), &h),
            CS_ERR_OK);
  std::set<std::string> ours;
  for (int i = 0; i < static_cast<int>(Op::kCount); ++i) ours.insert(std::string(OpName(Op(i))));
  std::mt19937 rng(42);
  int compared = 0;
  for (int i = 0; i < 300000; ++i) {
    uint32_t w = static_cast<uint32_t>(rng());
    if (i & 1) w &= 0xFC1FFFFF | (rng() & 0x03E00000);  // bias towards small rs fields
    const Op op = DecodeOp(w);
    const uint8_t b[4] = {uint8_t(w >> 24), uint8_t(w >> 16), uint8_t(w >> 8), uint8_t(w)};
    cs_insn* insn = nullptr;
    const size_t n = cs_disasm(h, b, 4, 0x1000, 1, &insn);
    const std::string theirs = n ? insn[0].mnemonic : "";
    if (n) cs_free(insn, n);
    if (theirs.empty()) continue;  // Capstone insists on zero reserved fields; the R4400 not
    if (op == Op::kReserved || op == Op::kCop2 || op == Op::kCop3) {
      // Later ISAs fill our reserved space; none of it may be a MIPS III operation.
      EXPECT_EQ(ours.count(theirs), 0u) << std::hex << w << " " << theirs;
      continue;
    }
    if (op == Op::kCop1Arith || op == Op::kMfc0 || op == Op::kMtc0 || op == Op::kDmfc0 ||
        op == Op::kDmtc0) {
      continue;  // the FPU's own decoder; CP0 moves print oddly in Capstone 4
    }
    const std::string_view name = OpName(op);
    EXPECT_TRUE(name == theirs || IsAlias(name, theirs))
        << std::hex << w << " " << name << " vs " << theirs;
    ++compared;
  }
  cs_close(&h);
  EXPECT_GT(compared, 100000);
}

TEST(Decoder, DescribeReadsWritesAndFlow) {
  using namespace as;  // NOLINT
  InstructionInfo i = Describe(Addu(3, 4, 5));
  EXPECT_EQ(i.gpr_read, (1u << 4) | (1u << 5));
  EXPECT_EQ(i.gpr_written, 1u << 3);
  EXPECT_EQ(i.flow, Flow::kNone);

  i = Describe(Lw(2, 8, 29));
  EXPECT_EQ(i.mem, MemAccess::kLoad);
  EXPECT_EQ(i.mem_bytes, 4);
  EXPECT_EQ(i.gpr_read, 1u << 29);
  EXPECT_EQ(i.gpr_written, 1u << 2);

  i = Describe(Swl(2, 1, 29));
  EXPECT_EQ(i.mem, MemAccess::kStore);
  EXPECT_TRUE(i.mem_partial);

  i = Describe(Bgezal(4, 3));
  EXPECT_EQ(i.flow, Flow::kBranch);
  EXPECT_TRUE(i.link && i.delay_slot && i.conditional && !i.likely);
  EXPECT_EQ(i.gpr_written, 1u << 31);
  EXPECT_EQ(i.Target(0x1000, Bgezal(4, 3)), 0x1010u);

  i = Describe(Beql(1, 2, -1));
  EXPECT_TRUE(i.likely);
  EXPECT_EQ(i.Target(0x1000, Beql(1, 2, -1)), 0x1000u);

  i = Describe(Jal(0x80123450));
  EXPECT_EQ(i.flow, Flow::kJump);
  EXPECT_EQ(i.Target(0xFFFFFFFF80001000ull, Jal(0x80123450)), 0xFFFFFFFF80123450ull);

  i = Describe(Mult(1, 2));
  EXPECT_TRUE(i.writes_hi && i.writes_lo);
  EXPECT_TRUE(Describe(Mfhi(1)).reads_hi);
  EXPECT_TRUE(Describe(Dsll32(1, 2, 3)).is64);
  EXPECT_TRUE(Describe(Ld(1, 0, 2)).is64);
  EXPECT_EQ(Describe(Eret()).flow, Flow::kEret);
  EXPECT_TRUE(Describe(Tlbwi()).cop0);
  EXPECT_EQ(Describe(Teq(1, 2)).flow, Flow::kTrap);
  EXPECT_TRUE(Describe(Mtc1(1, 2)).fpu);
  EXPECT_EQ(Describe(Addiu(0, 1, 1)).gpr_written, 0u);  // $0 is never written
}

TEST(Disassembler, TextAndMemo) {
  Disassembler dis;
  EXPECT_EQ(dis.Text(0x1000, as::Addiu(29, 29, -32)), "addiu $sp, $sp, -0x20");
  EXPECT_EQ(dis.Mnemonic(as::Lw(2, 0, 1)), "lw");
  const size_t n = dis.cache_size();
  dis.Text(0x2000, as::Addiu(29, 29, -32));  // not PC-relative: same entry
  EXPECT_EQ(dis.cache_size(), n);
  dis.Text(0x1000, as::Beq(1, 2, 4));
  dis.Text(0x2000, as::Beq(1, 2, 4));  // PC-relative: one entry per address
  EXPECT_EQ(dis.cache_size(), n + 2);
  EXPECT_EQ(dis.Text(0, 0x00000060).substr(0, 5), ".word");  // add with sa != 0
}

}  // namespace
}  // namespace citcat::mips

namespace citcat::mips {
namespace {

TEST(Disassembler, Cp0RegistersByName) {
  Disassembler dis;
  EXPECT_EQ(dis.Text(0, as::Mfc0(8, kCp0Status)), "mfc0 $t0, c0_status");
  EXPECT_EQ(dis.Text(0, as::Dmtc0(26, kCp0Epc)), "dmtc0 $k0, c0_epc");
  EXPECT_EQ(dis.Text(0, as::Mtc0(0, 7)), "mtc0 $zero, $7");
}

TEST(Disassembler, KernelBranchTargetsReadAsAddresses) {
  Disassembler dis;
  // A backward branch in kseg0, whose 64-bit PC is sign-extended.
  EXPECT_EQ(dis.Text(0xFFFFFFFF80010114ull, as::Bne(10, 0, -23)), "bnez $t2, 0x800100bc");
}

// The run loop fuses two plain operations in a row, and a branch that cannot fault with a plain
// delay slot; nothing else, and never past the given count. Fusion is for speed only: the
// run-length test (run_length_test.cc) checks that it changes no result.
TEST(Predecode, FusesPlainPairsAndBranchesWithPlainSlots) {
  using namespace as;  // NOLINT: the encoder reads like assembly
  const uint32_t words[] = {Addu(1, 2, 3),  Addiu(1, 1, 4), Lbu(4, 0, 1),   Sll(5, 4, 2),
                            Bne(5, 0, -4),  Xor(6, 6, 5),   Beq(1, 2, 3),   Lw(7, 0, 1),
                            Addiu(0, 1, 1), Or(8, 8, 8),    Addiu(1, 1, 4), Addu(1, 2, 3)};
  std::vector<Inst> line;
  for (uint32_t w : words) line.push_back(Predecode(w));
  for (const Inst& in : line) EXPECT_EQ(in.run, static_cast<uint16_t>(in.op));
  FusePairs(line.data(), 11);  // the last word is outside the line
  std::vector<bool> fused;
  for (const Inst& in : line) fused.push_back(in.run != static_cast<uint16_t>(in.op));
  EXPECT_EQ(fused, (std::vector<bool>{true,   // addu + addiu
                                      false,  // addiu + lbu: a load may fault
                                      false,  // lbu + sll
                                      false,  // sll + bne: the branch pairs with its slot instead
                                      true,   // bne + xor in its delay slot
                                      false,  // xor + beq
                                      false,  // beq + lw in its delay slot
                                      false,  // lw + sync
                                      true,   // addiu $0 (predecoded as SYNC) + or
                                      true,   // or + addiu
                                      false,  // addiu: the next word is past the count
                                      false}));
  EXPECT_EQ(line[8].op, Op::kSync);
  // Each pair has its own label: (addu, addiu) is not (addiu, addu) nor (or, addiu).
  FusePairs(&line[10], 2);
  EXPECT_TRUE(line[10].run != static_cast<uint16_t>(line[10].op));
  EXPECT_NE(line[0].run, line[10].run);
  EXPECT_NE(line[9].run, line[10].run);
}

}  // namespace
}  // namespace citcat::mips
