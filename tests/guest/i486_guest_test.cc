// The i486 guest (boot ROM, kernel, workloads) on the traced PC, machine::I486Machine: every
// workload's known answer on the console and the power-off at the end, and the CITCAT hooks as
// the bus shows them: the begin marker and the dump, no interrupt acknowledge inside the driver,
// an interrupt report after every acknowledge, and the state at the exact resume point (the
// dump's values, an empty TLB and an empty cache).
#include <array>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "guest/i486/expected.h"
#include "guest/i486/expected_i486.h"
#include "guest/i486/guest_paths.h"
#include "guest/i486/tools/boot.h"
#include "guest/i486/tools/guest_info.h"
#include "guest/r4400/tools/disk_image.h"
#include "machine/elf_loader.h"
#include "machine/i486/contract.h"
#include "machine/i486/machine.h"

namespace citcat::guest::i486 {
namespace {

using ::citcat::i486::kBeginMarker;
using ::citcat::i486::kReservedSize;
using ::citcat::i486::LoadLE;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr uint64_t kBase = CITCAT_I486_RESERVED_BASE;
constexpr uint64_t kBegin = kBase + CITCAT_I486_TRACE_BEGIN;
constexpr uint64_t kCpuState = kBase + CITCAT_I486_CPU_STATE;
constexpr uint64_t kStateDone = kBase + CITCAT_I486_STATE_DONE;
constexpr uint64_t kInterrupt = kBase + CITCAT_I486_INTERRUPT;
// The slots of the interrupt report, in the order the kernel stores them.
constexpr uint64_t kReportOrder[4] = {CITCAT_I486_INTERRUPT_ECX, CITCAT_I486_INTERRUPT_EIP,
                                      CITCAT_I486_INTERRUPT_CS, CITCAT_I486_INTERRUPT_EFLAGS};
constexpr uint32_t kCr0Pg = 0x80000000u, kCr0Cd = 0x40000000u, kCr0Nw = 0x20000000u, kCr0Ts = 0x8u;
constexpr uint32_t kIf = 0x200;

const std::map<std::string, uint32_t>& Expected() {
  static const auto* m = new std::map<std::string, uint32_t>{
      {"sort", EXPECT_SORT},   {"hash", EXPECT_HASH},    {"compress", EXPECT_COMPRESS},
      {"int64", EXPECT_INT64}, {"fp", EXPECT_FP},        {"memcpy", EXPECT_MEMCPY},
      {"chase", EXPECT_CHASE}, {"io", EXPECT_IO},        {"rep", EXPECT_REP},
      {"x87", EXPECT_X87},     {"mode16", EXPECT_MODE16}};
  return *m;
}

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

const machine::ElfImage& Kernel() {
  static const machine::ElfImage* kernel = [] {
    auto k = machine::LoadElfFile(CITCAT_I486_KERNEL_ELF);
    EXPECT_TRUE(k.ok()) << k.status();
    return new machine::ElfImage(k.ok() ? *k : machine::ElfImage{});
  }();
  return *kernel;
}

uint32_t Symbol(const char* name) {
  const machine::ElfSymbol* s = Kernel().FindSymbol(name);
  EXPECT_NE(s, nullptr) << name;
  return s ? static_cast<uint32_t>(s->value) : 0;
}

uint32_t Le32(const uint8_t* p) { return p[0] | p[1] << 8 | p[2] << 16 | uint32_t{p[3]} << 24; }

// What the bus showed of the hooks. The monitor checks the protocol as the records come.
struct Hooks {
  uint64_t records = 0;
  int begins = 0, dones = 0;
  uint64_t begin_retired = 0;   // the begin marker's store is instruction number ...
  uint64_t done_retired = 0;    // ... and the state-done store this one (0-based)
  uint64_t driver_records = 0;  // from the begin marker to state-done, both included
  uint64_t driver_code_reads = 0, driver_reserved_reads = 0, driver_ram_reads = 0;
  uint64_t driver_reserved_stores = 0;
  uint64_t acks_in_driver = 0, fills_in_driver = 0, ram_stores_in_driver = 0;
  std::array<uint8_t, CITCAT_I486_CPU_STATE_SIZE> dump{};  // cpu-state as stored
  uint64_t acks = 0, reports = 0;                          // after state-done
  uint64_t reports_from_idle = 0;
  uint64_t reports_from_code16 = 0;  // interrupted in the 16-bit code segment (33h)
  std::vector<std::string> errors;   // protocol violations after state-done (the first few)
};

class HookMonitor : public machine::BusMonitor {
 public:
  explicit HookMonitor(const x86::Cpu& cpu)
      : cpu_(cpu), idle_begin_(Symbol("citcat_idle_begin")), idle_end_(Symbol("citcat_idle_end")) {}

  absl::Status OnRecord(const cat::BusRecord& r) override {
    ++h.records;
    const bool store = r.kind == cat::RecordKind::kUncachedWrite;
    const bool reserved = store && r.address >= kBase && r.address < kBase + kReservedSize;
    if (reserved && r.address == kBegin) {
      ++h.begins;
      if (r.data.size() != 4 || LoadLE(r.data) != kBeginMarker) Error("a bad begin marker");
      if (phase_ == Phase::kBoot) {
        phase_ = Phase::kDriver;
        h.begin_retired = cpu_.retired();
      }
    }
    if (phase_ == Phase::kBoot) {
      if (reserved) Error("a reserved store before the begin marker");
      return absl::OkStatus();
    }
    if (phase_ == Phase::kDriver) {
      ++h.driver_records;
      if (r.kind == cat::RecordKind::kInterruptAck) ++h.acks_in_driver;
      if (r.kind == cat::RecordKind::kFill) ++h.fills_in_driver;
      if (r.kind == cat::RecordKind::kUncachedRead && (r.flags & cat::kFlagCode)) {
        ++h.driver_code_reads;
      }
      if (r.kind == cat::RecordKind::kUncachedRead && !(r.flags & cat::kFlagCode)) {
        ++(r.address >= kBase ? h.driver_reserved_reads : h.driver_ram_reads);
      }
      if (reserved) ++h.driver_reserved_stores;
      if ((store && !reserved) || r.kind == cat::RecordKind::kWriteThrough) {
        ++h.ram_stores_in_driver;
      }
      if (reserved && r.address >= kCpuState && r.address < kCpuState + h.dump.size()) {
        for (size_t i = 0; i < r.data.size(); ++i) h.dump[r.address - kCpuState + i] = r.data[i];
      }
      if (reserved && r.address == kStateDone) {
        ++h.dones;
        h.done_retired = cpu_.retired();
        phase_ = Phase::kTraced;
      }
      return absl::OkStatus();
    }
    if (reserved && r.address == kStateDone) ++h.dones;
    Traced(r, reserved);
    return absl::OkStatus();
  }

  Hooks h;

 private:
  enum class Phase { kBoot, kDriver, kTraced };

  void Error(const std::string& what) {
    if (h.errors.size() < 10) h.errors.push_back(absl::StrFormat("record %d: %s", h.records, what));
  }

  // After state-done: every acknowledge is followed by the processor's frame and then the report,
  // slot by slot, with nothing else reaching the bus but fills and uncached reads.
  void Traced(const cat::BusRecord& r, bool reserved) {
    if (r.kind == cat::RecordKind::kInterruptAck) {
      ++h.acks;
      if (next_ != 0) Error("an acknowledge before the previous interrupt's report");
      next_ = 1;
      frame_.clear();
      return;
    }
    if (next_ == 0) {
      if (reserved && r.address >= kInterrupt && r.address < kInterrupt + 16) {
        Error("an interrupt report without an acknowledge");
      }
      return;
    }
    switch (r.kind) {
      case cat::RecordKind::kFill:
      case cat::RecordKind::kUncachedRead:
        return;
      case cat::RecordKind::kWriteThrough:
        if (next_ == 1 && r.data.size() == 4) {
          frame_.push_back(static_cast<uint32_t>(LoadLE(r.data)));
          return;
        }
        break;
      case cat::RecordKind::kUncachedWrite:
        if (reserved && r.address == kInterrupt + kReportOrder[next_ - 1] && r.data.size() == 4) {
          Report(static_cast<uint32_t>(LoadLE(r.data)));
          return;
        }
        break;
      default:
        break;
    }
    Error(absl::StrFormat("record kind %d at 0x%x inside an interrupt entry",
                          static_cast<int>(r.kind), r.address));
    next_ = 0;
  }

  // One slot of the report. The frame the processor pushed ends EFLAGS, CS, EIP (the lowest).
  void Report(uint32_t value) {
    const size_t n = frame_.size();
    if (next_ == 1 && n != 3 && n != 5) Error(absl::StrFormat("a frame of %d stores", n));
    if (next_ == 1 && value != cpu_.reg(x86::kEcx)) Error("the reported ECX is not ECX");
    if (next_ >= 2 && n >= 3 && value != frame_[n - 1 - (next_ - 2)]) {
      Error(absl::StrFormat("report slot %d is 0x%x, the frame says 0x%x", next_, value,
                            frame_[n - 1 - (next_ - 2)]));
    }
    if (next_ == 2) eip_ = value;
    if (next_ == 3 && value == 0x33) ++h.reports_from_code16;
    if (next_ == 3 && value != 0x1B && value != 0x33) {
      // Ring 0 runs with interrupts on only in the idle loop.
      if (value != 0x08 || eip_ < idle_begin_ || eip_ >= idle_end_) {
        Error(absl::StrFormat("an interrupt at %x:%x", value, eip_));
      }
      ++h.reports_from_idle;
    }
    if (next_ == 4 && !(value & kIf)) Error("an interrupt taken with IF clear");
    if (++next_ == 5) {
      ++h.reports;
      next_ = 0;
    }
  }

  const x86::Cpu& cpu_;
  const uint32_t idle_begin_, idle_end_;
  uint32_t eip_ = 0;  // the reported EIP of the open interrupt
  Phase phase_ = Phase::kBoot;
  int next_ = 0;  // the report slot expected next (1..4), 0 when no interrupt is open
  std::vector<uint32_t> frame_;
};

std::unique_ptr<machine::I486Machine> NewMachine(const std::string& boot, uint64_t seed,
                                                 std::vector<uint8_t> disk = {},
                                                 uint64_t memory = 32 << 20) {
  machine::I486Options o;
  o.pc.seed = seed;
  o.pc.memory_bytes = memory;
  o.pc.rom = ReadFile(CITCAT_I486_BOOT_ROM);
  o.pc.disk = disk.empty() ? ReadFile(CITCAT_I486_DISK_IMAGE) : std::move(disk);
  o.pc.reserved = ReservedWindows();
  auto m = machine::I486Machine::Create(o);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return nullptr;
  absl::Status loaded = LoadKernel(**m, Kernel(), boot);
  EXPECT_TRUE(loaded.ok()) << loaded;
  return std::move(*m);
}

struct GuestRun {
  std::string console;
  machine::I486RunSummary summary;
  Hooks hooks;
};

constexpr uint64_t kMaxInstructions = 400'000'000;

GuestRun RunGuest(const std::string& boot, uint64_t seed = 1, std::vector<uint8_t> disk = {},
                  uint64_t memory = 32 << 20) {
  GuestRun run;
  auto m = NewMachine(boot, seed, std::move(disk), memory);
  if (!m) return run;
  HookMonitor monitor(m->cpu());
  auto summary = m->Run(&monitor, kMaxInstructions);
  EXPECT_TRUE(summary.ok()) << summary.status() << "\n" << m->console();
  if (summary.ok()) run.summary = *summary;
  run.console = m->console();
  run.hooks = monitor.h;
  return run;
}

void ExpectChecksums(const GuestRun& run, const std::vector<std::string>& names, int failed = 0) {
  for (const std::string& name : names) {
    EXPECT_THAT(run.console,
                HasSubstr(absl::StrFormat("%s: checksum 0x%08x ok\n", name, Expected().at(name))))
        << run.console;
  }
  EXPECT_THAT(run.console, Not(HasSubstr("BAD")));
  if (failed == 0) {
    EXPECT_THAT(run.console, Not(HasSubstr("killed")));
  }
  EXPECT_THAT(run.console, Not(HasSubstr("panic")));
  EXPECT_THAT(run.console,
              HasSubstr(absl::StrFormat("kernel: all %d tasks done (%d failed)",
                                        static_cast<int>(names.size()) + failed, failed)));
  EXPECT_TRUE(run.summary.powered_off);
  EXPECT_FALSE(run.summary.stuck);
}

// The hooks as the bus showed them.
void ExpectHooks(const GuestRun& run) {
  const Hooks& h = run.hooks;
  EXPECT_EQ(h.begins, 1);
  EXPECT_EQ(h.dones, 1);
  EXPECT_EQ(h.acks_in_driver, 0u);
  EXPECT_EQ(h.fills_in_driver, 0u);       // CD = 1 and an empty cache: nothing is filled
  EXPECT_EQ(h.ram_stores_in_driver, 1u);  // PUSHFD's, for the EFLAGS slot
  EXPECT_THAT(h.errors, ::testing::IsEmpty());
  EXPECT_GT(h.acks, 0u);
  EXPECT_EQ(h.reports, h.acks);
  // The dump: the resume point, CR0 both ways, the kernel's selectors and descriptors.
  const uint8_t* d = h.dump.data();
  EXPECT_EQ(Le32(d + CITCAT_I486_SLOT_EIP), Symbol("citcat_resume"));
  const uint32_t cr0 = Le32(d + CITCAT_I486_SLOT_CR0), eax = Le32(d + CITCAT_I486_SLOT_GPR);
  EXPECT_EQ(cr0 & (kCr0Pg | kCr0Cd | kCr0Nw | kCr0Ts), kCr0Cd);
  EXPECT_EQ(eax & (kCr0Pg | kCr0Cd | kCr0Nw), kCr0Pg);
  EXPECT_EQ(eax & ~kCr0Ts, (cr0 & ~(kCr0Ts | kCr0Cd)) | kCr0Pg);
  EXPECT_EQ(Le32(d + CITCAT_I486_SLOT_EFLAGS) & kIf, 0u);
  const uint16_t selectors[8] = {0x10, 0x08, 0x10, 0x10, 0x10, 0x10, 0x00, 0x28};
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(d[CITCAT_I486_SLOT_SELECTOR + 4 * i] | d[CITCAT_I486_SLOT_SELECTOR + 4 * i + 1] << 8,
              selectors[i])
        << "selector " << i;
  }
  const uint32_t gdt = Symbol("gdt");
  EXPECT_EQ(Le32(d + CITCAT_I486_SLOT_GDTR + 2), gdt);
  EXPECT_EQ(d[CITCAT_I486_SLOT_GDTR] | d[CITCAT_I486_SLOT_GDTR + 1] << 8, 7 * 8 - 1);
  const uint64_t code = uint64_t{Le32(d + CITCAT_I486_SLOT_DESCRIPTOR + 8 + 4)} << 32 |
                        Le32(d + CITCAT_I486_SLOT_DESCRIPTOR + 8);
  EXPECT_EQ(code, 0x00CF9B000000FFFFull);
  EXPECT_EQ(Le32(d + CITCAT_I486_SLOT_DESCRIPTOR + 6 * 8), 0u);                       // LDTR: null
  EXPECT_EQ((Le32(d + CITCAT_I486_SLOT_DESCRIPTOR + 7 * 8 + 4) >> 8) & 0x9F, 0x8Bu);  // busy TSS
}

// Instructions for the trace itself after state-done, against those traced.
double HookShare(const GuestRun& run) {
  const uint64_t traced = run.summary.instructions - run.hooks.done_retired - 1;
  return 100.0 * static_cast<double>(HookInstructions(run.hooks.reports)) /
         static_cast<double>(traced);
}

class Workload : public ::testing::TestWithParam<std::string> {};

TEST_P(Workload, RunsToPowerOffWithItsKnownAnswer) {
  GuestRun run = RunGuest(GetParam());
  ExpectChecksums(run, {GetParam()});
  ExpectHooks(run);
  // Alone, io leaves the processor idle while it sleeps and waits for the disk.
  if (GetParam() == "io") {
    EXPECT_GT(run.hooks.reports_from_idle, 0u);
  }
  // Timer interrupts find the task in its 16-bit code and return there.
  if (GetParam() == "mode16") {
    EXPECT_GT(run.hooks.reports_from_code16, 10u);
  }
  // The core's transcendentals against the host x87's, as the workload counts them.
  if (GetParam() == "x87") {
    EXPECT_THAT(run.console, HasSubstr("x87: 960 of 960 transcendental results within 2 ulps"));
  }
  std::printf(
      "%s: %llu instructions, %llu traced, %llu interrupts (%llu in the idle loop), "
      "hooks %.3f %% of the traced instructions\n",
      GetParam().c_str(), static_cast<unsigned long long>(run.summary.instructions),
      static_cast<unsigned long long>(run.summary.instructions - run.hooks.done_retired),
      static_cast<unsigned long long>(run.hooks.reports),
      static_cast<unsigned long long>(run.hooks.reports_from_idle), HookShare(run));
}

INSTANTIATE_TEST_SUITE_P(Guest, Workload,
                         ::testing::Values("sort", "hash", "compress", "int64", "fp", "memcpy",
                                           "chase", "io", "rep", "x87", "mode16"));

TEST(I486Guest, TheDefaultMixRunsEveryProgram) {
  GuestRun run = RunGuest("");
  ExpectChecksums(run, {"sort", "hash", "fp", "chase", "io"});
  ExpectHooks(run);
  EXPECT_THAT(run.console, HasSubstr("programs: " CITCAT_I486_DEFAULT_MIX));
  std::printf("default mix: %llu instructions, %llu interrupts, hooks %.3f %%\n",
              static_cast<unsigned long long>(run.summary.instructions),
              static_cast<unsigned long long>(run.hooks.reports), HookShare(run));
}

TEST(I486Guest, EveryWorkloadAtOnce) {
  GuestRun run = RunGuest(CITCAT_I486_WORKLOADS, 7);
  ExpectChecksums(run, {"sort", "hash", "compress", "int64", "fp", "memcpy", "chase", "io", "rep",
                        "x87", "mode16"});
  ExpectHooks(run);
  std::printf("every workload: %llu instructions, %llu interrupts, hooks %.3f %%\n",
              static_cast<unsigned long long>(run.summary.instructions),
              static_cast<unsigned long long>(run.hooks.reports), HookShare(run));
}

// Two tasks that keep x87 state across preemption, beside two that do not touch the x87: the
// lazy switch must save and restore the whole FPU.
TEST(I486Guest, FpuContextsSurvivePreemption) {
  GuestRun run = RunGuest("fp,int64,fp,int64", 3);
  ExpectChecksums(run, {"fp", "int64", "fp", "int64"});
  ExpectHooks(run);
  EXPECT_THAT(run.console, Not(HasSubstr(", 0 FPU switches")));
}

// x87 changes the precision and rounding control and keeps values on the x87 stack across
// FSAVE/FRSTOR; beside fp (53-bit precision, round to nearest) every switch must carry the
// control word and the registers over.
TEST(I486Guest, X87StateSurvivesPreemptionBesideFp) {
  GuestRun run = RunGuest("x87,fp,x87,fp", 4);
  ExpectChecksums(run, {"x87", "fp", "x87", "fp"});
  ExpectHooks(run);
  const size_t at = run.console.find(" FPU switches");
  ASSERT_NE(at, std::string::npos);
  const size_t from = run.console.rfind(", ", at) + 2;
  const int switches = std::stoi(run.console.substr(from, at - from));
  EXPECT_GT(switches, 20);
  std::printf("x87,fp,x87,fp: %d FPU switches, %llu interrupts\n", switches,
              static_cast<unsigned long long>(run.hooks.reports));
}

TEST(I486Guest, AFaultingTaskIsKilledAndTheOthersFinish) {
  GuestRun run = RunGuest("crash,io");
  ExpectChecksums(run, {"io"}, 1);
  EXPECT_THAT(run.console, HasSubstr("crash: storing into the text segment"));
  EXPECT_THAT(run.console, HasSubstr("kernel: task 0 (crash) killed: page fault (protection, "
                                     "write)"));
  EXPECT_THAT(run.console, Not(HasSubstr("still alive")));
  EXPECT_THAT(run.console, HasSubstr("kernel: task 0 (crash): exit 142"));
}

TEST(I486Guest, AnUnknownProgramIsSkipped) {
  GuestRun run = RunGuest("nosuch,int64");
  EXPECT_THAT(run.console, HasSubstr("kernel: no program 'nosuch' on the disk"));
  ExpectChecksums(run, {"int64"});
}

TEST(I486Guest, TheSameSeedRunsTheSameAndAnotherOneDoesNot) {
  GuestRun a = RunGuest("io,hash", 5), b = RunGuest("io,hash", 5), c = RunGuest("io,hash", 6);
  EXPECT_EQ(a.summary.instructions, b.summary.instructions);
  EXPECT_EQ(a.hooks.records, b.hooks.records);
  EXPECT_EQ(a.console, b.console);
  EXPECT_NE(a.summary.instructions, c.summary.instructions);
}

// The kernel takes the RAM size from the CMOS: it runs in 6 MiB, uses 64 MiB of 256, and says
// so when there is too little.
TEST(I486Guest, RamSizes) {
  GuestRun small = RunGuest("chase", 1, {}, 6 << 20);
  ExpectChecksums(small, {"chase"});
  EXPECT_THAT(small.console, HasSubstr("i486 guest kernel, 6 MiB"));
  GuestRun big = RunGuest("chase", 1, {}, 256 << 20);
  ExpectChecksums(big, {"chase"});
  EXPECT_THAT(big.console, HasSubstr("i486 guest kernel, 64 MiB"));
  GuestRun tiny = RunGuest("chase", 1, {}, 3 << 20);
  EXPECT_THAT(tiny.console, HasSubstr("kernel: panic: not enough RAM"));
  EXPECT_TRUE(tiny.summary.powered_off);
}

TEST(I486Guest, TheRomWithoutAKernelSaysSoAndPowersOff) {
  machine::I486Options o;
  o.pc.rom = ReadFile(CITCAT_I486_BOOT_ROM);
  auto m = machine::I486Machine::Create(o);
  ASSERT_TRUE(m.ok()) << m.status();
  auto summary = (*m)->Run(nullptr, 1'000'000);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(summary->powered_off);
  EXPECT_EQ((*m)->console(), "boot: no kernel in RAM (no boot block)\n");
}

TEST(I486Guest, TheLoaderRefusesWhatTheRomCannotRun) {
  auto m = NewMachine("", 1);
  ASSERT_NE(m, nullptr);
  machine::ElfImage mips = Kernel();
  mips.machine = machine::kElfMachineMips;
  EXPECT_FALSE(LoadKernel(*m, mips, "").ok());
  machine::ElfImage high = Kernel();
  high.entry = 0x00400000;
  EXPECT_FALSE(LoadKernel(*m, high, "").ok());
  EXPECT_FALSE(LoadKernel(*m, Kernel(), std::string(256, 'x')).ok());
}

// Linux's loader (docs/machines/i486-linux.md, "Booting") refuses what Linux could not boot from,
// and hands the ROM and the kernel what the 32-bit boot protocol says.
TEST(I486Guest, TheLinuxLoaderFollowsTheBootProtocol) {
  machine::I486Options o;
  o.pc.memory_bytes = 32 << 20;
  auto m = machine::I486Machine::Create(o);
  ASSERT_TRUE(m.ok()) << m.status();
  machine::ElfImage vmlinux = Kernel();  // any i386 ELF at 1 MiB serves the loader
  const std::vector<uint8_t> cpio(5000, 0x30);
  machine::ElfImage mips = vmlinux;
  mips.machine = machine::kElfMachineMips;
  EXPECT_FALSE(LoadLinux(**m, o.pc.memory_bytes, mips, {cpio, "console=ttyS0"}).ok());
  const std::string long_line(kLinuxCommandLineMax + 1, 'x');
  EXPECT_FALSE(LoadLinux(**m, o.pc.memory_bytes, vmlinux, {cpio, long_line}).ok());
  EXPECT_FALSE(LoadLinux(**m, 8 << 20, vmlinux, {cpio, "console=ttyS0"}).ok());

  ASSERT_TRUE(LoadLinux(**m, o.pc.memory_bytes, vmlinux, {cpio, "console=ttyS0"}).ok());
  const auto dword = [&](uint32_t address) {
    std::array<uint8_t, 4> b{};
    EXPECT_TRUE((*m)->bus().ReadRam(address, b).ok());
    return static_cast<uint32_t>(b[0] | b[1] << 8 | b[2] << 16 | uint32_t{b[3]} << 24);
  };
  EXPECT_EQ(dword(0x1000), 0x4C544943u);  // "CITL"
  EXPECT_EQ(dword(0x1004), vmlinux.entry);
  const uint32_t params = dword(0x1008);
  EXPECT_EQ(dword(params + 0x202), 0x53726448u);  // "HdrS"
  const uint32_t initrd = dword(params + 0x218);
  EXPECT_EQ(initrd % 4096, 0u);
  EXPECT_LE(initrd + cpio.size(), o.pc.memory_bytes);
  EXPECT_EQ(dword(params + 0x21C), cpio.size());
  EXPECT_EQ(dword(initrd), 0x30303030u);
  EXPECT_EQ(dword(dword(params + 0x228)), 0x736E6F63u);  // "cons"
  EXPECT_EQ(dword(params + 0x1E8) & 0xFF, 3u);           // e820: low RAM, the ROM alias, RAM
  EXPECT_EQ(dword(params + 0x2D0 + 2 * 20 + 8), o.pc.memory_bytes - 0x100000);
}

// The machine run to the exact resume point: the registers are the dump's, the TLB and the
// cache are empty; the next instruction turns paging and the cache back on.
TEST(I486Guest, AtTheResumePointTheTlbAndTheCacheAreEmpty) {
  const GuestRun first = RunGuest("fp,io", 2);
  ASSERT_EQ(first.hooks.dones, 1);
  auto m = NewMachine("fp,io", 2);
  ASSERT_NE(m, nullptr);
  HookMonitor monitor(m->cpu());
  auto part = m->Run(&monitor, first.hooks.done_retired + 1);
  ASSERT_TRUE(part.ok()) << part.status();
  ASSERT_EQ(monitor.h.dones, 1);
  x86::Cpu& cpu = m->cpu();
  ASSERT_EQ(cpu.eip(), Symbol("citcat_resume"));
  const uint8_t* d = monitor.h.dump.data();
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(cpu.reg(r), Le32(d + CITCAT_I486_SLOT_GPR + 4 * r)) << "GPR " << r;
  }
  EXPECT_EQ(cpu.eflags(), Le32(d + CITCAT_I486_SLOT_EFLAGS));
  EXPECT_EQ(cpu.cr0(), Le32(d + CITCAT_I486_SLOT_CR0));
  EXPECT_EQ(cpu.cr3(), Le32(d + CITCAT_I486_SLOT_CR3));
  EXPECT_EQ(cpu.gdtr().base, Le32(d + CITCAT_I486_SLOT_GDTR + 2));
  EXPECT_EQ(cpu.idtr().base, Le32(d + CITCAT_I486_SLOT_IDTR + 2));
  for (int s = 0; s < 6; ++s) {
    EXPECT_EQ(cpu.segment(s).selector, d[CITCAT_I486_SLOT_SELECTOR + 4 * s]) << "segment " << s;
    const uint32_t lo = Le32(d + CITCAT_I486_SLOT_DESCRIPTOR + 8 * s);
    const uint32_t hi = Le32(d + CITCAT_I486_SLOT_DESCRIPTOR + 8 * s + 4);
    EXPECT_EQ(cpu.segment(s).base, (lo >> 16) | (hi & 0xFF) << 16 | (hi & 0xFF000000u));
  }
  EXPECT_FALSE(cpu.cr0() & kCr0Pg);
  EXPECT_TRUE(cpu.cr0() & kCr0Cd);
  for (uint32_t set = 0; set < x86::Cache::kSets; ++set) {
    for (uint32_t way = 0; way < x86::Cache::kWays; ++way) {
      EXPECT_FALSE(cpu.cache().valid(set, way)) << "cache set " << set << " way " << way;
    }
  }
  const x86::Tlb& tlb = cpu.paging().tlb();
  for (uint32_t set = 0; set < x86::Tlb::kSets; ++set) {
    for (uint32_t way = 0; way < x86::Tlb::kWays; ++way) {
      EXPECT_FALSE(tlb.entry(set, way).valid()) << "TLB set " << set << " way " << way;
    }
  }
  // MOV CR0, EAX: paging and the cache on, TS as the kernel had it.
  const uint32_t eax = cpu.reg(x86::kEax);
  auto step = m->Run(&monitor, first.hooks.done_retired + 2);
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(cpu.cr0(), eax);
  EXPECT_TRUE(cpu.cr0() & kCr0Pg);
  // And on to the end, as if nothing had stopped it.
  auto rest = m->Run(&monitor, kMaxInstructions);
  ASSERT_TRUE(rest.ok()) << rest.status();
  EXPECT_EQ(rest->instructions, first.summary.instructions);
  EXPECT_EQ(m->console(), first.console);
  std::printf(
      "driver: %llu instructions and %llu bus records from the begin marker to state-done, both "
      "included (%llu uncached code reads, %llu data reads of the reserved area, %llu of RAM, "
      "%llu stores to the reserved area)\n",
      static_cast<unsigned long long>(first.hooks.done_retired - first.hooks.begin_retired + 1),
      static_cast<unsigned long long>(first.hooks.driver_records),
      static_cast<unsigned long long>(first.hooks.driver_code_reads),
      static_cast<unsigned long long>(first.hooks.driver_reserved_reads),
      static_cast<unsigned long long>(first.hooks.driver_ram_reads),
      static_cast<unsigned long long>(first.hooks.driver_reserved_stores));
}

}  // namespace
}  // namespace citcat::guest::i486
