#include "traces/x86_recorder.h"

#include <cstring>

#include "traces/x86_registers.h"

namespace citcat::traces {
namespace {

using x86::Flow;
using x86::Operand;

constexpr size_t kForms = 4096;

// An x87 stack slot (x86::X87RegistersOf) as a trace register.
uint16_t X87Register(int8_t slot) {
  return slot == x86::kX87Sw ? kX86Fpsw : static_cast<uint16_t>(kX86St0 + slot);
}

}  // namespace

// One instruction at one linear address: its record with the static fields filled in, and what
// the dynamic ones need.
struct X86Recorder::Form {
  uint64_t pc = 0;
  uint32_t eip = 0;
  bool code32 = false;
  bool valid = false;
  Record record;
  Flow flow = Flow::kNone;
  bool dynamic_target = false;  // known after it ran (indirect, far, return, INT, IRET)
};

X86Recorder::X86Recorder(TraceSink& sink, const x86::Cpu& cpu)
    : sink_(sink), cpu_(cpu), forms_(kForms) {}
X86Recorder::~X86Recorder() = default;

inline X86Recorder::Form& X86Recorder::FormFor(uint32_t eip, std::span<const uint8_t> bytes) {
  const x86::Segment& cs = cpu_.segment(x86::kCs);
  const uint32_t pc = cs.base + eip;
  Form& f = forms_[(pc ^ (pc >> 12)) & (kForms - 1)];
  // The bytes too, not the address alone: code that was overwritten is another instruction.
  // (A loop: most are a few bytes, for which memcmp's call costs more than the compare.)
  bool same =
      f.valid && f.pc == pc && f.eip == eip && f.code32 == cs.big && f.record.size == bytes.size();
  for (size_t i = 0; same && i < bytes.size(); ++i) same = f.record.bytes[i] == bytes[i];
  if (!same) Build(f, cs, eip, cpu_.observed(), bytes);
  return f;
}

void X86Recorder::Build(Form& f, const x86::Segment& cs, uint32_t eip, const x86::Instruction& in,
                        std::span<const uint8_t> bytes) {
  const uint32_t pc = cs.base + eip;
  f = Form();
  f.pc = pc;
  f.eip = eip;
  f.code32 = cs.big;
  f.valid = true;
  f.flow = in.flow;
  Record& r = f.record;
  r.form = ++forms_built_;
  r.pc = pc;
  const uint32_t next_eip = cs.big ? eip + in.length : (eip + in.length) & 0xFFFF;
  r.next_pc = static_cast<uint32_t>(cs.base + next_eip);
  r.fallthrough = r.next_pc;
  r.SetBytes(bytes);
  r.registers = &X86Registers();
  const std::string_view name = x86::Mnemonic(in.op);
  r.mnemonic = absl::string_view(name.data(), name.size());
  r.immediate = x86::ImmediateOf(in);
  r.disassembler = this;
  for (int i = 0; i < 8; ++i)
    if (in.gpr_read & (1 << i)) r.AddRead(i);
  for (int s = 0; s < 6; ++s)
    if (in.seg_read & (1 << s)) r.AddRead(kX86Seg0 + s);
  if (x86::FlagsRead(in) != 0) r.AddRead(kX86Eflags);
  for (int i = 0; i < 8; ++i)
    if (in.gpr_written & (1 << i)) r.AddWritten(i);
  for (int s = 0; s < 6; ++s)
    if (in.seg_written & (1 << s)) r.AddWritten(kX86Seg0 + s);
  if (x86::FlagsWritten(in) != 0) r.AddWritten(kX86Eflags);
  if (x86::Facts(in.op).attrs & x86::attr::kFpu) {
    const x86::X87Registers x87 = x86::X87RegistersOf(in);
    for (int i = 0; i < 5 && x87.read[i] >= 0; ++i) r.AddRead(X87Register(x87.read[i]));
    for (int i = 0; i < 6 && x87.written[i] >= 0; ++i) r.AddWritten(X87Register(x87.written[i]));
  }
  r.branch = x86::BranchKindOf(in);
  r.repeated = in.flow == Flow::kRep;
  if (r.branch == BranchKind::kNone) return;
  const bool relative = in.dst == Operand::kRel;
  f.dynamic_target = !relative;
  r.taken = in.flow != Flow::kJcc && in.flow != Flow::kLoop && in.flow != Flow::kInt;
  if (relative) r.target = cs.base + x86::RelativeTarget(in, next_eip);
}

void X86Recorder::OnInstruction(uint64_t eip, std::span<const uint8_t> bytes) {
  if (pending_ != nullptr) Complete();
  Form& f = FormFor(static_cast<uint32_t>(eip), bytes);
  Record& r = f.record;
  r.index = cpu_.retired();
  r.privilege = static_cast<uint8_t>(cpu_.cpl());
  r.mode = ModeOfRing(r.privilege);
  r.accesses.clear();
  r.values.clear();
  // What the instruction itself tests, on the state before it: the core says.
  if (f.flow == Flow::kJcc || f.flow == Flow::kLoop || f.flow == Flow::kInt) {
    r.taken = cpu_.BranchTaken(cpu_.observed());
  }
  if (next_before_.present) {
    r.taken_before = std::move(next_before_);
    next_before_ = Event();
  }
  pending_ = &f;
}

void X86Recorder::OnAccess(uint64_t linear, int size, bool write, uint64_t value) {
  // None pending: an event's entry (its frame), not an instruction's.
  if (pending_ != nullptr) pending_->record.AddAccess(linear, size, write, value);
}

void X86Recorder::OnRegister(uint16_t reg, uint64_t value) {
  if (pending_ != nullptr) pending_->record.values.push_back({reg, value});
}

void X86Recorder::OnEvent(simcore::EventKind kind, uint32_t vector, uint64_t eip) {
  Event e;
  e.present = true;
  e.code = static_cast<uint8_t>(vector);
  e.pc = cpu_.segment(x86::kCs).base + static_cast<uint32_t>(eip);
  e.name = x86::EventName(static_cast<uint8_t>(vector), kind);
  if (pending_ != nullptr && kind == simcore::EventKind::kFault && pending_->pc == e.pc) {
    // The observed instruction faulted.
    changed_ = pending_->record;
    changed_.Raise(std::move(e));
    Emit(changed_);
    return;
  }
  if (pending_ != nullptr) Complete();
  next_before_ = std::move(e);
}

void X86Recorder::Flush() {
  if (pending_ != nullptr) Complete();
}

// Where control went: EIP now, after the instruction.
inline void X86Recorder::Complete() {
  Record& r = pending_->record;
  if (pending_->dynamic_target) r.target = cpu_.segment(x86::kCs).base + cpu_.eip();
  Emit(r);
}

inline void X86Recorder::Emit(const Record& record) {
  Record& own = pending_->record;
  pending_ = nullptr;
  if (status_.ok()) status_ = sink_.Consume(record);
  if (own.taken_before.present) own.taken_before = Event();  // it was this execution's
}

absl::string_view X86Recorder::Text(const Record& record) {
  if (!disasm_) disasm_ = std::make_unique<x86::Disassembler>();
  const uint32_t pc = static_cast<uint32_t>(record.pc);
  const Form& f = forms_[(pc ^ (pc >> 12)) & (kForms - 1)];
  const bool known = f.valid && f.pc == record.pc && f.record.size == record.size &&
                     std::memcmp(f.record.bytes, record.bytes, record.size) == 0;
  return disasm_->Text(known ? f.eip : pc, record.Bytes(), known ? f.code32 : true);
}

}  // namespace citcat::traces
