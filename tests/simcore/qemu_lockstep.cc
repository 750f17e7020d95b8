#include "tests/simcore/qemu_lockstep.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>

#include "absl/strings/str_format.h"
#include "simcore/mips/cpu.h"
#include "simcore/mips/decoder.h"
#include "simcore/ram_bus.h"

namespace citcat::mips {
namespace {

constexpr char kQemu[] = "/usr/bin/qemu-mipsn32";

void Put16(std::vector<uint8_t>& v, size_t at, uint16_t x) {
  v[at] = static_cast<uint8_t>(x >> 8);
  v[at + 1] = static_cast<uint8_t>(x);
}
void Put32(std::vector<uint8_t>& v, size_t at, uint32_t x) {
  Put16(v, at, static_cast<uint16_t>(x >> 16));
  Put16(v, at + 2, static_cast<uint16_t>(x));
}

// A static big-endian n32 executable: ELF header, one RWX PT_LOAD segment, the image.
std::vector<uint8_t> MakeElf(const std::vector<uint8_t>& image) {
  constexpr size_t kHeader = 52, kPhdr = 32, kOffset = 0x1000;
  std::vector<uint8_t> f(kOffset + image.size(), 0);
  const uint8_t ident[16] = {0x7F, 'E', 'L', 'F', 1 /*32-bit*/, 2 /*big*/, 1 /*version*/};
  std::copy(ident, ident + 16, f.begin());
  Put16(f, 16, 2);                         // ET_EXEC
  Put16(f, 18, 8);                         // EM_MIPS
  Put32(f, 20, 1);                         // EV_CURRENT
  Put32(f, 24, kQemuImageBase);            // entry
  Put32(f, 28, kHeader);                   // program headers
  Put32(f, 36, 0x20000020);                // flags: MIPS III, n32 (EF_MIPS_ABI2)
  Put16(f, 40, kHeader);                   // header size
  Put16(f, 42, kPhdr);                     // program header size
  Put16(f, 44, 1);                         // one program header
  Put16(f, 46, 40);                        // section header size (none present)
  Put32(f, kHeader + 0, 1);                // PT_LOAD
  Put32(f, kHeader + 4, kOffset);          // file offset
  Put32(f, kHeader + 8, kQemuImageBase);   // vaddr
  Put32(f, kHeader + 12, kQemuImageBase);  // paddr
  Put32(f, kHeader + 16, static_cast<uint32_t>(image.size()));
  Put32(f, kHeader + 20, static_cast<uint32_t>(image.size()));
  Put32(f, kHeader + 24, 7);       // RWX
  Put32(f, kHeader + 28, 0x1000);  // alignment
  std::copy(image.begin(), image.end(), f.begin() + kOffset);
  return f;
}

struct State {
  uint64_t pc = 0, hi = 0, lo = 0;
  uint64_t gpr[32] = {};
};

// Parses "pc=0x... HI=0x... LO=0x..." followed by "GPRnn:" rows of "name value" pairs.
class LogReader {
 public:
  explicit LogReader(const std::string& path) : f_(path) {}
  bool Next(State* s) {
    std::string line;
    while (std::getline(f_, line)) {
      unsigned long long pc, hi, lo;
      if (std::sscanf(line.c_str(), "pc=0x%llx HI=0x%llx LO=0x%llx", &pc, &hi, &lo) != 3) continue;
      s->pc = pc;
      s->hi = hi;
      s->lo = lo;
      for (int row = 0; row < 8; ++row) {
        if (!std::getline(f_, line)) return false;
        char n[4][8];
        unsigned long long v[4];
        int base;
        if (std::sscanf(line.c_str(), "GPR%d: %7s %llx %7s %llx %7s %llx %7s %llx", &base, n[0],
                        &v[0], n[1], &v[1], n[2], &v[2], n[3], &v[3]) != 9) {
          return false;
        }
        for (int k = 0; k < 4; ++k) s->gpr[base + k] = v[k];
      }
      return true;
    }
    return false;
  }

 private:
  std::ifstream f_;
};

uint64_t Sext32(uint64_t v) { return static_cast<uint64_t>(static_cast<int32_t>(v)); }

// 32-bit operations whose result the R4400 leaves unpredictable for operands that are not
// sign-extended 32-bit values.
bool Unpredictable32(const Cpu& cpu, uint32_t word) {
  bool uses_rs = true, uses_rt = true;
  switch (DecodeOp(word)) {
    case Op::kAdd:
    case Op::kAddu:
    case Op::kSub:
    case Op::kSubu:
    case Op::kMult:
    case Op::kMultu:
    case Op::kDiv:
    case Op::kDivu:
    case Op::kSrlv:
    case Op::kSrav:
    case Op::kSllv:
      break;
    case Op::kAddi:
    case Op::kAddiu:
      uses_rt = false;
      break;
    case Op::kSrl:
    case Op::kSra:
    case Op::kSll:
      uses_rs = false;
      break;
    default:
      return false;
  }
  const uint64_t rs = cpu.gpr(Rs(word)), rt = cpu.gpr(Rt(word));
  return (uses_rs && rs != Sext32(rs)) || (uses_rt && rt != Sext32(rt));
}

std::string Diff(const Cpu& cpu, const State& s) {
  std::string d;
  if (cpu.pc() != Sext32(s.pc)) d += absl::StrFormat(" pc ours=%x qemu=%x", cpu.pc(), s.pc);
  for (int i = 1; i < 32; ++i) {
    if (i == 29) continue;  // QEMU's initial stack pointer; the programs never use $sp
    if (cpu.gpr(i) != s.gpr[i])
      d += absl::StrFormat(" $%d ours=%x qemu=%x", i, cpu.gpr(i), s.gpr[i]);
  }
  if (cpu.hi() != s.hi) d += absl::StrFormat(" hi ours=%x qemu=%x", cpu.hi(), s.hi);
  if (cpu.lo() != s.lo) d += absl::StrFormat(" lo ours=%x qemu=%x", cpu.lo(), s.lo);
  return d;
}

}  // namespace

bool QemuAvailable() { return access(kQemu, X_OK) == 0; }

QemuLockstepResult RunAgainstQemu(const std::vector<uint8_t>& image, const std::string& work_dir) {
  QemuLockstepResult result;
  const std::string elf = work_dir + "/prog.elf", log = work_dir + "/qemu.log";
  {
    const std::vector<uint8_t> bytes = MakeElf(image);
    std::ofstream out(elf, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  }
  chmod(elf.c_str(), 0755);
  const pid_t pid = fork();
  if (pid == 0) {
    execl(kQemu, kQemu, "-cpu", "R4000", "-singlestep", "-d", "cpu,nochain", "-D", log.c_str(),
          elf.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    result.error = absl::StrFormat("qemu exit status %d", status);
    return result;
  }

  // Our side: kernel mode (64-bit operations allowed, 32-bit addressing), the image in RAM at
  // physical 0, mapped at 0x10000000 by one 16 MB page (cached).
  simcore::RamBus bus(8 << 20);
  bus.Poke(0, image);
  Cpu cpu(bus);
  cpu.WriteCp0(kCp0Status, 0);
  cpu.WriteCp0(kCp0PageMask, 0x01FFE000);
  cpu.WriteCp0(kCp0EntryHi, kQemuImageBase);
  cpu.WriteCp0(kCp0EntryLo0, (0 << 6) | (3 << 3) | 0x7);  // PFN 0, C=3, D, V, G
  cpu.WriteCp0(kCp0EntryLo1, (0x1000000 >> 12) << 6 | (3 << 3) | 0x7);
  cpu.tlb().Write(0, 0x01FFE000, kQemuImageBase, cpu.ReadCp0(kCp0EntryLo0),
                  cpu.ReadCp0(kCp0EntryLo1));
  cpu.FlushTranslations();
  cpu.SetPc(kQemuImageBase);

  LogReader reader(log);
  State s;
  bool first = true;
  uint32_t last_word = 0;
  bool skip_step = false;
  while (reader.Next(&s)) {
    if (skip_step) {
      skip_step = false;
    } else if (!first) {
      // One log record per translation block (-singlestep: one instruction, sometimes a branch
      // with its delay slot).
      const uint64_t before = cpu.exceptions();
      last_word = bus.PeekWordBE(cpu.pc() - kQemuImageBase);
      const bool unpredictable = Unpredictable32(cpu, last_word);
      cpu.Step();
      // QEMU logs a delay slot on its own or together with its branch, depending on the block.
      if (cpu.in_delay_slot() && cpu.pc() != Sext32(s.pc)) {
        const uint32_t slot = bus.PeekWordBE(cpu.pc() - kQemuImageBase);
        const bool slot_unpredictable = Unpredictable32(cpu, slot);
        cpu.Step();
        if (slot_unpredictable && !Diff(cpu, s).empty()) {
          for (int i = 1; i < 32; ++i) cpu.set_gpr(i, s.gpr[i]);
          cpu.set_hi(s.hi);
          cpu.set_lo(s.lo);
          ++result.unpredictable;
        }
      }
      if (cpu.exceptions() != before) {
        result.mismatch =
            absl::StrFormat("our core took exception %d at %x", (cpu.cause() >> 2) & 31, cpu.epc());
        return result;
      }
      if (unpredictable && !Diff(cpu, s).empty()) {
        const InstructionInfo info = Describe(last_word);
        for (int i = 1; i < 32; ++i) {
          if (info.gpr_written & (1u << i)) cpu.set_gpr(i, s.gpr[i]);
        }
        if (info.writes_hi) cpu.set_hi(s.hi);
        if (info.writes_lo) cpu.set_lo(s.lo);
        ++result.unpredictable;
      }
    }
    first = false;
    if (first == false && result.compared == 0) {
      // QEMU starts with $sp set by its loader; ours with zero. Nothing else differs at entry.
      cpu.set_gpr(29, s.gpr[29]);
    }
    // QEMU logs the nullified slot of an untaken branch-likely; ours is already past it.
    if (Describe(last_word).likely && Sext32(s.pc) + 4 == cpu.pc()) {
      skip_step = true;
      continue;
    }
    const std::string d = Diff(cpu, s);
    if (!d.empty()) {
      result.mismatch =
          absl::StrFormat("after %d boundaries, last word %08x:%s", result.compared, last_word, d);
      return result;
    }
    ++result.compared;
  }
  std::remove(log.c_str());
  return result;
}

}  // namespace citcat::mips
