// Seeded random streams of i486 integer instructions, for lock-step checks against other models:
// Unicorn (x86_lockstep_test.cc) and the full-system oracles on a bare-metal ROM
// (x86_random_rom_test.cc). Every class of integer instruction, with and without operand-size,
// address-size, segment and LOCK prefixes. Memory operands are [EDI + disp8] ([DI + disp8] in
// 16-bit code) into the data; the layout below is where the stack and the data must be.
#ifndef CITCAT_TESTS_SIMCORE_X86_RANDOM_STREAM_H_
#define CITCAT_TESTS_SIMCORE_X86_RANDOM_STREAM_H_

#include <cstdint>
#include <random>
#include <vector>

#include "simcore/x86/cpu.h"

namespace citcat::x86::testing {

// The layout a stream expects. Flat 32-bit code: EDI = kData, ESP = kStackTop. Real mode: DS, ES,
// FS and GS = kRealDs with DI = 0, SS = kRealSs with SP = FFF0h.
constexpr uint32_t kData = 0x20000;  // EDI points here; memory operands are [EDI + disp8]
constexpr uint32_t kDataBytes = 0x100;
constexpr uint32_t kStackTop = 0x30000;
constexpr uint32_t kCounter = kData + 0x200;  // passes left over the stream
constexpr uint8_t kLoops = 10;
constexpr uint16_t kRealDs = kData >> 4, kRealSs = (kStackTop >> 4) - 0x1000;

// Registers a random operand may name: never ESP (the stack) or EDI (the data pointer).
constexpr uint8_t kFree[] = {kEax, kEcx, kEdx, kEbx, kEbp, kEsi};

// Random instruction streams for 32-bit flat code or 16-bit real-mode code. Memory operands are
// [EDI + disp8] ([DI + disp8] in 16-bit code) into the data; the stack and the data are where
// `Layout` puts them.
class Generator {
 public:
  Generator(uint32_t seed, bool code16) : rng_(seed), code16_(code16) {}

  std::vector<uint8_t> Stream(int instructions) {
    code_.clear();
    for (int i = 0; i < instructions; ++i) One();
    return code_;
  }

 private:
  uint32_t Next() { return rng_(); }
  int Pick(int n) { return static_cast<int>(Next() % n); }
  uint8_t Free() { return kFree[Pick(6)]; }
  void Byte(uint32_t b) { code_.push_back(static_cast<uint8_t>(b)); }
  // An immediate of the code's default operand size.
  void ImmDefault(uint32_t v) {
    for (int i = 0; i < (code16_ ? 2 : 4); ++i) Byte(v >> (8 * i));
  }
  // An address in the data, or on the stack, as an offset in the code's terms.
  uint32_t Data(uint32_t offset) const { return code16_ ? offset : kData + offset; }
  uint32_t Stack(uint32_t below_top) const {
    return code16_ ? 0x10000 - below_top : kStackTop - below_top;
  }
  void Imm(int size) {
    const uint32_t v = Next();
    for (int i = 0; i < size; ++i) Byte(v >> (8 * i));
  }
  // A ModRM with `reg` in its reg field: a free register, or [EDI + disp8].
  void Modrm(uint8_t reg, bool byte_rm, bool memory_only = false) {
    if (memory_only || Pick(2)) {
      // [DI + disp8] or [EDI + disp8]. With the address size flipped, flat code addresses the
      // low 64 KB (DI = 0) and real-mode code the same data (EDI < 64 K).
      Byte(0x40 | reg << 3 | (code16_ != addr_flip_ ? 5 : kEdi));
      // Real-mode code with 32-bit addresses: no negative displacement (past the 64 KB limit,
      // #GP on the i486, unchecked by Unicorn).
      Byte(Pick(code16_ && addr_flip_ ? 0x80 : kDataBytes - 4));
    } else {
      Byte(0xC0 | reg << 3 | (byte_rm ? Pick(8) : Free()));
    }
  }
  // A register in a reg field: any byte register, or a free word register.
  uint8_t RegField(bool byte) { return byte ? static_cast<uint8_t>(Pick(8)) : Free(); }

  void One();

  std::mt19937 rng_;
  const bool code16_;
  bool addr_flip_ = false;   // this instruction has an address-size prefix
  bool lock_ = false;        // this instruction has a LOCK prefix
  bool shift_by_cl = false;  // a double shift by CL
  std::vector<uint8_t> code_;
};

// A stream of `length` instructions that runs kLoops times over itself (DEC the counter at
// kCounter, JNZ back), each pass on the registers, flags and data the last one left; then the
// bytes after it run. The counter must hold kLoops before the first pass.
std::vector<uint8_t> LoopedStream(uint32_t seed, int length, bool code16);

}  // namespace citcat::x86::testing

#endif  // CITCAT_TESTS_SIMCORE_X86_RANDOM_STREAM_H_
