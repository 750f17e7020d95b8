// MIPS III 64-bit mode against QEMU user mode, on seeded random instruction streams.
#include "tests/simcore/qemu_lockstep.h"

#include <cstdio>
#include <filesystem>

#include "gtest/gtest.h"
#include "tests/simcore/random_program.h"

namespace citcat::mips {
namespace {

std::vector<uint8_t> Image(const RandomProgram& p, uint64_t data_offset) {
  std::vector<uint8_t> image(data_offset + p.data.size(), 0);
  for (size_t i = 0; i < p.words.size(); ++i) {
    for (int k = 0; k < 4; ++k) image[4 * i + k] = static_cast<uint8_t>(p.words[i] >> (24 - 8 * k));
  }
  std::copy(p.data.begin(), p.data.end(), image.begin() + data_offset);
  return image;
}

TEST(QemuLockstep, RandomSixtyFourBitPrograms) {
  if (!QemuAvailable()) GTEST_SKIP() << "qemu-mipsn32 not installed";
  const std::string dir = ::testing::TempDir() + "/simcore_qemu";
  std::filesystem::create_directories(dir);
  uint64_t total = 0, unpredictable = 0;
  constexpr uint64_t kDataOffset = 0x10000;
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    RandomProgramOptions o;
    o.seed = seed;
    o.mode64 = true;
    o.exceptions = false;
    o.groups = 250;
    o.iterations = 16;
    o.code_base = kQemuImageBase;
    o.data_base = kQemuImageBase + kDataOffset;
    const RandomProgram p = GenerateRandomProgram(o);
    const QemuLockstepResult r = RunAgainstQemu(Image(p, kDataOffset), dir);
    ASSERT_EQ(r.error, "") << "seed " << seed;
    ASSERT_EQ(r.mismatch, "") << "seed " << seed;
    total += r.compared;
    unpredictable += r.unpredictable;
  }
  std::printf("QEMU 64-bit: %llu boundaries compared, %llu unpredictable operations\n",
              static_cast<unsigned long long>(total),
              static_cast<unsigned long long>(unpredictable));
  EXPECT_GT(total, 100000u);
}

}  // namespace
}  // namespace citcat::mips
