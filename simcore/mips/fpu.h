// MIPS R4400 floating-point unit (coprocessor 1), self-contained.
//
// The Fpu owns the 32 floating-point general registers (FGRs), FCR0 (implementation/revision) and
// FCR31 (control/status). It executes the COP1 computational instructions (opcode COP1 with
// rs >= 16: formats S, D, W, L) and gives the integer core accessors for the moves, loads, stores
// and branches, which the core decodes itself:
//
//   MFC1/MTC1/LWC1/SWC1   ReadWord / WriteWord
//   DMFC1/DMTC1/LDC1/SDC1 ReadDouble / WriteDouble
//   CFC1/CTC1             ReadControl / WriteControl (WriteControl can raise the FP exception)
//   BC1F/BC1T/BC1FL/BC1TL condition()
//   COP1, rs >= 16        Execute(insn)
//
// The core checks Status.CU1 (Coprocessor Unusable) before calling any of these, and calls
// set_fr() whenever Status.FR changes. An FpuOutcome other than kOk maps to an exception:
//   kFpe                 -> Floating-Point exception, Cause.ExcCode 15 (FPE). FCR31's cause field
//                           says why; the destination register and the condition bit are unchanged.
//                           The Unimplemented Operation case is kFpe with cause bit E set.
//   kReservedInstruction -> Reserved Instruction exception, Cause.ExcCode 10. Nothing changed.
//
// Register storage follows the MIPS64 model (and QEMU's): 32 physical 64-bit FGRs. With FR=1 all
// 32 are 64-bit registers. With FR=0 there are 32 32-bit registers, word register n being the low
// half of FGR n, and a double-precision value in register pair (2n, 2n+1) is FGR[2n].lo (low word)
// and FGR[2n+1].lo (high word). See docs/machines/r4400-fpu.md for every choice the R4400 manuals
// leave undefined.
#ifndef CITCAT_SIMCORE_MIPS_FPU_H_
#define CITCAT_SIMCORE_MIPS_FPU_H_

#include <array>
#include <cstdint>

namespace citcat::mips {

// ---- FCR31 (FCSR) layout ---------------------------------------------------------------------
// Exception bits, in the order they appear in the flags (bits 2..6), enables (7..11) and cause
// (12..17) fields. E (unimplemented operation) exists only in the cause field and has no enable:
// a cause E always traps.
inline constexpr uint32_t kFpInexact = 1u << 0;        // I
inline constexpr uint32_t kFpUnderflow = 1u << 1;      // U
inline constexpr uint32_t kFpOverflow = 1u << 2;       // O
inline constexpr uint32_t kFpDivideByZero = 1u << 3;   // Z
inline constexpr uint32_t kFpInvalid = 1u << 4;        // V
inline constexpr uint32_t kFpUnimplemented = 1u << 5;  // E (cause field only)

inline constexpr int kFcsrFlagsShift = 2;
inline constexpr int kFcsrEnablesShift = 7;
inline constexpr int kFcsrCauseShift = 12;
inline constexpr uint32_t kFcsrRoundingMask = 0x3;
inline constexpr uint32_t kFcsrFlagsMask = 0x1Fu << kFcsrFlagsShift;
inline constexpr uint32_t kFcsrEnablesMask = 0x1Fu << kFcsrEnablesShift;
inline constexpr uint32_t kFcsrCauseMask = 0x3Fu << kFcsrCauseShift;
inline constexpr uint32_t kFcsrCondition = 1u << 23;    // C, tested by BC1T/BC1F
inline constexpr uint32_t kFcsrFlushToZero = 1u << 24;  // FS
// Bits 18..22 and 25..31 read as zero and ignore writes on the R4400.
inline constexpr uint32_t kFcsrWritableMask = 0x0183FFFF;

// FCR31.RM
enum class FpRounding : uint8_t { kNearest = 0, kZero = 1, kUp = 2, kDown = 3 };

// FCR0: Imp = 0x05 (R4000/R4400 FPU) in bits 15..8, revision in bits 7..0.
inline constexpr uint32_t kR4400FirImplementation = 0x0500;

// ---- Instruction fields ----------------------------------------------------------------------
inline constexpr uint32_t kOpCop1 = 0x11;  // primary opcode, bits 31..26
// rs field (bits 25..21) values that select a computational format.
enum class FpFormat : uint8_t { kS = 16, kD = 17, kW = 20, kL = 21 };

enum class FpuOutcome : uint8_t {
  kOk,
  kFpe,                  // Floating-Point exception (ExcCode 15); see FCR31 cause bits
  kReservedInstruction,  // Reserved Instruction exception (ExcCode 10)
};

// Registers an instruction touches, for the decoder and trace writers. FPR numbers are
// architectural register specifiers (0..31) as written in the instruction; -1 means none.
struct FpuRegisterUse {
  bool computational = false;     // COP1 with a format (S, D, W, L) in rs
  bool is_double_src = false;     // sources are 64-bit (fmt D or L)
  bool is_double_dst = false;     // destination is 64-bit (D or L result)
  int8_t src1 = -1;               // fs
  int8_t src2 = -1;               // ft (two-operand ops and compares)
  int8_t dst = -1;                // fd; -1 for compares
  bool writes_condition = false;  // C.cond.fmt
};

class Fpu {
 public:
  static constexpr int kNumRegisters = 32;

  // `fir` is the value FCR0 reads; the revision byte comes from the machine description.
  explicit Fpu(uint32_t fir = kR4400FirImplementation);

  // Registers and FCR31 to zero, FR=0. FCR0 is kept.
  void Reset();

  // Status.FR, mirrored by the core whenever it changes.
  bool fr() const { return fr_; }
  void set_fr(bool fr) { fr_ = fr; }

  // ---- Moves, loads and stores (the core does the memory access) ----
  // Word view of register `reg` (0..31): the low 32 bits of FGR reg, in either FR mode. A write
  // leaves the high 32 bits of the FGR as they were.
  uint32_t ReadWord(int reg) const { return static_cast<uint32_t>(fgr_[reg & 31]); }
  void WriteWord(int reg, uint32_t value) {
    uint64_t& r = fgr_[reg & 31];
    r = (r & 0xFFFFFFFF00000000ull) | value;
  }
  // Doubleword view. FR=1: FGR reg. FR=0: the even/odd pair containing reg (bit 0 of reg is
  // ignored, as the R4400 leaves odd specifiers undefined and QEMU ignores the bit).
  uint64_t ReadDouble(int reg) const;
  void WriteDouble(int reg, uint64_t value);

  // ---- Control registers (CFC1 / CTC1) ----
  // FCR0 and FCR31 are defined; other numbers read as 0 and ignore writes.
  uint32_t ReadControl(int reg) const;
  // Writing FCR31 stores the writable bits, then returns kFpe if a cause bit is set whose enable
  // is set, or if cause E is set (the register keeps the written value, as on the hardware).
  FpuOutcome WriteControl(int reg, uint32_t value);

  bool condition() const { return (fcsr_ & kFcsrCondition) != 0; }
  uint32_t fcsr() const { return fcsr_; }
  uint32_t fir() const { return fir_; }
  FpRounding rounding() const { return static_cast<FpRounding>(fcsr_ & kFcsrRoundingMask); }

  // ---- Computational instructions ----
  // True for COP1 instructions with a format in rs (16..31), i.e. everything Execute handles.
  static bool IsComputational(uint32_t insn) {
    return (insn >> 26) == kOpCop1 && ((insn >> 21) & 0x1F) >= 16;
  }
  // Executes one COP1 computational instruction (IsComputational(insn) must hold). On kOk the
  // destination (or the condition bit) and FCR31's cause and flag fields are updated. On kFpe only
  // FCR31's cause field changes. On kReservedInstruction nothing changes.
  FpuOutcome Execute(uint32_t insn);

  // Registers read and written by a COP1 computational instruction (any FR mode).
  static FpuRegisterUse DescribeComputational(uint32_t insn);

  // ---- Raw state, for machine-state images and checking ----
  uint64_t raw_fgr(int i) const { return fgr_[i & 31]; }
  void set_raw_fgr(int i, uint64_t value) { fgr_[i & 31] = value; }
  const std::array<uint64_t, kNumRegisters>& raw_fgrs() const { return fgr_; }
  // Sets FCR31 without raising anything (writable bits only).
  void set_fcsr(uint32_t value) { fcsr_ = value & kFcsrWritableMask; }

 private:
  std::array<uint64_t, kNumRegisters> fgr_{};
  uint32_t fcsr_ = 0;
  uint32_t fir_;
  bool fr_ = false;
};

}  // namespace citcat::mips

#endif  // CITCAT_SIMCORE_MIPS_FPU_H_
