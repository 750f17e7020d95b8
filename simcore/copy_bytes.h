// A copy of a few bytes (an instruction, a bus word or line) in fixed-size pieces, by the bits of
// the count: a library call for each would cost as much as the work around it.
#ifndef CITCAT_SIMCORE_COPY_BYTES_H_
#define CITCAT_SIMCORE_COPY_BYTES_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace citcat::simcore {

template <size_t kPiece>
void CopyPiece(const uint8_t* from, size_t n, uint8_t* to, size_t& done) {
  if (n & kPiece) {
    std::memcpy(to + done, from + done, kPiece);
    done += kPiece;
  }
}

// n < 32.
inline void CopyFewBytes(const uint8_t* from, size_t n, uint8_t* to) {
  size_t done = 0;
  CopyPiece<16>(from, n, to, done);
  CopyPiece<8>(from, n, to, done);
  CopyPiece<4>(from, n, to, done);
  CopyPiece<2>(from, n, to, done);
  CopyPiece<1>(from, n, to, done);
}

}  // namespace citcat::simcore

#endif  // CITCAT_SIMCORE_COPY_BYTES_H_
