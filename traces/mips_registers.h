// The MIPS register numbering of trace records (docs/trace-formats.md, "Registers"): integer
// registers 0..31, HI and LO 32 and 33, FP registers 64..95 and the FP condition bit (the MIPS
// stand-in for condition flags) 96.
#ifndef CITCAT_TRACES_MIPS_REGISTERS_H_
#define CITCAT_TRACES_MIPS_REGISTERS_H_

#include <cstdint>

#include "simcore/mips/decoder.h"
#include "traces/registers.h"

namespace citcat::traces {

// The core's own numbers (simcore/mips/decoder.h), which it tells an observer.
inline constexpr uint16_t kMipsHi = mips::kRegHi;
inline constexpr uint16_t kMipsLo = mips::kRegLo;
inline constexpr uint16_t kMipsFpr0 = mips::kRegFpr0;
inline constexpr uint16_t kMipsFcc = mips::kRegFcc;

// ABI names ("a0", "hi", "f12", "fcc"); ChampSim numbers `$n` + 32, HI 64, LO 65, `$fn` 66 + n,
// and the condition bit as ChampSim's flags register.
const RegisterSet& MipsRegisters();

}  // namespace citcat::traces

#endif  // CITCAT_TRACES_MIPS_REGISTERS_H_
