// The MIPS register numbering of trace records (docs/trace-formats.md, "Registers"): integer
// registers 0..31, HI and LO 32 and 33, FP registers 64..95 and the FP condition bit (the MIPS
// stand-in for condition flags) 96.
#ifndef CITCAT_TRACES_MIPS_REGISTERS_H_
#define CITCAT_TRACES_MIPS_REGISTERS_H_

#include <cstdint>

#include "traces/registers.h"

namespace citcat::traces {

inline constexpr uint16_t kMipsHi = 32;
inline constexpr uint16_t kMipsLo = 33;
inline constexpr uint16_t kMipsFpr0 = 64;
inline constexpr uint16_t kMipsFcc = 96;

// ABI names ("a0", "hi", "f12", "fcc"); ChampSim numbers `$n` + 32, HI 64, LO 65, `$fn` 66 + n,
// and the condition bit as ChampSim's flags register.
const RegisterSet& MipsRegisters();

}  // namespace citcat::traces

#endif  // CITCAT_TRACES_MIPS_REGISTERS_H_
