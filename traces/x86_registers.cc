#include "traces/x86_registers.h"

#include <array>

#include "traces/champsim.h"

namespace citcat::traces {
namespace {

constexpr std::array<RegisterInfo, kX86Fpsw + 1> Table() {
  std::array<RegisterInfo, kX86Fpsw + 1> t{};
  // By encoding: eax ecx edx ebx esp ebp esi edi.
  t[0] = {"eax", 10};
  t[1] = {"ecx", 9};
  t[2] = {"edx", 8};
  t[3] = {"ebx", 7};
  t[4] = {"esp", champsim::kStackPointer};
  t[5] = {"ebp", 5};
  t[6] = {"esi", 4};
  t[7] = {"edi", 3};
  // By encoding: es cs ss ds fs gs.
  t[kX86Seg0 + 0] = {"es", 22};
  t[kX86Seg0 + 1] = {"cs", 19};
  t[kX86Seg0 + 2] = {"ss", 20};
  t[kX86Seg0 + 3] = {"ds", 21};
  t[kX86Seg0 + 4] = {"fs", 23};
  t[kX86Seg0 + 5] = {"gs", 24};
  t[kX86Eflags] = {"eflags", champsim::kFlags};
  constexpr const char* kSt[8] = {"st0", "st1", "st2", "st3", "st4", "st5", "st6", "st7"};
  for (int i = 0; i < 8; ++i) t[kX86St0 + i] = {kSt[i], static_cast<uint8_t>(27 + i)};
  t[kX86Fpsw] = {"fpsw", 35};
  return t;
}

constexpr std::array<RegisterInfo, kX86Fpsw + 1> kTable = Table();
constexpr RegisterSet kX86("i486", kTable, kX86Eflags, 4);

}  // namespace

const RegisterSet& X86Registers() { return kX86; }

}  // namespace citcat::traces
