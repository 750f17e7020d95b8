// The readable text trace: one line per instruction with its bytes, its disassembly, the registers
// it read and wrote, its memory accesses with their values and its branch outcome; exceptions and
// interrupts on lines of their own (docs/trace-formats.md, "text"). text-values adds the values of
// the registers written.
#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "traces/form_cache.h"
#include "traces/writers.h"

namespace citcat::traces {
namespace {

// What a line takes from the record's static part: from the PC to the registers written, and
// the branch kind's label.
struct TextTemplate {
  Piece middle;  // "PC BYTES  DISASSEMBLY[  r=REGS][  w=REGS]"
  Piece branch;  // "  KIND=", or empty for no branch
};

void AppendRegisters(std::string& out, const char* label, const Record::Registers& regs,
                     const RegisterSet& set) {
  if (regs.empty()) return;
  out += label;
  for (size_t i = 0; i < regs.size(); ++i) {
    if (i > 0) out += ',';
    const absl::string_view name = set.Name(regs[i]);
    if (name.empty()) {
      absl::StrAppend(&out, "r", regs[i]);
    } else {
      out.append(name.data(), name.size());
    }
  }
}

TextTemplate Template(const Record& r) {
  std::string middle;
  char pc[16];
  middle.append(pc, PutHexFixed(pc, r.pc, 16));
  middle += ' ';
  for (uint8_t b : r.Bytes()) {
    middle += kHexDigits[b >> 4];
    middle += kHexDigits[b & 15];
  }
  middle += "  ";
  const absl::string_view text = r.Disassembly();
  middle.append(text.data(), text.size());
  AppendRegisters(middle, "  r=", r.read, *r.registers);
  AppendRegisters(middle, "  w=", r.written, *r.registers);
  TextTemplate t;
  t.middle = Piece(middle);
  if (r.branch != BranchKind::kNone)
    t.branch = Piece(absl::StrCat("  ", BranchKindName(r.branch), "="));
  return t;
}

// "  ld4[ADDRESS]=VALUE": the value as 2 x size hex digits or more, "?" when not known.
char* PutAccess(char* p, const MemoryAccess& a) {
  p = Put(p, a.store ? "  st" : "  ld");
  p = PutDecimal(p, a.size);
  *p++ = '[';
  p = PutHex(p, a.address);
  p = Put(p, "]=");
  if (!a.value_known) {
    *p++ = '?';
    return p;
  }
  return PutHexPadded(p, a.value, 2 * a.size);
}

// "  NAME=VALUE": the value as 2 x the machine's register bytes hex digits, or more if it needs
// them.
size_t ValueSize(const RegisterValue& v, const RegisterSet& set) {
  const absl::string_view name = set.Name(v.reg);
  return 2 + (name.empty() ? 6 : name.size()) + 1 +  // "  " name (or "r65535") "="
         std::max<size_t>(16, 2 * size_t{set.value_bytes()});
}
char* PutValue(char* p, const RegisterValue& v, const RegisterSet& set) {
  *p++ = ' ';
  *p++ = ' ';
  const absl::string_view name = set.Name(v.reg);
  if (name.empty()) {
    *p++ = 'r';
    p = PutDecimal(p, v.reg);
  } else {
    p = Put(p, name);
  }
  *p++ = '=';
  return PutHexPadded(p, v.value, 2 * set.value_bytes());
}

class TextWriter final : public BufferedWriter {
 public:
  TextWriter(std::unique_ptr<ByteOutput> out, bool values)
      : BufferedWriter(std::move(out)), values_(values) {}

  bool WantsRegisterValues() const override { return values_; }

  absl::Status Consume(const Record& r) override {
    if (r.taken_before.present) AppendEvent("taken", r.taken_before);
    const TextTemplate& t = templates_.Get(r, Template);
    // The longest access: "  st" 255 "[" 16 digits "]=" 2 x 255 digits.
    constexpr size_t kAccess = 4 + 3 + 1 + 16 + 2 + 2 * 255;
    constexpr size_t kFixed = 20 + 3 + 3 + 16 + 1 + 2 * Piece::kSlack;
    const size_t values = values_ ? r.values.size() : 0;
    size_t value_room = 0;
    for (size_t i = 0; i < values; ++i) value_room += ValueSize(r.values[i], *r.registers);
    char* p = Claim(kFixed + t.middle.size() + t.branch.size() + kAccess * r.accesses.size() +
                    value_room);
    p = PutDecimalRight(p, r.index, 12);
    *p++ = ' ';
    *p++ = r.mode == Mode::kUser ? 'u' : r.mode == Mode::kSupervisor ? 's' : 'k';
    *p++ = ' ';
    p = Put(p, t.middle);
    for (const MemoryAccess& a : r.accesses) p = PutAccess(p, a);
    for (size_t i = 0; i < values; ++i) p = PutValue(p, r.values[i], *r.registers);
    if (!t.branch.empty()) {
      p = Put(p, t.branch);
      *p++ = r.taken ? 'T' : 'N';
      *p++ = ':';
      p = PutHex(p, r.target);
    }
    *p++ = '\n';
    Commit(p);
    if (r.raised.present) AppendEvent("raised", r.raised);
    return status();
  }

 private:
  void AppendEvent(const char* how, const Event& e) {
    Append(absl::StrFormat("%12s ! %s %s (code %d) at %016x\n", "", e.name, how, e.code, e.pc));
  }

  const bool values_;
  FormCache<TextTemplate> templates_;
};

}  // namespace

std::unique_ptr<TraceSink> NewTextWriter(std::unique_ptr<ByteOutput> out, bool values) {
  return std::make_unique<TextWriter>(std::move(out), values);
}

}  // namespace citcat::traces
