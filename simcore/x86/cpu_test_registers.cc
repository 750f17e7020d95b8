// MOV to and from the test registers TR3-TR7 (the model is test_registers.h).
#include "simcore/x86/cpu.h"

namespace citcat::x86 {

// Privileged as the control and debug registers are: CPL 0 in protected mode, any time in real
// mode, never in V86 mode (#GP(0), before anything changes). DR7.GD does not guard them. The
// operand is always a 32-bit general register (the decoder ignores mod and 66h). A write that
// changes a TLB entry changes the TLB's epoch and one that changes a cache line its generation,
// so the fetch shortcuts and the predecoded instructions see it at the next fetch.
bool Cpu::MoveTestRegister(const Instruction& in) {
  if (!real_mode() && (cpl_ != 0 || v86())) {
    Raise(kVecGeneralProtection, 0);
    return false;
  }
  if (in.dst == Operand::kTreg) {
    WriteTestRegister(test_registers_, in.reg, gpr_[in.rm], cache_, paging_.tlb());
  } else {
    gpr_[in.rm] = ReadTestRegister(test_registers_, in.reg);
  }
  return true;
}

}  // namespace citcat::x86
