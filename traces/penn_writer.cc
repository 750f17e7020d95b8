// The Penn instruction trace format (Milo Martin's CIS 501 traces): one line of 14
// whitespace-separated fields per micro-operation (docs/trace-formats.md, "penn"). An
// instruction is one operation, except that each further destination register (MULT writes HI
// and LO) becomes another micro-op, as the format's one Dest field requires.
#include <cctype>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_format.h"
#include "traces/writers.h"

namespace citcat::traces {
namespace {

const char* MicroOp(const Record& r) {
  switch (r.branch) {
    case BranchKind::kNone:
      break;
    case BranchKind::kConditional:
      return "BRANCH";
    case BranchKind::kDirectJump:
      return "JMP_IMM";
    case BranchKind::kIndirectJump:
      return "JMP_REG";
    case BranchKind::kDirectCall:
    case BranchKind::kConditionalCall:
      return "CALL_IMM";
    case BranchKind::kIndirectCall:
      return "CALL_REG";
    case BranchKind::kReturn:
      return "RET";
    case BranchKind::kExceptionReturn:
      return "ERET";
  }
  if (!r.accesses.empty()) return r.accesses[0].store ? "STORE" : "LOAD";
  return "ALU";
}

class PennWriter final : public BufferedWriter {
 public:
  using BufferedWriter::BufferedWriter;

  absl::Status Consume(const Record& r) override {
    // Registers other than the condition flags (which are the Flags field).
    const uint16_t flags_reg = r.registers->flags();
    int src[2] = {-1, -1};
    absl::InlinedVector<int, Record::kInlineRegisters> dst;
    int nsrc = 0;
    char flags = '-';
    for (uint16_t reg : r.read) {
      if (reg == flags_reg) {
        flags = 'R';
      } else if (nsrc < 2) {
        src[nsrc++] = reg;
      }
    }
    for (uint16_t reg : r.written) {
      if (reg == flags_reg) {
        flags = 'W';
      } else {
        dst.push_back(reg);
      }
    }
    const int ndst = static_cast<int>(dst.size());
    const char branch = r.branch == BranchKind::kNone ? '-' : r.taken ? 'T' : 'N';
    const char ldst = r.accesses.empty() ? '-' : r.accesses[0].store ? 'S' : 'L';
    const uint64_t address = r.accesses.empty() ? 0 : r.accesses[0].address;
    const uint64_t target = r.branch == BranchKind::kNone ? 0 : r.target;
    absl::string_view name = r.mnemonic;
    if (name == "cop1arith") {
      // The decoder groups FP arithmetic; the disassembly names it ("add.d").
      absl::string_view text = r.Disassembly();
      if (!text.empty()) name = text.substr(0, text.find(' '));
    }
    std::string macro(name.data(), name.size());
    for (char& c : macro) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const char* micro = MicroOp(r);
    const int uops = ndst > 1 ? ndst : 1;
    for (int u = 0; u < uops; ++u) {
      absl::StrAppendFormat(&buffer_, "%d %x %d %d %d %c %c %c %d %x %x %x %s %s\n", u + 1, r.pc,
                            src[0], src[1], ndst == 0 ? -1 : dst[u], flags, branch, ldst,
                            r.immediate, address, r.fallthrough, target, macro, micro);
    }
    return MaybeFlush();
  }
};

}  // namespace

std::unique_ptr<TraceSink> NewPennWriter(std::unique_ptr<ByteOutput> out) {
  return std::make_unique<PennWriter>(std::move(out));
}

}  // namespace citcat::traces
