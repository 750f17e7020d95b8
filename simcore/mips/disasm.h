// Disassembly text from Capstone, memoized: Capstone manages about 1 M instructions/s, while
// traces repeat the same few thousand (pc, word) pairs over and over.
#ifndef CITCAT_SIMCORE_MIPS_DISASM_H_
#define CITCAT_SIMCORE_MIPS_DISASM_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace citcat::mips {

class Disassembler {
 public:
  Disassembler();
  ~Disassembler();
  Disassembler(const Disassembler&) = delete;
  Disassembler& operator=(const Disassembler&) = delete;

  // "addiu $sp, $sp, -0x20"; PC-relative targets are resolved against `pc`. Words Capstone does
  // not know come out as ".word 0x........".
  const std::string& Text(uint64_t pc, uint32_t word);
  // The mnemonic alone ("addiu"), or "" if Capstone does not decode the word.
  std::string Mnemonic(uint32_t word);

  size_t cache_size() const { return cache_.size(); }

 private:
  size_t handle_ = 0;
  absl::flat_hash_map<std::pair<uint64_t, uint32_t>, std::string> cache_;
};

}  // namespace citcat::mips

#endif  // CITCAT_SIMCORE_MIPS_DISASM_H_
