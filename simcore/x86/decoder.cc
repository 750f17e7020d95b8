// The opcode maps of the i486 (one-byte, 0F, the ModRM groups and the x87 escapes) as data, and
// the walk over prefixes, ModRM/SIB, displacement and immediates that fills an Instruction.
#include "simcore/x86/decoder.h"

#include <array>

namespace citcat::x86 {
namespace {

using O = Operand;

// ---- facts ----

constexpr OpFacts kFacts[] = {
#define CITCAT_X86_OP_FACTS(name, mnem, flow, attrs, gr, gw, fr, fw, fu, ...) \
  {mnem, Flow::flow, static_cast<uint16_t>(attrs),                            \
   gr,   gw,         fr,                                                      \
   fw,   fu,         static_cast<uint16_t>(0 __VA_OPT__(| (__VA_ARGS__)))},
    CITCAT_X86_OPS(CITCAT_X86_OP_FACTS)
#undef CITCAT_X86_OP_FACTS
};
static_assert(std::size(kFacts) == static_cast<size_t>(Op::kCount));

// ---- opcode maps ----

// Form flags.
constexpr uint8_t kModrm = 1 << 0;
constexpr uint8_t kByte = 1 << 1;     // 8-bit operation
constexpr uint8_t kGroup = 1 << 2;    // op is chosen by ModRM.reg from kGroups[group]
constexpr uint8_t kImm8S = 1 << 3;    // kImm/kRel operand is one byte, sign-extended
constexpr uint8_t kImm16 = 1 << 4;    // kImm operand is 16 bits whatever the operand size
constexpr uint8_t kValid = 1 << 5;    // the entry exists
constexpr uint8_t kFixed16 = 1 << 6;  // operand size is 16 whatever the prefixes (ARPL)
constexpr uint8_t kFixed32 = 1 << 7;  // operand size is 32 (MOV CRn/DRn/TRn)

// Memory operand size codes.
enum MemSize : uint8_t {
  kMsOp,
  kMs1,
  kMs2,
  kMs4,
  kMs6,
  kMs8,
  kMs10,
  kMsFar,
  kMsBound,
  kMsEnv,
  kMsSave,
  kMsNone
};

struct Form {
  Op op = Op::kInvalid;
  O dst = O::kNone, src = O::kNone, src2 = O::kNone;
  uint8_t flags = 0;
  uint8_t group = 0;  // with kGroup
  MemSize msize = kMsOp;
  uint8_t src_size = 0;  // narrower source: 1 or 2 (0: the operand size)
};

constexpr Form F(Op op, O dst = O::kNone, O src = O::kNone, uint8_t flags = 0, O src2 = O::kNone,
                 MemSize ms = kMsOp, uint8_t src_size = 0) {
  return Form{op, dst, src, src2, static_cast<uint8_t>(flags | kValid), 0, ms, src_size};
}
constexpr Form G(uint8_t group, O dst, O src, uint8_t flags) {
  return Form{
      Op::kInvalid, dst,   src, O::kNone, static_cast<uint8_t>(flags | kGroup | kValid | kModrm),
      group,        kMsOp, 0};
}

enum GroupId : uint8_t { kG1, kG2, kG3, kG4, kG5, kG6, kG7, kG8, kG11, kG1a, kGroupCount };

using Map = std::array<Form, 256>;

constexpr Map MakeOneByteMap() {
  Map m{};
  constexpr Op kAlu[8] = {Op::kAdd, Op::kOr,  Op::kAdc, Op::kSbb,
                          Op::kAnd, Op::kSub, Op::kXor, Op::kCmp};
  for (int i = 0; i < 8; ++i) {
    const int b = i * 8;
    m[b + 0] = F(kAlu[i], O::kRm, O::kReg, kModrm | kByte);
    m[b + 1] = F(kAlu[i], O::kRm, O::kReg, kModrm);
    m[b + 2] = F(kAlu[i], O::kReg, O::kRm, kModrm | kByte);
    m[b + 3] = F(kAlu[i], O::kReg, O::kRm, kModrm);
    m[b + 4] = F(kAlu[i], O::kAcc, O::kImm, kByte);
    m[b + 5] = F(kAlu[i], O::kAcc, O::kImm);
  }
  // PUSH/POP of segment registers: `reg` is set from the opcode (bits 3-5).
  m[0x06] = F(Op::kPush, O::kSreg);
  m[0x07] = F(Op::kPop, O::kSreg);
  m[0x0E] = F(Op::kPush, O::kSreg);
  m[0x16] = F(Op::kPush, O::kSreg);
  m[0x17] = F(Op::kPop, O::kSreg);
  m[0x1E] = F(Op::kPush, O::kSreg);
  m[0x1F] = F(Op::kPop, O::kSreg);
  m[0x27] = F(Op::kDaa);
  m[0x2F] = F(Op::kDas);
  m[0x37] = F(Op::kAaa);
  m[0x3F] = F(Op::kAas);
  for (int r = 0; r < 8; ++r) {
    m[0x40 + r] = F(Op::kInc, O::kRegOp);
    m[0x48 + r] = F(Op::kDec, O::kRegOp);
    m[0x50 + r] = F(Op::kPush, O::kRegOp);
    m[0x58 + r] = F(Op::kPop, O::kRegOp);
    m[0x90 + r] = F(Op::kXchg, O::kRegOp, O::kAcc);
    m[0xB0 + r] = F(Op::kMov, O::kRegOp, O::kImm, kByte);
    m[0xB8 + r] = F(Op::kMov, O::kRegOp, O::kImm);
  }
  m[0x60] = F(Op::kPusha);
  m[0x61] = F(Op::kPopa);
  m[0x62] = F(Op::kBound, O::kReg, O::kMem, kModrm, O::kNone, kMsBound);
  m[0x63] = F(Op::kArpl, O::kRm, O::kReg, kModrm | kFixed16);
  m[0x68] = F(Op::kPush, O::kImm);
  m[0x69] = F(Op::kImul, O::kReg, O::kRm, kModrm, O::kImm);
  m[0x6A] = F(Op::kPush, O::kImm, O::kNone, kImm8S);
  m[0x6B] = F(Op::kImul, O::kReg, O::kRm, kModrm | kImm8S, O::kImm);
  m[0x6C] = F(Op::kIns, O::kStrDst, O::kDx, kByte);
  m[0x6D] = F(Op::kIns, O::kStrDst, O::kDx);
  m[0x6E] = F(Op::kOuts, O::kDx, O::kStrSrc, kByte);
  m[0x6F] = F(Op::kOuts, O::kDx, O::kStrSrc);
  for (int c = 0; c < 16; ++c) m[0x70 + c] = F(Op::kJcc, O::kRel, O::kNone, kImm8S);
  m[0x80] = G(kG1, O::kRm, O::kImm, kByte);
  m[0x81] = G(kG1, O::kRm, O::kImm, 0);
  m[0x82] = G(kG1, O::kRm, O::kImm, kByte);  // an alias of 80 outside 64-bit mode
  m[0x83] = G(kG1, O::kRm, O::kImm, kImm8S);
  m[0x84] = F(Op::kTest, O::kRm, O::kReg, kModrm | kByte);
  m[0x85] = F(Op::kTest, O::kRm, O::kReg, kModrm);
  m[0x86] = F(Op::kXchg, O::kRm, O::kReg, kModrm | kByte);
  m[0x87] = F(Op::kXchg, O::kRm, O::kReg, kModrm);
  m[0x88] = F(Op::kMov, O::kRm, O::kReg, kModrm | kByte);
  m[0x89] = F(Op::kMov, O::kRm, O::kReg, kModrm);
  m[0x8A] = F(Op::kMov, O::kReg, O::kRm, kModrm | kByte);
  m[0x8B] = F(Op::kMov, O::kReg, O::kRm, kModrm);
  m[0x8C] = F(Op::kMovSeg, O::kRm, O::kSreg, kModrm, O::kNone, kMs2);
  m[0x8D] = F(Op::kLea, O::kReg, O::kMem, kModrm, O::kNone, kMsNone);
  m[0x8E] = F(Op::kMovSeg, O::kSreg, O::kRm, kModrm, O::kNone, kMs2, 2);
  m[0x8F] = G(kG1a, O::kRm, O::kNone, 0);
  m[0x98] = F(Op::kCbw);
  m[0x99] = F(Op::kCwd);
  m[0x9A] = F(Op::kCallFar, O::kFar);
  m[0x9B] = F(Op::kWait);
  m[0x9C] = F(Op::kPushf);
  m[0x9D] = F(Op::kPopf);
  m[0x9E] = F(Op::kSahf);
  m[0x9F] = F(Op::kLahf);
  m[0xA0] = F(Op::kMov, O::kAcc, O::kMoffs, kByte);
  m[0xA1] = F(Op::kMov, O::kAcc, O::kMoffs);
  m[0xA2] = F(Op::kMov, O::kMoffs, O::kAcc, kByte);
  m[0xA3] = F(Op::kMov, O::kMoffs, O::kAcc);
  m[0xA4] = F(Op::kMovs, O::kStrDst, O::kStrSrc, kByte);
  m[0xA5] = F(Op::kMovs, O::kStrDst, O::kStrSrc);
  m[0xA6] = F(Op::kCmps, O::kStrSrc, O::kStrDst, kByte);
  m[0xA7] = F(Op::kCmps, O::kStrSrc, O::kStrDst);
  m[0xA8] = F(Op::kTest, O::kAcc, O::kImm, kByte);
  m[0xA9] = F(Op::kTest, O::kAcc, O::kImm);
  m[0xAA] = F(Op::kStos, O::kStrDst, O::kAcc, kByte);
  m[0xAB] = F(Op::kStos, O::kStrDst, O::kAcc);
  m[0xAC] = F(Op::kLods, O::kAcc, O::kStrSrc, kByte);
  m[0xAD] = F(Op::kLods, O::kAcc, O::kStrSrc);
  m[0xAE] = F(Op::kScas, O::kAcc, O::kStrDst, kByte);
  m[0xAF] = F(Op::kScas, O::kAcc, O::kStrDst);
  m[0xC0] = G(kG2, O::kRm, O::kImm8, kByte);
  m[0xC1] = G(kG2, O::kRm, O::kImm8, 0);
  m[0xC2] = F(Op::kRet, O::kImm, O::kNone, kImm16);
  m[0xC3] = F(Op::kRet);
  m[0xC4] = F(Op::kLes, O::kReg, O::kMem, kModrm, O::kNone, kMsFar);
  m[0xC5] = F(Op::kLds, O::kReg, O::kMem, kModrm, O::kNone, kMsFar);
  m[0xC6] = G(kG11, O::kRm, O::kImm, kByte);
  m[0xC7] = G(kG11, O::kRm, O::kImm, 0);
  m[0xC8] = F(Op::kEnter, O::kImm, O::kImm8, kImm16);
  m[0xC9] = F(Op::kLeave);
  m[0xCA] = F(Op::kRetFar, O::kImm, O::kNone, kImm16);
  m[0xCB] = F(Op::kRetFar);
  m[0xCC] = F(Op::kInt3);
  m[0xCD] = F(Op::kInt, O::kImm8);
  m[0xCE] = F(Op::kInto);
  m[0xCF] = F(Op::kIret);
  m[0xD0] = G(kG2, O::kRm, O::kOne, kByte);
  m[0xD1] = G(kG2, O::kRm, O::kOne, 0);
  m[0xD2] = G(kG2, O::kRm, O::kCl, kByte);
  m[0xD3] = G(kG2, O::kRm, O::kCl, 0);
  m[0xD4] = F(Op::kAam, O::kImm8);
  m[0xD5] = F(Op::kAad, O::kImm8);
  m[0xD6] = F(Op::kSalc);
  m[0xD7] = F(Op::kXlat, O::kNone, O::kNone, kByte);
  // D8-DF: x87, decoded by DecodeFpu.
  m[0xE0] = F(Op::kLoopne, O::kRel, O::kNone, kImm8S);
  m[0xE1] = F(Op::kLoope, O::kRel, O::kNone, kImm8S);
  m[0xE2] = F(Op::kLoop, O::kRel, O::kNone, kImm8S);
  m[0xE3] = F(Op::kJcxz, O::kRel, O::kNone, kImm8S);
  m[0xE4] = F(Op::kIn, O::kAcc, O::kImm8, kByte);
  m[0xE5] = F(Op::kIn, O::kAcc, O::kImm8);
  m[0xE6] = F(Op::kOut, O::kImm8, O::kAcc, kByte);
  m[0xE7] = F(Op::kOut, O::kImm8, O::kAcc);
  m[0xE8] = F(Op::kCall, O::kRel);
  m[0xE9] = F(Op::kJmp, O::kRel);
  m[0xEA] = F(Op::kJmpFar, O::kFar);
  m[0xEB] = F(Op::kJmp, O::kRel, O::kNone, kImm8S);
  m[0xEC] = F(Op::kIn, O::kAcc, O::kDx, kByte);
  m[0xED] = F(Op::kIn, O::kAcc, O::kDx);
  m[0xEE] = F(Op::kOut, O::kDx, O::kAcc, kByte);
  m[0xEF] = F(Op::kOut, O::kDx, O::kAcc);
  m[0xF1] = F(Op::kInt1);
  m[0xF4] = F(Op::kHlt);
  m[0xF5] = F(Op::kCmc);
  m[0xF6] = G(kG3, O::kRm, O::kNone, kByte);
  m[0xF7] = G(kG3, O::kRm, O::kNone, 0);
  m[0xF8] = F(Op::kClc);
  m[0xF9] = F(Op::kStc);
  m[0xFA] = F(Op::kCli);
  m[0xFB] = F(Op::kSti);
  m[0xFC] = F(Op::kCld);
  m[0xFD] = F(Op::kStd);
  m[0xFE] = G(kG4, O::kRm, O::kNone, kByte);
  m[0xFF] = G(kG5, O::kRm, O::kNone, 0);
  return m;
}

// The 0F map of the i486DX. Everything not set here is #UD: the 386's LOADALL (0F 07) and UMOV
// (0F 10-13), the B-step i486 CMPXCHG encodings (0F A6/A7), and every later addition.
constexpr Map MakeTwoByteMap() {
  Map m{};
  m[0x00] = G(kG6, O::kRm, O::kNone, 0);
  m[0x01] = G(kG7, O::kMem, O::kNone, 0);
  m[0x02] = F(Op::kLar, O::kReg, O::kRm, kModrm, O::kNone, kMs2, 2);
  m[0x03] = F(Op::kLsl, O::kReg, O::kRm, kModrm, O::kNone, kMs2, 2);
  m[0x06] = F(Op::kClts);
  m[0x08] = F(Op::kInvd);
  m[0x09] = F(Op::kWbinvd);
  m[0x20] = F(Op::kMovCr, O::kRm, O::kCreg, kModrm | kFixed32);
  m[0x21] = F(Op::kMovDr, O::kRm, O::kDreg, kModrm | kFixed32);
  m[0x22] = F(Op::kMovCr, O::kCreg, O::kRm, kModrm | kFixed32);
  m[0x23] = F(Op::kMovDr, O::kDreg, O::kRm, kModrm | kFixed32);
  m[0x24] = F(Op::kMovTr, O::kRm, O::kTreg, kModrm | kFixed32);
  m[0x26] = F(Op::kMovTr, O::kTreg, O::kRm, kModrm | kFixed32);
  for (int c = 0; c < 16; ++c) {
    m[0x80 + c] = F(Op::kJcc, O::kRel);
    m[0x90 + c] = F(Op::kSetcc, O::kRm, O::kNone, kModrm | kByte);
  }
  m[0xA0] = F(Op::kPush, O::kSreg);
  m[0xA1] = F(Op::kPop, O::kSreg);
  m[0xA3] = F(Op::kBt, O::kRm, O::kReg, kModrm);
  m[0xA4] = F(Op::kShld, O::kRm, O::kReg, kModrm, O::kImm8);
  m[0xA5] = F(Op::kShld, O::kRm, O::kReg, kModrm, O::kCl);
  m[0xA8] = F(Op::kPush, O::kSreg);
  m[0xA9] = F(Op::kPop, O::kSreg);
  m[0xAB] = F(Op::kBts, O::kRm, O::kReg, kModrm);
  m[0xAC] = F(Op::kShrd, O::kRm, O::kReg, kModrm, O::kImm8);
  m[0xAD] = F(Op::kShrd, O::kRm, O::kReg, kModrm, O::kCl);
  m[0xAF] = F(Op::kImul, O::kReg, O::kRm, kModrm);
  m[0xB0] = F(Op::kCmpxchg, O::kRm, O::kReg, kModrm | kByte);
  m[0xB1] = F(Op::kCmpxchg, O::kRm, O::kReg, kModrm);
  m[0xB2] = F(Op::kLss, O::kReg, O::kMem, kModrm, O::kNone, kMsFar);
  m[0xB3] = F(Op::kBtr, O::kRm, O::kReg, kModrm);
  m[0xB4] = F(Op::kLfs, O::kReg, O::kMem, kModrm, O::kNone, kMsFar);
  m[0xB5] = F(Op::kLgs, O::kReg, O::kMem, kModrm, O::kNone, kMsFar);
  m[0xB6] = F(Op::kMovzx, O::kReg, O::kRm, kModrm, O::kNone, kMs1, 1);
  m[0xB7] = F(Op::kMovzx, O::kReg, O::kRm, kModrm, O::kNone, kMs2, 2);
  m[0xBA] = G(kG8, O::kRm, O::kImm8, 0);
  m[0xBB] = F(Op::kBtc, O::kRm, O::kReg, kModrm);
  m[0xBC] = F(Op::kBsf, O::kReg, O::kRm, kModrm);
  m[0xBD] = F(Op::kBsr, O::kReg, O::kRm, kModrm);
  m[0xBE] = F(Op::kMovsx, O::kReg, O::kRm, kModrm, O::kNone, kMs1, 1);
  m[0xBF] = F(Op::kMovsx, O::kReg, O::kRm, kModrm, O::kNone, kMs2, 2);
  m[0xC0] = F(Op::kXadd, O::kRm, O::kReg, kModrm | kByte);
  m[0xC1] = F(Op::kXadd, O::kRm, O::kReg, kModrm);
  for (int r = 0; r < 8; ++r) m[0xC8 + r] = F(Op::kBswap, O::kRegOp);
  return m;
}

// Group members: op and operands; kByte/kImm8S come from the opcode's entry. An entry without
// kValid is #UD.
using Group = std::array<Form, 8>;
constexpr std::array<Group, kGroupCount> MakeGroups() {
  std::array<Group, kGroupCount> g{};
  constexpr Op kAlu[8] = {Op::kAdd, Op::kOr,  Op::kAdc, Op::kSbb,
                          Op::kAnd, Op::kSub, Op::kXor, Op::kCmp};
  // SAL (/6) is SHL on the i486.
  constexpr Op kShift[8] = {Op::kRol, Op::kRor, Op::kRcl, Op::kRcr,
                            Op::kShl, Op::kShr, Op::kShl, Op::kSar};
  for (int r = 0; r < 8; ++r) {
    g[kG1][r] = F(kAlu[r], O::kRm, O::kImm);
    g[kG2][r] = F(kShift[r], O::kRm, O::kNone);  // the count operand comes from the opcode
  }
  // F6/F7 /1 is an undocumented alias of TEST.
  g[kG3][0] = F(Op::kTest, O::kRm, O::kImm);
  g[kG3][1] = F(Op::kTest, O::kRm, O::kImm);
  g[kG3][2] = F(Op::kNot, O::kRm);
  g[kG3][3] = F(Op::kNeg, O::kRm);
  g[kG3][4] = F(Op::kMul, O::kRm);
  g[kG3][5] = F(Op::kImul1, O::kRm);
  g[kG3][6] = F(Op::kDiv, O::kRm);
  g[kG3][7] = F(Op::kIdiv, O::kRm);
  g[kG4][0] = F(Op::kInc, O::kRm);
  g[kG4][1] = F(Op::kDec, O::kRm);
  g[kG5][0] = F(Op::kInc, O::kRm);
  g[kG5][1] = F(Op::kDec, O::kRm);
  g[kG5][2] = F(Op::kCall, O::kRm);
  g[kG5][3] = F(Op::kCallFar, O::kMem, O::kNone, 0, O::kNone, kMsFar);
  g[kG5][4] = F(Op::kJmp, O::kRm);
  g[kG5][5] = F(Op::kJmpFar, O::kMem, O::kNone, 0, O::kNone, kMsFar);
  g[kG5][6] = F(Op::kPush, O::kRm);
  g[kG6][0] = F(Op::kSldt, O::kRm, O::kNone, 0, O::kNone, kMs2);
  g[kG6][1] = F(Op::kStr, O::kRm, O::kNone, 0, O::kNone, kMs2);
  g[kG6][2] = F(Op::kLldt, O::kRm, O::kNone, 0, O::kNone, kMs2);
  g[kG6][3] = F(Op::kLtr, O::kRm, O::kNone, 0, O::kNone, kMs2);
  g[kG6][4] = F(Op::kVerr, O::kRm, O::kNone, 0, O::kNone, kMs2);
  g[kG6][5] = F(Op::kVerw, O::kRm, O::kNone, 0, O::kNone, kMs2);
  g[kG7][0] = F(Op::kSgdt, O::kMem, O::kNone, 0, O::kNone, kMs6);
  g[kG7][1] = F(Op::kSidt, O::kMem, O::kNone, 0, O::kNone, kMs6);
  g[kG7][2] = F(Op::kLgdt, O::kMem, O::kNone, 0, O::kNone, kMs6);
  g[kG7][3] = F(Op::kLidt, O::kMem, O::kNone, 0, O::kNone, kMs6);
  g[kG7][4] = F(Op::kSmsw, O::kRm, O::kNone, 0, O::kNone, kMs2);
  g[kG7][6] = F(Op::kLmsw, O::kRm, O::kNone, 0, O::kNone, kMs2);
  g[kG7][7] = F(Op::kInvlpg, O::kMem, O::kNone, 0, O::kNone, kMsNone);
  g[kG8][4] = F(Op::kBt, O::kRm, O::kImm8);
  g[kG8][5] = F(Op::kBts, O::kRm, O::kImm8);
  g[kG8][6] = F(Op::kBtr, O::kRm, O::kImm8);
  g[kG8][7] = F(Op::kBtc, O::kRm, O::kImm8);
  g[kG11][0] = F(Op::kMov, O::kRm, O::kImm);
  g[kG1a][0] = F(Op::kPop, O::kRm);
  return g;
}

constexpr Map kOneByte = MakeOneByteMap();
constexpr Map kTwoByte = MakeTwoByteMap();
constexpr std::array<Group, kGroupCount> kGroups = MakeGroups();

// ---- x87 ----

struct FpuMem {
  Op op;
  MemSize size;
};
constexpr Op kFArith[8] = {Op::kFadd, Op::kFmul,  Op::kFcom, Op::kFcomp,
                           Op::kFsub, Op::kFsubr, Op::kFdiv, Op::kFdivr};
constexpr Op kFIArith[8] = {Op::kFiadd, Op::kFimul,  Op::kFicom, Op::kFicomp,
                            Op::kFisub, Op::kFisubr, Op::kFidiv, Op::kFidivr};
constexpr Op I = Op::kInvalid;
// Memory forms by escape (D8-DF) and ModRM.reg. The SSE3 FISTTP slots (/1 of DB, DD, DF) are #UD.
constexpr FpuMem kFpuMem[8][8] = {
    {{kFArith[0], kMs4},
     {kFArith[1], kMs4},
     {kFArith[2], kMs4},
     {kFArith[3], kMs4},
     {kFArith[4], kMs4},
     {kFArith[5], kMs4},
     {kFArith[6], kMs4},
     {kFArith[7], kMs4}},
    {{Op::kFld, kMs4},
     {I, kMs4},
     {Op::kFst, kMs4},
     {Op::kFstp, kMs4},
     {Op::kFldenv, kMsEnv},
     {Op::kFldcw, kMs2},
     {Op::kFnstenv, kMsEnv},
     {Op::kFnstcw, kMs2}},
    {{kFIArith[0], kMs4},
     {kFIArith[1], kMs4},
     {kFIArith[2], kMs4},
     {kFIArith[3], kMs4},
     {kFIArith[4], kMs4},
     {kFIArith[5], kMs4},
     {kFIArith[6], kMs4},
     {kFIArith[7], kMs4}},
    {{Op::kFild, kMs4},
     {I, kMs4},
     {Op::kFist, kMs4},
     {Op::kFistp, kMs4},
     {I, kMs4},
     {Op::kFld, kMs10},
     {I, kMs4},
     {Op::kFstp, kMs10}},
    {{kFArith[0], kMs8},
     {kFArith[1], kMs8},
     {kFArith[2], kMs8},
     {kFArith[3], kMs8},
     {kFArith[4], kMs8},
     {kFArith[5], kMs8},
     {kFArith[6], kMs8},
     {kFArith[7], kMs8}},
    {{Op::kFld, kMs8},
     {I, kMs8},
     {Op::kFst, kMs8},
     {Op::kFstp, kMs8},
     {Op::kFrstor, kMsSave},
     {I, kMs8},
     {Op::kFnsave, kMsSave},
     {Op::kFnstsw, kMs2}},
    {{kFIArith[0], kMs2},
     {kFIArith[1], kMs2},
     {kFIArith[2], kMs2},
     {kFIArith[3], kMs2},
     {kFIArith[4], kMs2},
     {kFIArith[5], kMs2},
     {kFIArith[6], kMs2},
     {kFIArith[7], kMs2}},
    {{Op::kFild, kMs2},
     {I, kMs2},
     {Op::kFist, kMs2},
     {Op::kFistp, kMs2},
     {Op::kFbld, kMs10},
     {Op::kFild, kMs8},
     {Op::kFbstp, kMs10},
     {Op::kFistp, kMs8}},
};

struct FpuReg {
  Op op;
  O dst, src;
};

// Register forms (mod == 3). The undocumented aliases every x87 up to the i486 executes are
// decoded as what they alias: D9 D8+i FSTP, DC D0+i FCOM, DC D8+i FCOMP, DD C8+i FXCH,
// DE D0+i FCOMP, DF C8+i FXCH, DF D0+i/D8+i FSTP, DF C0+i FFREEP; the 8087's FENI/FDISI
// (DB E0/E1) and the 287's FSETPM (DB E4) are FNOPs on the 387 and i486. P6 additions (FCMOVcc,
// FCOMI/FUCOMI[P]) and the remaining reserved slots are #UD.
FpuReg DecodeFpuRegister(uint8_t esc, uint8_t reg, uint8_t rm) {
  const FpuReg none{I, O::kNone, O::kNone};
  switch (esc) {
    case 0:
      return {kFArith[reg], O::kSt0, O::kSti};
    case 1:
      switch (reg) {
        case 0:
          return {Op::kFld, O::kSti, O::kNone};
        case 1:
          return {Op::kFxch, O::kSti, O::kNone};
        case 2:
          return rm == 0 ? FpuReg{Op::kFnop, O::kNone, O::kNone} : none;
        case 3:
          return {Op::kFstp, O::kSti, O::kNone};
        case 4: {
          constexpr Op k[8] = {Op::kFchs, Op::kFabs, I, I, Op::kFtst, Op::kFxam, I, I};
          return {k[rm], O::kNone, O::kNone};
        }
        case 5: {
          constexpr Op k[8] = {Op::kFld1,   Op::kFldl2t, Op::kFldl2e, Op::kFldpi,
                               Op::kFldlg2, Op::kFldln2, Op::kFldz,   I};
          return {k[rm], O::kNone, O::kNone};
        }
        case 6: {
          constexpr Op k[8] = {Op::kF2xm1,   Op::kFyl2x,  Op::kFptan,   Op::kFpatan,
                               Op::kFxtract, Op::kFprem1, Op::kFdecstp, Op::kFincstp};
          return {k[rm], O::kNone, O::kNone};
        }
        default: {
          constexpr Op k[8] = {Op::kFprem,   Op::kFyl2xp1, Op::kFsqrt, Op::kFsincos,
                               Op::kFrndint, Op::kFscale,  Op::kFsin,  Op::kFcos};
          return {k[rm], O::kNone, O::kNone};
        }
      }
    case 2:
      return reg == 5 && rm == 1 ? FpuReg{Op::kFucompp, O::kNone, O::kNone} : none;
    case 3:
      if (reg != 4) return none;
      switch (rm) {
        case 0:
        case 1:
        case 4:
          return {Op::kFnop, O::kNone, O::kNone};
        case 2:
          return {Op::kFnclex, O::kNone, O::kNone};
        case 3:
          return {Op::kFninit, O::kNone, O::kNone};
        default:
          return none;
      }
    case 4: {
      constexpr Op k[8] = {Op::kFadd,  Op::kFmul, Op::kFcom,  Op::kFcomp,
                           Op::kFsubr, Op::kFsub, Op::kFdivr, Op::kFdiv};
      if (reg == 2 || reg == 3) return {k[reg], O::kSti, O::kNone};
      return {k[reg], O::kSti, O::kSt0};
    }
    case 5: {
      constexpr Op k[8] = {Op::kFfree, Op::kFxch,   Op::kFst, Op::kFstp,
                           Op::kFucom, Op::kFucomp, I,        I};
      return {k[reg], O::kSti, O::kNone};
    }
    case 6:
      switch (reg) {
        case 2:
          return {Op::kFcomp, O::kSti, O::kNone};
        case 3:
          return rm == 1 ? FpuReg{Op::kFcompp, O::kNone, O::kNone} : none;
        default: {
          constexpr Op k[8] = {Op::kFaddp,  Op::kFmulp, I,           I,
                               Op::kFsubrp, Op::kFsubp, Op::kFdivrp, Op::kFdivp};
          return {k[reg], O::kSti, O::kSt0};
        }
      }
    default:
      switch (reg) {
        case 0:
          return {Op::kFfreep, O::kSti, O::kNone};
        case 1:
          return {Op::kFxch, O::kSti, O::kNone};
        case 2:
        case 3:
          return {Op::kFstp, O::kSti, O::kNone};
        case 4:
          return rm == 0 ? FpuReg{Op::kFnstsw, O::kAcc, O::kNone} : none;
        default:
          return none;
      }
  }
}

// ---- the walk ----

class Reader {
 public:
  Reader(const uint8_t* b, size_t size) : b_(b), size_(size) {}
  // Whether n more bytes exist; sets the fault otherwise.
  bool Need(size_t n, Fault* fault) {
    if (pos_ + n > static_cast<size_t>(kMaxInstructionLength)) {
      *fault = Fault::kGP;
      return false;
    }
    if (pos_ + n > size_) {
      *fault = Fault::kTruncated;
      return false;
    }
    return true;
  }
  uint8_t U8() { return b_[pos_++]; }
  uint32_t Le(int n) {
    uint32_t v = 0;
    for (int i = 0; i < n; ++i) v |= uint32_t{b_[pos_ + i]} << (8 * i);
    pos_ += n;
    return v;
  }
  size_t pos() const { return pos_; }

 private:
  const uint8_t* b_;
  size_t size_;
  size_t pos_ = 0;
};

int32_t SignExtend(uint32_t v, int bytes) {
  if (bytes == 1) return static_cast<int8_t>(v);
  if (bytes == 2) return static_cast<int16_t>(v);
  return static_cast<int32_t>(v);
}

uint8_t MemBytes(MemSize ms, int opsize) {
  switch (ms) {
    case kMsOp:
      return static_cast<uint8_t>(opsize);
    case kMs1:
      return 1;
    case kMs2:
      return 2;
    case kMs4:
      return 4;
    case kMs6:
      return 6;
    case kMs8:
      return 8;
    case kMs10:
      return 10;
    case kMsFar:
      return static_cast<uint8_t>(opsize + 2);
    case kMsBound:
      return static_cast<uint8_t>(opsize * 2);
    case kMsEnv:
      return opsize == 2 ? 14 : 28;
    case kMsSave:
      return opsize == 2 ? 94 : 108;
    case kMsNone:
      return 0;
  }
  return 0;
}

// Reads ModRM's memory form (mod != 3): SIB, displacement; sets base/index/scale/disp and the
// default segment. Returns false on a fault.
bool DecodeAddress(Reader& r, Instruction& in, Fault* fault, uint8_t* default_seg) {
  const uint8_t mod = in.modrm >> 6, rm = in.modrm & 7;
  *default_seg = kDs;
  int disp_bytes = 0;
  if (in.addrsize == 2) {
    constexpr uint8_t kBase[8] = {kEbx, kEbx, kEbp, kEbp, kEsi, kEdi, kEbp, kEbx};
    constexpr uint8_t kIndex[8] = {kEsi, kEdi, kEsi, kEdi, kNoReg, kNoReg, kNoReg, kNoReg};
    if (mod == 0 && rm == 6) {
      disp_bytes = 2;
    } else {
      in.base = kBase[rm];
      in.index = kIndex[rm];
      if (in.base == kEbp) *default_seg = kSs;
      disp_bytes = mod == 1 ? 1 : mod == 2 ? 2 : 0;
    }
  } else {
    if (rm == 4) {
      if (!r.Need(1, fault)) return false;
      const uint8_t sib = r.U8();
      const uint8_t base = sib & 7, index = (sib >> 3) & 7;
      in.scale = sib >> 6;
      in.index = index == 4 ? kNoReg : index;  // no index; the scale is then ignored
      if (base == 5 && mod == 0) {
        disp_bytes = 4;
      } else {
        in.base = base;
      }
    } else if (rm == 5 && mod == 0) {
      disp_bytes = 4;
    } else {
      in.base = rm;
    }
    if (in.base == kEsp || in.base == kEbp) *default_seg = kSs;
    if (mod == 1) disp_bytes = 1;
    if (mod == 2) disp_bytes = 4;
  }
  if (disp_bytes) {
    if (!r.Need(disp_bytes, fault)) return false;
    in.disp = SignExtend(r.Le(disp_bytes), disp_bytes);
  }
  return true;
}

uint8_t GprBit(uint8_t reg, int width) {
  return static_cast<uint8_t>(1u << (width == 1 ? (reg & 3) : reg));
}

// General registers an operand names (register operands only; addresses are added separately).
uint8_t OperandGprs(const Instruction& in, O kind, int width) {
  switch (kind) {
    case O::kRm:
      return in.IsRegisterForm() ? GprBit(in.rm, width) : 0;
    case O::kReg:
    case O::kRegOp:
      return GprBit(in.reg, width);
    case O::kAcc:
      return 1 << kEax;
    case O::kCl:
      return 1 << kEcx;
    case O::kDx:
      return 1 << kEdx;
    default:
      return 0;
  }
}

bool IsMemoryOperand(const Instruction& in, O kind) {
  return kind == O::kMoffs || ((kind == O::kRm || kind == O::kMem) && !in.IsRegisterForm());
}

Instruction Fail(Instruction in, Fault fault, size_t length) {
  in.fault = fault;
  in.op = Op::kInvalid;
  in.length = static_cast<uint8_t>(length);
  return in;
}

}  // namespace

const OpFacts& Facts(Op op) { return kFacts[static_cast<size_t>(op)]; }

const char* ConditionName(uint8_t cond) {
  static constexpr const char* kNames[16] = {"o", "no", "b", "ae", "e", "ne", "be", "a",
                                             "s", "ns", "p", "np", "l", "ge", "le", "g"};
  return kNames[cond & 15];
}

Instruction Decode(const uint8_t* bytes, size_t size, bool default32) {
  Instruction in;
  Reader r(bytes, size);
  Fault fault = Fault::kNone;
  uint8_t override_seg = kNoSeg;

  // Prefixes, in any order and number until the 15-byte limit; the last segment override and
  // the last of F2/F3 win, repeats are harmless.
  uint8_t b = 0;
  for (;;) {
    if (!r.Need(1, &fault)) return Fail(in, fault, r.pos());
    b = r.U8();
    switch (b) {
      case 0xF0:
        in.prefixes |= prefix::kLock;
        continue;
      case 0xF2:
        in.prefixes = (in.prefixes & ~prefix::kRep) | prefix::kRepne;
        continue;
      case 0xF3:
        in.prefixes = (in.prefixes & ~prefix::kRepne) | prefix::kRep;
        continue;
      case 0x26:
        override_seg = kEs;
        break;
      case 0x2E:
        override_seg = kCs;
        break;
      case 0x36:
        override_seg = kSs;
        break;
      case 0x3E:
        override_seg = kDs;
        break;
      case 0x64:
        override_seg = kFs;
        break;
      case 0x65:
        override_seg = kGs;
        break;
      case 0x66:
        in.prefixes |= prefix::kOpSize;
        continue;
      case 0x67:
        in.prefixes |= prefix::kAddrSize;
        continue;
      default:
        goto opcode;
    }
    in.prefixes |= prefix::kSeg;
  }
opcode:
  const bool op32 = default32 != ((in.prefixes & prefix::kOpSize) != 0);
  in.addrsize = default32 != ((in.prefixes & prefix::kAddrSize) != 0) ? 4 : 2;
  Form form;
  bool fpu = false;
  if (b == 0x0F) {
    if (!r.Need(1, &fault)) return Fail(in, fault, r.pos());
    b = r.U8();
    in.two_byte = true;
    form = kTwoByte[b];
  } else if (b >= 0xD8 && b <= 0xDF) {
    fpu = true;
    form.flags = kValid | kModrm;
  } else {
    form = kOneByte[b];
  }
  in.opcode = b;
  if (!(form.flags & kValid)) return Fail(in, Fault::kUD, r.pos());

  if (form.flags & kModrm) {
    if (!r.Need(1, &fault)) return Fail(in, fault, r.pos());
    in.modrm = r.U8();
    in.reg = (in.modrm >> 3) & 7;
    in.rm = in.modrm & 7;
  }
  if (form.flags & kGroup) {
    const Form& member = kGroups[form.group][in.reg];
    if (!(member.flags & kValid)) return Fail(in, Fault::kUD, r.pos());
    Form merged = member;
    merged.flags = static_cast<uint8_t>(member.flags | (form.flags & (kByte | kImm8S)) | kModrm);
    if (form.group == kG2) merged.src = form.src;  // the shift count comes from the opcode
    form = merged;
  }
  in.opsize = (form.flags & kByte)      ? 1
              : (form.flags & kFixed16) ? 2
              : (form.flags & kFixed32) ? 4
              : op32                    ? 4
                                        : 2;

  // Memory operand or register.
  uint8_t default_seg = kDs;
  const bool control_move = in.two_byte && b >= 0x20 && b <= 0x26;
  if (control_move) {
    in.modrm |= 0xC0;  // MOV CRn/DRn/TRn ignore mod: the operand is always a register
  } else if ((form.flags & kModrm) && !in.IsRegisterForm()) {
    if (!DecodeAddress(r, in, &fault, &default_seg)) return Fail(in, fault, r.pos());
  }

  if (fpu) {
    const uint8_t esc = b & 7;
    if (!in.IsRegisterForm()) {
      const FpuMem& m = kFpuMem[esc][in.reg];
      form.op = m.op;
      form.dst = O::kMem;
      form.msize = m.size;
    } else {
      const FpuReg f = DecodeFpuRegister(esc, in.reg, in.rm);
      form.op = f.op;
      form.dst = f.dst;
      form.src = f.src;
      if (f.dst == O::kAcc) in.opsize = 2;
    }
    if (form.op == Op::kInvalid) return Fail(in, Fault::kUD, r.pos());
  }
  in.op = form.op;
  in.dst = form.dst;
  in.src = form.src;
  in.src2 = form.src2;
  in.src_size = form.src_size ? form.src_size : in.opsize;
  const OpFacts& facts = Facts(in.op);

  // Forms that need memory; register operands of MOV CR/DR/TR and segment registers.
  if ((in.dst == O::kMem || in.src == O::kMem) && in.IsRegisterForm()) {
    return Fail(in, Fault::kUD, r.pos());
  }
  if (in.op == Op::kJcc || in.op == Op::kSetcc) in.cond = b & 15;
  if (in.dst == O::kRegOp) in.reg = b & 7;
  if (in.dst == O::kSreg && !(form.flags & kModrm)) in.reg = in.two_byte ? (b >> 3) & 7 : b >> 3;
  if (in.dst == O::kSreg && (form.flags & kModrm) && (in.reg > kGs || in.reg == kCs)) {
    return Fail(in, Fault::kUD, r.pos());  // MOV to CS and segment registers 6, 7
  }
  if (in.src == O::kSreg && in.reg > kGs) return Fail(in, Fault::kUD, r.pos());
  if (in.op == Op::kMovCr && !(in.reg == 0 || in.reg == 2 || in.reg == 3)) {
    return Fail(in, Fault::kUD, r.pos());  // CR1 and CR4-CR7 do not exist on the i486DX
  }
  if (in.op == Op::kMovTr && in.reg < 3) return Fail(in, Fault::kUD, r.pos());
  if (in.op == Op::kXchg && b == 0x90 && !(in.prefixes & prefix::kLock)) {
    in.op = Op::kNop;  // XCHG (E)AX,(E)AX: touches nothing
    in.dst = in.src = O::kNone;
  }

  // Immediates, in encoding order.
  auto read_imm = [&](O kind, bool first) -> bool {
    int n = 0;
    bool sign = false;
    switch (kind) {
      case O::kImm:
        n = (form.flags & kImm16) ? 2 : (form.flags & kImm8S) ? 1 : in.opsize;
        sign = (form.flags & kImm8S) != 0;
        break;
      case O::kImm8:
        n = 1;
        break;
      case O::kRel:
        n = (form.flags & kImm8S) ? 1 : in.opsize;
        sign = true;
        break;
      case O::kFar:
        n = in.opsize;
        break;
      case O::kMoffs:
        n = in.addrsize;
        break;
      default:
        return true;
    }
    if (!r.Need(n, &fault)) return false;
    const uint32_t v = r.Le(n);
    if (kind == O::kMoffs) {
      in.disp = static_cast<int32_t>(v);
      default_seg = kDs;
      return true;
    }
    const uint32_t value = sign ? static_cast<uint32_t>(SignExtend(v, n)) : v;
    if (first) {
      in.imm = value;
    } else {
      in.imm2 = static_cast<uint16_t>(value);
    }
    if (kind == O::kFar) {
      if (!r.Need(2, &fault)) return false;
      in.imm2 = static_cast<uint16_t>(r.Le(2));
    }
    return true;
  };
  // ENTER alone has two immediates: the frame size (imm), then the nesting level (imm2).
  if (!read_imm(in.dst, true) || !read_imm(in.src, in.op != Op::kEnter) ||
      !read_imm(in.src2, true)) {
    return Fail(in, fault, r.pos());
  }
  in.length = static_cast<uint8_t>(r.pos());

  // LOCK: only on the lockable read-modify-write operations with a memory destination.
  const bool mem_dst = IsMemoryOperand(in, in.dst);
  if ((in.prefixes & prefix::kLock) && (!(facts.attrs & attr::kLockable) || !mem_dst)) {
    return Fail(in, Fault::kUD, r.pos());
  }

  // Memory operand: access, size, segment.
  const bool has_mem = IsMemoryOperand(in, in.dst) || IsMemoryOperand(in, in.src);
  in.seg = override_seg != kNoSeg ? override_seg : default_seg;
  if (has_mem) {
    in.mem_size = MemBytes(form.msize, in.opsize);
    if (in.op == Op::kMovSeg) in.mem_size = 2;
    if (in.mem_size != 0 && !(facts.attrs & attr::kNoAccess)) {
      if (mem_dst) {
        if (facts.attrs & attr::kFpu) {
          in.mem = (facts.attrs & attr::kDstW) ? mem::kWrite : mem::kRead;
        } else {
          if (facts.attrs & attr::kDstR) in.mem |= mem::kRead;
          if (facts.attrs & attr::kDstW) in.mem |= mem::kWrite;
        }
      } else {
        in.mem = mem::kRead;
        if (facts.attrs & attr::kSrcW) in.mem |= mem::kWrite;
      }
    }
    if (!(facts.attrs & attr::kNoAccess)) in.seg_read |= 1 << in.seg;
    if (in.base != kNoReg) in.gpr_read |= 1 << in.base;
    if (in.index != kNoReg) in.gpr_read |= 1 << in.index;
  } else if (in.src == O::kStrSrc || in.dst == O::kStrSrc || in.op == Op::kXlat) {
    in.seg_read |= 1 << in.seg;
  } else {
    in.seg = kNoSeg;
  }
  if (in.dst == O::kStrDst || in.src == O::kStrDst) in.seg_read |= 1 << kEs;

  // Registers.
  in.gpr_read |= facts.gpr_read;
  uint8_t written = facts.gpr_written;
  if (in.opsize == 1 &&
      (in.op == Op::kMul || in.op == Op::kImul1 || in.op == Op::kDiv || in.op == Op::kIdiv)) {
    in.gpr_read &= static_cast<uint8_t>(~(1 << kEdx));
    written &= static_cast<uint8_t>(~(1 << kEdx));
  }
  const int dst_width = in.opsize;
  if (facts.attrs & attr::kDstR) in.gpr_read |= OperandGprs(in, in.dst, dst_width);
  if (facts.attrs & attr::kDstW) written |= OperandGprs(in, in.dst, dst_width);
  in.gpr_read |= OperandGprs(in, in.src, in.src_size) | OperandGprs(in, in.src2, 1);
  if (facts.attrs & attr::kSrcW) written |= OperandGprs(in, in.src, in.src_size);
  in.gpr_written = written;

  // Segment registers.
  const bool sreg_operand = in.dst == O::kSreg || in.src == O::kSreg;
  if (sreg_operand) {
    if (in.dst == O::kSreg && (facts.attrs & attr::kDstW)) in.seg_written |= 1 << in.reg;
    if (in.dst == O::kSreg && (facts.attrs & attr::kDstR)) in.seg_read |= 1 << in.reg;
    if (in.src == O::kSreg) in.seg_read |= 1 << in.reg;
  }
  if (facts.attrs & (attr::kPush | attr::kPop)) in.seg_read |= 1 << kSs;
  switch (in.op) {
    case Op::kLds:
      in.seg_written |= 1 << kDs;
      break;
    case Op::kLes:
      in.seg_written |= 1 << kEs;
      break;
    case Op::kLss:
      in.seg_written |= 1 << kSs;
      break;
    case Op::kLfs:
      in.seg_written |= 1 << kFs;
      break;
    case Op::kLgs:
      in.seg_written |= 1 << kGs;
      break;
    default:
      break;
  }
  if (facts.flow == Flow::kJmpFar || facts.flow == Flow::kCallFar || facts.flow == Flow::kRetFar ||
      facts.flow == Flow::kIret || facts.flow == Flow::kInt) {
    in.seg_written |= 1 << kCs;
  }
  if (facts.flow == Flow::kCallFar || facts.flow == Flow::kInt) in.seg_read |= 1 << kCs;

  // Control flow; REP makes a string instruction repeat.
  in.flow = facts.flow;
  if ((facts.attrs & attr::kString) && (in.prefixes & (prefix::kRep | prefix::kRepne))) {
    in.flow = Flow::kRep;
    in.gpr_read |= 1 << kEcx;
    in.gpr_written |= 1 << kEcx;
  }
  return in;
}

uint32_t FlagsRead(const Instruction& in) {
  uint32_t f = Facts(in.op).flags_read;
  if (in.op == Op::kJcc || in.op == Op::kSetcc) {
    constexpr uint32_t kByCond[8] = {flag::kOF,
                                     flag::kCF,
                                     flag::kZF,
                                     flag::kCF | flag::kZF,
                                     flag::kSF,
                                     flag::kPF,
                                     flag::kSF | flag::kOF,
                                     flag::kZF | flag::kSF | flag::kOF};
    f |= kByCond[(in.cond >> 1) & 7];
  }
  return f;
}

uint32_t FlagsWritten(const Instruction& in) { return Facts(in.op).flags_written; }
uint32_t FlagsUndefined(const Instruction& in) { return Facts(in.op).flags_undefined; }

int64_t ImmediateOf(const Instruction& in) {
  for (Operand o : {in.dst, in.src, in.src2}) {
    if (o == Operand::kImm || o == Operand::kImm8 || o == Operand::kRel || o == Operand::kFar) {
      return static_cast<int32_t>(in.imm);
    }
  }
  return 0;
}

simcore::BranchKind BranchKindOf(const Instruction& in) {
  using simcore::BranchKind;
  const bool direct = in.dst == Operand::kRel || in.dst == Operand::kFar;
  switch (in.flow) {
    case Flow::kJcc:
    case Flow::kLoop:
      return BranchKind::kConditional;
    case Flow::kJmp:
    case Flow::kJmpFar:
      return direct ? BranchKind::kDirectJump : BranchKind::kIndirectJump;
    case Flow::kCall:
    case Flow::kCallFar:
      return direct ? BranchKind::kDirectCall : BranchKind::kIndirectCall;
    case Flow::kRet:
    case Flow::kRetFar:
      return BranchKind::kReturn;
    case Flow::kInt:
      return BranchKind::kSoftwareInterrupt;
    case Flow::kIret:
      return BranchKind::kExceptionReturn;
    case Flow::kRep:
    case Flow::kNone:
      break;
  }
  return BranchKind::kNone;
}

X87Registers X87RegistersOf(const Instruction& in) {
  namespace e = x87;
  X87Registers regs;
  const uint16_t effects = Facts(in.op).x87;
  const int8_t sti = static_cast<int8_t>(in.rm & 7);
  const bool names_sti = in.dst == Operand::kSti || in.src == Operand::kSti;
  int8_t* read = regs.read;
  int8_t* written = regs.written;
  if (effects & e::kReadsSt0) *read++ = 0;
  if ((effects & e::kReadsSti) && names_sti) *read++ = sti;
  if (effects & e::kReadsSt1) *read++ = 1;
  if (effects & e::kReadsSw) *read++ = kX87Sw;
  if (effects & e::kWritesSt0) *written++ = 0;
  if ((effects & e::kWritesSti) && names_sti) *written++ = sti;
  if (effects & e::kWritesDst) *written++ = in.dst == Operand::kSti ? sti : 0;
  if (effects & e::kWritesSt1) *written++ = 1;
  if (effects & e::kWritesSw) *written++ = kX87Sw;
  return regs;
}

}  // namespace citcat::x86
