#include "traces/mips_recorder.h"

#include "simcore/mips/decoder.h"

namespace citcat::traces {
namespace {

using mips::Op;

uint64_t Mask(uint8_t bytes) {
  return bytes >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * bytes)) - 1;
}

Mode ModeOf(const mips::Cpu& cpu) {
  const uint32_t status = cpu.status();
  if (status & (mips::kStatusExl | mips::kStatusErl)) return Mode::kKernel;
  switch ((status >> mips::kStatusKsuShift) & 3) {
    case 1:
      return Mode::kSupervisor;
    case 2:
      return Mode::kUser;
    default:
      return Mode::kKernel;
  }
}

// The branch outcome from the registers before the branch executes.
bool Taken(Op op, mips::Cpu& cpu, uint32_t word) {
  const int64_t rs = static_cast<int64_t>(cpu.gpr(mips::Rs(word)));
  const int64_t rt = static_cast<int64_t>(cpu.gpr(mips::Rt(word)));
  const bool fcc = (cpu.fpu().fcsr() >> 23) & 1;
  switch (op) {
    case Op::kBeq:
    case Op::kBeql:
      return rs == rt;
    case Op::kBne:
    case Op::kBnel:
      return rs != rt;
    case Op::kBlez:
    case Op::kBlezl:
      return rs <= 0;
    case Op::kBgtz:
    case Op::kBgtzl:
      return rs > 0;
    case Op::kBltz:
    case Op::kBltzl:
    case Op::kBltzal:
    case Op::kBltzall:
      return rs < 0;
    case Op::kBgez:
    case Op::kBgezl:
    case Op::kBgezal:
    case Op::kBgezall:
      return rs >= 0;
    case Op::kBc1f:
    case Op::kBc1fl:
      return !fcc;
    case Op::kBc1t:
    case Op::kBc1tl:
      return fcc;
    default:
      return true;
  }
}

// FP registers and the condition bit, which the decoder's GPR sets leave out.
void AddFpuOperands(Op op, uint32_t w, Record& r) {
  const uint16_t ft = kRegFpr0 + mips::Rt(w), fs = kRegFpr0 + mips::Rd(w);
  const uint16_t fd = kRegFpr0 + mips::Sa(w);
  switch (op) {
    case Op::kLwc1:
    case Op::kLdc1:
      r.AddWritten(ft);
      break;
    case Op::kSwc1:
    case Op::kSdc1:
      r.AddRead(ft);
      break;
    case Op::kMfc1:
    case Op::kDmfc1:
      r.AddRead(fs);
      break;
    case Op::kMtc1:
    case Op::kDmtc1:
      r.AddWritten(fs);
      break;
    case Op::kCfc1:
      r.AddRead(kRegFlags);
      break;
    case Op::kCtc1:
      r.AddWritten(kRegFlags);
      break;
    case Op::kBc1f:
    case Op::kBc1t:
    case Op::kBc1fl:
    case Op::kBc1tl:
      r.AddRead(kRegFlags);
      break;
    case Op::kCop1Arith: {
      const uint32_t funct = w & 0x3F;
      r.AddRead(fs);
      if (funct >= 0x30) {  // C.cond.fmt
        r.AddRead(ft);
        r.AddWritten(kRegFlags);
      } else {
        if (funct <= 3) r.AddRead(ft);  // ADD, SUB, MUL, DIV
        r.AddWritten(fd);
      }
      break;
    }
    default:
      break;
  }
}

int64_t Immediate(Op op, uint32_t w) {
  switch (op) {
    case Op::kAndi:
    case Op::kOri:
    case Op::kXori:
    case Op::kLui:
      return mips::Uimm(w);
    case Op::kSll:
    case Op::kSrl:
    case Op::kSra:
    case Op::kDsll:
    case Op::kDsrl:
    case Op::kDsra:
      return mips::Sa(w);
    case Op::kDsll32:
    case Op::kDsrl32:
    case Op::kDsra32:
      return mips::Sa(w) + 32;
    case Op::kJ:
    case Op::kJal:
      return w & 0x03FFFFFF;
    default:
      return (w >> 26) == 0 ? 0 : mips::Simm(w);  // SPECIAL-group operations have none
  }
}

}  // namespace

MipsRecorder::MipsRecorder(TraceSink& sink) : sink_(sink) {}

absl::string_view MipsRecorder::Text(const Record& record) {
  if (!disasm_) disasm_ = std::make_unique<mips::Disassembler>();
  return disasm_->Text(record.pc, record.word);
}

void MipsRecorder::OnInstruction(mips::Cpu& cpu, uint64_t pc, uint32_t word) {
  if (has_pending_) Complete(cpu);
  const mips::InstructionInfo info = mips::Describe(word);
  Record& r = pending_;
  r = Record();
  r.index = cpu.retired();
  r.pc = pc;
  r.word = word;
  r.size = 4;
  r.mode = ModeOf(cpu);
  const std::string_view name = mips::OpName(info.op);
  r.mnemonic = absl::string_view(name.data(), name.size());
  r.immediate = Immediate(info.op, word);
  r.disassembler = this;
  for (int i = 1; i < 32; ++i) {
    if (info.gpr_read & (1u << i)) r.AddRead(i);
  }
  if (info.reads_hi) r.AddRead(kRegHi);
  if (info.reads_lo) r.AddRead(kRegLo);
  for (int i = 1; i < 32; ++i) {
    if (info.gpr_written & (1u << i)) r.AddWritten(i);
  }
  if (info.writes_hi) r.AddWritten(kRegHi);
  if (info.writes_lo) r.AddWritten(kRegLo);
  if (info.fpu) AddFpuOperands(info.op, word, r);

  load_gpr_ = -1;
  load_fpr_ = -1;
  load_partial_ = info.mem_partial;
  store_conditional_ = info.op == Op::kSc || info.op == Op::kScd;
  if (info.mem == mips::MemAccess::kLoad || info.mem == mips::MemAccess::kStore) {
    MemoryAccess& a = r.access[r.num_accesses++];
    a.size = info.mem_bytes;
    a.address = cpu.gpr(mips::Rs(word)) + static_cast<uint64_t>(int64_t{mips::Simm(word)});
    if (info.mem_partial) a.address &= ~uint64_t{a.size - 1u};
    a.store = info.mem == mips::MemAccess::kStore;
    if (a.store) {
      // FP registers through the FPU's own word and doubleword views (FR-mode pairing).
      a.value = !info.fpu
                    ? cpu.gpr(mips::Rt(word)) & (info.mem_partial ? ~uint64_t{0} : Mask(a.size))
                : a.size == 8 ? cpu.fpu().ReadDouble(mips::Rt(word))
                              : cpu.fpu().ReadWord(mips::Rt(word));
      a.value_known = true;
    } else if (info.fpu) {
      load_fpr_ = mips::Rt(word);
    } else {
      load_gpr_ = mips::Rt(word);
    }
  }

  r.fallthrough = pc + (info.delay_slot ? 8 : 4);
  r.delay_slot = info.delay_slot;
  switch (info.flow) {
    case mips::Flow::kBranch:
      r.branch =
          info.link ? (info.op == Op::kBgezal && mips::Rs(word) == 0 ? BranchKind::kDirectCall
                                                                     : BranchKind::kConditionalCall)
                    : ((info.op == Op::kBeq && mips::Rs(word) == mips::Rt(word))
                           ? BranchKind::kDirectJump
                           : BranchKind::kConditional);
      r.taken = Taken(info.op, cpu, word);
      r.target = info.Target(pc, word);
      break;
    case mips::Flow::kJump:
      r.branch = info.link ? BranchKind::kDirectCall : BranchKind::kDirectJump;
      r.taken = true;
      r.target = info.Target(pc, word);
      break;
    case mips::Flow::kJumpRegister:
      r.branch = info.op == Op::kJalr   ? BranchKind::kIndirectCall
                 : mips::Rs(word) == 31 ? BranchKind::kReturn
                                        : BranchKind::kIndirectJump;
      r.taken = true;
      r.target = cpu.gpr(mips::Rs(word));
      break;
    case mips::Flow::kEret:
      r.branch = BranchKind::kExceptionReturn;
      r.taken = true;
      r.target = (cpu.status() & mips::kStatusErl) ? cpu.error_epc() : cpu.epc();
      break;
    default:
      break;
  }
  if (next_before_.present) {
    r.taken_before = std::move(next_before_);
    next_before_ = Event();
  }
  has_pending_ = true;
}

void MipsRecorder::Complete(mips::Cpu& cpu) {
  Record& r = pending_;
  if (!r.raised.present) {
    if (load_gpr_ >= 0) {
      MemoryAccess& a = r.access[0];
      a.value = cpu.gpr(load_gpr_) & (load_partial_ ? ~uint64_t{0} : Mask(a.size));
      a.value_known = true;
    } else if (load_fpr_ >= 0) {
      MemoryAccess& a = r.access[0];
      a.value = a.size == 8 ? cpu.fpu().ReadDouble(load_fpr_) : cpu.fpu().ReadWord(load_fpr_);
      a.value_known = true;
    }
    // A failed SC stores nothing; its register then holds 0.
    if (store_conditional_ && cpu.gpr(mips::Rt(r.word)) == 0) r.num_accesses = 0;
  }
  Emit();
}

void MipsRecorder::Emit() {
  has_pending_ = false;
  if (!status_.ok()) return;
  status_ = sink_.Consume(pending_);
}

void MipsRecorder::OnException(mips::Cpu& cpu, uint8_t code, uint64_t faulting_pc,
                               const char* name) {
  Event e;
  e.present = true;
  e.code = code;
  e.pc = faulting_pc;
  e.name = name;
  if (has_pending_ && code != mips::kExcInt && pending_.pc == faulting_pc) {
    // The observed instruction raised it: it did not complete, so nothing it would have written
    // or accessed is real.
    pending_.raised = std::move(e);
    pending_.num_accesses = 0;
    pending_.num_written = 0;
    Emit();
    return;
  }
  if (has_pending_) Complete(cpu);
  next_before_ = std::move(e);
}

void MipsRecorder::Flush(mips::Cpu& cpu) {
  if (has_pending_) Complete(cpu);
}

}  // namespace citcat::traces
