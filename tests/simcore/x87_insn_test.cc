// The i486's x87 instruction layer through the core: the register stack and tags, stack faults and
// their masked responses, each instruction group, the pending-exception rules (#MF with CR0.NE,
// the FERR# wait without it, IGNNE#), #NM from CR0.EM/TS/MP, the instruction and data pointers,
// and the FSTENV/FSAVE images in their 16/32-bit real/protected layouts.
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "simcore/ram_bus.h"
#include "simcore/x86/cpu.h"
#include "simcore/x86/fpu/compare.h"

namespace citcat::x86 {
namespace {

constexpr uint32_t kCode = 0x1000;
constexpr uint32_t kData = 0x8000;

Float80 F(uint16_t sign_exp, uint64_t signif) { return Float80{signif, sign_exp}; }
const Float80 kOne = F(0x3FFF, 0x8000000000000000);
const Float80 kZero = F(0, 0);

// A flat 32-bit machine (or a real-mode one) with code at 0x1000 and data at 0x8000.
class X87 : public ::testing::Test {
 protected:
  X87() : bus_(1 << 20), cpu_(bus_) { cpu_.SetFlat32(); }

  // Runs the instructions in `code` (placed at kCode) until all retired or one faults.
  void Run(std::vector<uint8_t> code, uint64_t steps = 0) {
    PokeBytes(kCode, code);
    cpu_.set_eip(kCode);
    cpu_.ClearException();
    uint64_t n = steps;
    if (n == 0) {
      for (size_t at = 0; at < code.size(); ++n) {
        at += Decode(code.data() + at, code.size() - at, cpu_.segment(kCs).big).length;
      }
    }
    cpu_.Run(n);
  }
  void RunOk(std::vector<uint8_t> code) {
    Run(std::move(code));
    ASSERT_FALSE(cpu_.exception().pending) << "vector " << int{cpu_.exception().vector};
  }
  // Memory changed behind the cache's back: drop what it holds.
  void PokeBytes(uint32_t a, const std::vector<uint8_t>& bytes) {
    bus_.Poke(a, bytes);
    cpu_.cache().InvalidateAll();
  }
  void Poke(uint32_t a, uint64_t v, int n) {
    std::vector<uint8_t> b(n);
    for (int i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
    PokeBytes(a, b);
  }
  // Write-through: RAM holds every store.
  uint64_t Peek(uint32_t a, int n) const {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = v << 8 | bus_.ram()[a + i];
    return v;
  }
  const Fpu& fpu() const { return cpu_.fpu(); }
  uint16_t sw() const { return fpu().status_word(); }
  // An instruction with a disp32 memory operand at `a`.
  static std::vector<uint8_t> M(uint8_t esc, uint8_t reg, uint32_t a) {
    return {esc,
            static_cast<uint8_t>(reg << 3 | 5),
            static_cast<uint8_t>(a),
            static_cast<uint8_t>(a >> 8),
            static_cast<uint8_t>(a >> 16),
            static_cast<uint8_t>(a >> 24)};
  }
  static std::vector<uint8_t> Cat(std::vector<std::vector<uint8_t>> parts) {
    std::vector<uint8_t> out;
    for (auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
  }
  void LoadCw(uint16_t cw) {
    Poke(kData + 0x200, cw, 2);
    RunOk(M(0xD9, 5, kData + 0x200));  // FLDCW
  }

  simcore::RamBus bus_;
  Cpu cpu_;
};

const std::vector<uint8_t> kFninit = {0xDB, 0xE3};
const std::vector<uint8_t> kFld1 = {0xD9, 0xE8};
const std::vector<uint8_t> kFldz = {0xD9, 0xEE};

TEST_F(X87, ResetAndInitState) {
  EXPECT_EQ(fpu().control_word(), 0x0040);
  EXPECT_EQ(sw(), 0);
  EXPECT_EQ(fpu().tag_word(), 0x5555);  // every register +0 and valid
  EXPECT_EQ(fpu().st(0), kZero);
  RunOk(kFninit);
  EXPECT_EQ(fpu().control_word(), 0x037F);
  EXPECT_EQ(sw(), 0);
  EXPECT_EQ(fpu().tag_word(), 0xFFFF);
}

TEST_F(X87, PushesPopsAndTags) {
  RunOk(Cat({kFninit, kFld1, kFldz}));
  EXPECT_EQ(fpu().top(), 6);
  EXPECT_EQ((sw() >> 11) & 7, 6);
  EXPECT_EQ(fpu().st(0), kZero);
  EXPECT_EQ(fpu().st(1), kOne);
  EXPECT_EQ(fpu().tag_word(), 0x1FFF);  // R7 valid (1.0), R6 zero, the rest empty
  RunOk({0xD9, 0xC9});                  // FXCH ST(1)
  EXPECT_EQ(fpu().st(0), kOne);
  EXPECT_EQ(fpu().st(1), kZero);
  RunOk({0xD9, 0xF7});  // FINCSTP: R6 stays valid, ST(0) is now R7
  EXPECT_EQ(fpu().top(), 7);
  EXPECT_EQ(fpu().st(0), kZero);
  RunOk({0xD9, 0xF6, 0xDD, 0xC0});  // FDECSTP, FFREE ST(0)
  EXPECT_EQ(fpu().top(), 6);
  EXPECT_TRUE(fpu().st_empty(0));
  EXPECT_EQ(fpu().tag_word(), 0x7FFF);  // R7 holds the zero FXCH put there
  EXPECT_EQ(sw() & kExAll, 0);
}

TEST_F(X87, StackOverflowAndUnderflowMaskedResponses) {
  RunOk(kFninit);
  for (int i = 0; i < 8; ++i) RunOk(kFld1);
  EXPECT_EQ(sw() & (kExInvalid | kSwStackFault), 0);
  RunOk(kFldz);  // the ninth push
  EXPECT_EQ(sw() & (kExInvalid | kSwStackFault | kSwC1), kExInvalid | kSwStackFault | kSwC1);
  EXPECT_EQ(fpu().st(0), kRealIndefinite);
  EXPECT_FALSE(fpu().ferr());  // masked: no pending exception
  RunOk(Cat({{0xDB, 0xE2}, kFninit, kFld1}));
  RunOk({0xD8, 0xC1});  // FADD ST(0), ST(1) with ST(1) empty
  EXPECT_EQ(sw() & (kExInvalid | kSwStackFault | kSwC1), kExInvalid | kSwStackFault);
  EXPECT_EQ(fpu().st(0), kRealIndefinite);
  // FSTP m32 from an empty register stores the single indefinite and pops.
  RunOk(Cat({kFninit, M(0xD9, 3, kData)}));
  EXPECT_EQ(Peek(kData, 4), 0xFFC00000u);
  EXPECT_EQ(fpu().top(), 1);
  // FISTP m16 from an empty register: the integer indefinite.
  RunOk(Cat({kFninit, M(0xDF, 3, kData)}));
  EXPECT_EQ(Peek(kData, 2), 0x8000u);
}

TEST_F(X87, ArithmeticInEveryForm) {
  Poke(kData, 0x40000000, 4);                       // 2.0f
  Poke(kData + 8, 3, 2);                            // int16 3
  Poke(kData + 16, 0x4024000000000000, 8);          // 10.0
  RunOk(Cat({kFninit, kFld1, M(0xD9, 0, kData)}));  // ST0 = 2, ST1 = 1
  RunOk({0xDE, 0xF9});                              // FDIVP ST(1), ST: 1/2
  EXPECT_EQ(fpu().top(), 7);
  EXPECT_EQ(fpu().st(0), F(0x3FFE, 0x8000000000000000));
  RunOk(M(0xDE, 0, kData + 8));  // FIADD m16: 3.5
  EXPECT_EQ(fpu().st(0), F(0x4000, 0xE000000000000000));
  RunOk(M(0xDC, 5, kData + 16));  // FSUBR m64: 10 - 3.5 = 6.5
  EXPECT_EQ(fpu().st(0), F(0x4001, 0xD000000000000000));
  RunOk(Cat({M(0xDD, 2, kData + 24), M(0xDB, 3, kData + 32)}));  // FST m64, FISTP m32
  EXPECT_EQ(Peek(kData + 24, 8), 0x401A000000000000u);
  EXPECT_EQ(Peek(kData + 32, 4), 6u);  // 6.5 to nearest even
  EXPECT_EQ(sw() & (kExPrecision | kSwC1), kExPrecision);
  EXPECT_TRUE(fpu().st_empty(0));
  // Register forms: FSUBR ST(i), ST(0) is ST(i) = ST(0) - ST(i); FSUBRP pops.
  RunOk(Cat({kFninit, kFld1, M(0xD9, 0, kData)}));  // ST0 = 2, ST1 = 1
  RunOk({0xDC, 0xE1});                              // FSUBR ST(1), ST: ST1 = 2 - 1
  EXPECT_EQ(fpu().st(1), kOne);
  RunOk({0xD8, 0xC9});  // FMUL ST, ST(1): 2
  RunOk({0xDE, 0xE1});  // FSUBRP ST(1), ST: ST1 = ST0 - ST1 = 2 - 1, pop
  EXPECT_EQ(fpu().st(0), kOne);
  EXPECT_EQ(fpu().top(), 7);
  Poke(kData + 40, 0xFFFFFFFF, 4);  // int32 -1
  RunOk(M(0xDA, 5, kData + 40));    // FISUBR m32: -1 - 1
  EXPECT_EQ(fpu().st(0), F(0xC000, 0x8000000000000000));
}

TEST_F(X87, MemoryOperandsSignalAsTheRegisterFormsDo) {
  Poke(kData, 0x7FC00001, 4);                                       // single QNaN
  Poke(kData + 4, 0x7F800001, 4);                                   // single SNaN
  Poke(kData + 8, 0x00000003, 4);                                   // single denormal
  RunOk(Cat({kFninit, M(0xD9, 0, kData), M(0xD8, 0, kData + 4)}));  // QNaN + SNaN
  EXPECT_EQ(fpu().st(0), F(0x7FFF, 0xC000010000000000));            // the QNaN wins
  EXPECT_EQ(sw() & kExAll, kExInvalid);
  RunOk(Cat({{0xDB, 0xE2}, M(0xD8, 0, kData + 8)}));  // QNaN + denormal: no DE
  EXPECT_EQ(sw() & kExAll, 0);
  RunOk(Cat({kFninit, kFld1, M(0xD8, 0, kData + 8)}));  // 1 + denormal: DE and PE
  EXPECT_EQ(sw() & kExAll, kExDenormal | kExPrecision);
  EXPECT_EQ(fpu().st(0), kOne);
  // DE unmasked (after FNCLEX: unmasking a set flag would make it pending at once): no result.
  RunOk({0xDB, 0xE2});
  LoadCw(0x037D);
  RunOk(Cat({kFldz, M(0xD8, 0, kData + 8)}));
  EXPECT_EQ(sw() & kExAll, kExDenormal);
  EXPECT_EQ(fpu().st(0), kZero);
  EXPECT_TRUE(fpu().ferr());
}

TEST_F(X87, UnmaskingASetFlagMakesItPending) {
  Poke(kData, 0x00000003, 4);
  RunOk(Cat({kFninit, kFld1, M(0xD8, 0, kData)}));  // DE masked, set
  EXPECT_FALSE(fpu().ferr());
  LoadCw(0x037D);  // ES follows the flags and the masks
  EXPECT_TRUE(fpu().ferr());
  EXPECT_EQ(sw() & (kSwErrorSummary | kSwBusy), kSwErrorSummary | kSwBusy);
  cpu_.set_cr0(cpu_.cr0() | kCr0Ne);
  Run(kFld1);
  EXPECT_EQ(cpu_.exception().vector, kVecMathFault);
}

TEST_F(X87, PrecisionAndRoundingControlApply) {
  Poke(kData, 0x40400000, 4);  // 3.0f
  RunOk(kFninit);
  LoadCw(0x007F);                          // PC = 24 bits, nearest
  RunOk(Cat({kFld1, M(0xD8, 6, kData)}));  // FDIV m32: 1/3 at 24 bits
  EXPECT_EQ(fpu().st(0), F(0x3FFD, 0xAAAAAB0000000000));
  EXPECT_EQ(sw() & (kExPrecision | kSwC1), kExPrecision | kSwC1);  // rounded up
  LoadCw(0x0F7F);                                                  // 64 bits toward zero
  RunOk(Cat({kFld1, M(0xD8, 6, kData)}));
  EXPECT_EQ(fpu().st(0), F(0x3FFD, 0xAAAAAAAAAAAAAAAA));
  EXPECT_EQ(sw() & kSwC1, 0);
}

TEST_F(X87, ConstantsFollowRoundingControlOnly) {
  RunOk(Cat({kFninit, {0xD9, 0xEB}, {0xD9, 0xE9}, {0xD9, 0xEC}}));  // FLDPI, FLDL2T, FLDLG2
  EXPECT_EQ(fpu().st(2), F(0x4000, 0xC90FDAA22168C235));
  EXPECT_EQ(fpu().st(1), F(0x4000, 0xD49A784BCD1B8AFE));
  EXPECT_EQ(fpu().st(0), F(0x3FFD, 0x9A209A84FBCFF799));
  EXPECT_EQ(sw() & kExPrecision, 0);
  LoadCw(0x047F);                                          // round down
  RunOk(Cat({{0xD9, 0xEB}, {0xD9, 0xEA}, {0xD9, 0xED}}));  // FLDPI, FLDL2E, FLDLN2
  EXPECT_EQ(fpu().st(2), F(0x4000, 0xC90FDAA22168C234));
  EXPECT_EQ(fpu().st(1), F(0x3FFF, 0xB8AA3B295C17F0BB));
  EXPECT_EQ(fpu().st(0), F(0x3FFE, 0xB17217F7D1CF79AB));
  LoadCw(0x087F);                       // round up
  RunOk(Cat({kFninit, {0xD9, 0xE9}}));  // FLDL2T (FNINIT resets RC: reload)
  EXPECT_EQ(fpu().st(0), F(0x4000, 0xD49A784BCD1B8AFE));
  LoadCw(0x087F);
  RunOk({0xD9, 0xE9});
  EXPECT_EQ(fpu().st(0), F(0x4000, 0xD49A784BCD1B8AFF));
  LoadCw(0x007F);  // PC = 24 does not apply
  RunOk({0xD9, 0xEB});
  EXPECT_EQ(fpu().st(0), F(0x4000, 0xC90FDAA22168C235));
}

TEST_F(X87, ComparesAndExamine) {
  RunOk(Cat({kFninit, kFld1, kFldz, {0xDE, 0xD9}, {0xDF, 0xE0}}));  // 0 vs 1: FCOMPP, FNSTSW AX
  EXPECT_EQ(cpu_.reg(kEax) & 0x4500, 0x0100u);                      // less
  EXPECT_EQ(fpu().top(), 0);
  EXPECT_EQ((cpu_.reg(kEax) >> 11) & 7, 0u);
  Poke(kData, 0x7FC00000, 4);                       // a single QNaN
  RunOk(Cat({kFninit, kFld1, M(0xD9, 0, kData)}));  // ST0 = QNaN, ST1 = 1
  RunOk({0xDD, 0xE1});                              // FUCOM ST(1): unordered, no IE
  EXPECT_EQ(sw() & (kCompareCodeMask | kExInvalid), kCompareCodeMask);
  RunOk({0xD8, 0xD1});  // FCOM ST(1): IE
  EXPECT_EQ(sw() & (kCompareCodeMask | kExInvalid), kCompareCodeMask | kExInvalid);
  Poke(kData + 4, 5, 4);
  RunOk(Cat({kFninit, kFld1, M(0xDA, 3, kData + 4)}));  // FICOMP m32: 1 < 5, pop
  EXPECT_EQ(sw() & kCompareCodeMask, kSwC0);
  EXPECT_EQ(fpu().top(), 0);
  RunOk(Cat({kFld1, {0xD9, 0xE0}, {0xD9, 0xE4}}));  // FCHS, FTST: -1 < 0
  EXPECT_EQ(sw() & kCompareCodeMask, kSwC0);
  RunOk({0xD9, 0xE1, 0xD9, 0xE5});  // FABS, FXAM: normal, positive
  EXPECT_EQ(fpu().st(0), kOne);
  EXPECT_EQ(sw() & (kCompareCodeMask | kSwC1), kSwC2);
  RunOk(Cat({kFninit, {0xD9, 0xE5}}));  // FXAM on an empty register
  EXPECT_EQ(sw() & kCompareCodeMask, kSwC3 | kSwC0);
  RunOk(Cat({kFldz, {0xD9, 0xE0}, {0xD9, 0xE5}}));  // -0: zero, C1 = sign
  EXPECT_EQ(sw() & (kCompareCodeMask | kSwC1), kSwC3 | kSwC1);
  RunOk(Cat({kFninit, {0xD9, 0xE4}}));  // FTST on empty: unordered with the stack fault
  EXPECT_EQ(sw() & (kCompareCodeMask | kSwStackFault), kCompareCodeMask | kSwStackFault);
}

TEST_F(X87, SqrtRoundScaleExtractRemainder) {
  Poke(kData, 0x40000000, 4);                              // 2.0f
  RunOk(Cat({kFninit, M(0xD9, 0, kData), {0xD9, 0xFA}}));  // FSQRT
  EXPECT_EQ(fpu().st(0), F(0x3FFF, 0xB504F333F9DE6484));
  RunOk({0xD9, 0xFC});  // FRNDINT: 1
  EXPECT_EQ(fpu().st(0), kOne);
  Poke(kData + 4, 0x40400000, 4);                                     // 3.0f
  RunOk(Cat({kFninit, M(0xD9, 0, kData + 4), kFld1, {0xD9, 0xFD}}));  // FSCALE: 1 * 2^3
  EXPECT_EQ(fpu().st(0), F(0x4002, 0x8000000000000000));
  Poke(kData + 8, 0x41400000, 4);                              // 12.0f
  RunOk(Cat({kFninit, M(0xD9, 0, kData + 8), {0xD9, 0xF4}}));  // FXTRACT
  EXPECT_EQ(fpu().st(0), F(0x3FFF, 0xC000000000000000));       // 1.5
  EXPECT_EQ(fpu().st(1), F(0x4000, 0xC000000000000000));       // 3
  // FPREM 11 rem 3 = 2 (Q = 3), FPREM1 = -1 (Q = 4).
  Poke(kData + 12, 0x41300000, 4);  // 11.0f
  RunOk(Cat({kFninit, M(0xD9, 0, kData + 4), M(0xD9, 0, kData + 12), {0xD9, 0xF8}}));
  EXPECT_EQ(fpu().st(0), F(0x4000, 0x8000000000000000));
  EXPECT_EQ(sw() & (kCompareCodeMask | kSwC1), kSwC3 | kSwC1);  // Q1 in C3, Q0 in C1
  RunOk(Cat({kFninit, M(0xD9, 0, kData + 4), M(0xD9, 0, kData + 12), {0xD9, 0xF5}}));
  EXPECT_EQ(fpu().st(0), F(0xBFFF, 0x8000000000000000));
  EXPECT_EQ(sw() & (kCompareCodeMask | kSwC1), kSwC0);  // Q2 in C0
  // 2^100 rem 3 needs partial steps (C2 = 1) until the exponents come within 64.
  Poke(kData + 16, 0x71800000, 4);  // 2^100
  RunOk(Cat({kFninit, M(0xD9, 0, kData + 4), M(0xD9, 0, kData + 16), {0xD9, 0xF8}}));
  EXPECT_TRUE(sw() & kSwC2);
  for (int i = 0; i < 4 && (sw() & kSwC2); ++i) RunOk({0xD9, 0xF8});
  EXPECT_FALSE(sw() & kSwC2);
  EXPECT_EQ(fpu().st(0), kOne);
}

TEST_F(X87, TranscendentalsAndTheirStackEffects) {
  Poke(kData, 0x3F000000, 4);                  // 0.5f
  RunOk(Cat({kFninit, kFld1, {0xD9, 0xF2}}));  // FPTAN of 1: tan pushed under 1.0
  EXPECT_EQ(fpu().top(), 6);
  EXPECT_EQ(fpu().st(0), kOne);
  EXPECT_EQ(fpu().st(1), F(0x3FFF, 0xC75922E5F71D2DC5));  // tan 1, nearest
  EXPECT_EQ(sw() & (kExPrecision | kSwC2), kExPrecision);
  RunOk(Cat({kFninit, kFldz, {0xD9, 0xFB}}));  // FSINCOS of 0: ST0 = cos = 1, ST1 = sin = 0
  EXPECT_EQ(fpu().st(0), kOne);
  EXPECT_EQ(fpu().st(1), kZero);
  RunOk(Cat({kFninit, kFld1, kFld1, {0xD9, 0xF3}}));  // FPATAN(1, 1) = pi/4, popped
  EXPECT_EQ(fpu().top(), 7);
  EXPECT_EQ(fpu().st(0), F(0x3FFE, 0xC90FDAA22168C235));
  RunOk(Cat({kFninit, M(0xD9, 0, kData), {0xD9, 0xF0}}));  // F2XM1(0.5) = sqrt 2 - 1
  EXPECT_EQ(fpu().st(0), F(0x3FFD, 0xD413CCCFE7799211));
  RunOk(Cat({kFninit, M(0xD9, 0, kData), kFld1, {0xD9, 0xF1}}));  // FYL2X: 0.5 * log2(1) = +0
  EXPECT_EQ(fpu().st(0), kZero);
  EXPECT_EQ(fpu().top(), 7);
  // |x| >= 2^63: C2 set, ST0 unchanged.
  Poke(kData + 4, 0x5F000000, 4);                              // 2^63
  RunOk(Cat({kFninit, M(0xD9, 0, kData + 4), {0xD9, 0xFE}}));  // FSIN
  EXPECT_TRUE(sw() & kSwC2);
  EXPECT_EQ(fpu().st(0), F(0x403E, 0x8000000000000000));
  // F2XM1 beyond |x| <= 1 is undefined on the i486: the core stops instead of guessing.
  Poke(kData + 8, 0x40000000, 4);
  Run(Cat({kFninit, M(0xD9, 0, kData + 8), {0xD9, 0xF0}}));
  EXPECT_TRUE(cpu_.exception().unmodelled);
}

TEST_F(X87, IntegerAndBcdLoadsAndStores) {
  Poke(kData, 0xFFFFFFFFFFFFFFFEull, 8);                            // int64 -2
  RunOk(Cat({kFninit, M(0xDF, 5, kData), M(0xDF, 7, kData + 8)}));  // FILD m64, FISTP m64
  EXPECT_EQ(Peek(kData + 8, 8), 0xFFFFFFFFFFFFFFFEull);
  const std::vector<uint8_t> bcd = {0x67, 0x45, 0x23, 0x01, 0, 0, 0, 0, 0, 0x80};  // -1234567
  PokeBytes(kData + 16, bcd);
  RunOk(Cat({M(0xDF, 4, kData + 16), M(0xDF, 6, kData + 32)}));  // FBLD, FBSTP
  for (int i = 0; i < 10; ++i) EXPECT_EQ(Peek(kData + 32 + i, 1), bcd[i]) << i;
  Poke(kData + 48, 70000, 4);
  RunOk(Cat({M(0xDB, 0, kData + 48), M(0xDF, 2, kData + 56)}));  // FILD m32, FIST m16: too big
  EXPECT_EQ(Peek(kData + 56, 2), 0x8000u);
  EXPECT_TRUE(sw() & kExInvalid);
  // FLD/FSTP m80 copy any encoding, an SNaN included, without an exception.
  Poke(kData + 64, 0x8000000000000001ull, 8);
  Poke(kData + 72, 0x7FFF, 2);
  RunOk(Cat({kFninit, M(0xDB, 5, kData + 64), M(0xDB, 7, kData + 80)}));
  EXPECT_EQ(Peek(kData + 80, 8), 0x8000000000000001ull);
  EXPECT_EQ(Peek(kData + 88, 2), 0x7FFFu);
  EXPECT_EQ(sw() & kExAll, 0);
}

TEST_F(X87, PointersAndOpcode) {
  Poke(kData, 0x3F800000, 4);
  RunOk(Cat({kFninit, M(0xD9, 0, kData), M(0xD8, 0, kData)}));  // FLD m32, FADD m32
  EXPECT_EQ(fpu().fip(), kCode + 8);
  EXPECT_EQ(fpu().fdp(), kData);
  EXPECT_EQ(fpu().opcode(), 0x005);  // D8 05: ESC low bits 0, ModRM 05
  EXPECT_EQ(fpu().fcs(), cpu_.segment(kCs).selector);
  RunOk({0xD9, 0xE0, 0xD9, 0x3D, 0, 0x90, 0, 0});  // FCHS, FNSTCW: a control op changes nothing
  EXPECT_EQ(fpu().fip(), kCode);
  EXPECT_EQ(fpu().opcode(), 0x1E0);
  EXPECT_EQ(fpu().fdp(), kData);  // a register operand leaves the data pointer
}

TEST_F(X87, UnmaskedExceptionRaisesMathFaultAtTheNextWaitingInstruction) {
  cpu_.set_cr0(cpu_.cr0() | kCr0Ne);
  RunOk(kFninit);
  LoadCw(0x037B);                            // ZE unmasked
  RunOk(Cat({kFld1, kFldz, {0xDE, 0xF9}}));  // FDIVP ST(1), ST: 1/0
  EXPECT_EQ(sw() & (kExZeroDivide | kSwErrorSummary | kSwBusy),
            kExZeroDivide | kSwErrorSummary | kSwBusy);
  EXPECT_EQ(fpu().top(), 6);  // nothing stored, nothing popped
  EXPECT_EQ(fpu().st(1), kOne);
  EXPECT_TRUE(fpu().ferr());
  RunOk({0xDF, 0xE0});  // FNSTSW AX does not wait
  EXPECT_EQ(cpu_.reg(kEax) & 0xFFFF, sw());
  Run(kFld1);  // a waiting instruction: #MF, the FLD1 does not run
  ASSERT_TRUE(cpu_.exception().pending);
  EXPECT_EQ(cpu_.exception().vector, kVecMathFault);
  EXPECT_EQ(cpu_.exception().eip, kCode);
  EXPECT_EQ(fpu().top(), 6);
  Run({0x9B});  // WAIT too
  EXPECT_EQ(cpu_.exception().vector, kVecMathFault);
  RunOk(Cat({{0xDB, 0xE2}, {0x9B}, kFld1}));  // FNCLEX ends it
  EXPECT_EQ(fpu().top(), 5);
  // FNSTENV does not wait; it stores ES and then masks every exception, which withdraws it.
  RunOk(Cat({kFldz, {0xDE, 0xF9}}));
  EXPECT_TRUE(fpu().ferr());
  RunOk(M(0xD9, 6, kData));
  EXPECT_EQ(Peek(kData + 4, 2) & kSwErrorSummary, kSwErrorSummary);
  EXPECT_FALSE(fpu().ferr());
  // With CR0.NE = 1, IGNNE# does not matter.
  RunOk(Cat({{0xDB, 0xE2}}));
  LoadCw(0x037B);
  RunOk(Cat({kFld1, kFldz, {0xDE, 0xF9}}));
  ASSERT_TRUE(fpu().ferr());
  cpu_.fpu().set_ignne(true);
  Run(kFld1);
  EXPECT_EQ(cpu_.exception().vector, kVecMathFault);
}

TEST_F(X87, MathFaultIsDeliveredThroughTheVectorTableWithoutAnErrorCode) {
  cpu_.SetReal(0, 0, 0);
  cpu_.set_reg(kEsp, 0x8000);
  cpu_.set_cr0(cpu_.cr0() | kCr0Ne);
  cpu_.set_deliver_interrupts(true);
  Poke(16 * 4, 0x00002000, 4);  // vector 16 -> 0000:2000
  Poke(kData + 0x200, 0x037B, 2);
  // FNINIT; FLDCW [0x8200]; FLD1; FLDZ; FDIVP (ZE unmasked); FLD1 (#MF)
  Run({0xDB, 0xE3, 0xD9, 0x2E, 0x00, 0x82, 0xD9, 0xE8, 0xD9, 0xEE, 0xDE, 0xF9, 0xD9, 0xE8}, 6);
  EXPECT_EQ(cpu_.eip(), 0x2000u);
  EXPECT_EQ(cpu_.reg(kEsp), 0x8000u - 6);   // FLAGS, CS, IP: no error code
  EXPECT_EQ(Peek(0x8000 - 6, 2), 0x100Cu);  // the waiting FLD1 restarts after the handler
  EXPECT_EQ(fpu().top(), 6);
}

TEST_F(X87, WithoutNumericErrorTheInstructionWaitsOnFerrUntilIgnne) {
  RunOk(kFninit);
  LoadCw(0x037B);
  RunOk(Cat({kFld1, kFldz, {0xDE, 0xF9}}));
  ASSERT_TRUE(fpu().ferr());
  Run(kFld1, 5);  // CR0.NE = 0: held, no fault, nothing retires
  EXPECT_FALSE(cpu_.exception().pending);
  EXPECT_EQ(cpu_.eip(), kCode);
  EXPECT_EQ(fpu().top(), 6);
  cpu_.fpu().set_ignne(true);  // IGNNE#: the instruction goes on with the exception pending
  RunOk(kFld1);
  EXPECT_EQ(fpu().top(), 5);
  EXPECT_TRUE(fpu().ferr());
}

TEST_F(X87, DeviceNotAvailableFromEmTsMp) {
  cpu_.set_cr0(cpu_.cr0() | kCr0Em);
  Run(kFninit);
  EXPECT_EQ(cpu_.exception().vector, kVecNoMath);
  RunOk({0x9B});  // WAIT ignores EM
  cpu_.set_cr0((cpu_.cr0() & ~kCr0Em) | kCr0Ts);
  Run(kFld1);
  EXPECT_EQ(cpu_.exception().vector, kVecNoMath);
  RunOk({0x9B});  // WAIT with TS but not MP
  cpu_.set_cr0(cpu_.cr0() | kCr0Mp);
  Run({0x9B});
  ASSERT_TRUE(cpu_.exception().pending);
  EXPECT_EQ(cpu_.exception().vector, kVecNoMath);
}

TEST_F(X87, FstenvMasksEveryExceptionAndFldenvRestores) {
  RunOk(kFninit);
  LoadCw(0x0360);
  RunOk(Cat({kFld1, M(0xD9, 6, kData)}));  // FNSTENV m28
  EXPECT_EQ(Peek(kData, 2), 0x0360u);
  EXPECT_EQ(fpu().control_word(), 0x037F);
  RunOk(M(0xD9, 4, kData));  // FLDENV
  EXPECT_EQ(fpu().control_word(), 0x0360);
}

// Builds a state with values, flags, pointers and a non-zero TOP; FNSAVE must store it, reset the
// FPU, and FRSTOR must bring every piece back.
class X87Save : public X87 {
 protected:
  struct State {
    uint16_t cw, sw, tw, fop;
    uint32_t fip, fdp;
    Float80 st[8];
  };
  State Capture() const {
    State s{fpu().control_word(),
            fpu().status_word(),
            fpu().tag_word(),
            fpu().opcode(),
            fpu().fip(),
            fpu().fdp(),
            {}};
    for (int i = 0; i < 8; ++i) s.st[i] = fpu().physical_register(i);
    return s;
  }
  void ExpectSame(const State& a, const State& b) {
    EXPECT_EQ(a.cw, b.cw);
    EXPECT_EQ(a.sw, b.sw);
    EXPECT_EQ(a.tw, b.tw);
    if (!operand16_) {  // the 16-bit protected image has no opcode
      EXPECT_EQ(a.fop, b.fop);
    }
    EXPECT_EQ(a.fip, b.fip);
    EXPECT_EQ(a.fdp, b.fdp);
    for (int i = 0; i < 8; ++i) EXPECT_EQ(a.st[i], b.st[i]) << i;
  }
  void RoundTrip(bool operand16) {
    operand16_ = operand16;
    Poke(kData, 0x7F800000, 4);  // +inf
    RunOk(kFninit);
    LoadCw(0x0B7E);
    RunOk(Cat({kFld1, kFldz, {0xD9, 0xEB}, M(0xD9, 0, kData), {0xDD, 0xC1}}));  // FFREE ST(1)
    Poke(kData + 4, 0x00000001, 4);  // a single denormal: DE
    RunOk(M(0xD8, 0, kData + 4));    // FADD m32
    const State before = Capture();
    EXPECT_EQ(before.tw & 0x3, 3);  // R0..R3 empty ... sanity of the setup below
    std::vector<uint8_t> save = M(0xDD, 6, kData + 0x100);
    std::vector<uint8_t> restore = M(0xDD, 4, kData + 0x100);
    if (operand16) {
      save.insert(save.begin(), 0x66);
      restore.insert(restore.begin(), 0x66);
    }
    RunOk(save);
    EXPECT_EQ(fpu().control_word(), 0x037F);
    EXPECT_EQ(fpu().tag_word(), 0xFFFF);
    const int step = operand16 ? 2 : 4;
    EXPECT_EQ(Peek(kData + 0x100, 2), before.cw);
    EXPECT_EQ(Peek(kData + 0x100 + step, 2), before.sw);
    EXPECT_EQ(Peek(kData + 0x100 + 2 * step, 2), before.tw);
    const int env = operand16 ? 14 : 28;
    // ST(0) first: the FADD's result (inf + denormal = inf).
    EXPECT_EQ(Peek(kData + 0x100 + env, 8), 0x8000000000000000u);
    EXPECT_EQ(Peek(kData + 0x100 + env + 8, 2), 0x7FFFu);
    if (!operand16) {  // 32-bit protected layout: FIP, opcode:FCS, FDP, FDS
      EXPECT_EQ(Peek(kData + 0x100 + 12, 4), before.fip);
      EXPECT_EQ(Peek(kData + 0x100 + 16, 4),
                uint64_t{before.fop} << 16 | cpu_.segment(kCs).selector);
      EXPECT_EQ(Peek(kData + 0x100 + 20, 4), kData + 4);
    }
    RunOk(restore);
    ExpectSame(Capture(), before);
  }
  bool operand16_ = false;
};

TEST_F(X87Save, RoundTrip32) { RoundTrip(false); }

// A state set from outside (an initial machine state) is the one FSAVE then stores.
TEST_F(X87Save, StateFromOutsideMatchesTheSaveImage) {
  FpuState s;
  s.physical[3] = kOne;
  s.physical[4] = F(0x7FFF, 0xC000000000000000);
  s.cw = 0x0A7F;
  s.sw = 0x1805;  // TOP = 3, ZE and IE
  s.tw = 0xFE3F;  // R3 valid, R4 special, the rest empty
  s.fcs = 0x23;
  s.fip = 0x1234;
  s.fds = 0x2B;
  s.fdp = 0x5678;
  s.opcode = 0x1E8;
  cpu_.fpu().set_state(s);
  const FpuState back = fpu().state();
  EXPECT_EQ(back.sw, s.sw);
  EXPECT_EQ(back.tw, s.tw);
  EXPECT_EQ(back.cw, s.cw);
  EXPECT_EQ(back.physical, s.physical);
  EXPECT_EQ(fpu().st(0), kOne);
  RunOk(M(0xDD, 6, kData + 0x100));  // FNSAVE m108
  EXPECT_EQ(Peek(kData + 0x100, 2), 0x0A7Fu);
  EXPECT_EQ(Peek(kData + 0x104, 2), 0x1805u);
  EXPECT_EQ(Peek(kData + 0x108, 2), 0xFE3Fu);
  EXPECT_EQ(Peek(kData + 0x10C, 4), 0x1234u);
  EXPECT_EQ(Peek(kData + 0x110, 4), 0x01E80023u);
  EXPECT_EQ(Peek(kData + 0x114, 4), 0x5678u);
  EXPECT_EQ(Peek(kData + 0x118, 2), 0x2Bu);
  EXPECT_EQ(Peek(kData + 0x100 + 28, 8), kOne.signif);  // ST(0) = R3
  EXPECT_EQ(Peek(kData + 0x100 + 38 + 8, 2), 0x7FFFu);  // ST(1) = R4
}
TEST_F(X87Save, RoundTrip16) { RoundTrip(true); }

TEST_F(X87Save, RealModeImageHoldsLinearAddresses) {
  cpu_.SetReal(0, 0x0700, 0);  // DS base 0x7000
  Poke(kData, 0x3F800000, 4);
  // FNINIT; FLD dword [0x1000] (DS:0x1000 = 0x8000); FNSTENV [0x1100] (16-bit real layout).
  RunOk({0xDB, 0xE3, 0xD9, 0x06, 0x00, 0x10, 0xD9, 0x36, 0x00, 0x11});
  const uint32_t image = 0x7000 + 0x1100;
  EXPECT_EQ(Peek(image + 6, 2), 0x1002u);   // IP 15..0 of linear 0x01002
  EXPECT_EQ(Peek(image + 8, 2), 0x0106u);   // IP 19..16 = 0, opcode 1:06
  EXPECT_EQ(Peek(image + 10, 2), 0x8000u);  // operand linear 0x08000
  EXPECT_EQ(Peek(image + 12, 2), 0x0000u);
  // The 32-bit real layout, and FLDENV of it brings the pointers back as stored.
  RunOk({0x66, 0xD9, 0x36, 0x00, 0x12});
  EXPECT_EQ(Peek(0x7000 + 0x1200 + 12, 2), 0x1002u);
  EXPECT_EQ(Peek(0x7000 + 0x1200 + 16, 4), 0x0106u);
  EXPECT_EQ(Peek(0x7000 + 0x1200 + 20, 2), 0x8000u);
  RunOk({0x66, 0xD9, 0x26, 0x00, 0x12, 0xD9, 0x36, 0x00, 0x13});  // FLDENV m28, FNSTENV m14
  for (int i = 0; i < 14; ++i) EXPECT_EQ(Peek(0x7000 + 0x1300 + i, 1), Peek(image + i, 1)) << i;
}

TEST_F(X87, AStoreThatFaultsLeavesTheFpuAlone) {
  cpu_.SetReal(0, 0, 0);
  RunOk({0xDB, 0xE3, 0xD9, 0xE8});  // FNINIT, FLD1
  Run({0xDD, 0x1E, 0xFC, 0xFF});    // FSTP qword [0xFFFC]: beyond the 64 KB limit
  ASSERT_TRUE(cpu_.exception().pending);
  EXPECT_EQ(cpu_.exception().vector, kVecGeneralProtection);
  EXPECT_EQ(fpu().top(), 7);
  EXPECT_EQ(fpu().st(0), kOne);
}

}  // namespace
}  // namespace citcat::x86
