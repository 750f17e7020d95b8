#include "simcore/mips/decoder.h"

#include <array>
#include <string>

namespace citcat::mips {
namespace {

constexpr std::array<std::string_view, static_cast<size_t>(Op::kCount)> kEnumNames = {
#define CITCAT_MIPS_OP_NAME(name) std::string_view(#name),
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

Op DecodeSpecial(uint32_t w) {
  static constexpr Op kTable[64] = {
      Op::kSll,     Op::kReserved, Op::kSrl,      Op::kSra,      Op::kSllv,     Op::kReserved,
      Op::kSrlv,    Op::kSrav,     Op::kJr,       Op::kJalr,     Op::kReserved, Op::kReserved,
      Op::kSyscall, Op::kBreak,    Op::kReserved, Op::kSync,     Op::kMfhi,     Op::kMthi,
      Op::kMflo,    Op::kMtlo,     Op::kDsllv,    Op::kReserved, Op::kDsrlv,    Op::kDsrav,
      Op::kMult,    Op::kMultu,    Op::kDiv,      Op::kDivu,     Op::kDmult,    Op::kDmultu,
      Op::kDdiv,    Op::kDdivu,    Op::kAdd,      Op::kAddu,     Op::kSub,      Op::kSubu,
      Op::kAnd,     Op::kOr,       Op::kXor,      Op::kNor,      Op::kReserved, Op::kReserved,
      Op::kSlt,     Op::kSltu,     Op::kDadd,     Op::kDaddu,    Op::kDsub,     Op::kDsubu,
      Op::kTge,     Op::kTgeu,     Op::kTlt,      Op::kTltu,     Op::kTeq,      Op::kReserved,
      Op::kTne,     Op::kReserved, Op::kDsll,     Op::kReserved, Op::kDsrl,     Op::kDsra,
      Op::kDsll32,  Op::kReserved, Op::kDsrl32,   Op::kDsra32};
  return kTable[w & 63];
}

Op DecodeRegimm(uint32_t w) {
  switch (Rt(w)) {
    case 0x00:
      return Op::kBltz;
    case 0x01:
      return Op::kBgez;
    case 0x02:
      return Op::kBltzl;
    case 0x03:
      return Op::kBgezl;
    case 0x08:
      return Op::kTgei;
    case 0x09:
      return Op::kTgeiu;
    case 0x0A:
      return Op::kTlti;
    case 0x0B:
      return Op::kTltiu;
    case 0x0C:
      return Op::kTeqi;
    case 0x0E:
      return Op::kTnei;
    case 0x10:
      return Op::kBltzal;
    case 0x11:
      return Op::kBgezal;
    case 0x12:
      return Op::kBltzall;
    case 0x13:
      return Op::kBgezall;
    default:
      return Op::kReserved;
  }
}

Op DecodeCop0(uint32_t w) {
  uint32_t rs = Rs(w);
  if (rs & 0x10) {  // CO: the function field selects a TLB operation or ERET
    switch (w & 63) {
      case 0x01:
        return Op::kTlbr;
      case 0x02:
        return Op::kTlbwi;
      case 0x06:
        return Op::kTlbwr;
      case 0x08:
        return Op::kTlbp;
      case 0x18:
        return Op::kEret;
      default:
        return Op::kReserved;
    }
  }
  switch (rs) {
    case 0x00:
      return Op::kMfc0;
    case 0x01:
      return Op::kDmfc0;
    case 0x04:
      return Op::kMtc0;
    case 0x05:
      return Op::kDmtc0;
    default:
      return Op::kReserved;
  }
}

Op DecodeCop1(uint32_t w) {
  uint32_t rs = Rs(w);
  if (rs & 0x10) return Op::kCop1Arith;
  switch (rs) {
    case 0x00:
      return Op::kMfc1;
    case 0x01:
      return Op::kDmfc1;
    case 0x02:
      return Op::kCfc1;
    case 0x04:
      return Op::kMtc1;
    case 0x05:
      return Op::kDmtc1;
    case 0x06:
      return Op::kCtc1;
    case 0x08:
      switch (Rt(w) & 3) {
        case 0:
          return Op::kBc1f;
        case 1:
          return Op::kBc1t;
        case 2:
          return Op::kBc1fl;
        default:
          return Op::kBc1tl;
      }
    default:
      return Op::kReserved;
  }
}

}  // namespace

std::string_view OpName(Op op) {
  size_t i = static_cast<size_t>(op);
  return i < OpNames().size() ? std::string_view(OpNames()[i]) : "?";
}

Op DecodeOp(uint32_t w) {
  switch (w >> 26) {
    case 0x00:
      return DecodeSpecial(w);
    case 0x01:
      return DecodeRegimm(w);
    case 0x02:
      return Op::kJ;
    case 0x03:
      return Op::kJal;
    case 0x04:
      return Op::kBeq;
    case 0x05:
      return Op::kBne;
    case 0x06:
      return Op::kBlez;
    case 0x07:
      return Op::kBgtz;
    case 0x08:
      return Op::kAddi;
    case 0x09:
      return Op::kAddiu;
    case 0x0A:
      return Op::kSlti;
    case 0x0B:
      return Op::kSltiu;
    case 0x0C:
      return Op::kAndi;
    case 0x0D:
      return Op::kOri;
    case 0x0E:
      return Op::kXori;
    case 0x0F:
      return Op::kLui;
    case 0x10:
      return DecodeCop0(w);
    case 0x11:
      return DecodeCop1(w);
    case 0x12:
      return Op::kCop2;
    case 0x13:
      return Op::kCop3;
    case 0x14:
      return Op::kBeql;
    case 0x15:
      return Op::kBnel;
    case 0x16:
      return Op::kBlezl;
    case 0x17:
      return Op::kBgtzl;
    case 0x18:
      return Op::kDaddi;
    case 0x19:
      return Op::kDaddiu;
    case 0x1A:
      return Op::kLdl;
    case 0x1B:
      return Op::kLdr;
    case 0x20:
      return Op::kLb;
    case 0x21:
      return Op::kLh;
    case 0x22:
      return Op::kLwl;
    case 0x23:
      return Op::kLw;
    case 0x24:
      return Op::kLbu;
    case 0x25:
      return Op::kLhu;
    case 0x26:
      return Op::kLwr;
    case 0x27:
      return Op::kLwu;
    case 0x28:
      return Op::kSb;
    case 0x29:
      return Op::kSh;
    case 0x2A:
      return Op::kSwl;
    case 0x2B:
      return Op::kSw;
    case 0x2C:
      return Op::kSdl;
    case 0x2D:
      return Op::kSdr;
    case 0x2E:
      return Op::kSwr;
    case 0x2F:
      return Op::kCache;
    case 0x30:
      return Op::kLl;
    case 0x31:
      return Op::kLwc1;
    case 0x32:
      return Op::kCop2;  // LWC2
    case 0x34:
      return Op::kLld;
    case 0x35:
      return Op::kLdc1;
    case 0x36:
      return Op::kCop2;  // LDC2
    case 0x37:
      return Op::kLd;
    case 0x38:
      return Op::kSc;
    case 0x39:
      return Op::kSwc1;
    case 0x3A:
      return Op::kCop2;  // SWC2
    case 0x3C:
      return Op::kScd;
    case 0x3D:
      return Op::kSdc1;
    case 0x3E:
      return Op::kCop2;  // SDC2
    case 0x3F:
      return Op::kSd;
    default:
      return Op::kReserved;
  }
}

namespace {

// The FP registers and the condition bit a COP1 operation reads and writes, which the GPR sets
// leave out.
void DescribeFpu(uint32_t w, InstructionInfo& info) {
  const int8_t ft = static_cast<int8_t>(Rt(w)), fs = static_cast<int8_t>(Rd(w)),
               fd = static_cast<int8_t>(Sa(w));
  switch (info.op) {
    case Op::kLwc1:
    case Op::kLdc1:
      info.fpr_written = ft;
      break;
    case Op::kSwc1:
    case Op::kSdc1:
      info.fpr_read[0] = ft;
      break;
    case Op::kMfc1:
    case Op::kDmfc1:
      info.fpr_read[0] = fs;
      break;
    case Op::kMtc1:
    case Op::kDmtc1:
      info.fpr_written = fs;
      break;
    case Op::kCfc1:
    case Op::kBc1f:
    case Op::kBc1t:
    case Op::kBc1fl:
    case Op::kBc1tl:
      info.reads_fcc = true;
      break;
    case Op::kCtc1:
      info.writes_fcc = true;
      break;
    case Op::kCop1Arith: {
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

int64_t ImmediateOf(Op op, uint32_t w) {
  switch (op) {
    case Op::kAndi:
    case Op::kOri:
    case Op::kXori:
    case Op::kLui:
      return Uimm(w);
    case Op::kSll:
    case Op::kSrl:
    case Op::kSra:
    case Op::kDsll:
    case Op::kDsrl:
    case Op::kDsra:
      return Sa(w);
    case Op::kDsll32:
    case Op::kDsrl32:
    case Op::kDsra32:
      return Sa(w) + 32;
    case Op::kJ:
    case Op::kJal:
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
  Op op = DecodeOp(w);
  info.op = op;
  const uint32_t rs = 1u << Rs(w), rt = 1u << Rt(w), rd = 1u << Rd(w);
  auto load = [&](uint8_t n, bool is64 = false) {
    info.gpr_read = rs;
    info.gpr_written = rt;
    info.mem = MemAccess::kLoad;
    info.mem_bytes = n;
    info.is64 = is64;
  };
  auto store = [&](uint8_t n, bool is64 = false) {
    info.gpr_read = rs | rt;
    info.mem = MemAccess::kStore;
    info.mem_bytes = n;
    info.is64 = is64;
  };
  auto branch = [&](uint32_t reads, bool likely, bool link) {
    info.gpr_read = reads;
    info.flow = Flow::kBranch;
    info.conditional = true;
    info.likely = likely;
    info.link = link;
    info.delay_slot = true;
    if (link) info.gpr_written = 1u << 31;
  };
  auto trap = [&](uint32_t reads) {
    info.gpr_read = reads;
    info.flow = Flow::kTrap;
    info.conditional = true;
  };
  switch (op) {
    case Op::kSll:
    case Op::kSrl:
    case Op::kSra:
      info.gpr_read = rt;
      info.gpr_written = rd;
      break;
    case Op::kDsll:
    case Op::kDsrl:
    case Op::kDsra:
    case Op::kDsll32:
    case Op::kDsrl32:
    case Op::kDsra32:
      info.gpr_read = rt;
      info.gpr_written = rd;
      info.is64 = true;
      break;
    case Op::kSllv:
    case Op::kSrlv:
    case Op::kSrav:
    case Op::kAdd:
    case Op::kAddu:
    case Op::kSub:
    case Op::kSubu:
    case Op::kAnd:
    case Op::kOr:
    case Op::kXor:
    case Op::kNor:
    case Op::kSlt:
    case Op::kSltu:
      info.gpr_read = rs | rt;
      info.gpr_written = rd;
      break;
    case Op::kDsllv:
    case Op::kDsrlv:
    case Op::kDsrav:
    case Op::kDadd:
    case Op::kDaddu:
    case Op::kDsub:
    case Op::kDsubu:
      info.gpr_read = rs | rt;
      info.gpr_written = rd;
      info.is64 = true;
      break;
    case Op::kJr:
      info.gpr_read = rs;
      info.flow = Flow::kJumpRegister;
      info.delay_slot = true;
      break;
    case Op::kJalr:
      info.gpr_read = rs;
      info.gpr_written = rd;
      info.flow = Flow::kJumpRegister;
      info.delay_slot = true;
      info.link = true;
      break;
    case Op::kSyscall:
    case Op::kBreak:
      info.flow = Flow::kTrap;
      break;
    case Op::kSync:
      break;
    case Op::kMfhi:
      info.reads_hi = true;
      info.gpr_written = rd;
      break;
    case Op::kMflo:
      info.reads_lo = true;
      info.gpr_written = rd;
      break;
    case Op::kMthi:
      info.gpr_read = rs;
      info.writes_hi = true;
      break;
    case Op::kMtlo:
      info.gpr_read = rs;
      info.writes_lo = true;
      break;
    case Op::kMult:
    case Op::kMultu:
    case Op::kDiv:
    case Op::kDivu:
    case Op::kDmult:
    case Op::kDmultu:
    case Op::kDdiv:
    case Op::kDdivu:
      info.gpr_read = rs | rt;
      info.writes_hi = info.writes_lo = true;
      info.is64 = op >= Op::kDmult;
      break;
    case Op::kTge:
    case Op::kTgeu:
    case Op::kTlt:
    case Op::kTltu:
    case Op::kTeq:
    case Op::kTne:
      trap(rs | rt);
      break;
    case Op::kTgei:
    case Op::kTgeiu:
    case Op::kTlti:
    case Op::kTltiu:
    case Op::kTeqi:
    case Op::kTnei:
      trap(rs);
      break;
    case Op::kBltz:
    case Op::kBgez:
    case Op::kBlez:
    case Op::kBgtz:
      branch(rs, false, false);
      break;
    case Op::kBltzl:
    case Op::kBgezl:
    case Op::kBlezl:
    case Op::kBgtzl:
      branch(rs, true, false);
      break;
    case Op::kBltzal:
    case Op::kBgezal:
      branch(rs, false, true);
      break;
    case Op::kBltzall:
    case Op::kBgezall:
      branch(rs, true, true);
      break;
    case Op::kBeq:
    case Op::kBne:
      branch(rs | rt, false, false);
      break;
    case Op::kBeql:
    case Op::kBnel:
      branch(rs | rt, true, false);
      break;
    case Op::kJ:
      info.flow = Flow::kJump;
      info.delay_slot = true;
      break;
    case Op::kJal:
      info.flow = Flow::kJump;
      info.delay_slot = true;
      info.link = true;
      info.gpr_written = 1u << 31;
      break;
    case Op::kAddi:
    case Op::kAddiu:
    case Op::kSlti:
    case Op::kSltiu:
    case Op::kAndi:
    case Op::kOri:
    case Op::kXori:
      info.gpr_read = rs;
      info.gpr_written = rt;
      break;
    case Op::kDaddi:
    case Op::kDaddiu:
      info.gpr_read = rs;
      info.gpr_written = rt;
      info.is64 = true;
      break;
    case Op::kLui:
      info.gpr_written = rt;
      break;
    case Op::kLb:
    case Op::kLbu:
      load(1);
      break;
    case Op::kLh:
    case Op::kLhu:
      load(2);
      break;
    case Op::kLw:
    case Op::kLl:
      load(4);
      break;
    case Op::kLwu:
      load(4, true);
      break;
    case Op::kLd:
    case Op::kLld:
      load(8, true);
      break;
    case Op::kLwl:
    case Op::kLwr:
      load(4);
      info.gpr_read |= rt;
      info.mem_partial = true;
      break;
    case Op::kLdl:
    case Op::kLdr:
      load(8, true);
      info.gpr_read |= rt;
      info.mem_partial = true;
      break;
    case Op::kSb:
      store(1);
      break;
    case Op::kSh:
      store(2);
      break;
    case Op::kSw:
      store(4);
      break;
    case Op::kSd:
      store(8, true);
      break;
    case Op::kSc:
      store(4);
      info.gpr_written = rt;
      break;
    case Op::kScd:
      store(8, true);
      info.gpr_written = rt;
      break;
    case Op::kSwl:
    case Op::kSwr:
      store(4);
      info.mem_partial = true;
      break;
    case Op::kSdl:
    case Op::kSdr:
      store(8, true);
      info.mem_partial = true;
      break;
    case Op::kCache:
      info.gpr_read = rs;
      info.mem = MemAccess::kCacheOp;
      info.cop0 = true;
      break;
    case Op::kMfc0:
      info.gpr_written = rt;
      info.cop0 = true;
      break;
    case Op::kDmfc0:
      info.gpr_written = rt;
      info.cop0 = true;
      info.is64 = true;
      break;
    case Op::kMtc0:
      info.gpr_read = rt;
      info.cop0 = true;
      break;
    case Op::kDmtc0:
      info.gpr_read = rt;
      info.cop0 = true;
      info.is64 = true;
      break;
    case Op::kTlbr:
    case Op::kTlbwi:
    case Op::kTlbwr:
    case Op::kTlbp:
      info.cop0 = true;
      break;
    case Op::kEret:
      info.cop0 = true;
      info.flow = Flow::kEret;
      break;
    case Op::kMfc1:
    case Op::kCfc1:
      info.gpr_written = rt;
      info.fpu = true;
      break;
    case Op::kDmfc1:
      info.gpr_written = rt;
      info.fpu = true;
      info.is64 = true;
      break;
    case Op::kMtc1:
    case Op::kCtc1:
      info.gpr_read = rt;
      info.fpu = true;
      break;
    case Op::kDmtc1:
      info.gpr_read = rt;
      info.fpu = true;
      info.is64 = true;
      break;
    case Op::kBc1f:
    case Op::kBc1t:
      branch(0, false, false);
      info.fpu = true;
      break;
    case Op::kBc1fl:
    case Op::kBc1tl:
      branch(0, true, false);
      info.fpu = true;
      break;
    case Op::kCop1Arith:
      info.fpu = true;
      break;
    case Op::kLwc1:
      info.gpr_read = rs;
      info.mem = MemAccess::kLoad;
      info.mem_bytes = 4;
      info.fpu = true;
      break;
    case Op::kLdc1:
      info.gpr_read = rs;
      info.mem = MemAccess::kLoad;
      info.mem_bytes = 8;
      info.fpu = true;
      break;
    case Op::kSwc1:
      info.gpr_read = rs;
      info.mem = MemAccess::kStore;
      info.mem_bytes = 4;
      info.fpu = true;
      break;
    case Op::kSdc1:
      info.gpr_read = rs;
      info.mem = MemAccess::kStore;
      info.mem_bytes = 8;
      info.fpu = true;
      break;
    case Op::kReserved:
    case Op::kCop2:
    case Op::kCop3:
    case Op::kCount:
      break;
  }
  info.gpr_written &= ~1u;
  if (info.fpu) DescribeFpu(w, info);
  info.immediate = ImmediateOf(op, w);
  info.branch = BranchKindOf(info, w);
  return info;
}

}  // namespace citcat::mips
