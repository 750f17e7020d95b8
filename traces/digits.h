// Numbers and text written straight into a writer's buffer. The text formats write tens of
// millions of numbers a second; printf-style formatting would cost more than the replay.
// Each function writes at the pointer and returns the end of what it wrote.
#ifndef CITCAT_TRACES_DIGITS_H_
#define CITCAT_TRACES_DIGITS_H_

#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/strings/string_view.h"

namespace citcat::traces {

inline constexpr char kHexDigits[] = "0123456789abcdef";

// The number of hex digits of `v` without leading zeros (1 for 0).
inline int HexDigits(uint64_t v) { return v == 0 ? 1 : (67 - std::countl_zero(v)) / 4; }

// Exactly `digits` lowercase hex digits: the low ones of `v`, zero-padded.
inline char* PutHexFixed(char* p, uint64_t v, int digits) {
  for (int i = digits - 1; i >= 0; --i) {
    p[i] = kHexDigits[v & 15];
    v >>= 4;
  }
  return p + digits;
}

// printf("%x"): lowercase, no leading zeros.
inline char* PutHex(char* p, uint64_t v) { return PutHexFixed(p, v, HexDigits(v)); }

// printf("%0*x", min_digits, v): at least `min_digits`, more if `v` needs them.
inline char* PutHexPadded(char* p, uint64_t v, int min_digits) {
  const int digits = HexDigits(v);
  return PutHexFixed(p, v, digits > min_digits ? digits : min_digits);
}

// printf("%*d", width, v) for v >= 0: right-aligned in `width` columns, wider if need be.
inline char* PutDecimalRight(char* p, uint64_t v, int width) {
  char digits[20];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  for (int i = n; i < width; ++i) *p++ = ' ';
  while (n > 0) *p++ = digits[--n];
  return p;
}

// printf("%d").
inline char* PutDecimal(char* p, int64_t v) {
  if (v < 0) {
    *p++ = '-';
    return PutDecimalRight(p, 0 - static_cast<uint64_t>(v), 0);
  }
  return PutDecimalRight(p, static_cast<uint64_t>(v), 0);
}

inline char* Put(char* p, absl::string_view s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

// A piece of a template (a format's fixed text), kept with spare bytes after it so that it is
// copied in whole 16-byte pieces: a library call per copy would cost more than the copy. Put
// writes up to 15 bytes past the piece's end, so a writer claims kSlack more than it writes.
class Piece {
 public:
  static constexpr size_t kSlack = 15;
  Piece() = default;
  explicit Piece(absl::string_view text) : bytes_(text.size() + kSlack), size_(text.size()) {
    std::memcpy(bytes_.data(), text.data(), text.size());
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  friend char* Put(char* p, const Piece& piece) {
    for (size_t i = 0; i < piece.size_; i += 16) std::memcpy(p + i, piece.bytes_.data() + i, 16);
    return p + piece.size_;
  }

 private:
  std::vector<char> bytes_;
  size_t size_ = 0;
};

}  // namespace citcat::traces

#endif  // CITCAT_TRACES_DIGITS_H_
