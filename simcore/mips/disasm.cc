#include "simcore/mips/disasm.h"

#include <capstone/capstone.h>

#include "absl/strings/str_format.h"
#include "simcore/mips/decoder.h"

namespace citcat::mips {

Disassembler::Disassembler() {
  // Capstone 4 decodes MIPS III only in this mode (CS_MODE_MIPS3 alone decodes nothing). The
  // word is always handed over big-endian; the guest's byte order does not matter here.
  csh h = 0;
  if (cs_open(CS_ARCH_MIPS, static_cast<cs_mode>(CS_MODE_MIPS64 | CS_MODE_BIG_ENDIAN), &h) ==
      CS_ERR_OK) {
    handle_ = h;
  }
}

Disassembler::~Disassembler() {
  if (handle_) {
    csh h = handle_;
    cs_close(&h);
  }
}

const std::string& Disassembler::Text(uint64_t pc, uint32_t word) {
  // Only PC-relative instructions depend on the address; key the rest by word alone.
  const InstructionInfo info = Describe(word);
  const bool pc_relative = info.flow == Flow::kBranch || info.flow == Flow::kJump;
  const auto key = std::make_pair(pc_relative ? pc : ~uint64_t{0}, word);
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  std::string text;
  const uint8_t bytes[4] = {static_cast<uint8_t>(word >> 24), static_cast<uint8_t>(word >> 16),
                            static_cast<uint8_t>(word >> 8), static_cast<uint8_t>(word)};
  cs_insn* insn = nullptr;
  if (handle_ && cs_disasm(handle_, bytes, 4, pc, 1, &insn) == 1) {
    text = insn[0].op_str[0] ? absl::StrFormat("%s %s", insn[0].mnemonic, insn[0].op_str)
                             : std::string(insn[0].mnemonic);
  } else {
    text = absl::StrFormat(".word 0x%08x", word);
  }
  if (insn) cs_free(insn, 1);
  return cache_.emplace(key, std::move(text)).first->second;
}

std::string Disassembler::Mnemonic(uint32_t word) {
  const std::string& t = Text(0, word);
  if (t.starts_with(".word")) return "";
  return t.substr(0, t.find(' '));
}

}  // namespace citcat::mips
