#include "tests/simcore/unicorn_lockstep.h"

#include <unicorn/mips.h>

#include <vector>

#include "absl/strings/str_format.h"
#include "simcore/mips/decoder.h"
#include "simcore/mips/disasm.h"

namespace citcat::mips {
namespace {

uint64_t Sext32(uint64_t v) { return static_cast<uint64_t>(static_cast<int32_t>(v)); }

// QEMU's exception numbers as Unicorn reports them in UC_HOOK_INTR.
int QemuException(uint32_t exc_code) {
  switch (exc_code) {
    case kExcAdel:
      return 12;
    case kExcAdes:
      return 13;
    case kExcSys:
      return 17;
    case kExcBp:
      return 18;
    case kExcCpu:
      return 19;
    case kExcRi:
      return 20;
    case kExcOv:
      return 21;
    case kExcTr:
      return 22;
    case kExcTlbl:
      return 26;
    case kExcTlbs:
      return 27;
    default:
      return -1;
  }
}

}  // namespace

UnicornLockstep::UnicornLockstep(const CpuConfig& config)
    : bus_(kRamBytes), cpu_(std::make_unique<Cpu>(bus_, config)) {
  cpu_->WriteCp0(kCp0Status, 0);  // kernel mode, BEV=0, ERL=0
  const uc_mode endian = config.big_endian ? UC_MODE_BIG_ENDIAN : UC_MODE_LITTLE_ENDIAN;
  uc_open(UC_ARCH_MIPS, static_cast<uc_mode>(UC_MODE_MIPS32 | endian), &uc_);
  uc_ctl_set_cpu_model(uc_, UC_CPU_MIPS32_4KC);
  uc_mem_map(uc_, 0, kRamBytes, UC_PROT_ALL);  // kseg0/kseg1 reach physical memory directly
  uc_hook_add(uc_, &code_hook_, UC_HOOK_CODE, reinterpret_cast<void*>(&OnCode), this, 1, 0);
  uc_hook_add(uc_, &intr_hook_, UC_HOOK_INTR, reinterpret_cast<void*>(&OnInterrupt), this, 1, 0);
}

UnicornLockstep::~UnicornLockstep() {
  if (uc_) uc_close(uc_);
}

void UnicornLockstep::Write(uint64_t paddr, std::span<const uint8_t> bytes) {
  bus_.Poke(paddr, bytes);
  uc_mem_write(uc_, paddr, bytes.data(), bytes.size());
}

void UnicornLockstep::WriteWords(uint64_t paddr, std::span<const uint32_t> words) {
  std::vector<uint8_t> bytes;
  bytes.reserve(words.size() * 4);
  for (uint32_t w : words) {
    for (int k = 0; k < 4; ++k) {
      const int shift = cpu_->big_endian() ? 24 - 8 * k : 8 * k;
      bytes.push_back(static_cast<uint8_t>(w >> shift));
    }
  }
  Write(paddr, bytes);
}

uint32_t UnicornLockstep::CodeWord(uint64_t vaddr) const {
  const uint32_t be = bus_.PeekWordBE(vaddr & 0x1FFFFFFF);  // code is never modified
  return cpu_->big_endian() ? be : __builtin_bswap32(be);
}

void UnicornLockstep::SetGpr(int i, uint32_t value) {
  cpu_->set_gpr(i, Sext32(value));
  uint32_t v = value;
  uc_reg_write(uc_, UC_MIPS_REG_0 + i, &v);
}

bool UnicornLockstep::StepOurs() {
  // Unicorn computes DIV/DIVU by zero differently (see header): note it, copy HI/LO after.
  const uint32_t word = CodeWord(cpu_->pc());
  const Op op = DecodeOp(word);
  const bool div0 =
      (op == Op::kDiv || op == Op::kDivu) && static_cast<uint32_t>(cpu_->gpr(Rt(word))) == 0;
  const uint64_t pc = cpu_->pc();
  recent_[recent_count_++ % 8] = pc;
  cpu_->Step();
  const InstructionInfo info = Describe(word);
  if (info.likely && cpu_->pc() == pc + 8) nullified_slot_ = static_cast<uint32_t>(pc + 4);
  if (div0) {
    uint32_t hi = static_cast<uint32_t>(cpu_->hi()), lo = static_cast<uint32_t>(cpu_->lo());
    uc_reg_write(uc_, UC_MIPS_REG_HI, &hi);
    uc_reg_write(uc_, UC_MIPS_REG_LO, &lo);
    ++result_.div_by_zero;
  }
  return true;
}

bool UnicornLockstep::Compare(uint64_t address) {
  int ids[34];
  uint32_t vals[34];
  void* ptrs[34];
  for (int i = 0; i < 32; ++i) ids[i] = UC_MIPS_REG_0 + i;
  ids[32] = UC_MIPS_REG_HI;
  ids[33] = UC_MIPS_REG_LO;
  for (int i = 0; i < 34; ++i) ptrs[i] = &vals[i];
  uc_reg_read_batch(uc_, ids, ptrs, 34);
  std::string diff;
  if (cpu_->pc() != Sext32(address)) {
    diff += absl::StrFormat(" pc ours=%016x unicorn=%08x", cpu_->pc(), address);
  }
  for (int i = 1; i < 32; ++i) {
    if (cpu_->gpr(i) != Sext32(vals[i])) {
      diff += absl::StrFormat(" $%d ours=%016x unicorn=%08x", i, cpu_->gpr(i), vals[i]);
    }
  }
  if (cpu_->hi() != Sext32(vals[32])) {
    diff += absl::StrFormat(" hi ours=%016x unicorn=%08x", cpu_->hi(), vals[32]);
  }
  if (cpu_->lo() != Sext32(vals[33])) {
    diff += absl::StrFormat(" lo ours=%016x unicorn=%08x", cpu_->lo(), vals[33]);
  }
  if (!diff.empty()) {
    result_.mismatch = absl::StrFormat("after %d compared instructions at %08x:%s\n%s",
                                       result_.compared, address, diff, RecentInstructions());
    return false;
  }
  ++result_.compared;
  return true;
}

void UnicornLockstep::OnCode(uc_engine* uc, uint64_t address, uint32_t, void* self_ptr) {
  auto* self = static_cast<UnicornLockstep*>(self_ptr);
  if (self->skip_step_) {
    self->skip_step_ = false;
  } else if (self->stepped_first_) {
    self->StepOurs();
  }
  self->stepped_first_ = true;
  if (address == self->nullified_slot_) {  // ours already stands after the slot
    self->nullified_slot_ = ~uint64_t{0};
    self->skip_step_ = true;
    return;
  }
  if (!self->Compare(address) || self->result_.compared >= self->limit_) uc_emu_stop(uc);
}

void UnicornLockstep::OnInterrupt(uc_engine* uc, uint32_t intno, void* self_ptr) {
  auto* self = static_cast<UnicornLockstep*>(self_ptr);
  self->pending_interrupt_ = static_cast<int>(intno);
  uc_emu_stop(uc);
}

UnicornLockstep::Result UnicornLockstep::Run(uint64_t start, uint64_t end, uint64_t limit) {
  result_ = Result{};
  limit_ = limit;
  cpu_->SetPc(Sext32(start));
  uint64_t pc = start;
  while (true) {
    stepped_first_ = false;
    skip_step_ = false;
    nullified_slot_ = ~uint64_t{0};
    pending_interrupt_ = -1;
    uc_err err = uc_emu_start(uc_, pc, end, 0, 0);
    if (!result_.mismatch.empty() || result_.compared >= limit_) break;
    if (err != UC_ERR_OK && pending_interrupt_ < 0) {
      result_.mismatch = absl::StrFormat("unicorn stopped: %s", uc_strerror(err));
      break;
    }
    if (pending_interrupt_ < 0) {
      // Reached `end`: step ours over the last instruction and compare the final state.
      if (stepped_first_ && !skip_step_) StepOurs();
      Compare(end);
      break;
    }
    // Unicorn raised an exception: ours must take the same one on the same instruction.
    const uint64_t exceptions = cpu_->exceptions();
    if (stepped_first_ && !skip_step_) StepOurs();
    const uint32_t code = (cpu_->cause() >> 2) & 31;
    if (cpu_->exceptions() != exceptions + 1 || QemuException(code) != pending_interrupt_) {
      result_.mismatch = absl::StrFormat(
          "exception mismatch after %d instructions: unicorn %d, ours ExcCode %d (taken: %d)",
          result_.compared, pending_interrupt_, code, cpu_->exceptions() - exceptions);
      break;
    }
    if (cpu_->cause() & kCauseBd) {
      result_.mismatch = "exception in a delay slot: cannot resume Unicorn there";
      break;
    }
    ++result_.exceptions;
    // Both resume after the faulting instruction, as a handler that skips it would.
    pc = static_cast<uint32_t>(cpu_->epc() + 4);
    cpu_->WriteCp0(kCp0Status, cpu_->status() & ~kStatusExl);
    cpu_->SetPc(Sext32(pc));
  }
  return result_;
}

std::string UnicornLockstep::RecentInstructions() const {
  Disassembler dis;
  std::string out = "last instructions (ours):\n";
  const uint64_t n = std::min<uint64_t>(recent_count_, 8);
  for (uint64_t k = recent_count_ - n; k < recent_count_; ++k) {
    const uint64_t pc = recent_[k % 8];
    const uint32_t word = CodeWord(pc);
    out +=
        absl::StrFormat("  %08x: %08x  %s\n", static_cast<uint32_t>(pc), word, dis.Text(pc, word));
  }
  return out;
}

std::string UnicornLockstep::CompareMemory(uint64_t paddr, uint64_t n) {
  std::vector<uint8_t> theirs(n), ours(n);
  uc_mem_read(uc_, paddr, theirs.data(), n);
  if (!cpu_->PeekVirtual(0xFFFFFFFF80000000ull + paddr, ours)) return "memory not readable";
  for (uint64_t i = 0; i < n; ++i) {
    if (theirs[i] != ours[i]) {
      return absl::StrFormat("memory differs at %08x: ours %02x unicorn %02x", paddr + i, ours[i],
                             theirs[i]);
    }
  }
  return "";
}

}  // namespace citcat::mips
