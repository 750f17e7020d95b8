// Numbers and text written straight into a writer's buffer. The text formats write tens of
// millions of numbers a second; printf-style formatting would cost more than the replay.
// Each function writes at the pointer and returns the end of what it wrote.
#ifndef CITCAT_TRACES_DIGITS_H_
#define CITCAT_TRACES_DIGITS_H_

#include <bit>
#include <cstdint>
#include <cstring>

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

}  // namespace citcat::traces

#endif  // CITCAT_TRACES_DIGITS_H_
