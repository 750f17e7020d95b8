// i486 instruction decoding: bytes -> one small, trivially copyable record that the interpreter
// dispatches on (op, operand kinds) and the trace recorder reads (registers, flags, memory, flow).
// Operation-level facts live in ops.h; this adds what the encoding decides.
//
// Invariants: Decode() never reads past `size` bytes nor past 15; an instruction it accepts has
// op != kInvalid and fault == kNone; everything it reports is a function of the bytes and the code
// segment's default size alone (no CPU state), so records can be cached per code address.
#ifndef CITCAT_SIMCORE_X86_DECODER_H_
#define CITCAT_SIMCORE_X86_DECODER_H_

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "simcore/branch_kind.h"
#include "simcore/x86/ops.h"

namespace citcat::x86 {

inline constexpr int kMaxInstructionLength = 15;

// Operand kinds, in the order dst, src, src2 (Intel order). Which register or value they name is
// in the record: kReg/kSreg/kCreg/kDreg/kTreg use `reg`; kRm uses `rm` when IsRegisterForm(),
// else the effective address; kRegOp uses `reg` (taken from the opcode's low bits).
enum class Operand : uint8_t {
  kNone,
  kRm,      // ModRM r/m: a general register or memory, opsize wide (src_size for MOVZX/MOVSX...)
  kMem,     // ModRM memory only (LEA, LDS, BOUND, LGDT, x87 memory forms, ...)
  kReg,     // ModRM.reg general register
  kRegOp,   // general register in the opcode's low three bits (PUSH r, BSWAP, MOV r,imm)
  kAcc,     // AL/AX/EAX
  kImm,     // immediate of the operand size (or imm16 for RET/ENTER), in imm
  kImm8,    // imm8 zero-extended (INT n, IN/OUT port, shift counts, AAM/AAD base, ENTER level)
  kRel,     // relative branch displacement, sign-extended in imm
  kFar,     // ptr16:16/32: offset in imm, selector in imm2
  kMoffs,   // memory at a displacement only (A0-A3): disp, no base or index
  kSreg,    // segment register in `reg` (ModRM.reg, or the implied one for PUSH ES / POP DS ...)
  kCreg,    // CRn in `reg`
  kDreg,    // DRn in `reg`
  kTreg,    // TRn in `reg`
  kOne,     // the constant 1 (D0/D1 shifts)
  kCl,      // CL (D2/D3 shifts, SHLD/SHRD)
  kDx,      // DX as a port number
  kSt0,     // x87 ST(0)
  kSti,     // x87 ST(i), i in `rm`
  kStrSrc,  // string source seg:[ESI/SI] (seg is overridable)
  kStrDst,  // string destination ES:[EDI/DI]
};

// Prefix bits (Instruction::prefixes).
namespace prefix {
inline constexpr uint8_t kLock = 1 << 0;
inline constexpr uint8_t kRep = 1 << 1;    // F3 (REP/REPE), last of F2/F3 wins
inline constexpr uint8_t kRepne = 1 << 2;  // F2
inline constexpr uint8_t kSeg = 1 << 3;    // a segment override is present (the last one wins)
inline constexpr uint8_t kOpSize = 1 << 4;
inline constexpr uint8_t kAddrSize = 1 << 5;
}  // namespace prefix

// Memory access of the explicit operand (Instruction::mem).
namespace mem {
inline constexpr uint8_t kRead = 1 << 0;
inline constexpr uint8_t kWrite = 1 << 1;
}  // namespace mem

// Why an instruction was not accepted.
enum class Fault : uint8_t {
  kNone,
  kUD,         // invalid opcode: #UD
  kGP,         // longer than 15 bytes: #GP(0)
  kTruncated,  // `size` ended before the instruction: fetch more bytes (may #PF) and decode again
};

struct Instruction {
  int32_t disp = 0;   // effective-address displacement (sign-extended; 16-bit forms wrap at 64 K)
  uint32_t imm = 0;   // first immediate, extended to 32 bits (see Operand)
  uint16_t imm2 = 0;  // ENTER nesting level, far-pointer selector
  Op op = Op::kInvalid;
  uint8_t length = 0;    // bytes, prefixes included
  uint8_t prefixes = 0;  // prefix::k*
  uint8_t opsize = 0;    // operand size in bytes: 1, 2 or 4
  uint8_t addrsize = 0;  // address size in bytes: 2 or 4
  uint8_t src_size = 0;  // width of a narrower source (MOVZX/MOVSX r/m, MOV Sreg, ...), else opsize
  uint8_t seg = kNoSeg;  // segment of the memory operand or string source (Seg), override applied
  uint8_t opcode = 0;    // the opcode byte (the second one for 0F xx)
  uint8_t modrm = 0;     // raw ModRM byte if the form has one
  uint8_t reg = 0;       // register operand: ModRM.reg, opcode low bits, or implied Sreg
  uint8_t rm = 0;        // ModRM.rm (register when mod == 3, ST(i) for x87 register forms)
  uint8_t base = kNoReg;    // effective address base register, kNoReg if none
  uint8_t index = kNoReg;   // effective address index register, kNoReg if none
  uint8_t scale = 0;        // index shift: 0..3
  uint8_t mem = 0;          // mem::k* of the explicit ModRM/moffs memory operand, 0 if none
  uint8_t mem_size = 0;     // its size in bytes (6 for LGDT, 10 for m80, 14/28 FLDENV, ...)
  uint8_t cond = 0;         // condition code (tttn) of Jcc/SETcc
  uint8_t gpr_read = 0;     // general registers read, implicit ones and address registers included
  uint8_t gpr_written = 0;  // general registers written
  uint8_t seg_read = 0;     // segment registers read (bit per Seg), memory operand's included
  uint8_t seg_written = 0;  // segment registers loaded
  Operand dst = Operand::kNone, src = Operand::kNone, src2 = Operand::kNone;
  Flow flow = Flow::kNone;
  Fault fault = Fault::kNone;
  bool two_byte = false;  // 0F opcode map

  bool ok() const { return fault == Fault::kNone; }
  // The ModRM operand is a register (MOV CRn/DRn/TRn ignore mod and store it as 3).
  bool IsRegisterForm() const { return (modrm >> 6) == 3; }
  // An explicit memory operand (ModRM memory form or moffs); LEA and INVLPG have one too, with
  // mem == 0 since they only compute its address.
  bool has_memory() const {
    return src == Operand::kMoffs || dst == Operand::kMoffs ||
           ((dst == Operand::kRm || dst == Operand::kMem || src == Operand::kRm ||
             src == Operand::kMem) &&
            !IsRegisterForm());
  }
  // A near or far branch whose target comes from a register or memory.
  bool indirect() const { return dst == Operand::kRm || dst == Operand::kMem; }
};
static_assert(std::is_trivially_copyable_v<Instruction>);
static_assert(sizeof(Instruction) <= 40);

// Decodes one instruction from `size` bytes (only the first 15 are looked at), for a code segment
// whose default operand and address size is 32 bits when `default32`, else 16.
Instruction Decode(const uint8_t* bytes, size_t size, bool default32);

// EFLAGS bits the instruction reads / writes / leaves undefined: the operation's facts, refined
// by the encoding (Jcc/SETcc by their condition, REPE/REPNE read ZF).
uint32_t FlagsRead(const Instruction& insn);
uint32_t FlagsWritten(const Instruction& insn);
uint32_t FlagsUndefined(const Instruction& insn);

// "o", "no", "b", "ae", "e", "ne", "be", "a", "s", "ns", "p", "np", "l", "ge", "le", "g".
const char* ConditionName(uint8_t cond);

// The immediate operand (a relative target's displacement, a far pointer's offset), sign-extended
// as the instruction uses it; 0 if it has none.
int64_t ImmediateOf(const Instruction& in);

// Where a relative branch goes: `next_eip` plus the displacement, within 64 KiB for a 16-bit
// operand size.
inline uint32_t RelativeTarget(const Instruction& in, uint32_t next_eip) {
  const uint32_t eip = next_eip + in.imm;
  return in.opsize == 2 ? eip & 0xFFFF : eip;
}

// The class of control transfer: a relative or far-pointer target is direct, one from a register
// or memory indirect; LOOPcc and JCXZ are conditional.
simcore::BranchKind BranchKindOf(const Instruction& in);

// The x87 registers an instruction reads and writes (ops.h, the x87 column), as stack slots
// relative to the top before it runs (0 = ST(0)), in the order the column lists them, -1 ending
// each list; a slot may be written twice (FXCH's ST(0) and ST(i), a form whose destination is
// one of them). The status word is the last entry where it is read or written: kX87Sw.
inline constexpr int8_t kX87Sw = 8;
struct X87Registers {
  int8_t read[5] = {-1, -1, -1, -1, -1};
  int8_t written[6] = {-1, -1, -1, -1, -1, -1};
};
X87Registers X87RegistersOf(const Instruction& in);

// Register numbers as the core tells an observer of them and trace records carry them
// (docs/trace-formats.md, "Registers"): general registers 0..7 by encoding, then these.
inline constexpr uint16_t kRegSeg0 = 8;  // es cs ss ds fs gs: 8 + Seg
inline constexpr uint16_t kRegEflags = 14;
inline constexpr uint16_t kRegSt0 = 16;   // ST(0)..ST(7), relative to the top: 16..23
inline constexpr uint16_t kRegFpsw = 24;  // the x87 status word

}  // namespace citcat::x86

#endif  // CITCAT_SIMCORE_X86_DECODER_H_
