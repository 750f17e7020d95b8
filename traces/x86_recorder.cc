#include "traces/x86_recorder.h"

#include <cstring>

#include "traces/x86_registers.h"

namespace citcat::traces {
namespace {

using x86::Flow;
using x86::Op;
using x86::Operand;

constexpr size_t kForms = 4096;

const char* EventName(uint8_t vector, x86::Cpu::EventKind kind) {
  if (kind == x86::Cpu::EventKind::kInterrupt) return vector == 2 ? "NMI" : "interrupt";
  switch (vector) {
    case 0:
      return "divide error";
    case 1:
      return "debug";
    case 3:
      return "breakpoint";
    case 4:
      return "overflow";
    case 5:
      return "bound range";
    case 6:
      return "invalid opcode";
    case 7:
      return "device not available";
    case 8:
      return "double fault";
    case 10:
      return "invalid TSS";
    case 11:
      return "segment not present";
    case 12:
      return "stack fault";
    case 13:
      return "general protection";
    case 14:
      return "page fault";
    case 16:
      return "math fault";
    case 17:
      return "alignment check";
    default:
      return "exception";
  }
}

// The x87 registers an instruction reads and writes (ops.h, the table's x87 column), as trace
// register numbers: relative to the top of the stack, as the instruction names them.
void AddX87Operands(const x86::Instruction& in, Record& r) {
  namespace e = x86::x87;
  const uint16_t effects = x86::Facts(in.op).x87;
  const uint16_t st0 = kX86St0, sti = kX86St0 + (in.rm & 7), st1 = kX86St0 + 1;
  const bool names_sti = in.dst == Operand::kSti || in.src == Operand::kSti;
  if (effects & e::kReadsSt0) r.AddRead(st0);
  if ((effects & e::kReadsSti) && names_sti) r.AddRead(sti);
  if (effects & e::kReadsSt1) r.AddRead(st1);
  if (effects & e::kReadsSw) r.AddRead(kX86Fpsw);
  if (effects & e::kWritesSt0) r.AddWritten(st0);
  if ((effects & e::kWritesSti) && names_sti) r.AddWritten(sti);
  if (effects & e::kWritesDst) r.AddWritten(in.dst == Operand::kSti ? sti : st0);
  if (effects & e::kWritesSt1) r.AddWritten(st1);
  if (effects & e::kWritesSw) r.AddWritten(kX86Fpsw);
}

int64_t Immediate(const x86::Instruction& in) {
  for (Operand o : {in.dst, in.src, in.src2}) {
    if (o == Operand::kImm || o == Operand::kImm8 || o == Operand::kRel || o == Operand::kFar) {
      return static_cast<int32_t>(in.imm);
    }
  }
  return 0;
}

// The branch kind, and the target where the encoding tells it.
void SetBranch(const x86::Instruction& in, uint32_t cs_base, uint32_t next_eip, Record& r,
               bool* dynamic_target) {
  const bool relative = in.dst == Operand::kRel;
  *dynamic_target = !relative;
  switch (in.flow) {
    case Flow::kJcc:
    case Flow::kLoop:
      r.branch = BranchKind::kConditional;
      break;
    case Flow::kJmp:
    case Flow::kJmpFar:
      r.branch =
          relative || in.dst == Operand::kFar ? BranchKind::kDirectJump : BranchKind::kIndirectJump;
      break;
    case Flow::kCall:
    case Flow::kCallFar:
      r.branch =
          relative || in.dst == Operand::kFar ? BranchKind::kDirectCall : BranchKind::kIndirectCall;
      break;
    case Flow::kRet:
    case Flow::kRetFar:
      r.branch = BranchKind::kReturn;
      break;
    case Flow::kInt:
      r.branch = BranchKind::kSoftwareInterrupt;
      break;
    case Flow::kIret:
      r.branch = BranchKind::kExceptionReturn;
      break;
    case Flow::kRep:
      r.repeated = true;
      [[fallthrough]];
    case Flow::kNone:
      *dynamic_target = false;
      return;
  }
  r.taken = in.flow != Flow::kJcc && in.flow != Flow::kLoop && in.flow != Flow::kInt;
  if (relative) {
    const uint32_t eip = next_eip + in.imm;
    r.target = cs_base + (in.opsize == 2 ? eip & 0xFFFF : eip);
  }
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
  bool x87_memory = false;      // its operand comes in 4-byte pieces
};

X86Recorder::X86Recorder(TraceSink& sink) : sink_(sink), forms_(kForms) {}
X86Recorder::~X86Recorder() = default;

inline X86Recorder::Form& X86Recorder::FormFor(x86::Cpu& cpu, uint32_t eip,
                                               const x86::Instruction& in,
                                               std::span<const uint8_t> bytes) {
  const x86::Segment& cs = cpu.segment(x86::kCs);
  const uint32_t pc = cs.base + eip;
  Form& f = forms_[(pc ^ (pc >> 12)) & (kForms - 1)];
  // The bytes too, not the address alone: code that was overwritten is another instruction.
  // (A loop: most are a few bytes, for which memcmp's call costs more than the compare.)
  bool same =
      f.valid && f.pc == pc && f.eip == eip && f.code32 == cs.big && f.record.size == bytes.size();
  for (size_t i = 0; same && i < bytes.size(); ++i) same = f.record.bytes[i] == bytes[i];
  if (!same) Build(f, cs, eip, in, bytes);
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
  f.x87_memory = (x86::Facts(in.op).attrs & x86::attr::kFpu) && in.dst == Operand::kMem;
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
  r.immediate = Immediate(in);
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
  if (x86::Facts(in.op).attrs & x86::attr::kFpu) AddX87Operands(in, r);
  SetBranch(in, cs.base, next_eip, r, &f.dynamic_target);
}

void X86Recorder::OnInstruction(x86::Cpu& cpu, uint32_t eip, const x86::Instruction& in,
                                std::span<const uint8_t> bytes) {
  if (pending_ != nullptr) Complete(cpu);
  Form& f = FormFor(cpu, eip, in, bytes);
  Record& r = f.record;
  r.index = cpu.retired();
  r.privilege = static_cast<uint8_t>(cpu.cpl());
  r.mode = ModeOfRing(r.privilege);
  r.accesses.clear();
  // What the instruction itself tests, on the state before it: the core says.
  if (f.flow == Flow::kJcc || f.flow == Flow::kLoop || f.flow == Flow::kInt) {
    r.taken = cpu.BranchTaken(in);
  }
  if (next_before_.present) {
    r.taken_before = std::move(next_before_);
    next_before_ = Event();
  }
  pending_ = &f;
}

void X86Recorder::OnAccess(uint32_t linear, int size, bool write, uint32_t value) {
  if (pending_ == nullptr) return;  // an event's entry (its frame), not an instruction's
  Record::Accesses& accesses = pending_->record.accesses;
  // An x87 operand is read and written in doublewords: two make a 64-bit access.
  if (pending_->x87_memory && !accesses.empty()) {
    MemoryAccess& last = accesses.back();
    if (last.size == 4 && size == 4 && last.store == write && last.address + 4 == linear) {
      last.size = 8;
      last.value |= uint64_t{value} << 32;
      return;
    }
  }
  MemoryAccess& a = accesses.emplace_back();
  a.address = linear;
  a.size = static_cast<uint8_t>(size);
  a.store = write;
  a.value_known = true;
  a.value = value;
}

void X86Recorder::OnEvent(x86::Cpu& cpu, uint8_t vector, x86::Cpu::EventKind kind) {
  Event e;
  e.present = true;
  e.code = vector;
  e.pc = cpu.segment(x86::kCs).base + cpu.eip();
  e.name = EventName(vector, kind);
  if (pending_ != nullptr && kind == x86::Cpu::EventKind::kFault && pending_->pc == e.pc) {
    // The observed instruction faulted.
    changed_ = pending_->record;
    changed_.Raise(std::move(e));
    Emit(changed_);
    return;
  }
  if (pending_ != nullptr) Complete(cpu);
  next_before_ = std::move(e);
}

void X86Recorder::Flush(x86::Cpu& cpu) {
  if (pending_ != nullptr) Complete(cpu);
}

// Where control went: EIP now, after the instruction.
inline void X86Recorder::Complete(x86::Cpu& cpu) {
  Record& r = pending_->record;
  if (pending_->dynamic_target) r.target = cpu.segment(x86::kCs).base + cpu.eip();
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
