// The arithmetic, logic and shift groups of the i486 integer unit as templates on the operation
// and the operand size: the generic interpreter instantiates every case behind one switch, the
// predecoded forms (straight.cc) name the one they need, so both run the same lines. Internal to
// x86_core. Each function takes EFLAGS by reference and returns the result.
#ifndef CITCAT_SIMCORE_X86_ALU_H_
#define CITCAT_SIMCORE_X86_ALU_H_

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <type_traits>

#include "simcore/x86/ops.h"

namespace citcat::x86 {

// The bits of an operand of `size` bytes (1, 2 or 4).
constexpr uint32_t SizeMask(int size) { return size == 4 ? 0xFFFFFFFFu : (1u << (8 * size)) - 1; }
constexpr uint32_t SignBit(int size) { return 1u << (8 * size - 1); }
constexpr int32_t SignExtend(uint32_t v, int size) {
  return size == 4   ? static_cast<int32_t>(v)
         : size == 2 ? static_cast<int16_t>(v)
                     : static_cast<int8_t>(v);
}

// PF of each low byte of a result: set when its count of ones is even.
inline constexpr std::array<uint8_t, 256> kParity = [] {
  std::array<uint8_t, 256> t{};
  for (int b = 0; b < 256; ++b)
    t[b] = (std::popcount(static_cast<unsigned>(b)) & 1) ? 0 : flag::kPF;
  return t;
}();

// SF, ZF and PF of a result.
constexpr uint32_t Szp(uint32_t r, int size) {
  r &= SizeMask(size);
  return (r == 0 ? flag::kZF : 0) | (r & SignBit(size) ? flag::kSF : 0) | kParity[r & 0xFF];
}

constexpr void SetFlags(uint32_t& eflags, uint32_t mask, uint32_t values) {
  eflags = (eflags & ~mask) | (values & mask);
}

// Whether condition code `cond` (Jcc's tttn) holds on `eflags`.
constexpr bool Condition(uint32_t eflags, uint8_t cond) {
  const bool cf = eflags & flag::kCF, zf = eflags & flag::kZF, sf = eflags & flag::kSF,
             of = eflags & flag::kOF, pf = eflags & flag::kPF;
  bool r = false;
  switch (cond >> 1) {
    case 0:
      r = of;
      break;
    case 1:
      r = cf;
      break;
    case 2:
      r = zf;
      break;
    case 3:
      r = cf || zf;
      break;
    case 4:
      r = sf;
      break;
    case 5:
      r = pf;
      break;
    case 6:
      r = sf != of;
      break;
    case 7:
      r = zf || sf != of;
      break;
  }
  return (cond & 1) ? !r : r;
}

// ADD, OR, ADC, SBB, AND, SUB, XOR, CMP, TEST, INC, DEC (b = 1) and NEG (a = 0). Logic
// operations leave AF undefined; the i486 clears it, and so does this core
// (docs/machines/i486-core.md, "Undefined flags").
template <Op op, int size>
[[gnu::always_inline]] inline uint32_t Alu(uint32_t& eflags, uint32_t a, uint32_t b) {
  constexpr uint32_t m = SizeMask(size), sign = SignBit(size);
  a &= m;
  b &= m;
  if constexpr (op == Op::kAdd || op == Op::kAdc || op == Op::kInc) {
    const uint32_t carry = op == Op::kAdc ? (eflags & flag::kCF) : 0;
    const uint64_t full = uint64_t{a} + b + carry;
    const uint32_t r = static_cast<uint32_t>(full) & m;
    uint32_t f = Szp(r, size) | ((a ^ b ^ r) & flag::kAF);
    if (full > m) f |= flag::kCF;
    if ((a ^ r) & (b ^ r) & sign) f |= flag::kOF;
    SetFlags(eflags, op == Op::kInc ? flag::kOSZAP : flag::kOSZAPC, f);
    return r;
  } else if constexpr (op == Op::kSub || op == Op::kSbb || op == Op::kCmp || op == Op::kDec ||
                       op == Op::kNeg) {
    const uint32_t borrow = op == Op::kSbb ? (eflags & flag::kCF) : 0;
    const uint64_t full = uint64_t{a} - b - borrow;
    const uint32_t r = static_cast<uint32_t>(full) & m;
    uint32_t f = Szp(r, size) | ((a ^ b ^ r) & flag::kAF);
    if (full >> 63) f |= flag::kCF;
    if ((a ^ b) & (a ^ r) & sign) f |= flag::kOF;
    SetFlags(eflags, op == Op::kDec ? flag::kOSZAP : flag::kOSZAPC, f);
    return r;
  } else {
    static_assert(op == Op::kAnd || op == Op::kTest || op == Op::kOr || op == Op::kXor);
    const uint32_t r = op == Op::kOr ? a | b : op == Op::kXor ? a ^ b : a & b;
    SetFlags(eflags, flag::kOSZAPC, Szp(r, size));
    return r;
  }
}

// Shifts and rotates. The count is masked to five bits; a zero count changes nothing. OF is
// defined for a count of 1; for other counts this core computes it as for 1 from the last step,
// and AF after SHL/SHR/SAR is cleared (docs/machines/i486-core.md, "Undefined flags").
template <Op op, int size>
[[gnu::always_inline]] inline uint32_t Shift(uint32_t& eflags, uint32_t value, uint32_t count) {
  constexpr int bits = 8 * size;
  constexpr uint32_t m = SizeMask(size), sign = SignBit(size);
  value &= m;
  count &= 31;
  if (count == 0) return value;
  bool cf = eflags & flag::kCF;
  const auto set_oc = [&](uint32_t mask, uint32_t r, bool of) {
    SetFlags(eflags, mask, (cf ? flag::kCF : 0) | (of ? flag::kOF : 0) | Szp(r, size));
    return r;
  };
  if constexpr (op == Op::kRol) {
    const uint32_t n = count % bits;
    const uint32_t r = n == 0 ? value : ((value << n) | (value >> (bits - n))) & m;
    cf = r & 1;
    return set_oc(flag::kOF | flag::kCF, r, ((r & sign) != 0) != cf);
  } else if constexpr (op == Op::kRor) {
    const uint32_t n = count % bits;
    const uint32_t r = n == 0 ? value : ((value >> n) | (value << (bits - n))) & m;
    cf = r & sign;
    return set_oc(flag::kOF | flag::kCF, r, ((r ^ (r << 1)) & sign) != 0);
  } else if constexpr (op == Op::kRcl || op == Op::kRcr) {
    const uint32_t n = count % (bits + 1);
    uint32_t r = value;
    for (uint32_t i = 0; i < n; ++i) {
      if (op == Op::kRcl) {
        const bool out = r & sign;
        r = ((r << 1) | (cf ? 1 : 0)) & m;
        cf = out;
      } else {
        const bool out = r & 1;
        r = (r >> 1) | (cf ? sign : 0);
        cf = out;
      }
    }
    const bool of = op == Op::kRcl ? ((r & sign) != 0) != cf : ((r ^ (r << 1)) & sign) != 0;
    return set_oc(flag::kOF | flag::kCF, r, of);
  } else if constexpr (op == Op::kShl) {
    const uint32_t r = count >= 32 ? 0 : (value << count) & m;
    cf = count <= static_cast<uint32_t>(bits) ? (value >> (bits - count)) & 1 : false;
    return set_oc(flag::kOSZAPC, r, ((r & sign) != 0) != cf);
  } else if constexpr (op == Op::kShr) {
    const uint32_t r = value >> count;
    cf = (value >> (count - 1)) & 1;
    return set_oc(flag::kOSZAPC, r, value & sign);
  } else {
    static_assert(op == Op::kSar);
    const int32_t v = SignExtend(value, size);
    const uint32_t r = static_cast<uint32_t>(v >> std::min<uint32_t>(count, 31)) & m;
    cf = (v >> std::min<uint32_t>(count - 1, 31)) & 1;
    return set_oc(flag::kOSZAPC, r, false);
  }
}

// Compile-time dispatch: `f` is called with the operand size or the operation as a
// std::integral_constant, so that it can name the template made for it.
template <int size>
using SizeConstant = std::integral_constant<int, size>;
template <Op op>
using OpConstant = std::integral_constant<Op, op>;

// f(size) for an operand size of 1, 2 or 4.
template <typename F>
auto WithSize(int size, F f) {
  return size == 4 ? f(SizeConstant<4>{}) : size == 2 ? f(SizeConstant<2>{}) : f(SizeConstant<1>{});
}
// f(op) when `op` is one of First, Rest...; otherwise f's result type, value-initialised.
template <Op First, Op... Rest, typename F>
auto WithOp(Op op, F f) {
  decltype(f(OpConstant<First>{})) result{};
  if (op == First) result = f(OpConstant<First>{});
  ((op == Rest ? void(result = f(OpConstant<Rest>{})) : void()), ...);
  return result;
}

}  // namespace citcat::x86

#endif  // CITCAT_SIMCORE_X86_ALU_H_
