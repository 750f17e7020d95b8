#include "tests/oracles/kernel_lockstep.h"

#include <cstring>
#include <deque>

#include "absl/strings/str_format.h"
#include "simcore/bus.h"
#include "simcore/mips/cpu.h"
#include "simcore/mips/decoder.h"
#include "simcore/mips/disasm.h"
#include "tests/oracles/lockstep.h"
#include "tests/oracles/qemu_system.h"

namespace citcat::oracle {
namespace {

// QEMU's mipssim as the core sees it: RAM at 0, the ROM at 0x1FC00000 (read-only), nothing else
// (reads elsewhere return zeros; the programs do not go there).
class MipssimBus : public simcore::Bus {
 public:
  explicit MipssimBus(const std::vector<uint8_t>& rom)
      : ram_(kMipssimRamBytes, 0), rom_(kMipssimRomBytes, 0) {
    std::memcpy(rom_.data(), rom.data(), std::min(rom.size(), rom_.size()));
  }
  void Read(const cat::BusRecord& record, std::span<uint8_t> data) override {
    if (!Peek(record.address, data)) std::fill(data.begin(), data.end(), 0);
  }
  void Write(const cat::BusRecord& record) override {
    if (record.address + record.data.size() <= ram_.size()) {
      std::memcpy(ram_.data() + record.address, record.data.data(), record.data.size());
    }
  }
  bool Peek(uint64_t address, std::span<uint8_t> data) const override {
    if (address + data.size() <= ram_.size()) {
      std::memcpy(data.data(), ram_.data() + address, data.size());
      return true;
    }
    if (address >= kMipssimRomBase && address + data.size() <= kMipssimRomBase + rom_.size()) {
      std::memcpy(data.data(), rom_.data() + (address - kMipssimRomBase), data.size());
      return true;
    }
    return false;
  }

 private:
  std::vector<uint8_t> ram_;
  std::vector<uint8_t> rom_;
};

class ExceptionLog : public simcore::Observer {
 public:
  void OnInstruction(uint64_t, std::span<const uint8_t>) override {}
  void OnEvent(simcore::EventKind, uint32_t code, uint64_t faulting_pc) override {
    taken = true;
    last_code = static_cast<mips::ExcCode>(code);
    last_pc = faulting_pc;
  }
  bool taken = false;
  mips::ExcCode last_code = mips::kExcInt;
  uint64_t last_pc = 0;
};

constexpr uint32_t kTlbwr = 0x42000006;

constexpr uint32_t kCauseCe = 3u << 28;

// MFC0 or DMFC0 of CP0 register `reg`.
bool ReadsCp0(uint32_t word, int reg) {
  const uint32_t top = word >> 21;
  return (top == 0x200 || top == 0x201) && static_cast<int>((word >> 11) & 31) == reg &&
         (word & 0x7FF) == 0;
}
bool ReadsRandom(uint32_t word) { return ReadsCp0(word, mips::kCp0Random); }
bool ReadsCause(uint32_t word) { return ReadsCp0(word, mips::kCp0Cause); }

class Lockstep {
 public:
  Lockstep(const KernelLockstepOptions& options, KernelLockstepResult* result)
      : options_(options), result_(*result), bus_(options.rom), cpu_(bus_) {
    cpu_.set_observer(&log_);
    cpu_.Reset();
  }

  // One QEMU state: bring the core to it and compare. False ends the run.
  bool OnState(const QemuState& s) {
    if (!result_.failure.empty()) return false;
    if (states_seen_++ >= options_.max_states) {
      result_.failure =
          absl::StrFormat("more than %d states: the program does not end", options_.max_states);
      return false;
    }
    if (s.nullified_delay_slot()) {
      // The core skips the slot together with its branch-likely: step it now, compare later.
      ++result_.nullified;
      if (!skip_step_ && !StepCore()) return false;
      skip_step_ = true;
      return true;
    }
    if (first_) {
      // QEMU's semihosting sets a0 to -1 at reset; an R4400's GPRs are undefined there.
      cpu_.set_gpr(4, s.gpr[4]);
    } else if (!skip_step_ && !StepCore()) {
      return false;
    }
    first_ = skip_step_ = false;
    // An instruction fetch that faults leaves no state in QEMU's log: the exception entry comes
    // straight after the instruction before it.
    if (s.exception_before && !log_.taken && cpu_.pc() != s.pc) {
      if (!StepCore()) return false;
    }
    if (s.exception_before != log_.taken) {
      return Fail(s, log_.taken
                         ? absl::StrFormat("the core took exception %d at %016x, QEMU none\n",
                                           log_.last_code, log_.last_pc)
                         : absl::StrFormat("QEMU took exception (Cause %08x), the core none\n",
                                           s.exception.cause));
    }
    if (log_.taken) ce_defined_ = log_.last_code == mips::kExcCpu;
    // Cause.CE is undefined after any exception but Coprocessor Unusable: QEMU keeps the old
    // value, the core clears it. An MFC0 of Cause gets QEMU's bits.
    const uint32_t cause_mask = ce_defined_ ? ~0u : ~kCauseCe;
    if (!log_.taken && ReadsCause(last_word_) && !ce_defined_) {
      const int rt = (last_word_ >> 16) & 31;
      const uint64_t mixed = (cpu_.gpr(rt) & ~uint64_t{kCauseCe}) | (s.gpr[rt] & kCauseCe);
      if (mixed != cpu_.gpr(rt)) ++result_.undefined_from_qemu;
      cpu_.set_gpr(rt, mixed);
    }
    std::string diff = DiffStates(s, Snapshot());
    auto check = [&](const char* what, uint64_t want, uint64_t got) {
      if (want != got)
        absl::StrAppendFormat(&diff, "%s: qemu %016x, model %016x\n", what, want, got);
    };
    check("Status", s.cp0_status, cpu_.status());
    check("Cause", s.cp0_cause & cause_mask, cpu_.cause() & cause_mask);
    check("EPC", s.cp0_epc, cpu_.epc());
    // QEMU's flag only: it translates a branch that can never be taken (BNE r,r) as a NOP.
    if (s.in_delay_slot()) check("delay slot", 1, cpu_.in_delay_slot());
    if (s.exception_before) {
      check("BadVAddr at the exception", s.exception.bad_vaddr, cpu_.bad_vaddr());
    }
    if (!diff.empty()) return Fail(s, diff);
    ++result_.compared;
    if (s.exception_before) {
      ++result_.exceptions;
      ++result_.by_code[log_.last_code & 31];
      const uint64_t offset = s.exception.vector & 0x1FF;  // BEV=1 vectors sit at 0x200 up
      if (offset == 0x000) ++result_.refills;
      if (offset == 0x080) ++result_.xtlb_refills;
    }
    Remember(s.pc);
    if (result_.compared - 1 == options_.corrupt_at) cpu_.set_gpr(16, cpu_.gpr(16) ^ 0x10);
    return true;
  }

 private:
  bool StepCore() {
    log_.taken = false;
    uint32_t word = 0;
    const bool fetched = Word(cpu_.pc(), &word);
    last_word_ = fetched ? word : 0;
    const bool random = fetched && (word == kTlbwr || ReadsRandom(word));
    const uint32_t wired = static_cast<uint32_t>(cpu_.ReadCp0(mips::kCp0Wired));
    if (random) cpu_.LoadCp0(mips::kCp0Random, qemu_random_.Peek(wired));
    cpu_.Step();
    if (random && !log_.taken) {
      qemu_random_.Next(wired);
      ++result_.random_draws;
    }
    if (log_.taken && (log_.last_code == mips::kExcAdel || log_.last_code == mips::kExcAdes) &&
        SegmentError(fetched ? word : 0)) {
      FillTranslationRegisters();
    }
    return true;
  }

  // An address error for an address no segment allows (not a misaligned one, not a misaligned
  // PC), as opposed to one for a misaligned access.
  bool SegmentError(uint32_t word) const {
    const uint64_t bad = cpu_.bad_vaddr();
    if (bad == log_.last_pc) return (bad & 3) == 0;  // the fetch failed
    const mips::InstructionInfo info = mips::Describe(word);
    if (info.mem_partial) return true;
    return info.mem_bytes != 0 && (bad & (info.mem_bytes - 1)) == 0;
  }

  // After an address error the R4400 leaves Context, XContext and EntryHi's VPN2 undefined;
  // QEMU fills them in as for a TLB miss. Follow it, so that later reads agree.
  void FillTranslationRegisters() {
    const uint64_t va = cpu_.bad_vaddr();
    const uint64_t context = cpu_.ReadCp0(mips::kCp0Context);
    const uint64_t xcontext = cpu_.ReadCp0(mips::kCp0XContext);
    const uint64_t entry_hi = cpu_.ReadCp0(mips::kCp0EntryHi);
    cpu_.LoadCp0(mips::kCp0Context,
                 (context & ~uint64_t{0x7FFFFF}) | (((va >> 13) & 0x7FFFF) << 4));
    cpu_.LoadCp0(mips::kCp0XContext, (xcontext & ~uint64_t{0x1FFFFFFFF}) | ((va >> 62) << 31) |
                                         (((va >> 13) & 0x7FFFFFF) << 4));
    cpu_.LoadCp0(mips::kCp0EntryHi, (va & mips::kEntryHiVpn2Mask) | (entry_hi & 0xFF));
    ++result_.undefined_from_qemu;
  }

  bool Word(uint64_t pc, uint32_t* word) {
    uint8_t b[4];
    if (!cpu_.PeekVirtual(pc, b)) return false;
    *word = uint32_t{b[0]} << 24 | uint32_t{b[1]} << 16 | uint32_t{b[2]} << 8 | b[3];
    return true;
  }

  ArchSnapshot Snapshot() const {
    ArchSnapshot a;
    a.pc = cpu_.pc();
    for (int r = 0; r < 32; ++r) a.gpr[r] = cpu_.gpr(r);
    a.hi = cpu_.hi();
    a.lo = cpu_.lo();
    return a;
  }

  void Remember(uint64_t pc) {
    recent_.push_back(pc);
    if (recent_.size() > 12) recent_.pop_front();
  }

  bool Fail(const QemuState& s, const std::string& diff) {
    std::string context;
    for (uint64_t pc : recent_) {
      uint32_t w = 0;
      Word(pc, &w);
      absl::StrAppendFormat(&context, "  %016x  %08x  %s\n", pc, w, disasm_.Text(pc, w));
    }
    result_.failure = absl::StrFormat(
        "state %d (pc %016x%s%s):\n%slast instructions compared:\n%s", result_.compared, s.pc,
        s.in_delay_slot() ? ", delay slot" : "",
        s.exception_before ? absl::StrFormat(", after exception Cause %08x", s.exception.cause)
                           : "",
        diff, context);
    return false;
  }

  const KernelLockstepOptions& options_;
  KernelLockstepResult& result_;
  MipssimBus bus_;
  mips::Cpu cpu_;
  ExceptionLog log_;
  QemuRandom qemu_random_;
  mips::Disassembler disasm_;
  std::deque<uint64_t> recent_;
  uint64_t states_seen_ = 0;
  bool first_ = true;
  bool skip_step_ = false;
  uint32_t last_word_ = 0;   // the instruction the last step executed
  bool ce_defined_ = false;  // the last exception was Coprocessor Unusable
};

}  // namespace

uint32_t QemuRandom::Draw(uint32_t wired, uint32_t* seed, uint32_t* prev) const {
  const uint32_t entries = 48;
  const uint32_t span = entries - wired % entries;
  if (span == 1) return entries - 1;
  uint32_t idx;
  do {
    *seed = 1103515245u * *seed + 12345u;
    idx = (*seed >> 16) % span + wired % entries;
  } while (idx == *prev);
  *prev = idx;
  return idx;
}

uint32_t QemuRandom::Peek(uint32_t wired) const {
  uint32_t seed = seed_, prev = prev_;
  return Draw(wired, &seed, &prev);
}

uint32_t QemuRandom::Next(uint32_t wired) { return Draw(wired, &seed_, &prev_); }

KernelLockstepResult RunKernelLockstep(const KernelLockstepOptions& options) {
  KernelLockstepResult result;
  Lockstep lockstep(options, &result);
  QemuSystemOptions qemu;
  qemu.rom = options.rom;
  qemu.work_dir = options.work_dir;
  auto run = RunQemuSystem(qemu, [&](const QemuState& s) { return lockstep.OnState(s); });
  if (!run.ok()) {
    result.failure = run.status().ToString();
  } else if (result.failure.empty() && !run->stopped && run->exit_code != 0) {
    result.failure = absl::StrFormat("QEMU exited with %d: %s", run->exit_code, run->errors);
  } else if (result.failure.empty() && result.compared == 0) {
    result.failure = "QEMU logged no state: " + run->errors;
  }
  return result;
}

}  // namespace citcat::oracle
