// Run(n) must not depend on n: the run loop executes whole stretches of code without looking
// back (branches, delay slots, line ends, exceptions, stop requests), and the lock-step tests
// check the core one step at a time. Here one CPU takes single steps and another the same
// program in runs of random length, with and without an observer, with interrupts raised and
// branch-count stops set between runs; their whole state and bus traffic must agree after every
// run.
#include <array>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "simcore/mips/cpu.h"
#include "simcore/ram_bus.h"
#include "tests/simcore/mips_asm.h"
#include "tests/simcore/random_program.h"
#include "tests/support/register_checker.h"

namespace citcat::mips {
namespace {

constexpr size_t kRam = 8 << 20;
constexpr uint32_t kK0 = 26;
using namespace as;  // NOLINT: the assembler helpers

// Collects the PCs an observed run reports.
class PcLog : public simcore::Observer {
 public:
  explicit PcLog(const Cpu& cpu) : cpu_(cpu) {}
  void OnInstruction(uint64_t pc, std::span<const uint8_t> bytes) override {
    ASSERT_EQ(pc, cpu_.pc());  // the CPU's own view agrees with what it reports
    pcs.push_back(pc);
    words.push_back(BytesWord(bytes.data(), cpu_.big_endian()));
  }
  std::vector<uint64_t> pcs;
  std::vector<uint32_t> words;

 private:
  const Cpu& cpu_;
};

// In the trace records' numbering (simcore/mips/decoder.h), unused numbers 0.
constexpr size_t kRegisterNumbers = kRegFcc + 1;
std::array<uint64_t, kRegisterNumbers> RegistersOf(const Cpu& cpu) {
  std::array<uint64_t, kRegisterNumbers> v{};
  for (int r = 1; r < 32; ++r) v[r] = cpu.gpr(r);
  v[kRegHi] = cpu.hi();
  v[kRegLo] = cpu.lo();
  for (int f = 0; f < 32; ++f) v[kRegFpr0 + f] = cpu.fpu().raw_fgr(f);
  v[kRegFcc] = cpu.fpu().condition();
  return v;
}

struct Machine {
  Machine() : bus(kRam), cpu(bus) { bus.set_logging(true); }
  simcore::RamBus bus;
  Cpu cpu;
};

// A general exception handler that resumes after the faulting instruction, and an endless loop
// at `end`, so that runs of any length stay inside the program.
void LoadProgram(Machine& m, std::span<const uint8_t> code, uint64_t code_pa,
                 std::span<const uint8_t> data, uint64_t end) {
  m.bus.Poke(code_pa, code);
  if (!data.empty()) {
    m.bus.Poke(0x100000, data);
    m.bus.Poke(0x200000, data);
  }
  const uint32_t handler[] = {Mfc0(kK0, kCp0Epc),
                              Nop(),
                              Addiu(kK0, kK0, 4),
                              Mtc0(kK0, kCp0Epc),
                              Nop(),
                              Nop(),
                              Eret(),
                              Nop()};
  for (int i = 0; i < 8; ++i) m.bus.PokeWordBE(0x180 + 4 * i, handler[i]);
  m.bus.PokeWordBE(end & 0x1FFFFFFF, Beq(0, 0, -1));
  m.bus.PokeWordBE((end & 0x1FFFFFFF) + 4, Nop());
  m.cpu.WriteCp0(kCp0Status, kStatusCu1 | (1u << (kStatusImShift + 2)) | kStatusIe);
  m.cpu.SetPc(0xFFFFFFFF80001000ull);
}

void ExpectSameState(Machine& a, Machine& b, const std::string& where) {
  ASSERT_EQ(a.cpu.pc(), b.cpu.pc()) << where;
  ASSERT_EQ(a.cpu.in_delay_slot(), b.cpu.in_delay_slot()) << where;
  ASSERT_EQ(a.cpu.branch_count(), b.cpu.branch_count()) << where;
  ASSERT_EQ(a.cpu.retired(), b.cpu.retired()) << where;
  ASSERT_EQ(a.cpu.exceptions(), b.cpu.exceptions()) << where;
  for (int r = 0; r < 32; ++r) ASSERT_EQ(a.cpu.gpr(r), b.cpu.gpr(r)) << where << " $" << r;
  ASSERT_EQ(a.cpu.hi(), b.cpu.hi()) << where;
  ASSERT_EQ(a.cpu.lo(), b.cpu.lo()) << where;
  ASSERT_TRUE(a.cpu.SaveCp0() == b.cpu.SaveCp0()) << where;
  ASSERT_EQ(a.bus.log().size(), b.bus.log().size()) << where;
  for (size_t i = 0; i < a.bus.log().size(); ++i) {
    const cat::OwnedRecord &x = a.bus.log()[i], &y = b.bus.log()[i];
    ASSERT_TRUE(x.kind == y.kind && x.address == y.address && x.data == y.data &&
                x.branch_count == y.branch_count)
        << where << " bus record " << i;
  }
}

// Single steps on `a`, runs of up to `max_run` on `b`, for `steps` steps in all.
void CompareRuns(Machine& a, Machine& b, uint64_t steps, uint32_t seed, uint64_t max_run) {
  std::mt19937_64 rng(seed);
  uint64_t done = 0;
  int runs = 0;
  while (done < steps) {
    const std::string where = "seed " + std::to_string(seed) + " after " + std::to_string(done) +
                              " steps, run " + std::to_string(runs);
    // Now and then an interrupt line is raised for one run, or a branch-count stop is set.
    const uint64_t event = rng() % 16;
    a.cpu.SetInterruptLine(2, event == 0);
    b.cpu.SetInterruptLine(2, event == 0);
    const uint64_t stop = event == 1 ? b.cpu.branch_count() + 1 + rng() % 50 : ~uint64_t{0};
    a.cpu.set_stop_branch_count(stop);
    b.cpu.set_stop_branch_count(stop);

    const uint64_t n = 1 + rng() % max_run;
    uint64_t ran;
    PcLog seen(b.cpu), expected(a.cpu);
    const bool observed = rng() % 4 == 0;
    b.cpu.set_observer(observed ? &seen : nullptr);
    ran = b.cpu.Run(n);
    ASSERT_GE(ran, 1u) << where;
    ASSERT_LE(ran, n) << where;
    a.cpu.set_observer(&expected);
    for (uint64_t i = 0; i < ran; ++i) ASSERT_EQ(a.cpu.Run(1), 1u) << where;
    a.cpu.set_observer(nullptr);
    b.cpu.set_observer(nullptr);
    if (observed) {
      ASSERT_EQ(seen.pcs, expected.pcs) << where;
      ASSERT_EQ(seen.words, expected.words) << where;
    }
    // A run that stopped short did so at the stop point and nowhere else.
    if (ran < n) {
      EXPECT_GE(b.cpu.branch_count(), stop) << where;
    }
    ExpectSameState(a, b, where);
    if (::testing::Test::HasFatalFailure()) return;
    done += ran;
    ++runs;
  }
}

TEST(RunLength, RandomProgramsInRunsOfAnyLength) {
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    RandomProgramOptions options;
    options.seed = seed;
    options.iterations = 6;
    const RandomProgram p = GenerateRandomProgram(options);
    std::vector<uint8_t> code;
    for (uint32_t w : p.words) {
      for (int s = 24; s >= 0; s -= 8) code.push_back(static_cast<uint8_t>(w >> s));
    }
    Machine a, b;
    LoadProgram(a, code, 0x1000, p.data, p.end);
    LoadProgram(b, code, 0x1000, p.data, p.end);
    CompareRuns(a, b, 60'000, seed, seed % 2 ? 40 : 3000);
    if (HasFatalFailure()) return;
  }
}

// Random programs of every integer operation; with exceptions (of every kind, and interrupts)
// or without, when they run to their end. Runs of any length end between an instruction and the
// telling of its registers.
TEST(RegisterReports, EveryRegisterAnInstructionChangedIsToldWithItsValue) {
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    RandomProgramOptions options;
    options.seed = seed;
    options.exceptions = seed % 2 == 0;
    const RandomProgram p = GenerateRandomProgram(options);
    std::vector<uint8_t> code;
    for (uint32_t w : p.words) {
      for (int s = 24; s >= 0; s -= 8) code.push_back(static_cast<uint8_t>(w >> s));
    }
    Machine m;
    LoadProgram(m, code, 0x1000, p.data, p.end);
    citcat::testing::RegisterChecker<kRegisterNumbers> checker([&] { return RegistersOf(m.cpu); });
    m.cpu.set_observer(&checker);
    std::mt19937_64 rng(seed);
    const uint64_t end = 0xFFFFFFFF00000000ull | p.end;
    uint64_t done = 0;
    while (done < 200'000 && m.cpu.pc() != end) {
      m.cpu.SetInterruptLine(2, options.exceptions && rng() % 16 == 0);
      done += m.cpu.Run(1 + rng() % 200);
      checker.Check();
      ASSERT_FALSE(HasFailure()) << "seed " << seed;
    }
    EXPECT_GE(checker.checked, m.cpu.retired()) << "seed " << seed;
    if (options.exceptions) {
      EXPECT_GT(m.cpu.exceptions(), 300u) << "seed " << seed;
    } else {
      EXPECT_EQ(m.cpu.pc(), end) << "seed " << seed;
      EXPECT_GT(checker.told, checker.checked / 2) << "seed " << seed;
    }
  }
}

#ifdef CITCAT_GUEST_DIR  // the compiled guest programs, when the build had the cross compiler
TEST(RunLength, CompiledProgramsInRunsOfAnyLength) {
  for (const char* name : {"sort", "hash", "compress"}) {
    std::ifstream f(std::string(CITCAT_GUEST_DIR) + "/" + name + ".bin", std::ios::binary);
    const std::vector<uint8_t> image(std::istreambuf_iterator<char>(f), {});
    ASSERT_FALSE(image.empty()) << name;
    Machine a, b;
    LoadProgram(a, image, 0x1000, {}, 0x8000100C);
    LoadProgram(b, image, 0x1000, {}, 0x8000100C);
    CompareRuns(a, b, 200'000, 7, 5000);
    if (HasFatalFailure()) return;
  }
}
#endif  // CITCAT_GUEST_DIR

}  // namespace
}  // namespace citcat::mips
