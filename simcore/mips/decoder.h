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

// Every operation the R4400 integer core knows, plus the coprocessor groups. The names are
// also the interpreter's handler names (Op::kSll is run by Exec::Sll).
// clang-format off
#define CITCAT_MIPS_OPS(X) \
  X(Reserved) X(Sll) X(Srl) X(Sra) X(Sllv) X(Srlv) X(Srav) X(Jr) \
  X(Jalr) X(Syscall) X(Break) X(Sync) X(Mfhi) X(Mthi) X(Mflo) X(Mtlo) X(Dsllv) \
  X(Dsrlv) X(Dsrav) X(Mult) X(Multu) X(Div) X(Divu) X(Dmult) X(Dmultu) \
  X(Ddiv) X(Ddivu) X(Add) X(Addu) X(Sub) X(Subu) X(And) X(Or) \
  X(Xor) X(Nor) X(Slt) X(Sltu) X(Dadd) X(Daddu) X(Dsub) X(Dsubu) \
  X(Tge) X(Tgeu) X(Tlt) X(Tltu) X(Teq) X(Tne) X(Dsll) X(Dsrl) \
  X(Dsra) X(Dsll32) X(Dsrl32) X(Dsra32) X(Bltz) X(Bgez) X(Bltzl) X(Bgezl) X(Tgei) \
  X(Tgeiu) X(Tlti) X(Tltiu) X(Teqi) X(Tnei) X(Bltzal) X(Bgezal) X(Bltzall) \
  X(Bgezall) X(J) X(Jal) X(Beq) X(Bne) X(Blez) X(Bgtz) X(Addi) \
  X(Addiu) X(Slti) X(Sltiu) X(Andi) X(Ori) X(Xori) X(Lui) X(Beql) \
  X(Bnel) X(Blezl) X(Bgtzl) X(Daddi) X(Daddiu) X(Ldl) X(Ldr) X(Lb) \
  X(Lh) X(Lwl) X(Lw) X(Lbu) X(Lhu) X(Lwr) X(Lwu) X(Sb) \
  X(Sh) X(Swl) X(Sw) X(Sdl) X(Sdr) X(Swr) X(Cache) X(Ll) \
  X(Lld) X(Ld) X(Sc) X(Scd) X(Sd) X(Mfc0) X(Dmfc0) X(Mtc0) \
  X(Dmtc0) X(Tlbr) X(Tlbwi) X(Tlbwr) X(Tlbp) X(Eret) X(Mfc1) X(Dmfc1) \
  X(Cfc1) X(Mtc1) X(Dmtc1) X(Ctc1) X(Bc1f) X(Bc1t) X(Bc1fl) X(Bc1tl) \
  X(Cop1Arith) X(Lwc1) X(Ldc1) X(Swc1) X(Sdc1) X(Cop2) X(Cop3)
// clang-format on

enum class Op : uint16_t {
#define CITCAT_MIPS_OP_ENUM(name) k##name,
  CITCAT_MIPS_OPS(CITCAT_MIPS_OP_ENUM)
#undef CITCAT_MIPS_OP_ENUM
      kCount
};

// "sll", "bgezall", ...; "reserved" for kReserved.
std::string_view OpName(Op op);

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

}  // namespace citcat::mips

#endif  // CITCAT_SIMCORE_MIPS_DECODER_H_
