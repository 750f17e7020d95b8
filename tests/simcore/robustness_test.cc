// Arbitrary instruction words with arbitrary register values, CP0 writes, TLB writes, CACHE
// operations and ERETs included: the core must keep going without crashing or undefined
// behaviour (this test matters most under ASan/UBSan).
#include <random>

#include "gtest/gtest.h"
#include "simcore/mips/cpu.h"
#include "simcore/ram_bus.h"

namespace citcat::mips {
namespace {

uint32_t RandomWord(std::mt19937& rng) {
  const uint32_t w = static_cast<uint32_t>(rng());
  switch (rng() % 4) {
    case 0:
      return w;  // anything at all
    case 1:
      return (w & 0x03FFFFFF) | (0x10u << 26);  // COP0: MTC0/DMTC0/TLB*/ERET
    case 2:
      return (w & 0x03FFFFFF) | (0x2Fu << 26);  // CACHE
    default:
      return w & 0xFC00FFFF;  // base register $0: kseg0/kuseg targets
  }
}

TEST(Robustness, RandomWordsNeverCrash) {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    std::mt19937 rng(seed);
    simcore::RamBus bus(1 << 20);
    CpuConfig config;
    config.big_endian = seed % 2;
    config.icache_line = seed % 3 ? 32 : 16;
    config.scache_bytes = seed % 5 == 0 ? 32 * 1024 : 0;
    config.scache_line = 16;  // below the primary line size: raised to it
    Cpu cpu(bus, config);
    cpu.WriteCp0(kCp0Status, 0);
    // Random code everywhere the CPU may go in RAM (both byte orders read the same words).
    for (uint64_t a = 0; a < (1 << 20); a += 4) {
      const uint32_t w = RandomWord(rng);
      const uint8_t b[4] = {uint8_t(w >> 24), uint8_t(w >> 16), uint8_t(w >> 8), uint8_t(w)};
      bus.Poke(a, b);
    }
    for (int r = 1; r < 32; ++r) {
      const uint64_t v = rng() % 3 == 0 ? 0xFFFFFFFF80000000ull + (rng() & 0xFFFFF) : rng() * rng();
      cpu.set_gpr(r, v);
    }
    cpu.SetPc(0xFFFFFFFF80001000ull);
    for (int k = 0; k < 100; ++k) {
      cpu.Run(500);
      if (rng() % 4 == 0) cpu.SetInterruptLine(2 + rng() % 6, rng() % 2);
      if (rng() % 8 == 0) cpu.Nmi();
      // Keep the CPU in RAM most of the time: the boot ROM space reads as all ones.
      if (!(cpu.pc() >= 0xFFFFFFFF80000000ull && cpu.pc() < 0xFFFFFFFF80100000ull)) {
        cpu.WriteCp0(kCp0Status, rng() % 2 ? 0 : (rng() & 0xFFFFFFFF));
        cpu.SetPc(0xFFFFFFFF80000000ull + (rng() & 0xFFFFC));
      }
    }
    EXPECT_GT(cpu.steps(), 0u);
  }
}

}  // namespace
}  // namespace citcat::mips

namespace citcat::mips {
namespace {

TEST(Robustness, HostileCacheGeometryIsRejectedAndReplaced) {
  CpuConfig bad;
  bad.icache_line = 0;
  bad.dcache_bytes = 12345;
  bad.scache_bytes = 3;
  EXPECT_FALSE(ValidateCpuConfig(bad).ok());
  EXPECT_TRUE(ValidateCpuConfig(CpuConfig{}).ok());
  simcore::RamBus bus(1 << 16);
  Cpu cpu(bus, bad);  // falls back to the defaults instead of dividing by zero
  EXPECT_EQ(cpu.icache().line_bytes(), CpuConfig{}.icache_line);
  EXPECT_EQ(cpu.dcache().size(), CpuConfig{}.dcache_bytes);
  EXPECT_EQ(cpu.scache(), nullptr);
  cpu.Run(100);
}

}  // namespace
}  // namespace citcat::mips
