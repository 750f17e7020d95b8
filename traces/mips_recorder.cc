#include "traces/mips_recorder.h"

#include <bit>

#include "simcore/mips/decoder.h"
#include "traces/mips_registers.h"

namespace citcat::traces {
namespace {

constexpr size_t kForms = 4096;

// mips::Cpu::privilege as the neutral mode.
Mode ModeOf(uint8_t privilege) {
  return privilege == 1 ? Mode::kSupervisor : privilege == 2 ? Mode::kUser : Mode::kKernel;
}

}  // namespace

// One instruction word at one PC: its record with the static fields filled in, and what the
// dynamic ones need.
struct MipsRecorder::Form {
  uint64_t pc = 0;
  uint32_t word = 0;
  bool big_endian = false;
  bool valid = false;
  Record record;
  mips::Op op = mips::Op::kReserved;
  mips::Flow flow = mips::Flow::kNone;
};

MipsRecorder::MipsRecorder(TraceSink& sink, const mips::Cpu& cpu)
    : sink_(sink), cpu_(cpu), forms_(kForms) {}
MipsRecorder::~MipsRecorder() = default;

absl::string_view MipsRecorder::Text(const Record& record) {
  if (!disasm_) disasm_ = std::make_unique<mips::Disassembler>();
  return disasm_->Text(record.pc, mips::BytesWord(record.bytes, cpu_.big_endian()));
}

inline MipsRecorder::Form& MipsRecorder::FormFor(uint64_t pc, uint32_t word) {
  const bool big_endian = cpu_.big_endian();
  Form& f = forms_[(pc >> 2) & (kForms - 1)];
  // The word too, not the PC alone: code that was overwritten (a program loaded, a self-modifying
  // one) is another instruction at the same PC.
  if (!f.valid || f.pc != pc || f.word != word || f.big_endian != big_endian) {
    Build(f, pc, word, big_endian);
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
  r.immediate = info.immediate;
  r.disassembler = this;
  // Set bits only, lowest first: most instructions name one to three registers.
  for (uint32_t m = info.gpr_read & ~1u; m != 0; m &= m - 1) r.AddRead(std::countr_zero(m));
  if (info.reads_hi) r.AddRead(kMipsHi);
  if (info.reads_lo) r.AddRead(kMipsLo);
  for (int8_t fpr : info.fpr_read) {
    if (fpr >= 0) r.AddRead(kMipsFpr0 + fpr);
  }
  if (info.reads_fcc) r.AddRead(kMipsFcc);
  for (uint32_t m = info.gpr_written & ~1u; m != 0; m &= m - 1) r.AddWritten(std::countr_zero(m));
  if (info.writes_hi) r.AddWritten(kMipsHi);
  if (info.writes_lo) r.AddWritten(kMipsLo);
  if (info.fpr_written >= 0) r.AddWritten(kMipsFpr0 + info.fpr_written);
  if (info.writes_fcc) r.AddWritten(kMipsFcc);
  r.fallthrough = pc + (info.delay_slot ? 8 : 4);
  r.delay_slot = info.delay_slot;
  r.branch = info.branch;
  if (info.flow == mips::Flow::kBranch || info.flow == mips::Flow::kJump) {
    r.target = info.Target(pc, word);
  }
  r.taken = info.flow == mips::Flow::kJump || info.flow == mips::Flow::kJumpRegister ||
            info.flow == mips::Flow::kEret;
}

inline void MipsRecorder::Emit(const Record& record) {
  Record& own = pending_->record;
  pending_ = nullptr;
  if (status_.ok()) status_ = sink_.Consume(record);
  if (own.taken_before.present) own.taken_before = Event();  // it was this execution's
}

void MipsRecorder::OnInstruction(uint64_t pc, std::span<const uint8_t> bytes) {
  if (pending_ != nullptr) Emit(pending_->record);
  Form& f = FormFor(pc, mips::BytesWord(bytes.data(), cpu_.big_endian()));
  Record& r = f.record;
  r.index = cpu_.retired();
  r.privilege = cpu_.privilege();
  r.mode = ModeOf(r.privilege);
  r.accesses.clear();
  r.values.clear();
  // What the branch tests and where a register sends it, on the state before: the core says.
  if (f.flow == mips::Flow::kBranch) {
    r.taken = cpu_.BranchTaken(f.op, f.word);
  } else if (f.flow == mips::Flow::kJumpRegister || f.flow == mips::Flow::kEret) {
    r.target = cpu_.BranchTarget(f.flow, pc, f.word);
  }
  if (next_before_.present) {
    r.taken_before = std::move(next_before_);
    next_before_ = Event();
  }
  pending_ = &f;
}

void MipsRecorder::OnAccess(uint64_t address, int size, bool write, uint64_t value) {
  if (pending_ != nullptr) pending_->record.AddAccess(address, size, write, value);
}

void MipsRecorder::OnRegister(uint16_t reg, uint64_t value) {
  if (pending_ != nullptr) pending_->record.values.push_back({reg, value});
}

void MipsRecorder::OnEvent(simcore::EventKind kind, uint32_t code, uint64_t pc) {
  Event e;
  e.present = true;
  e.code = static_cast<uint8_t>(code);
  e.pc = pc;
  e.name = mips::ExceptionName(static_cast<mips::ExcCode>(code));
  if (pending_ != nullptr && kind != simcore::EventKind::kInterrupt && pending_->pc == pc) {
    // The observed instruction raised it.
    changed_ = pending_->record;
    changed_.Raise(std::move(e));
    Emit(changed_);
    return;
  }
  if (pending_ != nullptr) Emit(pending_->record);
  next_before_ = std::move(e);
}

void MipsRecorder::Flush() {
  if (pending_ != nullptr) Emit(pending_->record);
}

}  // namespace citcat::traces
