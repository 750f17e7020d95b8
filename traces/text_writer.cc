// The readable text trace: one line per instruction with its bytes, its disassembly, the registers
// it read and wrote, its memory accesses with their values and its branch outcome; exceptions and
// interrupts on lines of their own (docs/trace-formats.md, "text").
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "traces/writers.h"

namespace citcat::traces {
namespace {

class TextWriter final : public BufferedWriter {
 public:
  using BufferedWriter::BufferedWriter;

  absl::Status Consume(const Record& r) override {
    if (r.taken_before.present) AppendEvent("taken", r.taken_before);
    const char mode = r.mode == Mode::kUser ? 'u' : r.mode == Mode::kSupervisor ? 's' : 'k';
    absl::StrAppendFormat(&buffer_, "%12d %c %016x ", r.index, mode, r.pc);
    for (uint8_t b : r.Bytes()) {
      buffer_ += kHex[b >> 4];
      buffer_ += kHex[b & 15];
    }
    buffer_ += "  ";
    const absl::string_view text = r.Disassembly();
    buffer_.append(text.data(), text.size());
    AppendRegisters("  r=", r.read, *r.registers);
    AppendRegisters("  w=", r.written, *r.registers);
    for (const MemoryAccess& a : r.accesses) {
      absl::StrAppendFormat(&buffer_, "  %s%d[%x]=", a.store ? "st" : "ld", a.size, a.address);
      if (a.value_known) {
        absl::StrAppendFormat(&buffer_, "%0*x", 2 * a.size, a.value);
      } else {
        buffer_ += '?';
      }
    }
    if (r.branch != BranchKind::kNone) {
      absl::StrAppendFormat(&buffer_, "  %s=%s:%x", BranchKindName(r.branch), r.taken ? "T" : "N",
                            r.target);
    }
    buffer_ += '\n';
    if (r.raised.present) AppendEvent("raised", r.raised);
    return MaybeFlush();
  }

 private:
  static constexpr char kHex[] = "0123456789abcdef";

  void AppendRegisters(const char* label, const Record::Registers& regs, const RegisterSet& set) {
    if (regs.empty()) return;
    buffer_ += label;
    for (size_t i = 0; i < regs.size(); ++i) {
      if (i > 0) buffer_ += ',';
      const absl::string_view name = set.Name(regs[i]);
      if (name.empty()) {
        absl::StrAppend(&buffer_, "r", regs[i]);
      } else {
        buffer_.append(name.data(), name.size());
      }
    }
  }

  void AppendEvent(const char* how, const Event& e) {
    absl::StrAppendFormat(&buffer_, "%12s ! %s %s (code %d) at %016x\n", "", e.name, how, e.code,
                          e.pc);
  }
};

}  // namespace

std::unique_ptr<TraceSink> NewTextWriter(std::unique_ptr<ByteOutput> out) {
  return std::make_unique<TextWriter>(std::move(out));
}

}  // namespace citcat::traces
