// A CPU on 8 MB of logged RAM, in kernel mode with BEV=ERL=0, for hand-written programs.
#ifndef CITCAT_TESTS_SIMCORE_CPU_FIXTURE_H_
#define CITCAT_TESTS_SIMCORE_CPU_FIXTURE_H_

#include <cstdint>
#include <initializer_list>
#include <memory>

#include "gtest/gtest.h"
#include "simcore/mips/cpu.h"
#include "simcore/ram_bus.h"
#include "tests/simcore/mips_asm.h"

namespace citcat::mips {

class CpuTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kCode = 0xFFFFFFFF80001000ull;  // kseg0, physical 0x1000
  static constexpr uint64_t kData = 0xFFFFFFFF80100000ull;  // kseg0, physical 0x100000

  explicit CpuTest(CpuConfig config = {})
      : bus_(8 << 20), cpu_(std::make_unique<Cpu>(bus_, config)) {
    cpu_->WriteCp0(kCp0Status, 0);  // kernel, BEV=0, ERL=0, interrupts off
    cpu_->SetPc(kCode);
  }

  static uint64_t Phys(uint64_t kseg0) { return kseg0 & 0x1FFFFFFF; }

  // Writes words at a kseg0/kseg1 address (straight into RAM).
  void Put(uint64_t vaddr, std::initializer_list<uint32_t> words) {
    uint64_t pa = Phys(vaddr);
    for (uint32_t w : words) {
      bus_.PokeWordBE(pa, w);
      pa += 4;
    }
  }
  void Load(std::initializer_list<uint32_t> words) { Put(kCode, words); }
  // Runs until the PC reaches `end` (or `limit` steps).
  void RunTo(uint64_t end, int limit = 10000) {
    for (int i = 0; i < limit && cpu_->pc() != end; ++i) cpu_->Step();
    ASSERT_EQ(cpu_->pc(), end);
  }
  // Runs the loaded program whose last word is at kCode + 4*(n-1).
  void RunWords(int n) { RunTo(kCode + 4 * n); }
  uint64_t R(int i) const { return cpu_->gpr(i); }

  simcore::RamBus bus_;
  std::unique_ptr<Cpu> cpu_;
};

}  // namespace citcat::mips

#endif  // CITCAT_TESTS_SIMCORE_CPU_FIXTURE_H_
