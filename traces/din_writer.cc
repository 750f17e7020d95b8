// Dinero IV's `din` input: one "LABEL ADDRESS" line per memory reference, the label 0 for a data
// read, 1 for a data write and 2 for an instruction fetch, the address in hexadecimal
// (docs/trace-formats.md, "din"). Each instruction is its fetch, then its data references.
#include "absl/strings/str_format.h"
#include "traces/writers.h"

namespace citcat::traces {
namespace {

class DinWriter final : public BufferedWriter {
 public:
  using BufferedWriter::BufferedWriter;

  absl::Status Consume(const Record& r) override {
    absl::StrAppendFormat(&buffer_, "2 %x\n", r.pc);
    for (const MemoryAccess& a : r.accesses) {
      absl::StrAppendFormat(&buffer_, "%d %x\n", a.store ? 1 : 0, a.address);
    }
    return MaybeFlush();
  }
};

}  // namespace

std::unique_ptr<TraceSink> NewDinWriter(std::unique_ptr<ByteOutput> out) {
  return std::make_unique<DinWriter>(std::move(out));
}

}  // namespace citcat::traces
