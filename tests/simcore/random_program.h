// Seeded generator of random but valid MIPS32 (R4400-compatible) instruction streams for the
// Unicorn lock-step test: every integer opcode class Unicorn can check, with delay slots,
// branch-likely forms, traps and the occasional deliberate exception.
#ifndef CITCAT_TESTS_SIMCORE_RANDOM_PROGRAM_H_
#define CITCAT_TESTS_SIMCORE_RANDOM_PROGRAM_H_

#include <cstdint>
#include <vector>

namespace citcat::mips {

struct RandomProgramOptions {
  uint32_t seed = 1;
  int groups = 300;        // instruction groups in the loop body
  int iterations = 40;     // times the body runs
  bool exceptions = true;  // traps, overflows, SYSCALL/BREAK, misaligned accesses
  // MIPS III 64-bit mode: 64-bit register values and operations, at `code_base`/`data_base`
  // (for QEMU user mode), no uncached area, divisors forced odd, SYSCALL exit at the end.
  bool mode64 = false;
  uint64_t code_base = 0x80001000;
  uint64_t data_base = 0x80100000;
};

struct RandomProgram {
  static constexpr uint64_t kCodeBase = 0x80001000;      // kseg0, physical 0x1000
  static constexpr uint64_t kDataBase = 0x80100000;      // cached data ($28)
  static constexpr uint64_t kUncachedBase = 0xA0200000;  // uncached data ($29)
  static constexpr uint32_t kDataBytes = 4096;

  std::vector<uint32_t> words;  // at kCodeBase (options.code_base)
  std::vector<uint8_t> data;    // initial contents of both data areas
  uint64_t end = 0;             // the address where execution stops
};

RandomProgram GenerateRandomProgram(const RandomProgramOptions& options);

}  // namespace citcat::mips

#endif  // CITCAT_TESTS_SIMCORE_RANDOM_PROGRAM_H_
