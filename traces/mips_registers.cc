#include "traces/mips_registers.h"

#include <array>

#include "traces/champsim.h"

namespace citcat::traces {
namespace {

constexpr const char* kGpr[32] = {"zero", "at", "v0", "v1", "a0", "a1", "a2", "a3",
                                  "t0",   "t1", "t2", "t3", "t4", "t5", "t6", "t7",
                                  "s0",   "s1", "s2", "s3", "s4", "s5", "s6", "s7",
                                  "t8",   "t9", "k0", "k1", "gp", "sp", "fp", "ra"};
constexpr const char* kFpr[32] = {"f0",  "f1",  "f2",  "f3",  "f4",  "f5",  "f6",  "f7",
                                  "f8",  "f9",  "f10", "f11", "f12", "f13", "f14", "f15",
                                  "f16", "f17", "f18", "f19", "f20", "f21", "f22", "f23",
                                  "f24", "f25", "f26", "f27", "f28", "f29", "f30", "f31"};

// ChampSim numbers keep the flat numbers' order, moved clear of ChampSim's special registers
// (6, 25, 26) and of 0.
constexpr std::array<RegisterInfo, kMipsFcc + 1> Table() {
  std::array<RegisterInfo, kMipsFcc + 1> t{};
  for (int i = 0; i < 32; ++i) {
    t[i] = {kGpr[i], static_cast<uint8_t>(i + 32)};
    t[kMipsFpr0 + i] = {kFpr[i], static_cast<uint8_t>(i + 66)};
  }
  t[kMipsHi] = {"hi", 64};
  t[kMipsLo] = {"lo", 65};
  t[kMipsFcc] = {"fcc", champsim::kFlags};
  return t;
}

constexpr std::array<RegisterInfo, kMipsFcc + 1> kTable = Table();
constexpr RegisterSet kMips("mips", kTable, kMipsFcc);

}  // namespace

const RegisterSet& MipsRegisters() { return kMips; }

}  // namespace citcat::traces
