// IDtrace-style binary cache trace (the IDtrace manual, appendix A, "Cache Trace"): 5-byte
// entries, a tag byte and a 4-byte little-endian address (docs/trace-formats.md, "idtrace").
// Instruction fetches are one CLTAG entry per 16-byte line entered, data references a RDTAG or
// WRTAG entry plus the access size code. The execution-trace variant ("idtrace-exec") marks
// basic blocks and control targets instead of cache lines.
#include "traces/writers.h"

namespace citcat::traces {
namespace {

constexpr uint8_t kReadTag = 0x10;
constexpr uint8_t kWriteTag = 0x20;
constexpr uint8_t kRepeatReadTag = 0x30;   // RRDTAG: a data read of a REP instruction
constexpr uint8_t kRepeatWriteTag = 0x40;  // RWRTAG
constexpr uint8_t kRepeatEndTag = 0x50;    // RENDTAG: after a REP instruction's last reference
constexpr uint8_t kLineTag = 0x60;
constexpr uint8_t kBlockTag = 0x70;   // BBADTAG: a basic block begins at this address
constexpr uint8_t kTargetTag = 0x90;  // TARGTAG: a control instruction went here
constexpr uint64_t kLineBytes = 16;

uint8_t SizeCode(uint8_t bytes) {
  switch (bytes) {
    case 1:
      return 0x01;
    case 2:
      return 0x02;
    case 4:
      return 0x03;
    default:
      return 0x04;  // 64 bits
  }
}

// What both variants share: 5-byte entries, a tag and the low 32 bits of the address,
// little-endian.
class EntryWriter : public BufferedWriter {
 public:
  using BufferedWriter::BufferedWriter;

 protected:
  void Entry(uint8_t tag, uint64_t address) {
    char* p = Claim(5);
    p[0] = static_cast<char>(tag);
    for (int i = 0; i < 4; ++i) p[1 + i] = static_cast<char>(address >> (8 * i));
    Commit(p + 5);
  }
  // Follows the REP runs: true if `r` continues the one before it. A run that ended gets its
  // repeat-end entry first.
  bool Repeats(const Record& r) {
    const bool open = repeats_.open();
    const bool continues = repeats_.Next(r);
    if (open && !continues) Entry(kRepeatEndTag, 0);
    return continues;
  }
  void DataEntries(const Record& r) {
    const uint8_t read = r.repeated ? kRepeatReadTag : kReadTag;
    const uint8_t write = r.repeated ? kRepeatWriteTag : kWriteTag;
    for (const MemoryAccess& a : r.accesses) {
      Entry((a.store ? write : read) + SizeCode(a.size), a.address);
    }
  }
  absl::Status Finish() override {
    if (repeats_.open()) Entry(kRepeatEndTag, 0);
    return BufferedWriter::Finish();
  }

 private:
  RepeatRun repeats_;
};

class IdtraceWriter final : public EntryWriter {
 public:
  using EntryWriter::EntryWriter;

  absl::Status Consume(const Record& r) override {
    // A new line, or a jump back into the same line (a new basic block), is a line access; so
    // is the next line for an instruction that runs into it (x86: instructions are unaligned).
    if (Repeats(r)) {  // the same instruction again: no new fetch
      DataEntries(r);
      return status();
    }
    const uint64_t line = r.pc & ~(kLineBytes - 1);
    if (!started_ || line != last_line_ || r.pc != next_pc_) Entry(kLineTag, line);
    started_ = true;
    last_line_ = (r.pc + (r.size == 0 ? 0 : r.size - 1)) & ~(kLineBytes - 1);
    if (last_line_ != line) Entry(kLineTag, last_line_);
    next_pc_ = r.next_pc;
    DataEntries(r);
    return status();
  }

 private:
  bool started_ = false;
  uint64_t last_line_ = 0, next_pc_ = 0;
};

// The execution-trace variant: basic-block entries, data references and control targets, from
// which a reader holding the program's code can rebuild the exact instruction stream.
class IdtraceExecWriter final : public EntryWriter {
 public:
  using EntryWriter::EntryWriter;

  absl::Status Consume(const Record& r) override {
    if (!Repeats(r) && (!started_ || r.pc != next_pc_)) Entry(kBlockTag, r.pc);
    started_ = true;
    next_pc_ = r.next_pc;
    DataEntries(r);
    if (r.branch != BranchKind::kNone && r.taken && !r.raised.present) Entry(kTargetTag, r.target);
    return status();
  }

 private:
  bool started_ = false;
  uint64_t next_pc_ = 0;
};

}  // namespace

std::unique_ptr<TraceSink> NewIdtraceExecWriter(std::unique_ptr<ByteOutput> out) {
  return std::make_unique<IdtraceExecWriter>(std::move(out));
}

std::unique_ptr<TraceSink> NewIdtraceWriter(std::unique_ptr<ByteOutput> out) {
  return std::make_unique<IdtraceWriter>(std::move(out));
}

}  // namespace citcat::traces
