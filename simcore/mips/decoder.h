// MIPS III (R4400) instruction decoding: one place that maps a 32-bit instruction word to an
// operation, and describes what the operation reads, writes, accesses and how it changes control
// flow. The interpreter dispatches on Op; trace writers use Describe().
#ifndef CITCAT_SIMCORE_MIPS_DECODER_H_
#define CITCAT_SIMCORE_MIPS_DECODER_H_

#include <cstdint>
#include <string_view>

#include "simcore/branch_kind.h"

namespace citcat::mips {

// An instruction word as its four bytes lie in memory, and back, in the core's byte order.
// (Two loops with fixed shifts: each compiles to one store, and traces call this per instruction.)
inline void WordBytes(uint32_t word, bool big_endian, uint8_t bytes[4]) {
  if (big_endian) {
    for (int i = 0; i < 4; ++i) bytes[i] = static_cast<uint8_t>(word >> 8 * (3 - i));
  } else {
    for (int i = 0; i < 4; ++i) bytes[i] = static_cast<uint8_t>(word >> 8 * i);
  }
}
inline uint32_t BytesWord(const uint8_t bytes[4], bool big_endian) {
  uint32_t word = 0;
  for (int i = 0; i < 4; ++i) word |= uint32_t{bytes[i]} << 8 * (big_endian ? 3 - i : i);
  return word;
}

// Every operation the R4400 integer core knows, plus the coprocessor groups, each with its one row
// of facts, from which the decoder, Describe() and the interpreter's run loop take what they
// know of it:
//   X(Name, where, code, shape, bytes, traits)
// - Name: the operation (Op::kName), its mnemonic in lower case, and its handler (Exec::Name).
// - where, code: its encoding: the primary opcode (kPrimary), SPECIAL's function field
//   (kSpecial), REGIMM's rt field (kRegimm), COP0's rs field (kCop0Rs) or, with CO set, its
//   function field (kCop0Fn), COP1's rs field (kCop1Rs), BC1's nd/tf bits (kCop1Bc); kNowhere
//   for what the decoder gives otherwise (Reserved; Cop1Arith for COP1 with rs >= 16). COP2's
//   loads and stores (LWC2 and its kin) decode as Cop2 too.
// - shape: which fields it reads and writes, and how it changes the flow (Shape below).
// - bytes: a load's or store's width (the aligned unit for the partial-word ones), else 0.
// - traits: op:: bits below.
// clang-format off
#define CITCAT_MIPS_OPS(X) \
  X(Reserved,  kNowhere, 0x00, kNoOperands,    0, 0) \
  X(Sll,       kSpecial, 0x00, kShiftBySa,     0, op::kFusible) \
  X(Srl,       kSpecial, 0x02, kShiftBySa,     0, op::kFusible) \
  X(Sra,       kSpecial, 0x03, kShiftBySa,     0, op::kFusible) \
  X(Sllv,      kSpecial, 0x04, kRdRsRt,        0, op::kFusible) \
  X(Srlv,      kSpecial, 0x06, kRdRsRt,        0, op::kFusible) \
  X(Srav,      kSpecial, 0x07, kRdRsRt,        0, op::kFusible) \
  X(Jr,        kSpecial, 0x08, kJumpRegister,  0, 0) \
  X(Jalr,      kSpecial, 0x09, kJumpAndLinkRd, 0, op::kLink) \
  X(Syscall,   kSpecial, 0x0C, kSystemCall,    0, 0) \
  X(Break,     kSpecial, 0x0D, kSystemCall,    0, 0) \
  X(Sync,      kSpecial, 0x0F, kNoOperands,    0, op::kFusible) \
  X(Mfhi,      kSpecial, 0x10, kFromHi,        0, op::kFusible) \
  X(Mthi,      kSpecial, 0x11, kToHi,          0, op::kPlain) \
  X(Mflo,      kSpecial, 0x12, kFromLo,        0, op::kFusible) \
  X(Mtlo,      kSpecial, 0x13, kToLo,          0, op::kPlain) \
  X(Dsllv,     kSpecial, 0x14, kRdRsRt,        0, op::kIs64) \
  X(Dsrlv,     kSpecial, 0x16, kRdRsRt,        0, op::kIs64) \
  X(Dsrav,     kSpecial, 0x17, kRdRsRt,        0, op::kIs64) \
  X(Mult,      kSpecial, 0x18, kMultiplyDivide, 0, op::kFusible) \
  X(Multu,     kSpecial, 0x19, kMultiplyDivide, 0, op::kFusible) \
  X(Div,       kSpecial, 0x1A, kMultiplyDivide, 0, op::kPlain) \
  X(Divu,      kSpecial, 0x1B, kMultiplyDivide, 0, op::kPlain) \
  X(Dmult,     kSpecial, 0x1C, kMultiplyDivide, 0, op::kIs64) \
  X(Dmultu,    kSpecial, 0x1D, kMultiplyDivide, 0, op::kIs64) \
  X(Ddiv,      kSpecial, 0x1E, kMultiplyDivide, 0, op::kIs64) \
  X(Ddivu,     kSpecial, 0x1F, kMultiplyDivide, 0, op::kIs64) \
  X(Add,       kSpecial, 0x20, kRdRsRt,        0, 0) \
  X(Addu,      kSpecial, 0x21, kRdRsRt,        0, op::kFusible) \
  X(Sub,       kSpecial, 0x22, kRdRsRt,        0, 0) \
  X(Subu,      kSpecial, 0x23, kRdRsRt,        0, op::kFusible) \
  X(And,       kSpecial, 0x24, kRdRsRt,        0, op::kFusible) \
  X(Or,        kSpecial, 0x25, kRdRsRt,        0, op::kFusible) \
  X(Xor,       kSpecial, 0x26, kRdRsRt,        0, op::kFusible) \
  X(Nor,       kSpecial, 0x27, kRdRsRt,        0, op::kFusible) \
  X(Slt,       kSpecial, 0x2A, kRdRsRt,        0, op::kFusible) \
  X(Sltu,      kSpecial, 0x2B, kRdRsRt,        0, op::kFusible) \
  X(Dadd,      kSpecial, 0x2C, kRdRsRt,        0, op::kIs64) \
  X(Daddu,     kSpecial, 0x2D, kRdRsRt,        0, op::kIs64) \
  X(Dsub,      kSpecial, 0x2E, kRdRsRt,        0, op::kIs64) \
  X(Dsubu,     kSpecial, 0x2F, kRdRsRt,        0, op::kIs64) \
  X(Tge,       kSpecial, 0x30, kTrapRsRt,      0, 0) \
  X(Tgeu,      kSpecial, 0x31, kTrapRsRt,      0, 0) \
  X(Tlt,       kSpecial, 0x32, kTrapRsRt,      0, 0) \
  X(Tltu,      kSpecial, 0x33, kTrapRsRt,      0, 0) \
  X(Teq,       kSpecial, 0x34, kTrapRsRt,      0, 0) \
  X(Tne,       kSpecial, 0x36, kTrapRsRt,      0, 0) \
  X(Dsll,      kSpecial, 0x38, kShiftBySa,     0, op::kIs64) \
  X(Dsrl,      kSpecial, 0x3A, kShiftBySa,     0, op::kIs64) \
  X(Dsra,      kSpecial, 0x3B, kShiftBySa,     0, op::kIs64) \
  X(Dsll32,    kSpecial, 0x3C, kShiftBySa32,   0, op::kIs64) \
  X(Dsrl32,    kSpecial, 0x3E, kShiftBySa32,   0, op::kIs64) \
  X(Dsra32,    kSpecial, 0x3F, kShiftBySa32,   0, op::kIs64) \
  X(Bltz,      kRegimm,  0x00, kBranchRs,      0, 0) \
  X(Bgez,      kRegimm,  0x01, kBranchRs,      0, 0) \
  X(Bltzl,     kRegimm,  0x02, kBranchRs,      0, op::kLikely) \
  X(Bgezl,     kRegimm,  0x03, kBranchRs,      0, op::kLikely) \
  X(Tgei,      kRegimm,  0x08, kTrapRs,        0, 0) \
  X(Tgeiu,     kRegimm,  0x09, kTrapRs,        0, 0) \
  X(Tlti,      kRegimm,  0x0A, kTrapRs,        0, 0) \
  X(Tltiu,     kRegimm,  0x0B, kTrapRs,        0, 0) \
  X(Teqi,      kRegimm,  0x0C, kTrapRs,        0, 0) \
  X(Tnei,      kRegimm,  0x0E, kTrapRs,        0, 0) \
  X(Bltzal,    kRegimm,  0x10, kBranchRs,      0, op::kLink) \
  X(Bgezal,    kRegimm,  0x11, kBranchRs,      0, op::kLink) \
  X(Bltzall,   kRegimm,  0x12, kBranchRs,      0, op::kLikely | op::kLink) \
  X(Bgezall,   kRegimm,  0x13, kBranchRs,      0, op::kLikely | op::kLink) \
  X(J,         kPrimary, 0x02, kJump,          0, 0) \
  X(Jal,       kPrimary, 0x03, kJump,          0, op::kLink) \
  X(Beq,       kPrimary, 0x04, kBranchRsRt,    0, 0) \
  X(Bne,       kPrimary, 0x05, kBranchRsRt,    0, 0) \
  X(Blez,      kPrimary, 0x06, kBranchRs,      0, 0) \
  X(Bgtz,      kPrimary, 0x07, kBranchRs,      0, 0) \
  X(Addi,      kPrimary, 0x08, kRtRsImmediate, 0, 0) \
  X(Addiu,     kPrimary, 0x09, kRtRsImmediate, 0, op::kFusible) \
  X(Slti,      kPrimary, 0x0A, kRtRsImmediate, 0, op::kFusible) \
  X(Sltiu,     kPrimary, 0x0B, kRtRsImmediate, 0, op::kFusible) \
  X(Andi,      kPrimary, 0x0C, kRtRsImmediate, 0, op::kFusible | op::kZeroExtended) \
  X(Ori,       kPrimary, 0x0D, kRtRsImmediate, 0, op::kFusible | op::kZeroExtended) \
  X(Xori,      kPrimary, 0x0E, kRtRsImmediate, 0, op::kFusible | op::kZeroExtended) \
  X(Lui,       kPrimary, 0x0F, kRtImmediate,   0, op::kFusible | op::kZeroExtended) \
  X(Beql,      kPrimary, 0x14, kBranchRsRt,    0, op::kLikely) \
  X(Bnel,      kPrimary, 0x15, kBranchRsRt,    0, op::kLikely) \
  X(Blezl,     kPrimary, 0x16, kBranchRs,      0, op::kLikely) \
  X(Bgtzl,     kPrimary, 0x17, kBranchRs,      0, op::kLikely) \
  X(Daddi,     kPrimary, 0x18, kRtRsImmediate, 0, op::kIs64) \
  X(Daddiu,    kPrimary, 0x19, kRtRsImmediate, 0, op::kIs64) \
  X(Ldl,       kPrimary, 0x1A, kLoad,          8, op::kIs64 | op::kPartial) \
  X(Ldr,       kPrimary, 0x1B, kLoad,          8, op::kIs64 | op::kPartial) \
  X(Lb,        kPrimary, 0x20, kLoad,          1, 0) \
  X(Lh,        kPrimary, 0x21, kLoad,          2, 0) \
  X(Lwl,       kPrimary, 0x22, kLoad,          4, op::kPartial) \
  X(Lw,        kPrimary, 0x23, kLoad,          4, 0) \
  X(Lbu,       kPrimary, 0x24, kLoad,          1, 0) \
  X(Lhu,       kPrimary, 0x25, kLoad,          2, 0) \
  X(Lwr,       kPrimary, 0x26, kLoad,          4, op::kPartial) \
  X(Lwu,       kPrimary, 0x27, kLoad,          4, op::kIs64) \
  X(Sb,        kPrimary, 0x28, kStore,         1, 0) \
  X(Sh,        kPrimary, 0x29, kStore,         2, 0) \
  X(Swl,       kPrimary, 0x2A, kStore,         4, op::kPartial) \
  X(Sw,        kPrimary, 0x2B, kStore,         4, 0) \
  X(Sdl,       kPrimary, 0x2C, kStore,         8, op::kIs64 | op::kPartial) \
  X(Sdr,       kPrimary, 0x2D, kStore,         8, op::kIs64 | op::kPartial) \
  X(Swr,       kPrimary, 0x2E, kStore,         4, op::kPartial) \
  X(Cache,     kPrimary, 0x2F, kCacheOperation, 0, 0) \
  X(Ll,        kPrimary, 0x30, kLoad,          4, 0) \
  X(Lld,       kPrimary, 0x34, kLoad,          8, op::kIs64) \
  X(Ld,        kPrimary, 0x37, kLoad,          8, op::kIs64) \
  X(Sc,        kPrimary, 0x38, kStoreConditional, 4, 0) \
  X(Scd,       kPrimary, 0x3C, kStoreConditional, 8, op::kIs64) \
  X(Sd,        kPrimary, 0x3F, kStore,         8, op::kIs64) \
  X(Mfc0,      kCop0Rs,  0x00, kFromCop0,      0, 0) \
  X(Dmfc0,     kCop0Rs,  0x01, kFromCop0,      0, op::kIs64) \
  X(Mtc0,      kCop0Rs,  0x04, kToCop0,        0, 0) \
  X(Dmtc0,     kCop0Rs,  0x05, kToCop0,        0, op::kIs64) \
  X(Tlbr,      kCop0Fn,  0x01, kCop0Operation, 0, 0) \
  X(Tlbwi,     kCop0Fn,  0x02, kCop0Operation, 0, 0) \
  X(Tlbwr,     kCop0Fn,  0x06, kCop0Operation, 0, 0) \
  X(Tlbp,      kCop0Fn,  0x08, kCop0Operation, 0, 0) \
  X(Eret,      kCop0Fn,  0x18, kExceptionReturn, 0, 0) \
  X(Mfc1,      kCop1Rs,  0x00, kFromFpr,       0, 0) \
  X(Dmfc1,     kCop1Rs,  0x01, kFromFpr,       0, op::kIs64) \
  X(Cfc1,      kCop1Rs,  0x02, kFromFpuControl, 0, 0) \
  X(Mtc1,      kCop1Rs,  0x04, kToFpr,         0, 0) \
  X(Dmtc1,     kCop1Rs,  0x05, kToFpr,         0, op::kIs64) \
  X(Ctc1,      kCop1Rs,  0x06, kToFpuControl,  0, 0) \
  X(Bc1f,      kCop1Bc,  0x00, kBranchFpCondition, 0, 0) \
  X(Bc1t,      kCop1Bc,  0x01, kBranchFpCondition, 0, 0) \
  X(Bc1fl,     kCop1Bc,  0x02, kBranchFpCondition, 0, op::kLikely) \
  X(Bc1tl,     kCop1Bc,  0x03, kBranchFpCondition, 0, op::kLikely) \
  X(Cop1Arith, kNowhere, 0x00, kFpArithmetic,  0, 0) \
  X(Lwc1,      kPrimary, 0x31, kFpLoad,        4, 0) \
  X(Ldc1,      kPrimary, 0x35, kFpLoad,        8, 0) \
  X(Swc1,      kPrimary, 0x39, kFpStore,       4, 0) \
  X(Sdc1,      kPrimary, 0x3D, kFpStore,       8, 0) \
  X(Cop2,      kPrimary, 0x12, kNoOperands,    0, 0) \
  X(Cop3,      kPrimary, 0x13, kNoOperands,    0, 0)
// clang-format on

// Where an operation's code lies in the instruction word (the table's `where`).
enum class Where : uint8_t {
  kNowhere,
  kPrimary,
  kSpecial,
  kRegimm,
  kCop0Rs,
  kCop0Fn,
  kCop1Rs,
  kCop1Bc
};

// What an operation reads and writes and how it changes the flow (the table's `shape`): the
// fields are rs, rt, rd and sa; a link writes $31 unless the shape names rd.
enum class Shape : uint8_t {
  kNoOperands,
  kShiftBySa,          // rd = rt shifted by sa
  kShiftBySa32,        // rd = rt shifted by sa + 32
  kRdRsRt,             // rd = rs op rt
  kRtRsImmediate,      // rt = rs op immediate
  kRtImmediate,        // rt = immediate (LUI)
  kFromHi,             // rd = HI
  kFromLo,             // rd = LO
  kToHi,               // HI = rs
  kToLo,               // LO = rs
  kMultiplyDivide,     // HI, LO = rs op rt
  kJumpRegister,       // to rs, with a delay slot
  kJumpAndLinkRd,      // to rs, rd = the return address, with a delay slot
  kJump,               // to the 26-bit target, with a delay slot
  kBranchRs,           // on rs, with a delay slot
  kBranchRsRt,         // on rs and rt, with a delay slot
  kBranchFpCondition,  // on the FP condition bit, with a delay slot
  kSystemCall,         // SYSCALL, BREAK: an exception always
  kTrapRs,             // an exception on rs and the immediate
  kTrapRsRt,           // an exception on rs and rt
  kLoad,               // rt = memory at rs + offset (a partial one also reads rt)
  kStore,              // memory at rs + offset = rt
  kStoreConditional,   // memory at rs + offset = rt, rt = whether it stored
  kCacheOperation,     // on the cache line at rs + offset
  kFromCop0,           // rt = a CP0 register
  kToCop0,             // a CP0 register = rt
  kCop0Operation,      // a TLB operation
  kExceptionReturn,    // ERET
  kFromFpr,            // rt = FPR fs
  kToFpr,              // FPR fs = rt
  kFromFpuControl,     // rt = an FPU control register
  kToFpuControl,       // an FPU control register = rt
  kFpArithmetic,       // FPR fd = fs op ft, or the condition bit = fs cmp ft (the function field)
  kFpLoad,             // FPR ft = memory at rs + offset
  kFpStore,            // memory at rs + offset = FPR ft
};

// The table's traits.
namespace op {
inline constexpr uint8_t kIs64 = 1 << 0;          // Reserved Instruction in 32-bit user mode
inline constexpr uint8_t kLikely = 1 << 1;        // a branch-likely: its slot is nullified untaken
inline constexpr uint8_t kLink = 1 << 2;          // writes a return address
inline constexpr uint8_t kPartial = 1 << 3;       // LWL/LWR/LDL/LDR/SWL/SWR/SDL/SDR
inline constexpr uint8_t kZeroExtended = 1 << 4;  // the immediate is zero-extended
// Cannot raise an exception, change the flow, look at the PC or the retired count: the run loop
// neither stores the PC before it nor looks at the flow after it.
inline constexpr uint8_t kPlain = 1 << 5;
// Plain, and the run loop runs two in a row under one label of its own (all plain operations but
// the divisions, slow anyway, and the rare MTHI/MTLO).
inline constexpr uint8_t kFusible = kPlain | 1 << 6;
}  // namespace op

// One row of the table.
struct OpFacts {
  Where where;
  uint8_t code;
  Shape shape;
  uint8_t bytes;
  uint8_t traits;
};

enum class Op : uint16_t {
#define CITCAT_MIPS_OP_ENUM(name, ...) k##name,
  CITCAT_MIPS_OPS(CITCAT_MIPS_OP_ENUM)
#undef CITCAT_MIPS_OP_ENUM
      kCount
};

// "sll", "bgezall", ...; "reserved" for kReserved.
std::string_view OpName(Op op);

// The operation's row of the table.
inline constexpr OpFacts kOpFacts[] = {
#define CITCAT_MIPS_OP_FACTS(name, where, code, shape, bytes, traits) \
  {Where::where, code, Shape::shape, bytes, traits},
    CITCAT_MIPS_OPS(CITCAT_MIPS_OP_FACTS)
#undef CITCAT_MIPS_OP_FACTS
};
constexpr const OpFacts& Facts(Op op) { return kOpFacts[static_cast<size_t>(op)]; }

Op DecodeOp(uint32_t word);

// Instruction fields.
inline uint32_t Rs(uint32_t w) { return (w >> 21) & 31; }
inline uint32_t Rt(uint32_t w) { return (w >> 16) & 31; }
inline uint32_t Rd(uint32_t w) { return (w >> 11) & 31; }
inline uint32_t Sa(uint32_t w) { return (w >> 6) & 31; }
inline int32_t Simm(uint32_t w) { return static_cast<int16_t>(w & 0xFFFF); }
inline uint32_t Uimm(uint32_t w) { return w & 0xFFFF; }

enum class Flow : uint8_t {
  kNone,
  kBranch,        // PC-relative conditional branch (with delay slot)
  kJump,          // J, JAL: region-absolute target
  kJumpRegister,  // JR, JALR
  kTrap,          // SYSCALL, BREAK, Tcc: may raise an exception
  kEret,          // return from exception (no delay slot)
};

enum class MemAccess : uint8_t { kNone, kLoad, kStore, kCacheOp };

// What an instruction does, as far as can be told from its encoding.
struct InstructionInfo {
  Op op = Op::kReserved;
  uint32_t gpr_read = 0;     // bit n: $n is read
  uint32_t gpr_written = 0;  // bit n: $n is written ($0 never listed)
  bool reads_hi = false, reads_lo = false, writes_hi = false, writes_lo = false;
  MemAccess mem = MemAccess::kNone;
  uint8_t mem_bytes = 0;     // access width (the aligned unit for LWL/LWR/...)
  bool mem_partial = false;  // LWL/LWR/LDL/LDR/SWL/SWR/SDL/SDR
  Flow flow = Flow::kNone;
  bool conditional = false;  // conditional branch or trap
  bool likely = false;       // branch-likely: the delay slot is nullified when not taken
  bool link = false;         // writes a return address
  bool delay_slot = false;   // followed by a delay slot
  bool fpu = false;          // touches coprocessor 1
  bool cop0 = false;         // privileged coprocessor 0 operation (incl. CACHE)
  bool is64 = false;         // a 64-bit operation (Reserved Instruction in 32-bit user mode)
  // COP1: the FP registers read, in the order the instruction names them (-1: none), the one
  // written, and the FP condition bit (CFC1/CTC1: FCSR as a whole).
  int8_t fpr_read[2] = {-1, -1};
  int8_t fpr_written = -1;
  bool reads_fcc = false, writes_fcc = false;
  // The immediate field as the operation uses it: zero-extended for the logical ones and LUI,
  // the shift amount (plus 32 for the *32 shifts), J/JAL's 26-bit index, else sign-extended;
  // 0 for the SPECIAL group's others.
  int64_t immediate = 0;
  simcore::BranchKind branch = simcore::BranchKind::kNone;
  // For PC-relative branches and J/JAL: target given the instruction's address.
  uint64_t Target(uint64_t pc, uint32_t word) const;
};

InstructionInfo Describe(uint32_t word);

// Register numbers as the core tells an observer of them and trace records carry them
// (docs/trace-formats.md, "Registers"): integer registers 0..31, then these.
inline constexpr uint16_t kRegHi = 32;
inline constexpr uint16_t kRegLo = 33;
inline constexpr uint16_t kRegFpr0 = 64;  // FGR 0..31: 64..95
inline constexpr uint16_t kRegFcc = 96;   // the FP condition bit

}  // namespace citcat::mips

#endif  // CITCAT_SIMCORE_MIPS_DECODER_H_
