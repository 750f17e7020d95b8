// The plain instruction trace `citcat replay -o` writes (docs/replay.md): one line per
// instruction started, "%12d %016x BYTES  DISASSEMBLY" (its count, PC and bytes in hex), and one
// per event replay applies, "             - TEXT". Buffered, and handed to the output 64 KiB at a
// time.
#ifndef CITCAT_TRACES_PLAIN_TEXT_H_
#define CITCAT_TRACES_PLAIN_TEXT_H_

#include <cstdint>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "traces/output.h"

namespace citcat::traces {

class PlainTextTrace {
 public:
  explicit PlainTextTrace(ByteOutput& out) : out_(out) {}
  // The instruction at `pc`, `index` instructions into the trace. Not OK: the output failed.
  absl::Status Instruction(uint64_t index, uint64_t pc, std::span<const uint8_t> bytes,
                           absl::string_view disassembly);
  absl::Status Event(absl::string_view text);
  // Hands over what is buffered (the output's Close is the owner's).
  absl::Status Flush();

 private:
  absl::Status FlushWhenFull() { return buffer_.size() >= (1 << 16) ? Flush() : absl::OkStatus(); }
  ByteOutput& out_;
  // Filled while the other is written: the output may still be writing it.
  std::string buffer_, written_;
};

}  // namespace citcat::traces

#endif  // CITCAT_TRACES_PLAIN_TEXT_H_
