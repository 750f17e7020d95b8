// The i486's on-chip x87 as an instruction layer: the register stack (ST(0..7) over eight physical
// registers with TOP and the tag word), the control and status words, the instruction and data
// pointers, and the semantics of every ESC instruction, built on the arithmetic in fpu/.
//
// Invariants:
// - The Fpu touches no memory and knows no CPU mode: the Cpu reads an instruction's memory operand
//   into a buffer before Execute and writes the buffer back after it when Outcome says so, so a
//   fault on the operand leaves the FPU untouched (the i486's FPU faults are restartable too).
// - #NM, #MF and the FERR# wait are the Cpu's decisions (cpu_x87.cc); the Fpu only says whether an
//   unmasked exception is pending (ferr()).
// - Exact on any host: no host floating point anywhere.
#ifndef CITCAT_SIMCORE_X86_X87_H_
#define CITCAT_SIMCORE_X86_X87_H_

#include <array>
#include <cstdint>

#include "simcore/x86/decoder.h"
#include "simcore/x86/fpu/float80.h"

namespace citcat::x86 {

// Status-word bits beyond the exception flags and condition codes (fpu/float80.h).
inline constexpr uint16_t kSwStackFault = 1 << 6;    // SF
inline constexpr uint16_t kSwErrorSummary = 1 << 7;  // ES
inline constexpr uint16_t kSwBusy = 1 << 15;         // B: a copy of ES on the 387 and i486

// The largest memory image an x87 instruction reads or writes: FSAVE/FRSTOR with 32-bit operands.
inline constexpr int kFpuMaxImage = 108;

// Everything an FSAVE image holds, for a machine state captured or restored from outside (an
// initial machine state, a checkpoint). `sw` carries TOP; of `tw` only empty (11) versus not
// counts, as for FRSTOR.
struct FpuState {
  std::array<Float80, 8> physical{};  // R0..R7
  uint16_t cw = 0, sw = 0, tw = 0;
  uint16_t fcs = 0, fds = 0, opcode = 0;
  uint32_t fip = 0, fdp = 0;
};

class Fpu {
 public:
  // Where the instruction is, as the FPU records it for FSTENV/FSAVE.
  struct Where {
    uint16_t cs = 0;
    uint32_t ip = 0;   // offset of the instruction (its first prefix) in CS
    uint16_t ds = 0;   // selector of the memory operand's segment
    uint32_t dp = 0;   // offset of the memory operand
    bool real = true;  // real or virtual-8086 mode: environment images in the real-mode layout
  };
  struct Outcome {
    bool write_memory = false;  // store the operand buffer (mem_size bytes)
    bool write_ax = false;      // FNSTSW AX
    uint16_t ax = 0;
    bool unmodelled = false;  // a result the i486 leaves undefined (F2XM1 with |x| > 1, ...)
  };

  Fpu() { Reset(); }
  // The state after RESET: CW 0040h (every exception unmasked, 24-bit precision), SW 0, TW 5555h
  // (every register valid and +0), pointers 0.
  void Reset();
  // FNINIT: CW 037Fh, SW 0, TW FFFFh (all empty), pointers and opcode 0; registers kept.
  void Init();

  // Whether the instruction reads or writes its memory operand (memory forms only).
  static bool ReadsMemory(Op op);
  static bool WritesMemory(Op op);

  // Executes one ESC instruction (not WAIT). `mem` holds in.mem_size bytes: the operand as read
  // from memory for a reading form, the bytes to store for a writing one.
  Outcome Execute(const Instruction& in, const Where& where, uint8_t* mem);

  // An unmasked exception is pending (status word ES): the i486 asserts FERR#, and the next
  // waiting x87 instruction raises #MF (CR0.NE = 1) or waits (CR0.NE = 0) unless IGNNE# is active.
  bool ferr() const { return (sw_ & kExAll & ~cw_) != 0; }
  // The IGNNE# input (the machine's, e.g. driven by a write to port F0h on a PC).
  bool ignne() const { return ignne_; }
  void set_ignne(bool on) { ignne_ = on; }

  // ---- state ----
  Float80 st(int i) const { return regs_[Physical(i)]; }
  bool st_empty(int i) const { return empty_ & (1u << Physical(i)); }
  Float80 physical_register(int r) const { return regs_[r]; }
  int top() const { return top_; }
  uint16_t control_word() const { return cw_; }
  uint16_t status_word() const;
  // Loads the status word as FLDENV does (ES and B are derived, so they are ignored): for oracles
  // that adopt a documented difference.
  void set_status_word(uint16_t sw);
  FpuState state() const;
  void set_state(const FpuState& s);
  // Two bits per physical register: 00 valid, 01 zero, 10 special (NaN, infinity, denormal,
  // unsupported), 11 empty; derived from the contents of the non-empty registers.
  uint16_t tag_word() const;
  uint16_t fcs() const { return fcs_; }
  uint32_t fip() const { return fip_; }
  uint16_t fds() const { return fds_; }
  uint32_t fdp() const { return fdp_; }
  uint16_t opcode() const { return fop_; }  // 11 bits: ESC's low three bits, then ModRM

 private:
  int Physical(int i) const { return (top_ + i) & 7; }
  bool Empty(int i) const { return st_empty(i); }
  void Set(int i, Float80 v) {
    regs_[Physical(i)] = v;
    empty_ &= ~(1u << Physical(i));
  }
  void Push(Float80 v) {
    top_ = (top_ - 1) & 7;
    Set(0, v);
  }
  void Pop() {
    empty_ |= 1u << top_;
    top_ = (top_ + 1) & 7;
  }
  bool Masked(uint16_t flag) const { return (cw_ & flag) != 0; }
  // ORs flags into the status word and sets C1; returns whether a result is delivered.
  void Flag(uint16_t flags, bool c1);
  void SetEmptyFromTags(uint16_t tw);
  void SetCodes(uint16_t codes) { sw_ = (sw_ & ~(kSwC0 | kSwC2 | kSwC3)) | codes; }
  // Stack faults: IE with SF; C1 says overflow. Return whether the masked response applies.
  bool StackUnderflow();
  bool StackOverflow();
  // Pushes v unless ST(7) is occupied (then the stack-overflow response).
  void PushChecked(Float80 v, uint16_t flags = 0, bool deliver = true);

  void Arith(const Instruction& in, const uint8_t* mem);
  void Compare(const Instruction& in, const uint8_t* mem);
  void Unary(Op op);
  Outcome Store(const Instruction& in, uint8_t* mem);
  bool Transcendental(Op op);
  void Load(const Instruction& in, const uint8_t* mem);
  void StoreEnvironment(const Instruction& in, bool real, uint8_t* mem) const;
  void LoadEnvironment(const Instruction& in, bool real, const uint8_t* mem);

  std::array<Float80, 8> regs_{};
  uint8_t empty_ = 0;  // bit per physical register
  int top_ = 0;
  uint16_t cw_ = 0;
  uint16_t sw_ = 0;  // condition codes, SF and the exception flags; TOP, ES and B are derived
  uint16_t fcs_ = 0, fds_ = 0, fop_ = 0;
  uint32_t fip_ = 0, fdp_ = 0;
  bool ignne_ = false;
};

}  // namespace citcat::x86

#endif  // CITCAT_SIMCORE_X86_X87_H_
