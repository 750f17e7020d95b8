// Dinero IV's `din` input: one "LABEL ADDRESS" line per memory reference, the label 0 for a data
// read, 1 for a data write and 2 for an instruction fetch, the address in hexadecimal
// (docs/trace-formats.md, "din"). Each instruction is its fetch, then its data references; a
// REP instruction is fetched once, before its first iteration's references.
#include "traces/form_cache.h"
#include "traces/writers.h"

namespace citcat::traces {
namespace {

// The fetch line, the same for every execution of a form.
Piece FetchLine(const Record& r) {
  char line[32];
  char* p = PutHex(Put(line, "2 "), r.pc);
  *p++ = '\n';
  return Piece(absl::string_view(line, p - line));
}

class DinWriter final : public BufferedWriter {
 public:
  using BufferedWriter::BufferedWriter;

  absl::Status Consume(const Record& r) override {
    constexpr size_t kAccessLine = 2 + 16 + 1;
    const bool continues = repeats_.Next(r);
    const Piece& fetch = fetch_lines_.Get(r, FetchLine);
    char* p = Claim(fetch.size() + Piece::kSlack + kAccessLine * r.accesses.size());
    if (!continues) p = Put(p, fetch);
    for (const MemoryAccess& a : r.accesses) {
      *p++ = a.store ? '1' : '0';
      *p++ = ' ';
      p = PutHex(p, a.address);
      *p++ = '\n';
    }
    Commit(p);
    return status();
  }

 private:
  FormCache<Piece> fetch_lines_;
  RepeatRun repeats_;
};

}  // namespace

std::unique_ptr<TraceSink> NewDinWriter(std::unique_ptr<ByteOutput> out) {
  return std::make_unique<DinWriter>(std::move(out));
}

}  // namespace citcat::traces
