// MIPS III (R4400) instruction decoding: one place that maps a 32-bit instruction word to an
// operation, and describes what the operation reads, writes, accesses and how it changes control
// flow. The interpreter dispatches on Op; trace writers use Describe().
#ifndef CITCAT_SIMCORE_MIPS_DECODER_H_
#define CITCAT_SIMCORE_MIPS_DECODER_H_

#include <cstdint>
#include <string_view>

namespace citcat::mips {

// Every operation the R4400 integer core knows, plus the coprocessor groups.
// clang-format off
#define CITCAT_MIPS_OPS(X) \
  X(kReserved) X(kSll) X(kSrl) X(kSra) X(kSllv) X(kSrlv) X(kSrav) X(kJr) \
  X(kJalr) X(kSyscall) X(kBreak) X(kSync) X(kMfhi) X(kMthi) X(kMflo) X(kMtlo) X(kDsllv) \
  X(kDsrlv) X(kDsrav) X(kMult) X(kMultu) X(kDiv) X(kDivu) X(kDmult) X(kDmultu) \
  X(kDdiv) X(kDdivu) X(kAdd) X(kAddu) X(kSub) X(kSubu) X(kAnd) X(kOr) \
  X(kXor) X(kNor) X(kSlt) X(kSltu) X(kDadd) X(kDaddu) X(kDsub) X(kDsubu) \
  X(kTge) X(kTgeu) X(kTlt) X(kTltu) X(kTeq) X(kTne) X(kDsll) X(kDsrl) \
  X(kDsra) X(kDsll32) X(kDsrl32) X(kDsra32) X(kBltz) X(kBgez) X(kBltzl) X(kBgezl) X(kTgei) \
  X(kTgeiu) X(kTlti) X(kTltiu) X(kTeqi) X(kTnei) X(kBltzal) X(kBgezal) X(kBltzall) \
  X(kBgezall) X(kJ) X(kJal) X(kBeq) X(kBne) X(kBlez) X(kBgtz) X(kAddi) \
  X(kAddiu) X(kSlti) X(kSltiu) X(kAndi) X(kOri) X(kXori) X(kLui) X(kBeql) \
  X(kBnel) X(kBlezl) X(kBgtzl) X(kDaddi) X(kDaddiu) X(kLdl) X(kLdr) X(kLb) \
  X(kLh) X(kLwl) X(kLw) X(kLbu) X(kLhu) X(kLwr) X(kLwu) X(kSb) \
  X(kSh) X(kSwl) X(kSw) X(kSdl) X(kSdr) X(kSwr) X(kCache) X(kLl) \
  X(kLld) X(kLd) X(kSc) X(kScd) X(kSd) X(kMfc0) X(kDmfc0) X(kMtc0) \
  X(kDmtc0) X(kTlbr) X(kTlbwi) X(kTlbwr) X(kTlbp) X(kEret) X(kMfc1) X(kDmfc1) \
  X(kCfc1) X(kMtc1) X(kDmtc1) X(kCtc1) X(kBc1f) X(kBc1t) X(kBc1fl) X(kBc1tl) \
  X(kCop1Arith) X(kLwc1) X(kLdc1) X(kSwc1) X(kSdc1) X(kCop2) X(kCop3)
// clang-format on

enum class Op : uint16_t {
#define CITCAT_MIPS_OP_ENUM(name) name,
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
  // For PC-relative branches and J/JAL: target given the instruction's address.
  uint64_t Target(uint64_t pc, uint32_t word) const;
};

InstructionInfo Describe(uint32_t word);

}  // namespace citcat::mips

#endif  // CITCAT_SIMCORE_MIPS_DECODER_H_
