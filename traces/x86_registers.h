// The i486 register numbering of trace records (docs/trace-formats.md, "Registers"): general
// registers 0..7 in their encoding order (eax ecx edx ebx esp ebp esi edi), segment registers
// 8..13 (es cs ss ds fs gs), EFLAGS 14, the x87 stack ST(0)..ST(7) 16..23 relative to the top
// as the instruction names them, and the x87 status word 24.
#ifndef CITCAT_TRACES_X86_REGISTERS_H_
#define CITCAT_TRACES_X86_REGISTERS_H_

#include <cstdint>

#include "simcore/x86/decoder.h"
#include "traces/registers.h"

namespace citcat::traces {

// The core's own numbers (simcore/x86/decoder.h), which it tells an observer.
inline constexpr uint16_t kX86Seg0 = x86::kRegSeg0;
inline constexpr uint16_t kX86Eflags = x86::kRegEflags;
inline constexpr uint16_t kX86St0 = x86::kRegSt0;
inline constexpr uint16_t kX86Fpsw = x86::kRegFpsw;

// Intel names ("eax", "ss", "eflags", "st0", "fpsw"). ChampSim numbers: Pin's, which ChampSim's
// own x86 traces carry (edi 3, esi 4, ebp 5, esp 6, ebx 7, edx 8, ecx 9, eax 10; cs 19, ss 20,
// ds 21, es 22, fs 23, gs 24; eflags 25), and numbers of our own for the x87 (27..35).
const RegisterSet& X86Registers();

}  // namespace citcat::traces

#endif  // CITCAT_TRACES_X86_REGISTERS_H_
