// Disassembly text of i486 code from Capstone (Intel syntax), memoized: traces repeat the same
// few thousand instructions over and over, and Capstone manages about 1 M instructions/s.
#ifndef CITCAT_SIMCORE_X86_DISASM_H_
#define CITCAT_SIMCORE_X86_DISASM_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <tuple>

#include "absl/container/flat_hash_map.h"

namespace citcat::x86 {

class Disassembler {
 public:
  Disassembler();
  ~Disassembler();
  Disassembler(const Disassembler&) = delete;
  Disassembler& operator=(const Disassembler&) = delete;

  // "add eax, dword ptr [ebx + 4]" for the instruction `bytes` at `eip` in 32-bit code (`code32`)
  // or 16-bit code; relative targets are resolved against `eip`. Bytes Capstone does not decode
  // come out as "(bad)".
  const std::string& Text(uint32_t eip, std::span<const uint8_t> bytes, bool code32);

 private:
  size_t handle32_ = 0, handle16_ = 0;
  absl::flat_hash_map<std::tuple<uint32_t, std::string, bool>, std::string> cache_;
};

}  // namespace citcat::x86

#endif  // CITCAT_SIMCORE_X86_DISASM_H_
