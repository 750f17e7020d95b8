// The core against Unicorn, instruction by instruction: random instruction streams and compiled
// C programs. Together these compare well over 10 million instruction boundaries per run.
#include <unicorn/mips.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "cat_parser/record.h"
#include "gtest/gtest.h"
#include "tests/simcore/random_program.h"
#include "tests/simcore/unicorn_lockstep.h"

namespace citcat::mips {
namespace {

uint64_t RunRandomPrograms(uint32_t first_seed, int count, int iterations, bool big_endian = true) {
  uint64_t total = 0, exceptions = 0;
  for (uint32_t seed = first_seed; seed < first_seed + count; ++seed) {
    RandomProgramOptions options;
    options.seed = seed;
    options.iterations = iterations;
    const RandomProgram p = GenerateRandomProgram(options);
    CpuConfig config;
    config.big_endian = big_endian;
    UnicornLockstep ls(config);
    ls.WriteWords(0x1000, p.words);
    ls.Write(0x100000, p.data);
    ls.Write(0x200000, p.data);
    const UnicornLockstep::Result r = ls.Run(RandomProgram::kCodeBase, p.end, 100'000'000);
    EXPECT_EQ(r.mismatch, "") << "seed " << seed;
    EXPECT_EQ(ls.CompareMemory(0x100000, RandomProgram::kDataBytes), "") << "seed " << seed;
    EXPECT_EQ(ls.CompareMemory(0x200000, RandomProgram::kDataBytes), "") << "seed " << seed;
    if (!r.mismatch.empty()) break;
    total += r.compared;
    exceptions += r.exceptions;
  }
  EXPECT_GT(exceptions, 0u);
  std::printf("random programs %u..%u: %llu instructions compared, %llu exceptions\n", first_seed,
              first_seed + count - 1, static_cast<unsigned long long>(total),
              static_cast<unsigned long long>(exceptions));
  return total;
}

// Split in shards so that the suite runs them in parallel.
TEST(UnicornLockstep, RandomProgramsShard1) {
  EXPECT_GE(RunRandomPrograms(1, 60, 100), 1'500'000u);
}
TEST(UnicornLockstep, RandomProgramsShard2) {
  EXPECT_GE(RunRandomPrograms(1001, 60, 100), 1'500'000u);
}
TEST(UnicornLockstep, RandomProgramsShard3) {
  EXPECT_GE(RunRandomPrograms(2001, 60, 100), 1'500'000u);
}

// Little-endian: the same instruction classes, with the unaligned pairs in the other order.
TEST(UnicornLockstep, RandomProgramsLittleEndian) {
  EXPECT_GE(RunRandomPrograms(3001, 40, 60, /*big_endian=*/false), 600'000u);
}

// The harness must notice a divergence: a register only our side has changed...
TEST(UnicornLockstep, DetectsRegisterDivergence) {
  const RandomProgram p = GenerateRandomProgram({});
  UnicornLockstep ls;
  ls.WriteWords(0x1000, p.words);
  ls.cpu().set_gpr(27, 5);  // $27 is only written by JR groups, so the start differs
  EXPECT_NE(ls.Run(RandomProgram::kCodeBase, p.end, 1000).mismatch, "");
}

// ...and memory that differs.
TEST(UnicornLockstep, DetectsMemoryDivergence) {
  const RandomProgram p = GenerateRandomProgram({});
  UnicornLockstep ls;
  ls.WriteWords(0x1000, p.words);
  const uint8_t one = 1;
  ls.cpu().bus().Write({cat::RecordKind::kUncachedWrite, 0, 0, 0x100010, 0, {&one, 1}});
  EXPECT_NE(ls.CompareMemory(0x100000, 64), "");
}

// Oracle defect, documented: QEMU (hence Unicorn) divides by one when the divisor is zero, so
// LO = dividend and HI = 0; the R4400 gives LO = -1 (dividend >= 0) and HI = dividend. The
// harness copies our HI/LO into Unicorn after such a division.
TEST(UnicornOracle, DivideByZeroDiffersFromR4400) {
  uc_engine* uc;
  ASSERT_EQ(uc_open(UC_ARCH_MIPS, static_cast<uc_mode>(UC_MODE_MIPS32 | UC_MODE_BIG_ENDIAN), &uc),
            UC_ERR_OK);
  uc_mem_map(uc, 0, 0x10000, UC_PROT_ALL);
  const uint8_t code[] = {0x00, 0x20, 0x00, 0x1A};  // div $1, $0
  uc_mem_write(uc, 0x1000, code, sizeof(code));
  uint32_t seven = 7;
  uc_reg_write(uc, UC_MIPS_REG_1, &seven);
  ASSERT_EQ(uc_emu_start(uc, 0x80001000, 0x80001004, 0, 0), UC_ERR_OK);
  uint32_t lo = 0, hi = 0;
  uc_reg_read(uc, UC_MIPS_REG_LO, &lo);
  uc_reg_read(uc, UC_MIPS_REG_HI, &hi);
  uc_close(uc);
  EXPECT_EQ(lo, 7u);
  EXPECT_EQ(hi, 0u);
}

// The compiled guest programs, when the build had the MIPS cross compiler.
#ifdef CITCAT_GUEST_DIR
constexpr uint64_t kGuestEnd = 0x8000100C;  // crt0's _end

std::vector<uint8_t> ReadGuest(const char* name) {
  std::ifstream f(std::string(CITCAT_GUEST_DIR) + "/" + name + ".bin", std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

void RunGuest(const char* name, uint64_t min_instructions, const CpuConfig& config = {}) {
  const std::vector<uint8_t> image = ReadGuest(name);
  ASSERT_FALSE(image.empty()) << name;
  UnicornLockstep ls(config);
  ls.Write(0x1000, image);
  const UnicornLockstep::Result r = ls.Run(0x80001000, kGuestEnd, 1'000'000'000);
  EXPECT_EQ(r.mismatch, "") << name;
  // The whole program image, data and stack as the CPU sees them.
  EXPECT_EQ(ls.CompareMemory(0x1000, 0x40000), "") << name;
  EXPECT_EQ(ls.CompareMemory(0x3F0000, 0x10000), "") << name;
  EXPECT_GE(r.compared, min_instructions) << name;
  std::printf("%s: %llu instructions compared\n", name,
              static_cast<unsigned long long>(r.compared));
}

TEST(UnicornLockstep, CompiledSort) { RunGuest("sort", 1'000'000); }
TEST(UnicornLockstep, CompiledHash) { RunGuest("hash", 1'000'000); }
TEST(UnicornLockstep, CompiledCompress) { RunGuest("compress", 500'000); }

// The same programs with a small secondary cache and 16-byte primary lines: many secondary
// evictions, each of which must first pull the primaries' dirty lines back (inclusion).
TEST(UnicornLockstep, CompiledWithSecondaryCache) {
  CpuConfig config;
  config.icache_line = 16;
  config.dcache_line = 16;
  config.scache_bytes = 16 * 1024;
  config.scache_line = 128;
  RunGuest("compress", 500'000, config);
  RunGuest("hash", 1'000'000, config);
  RunGuest("sort", 1'000'000, config);
}
#endif  // CITCAT_GUEST_DIR

}  // namespace
}  // namespace citcat::mips
