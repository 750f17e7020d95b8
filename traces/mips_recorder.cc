#include "traces/mips_recorder.h"

#include <bit>

#include "simcore/mips/decoder.h"
#include "traces/mips_registers.h"

namespace citcat::traces {
namespace {

using mips::Op;

uint64_t Mask(uint8_t bytes) {
  return bytes >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * bytes)) - 1;
}

// Where the instruction word's byte `i` in memory sits in the word, in the core's byte order.

// Status.KSU as it applies: 0 kernel (also while EXL or ERL is set, and for the reserved 3),
// 1 supervisor, 2 user.
uint8_t PrivilegeOf(const mips::Cpu& cpu) {
  const uint32_t status = cpu.status();
  if (status & (mips::kStatusExl | mips::kStatusErl)) return 0;
  const uint8_t ksu = (status >> mips::kStatusKsuShift) & 3;
  return ksu == 3 ? 0 : ksu;
}

Mode ModeOf(uint8_t privilege) {
  return privilege == 1 ? Mode::kSupervisor : privilege == 2 ? Mode::kUser : Mode::kKernel;
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
  const uint16_t ft = kMipsFpr0 + mips::Rt(w), fs = kMipsFpr0 + mips::Rd(w);
  const uint16_t fd = kMipsFpr0 + mips::Sa(w);
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
      r.AddRead(kMipsFcc);
      break;
    case Op::kCtc1:
      r.AddWritten(kMipsFcc);
      break;
    case Op::kBc1f:
    case Op::kBc1t:
    case Op::kBc1fl:
    case Op::kBc1tl:
      r.AddRead(kMipsFcc);
      break;
    case Op::kCop1Arith: {
      const uint32_t funct = w & 0x3F;
      r.AddRead(fs);
      if (funct >= 0x30) {  // C.cond.fmt
        r.AddRead(ft);
        r.AddWritten(kMipsFcc);
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
  return disasm_->Text(record.pc, mips::BytesWord(record.bytes, big_endian_));
}

void MipsRecorder::OnInstruction(mips::Cpu& cpu, uint64_t pc, uint32_t word) {
  if (has_pending_) Complete(cpu);
  const mips::InstructionInfo info = mips::Describe(word);
  Record& r = pending_;
  r = Record();
  r.index = cpu.retired();
  r.pc = pc;
  r.next_pc = pc + 4;
  big_endian_ = cpu.big_endian();
  uint8_t bytes[4];
  mips::WordBytes(word, big_endian_, bytes);
  r.SetBytes(bytes);
  r.privilege = PrivilegeOf(cpu);
  r.mode = ModeOf(r.privilege);
  r.registers = &MipsRegisters();
  const std::string_view name = mips::OpName(info.op);
  r.mnemonic = absl::string_view(name.data(), name.size());
  r.immediate = Immediate(info.op, word);
  r.disassembler = this;
  // Set bits only, lowest first: most instructions name one to three registers.
  for (uint32_t m = info.gpr_read & ~1u; m != 0; m &= m - 1) r.AddRead(std::countr_zero(m));
  if (info.reads_hi) r.AddRead(kMipsHi);
  if (info.reads_lo) r.AddRead(kMipsLo);
  for (uint32_t m = info.gpr_written & ~1u; m != 0; m &= m - 1) r.AddWritten(std::countr_zero(m));
  if (info.writes_hi) r.AddWritten(kMipsHi);
  if (info.writes_lo) r.AddWritten(kMipsLo);
  if (info.fpu) AddFpuOperands(info.op, word, r);

  load_gpr_ = -1;
  load_fpr_ = -1;
  load_partial_ = info.mem_partial;
  sc_gpr_ = info.op == Op::kSc || info.op == Op::kScd ? mips::Rt(word) : -1;
  if (info.mem == mips::MemAccess::kLoad || info.mem == mips::MemAccess::kStore) {
    MemoryAccess& a = r.accesses.emplace_back();
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
      MemoryAccess& a = r.accesses[0];
      a.value = cpu.gpr(load_gpr_) & (load_partial_ ? ~uint64_t{0} : Mask(a.size));
      a.value_known = true;
    } else if (load_fpr_ >= 0) {
      MemoryAccess& a = r.accesses[0];
      a.value = a.size == 8 ? cpu.fpu().ReadDouble(load_fpr_) : cpu.fpu().ReadWord(load_fpr_);
      a.value_known = true;
    }
    // A failed SC stores nothing; its register then holds 0.
    if (sc_gpr_ >= 0 && cpu.gpr(sc_gpr_) == 0) r.accesses.clear();
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
    pending_.accesses.clear();
    pending_.written.clear();
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
