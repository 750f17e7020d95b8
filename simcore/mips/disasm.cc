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

namespace {

// Capstone 4 prints CP0 register numbers as GPR names ("mfc0 $t0, $t4, 0"); these are the
// binutils names instead.
std::string Cp0Name(uint32_t reg) {
  static constexpr const char* kNames[32] = {
      "c0_index",    "c0_random",  "c0_entrylo0", "c0_entrylo1", "c0_context", "c0_pagemask",
      "c0_wired",    nullptr,      "c0_badvaddr", "c0_count",    "c0_entryhi", "c0_compare",
      "c0_status",   "c0_cause",   "c0_epc",      "c0_prid",     "c0_config",  "c0_lladdr",
      "c0_watchlo",  "c0_watchhi", "c0_xcontext", nullptr,       nullptr,      nullptr,
      nullptr,       nullptr,      "c0_ecc",      "c0_cacheerr", "c0_taglo",   "c0_taghi",
      "c0_errorepc", nullptr};
  return kNames[reg & 31] ? kNames[reg & 31] : absl::StrFormat("$%d", reg & 31);
}

// Capstone prints addresses as signed 64-bit numbers, so a kernel branch target in a
// sign-extended 32-bit segment would read "-0x7ffefefc"; give it the 32-bit address instead.
uint64_t CapstoneAddress(uint64_t pc) {
  bool compat = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(pc))) == pc;
  return compat ? pc & 0xFFFFFFFF : pc;
}

}  // namespace

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
  const Op op = info.op;
  if (op == Op::kMfc0 || op == Op::kMtc0 || op == Op::kDmfc0 || op == Op::kDmtc0) {
    static constexpr const char* kGpr[32] = {"zero", "at", "v0", "v1", "a0", "a1", "a2", "a3",
                                             "t0",   "t1", "t2", "t3", "t4", "t5", "t6", "t7",
                                             "s0",   "s1", "s2", "s3", "s4", "s5", "s6", "s7",
                                             "t8",   "t9", "k0", "k1", "gp", "sp", "fp", "ra"};
    text = absl::StrFormat("%s $%s, %s", OpName(op), kGpr[Rt(word)], Cp0Name(Rd(word)));
  } else if (handle_ && cs_disasm(handle_, bytes, 4, CapstoneAddress(pc), 1, &insn) == 1) {
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
