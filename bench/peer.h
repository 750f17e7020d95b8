// What the core benchmarks share: the clock they time with, and the hooks a tracer built on
// Unicorn needs (a callback per instruction and per memory access), the peer each core is
// measured against.
#ifndef CITCAT_BENCH_PEER_H_
#define CITCAT_BENCH_PEER_H_

#include <time.h>
#include <unicorn/unicorn.h>

#include <cstdint>

namespace citcat::bench {

// Thread CPU time: the machine is shared, so wall time would measure the neighbours too.
inline double ThreadSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

// Counts what the hooks saw: instructions and memory accesses.
struct HookCounts {
  uint64_t code = 0, mem = 0;
};

// Adds UC_HOOK_CODE and UC_HOOK_MEM_READ|WRITE over all addresses, counting into `counts`.
inline void AddTracerHooks(uc_engine* uc, HookCounts* counts) {
  struct Hooks {
    static void OnCode(uc_engine*, uint64_t, uint32_t, void* user) {
      ++static_cast<HookCounts*>(user)->code;
    }
    static void OnMem(uc_engine*, uc_mem_type, uint64_t, int, int64_t, void* user) {
      ++static_cast<HookCounts*>(user)->mem;
    }
  };
  uc_hook code, mem;
  uc_hook_add(uc, &code, UC_HOOK_CODE, reinterpret_cast<void*>(&Hooks::OnCode), counts, 1, 0);
  uc_hook_add(uc, &mem, UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE,
              reinterpret_cast<void*>(&Hooks::OnMem), counts, 1, 0);
}

}  // namespace citcat::bench

#endif  // CITCAT_BENCH_PEER_H_
