#include "simcore/x86/disasm.h"

#include <capstone/capstone.h>

namespace citcat::x86 {

Disassembler::Disassembler() {
  csh h;
  if (cs_open(CS_ARCH_X86, CS_MODE_32, &h) == CS_ERR_OK) handle32_ = h;
  if (cs_open(CS_ARCH_X86, CS_MODE_16, &h) == CS_ERR_OK) handle16_ = h;
}

Disassembler::~Disassembler() {
  for (size_t handle : {handle32_, handle16_}) {
    csh h = handle;
    if (h != 0) cs_close(&h);
  }
}

const std::string& Disassembler::Text(uint32_t eip, std::span<const uint8_t> bytes, bool code32) {
  auto key = std::make_tuple(eip, std::string(bytes.begin(), bytes.end()), code32);
  auto [it, inserted] = cache_.try_emplace(std::move(key));
  if (!inserted) return it->second;
  const size_t handle = code32 ? handle32_ : handle16_;
  cs_insn* insn = nullptr;
  if (handle != 0 && cs_disasm(handle, bytes.data(), bytes.size(), eip, 1, &insn) == 1) {
    it->second = insn->op_str[0] != '\0' ? std::string(insn->mnemonic) + " " + insn->op_str
                                         : std::string(insn->mnemonic);
    cs_free(insn, 1);
  } else {
    it->second = "(bad)";
  }
  return it->second;
}

}  // namespace citcat::x86
