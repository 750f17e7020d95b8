// The i486 core's x87 against QEMU user mode (qemu-i386 -cpu 486 -singlestep -d cpu,fpu,nochain)
// in lock step on static i386 programs (tests/simcore/x87_guest/): QEMU logs the state before
// every instruction; the core, loaded with the same ELF and started from QEMU's first state, must
// show after each instruction the same EIP, general registers, control word, status word, the
// abridged tag word (non-empty registers) and the contents of every non-empty physical register.
// Each difference the i486 and QEMU are known to have is named in docs/machines/i486-fpu.md
// ("x87 instructions", "Checks"); this test reports any other.
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "machine/elf_loader.h"
#include "simcore/x86/cpu.h"

namespace citcat::x86 {
namespace {

struct QemuState {
  uint32_t gpr[8] = {};
  uint32_t eip = 0;
  uint16_t selector[6] = {};
  uint16_t fcw = 0, fsw = 0;
  uint8_t ftw = 0;  // bit per physical register: 1 = not empty
  std::array<Float80, 8> fpr{};
};

uint64_t Hex(absl::string_view s) {
  uint64_t v = 0;
  EXPECT_TRUE(absl::SimpleHexAtoi(s, &v)) << s;
  return v;
}

void Fields(absl::string_view line, QemuState& s) {
  static constexpr const char* kGpr[8] = {"EAX", "ECX", "EDX", "EBX", "ESP", "EBP", "ESI", "EDI"};
  static constexpr const char* kSeg[6] = {"ES", "CS", "SS", "DS", "FS", "GS"};
  for (int i = 0; i < 6; ++i) {
    if (absl::StartsWith(line, absl::StrCat(kSeg[i], " ="))) {  // "CS =0023 00000000 ..."
      s.selector[i] = static_cast<uint16_t>(Hex(line.substr(4, 4)));
      return;
    }
  }
  // "FPR0=8000000000000000 3fff FPR1=..." : the significand, then sign and exponent.
  std::vector<absl::string_view> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
  for (size_t w = 0; w < words.size(); ++w) {
    const size_t eq = words[w].find('=');
    if (eq == absl::string_view::npos) continue;
    const absl::string_view name = words[w].substr(0, eq), value = words[w].substr(eq + 1);
    for (int r = 0; r < 8; ++r) {
      if (name == kGpr[r]) s.gpr[r] = static_cast<uint32_t>(Hex(value));
    }
    if (name == "EIP") s.eip = static_cast<uint32_t>(Hex(value));
    if (name == "FCW") s.fcw = static_cast<uint16_t>(Hex(value));
    if (name == "FSW") s.fsw = static_cast<uint16_t>(Hex(value));
    if (name == "FTW") s.ftw = static_cast<uint8_t>(Hex(value));
    if (absl::StartsWith(name, "FPR") && name.size() == 4 && w + 1 < words.size()) {
      const int r = name[3] - '0';
      s.fpr[r] = Float80{Hex(value), static_cast<uint16_t>(Hex(words[w + 1]))};
    }
  }
}

// QEMU running a program, its log read through a pipe as it is written (a log file of a few
// hundred thousand instructions would take hundreds of megabytes).
class QemuLog {
 public:
  explicit QemuLog(const std::string& program) {
    // -D /dev/stdout: the log goes to the pipe; the programs write nothing themselves.
    const std::string command = absl::StrCat(
        CITCAT_QEMU_USER_I386, " -cpu 486 -singlestep -d cpu,fpu,nochain -D /dev/stdout ", program,
        " 2>/dev/null");
    pipe_ = popen(command.c_str(), "r");
  }
  ~QemuLog() {
    if (pipe_ != nullptr) pclose(pipe_);
  }
  // The next state QEMU logged (the state before an instruction); false at the end of the log.
  bool Next(QemuState* state) {
    if (pipe_ == nullptr) return false;
    bool started = false;
    while (true) {
      if (pending_.empty() && !ReadLine(&pending_)) return started;
      if (absl::StartsWith(pending_, "EAX=")) {
        if (started) return true;  // the next record begins: keep its line
        started = true;
        *state = QemuState{};
      }
      if (started) Fields(pending_, *state);
      pending_.clear();
    }
  }

 private:
  bool ReadLine(std::string* line) {
    char buf[512];
    line->clear();
    while (std::fgets(buf, sizeof buf, pipe_) != nullptr) {
      line->append(buf);
      if (!line->empty() && line->back() == '\n') return true;
    }
    return !line->empty();
  }

  FILE* pipe_ = nullptr;
  std::string pending_;
};

// A user process's memory: pages appear when touched.
class SparseBus final : public simcore::Bus {
 public:
  void Read(const cat::BusRecord& r, std::span<uint8_t> data) override {
    for (size_t i = 0; i < data.size(); ++i) data[i] = *At(r.address + i);
  }
  void Write(const cat::BusRecord& r) override {
    for (size_t i = 0; i < r.data.size(); ++i) *At(r.address + i) = r.data[i];
  }
  uint8_t* At(uint64_t a) {
    auto& page = pages_[static_cast<uint32_t>(a >> 12)];
    if (page.empty()) page.resize(4096);
    return &page[a & 0xFFF];
  }

 private:
  std::map<uint32_t, std::vector<uint8_t>> pages_;
};

// The differences between QEMU 7.2 and the i486 that the comparison accepts (and then adopts
// QEMU's status word, so one difference does not show again in a later FNSTSW):
// - QEMU never sets C1 for a result rounded up; the i486 does ("rounded up"), so a status word
//   that differs only in C1, set by the core after an inexact result, is that difference.
// - QEMU's FSQRT of a negative operand sets C2 and clears C0/C3 (undefined on Intel; the core
//   leaves them as they were).
// - QEMU raises no DE for a single or double denormal memory operand (FLD m32/m64, FADD m32 ...).
// - QEMU's FPREM1 leaves C0/C3/C1 clear where the quotient it rounded to nearest has bits set
//   (11 rem 3: quotient 4, remainder -1: the i486 sets C0 = Q2).
// - FCHS, FABS, FXCH, FST/FSTP ST(i), FINCSTP, FDECSTP clear C1 on Intel; QEMU leaves it.
bool KnownDifference(const Instruction& in, uint16_t core, uint16_t qemu) {
  const Op op = in.op;
  const uint16_t d = core ^ qemu;
  if (d == kExDenormal && (core & kExDenormal) && in.dst == Operand::kMem &&
      (in.mem_size == 4 || in.mem_size == 8)) {
    return true;
  }
  if (d == kSwC1 && (core & kSwC1) && (core & kExPrecision)) return true;
  const bool clears_c1 = op == Op::kFchs || op == Op::kFabs || op == Op::kFxch || op == Op::kFst ||
                         op == Op::kFstp || op == Op::kFincstp || op == Op::kFdecstp;
  if (clears_c1 && d == kSwC1 && !(core & kSwC1)) return true;
  if (op == Op::kFprem1 && (d & ~(kSwC0 | kSwC1 | kSwC3)) == 0 &&
      !(qemu & (kSwC0 | kSwC1 | kSwC3))) {
    return true;
  }
  if (op == Op::kFsqrt && (qemu & kSwC2) && (d & ~(kSwC0 | kSwC2 | kSwC3)) == 0) return true;
  return false;
}

std::string Show(Float80 v) { return absl::StrFormat("%04x:%016x", v.sign_exp, v.signif); }

// The first difference over the whole run, or "".
std::string Compare(const std::string& path, size_t* compared, size_t* known) {
  const std::string name = std::filesystem::path(path).filename();
  QemuLog qemu(path);
  QemuState q;
  if (!qemu.Next(&q)) return "QEMU logged nothing";
  const auto elf = machine::LoadElfFile(path);
  if (!elf.ok()) return std::string(elf.status().message());
  SparseBus bus;
  for (const machine::ElfSegment& s : elf->segments) {
    for (size_t i = 0; i < s.data.size(); ++i) *bus.At(s.vaddr + i) = s.data[i];
  }
  Cpu cpu(bus);
  cpu.SetFlat32();
  cpu.fpu().Init();              // Linux starts a process with the FNINIT state
  for (int i = 0; i < 6; ++i) {  // the selectors FSTENV records (bases and limits stay flat)
    Segment seg = cpu.segment(i);
    seg.selector = q.selector[i];
    cpu.set_segment(i, seg);
  }
  for (int r = 0; r < 8; ++r) cpu.set_reg(r, q.gpr[r]);
  cpu.set_eip(q.eip);
  *compared = *known = 0;
  for (size_t i = 0;; ++i) {
    const uint32_t eip = q.eip;
    const uint8_t* at = bus.At(cpu.eip());
    if (at[0] == 0xCD && at[1] == 0x80) break;  // the exit system call
    if (!qemu.Next(&q)) return absl::StrFormat("%s: QEMU's log ended at %08x", name, eip);
    const Instruction in = Decode(at, kMaxInstructionLength, true);
    if (cpu.Run(1) != 1) {
      return absl::StrFormat("%s: instruction %d at %08x (%s) stopped the core (vector %d%s)", name,
                             i, eip, Mnemonic(in.op), cpu.exception().vector,
                             cpu.exception().unmodelled ? ", unmodelled" : "");
    }
    const Fpu& f = cpu.fpu();
    std::string diff;
    if (cpu.eip() != q.eip) diff += absl::StrFormat(" EIP %08x/%08x", cpu.eip(), q.eip);
    for (int r = 0; r < 8; ++r) {
      if (cpu.reg(r) != q.gpr[r])
        diff += absl::StrFormat(" r%d %08x/%08x", r, cpu.reg(r), q.gpr[r]);
    }
    if (f.control_word() != q.fcw)
      diff += absl::StrFormat(" FCW %04x/%04x", f.control_word(), q.fcw);
    if (f.status_word() != q.fsw && KnownDifference(in, f.status_word(), q.fsw)) {
      cpu.fpu().set_status_word(q.fsw);
      ++*known;
    }
    if (f.status_word() != q.fsw) diff += absl::StrFormat(" FSW %04x/%04x", f.status_word(), q.fsw);
    uint8_t ftw = 0;
    for (int r = 0; r < 8; ++r) {
      if (((f.tag_word() >> (2 * r)) & 3) != 3) ftw |= 1 << r;
    }
    if (ftw != q.ftw) diff += absl::StrFormat(" FTW %02x/%02x", ftw, q.ftw);
    for (int r = 0; r < 8; ++r) {
      if ((ftw >> r & 1) && f.physical_register(r) != q.fpr[r]) {
        diff += absl::StrFormat(" R%d %s/%s", r, Show(f.physical_register(r)), Show(q.fpr[r]));
      }
    }
    if (!diff.empty()) {
      return absl::StrFormat("%s: after instruction %d at %08x (%s), core/QEMU:%s", name, i, eip,
                             Mnemonic(in.op), diff);
    }
    ++*compared;
  }
  return "";
}

// Prints the line the closing figures are read from (as the Unicorn lock step does).
void PrintCompared(const std::string& what, size_t compared, size_t known) {
  std::printf("COMPARED QEMU-user %s: %zu instructions (%zu known differences)\n", what.c_str(),
              compared, known);
}

TEST(X87QemuLockstep, EveryInstructionGroup) {
  size_t compared = 0, known = 0;
  EXPECT_EQ(Compare(std::string(CITCAT_X87_GUESTS) + "/x87_ops", &compared, &known), "");
  EXPECT_GT(compared, 150u);
  PrintCompared("x87 instruction groups", compared, known);
}

TEST(X87QemuLockstep, CompiledFloatingPointCode) {
  size_t compared = 0, known = 0;
  EXPECT_EQ(Compare(std::string(CITCAT_X87_GUESTS) + "/x87_calc", &compared, &known), "");
  EXPECT_GT(compared, 3000u);
  PrintCompared("compiled x87_calc", compared, known);
}

#ifdef CITCAT_X87_FP_WORKLOAD
// The R4400 fp workload (guest/r4400/workloads/fp.c: a matrix product, an N-body integration with
// square roots and divisions, conversions, compares) as a static i386 Linux program at -O2.
TEST(X87QemuLockstep, CompiledFpWorkload) {
  size_t compared = 0, known = 0;
  EXPECT_EQ(Compare(CITCAT_X87_FP_WORKLOAD, &compared, &known), "");
  EXPECT_GT(compared, 300000u);
  PrintCompared("compiled fp workload", compared, known);
}
#endif

}  // namespace
}  // namespace citcat::x86
