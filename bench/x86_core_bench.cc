// Speed of the i486 core on compiled code with the cache model on, against Unicorn (QEMU's x86
// TCG) with the per-instruction and memory hooks a tracer needs, on the same code in the same
// run. The "ratio" counter is core speed / Unicorn speed. The program (bench/x86_programs/) runs
// in flat 32-bit code at CPL 0 from 0x100000 and ends with HLT.
#include <unicorn/unicorn.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/peer.h"
#include "benchmark/benchmark.h"
#include "machine/elf_loader.h"
#include "simcore/ram_bus.h"
#include "simcore/x86/cpu.h"

namespace citcat::x86 {
namespace {

constexpr size_t kRam = 4 << 20;

struct Program {
  std::vector<std::pair<uint32_t, std::vector<uint8_t>>> segments;
  uint32_t entry = 0;
};

Program Load(const std::string& path) {
  absl::StatusOr<machine::ElfImage> elf = machine::LoadElfFile(path);
  if (!elf.ok()) std::abort();
  Program p;
  for (const machine::ElfSegment& s : elf->segments) {
    std::vector<uint8_t> bytes = s.data;
    bytes.resize(s.memsz, 0);
    p.segments.push_back({static_cast<uint32_t>(s.vaddr), std::move(bytes)});
  }
  p.entry = static_cast<uint32_t>(elf->entry);
  return p;
}

// Runs the program on the core to its HLT; returns seconds and the instructions and EAX.
double RunCore(const Program& p, uint64_t* instructions, uint32_t* result) {
  simcore::RamBus bus(kRam);
  for (const auto& [address, bytes] : p.segments) bus.Poke(address, bytes);
  Cpu cpu(bus);
  cpu.SetFlat32();
  cpu.set_eip(p.entry);
  const double t0 = bench::ThreadSeconds();
  while (!cpu.halted() && !cpu.exception().pending) cpu.Run(1 << 20);
  const double t1 = bench::ThreadSeconds();
  if (cpu.exception().pending) std::abort();
  *instructions = cpu.retired();
  *result = cpu.reg(kEax);
  return t1 - t0;
}

// The same on Unicorn with UC_HOOK_CODE and UC_HOOK_MEM_READ|WRITE; returns seconds.
double RunUnicorn(const Program& p, uint64_t* instructions, uint32_t* result) {
  uc_engine* uc;
  uc_open(UC_ARCH_X86, UC_MODE_32, &uc);
  uc_mem_map(uc, 0, kRam, UC_PROT_ALL);
  for (const auto& [address, bytes] : p.segments) {
    uc_mem_write(uc, address, bytes.data(), bytes.size());
  }
  bench::HookCounts counts;
  bench::AddTracerHooks(uc, &counts);
  const double t0 = bench::ThreadSeconds();
  uc_emu_start(uc, p.entry, 0xFFFFFFFF, 0, 0);  // ends at the HLT
  const double t1 = bench::ThreadSeconds();
  uc_reg_read(uc, UC_X86_REG_EAX, result);
  uc_close(uc);
  *instructions = counts.code;
  return t1 - t0;
}

void CoreVsUnicorn(benchmark::State& state, const std::string& path) {
  const Program p = Load(path);
  double core = 0, unicorn = 0;
  uint64_t n_core = 0, n_unicorn = 0;
  for (auto _ : state) {
    uint32_t r1 = 0, r2 = 0;
    core += RunCore(p, &n_core, &r1);
    unicorn += RunUnicorn(p, &n_unicorn, &r2);
    if (r1 != r2) state.SkipWithError("the core and Unicorn computed different results");
  }
  const double iterations = static_cast<double>(state.iterations());
  state.counters["core_Minstr_per_s"] = n_core * iterations / core / 1e6;
  state.counters["unicorn_Minstr_per_s"] = n_unicorn * iterations / unicorn / 1e6;
  state.counters["ratio"] = (n_core / core) / (n_unicorn / unicorn);
  state.counters["instructions"] = static_cast<double>(n_core);
  state.counters["unicorn_instructions"] = static_cast<double>(n_unicorn);
}

// The benchmark's own program, and where the lock-step tests' compiled workloads are built, the
// R4400 integer workloads and a 64-bit integer program as flat i486 programs at -O2 (salt 0). fp
// is left out: Unicorn does not bring it to its HLT.
void RegisterPrograms() {
  const auto add = [](const std::string& name, const std::string& path) {
    benchmark::RegisterBenchmark(("CoreVsUnicorn/" + name).c_str(), CoreVsUnicorn, path)
        ->Unit(benchmark::kMillisecond)
        ->Iterations(3);
  };
  add("kernels", CITCAT_X86_PROGRAMS "/kernels.elf");
#ifdef CITCAT_X86_GUESTS
  for (const char* name : {"sort", "hash", "compress", "chase", "memcpy", "int64"}) {
    add(name, std::string(CITCAT_X86_GUESTS "/") + name + ".O2.elf");
  }
#endif
}

}  // namespace
}  // namespace citcat::x86

int main(int argc, char** argv) {
  citcat::x86::RegisterPrograms();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
