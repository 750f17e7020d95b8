#include "simcore/mips/decoder.h"

#include <algorithm>
#include <array>
#include <string>

namespace citcat::mips {
namespace {

constexpr std::array<std::string_view, static_cast<size_t>(Op::kCount)> kEnumNames = {
#define CITCAT_MIPS_OP_NAME(name, ...) std::string_view(#name),
    CITCAT_MIPS_OPS(CITCAT_MIPS_OP_NAME)
#undef CITCAT_MIPS_OP_NAME
};

// Lower-case mnemonics from the operation names ("Bgezall" -> "bgezall"), built once.
const std::array<std::string, static_cast<size_t>(Op::kCount)>& OpNames() {
  static const auto* names = [] {
    auto* n = new std::array<std::string, static_cast<size_t>(Op::kCount)>;
    for (size_t i = 0; i < n->size(); ++i) {
      for (char c : kEnumNames[i]) (*n)[i] += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    return n;
  }();
  return *names;
}

// The decoder's lookup tables, one per `where`, indexed by `code` (the widest field, SPECIAL's and
// COP0's function, has 64 values).
using DecodeTables = std::array<std::array<Op, 64>, static_cast<size_t>(Where::kCop1Bc) + 1>;

constexpr DecodeTables MakeDecodeTables() {
  DecodeTables t{};
  for (auto& table : t) table.fill(Op::kReserved);
  for (size_t i = 0; i < std::size(kOpFacts); ++i) {
    const OpFacts& f = kOpFacts[i];
    if (f.where != Where::kNowhere) t[static_cast<size_t>(f.where)][f.code] = static_cast<Op>(i);
  }
  for (int lwc2 : {0x32, 0x36, 0x3A, 0x3E}) {  // LWC2 LDC2 SWC2 SDC2
    t[static_cast<size_t>(Where::kPrimary)][lwc2] = Op::kCop2;
  }
  return t;
}

constexpr DecodeTables kDecode = MakeDecodeTables();
constexpr Op Lookup(Where where, uint32_t code) {
  return kDecode[static_cast<size_t>(where)][code];
}

}  // namespace

std::string_view OpName(Op op) {
  size_t i = static_cast<size_t>(op);
  return i < OpNames().size() ? std::string_view(OpNames()[i]) : "?";
}

Op DecodeOp(uint32_t w) {
  switch (w >> 26) {
    case 0x00:
      return Lookup(Where::kSpecial, w & 63);
    case 0x01:
      return Lookup(Where::kRegimm, Rt(w));
    case 0x10:  // COP0: with CO set, the function field selects a TLB operation or ERET
      return (Rs(w) & 0x10) ? Lookup(Where::kCop0Fn, w & 63) : Lookup(Where::kCop0Rs, Rs(w));
    case 0x11:  // COP1: rs >= 16 is an arithmetic format; BC1 picks by nd/tf
      if (Rs(w) & 0x10) return Op::kCop1Arith;
      return Rs(w) == 0x08 ? Lookup(Where::kCop1Bc, Rt(w) & 3) : Lookup(Where::kCop1Rs, Rs(w));
    default:
      return Lookup(Where::kPrimary, w >> 26);
  }
}

namespace {

// The FP registers and the condition bit a COP1 operation reads and writes, which the GPR sets
// leave out.
void DescribeFpu(uint32_t w, InstructionInfo& info) {
  const int8_t ft = static_cast<int8_t>(Rt(w)), fs = static_cast<int8_t>(Rd(w)),
               fd = static_cast<int8_t>(Sa(w));
  switch (Facts(info.op).shape) {
    case Shape::kFpLoad:
      info.fpr_written = ft;
      break;
    case Shape::kFpStore:
      info.fpr_read[0] = ft;
      break;
    case Shape::kFromFpr:
      info.fpr_read[0] = fs;
      break;
    case Shape::kToFpr:
      info.fpr_written = fs;
      break;
    case Shape::kFromFpuControl:
    case Shape::kBranchFpCondition:
      info.reads_fcc = true;
      break;
    case Shape::kToFpuControl:
      info.writes_fcc = true;
      break;
    case Shape::kFpArithmetic: {
      const uint32_t funct = w & 0x3F;
      info.fpr_read[0] = fs;
      if (funct >= 0x30) {  // C.cond.fmt
        info.fpr_read[1] = ft;
        info.writes_fcc = true;
      } else {
        if (funct <= 3) info.fpr_read[1] = ft;  // ADD, SUB, MUL, DIV
        info.fpr_written = fd;
      }
      break;
    }
    default:
      break;
  }
}

int64_t ImmediateOf(uint32_t w, const OpFacts& facts) {
  if (facts.traits & op::kZeroExtended) return Uimm(w);
  switch (facts.shape) {
    case Shape::kShiftBySa:
      return Sa(w);
    case Shape::kShiftBySa32:
      return Sa(w) + 32;
    case Shape::kJump:
      return w & 0x03FFFFFF;
    default:
      return (w >> 26) == 0 ? 0 : Simm(w);  // SPECIAL-group operations have none
  }
}

// BEQ $x,$x is an unconditional branch, BGEZAL $0 a call, JR $31 a return.
simcore::BranchKind BranchKindOf(const InstructionInfo& info, uint32_t w) {
  using simcore::BranchKind;
  switch (info.flow) {
    case Flow::kBranch:
      if (info.link) {
        return info.op == Op::kBgezal && Rs(w) == 0 ? BranchKind::kDirectCall
                                                    : BranchKind::kConditionalCall;
      }
      return info.op == Op::kBeq && Rs(w) == Rt(w) ? BranchKind::kDirectJump
                                                   : BranchKind::kConditional;
    case Flow::kJump:
      return info.link ? BranchKind::kDirectCall : BranchKind::kDirectJump;
    case Flow::kJumpRegister:
      return info.op == Op::kJalr ? BranchKind::kIndirectCall
             : Rs(w) == 31        ? BranchKind::kReturn
                                  : BranchKind::kIndirectJump;
    case Flow::kEret:
      return BranchKind::kExceptionReturn;
    default:
      return BranchKind::kNone;
  }
}

}  // namespace

uint64_t InstructionInfo::Target(uint64_t pc, uint32_t word) const {
  if (flow == Flow::kJump) return ((pc + 4) & ~uint64_t{0x0FFFFFFF}) | ((word & 0x03FFFFFF) << 2);
  return pc + 4 + (static_cast<int64_t>(Simm(word)) << 2);
}

InstructionInfo Describe(uint32_t w) {
  InstructionInfo info;
  const Op op = DecodeOp(w);
  const OpFacts& facts = Facts(op);
  info.op = op;
  info.is64 = facts.traits & op::kIs64;
  info.likely = facts.traits & op::kLikely;
  info.link = facts.traits & op::kLink;
  info.mem_partial = facts.traits & op::kPartial;
  info.mem_bytes = facts.bytes;
  const uint32_t rs = 1u << Rs(w), rt = 1u << Rt(w), rd = 1u << Rd(w);
  const auto flow = [&](Flow f, bool delay_slot) {
    info.flow = f;
    info.delay_slot = delay_slot;
    info.conditional =
        f == Flow::kBranch || (f == Flow::kTrap && facts.shape != Shape::kSystemCall);
  };
  switch (facts.shape) {
    case Shape::kNoOperands:
      break;
    case Shape::kShiftBySa:
    case Shape::kShiftBySa32:
      info.gpr_read = rt;
      info.gpr_written = rd;
      break;
    case Shape::kRdRsRt:
      info.gpr_read = rs | rt;
      info.gpr_written = rd;
      break;
    case Shape::kRtRsImmediate:
      info.gpr_read = rs;
      info.gpr_written = rt;
      break;
    case Shape::kRtImmediate:
      info.gpr_written = rt;
      break;
    case Shape::kFromHi:
      info.reads_hi = true;
      info.gpr_written = rd;
      break;
    case Shape::kFromLo:
      info.reads_lo = true;
      info.gpr_written = rd;
      break;
    case Shape::kToHi:
      info.gpr_read = rs;
      info.writes_hi = true;
      break;
    case Shape::kToLo:
      info.gpr_read = rs;
      info.writes_lo = true;
      break;
    case Shape::kMultiplyDivide:
      info.gpr_read = rs | rt;
      info.writes_hi = info.writes_lo = true;
      break;
    case Shape::kJumpRegister:
      info.gpr_read = rs;
      flow(Flow::kJumpRegister, true);
      break;
    case Shape::kJumpAndLinkRd:
      info.gpr_read = rs;
      info.gpr_written = rd;
      flow(Flow::kJumpRegister, true);
      break;
    case Shape::kJump:
      flow(Flow::kJump, true);
      break;
    case Shape::kBranchRs:
      info.gpr_read = rs;
      flow(Flow::kBranch, true);
      break;
    case Shape::kBranchRsRt:
      info.gpr_read = rs | rt;
      flow(Flow::kBranch, true);
      break;
    case Shape::kBranchFpCondition:
      info.fpu = true;
      flow(Flow::kBranch, true);
      break;
    case Shape::kSystemCall:
      flow(Flow::kTrap, false);
      break;
    case Shape::kTrapRs:
      info.gpr_read = rs;
      flow(Flow::kTrap, false);
      break;
    case Shape::kTrapRsRt:
      info.gpr_read = rs | rt;
      flow(Flow::kTrap, false);
      break;
    case Shape::kLoad:
      info.gpr_read = info.mem_partial ? rs | rt : rs;
      info.gpr_written = rt;
      info.mem = MemAccess::kLoad;
      break;
    case Shape::kStore:
      info.gpr_read = rs | rt;
      info.mem = MemAccess::kStore;
      break;
    case Shape::kStoreConditional:
      info.gpr_read = rs | rt;
      info.gpr_written = rt;
      info.mem = MemAccess::kStore;
      break;
    case Shape::kCacheOperation:
      info.gpr_read = rs;
      info.mem = MemAccess::kCacheOp;
      info.cop0 = true;
      break;
    case Shape::kFromCop0:
      info.gpr_written = rt;
      info.cop0 = true;
      break;
    case Shape::kToCop0:
      info.gpr_read = rt;
      info.cop0 = true;
      break;
    case Shape::kCop0Operation:
      info.cop0 = true;
      break;
    case Shape::kExceptionReturn:
      info.cop0 = true;
      info.flow = Flow::kEret;
      break;
    case Shape::kFromFpr:
    case Shape::kFromFpuControl:
      info.gpr_written = rt;
      info.fpu = true;
      break;
    case Shape::kToFpr:
    case Shape::kToFpuControl:
      info.gpr_read = rt;
      info.fpu = true;
      break;
    case Shape::kFpArithmetic:
      info.fpu = true;
      break;
    case Shape::kFpLoad:
      info.gpr_read = rs;
      info.mem = MemAccess::kLoad;
      info.fpu = true;
      break;
    case Shape::kFpStore:
      info.gpr_read = rs;
      info.mem = MemAccess::kStore;
      info.fpu = true;
      break;
  }
  if (info.link && facts.shape != Shape::kJumpAndLinkRd) info.gpr_written = 1u << 31;
  info.gpr_written &= ~1u;
  if (info.fpu) DescribeFpu(w, info);
  info.immediate = ImmediateOf(w, facts);
  info.branch = BranchKindOf(info, w);
  return info;
}

}  // namespace citcat::mips
