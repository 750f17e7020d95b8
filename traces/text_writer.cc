// The readable text trace: one line per instruction with its disassembly, the registers it read
// and wrote, its memory accesses with their values and its branch outcome; exceptions and
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
    absl::StrAppendFormat(&buffer_, "%12d %c %016x %08x  %s", r.index, mode, r.pc, r.word,
                          r.Disassembly());
    if (r.num_read > 0) {
      buffer_ += "  r=";
      for (int i = 0; i < r.num_read; ++i) {
        if (i > 0) buffer_ += ',';
        buffer_ += RegisterName(r.read[i]);
      }
    }
    if (r.num_written > 0) {
      buffer_ += "  w=";
      for (int i = 0; i < r.num_written; ++i) {
        if (i > 0) buffer_ += ',';
        buffer_ += RegisterName(r.written[i]);
      }
    }
    for (int i = 0; i < r.num_accesses; ++i) {
      const MemoryAccess& a = r.access[i];
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
