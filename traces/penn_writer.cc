// The Penn instruction trace format (Milo Martin's CIS 501 traces): one line of 14
// whitespace-separated fields per micro-operation (docs/trace-formats.md, "penn"). An
// instruction is one operation, except that each further destination register (MULT writes HI
// and LO) becomes another micro-op, as the format's one Dest field requires.
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "traces/form_cache.h"
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
    case BranchKind::kSoftwareInterrupt:
      return "TRAP";
  }
  if (!r.accesses.empty()) return r.accesses[0].store ? "STORE" : "LOAD";
  return "ALU";
}

// What the lines take from the record's static part, in the pieces between the fields that
// change: "HEAD" B " " L "IMMEDIATE" ADDRESS "FALLTHROUGH" TARGET "MACRO" MICRO, B the branch
// outcome, L load or store.
struct PennTemplate {
  std::vector<Piece> heads;  // per micro-op: "N PC SRC1 SRC2 DEST FLAGS "
  Piece immediate;           // " IMMEDIATE "
  Piece fallthrough;         // " FALLTHROUGH "
  Piece macro;               // " MACRO "
};

PennTemplate Template(const Record& r) {
  // Registers other than the condition flags (which are the Flags field).
  const uint16_t flags_reg = r.registers->flags();
  int src[2] = {-1, -1};
  std::vector<int> dst;
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
  if (dst.empty()) dst.push_back(-1);
  absl::string_view name = r.mnemonic;
  if (name == "cop1arith") {
    // The decoder groups FP arithmetic; the disassembly names it ("add.d").
    absl::string_view text = r.Disassembly();
    if (!text.empty()) name = text.substr(0, text.find(' '));
  }
  PennTemplate t;
  for (size_t u = 0; u < dst.size(); ++u) {
    t.heads.emplace_back(
        absl::StrFormat("%d %x %d %d %d %c ", u + 1, r.pc, src[0], src[1], dst[u], flags));
  }
  t.immediate = Piece(absl::StrFormat(" %d ", r.immediate));
  t.fallthrough = Piece(absl::StrFormat(" %x ", r.fallthrough));
  t.macro = Piece(absl::StrCat(" ", absl::AsciiStrToUpper(name), " "));
  return t;
}

class PennWriter final : public BufferedWriter {
 public:
  using BufferedWriter::BufferedWriter;

  absl::Status Consume(const Record& r) override {
    const PennTemplate& t = templates_.Get(r, Template);
    const bool branch = r.branch != BranchKind::kNone;
    const char outcome = !branch ? '-' : r.taken ? 'T' : 'N';
    const char ldst = r.accesses.empty() ? '-' : r.accesses[0].store ? 'S' : 'L';
    const uint64_t address = r.accesses.empty() ? 0 : r.accesses[0].address;
    const uint64_t target = branch ? r.target : 0;
    const absl::string_view micro = MicroOp(r);
    const size_t tail = 4 + t.immediate.size() + 16 + t.fallthrough.size() + 16 + t.macro.size() +
                        micro.size() + 1 + 4 * Piece::kSlack;
    for (const Piece& head : t.heads) {
      char* p = Put(Claim(head.size() + tail), head);
      *p++ = outcome;
      *p++ = ' ';
      *p++ = ldst;
      p = Put(p, t.immediate);
      p = PutHex(p, address);
      p = Put(p, t.fallthrough);
      p = PutHex(p, target);
      p = Put(p, t.macro);
      p = Put(p, micro);
      *p++ = '\n';
      Commit(p);
    }
    return status();
  }

 private:
  FormCache<PennTemplate> templates_;
};

}  // namespace

std::unique_ptr<TraceSink> NewPennWriter(std::unique_ptr<ByteOutput> out) {
  return std::make_unique<PennWriter>(std::move(out));
}

}  // namespace citcat::traces
