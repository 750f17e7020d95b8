// The i486 core against Unicorn in lock step (x86_unicorn_lockstep.h) on compiled C: the R4400
// workloads sort, hash, compress, chase, memcpy and fp, the core benchmark's kernels and a 64-bit
// integer program, cross-compiled for bare-metal flat 32-bit i486 code (tests/simcore/x86_guest/)
// at -O2 and -Os, on several inputs (the salt its generator's values are XORed with).
// Every instruction is compared, the x87 state after each x87 instruction; with salt 0 a
// workload must also reach its known answer (main returns 0).
#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "machine/elf_loader.h"
#include "simcore/bus.h"
#include "simcore/x86/cpu.h"
#include "tests/simcore/x86_unicorn_lockstep.h"
#include "tests/support/register_checker.h"

namespace citcat::x86 {
namespace {

using testing::UnicornLockstep;

constexpr uint32_t kRam = 4 << 20;
constexpr uint32_t kNever = 0xFFFFFFF0u;  // an `end` no program reaches: they stop at HLT

struct Outcome {
  uint64_t compared = 0, x87_compared = 0;
  uint32_t result = 0;  // EAX at the HLT
  std::string mismatch;
};

// Runs one program with one salt in lock step to its HLT.
Outcome RunProgram(const std::string& file, uint32_t salt, bool x87) {
  Outcome out;
  const auto elf = machine::LoadElfFile(std::string(CITCAT_X86_GUESTS) + "/" + file + ".elf");
  if (!elf.ok()) {
    out.mismatch = std::string(elf.status().message());
    return out;
  }
  UnicornLockstep lockstep(UnicornLockstep::Mode::kFlat32, kRam);
  if (x87) lockstep.CompareX87();
  for (const machine::ElfSegment& s : elf->segments) {
    std::vector<uint8_t> bytes = s.data;
    bytes.resize(s.memsz, 0);
    lockstep.Load(static_cast<uint32_t>(s.vaddr), bytes);
  }
  const machine::ElfSymbol* salt_at = elf->FindSymbol("x86_salt");
  if (salt_at == nullptr) {
    out.mismatch = "no x86_salt in " + file;
    return out;
  }
  lockstep.Load(
      static_cast<uint32_t>(salt_at->value),
      std::vector<uint8_t>{static_cast<uint8_t>(salt), static_cast<uint8_t>(salt >> 8),
                           static_cast<uint8_t>(salt >> 16), static_cast<uint8_t>(salt >> 24)});
  const UnicornLockstep::Result r =
      lockstep.Run(static_cast<uint32_t>(elf->entry), kNever, ~uint64_t{0});
  out.compared = r.compared;
  out.x87_compared = r.x87_compared;
  out.result = lockstep.cpu().reg(kEax);
  out.mismatch = r.mismatch;
  if (out.mismatch.empty() && !r.halted) out.mismatch = "the program did not reach its HLT";
  return out;
}

// `program` built at -O2 with the workload's own input (salt 0: a workload with a known answer
// must return 0), and at -Os with each of `salts`.
void RunAll(const std::string& program, const std::vector<uint32_t>& salts, bool known_answer,
            bool x87, uint64_t at_least) {
  uint64_t compared = 0, x87_compared = 0;
  std::vector<std::pair<std::string, uint32_t>> runs = {{program + ".O2", 0}};
  for (uint32_t salt : salts) runs.push_back({program + ".Os", salt});
  for (const auto& [file, salt] : runs) {
    const Outcome o = RunProgram(file, salt, x87);
    ASSERT_EQ(o.mismatch, "") << file << " with salt " << salt;
    if (known_answer && salt == 0) {
      EXPECT_EQ(o.result, 0u) << file << ": not the known answer";
    }
    compared += o.compared;
    x87_compared += o.x87_compared;
  }
  EXPECT_GT(compared, at_least);
  if (x87) {
    EXPECT_GT(x87_compared, at_least / 10);
  }
  const std::string x87_detail =
      x87 ? absl::StrFormat(", %d x87 instructions with the x87 state", x87_compared) : "";
  testing::PrintCompared("Unicorn", "compiled " + program, compared,
                         absl::StrFormat("%d runs: -O2 on the own input, -Os on %d others%s",
                                         runs.size(), salts.size(), x87_detail));
}

TEST(X86ProgramsLockstep, Sort) { RunAll("sort", {0x80000001u}, true, false, 5000000); }
TEST(X86ProgramsLockstep, Hash) { RunAll("hash", {0x1234567}, true, false, 5000000); }
TEST(X86ProgramsLockstep, Compress) { RunAll("compress", {7, 0xFFFF}, true, false, 3000000); }
TEST(X86ProgramsLockstep, Chase) { RunAll("chase", {0x9E3779B9u}, true, false, 5000000); }
TEST(X86ProgramsLockstep, Memcpy) { RunAll("memcpy", {3}, true, false, 5000000); }
TEST(X86ProgramsLockstep, Kernels) { RunAll("kernels", {99}, false, false, 10000000); }
TEST(X86ProgramsLockstep, Int64) { RunAll("int64", {0xDEADBEEF}, false, false, 5000000); }
// x87 code: the x87 stack, control and status words compared after every x87 instruction. The
// checksum is not the R4400's: the x87 rounds intermediate results to 64-bit significands.
TEST(X86ProgramsLockstep, FloatingPoint) {
  RunAll("fp", {0x10001, 0x2468ACE}, false, true, 1000000);
}

// A bus with plain RAM that folds every record (kind, flags, address, data, branch count, in
// order) into a checksum, for comparing two runs' bus traces without keeping them.
class ChecksumBus final : public simcore::Bus {
 public:
  void Read(const cat::BusRecord& r, std::span<uint8_t> data) override {
    for (size_t i = 0; i < data.size(); ++i) data[i] = ram_[(r.address + i) % ram_.size()];
    Fold(r);
  }
  void Write(const cat::BusRecord& r) override {
    for (size_t i = 0; i < r.data.size(); ++i) ram_[(r.address + i) % ram_.size()] = r.data[i];
    Fold(r);
  }
  void Load(uint32_t address, const std::vector<uint8_t>& bytes) {
    std::copy(bytes.begin(), bytes.end(), ram_.begin() + address);
  }
  std::span<const uint8_t> Bytes(uint32_t address, size_t n) const {
    return std::span<const uint8_t>(ram_).subspan(address, n);
  }
  uint64_t checksum = 14695981039346656037ull, records = 0;

 private:
  void Mix(uint64_t v) { checksum = (checksum ^ v) * 1099511628211ull; }
  void Fold(const cat::BusRecord& r) {
    Mix(static_cast<uint64_t>(r.kind) << 8 | r.flags);
    Mix(r.address);
    Mix(r.branch_count);
    for (uint8_t b : r.data) Mix(b);
    ++records;
  }
  std::vector<uint8_t> ram_ = std::vector<uint8_t>(kRam);
};

// Checks that the bytes the core hands its observer are the instruction's bytes in memory (flat
// code: EIP is the physical address), and counts those that span two cache lines.
class BytesChecker final : public simcore::Observer {
 public:
  BytesChecker(const ChecksumBus& bus, const Cpu& cpu) : bus_(bus), cpu_(cpu) {}
  void OnInstruction(uint64_t eip, std::span<const uint8_t> bytes) override {
    const Instruction& in = cpu_.observed();
    ++instructions;
    if ((eip % 16) + in.length > 16) ++spanning;
    const std::span<const uint8_t> memory = bus_.Bytes(eip, in.length);
    if (bytes.size() != in.length || !std::equal(bytes.begin(), bytes.end(), memory.begin())) {
      if (wrong++ == 0) first_wrong = eip;
    }
  }
  uint64_t instructions = 0, spanning = 0, wrong = 0;
  uint32_t first_wrong = 0;

 private:
  const ChecksumBus& bus_;
  const Cpu& cpu_;
};

// The general registers, the segment registers' selectors and EFLAGS, in the trace records'
// numbering (simcore/x86/decoder.h).
std::array<uint64_t, kRegEflags + 1> RegistersOf(const Cpu& cpu) {
  std::array<uint64_t, kRegEflags + 1> v{};
  for (int r = 0; r < 8; ++r) v[r] = cpu.reg(r);
  for (int s = 0; s < 6; ++s) v[kRegSeg0 + s] = cpu.segment(s).selector;
  v[kRegEflags] = cpu.eflags();
  return v;
}

// On the full path (Complete) and the fast paths' observed straight forms.
TEST(X86Programs, EveryRegisterAnInstructionChangedIsToldWithItsValue) {
  for (const char* file : {"sort.O2", "compress.Os", "kernels.O2", "hash.O2", "chase.O2"}) {
    const auto elf = machine::LoadElfFile(std::string(CITCAT_X86_GUESTS) + "/" + file + ".elf");
    ASSERT_TRUE(elf.ok()) << elf.status();
    for (const bool fast : {false, true}) {
      ChecksumBus bus;
      for (const machine::ElfSegment& s : elf->segments) {
        bus.Load(static_cast<uint32_t>(s.vaddr), s.data);
      }
      Cpu cpu(bus);
      cpu.set_fast_paths(fast);
      citcat::testing::RegisterChecker<kRegEflags + 1> checker([&] { return RegistersOf(cpu); });
      cpu.set_observer(&checker);
      cpu.SetFlat32();
      cpu.set_eip(static_cast<uint32_t>(elf->entry));
      while (!cpu.halted() && !cpu.exception().pending && cpu.retired() < 20'000'000) {
        cpu.Run(1 << 20);
        ASSERT_FALSE(HasFailure()) << file << (fast ? " fast" : " full");
      }
      ASSERT_TRUE(cpu.halted()) << file;
      checker.Check();
      EXPECT_EQ(checker.checked, cpu.steps()) << file;
      EXPECT_GT(checker.told, cpu.steps() / 2) << file;
    }
  }
}

// The core's predecoded-line fast paths leave exactly the bus trace of the full path on every
// fetch, on programs whose data and code contend for the cache (sort's arrays are twice its size),
// and hand the observer the same instruction bytes as memory holds. Three runs each: the full
// path, the fast paths with an observer (every instruction through Complete) and the fast paths
// with none (straight forms completed in RunStraight).
TEST(X86Programs, FastPathsLeaveTheSameBusTraceOnCompiledCode) {
  for (const char* file : {"sort.O2", "compress.Os", "kernels.O2", "hash.O2", "chase.O2"}) {
    const auto elf = machine::LoadElfFile(std::string(CITCAT_X86_GUESTS) + "/" + file + ".elf");
    ASSERT_TRUE(elf.ok()) << elf.status();
    enum Mode { kFull, kObserved, kPlain };
    uint64_t checksum[3], records[3], retired[3], branches[3];
    std::array<uint32_t, 8> regs[3];
    uint32_t eflags[3];
    for (const Mode mode : {kFull, kObserved, kPlain}) {
      ChecksumBus bus;
      for (const machine::ElfSegment& s : elf->segments) {
        bus.Load(static_cast<uint32_t>(s.vaddr), s.data);
      }
      Cpu cpu(bus);
      cpu.set_fast_paths(mode != kFull);
      BytesChecker bytes(bus, cpu);
      if (mode != kPlain) cpu.set_observer(&bytes);
      cpu.SetFlat32();
      cpu.set_eip(static_cast<uint32_t>(elf->entry));
      while (!cpu.halted() && !cpu.exception().pending && cpu.retired() < 20'000'000) {
        cpu.Run(1 << 20);
      }
      ASSERT_TRUE(cpu.halted()) << file;
      if (mode != kPlain) {
        EXPECT_EQ(bytes.wrong, 0u) << file << ": first at " << std::hex << bytes.first_wrong;
        EXPECT_EQ(bytes.instructions, cpu.steps()) << file;
        EXPECT_GT(bytes.spanning, 1000u) << file;
      }
      checksum[mode] = bus.checksum;
      records[mode] = bus.records;
      retired[mode] = cpu.retired();
      branches[mode] = cpu.branch_count();
      for (int r = 0; r < 8; ++r) regs[mode][r] = cpu.reg(r);
      eflags[mode] = cpu.eflags();
    }
    for (const Mode mode : {kObserved, kPlain}) {
      EXPECT_EQ(retired[kFull], retired[mode]) << file << " mode " << mode;
      EXPECT_EQ(branches[kFull], branches[mode]) << file << " mode " << mode;
      EXPECT_EQ(records[kFull], records[mode]) << file << " mode " << mode;
      EXPECT_EQ(checksum[kFull], checksum[mode]) << file << " mode " << mode;
      EXPECT_EQ(regs[kFull], regs[mode]) << file << " mode " << mode;
      EXPECT_EQ(eflags[kFull], eflags[mode]) << file << " mode " << mode;
    }
    EXPECT_GT(records[kFull], 10000u) << file;
  }
}

}  // namespace
}  // namespace citcat::x86
