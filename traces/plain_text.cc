#include "traces/plain_text.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace citcat::traces {

absl::Status PlainTextTrace::Instruction(uint64_t index, uint64_t pc,
                                         std::span<const uint8_t> bytes,
                                         absl::string_view disassembly) {
  // "%12d %016x %s  %s\n" by hand: printf-style formatting would cost more than the replay.
  static constexpr char kDigits[] = "0123456789abcdef";
  char line[12 + 1 + 16 + 1];
  char* p = line + 12;
  uint64_t n = index;
  do {
    *--p = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n != 0 && p > line);
  std::memset(line, ' ', p - line);
  p = line + 12;
  *p++ = ' ';
  for (int shift = 60; shift >= 0; shift -= 4) *p++ = kDigits[(pc >> shift) & 15];
  *p++ = ' ';
  buffer_.append(line, sizeof line);
  for (uint8_t b : bytes) {
    buffer_ += kDigits[b >> 4];
    buffer_ += kDigits[b & 15];
  }
  buffer_ += "  ";
  buffer_.append(disassembly.data(), disassembly.size());
  buffer_ += '\n';
  return FlushWhenFull();
}

absl::Status PlainTextTrace::Event(absl::string_view text) {
  absl::StrAppend(&buffer_, "             - ", text, "\n");
  return FlushWhenFull();
}

absl::Status PlainTextTrace::Flush() {
  if (buffer_.empty()) return absl::OkStatus();
  absl::Status s = out_.Write(buffer_);
  std::swap(buffer_, written_);
  buffer_.clear();
  return s;
}

}  // namespace citcat::traces
