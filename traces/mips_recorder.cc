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

// One instruction word at one PC: its record with the static fields filled in, and where the
// dynamic ones come from.
struct MipsRecorder::Form {
  uint64_t pc = 0;
  uint32_t word = 0;
  bool big_endian = false;
  bool valid = false;
  Record record;
  Op op = Op::kReserved;
  mips::Flow flow = mips::Flow::kNone;
  bool access = false;   // a load or store: record.accesses[0]
  bool fpu = false;      // an FP load or store (the FPU's views of the register)
  bool partial = false;  // LWL/LWR/LDL/LDR/SWL/SWR/SDL/SDR: the whole register is the value
  uint8_t rs = 0, rt = 0;
  int32_t offset = 0;
  int load_gpr = -1;  // the register a load writes
  int load_fpr = -1;  // the FP register an LWC1/LDC1 writes
  int sc_gpr = -1;    // SC/SCD: the register that tells whether it stored
};

namespace {

constexpr size_t kForms = 4096;

// The access's address, and the value for a store (a load's comes when it completed).
void StartAccess(mips::Cpu& cpu, const MipsRecorder::Form& f, MemoryAccess& a) {
  a.address = cpu.gpr(f.rs) + static_cast<uint64_t>(int64_t{f.offset});
  if (f.partial) a.address &= ~uint64_t{a.size - 1u};
  if (!a.store) {
    a.value = 0;
    a.value_known = false;
    return;
  }
  // FP registers through the FPU's own word and doubleword views (FR-mode pairing).
  a.value = !f.fpu        ? cpu.gpr(f.rt) & (f.partial ? ~uint64_t{0} : Mask(a.size))
            : a.size == 8 ? cpu.fpu().ReadDouble(f.rt)
                          : cpu.fpu().ReadWord(f.rt);
  a.value_known = true;
}

// The outcome and target where the registers before tell them.
void SetOutcome(mips::Cpu& cpu, const MipsRecorder::Form& f, Record& r) {
  switch (f.flow) {
    case mips::Flow::kBranch:
      r.taken = cpu.BranchTaken(f.op, f.word);
      break;
    case mips::Flow::kJumpRegister:
      r.target = cpu.gpr(f.rs);
      break;
    case mips::Flow::kEret:
      r.target = (cpu.status() & mips::kStatusErl) ? cpu.error_epc() : cpu.epc();
      break;
    default:
      break;
  }
}

// The branch kind, and what of the outcome the encoding already tells.
void SetBranch(const mips::InstructionInfo& info, uint64_t pc, uint32_t word, Record& r) {
  switch (info.flow) {
    case mips::Flow::kBranch:
      r.branch =
          info.link ? (info.op == Op::kBgezal && mips::Rs(word) == 0 ? BranchKind::kDirectCall
                                                                     : BranchKind::kConditionalCall)
                    : ((info.op == Op::kBeq && mips::Rs(word) == mips::Rt(word))
                           ? BranchKind::kDirectJump
                           : BranchKind::kConditional);
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
      break;
    case mips::Flow::kEret:
      r.branch = BranchKind::kExceptionReturn;
      r.taken = true;
      break;
    default:
      break;
  }
}

}  // namespace

MipsRecorder::MipsRecorder(TraceSink& sink) : sink_(sink), forms_(kForms) {}
MipsRecorder::~MipsRecorder() = default;

absl::string_view MipsRecorder::Text(const Record& record) {
  if (!disasm_) disasm_ = std::make_unique<mips::Disassembler>();
  return disasm_->Text(record.pc, mips::BytesWord(record.bytes, big_endian_));
}

inline MipsRecorder::Form& MipsRecorder::FormFor(mips::Cpu& cpu, uint64_t pc, uint32_t word) {
  big_endian_ = cpu.big_endian();
  Form& f = forms_[(pc >> 2) & (kForms - 1)];
  // The word too, not the PC alone: code that was overwritten (a program loaded, a self-modifying
  // one) is another instruction at the same PC.
  if (!f.valid || f.pc != pc || f.word != word || f.big_endian != big_endian_) {
    Build(f, pc, word, big_endian_);
  }
  return f;
}

void MipsRecorder::Build(Form& f, uint64_t pc, uint32_t word, bool big_endian) {
  const mips::InstructionInfo info = mips::Describe(word);
  f = Form();
  f.pc = pc;
  f.word = word;
  f.big_endian = big_endian;
  f.valid = true;
  f.op = info.op;
  f.flow = info.flow;
  f.rs = static_cast<uint8_t>(mips::Rs(word));
  f.rt = static_cast<uint8_t>(mips::Rt(word));
  f.offset = mips::Simm(word);
  Record& r = f.record;
  r.form = ++forms_built_;
  r.pc = pc;
  r.next_pc = pc + 4;
  uint8_t bytes[4];
  mips::WordBytes(word, big_endian, bytes);
  r.SetBytes(bytes);
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

  if (info.mem == mips::MemAccess::kLoad || info.mem == mips::MemAccess::kStore) {
    MemoryAccess& a = r.accesses.emplace_back();
    a.size = info.mem_bytes;
    a.store = info.mem == mips::MemAccess::kStore;
    f.access = true;
    f.fpu = info.fpu;
    f.partial = info.mem_partial;
    if (!a.store) (info.fpu ? f.load_fpr : f.load_gpr) = f.rt;
  }
  f.sc_gpr = info.op == Op::kSc || info.op == Op::kScd ? f.rt : -1;
  r.fallthrough = pc + (info.delay_slot ? 8 : 4);
  r.delay_slot = info.delay_slot;
  SetBranch(info, pc, word, r);
}

inline void MipsRecorder::Complete(mips::Cpu& cpu) {
  const Form& f = *pending_;
  Record& r = pending_->record;
  if (f.load_gpr >= 0) {
    MemoryAccess& a = r.accesses[0];
    a.value = cpu.gpr(f.load_gpr) & (f.partial ? ~uint64_t{0} : Mask(a.size));
    a.value_known = true;
  } else if (f.load_fpr >= 0) {
    MemoryAccess& a = r.accesses[0];
    a.value = a.size == 8 ? cpu.fpu().ReadDouble(f.load_fpr) : cpu.fpu().ReadWord(f.load_fpr);
    a.value_known = true;
  }
  // A failed SC stores nothing; its register then holds 0.
  if (f.sc_gpr >= 0 && cpu.gpr(f.sc_gpr) == 0) {
    changed_ = r;
    changed_.accesses.clear();
    Emit(changed_);
    return;
  }
  Emit(r);
}

inline void MipsRecorder::Emit(const Record& record) {
  Record& own = pending_->record;
  pending_ = nullptr;
  if (status_.ok()) status_ = sink_.Consume(record);
  if (own.taken_before.present) own.taken_before = Event();  // it was this execution's
}

void MipsRecorder::OnInstruction(mips::Cpu& cpu, uint64_t pc, uint32_t word) {
  if (pending_ != nullptr) Complete(cpu);
  Form& f = FormFor(cpu, pc, word);
  Record& r = f.record;
  r.index = cpu.retired();
  r.privilege = PrivilegeOf(cpu);
  r.mode = ModeOf(r.privilege);
  if (f.access) StartAccess(cpu, f, r.accesses[0]);
  if (r.branch != BranchKind::kNone) SetOutcome(cpu, f, r);
  if (next_before_.present) {
    r.taken_before = std::move(next_before_);
    next_before_ = Event();
  }
  pending_ = &f;
}

void MipsRecorder::OnException(mips::Cpu& cpu, uint8_t code, uint64_t faulting_pc,
                               const char* name) {
  Event e;
  e.present = true;
  e.code = code;
  e.pc = faulting_pc;
  e.name = name;
  if (pending_ != nullptr && code != mips::kExcInt && pending_->record.pc == faulting_pc) {
    // The observed instruction raised it.
    changed_ = pending_->record;
    changed_.Raise(std::move(e));
    Emit(changed_);
    return;
  }
  if (pending_ != nullptr) Complete(cpu);
  next_before_ = std::move(e);
}

void MipsRecorder::Flush(mips::Cpu& cpu) {
  if (pending_ != nullptr) Complete(cpu);
}

}  // namespace citcat::traces
