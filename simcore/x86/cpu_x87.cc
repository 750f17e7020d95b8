// The Cpu's side of the x87 (x87.h): the CR0.EM/TS/MP checks, the pending-exception check of the
// waiting instructions (#MF or the FERR# wait), and the memory operand, read before and written
// after the Fpu runs so that a fault leaves both untouched. See docs/machines/i486-fpu.md,
// "x87 instructions".
#include <algorithm>
#include <cstdint>

#include "simcore/x86/cpu.h"

namespace citcat::x86 {

bool Cpu::X87(const Instruction& in) {
  const bool wait = in.op == Op::kWait;
  // #NM: ESC with EM or TS set; WAIT only with both MP and TS (EM does not apply to WAIT).
  if (wait ? (cr0_ & (kCr0Mp | kCr0Ts)) == (kCr0Mp | kCr0Ts) : (cr0_ & (kCr0Em | kCr0Ts)) != 0) {
    Raise(kVecNoMath);
    return false;
  }
  if (!(Facts(in.op).attrs & attr::kNoWait) && fpu_.ferr()) {
    if (cr0_ & kCr0Ne) {
      Raise(kVecMathFault);
      return false;
    }
    // CR0.NE = 0: the i486 holds the instruction with FERR# asserted until IGNNE# goes active or
    // an interrupt (the machine's IRQ13 from FERR#) is taken; the step neither retires nor faults.
    if (!fpu_.ignne()) return false;
  }
  if (wait) return true;

  uint8_t mem[kFpuMaxImage] = {};
  const bool memory = in.dst == Operand::kMem;
  const int size = in.mem_size;
  const uint32_t offset = memory ? EffectiveAddress(in) : 0;
  if (memory && Fpu::ReadsMemory(in.op)) {
    for (int i = 0; i < size; i += 4) {
      uint32_t v;
      const int n = std::min(4, size - i);
      if (!ReadMem(in.seg, offset + i, n, &v, /*report=*/false)) return false;
      for (int k = 0; k < n; ++k) mem[i + k] = static_cast<uint8_t>(v >> (8 * k));
    }
    if (observer_ != nullptr) ReportX87Operand(in.seg, offset, size, false, mem);
  }
  const bool writes = memory && Fpu::WritesMemory(in.op);
  if (writes) {
    // Every page of the destination is checked before the FPU changes: a store that faults
    // leaves the FPU state and memory as they were.
    if (!CheckWritable(in.seg, offset, size)) return false;
  }
  Fpu::Where where;
  where.cs = seg_[kCs].selector;
  where.ip = eip_;
  where.ds = seg_[in.seg == kNoSeg ? int{kDs} : int{in.seg}].selector;
  where.dp = offset;
  where.real = real_mode() || (eflags_ & flag::kVM);
  const Fpu::Outcome out = fpu_.Execute(in, where, mem);
  if (out.unmodelled) {
    Unmodelled();
    return false;
  }
  if (out.write_ax) WriteReg(kEax, 2, out.ax);
  if (writes && out.write_memory) {
    for (int i = 0; i < size; i += 4) {
      const int n = std::min(4, size - i);
      uint32_t v = 0;
      for (int k = n - 1; k >= 0; --k) v = v << 8 | mem[i + k];
      if (!WriteMem(in.seg, offset + i, n, v, /*report=*/false)) return false;
    }
    if (observer_ != nullptr) ReportX87Operand(in.seg, offset, size, true, mem);
  }
  return true;
}

// The operand moves in doublewords (and a last word); a trace shows it in quadwords, then the
// doubleword and word left over.
void Cpu::ReportX87Operand(int seg, uint32_t offset, int size, bool write, const uint8_t* bytes) {
  for (int i = 0; i < size;) {
    const int n = size - i >= 8 ? 8 : size - i >= 4 ? 4 : size - i;
    uint64_t v = 0;
    for (int k = n - 1; k >= 0; --k) v = v << 8 | bytes[i + k];
    observer_->OnAccess(Linear(seg, offset + i), n, write, v);
    i += n;
  }
}

}  // namespace citcat::x86
