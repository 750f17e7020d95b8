// Speed of the R4400 core on compiled guest code with the cache model on, against Unicorn
// (QEMU's MIPS32 TCG) with the per-instruction and memory hooks a tracer needs, on the same code
// in the same run. The "ratio" counter is core speed / Unicorn speed.
#include <unicorn/unicorn.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "bench/peer.h"
#include "benchmark/benchmark.h"
#include "simcore/mips/cpu.h"
#include "simcore/ram_bus.h"

namespace citcat::mips {
namespace {

constexpr uint64_t kStart = 0xFFFFFFFF80001000ull;
constexpr uint64_t kEnd = 0xFFFFFFFF8000100Cull;  // crt0's _end
constexpr size_t kRam = 8 << 20;

std::vector<uint8_t> Guest(const std::string& name) {
  std::ifstream f(std::string(CITCAT_GUEST_DIR) + "/" + name + ".bin", std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

// Instructions from start to end, found once by stepping.
uint64_t CountInstructions(const std::vector<uint8_t>& image) {
  simcore::RamBus bus(kRam);
  bus.Poke(0x1000, image);
  Cpu cpu(bus);
  cpu.WriteCp0(kCp0Status, 0);
  cpu.SetPc(kStart);
  uint64_t n = 0;
  while (cpu.pc() != kEnd && n < 1'000'000'000) n += cpu.Run(1);
  return n;
}

// Runs the program on our core; returns seconds.
double RunCore(const std::vector<uint8_t>& image, uint64_t n) {
  simcore::RamBus bus(kRam);
  bus.Poke(0x1000, image);
  Cpu cpu(bus);
  cpu.WriteCp0(kCp0Status, 0);
  cpu.SetPc(kStart);
  const double t0 = bench::ThreadSeconds();
  cpu.Run(n);
  const double t1 = bench::ThreadSeconds();
  if (cpu.pc() != kEnd) std::abort();
  return t1 - t0;
}

// Runs the program on Unicorn with UC_HOOK_CODE and UC_HOOK_MEM_READ|WRITE; returns seconds.
double RunUnicorn(const std::vector<uint8_t>& image, uint64_t* instructions,
                  uint64_t* mem_accesses = nullptr) {
  uc_engine* uc;
  uc_open(UC_ARCH_MIPS, static_cast<uc_mode>(UC_MODE_MIPS32 | UC_MODE_BIG_ENDIAN), &uc);
  uc_mem_map(uc, 0, kRam, UC_PROT_ALL);
  uc_mem_write(uc, 0x1000, image.data(), image.size());
  bench::HookCounts counts;
  bench::AddTracerHooks(uc, &counts);
  const double t0 = bench::ThreadSeconds();
  uc_emu_start(uc, 0x80001000, 0x8000100C, 0, 0);
  const double t1 = bench::ThreadSeconds();
  uc_close(uc);
  *instructions = counts.code;
  if (mem_accesses) *mem_accesses = counts.mem;
  return t1 - t0;
}

void BM_CoreVsUnicorn(benchmark::State& state, const std::string& name) {
  const std::vector<uint8_t> image = Guest(name);
  if (image.empty()) {
    state.SkipWithError("guest program not built");
    return;
  }
  const uint64_t n = CountInstructions(image);
  double core_s = 0, uc_s = 0;
  uint64_t core_n = 0, uc_n = 0;
  for (auto _ : state) {
    core_s += RunCore(image, n);
    core_n += n;
    uint64_t k = 0, m = 0;
    uc_s += RunUnicorn(image, &k, &m);
    uc_n += k;
    state.counters["unicorn_mem_hooks"] = static_cast<double>(m);
    state.counters["unicorn_code_hooks"] = static_cast<double>(k);
  }
  const double core_mips = core_n / core_s / 1e6, uc_mips = uc_n / uc_s / 1e6;
  state.counters["core_Minstr_s"] = core_mips;
  state.counters["unicorn_Minstr_s"] = uc_mips;
  state.counters["ratio"] = core_mips / uc_mips;
  state.counters["instructions"] = static_cast<double>(n);
}

// The core alone; only Run() is timed (not building the 8 MB RAM and the CPU).
void BM_Core(benchmark::State& state, const std::string& name) {
  const std::vector<uint8_t> image = Guest(name);
  const uint64_t n = CountInstructions(image);
  for (auto _ : state) state.SetIterationTime(RunCore(image, n));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}

BENCHMARK_CAPTURE(BM_CoreVsUnicorn, sort, std::string("sort"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_CoreVsUnicorn, hash, std::string("hash"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_CoreVsUnicorn, compress, std::string("compress"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Core, sort, std::string("sort"))
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Core, hash, std::string("hash"))
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Core, compress, std::string("compress"))
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace citcat::mips

BENCHMARK_MAIN();
