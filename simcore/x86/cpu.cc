// The i486 interpreter, first stretch: see cpu.h and docs/machines/i486-core.md, "Interpreter".
#include "simcore/x86/cpu.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <optional>

namespace citcat::x86 {

const char* EventName(uint8_t vector, simcore::EventKind kind) {
  if (kind == simcore::EventKind::kInterrupt) return vector == 2 ? "NMI" : "interrupt";
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
namespace {

constexpr uint8_t kCodeAccess = 0x9B;  // present, DPL 0, code, readable, accessed
// EDX after RESET identifies the processor: family 4 (i486), model 0 (DX), stepping 1.
constexpr uint32_t kResetEdx = 0x0401;

}  // namespace

Cpu::Cpu(simcore::Bus& bus) : bus_(bus), cache_(bus, branch_count_) {
  // The state after RESET: real mode, caches off, CS:IP = F000:FFF0 with CS base FFFF0000.
  set_cr0(kCr0Cd | kCr0Nw | kCr0Et);
  seg_[kCs] = {0xF000, 0xFFFF0000u, 0xFFFF, false, kCodeAccess};
  eip_ = 0xFFF0;
  gpr_[kEdx] = kResetEdx;
}

void Cpu::set_cr0(uint32_t v) {
  cr0_ = v;
  cache_.SetControl(v & kCr0Cd, v & kCr0Nw);
  paging_.set_wp(v & kCr0Wp);
}

void Cpu::SetFlat32(int cpl) {
  set_cr0(kCr0Pe | kCr0Et);
  const uint8_t dpl = static_cast<uint8_t>(cpl << 5);
  const uint16_t data = cpl == 0 ? 0x10 : static_cast<uint16_t>(0x20 | cpl);
  for (Segment& s : seg_) s = {data, 0, 0xFFFFFFFFu, true, static_cast<uint8_t>(0x93 | dpl)};
  seg_[kCs] = {static_cast<uint16_t>(cpl == 0 ? 0x08 : 0x18 | cpl), 0, 0xFFFFFFFFu, true,
               static_cast<uint8_t>(kCodeAccess | dpl)};
  cpl_ = cpl;
}

void Cpu::SetReal(uint16_t cs, uint16_t ds, uint16_t ss) {
  set_cr0(kCr0Et);
  const uint16_t selectors[6] = {ds, cs, ss, ds, ds, ds};
  for (int s = 0; s < 6; ++s) seg_[s] = {selectors[s], uint32_t{selectors[s]} << 4, 0xFFFF, false};
  seg_[kCs].access = kCodeAccess;
  cpl_ = 0;
}

// A fault of the current instruction: delivered at once (the instruction does not retire and
// EIP goes to the handler), or, with delivery off, left pending for the caller.
// The i486's classes of exceptions for double faults (Intel486 manual, "Double fault"):
// contributory ones and page faults; everything else (debug, NMI, INT3, INTO, BOUND, #UD, #NM,
// #MF, #AC, external interrupts) is benign.
Cpu::FaultClass Cpu::ClassOf(uint8_t vector, bool exception) {
  if (!exception) return FaultClass::kBenign;
  switch (vector) {
    case kVecDivide:
    case kVecInvalidTss:
    case kVecSegmentNotPresent:
    case kVecStackFault:
    case kVecGeneralProtection:
      return FaultClass::kContributory;
    case kVecPageFault:
      return FaultClass::kPageFault;
    case kVecDoubleFault:
      return FaultClass::kDoubleFault;
    default:
      return FaultClass::kBenign;
  }
}

void Cpu::Raise(uint8_t vector, uint32_t error_code) {
  if (faulted_ && !delivering_) return;  // the first fault of a step wins
  faulted_ = true;
  if (!deliver_) {
    if (!exception_.pending) exception_ = {true, vector, error_code, eip_, false, false};
    return;
  }
  const bool has_error = vector == kVecDoubleFault ||
                         (vector >= kVecInvalidTss && vector <= kVecPageFault) ||
                         vector == kVecAlignment;
  if (delivering_) {
    // A fault while delivering another event: a double fault when both are contributory or the
    // first a page fault and the second contributory or one too; shutdown when the first was a
    // double fault; otherwise the second is delivered in its place (docs/machines/i486-core.md,
    // "Exceptions").
    const FaultClass first = delivering_class_, second = ClassOf(vector, true);
    if (first == FaultClass::kDoubleFault) {
      halted_ = true;
      exception_ = {true, kVecDoubleFault, 0, eip_, false, false};
      exception_.shutdown = true;
      return;
    }
    const bool double_fault =
        (first == FaultClass::kContributory && second == FaultClass::kContributory) ||
        (first == FaultClass::kPageFault &&
         (second == FaultClass::kContributory || second == FaultClass::kPageFault));
    if (observer_ != nullptr) {
      observer_->OnEvent(EventKind::kFault, double_fault ? uint8_t{kVecDoubleFault} : vector, eip_);
    }
    event_retired_ = retired_;
    // A fault saves RF set; a double fault is an abort, and saves RF as it is.
    event_rf_ = double_fault ? 0 : flag::kRF;
    if (double_fault) {
      delivering_class_ = FaultClass::kDoubleFault;
      exception_.vector = kVecDoubleFault;
      Interrupt(kVecDoubleFault, eip_, false, true, 0);
    } else {
      delivering_class_ = second;
      exception_.vector = vector;
      Interrupt(vector, eip_, false, has_error, error_code);
    }
    return;
  }
  // Delivered once the instruction has undone what it did (Step), so that the handler sees the
  // state before it: registers, flags and stack as a restartable fault leaves them.
  fault_ = {true, vector, has_error, error_code};
}

// An event the processor delivers itself, at eip_: an exception, an external interrupt or a debug
// trap. A fault while it is delivered is a double fault or a second exception (Raise).
void Cpu::Deliver(uint8_t vector, bool has_error, uint32_t error_code, EventKind kind) {
  if (observer_ != nullptr) observer_->OnEvent(kind, vector, eip_);
  event_retired_ = retired_;
  // A fault is the pending one (DeliverPendingFault).
  const bool fault = kind == EventKind::kFault && !fault_.breakpoint;
  event_rf_ = fault || (kind != EventKind::kFault && between_iterations_) ? flag::kRF : 0;
  between_iterations_ = false;
  delivering_ = true;
  delivering_class_ = ClassOf(vector, kind != EventKind::kInterrupt);
  faulted_ = false;
  exception_.vector = vector;
  Interrupt(vector, eip_, false, has_error, error_code);
  delivering_ = false;
  event_rf_ = 0;
}

// Intel SDM vol. 3, "Instruction-Breakpoint Exception Condition", for every IA-32 processor: a
// fault saves RF set (but an instruction breakpoint's #DB, so that the breakpoint still fires), as
// does an interrupt or trap between two iterations of a REP string instruction, so that the
// return resumes the instruction without a second instruction-breakpoint check; INT n clears RF
// as it begins; any other event saves RF as it is.
uint32_t Cpu::EflagsImage(bool software) const {
  return software ? eflags_ & ~flag::kRF : eflags_ | event_rf_;
}

// ---- memory ----

// Instruction breakpoints (R/W = 00 in DR7) match the linear address of the instruction about to
// run: a #DB fault before it, unless RF is set.
bool Cpu::InstructionBreakpoint(uint32_t linear) {
  if (eflags_ & flag::kRF) return false;
  uint32_t hits = 0;
  for (int i = 0; i < 4; ++i) {
    const bool enabled = (dr7_ >> (2 * i)) & 3;
    const uint32_t rw = (dr7_ >> (16 + 4 * i)) & 3;
    if (enabled && rw == 0 && dr_[i] == linear) hits |= 1u << i;
  }
  if (hits == 0) return false;
  dr6_ = (dr6_ & ~0xFu) | hits;
  Raise(kVecDebug, 0);
  if (fault_.pending) fault_.breakpoint = true;
  return true;
}

// Data breakpoints (R/W = 01 writes, 11 reads and writes; LEN 1, 2 or 4 bytes, aligned) match any
// byte of an access; the #DB trap comes after the instruction.
void Cpu::DataBreakpoint(uint32_t linear, int size, bool write) {
  for (int i = 0; i < 4; ++i) {
    const bool enabled = (dr7_ >> (2 * i)) & 3;
    const uint32_t rw = (dr7_ >> (16 + 4 * i)) & 3;
    const uint32_t len = ((dr7_ >> (18 + 4 * i)) & 3) + 1;  // 00 = 1, 01 = 2, 11 = 4 bytes
    if (!enabled || rw == 0 || rw == 2 || (rw == 1 && !write)) continue;
    const uint32_t bytes = len == 3 ? 4 : len;
    const uint32_t base = dr_[i] & ~(bytes - 1);
    if (linear < base + bytes && base < linear + static_cast<uint32_t>(size)) {
      dr6_ |= 1u << i;
      data_breakpoint_ = true;
    }
  }
}

// An access that crosses a page boundary is translated page by page, both before any bus
// cycle, so a page fault on the second page leaves memory untouched.
bool Cpu::ReadAcrossPages(uint32_t linear, int size, uint32_t* value) {
  uint8_t bytes[4] = {};
  const int first = 0x1000 - (linear & 0xFFF);
  uint32_t p0, p1;
  Access a0, a1;
  if (!Physical(linear, false, false, &p0, &a0)) return false;
  if (!Physical(linear + first, false, false, &p1, &a1)) return false;
  cache_.Read(p0, std::span<uint8_t>(bytes, first), a0);
  cache_.Read(p1, std::span<uint8_t>(bytes + first, size - first), a1);
  *value = LittleEndian(bytes, size);
  return true;
}

bool Cpu::CheckWritable(int seg, uint32_t offset, int size) {
  if (!CheckSegment(seg, offset, size, true)) return false;
  const uint32_t first = Linear(seg, offset), last = first + size - 1;
  uint32_t paddr;
  Access access;
  if (!Physical(first, true, false, &paddr, &access)) return false;
  return ((last ^ first) & ~0xFFFu) == 0 || Physical(last, true, false, &paddr, &access);
}

bool Cpu::WriteAcrossPages(uint32_t linear, int size, uint32_t value) {
  uint8_t bytes[4];
  ToLittleEndian(value, bytes, size);
  const int first = 0x1000 - (linear & 0xFFF);
  uint32_t p0, p1;
  Access a0, a1;
  if (!Physical(linear, true, false, &p0, &a0)) return false;
  if (!Physical(linear + first, true, false, &p1, &a1)) return false;
  cache_.Write(p0, std::span<const uint8_t>(bytes, first), a0);
  cache_.Write(p1, std::span<const uint8_t>(bytes + first, size - first), a1);
  return true;
}

bool Cpu::Fetch(uint32_t linear, uint8_t* bytes, int size) {
  while (size > 0) {
    const uint32_t in_line = linear & (Cache::kLineBytes - 1);
    const int n = std::min<int>(size, Cache::kLineBytes - in_line);
    uint32_t paddr;
    Access a;
    if (!Physical(linear, false, true, &paddr, &a)) return false;
    Cache::LineRef ref;
    if (const uint8_t* line = cache_.FetchLine(paddr, a, &ref)) {
      std::memcpy(bytes, line + in_line, n);
    } else {
      for (int i = 0; i < n; ++i) cache_.Read(paddr + i, std::span<uint8_t>(bytes + i, 1), a);
    }
    bytes += n;
    linear += n;
    size -= n;
  }
  return true;
}

// ---- operands ----

bool Cpu::ReadRm(const Instruction& in, int size, uint32_t* value) {
  if (in.IsRegisterForm()) {
    *value = ReadReg(in.rm, size);
    return true;
  }
  return ReadMem(in.seg, EffectiveAddress(in), size, value);
}

bool Cpu::WriteRm(const Instruction& in, int size, uint32_t value) {
  if (in.IsRegisterForm()) {
    WriteReg(in.rm, size, value);
    return true;
  }
  return WriteMem(in.seg, EffectiveAddress(in), size, value);
}

// ---- flags ----

// The generic interpreter's way to the templates of alu.h.
uint32_t Cpu::Alu(Op op, int size, uint32_t a, uint32_t b) {
  return WithOp<Op::kAdd, Op::kOr, Op::kAdc, Op::kSbb, Op::kAnd, Op::kSub, Op::kXor, Op::kCmp,
                Op::kTest, Op::kInc, Op::kDec, Op::kNeg>(op, [&](auto o) {
    return WithSize(size, [&](auto n) { return x86::Alu<decltype(o)::value, n()>(eflags_, a, b); });
  });
}

uint32_t Cpu::Shift(Op op, int size, uint32_t value, uint32_t count) {
  return WithOp<Op::kRol, Op::kRor, Op::kRcl, Op::kRcr, Op::kShl, Op::kShr, Op::kSar>(
      op, [&](auto o) {
        return WithSize(size, [&](auto n) {
          return x86::Shift<decltype(o)::value, n()>(eflags_, value, count);
        });
      });
}

// MUL, IMUL (one operand), DIV, IDIV on the accumulator. MUL and IMUL leave SF, ZF, AF and PF
// undefined and DIV and IDIV all six: this core leaves them as they were.
bool Cpu::MulDiv(const Instruction& in, uint32_t src) {
  const int size = in.opsize;
  const uint32_t m = SizeMask(size);
  const int bits = 8 * size;
  const uint64_t acc =
      size == 1 ? ReadReg(kEax, 2) : (uint64_t{ReadReg(kEdx, size)} << bits) | ReadReg(kEax, size);
  uint64_t lo = 0, hi = 0;
  switch (in.op) {
    case Op::kMul: {
      const uint64_t p = uint64_t{ReadReg(kEax, size)} * src;
      lo = p & m;
      hi = (p >> bits) & m;
      SetFlags(flag::kOF | flag::kCF, hi ? flag::kOF | flag::kCF : 0);
      break;
    }
    case Op::kImul1: {
      const int64_t p = int64_t{SignExtend(ReadReg(kEax, size), size)} * SignExtend(src, size);
      lo = static_cast<uint64_t>(p) & m;
      hi = (static_cast<uint64_t>(p) >> bits) & m;
      const bool fits = p == SignExtend(static_cast<uint32_t>(lo), size);
      SetFlags(flag::kOF | flag::kCF, fits ? 0 : flag::kOF | flag::kCF);
      break;
    }
    case Op::kDiv: {
      if (src == 0) return Raise(kVecDivide), false;
      const uint64_t q = acc / src;
      if (q > m) return Raise(kVecDivide), false;
      lo = q;
      hi = acc % src;
      break;
    }
    case Op::kIdiv: {
      const int64_t dividend =
          size == 4 ? static_cast<int64_t>(acc) : SignExtend(static_cast<uint32_t>(acc), 2 * size);
      const int64_t divisor = SignExtend(src, size);
      if (divisor == 0 || (divisor == -1 && dividend == INT64_MIN)) {
        return Raise(kVecDivide), false;
      }
      const int64_t q = dividend / divisor;
      const int64_t min = -(int64_t{1} << (bits - 1)), max = (int64_t{1} << (bits - 1)) - 1;
      if (q < min || q > max) return Raise(kVecDivide), false;
      lo = static_cast<uint64_t>(q) & m;
      hi = static_cast<uint64_t>(dividend % divisor) & m;
      break;
    }
    default:
      return false;
  }
  if (size == 1) {
    WriteReg(kEax, 2, static_cast<uint32_t>(hi << 8 | lo));
  } else {
    WriteReg(kEax, size, static_cast<uint32_t>(lo));
    WriteReg(kEdx, size, static_cast<uint32_t>(hi));
  }
  return true;
}

// ---- the interpreter ----

uint64_t Cpu::Run(uint64_t steps) {
  const uint64_t before = retired_;
  stop_ = false;
  uint64_t done = 0;
  while (done < steps && !exception_.pending && !stop_) {
    if (halted_ && !InterruptDue()) break;
    if (CanRunStraight()) {
      done += RunStraight(steps - done);
    } else {
      Step();
      ++steps_;
      ++done;
    }
    if (branch_count_ >= stop_branch_count_) break;
  }
  return retired_ - before;
}

// The instruction at `linear`: from the predecoded copy kept with its cache line while the line
// (and the next one, for an instruction that runs into it inside the same page) holds the same
// bytes, else fetched and decoded into `decode_scratch_` (as a generic form). The fetch itself (and
// so the lines' and the TLB entry's replacement state) happens either way, as for every instruction
// the i486 runs.
const Cpu::Predecoded* Cpu::FetchAndDecode(uint32_t linear, bool code32) {
  if (const Predecoded* p = FetchFromLine(linear, code32)) return p;
  Instruction* scratch = &decode_scratch_.in;
  const uint32_t offset = linear & (Cache::kLineBytes - 1);
  uint32_t paddr;
  Access a;
  if (!Physical(linear, false, true, &paddr, &a)) return nullptr;
  uint8_t bytes[kMaxInstructionLength];
  const int have = std::min<int>(Cache::kLineBytes - offset, kMaxInstructionLength);
  Cache::LineRef ref;
  const uint8_t* line = cache_.FetchLine(paddr, a, &ref);
  if (line == nullptr) {
    if (!Fetch(linear, bytes, have)) return nullptr;  // code that may not be cached
    *scratch = Decode(bytes, have, code32);
  } else {
    const Tlb& tlb = paging_.tlb();
    const int way = (cr0_ & kCr0Pg) ? tlb.WayOf(linear) : 0;
    if (way >= 0) {  // (Physical's translation is in the TLB)
      const TlbEntry entry = tlb.entry(Tlb::SetOf(linear), static_cast<uint32_t>(way));
      FetchLineOf(linear) = {
          linear - offset, ref, cr0_, cpl_, tlb.epoch(), static_cast<uint32_t>(way), entry};
      if (const Predecoded* p = FetchFromLine(linear, code32)) return p;
    }
    std::memcpy(bytes, line + offset, have);
    Predecoded& p = predecoded_[ref.slot * Cache::kLineBytes + offset];
    // A copy decoded from the line's present bytes, now decoded again (as code of the other
    // size): the runs of pure forms counted through it (RunForms) end. A copy from an earlier
    // fill is in no run of this one.
    if (p.generation == ref.generation) {
      for (uint32_t i = 0; i < Cache::kLineBytes; ++i) {
        predecoded_[ref.slot * Cache::kLineBytes + i].run_after = 0;
      }
    }
    // One decoded before from the same bytes (Known), kept in this line.
    const auto take = [&](const Predecoded& known, Cache::LineRef next_line) {
      p = known;
      p.generation = ref.generation;
      p.next_line = next_line;
      return &p;
    };
    if (const Predecoded* known = Known(paddr, bytes, have, code32)) return take(*known, {});
    *scratch = Decode(bytes, have, code32);
    const auto keep = [&](Cache::LineRef next_line) {
      p = {};
      p.generation = ref.generation;
      p.code32 = code32;
      p.valid = true;
      p.crosses = scratch->length > Cache::kLineBytes - offset;
      p.next_line = next_line;
      p.in = *scratch;
      ChooseForm(p);
      return &p;
    };
    if (scratch->fault != Fault::kTruncated) {
      Remember(paddr, *keep({}), bytes);
      return &p;
    }
    // Into the next line of the same page: the same translation, so it can be kept too.
    const uint32_t next = linear + have;
    if ((next & 0xFFF) != 0) {
      uint32_t next_paddr;
      if (!Physical(next, false, true, &next_paddr, &a)) return nullptr;
      Cache::LineRef next_ref;
      if (const uint8_t* next_line = cache_.FetchLine(next_paddr, a, &next_ref)) {
        std::memcpy(bytes + have, next_line, kMaxInstructionLength - have);
        if (const Predecoded* known = Known(paddr, bytes, kMaxInstructionLength, code32)) {
          return take(*known, next_ref);
        }
        *scratch = Decode(bytes, kMaxInstructionLength, code32);
        Remember(paddr, *keep(next_ref), bytes);
        return &p;
      }
    }
  }
  if (scratch->fault == Fault::kTruncated) {
    // The instruction runs into the next line (and maybe the next page).
    if (!Fetch(linear + have, bytes + have, kMaxInstructionLength - have)) return nullptr;
    *scratch = Decode(bytes, kMaxInstructionLength, code32);
  }
  std::memcpy(decode_scratch_bytes_, bytes, scratch->length);
  return &decode_scratch_;
}

const Cpu::Predecoded* Cpu::Known(uint32_t paddr, const uint8_t* bytes, int have, bool code32) {
  if (!fast_paths_ || known_.empty()) return nullptr;
  const KnownInstruction& k = KnownAt(paddr);
  if (!k.p.valid || k.paddr != paddr || k.p.code32 != code32 || k.p.in.length > have ||
      std::memcmp(k.bytes, bytes, k.p.in.length) != 0) {
    return nullptr;
  }
  return &k.p;
}

void Cpu::Remember(uint32_t paddr, const Predecoded& p, const uint8_t* bytes) {
  if (!fast_paths_ || !p.in.ok()) return;
  if (known_.empty()) {
    // Code that fits in the cache is decoded about once: the table would only cost its memory.
    if (++decodes_ < (1u << kKnownBits)) return;
    known_.resize(size_t{1} << kKnownBits);
  }
  KnownInstruction& k = KnownAt(paddr);
  k.paddr = paddr;
  std::memcpy(k.bytes, bytes, p.in.length);
  k.p = p;
}

std::span<const uint8_t> Cpu::BytesAcross(const Predecoded& p, size_t index,
                                          uint8_t* buffer) const {
  const size_t length = p.in.length, here = Cache::kLineBytes - index % Cache::kLineBytes;
  std::memcpy(buffer, cache_.slot_bytes() + index, here);
  std::memcpy(buffer + here, cache_.slot_bytes() + size_t{p.next_line.slot} * Cache::kLineBytes,
              length - here);
  return {buffer, length};
}

void Cpu::Step() {
  StepInstruction();
  DeliverPendingFault();
}

void Cpu::DeliverPendingFault() {
  if (fault_.pending) {
    fault_.pending = false;
    Deliver(fault_.vector, fault_.has_error, fault_.error_code, EventKind::kFault);
    faulted_ = true;
  }
}

void Cpu::StepInstruction() {
  const bool code32 = seg_[kCs].big;
  const uint32_t linear = Linear(kCs, eip_);
  faulted_ = false;
  data_breakpoint_ = false;
  const bool shadowed = shadow_;
  shadow_ = false;
  if (deliver_ && !shadowed && (intr_ || nmi_) && TakeExternalInterrupt()) return;
  if (dr7_ & 0xFF) {
    if (InstructionBreakpoint(linear)) return;
  }
  if (const Predecoded* p = FetchAndDecode(linear, code32)) Complete(*p);
}

void Cpu::Complete(const Predecoded& p) {
  const Instruction& in = p.in;
  const bool code32 = seg_[kCs].big;
  if (in.fault == Fault::kUD) return Raise(kVecInvalidOpcode);
  if (in.fault != Fault::kNone) return Raise(kVecGeneralProtection);
  // Any byte of the instruction beyond the CS limit (code run off the end of its segment).
  if (eip_ + in.length - 1 > seg_[kCs].limit || eip_ + in.length - 1 < eip_) {
    return Raise(kVecGeneralProtection);
  }
  if (observer_ != nullptr) {
    Observe(eip_, p);
  } else if (log_ != nullptr) {
    Log(eip_, retired_, p);
  }
  next_eip_ = code32 ? eip_ + in.length : (eip_ + in.length) & 0xFFFF;
  jumped_ = false;
  repeat_ = false;
  const bool single_step = eflags_ & flag::kTF;
  const bool ok = p.run(*this, p);
  if (!ok) {
    if (exception_.pending && exception_.trap) {  // INT n, INT3, INTO left pending: completed
      eip_ = next_eip_;
      ++retired_;
    }
    return;
  }
  if (!repeat_) {
    between_iterations_ = false;
    if (!jumped_) eip_ = next_eip_;
    ++retired_;
    // RF holds instruction breakpoints off for one instruction; IRET and POPF may set it again.
    if (in.op != Op::kIret && in.op != Op::kPopf) eflags_ &= ~flag::kRF;
  }
  if (report_registers_) ReportRegisters(in);

  // A #DB trap after it for TF (set when the instruction or REP iteration began; a software
  // interrupt clears TF on entry and takes none) and for a data breakpoint it hit.
  const bool step = single_step && in.flow != Flow::kInt;
  if ((step || data_breakpoint_) && !shadow_) SingleStepTrap(step ? kDr6Bs : 0);
}

void Cpu::ReportRegisters(const Instruction& in) {
  for (uint16_t r = 0; r < 8; ++r) {
    if (in.gpr_written & (1 << r)) observer_->OnRegister(r, gpr_[r]);
  }
  for (uint16_t s = 0; s < 6; ++s) {
    if (in.seg_written & (1 << s)) observer_->OnRegister(kRegSeg0 + s, seg_[s].selector);
  }
  if (FlagsWritten(in) != 0) observer_->OnRegister(kRegEflags, eflags_);
  if (Facts(in.op).attrs & attr::kFpu) {
    const X87Registers x87 = X87RegistersOf(in);
    for (int8_t slot : x87.written) {
      if (slot == kX87Sw) observer_->OnRegister(kRegFpsw, fpu_.status_word());
    }
  }
}

bool Cpu::NearCall(uint32_t target, int size) {
  if (!InCodeLimit(target, size)) return Raise(kVecGeneralProtection, 0), false;
  if (!Push(size, next_eip_)) return false;
  return Branch(true, target, size);
}

// RET and RET imm16 (the bytes to release in `in.imm`).
bool Cpu::NearReturn(const Instruction& in, int size) {
  const uint32_t sp = gpr_[kEsp];
  uint32_t target;
  if (!Pop(size, &target)) return false;
  if (!InCodeLimit(target, size)) {
    gpr_[kEsp] = sp;
    return Raise(kVecGeneralProtection, 0), false;
  }
  if (in.dst == Operand::kImm) SetSp(Sp() + (in.imm & 0xFFFF));
  return Branch(true, target, size);
}

// A #DB trap after an instruction: single step (DR6.BS) or a data breakpoint (its B bit, already
// set in DR6).
void Cpu::SingleStepTrap(uint32_t dr6_bits) {
  dr6_ |= dr6_bits;
  if (!deliver_) {
    exception_ = {true, kVecDebug, 0, eip_, true, false, false};
    return;
  }
  Deliver(kVecDebug, false, 0, EventKind::kTrap);
}

bool Cpu::Execute(const Instruction& in) {
  const int size = in.opsize;
  const auto imm = [&] { return in.imm & SizeMask(size); };
  // The second operand of the common two-operand forms.
  const auto source = [&](uint32_t* v) -> bool {
    switch (in.src) {
      case Operand::kReg:
      case Operand::kRegOp:
        *v = ReadReg(in.reg, size);
        return true;
      case Operand::kAcc:
        *v = ReadReg(kEax, size);
        return true;
      case Operand::kImm:
      case Operand::kImm8:
        *v = imm();
        return true;
      case Operand::kRm:
        return ReadRm(in, size, v);
      case Operand::kMoffs:
        return ReadMem(in.seg, static_cast<uint32_t>(in.disp), size, v);
      case Operand::kOne:
        *v = 1;
        return true;
      case Operand::kCl:
        *v = gpr_[kEcx] & 0xFF;
        return true;
      default:
        *v = 0;
        return true;
    }
  };
  const auto read_dst = [&](uint32_t* v) -> bool {
    switch (in.dst) {
      case Operand::kReg:
      case Operand::kRegOp:
        *v = ReadReg(in.reg, size);
        return true;
      case Operand::kAcc:
        *v = ReadReg(kEax, size);
        return true;
      case Operand::kRm:
        return ReadRm(in, size, v);
      case Operand::kMoffs:
        return ReadMem(in.seg, static_cast<uint32_t>(in.disp), size, v);
      default:
        *v = 0;
        return true;
    }
  };
  const auto write_dst = [&](uint32_t v) -> bool {
    switch (in.dst) {
      case Operand::kReg:
      case Operand::kRegOp:
        WriteReg(in.reg, size, v);
        return true;
      case Operand::kAcc:
        WriteReg(kEax, size, v);
        return true;
      case Operand::kRm:
        return WriteRm(in, size, v);
      case Operand::kMoffs:
        return WriteMem(in.seg, static_cast<uint32_t>(in.disp), size, v);
      default:
        return true;
    }
  };
  // Flags are set by Alu/Shift before the result is stored; a store that faults restores them.
  const uint32_t saved_flags = eflags_;
  const auto store = [&](uint32_t v) -> bool {
    if (write_dst(v)) return true;
    eflags_ = saved_flags;
    return false;
  };
  const auto branch = [&](bool taken, uint32_t target) { return Branch(taken, target, size); };

  uint32_t a = 0, b = 0;
  switch (in.op) {
    case Op::kAdd:
    case Op::kOr:
    case Op::kAdc:
    case Op::kSbb:
    case Op::kAnd:
    case Op::kSub:
    case Op::kXor:
      if (!read_dst(&a) || !source(&b)) return false;
      return store(Alu(in.op, size, a, b));
    case Op::kCmp:
    case Op::kTest:
      if (!read_dst(&a) || !source(&b)) return false;
      Alu(in.op, size, a, b);
      return true;
    case Op::kInc:
    case Op::kDec:
      if (!read_dst(&a)) return false;
      return store(Alu(in.op, size, a, 1));
    case Op::kNot:
      if (!read_dst(&a)) return false;
      return write_dst(~a);
    case Op::kNeg:
      if (!read_dst(&a)) return false;
      return store(Alu(Op::kNeg, size, 0, a));
    case Op::kRol:
    case Op::kRor:
    case Op::kRcl:
    case Op::kRcr:
    case Op::kShl:
    case Op::kShr:
    case Op::kSar:
      if (!read_dst(&a) || !source(&b)) return false;
      return store(Shift(in.op, size, a, b));
    case Op::kMul:
    case Op::kImul1:
    case Op::kDiv:
    case Op::kIdiv:
      if (!read_dst(&a)) return false;
      return MulDiv(in, a);
    case Op::kImul: {
      if (!source(&a)) return false;
      b = in.src2 == Operand::kNone ? ReadReg(in.reg, size) : imm();
      const int64_t p = int64_t{SignExtend(a, size)} * SignExtend(b, size);
      const uint32_t r = static_cast<uint32_t>(p) & SizeMask(size);
      SetFlags(flag::kOF | flag::kCF, p == SignExtend(r, size) ? 0 : flag::kOF | flag::kCF);
      WriteReg(in.reg, size, r);
      return true;
    }
    case Op::kMov:
      if (!source(&a)) return false;
      return write_dst(a);
    case Op::kMovzx:
    case Op::kMovsx: {
      if (!ReadRm(in, in.src_size, &a)) return false;
      if (in.op == Op::kMovsx) a = static_cast<uint32_t>(SignExtend(a, in.src_size));
      WriteReg(in.reg, size, a);
      return true;
    }
    case Op::kLea:
      WriteReg(in.reg, size, EffectiveAddress(in));
      return true;
    case Op::kXchg:
      if (!read_dst(&a) || !source(&b)) return false;
      if (!write_dst(b)) return false;
      if (in.src == Operand::kAcc) {
        WriteReg(kEax, size, a);
      } else {
        WriteReg(in.reg, size, a);
      }
      return true;
    case Op::kXadd:
      if (!read_dst(&a)) return false;
      b = ReadReg(in.reg, size);
      if (in.IsRegisterForm()) {
        // The source gets the old destination first, so XADD r, r leaves the sum.
        WriteReg(in.reg, size, a);
        WriteReg(in.rm, size, Alu(Op::kAdd, size, a, b));
        return true;
      }
      if (!store(Alu(Op::kAdd, size, a, b))) return false;
      WriteReg(in.reg, size, a);
      return true;
    case Op::kCmpxchg: {
      if (!read_dst(&a)) return false;
      const uint32_t acc = ReadReg(kEax, size);
      Alu(Op::kCmp, size, acc, a);
      // The i486 writes the destination in both cases (the old value back when unequal).
      if (acc == a) return store(ReadReg(in.reg, size));
      if (!store(a)) return false;
      WriteReg(kEax, size, a);
      return true;
    }
    case Op::kBswap:
      a = gpr_[in.reg];
      gpr_[in.reg] = __builtin_bswap32(a);
      return true;
    case Op::kCbw:
      if (size == 4) {
        gpr_[kEax] = static_cast<uint32_t>(static_cast<int16_t>(gpr_[kEax]));
      } else {
        WriteReg(kEax, 2, static_cast<uint32_t>(static_cast<int8_t>(gpr_[kEax])));
      }
      return true;
    case Op::kCwd:
      WriteReg(kEdx, size, (ReadReg(kEax, size) & SignBit(size)) ? 0xFFFFFFFFu : 0);
      return true;
    case Op::kSetcc:
      return WriteRm(in, 1, Condition(in.cond) ? 1 : 0);
    case Op::kClc:
      SetFlags(flag::kCF, 0);
      return true;
    case Op::kStc:
      SetFlags(flag::kCF, flag::kCF);
      return true;
    case Op::kCmc:
      eflags_ ^= flag::kCF;
      return true;
    case Op::kCld:
      SetFlags(flag::kDF, 0);
      return true;
    case Op::kStd:
      SetFlags(flag::kDF, flag::kDF);
      return true;
    case Op::kLahf:
      WriteReg(4, 1, (eflags_ & 0xD5) | 2);  // AH
      return true;
    case Op::kSahf:
      SetFlags(0xD5, ReadReg(4, 1));
      return true;
    case Op::kNop:
      return true;
    case Op::kPush:
      if (in.dst == Operand::kSreg) return PushSegment(size, seg_[in.reg].selector);
      if (in.dst == Operand::kRegOp) {
        a = ReadReg(in.reg, size);  // PUSH ESP pushes the value before the push
      } else if (in.dst == Operand::kRm) {
        if (!ReadRm(in, size, &a)) return false;
      } else if (in.dst == Operand::kImm) {
        a = imm();
      }
      return Push(size, a);
    case Op::kPop: {
      if (!Pop(size, &a)) return false;
      if (in.dst == Operand::kSreg) {
        if (LoadSegment(in.reg, static_cast<uint16_t>(a))) {
          shadow_ = in.reg == kSs;
          return true;
        }
        SetSp(Sp() - size);
        return false;
      }
      if (in.dst == Operand::kRegOp) {
        WriteReg(in.reg, size, a);
        return true;
      }
      // POP r/m computes the address with the incremented ESP.
      if (WriteRm(in, size, a)) return true;
      SetSp(Sp() - size);
      return false;
    }
    case Op::kJcc:
      return branch(Condition(in.cond), next_eip_ + in.imm);
    case Op::kJmp:
      if (in.dst == Operand::kRel) return branch(true, next_eip_ + in.imm);
      if (!ReadRm(in, size, &a)) return false;
      return branch(true, a);
    case Op::kCall: {
      uint32_t target = next_eip_ + in.imm;
      if (in.dst != Operand::kRel && !ReadRm(in, size, &target)) return false;
      return NearCall(target, size);
    }
    case Op::kRet:
      return NearReturn(in, size);
    case Op::kLoop:
    case Op::kLoope:
    case Op::kLoopne:
    case Op::kJcxz: {
      if (!branch(BranchTaken(in), next_eip_ + in.imm)) return false;  // ECX as it was
      if (in.op != Op::kJcxz) WriteReg(kEcx, in.addrsize, ReadReg(kEcx, in.addrsize) - 1);
      return true;
    }
    case Op::kBt:
    case Op::kBts:
    case Op::kBtr:
    case Op::kBtc:
      return BitTest(in);
    case Op::kBsf:
    case Op::kBsr: {
      if (!source(&a)) return false;
      // A zero source sets ZF and leaves the destination as it was (undefined on the i486).
      if (a == 0) {
        SetFlags(flag::kZF, flag::kZF);
        return true;
      }
      SetFlags(flag::kZF, 0);
      WriteReg(in.reg, size, in.op == Op::kBsf ? __builtin_ctz(a) : 31 - __builtin_clz(a));
      return true;
    }
    case Op::kShld:
    case Op::kShrd: {
      if (!read_dst(&a)) return false;
      b = ReadReg(in.reg, size);
      const uint32_t count = (in.src2 == Operand::kCl ? gpr_[kEcx] : in.imm) & 31;
      return store(DoubleShift(in.op == Op::kShld, size, a, b, count));
    }
    case Op::kDaa:
    case Op::kDas:
    case Op::kAaa:
    case Op::kAas:
    case Op::kAam:
    case Op::kAad:
      return Decimal(in);
    case Op::kSalc:
      WriteReg(kEax, 1, (eflags_ & flag::kCF) ? 0xFF : 0);
      return true;
    case Op::kXlat:
      if (!ReadMem(in.seg, (gpr_[kEbx] + (gpr_[kEax] & 0xFF)) & SizeMask(in.addrsize), 1, &a)) {
        return false;
      }
      WriteReg(kEax, 1, a);
      return true;
    case Op::kPusha: {
      // Temp := SP (PUSHA) or ESP (PUSHAD), whatever SS.B: a PUSHAD on a 16-bit stack pushes
      // all of ESP, not the 16-bit stack pointer it moves.
      const uint32_t sp = Sp(), temp = ReadReg(kEsp, size);
      for (int r = kEax; r <= kEdi; ++r) {
        if (!Push(size, r == kEsp ? temp : ReadReg(r, size))) {
          SetSp(sp);
          return false;
        }
      }
      return true;
    }
    case Op::kPopa: {
      const uint32_t sp = Sp();
      uint32_t v[8];
      for (int r = kEdi; r >= kEax; --r) {
        if (!Pop(size, &v[r])) {
          SetSp(sp);
          return false;
        }
      }
      for (int r = kEax; r <= kEdi; ++r) {
        if (r != kEsp) WriteReg(r, size, v[r]);  // the popped ESP is thrown away
      }
      return true;
    }
    case Op::kPushf:
      // VM and RF are pushed as 0.
      if (!V86Iopl()) return false;
      return Push(size, eflags_ & ~(flag::kVM | flag::kRF) & SizeMask(size));
    case Op::kPopf: {
      if (!V86Iopl() || !Pop(size, &a)) return false;
      // POPF loads every flag but VM and RF; IOPL only at CPL 0, IF only where CPL <= IOPL.
      uint32_t writable = (flag::kAll & ~(flag::kVM | flag::kRF)) & SizeMask(size);
      if (!real_mode()) {
        if (cpl_ > 0) writable &= ~flag::kIOPL;
        if (cpl_ > static_cast<int>((eflags_ & flag::kIOPL) >> 12)) writable &= ~flag::kIF;
      }
      SetFlags(writable, a);
      return true;
    }
    case Op::kEnter:
      return Enter(in);
    case Op::kLeave: {
      const uint32_t sp = Sp();
      SetSp(StackSize() == 4 ? gpr_[kEbp] : gpr_[kEbp] & 0xFFFF);
      if (!Pop(size, &a)) {
        SetSp(sp);
        return false;
      }
      WriteReg(kEbp, size, a);
      return true;
    }
    case Op::kMovs:
    case Op::kCmps:
    case Op::kStos:
    case Op::kLods:
    case Op::kScas:
      return String(in);
    case Op::kMovSeg:
      if (in.dst == Operand::kSreg) {
        if (!ReadRm(in, 2, &a)) return false;
        if (!LoadSegment(in.reg, static_cast<uint16_t>(a))) return false;
        shadow_ = in.reg == kSs;
        return true;
      }
      // To a register the whole operand size is written (upper half zero); to memory 16 bits.
      return WriteRm(in, in.IsRegisterForm() ? size : 2, seg_[in.reg].selector);
    case Op::kLds:
    case Op::kLes:
    case Op::kLss:
    case Op::kLfs:
    case Op::kLgs: {
      const uint32_t ea = EffectiveAddress(in);
      uint32_t offset, selector;
      if (!ReadMem(in.seg, ea, size, &offset) ||
          !ReadMem(in.seg, (ea + size) & SizeMask(in.addrsize), 2, &selector)) {
        return false;
      }
      const int seg = in.op == Op::kLds   ? kDs
                      : in.op == Op::kLes ? kEs
                      : in.op == Op::kLss ? kSs
                      : in.op == Op::kLfs ? kFs
                                          : kGs;
      if (!LoadSegment(seg, static_cast<uint16_t>(selector))) return false;
      WriteReg(in.reg, size, offset);
      return true;
    }
    case Op::kJmpFar:
    case Op::kCallFar:
    case Op::kRetFar:
    case Op::kIret:
      return FarTransfer(in);
    case Op::kMovTr:
      return MoveTestRegister(in);
    case Op::kMovDr:
    case Op::kMovCr:
    case Op::kLgdt:
    case Op::kLidt:
    case Op::kSgdt:
    case Op::kSidt:
    case Op::kLmsw:
    case Op::kSmsw:
    case Op::kClts:
    case Op::kCli:
    case Op::kSti:
    case Op::kHlt:
    case Op::kInvlpg:
    case Op::kInvd:
    case Op::kWbinvd:
      return System(in);
    case Op::kLldt:
    case Op::kLtr:
    case Op::kSldt:
    case Op::kStr:
      return Tables(in);
    case Op::kLar:
    case Op::kLsl:
    case Op::kVerr:
    case Op::kVerw:
    case Op::kArpl:
      return Probe(in);
    case Op::kIn:
    case Op::kOut:
    case Op::kIns:
    case Op::kOuts:
      return PortIo(in);
    case Op::kInt3:
      return Trap(kVecBreakpoint);
    case Op::kInt:
      if (!V86Iopl()) return false;  // INT n, unlike INT3 and INTO
      return Trap(static_cast<uint8_t>(in.imm));
    case Op::kInto:
      if (BranchTaken(in)) return Trap(kVecOverflow);
      return true;
    case Op::kInt1:  // ICEBP: a debug trap after it, as a hardware one (no gate DPL check)
      return Trap(kVecDebug, /*software=*/false);
    case Op::kBound: {
      // The signed register against the two bounds in memory (lower, then upper): #BR, a fault,
      // outside them.
      const uint32_t ea = EffectiveAddress(in);
      uint32_t lower = 0, upper = 0;
      if (!ReadMem(in.seg, ea, size, &lower) ||
          !ReadMem(in.seg, (ea + size) & SizeMask(in.addrsize), size, &upper)) {
        return false;
      }
      const int32_t v = SignExtend(ReadReg(in.reg, size), size);
      if (v < SignExtend(lower, size) || v > SignExtend(upper, size)) {
        return Raise(kVecBound), false;
      }
      return true;
    }
    default:
      break;
  }
  if (Facts(in.op).attrs & attr::kFpu) return X87(in);
  Unmodelled();
  return false;
}

// At an instruction boundary: an NMI, or INTR with IF set, is taken before the next instruction
// (its return address is this one's EIP, so a REP instruction resumes with the count it has).
bool Cpu::TakeExternalInterrupt() {
  uint8_t vector;
  if (nmi_ && !nmi_blocked_) {
    nmi_ = false;
    nmi_blocked_ = true;
    vector = 2;
  } else if (intr_ && (eflags_ & flag::kIF)) {
    // The interrupt acknowledge cycle: the interrupt controller puts the vector on the bus.
    uint8_t v = 0;
    cat::BusRecord ack;
    ack.kind = cat::RecordKind::kInterruptAck;
    ack.branch_count = branch_count_;
    ack.data = std::span<const uint8_t>(&v, 1);
    bus_.Read(ack, std::span<uint8_t>(&v, 1));
    vector = v;
  } else {
    return false;
  }
  halted_ = false;
  Deliver(vector, false, 0, EventKind::kInterrupt);
  return true;
}

bool Cpu::Trap(uint8_t vector, bool software) {
  if (deliver_) {
    // The instruction retires; the handler's entry is its control transfer.
    if (!Interrupt(vector, next_eip_, software, false, 0)) return false;
    return true;
  }
  exception_ = {true, vector, 0, next_eip_, true, false};
  return false;
}

// BT, BTS, BTR, BTC. With a register bit offset and a memory operand the offset addresses any
// bit relative to the operand (signed); with an immediate or a register operand it is taken modulo
// the operand width.
bool Cpu::BitTest(const Instruction& in) {
  const int size = in.opsize, bits = 8 * size;
  const bool imm_offset = in.src == Operand::kImm8 || in.src == Operand::kImm;
  const uint32_t offset = imm_offset ? in.imm & 0xFF : ReadReg(in.reg, size);
  uint32_t value = 0;
  uint32_t address = 0;
  uint32_t bit = offset & (bits - 1);
  const bool memory = !in.IsRegisterForm();
  if (memory) {
    address = EffectiveAddress(in);
    if (!imm_offset) {
      const int32_t signed_offset = SignExtend(offset, size);
      address += static_cast<uint32_t>((signed_offset >> (size == 4 ? 5 : 4)) * size);
      if (in.addrsize == 2) address &= 0xFFFF;
    }
    if (!ReadMem(in.seg, address, size, &value)) return false;
  } else {
    value = ReadReg(in.rm, size);
  }
  const bool set = (value >> bit) & 1;
  uint32_t result = value;
  if (in.op == Op::kBts) result |= 1u << bit;
  if (in.op == Op::kBtr) result &= ~(1u << bit);
  if (in.op == Op::kBtc) result ^= 1u << bit;
  if (in.op != Op::kBt) {
    if (memory) {
      if (!WriteMem(in.seg, address, size, result)) return false;
    } else {
      WriteReg(in.rm, size, result);
    }
  }
  SetFlags(flag::kCF, set ? flag::kCF : 0);
  return true;
}

// SHLD and SHRD: `value` shifted with bits from `fill` coming in. For 16-bit operands a count
// above 16 leaves the result undefined; this core shifts through value:fill:value, as later Intel
// processors are documented to and as QEMU does (docs/machines/i486-core.md, "Undefined flags").
uint32_t Cpu::DoubleShift(bool left, int size, uint32_t value, uint32_t fill, uint32_t count) {
  const int bits = 8 * size;
  const uint32_t m = SizeMask(size), sign = SignBit(size);
  value &= m;
  fill &= m;
  if (count == 0) return value;
  const uint64_t x = size == 2 ? (uint64_t{value} << 32 | uint64_t{fill} << 16 | value)
                     : left    ? (uint64_t{value} << 32 | fill)
                               : (uint64_t{fill} << 32 | value);
  uint32_t r;
  bool cf;
  if (left) {
    r = static_cast<uint32_t>((x << count) >> 32) & m;
    cf = (x >> (32 + bits - count)) & 1;
  } else {
    r = static_cast<uint32_t>(x >> count) & m;
    cf = (x >> (count - 1)) & 1;
  }
  const bool of = ((r ^ value) & sign) != 0;
  SetFlags(flag::kOSZAPC, Szp(r, size) | (cf ? flag::kCF : 0) | (of ? flag::kOF : 0));
  return r;
}

// DAA, DAS, AAA, AAS, AAM, AAD.
bool Cpu::Decimal(const Instruction& in) {
  uint32_t al = gpr_[kEax] & 0xFF;
  const bool af = eflags_ & flag::kAF, cf = eflags_ & flag::kCF;
  switch (in.op) {
    case Op::kDaa:
    case Op::kDas: {
      const bool add = in.op == Op::kDaa;
      const uint32_t old = al;
      bool new_cf = false, new_af = false;
      if ((al & 0x0F) > 9 || af) {
        new_cf = cf || (add ? al > 0xF9 : al < 6);
        al = (add ? al + 6 : al - 6) & 0xFF;
        new_af = true;
      }
      if (old > 0x99 || cf) {
        al = (add ? al + 0x60 : al - 0x60) & 0xFF;
        new_cf = true;
      }
      WriteReg(kEax, 1, al);
      SetFlags(flag::kOSZAPC, Szp(al, 1) | (new_cf ? flag::kCF : 0) | (new_af ? flag::kAF : 0));
      return true;
    }
    case Op::kAaa:
    case Op::kAas: {
      uint32_t ax = gpr_[kEax] & 0xFFFF;
      if ((al & 0x0F) > 9 || af) {
        // From the 80286 on, the adjustment carries into (borrows from) AH: AX +/- 6, AH +/- 1.
        ax = (in.op == Op::kAaa ? ax + 0x106 : ax - 0x106) & 0xFF0F;
        SetFlags(flag::kAF | flag::kCF, flag::kAF | flag::kCF);
      } else {
        ax &= 0xFF0F;
        SetFlags(flag::kAF | flag::kCF, 0);
      }
      WriteReg(kEax, 2, ax);
      return true;
    }
    case Op::kAam: {
      const uint32_t base = in.imm & 0xFF;
      if (base == 0) return Raise(kVecDivide), false;
      const uint32_t ax = (al / base) << 8 | (al % base);
      WriteReg(kEax, 2, ax);
      SetFlags(flag::kOSZAPC, Szp(ax & 0xFF, 1));
      return true;
    }
    case Op::kAad: {
      const uint32_t ah = (gpr_[kEax] >> 8) & 0xFF;
      al = (al + ah * (in.imm & 0xFF)) & 0xFF;
      WriteReg(kEax, 2, al);
      SetFlags(flag::kOSZAPC, Szp(al, 1));
      return true;
    }
    default:
      return false;
  }
}

// ENTER imm16, imm8: the frame pointer chain copied for nesting levels above 0 (level mod 32).
// With a 32-bit operand the frame pointer is the whole ESP after the first push, even on a
// 16-bit stack (the later Intel manuals' FrameTemp := ESP; test386 on the 80386 and i486 chips),
// where the i486 manual's pseudo-code would take SP alone.
bool Cpu::Enter(const Instruction& in) {
  const int size = in.opsize;
  const uint32_t frame = in.imm & 0xFFFF;
  const uint32_t level = in.imm2 & 31;
  const uint32_t sp = Sp(), bp = gpr_[kEbp];
  // ENTER faults (#SS, #PF) if a write at its final stack pointer would, and then writes nothing.
  const uint32_t pushes = level > 0 ? level + 1 : 1;
  const uint32_t final_sp = (sp - pushes * size - frame) & SizeMask(StackSize());
  if (!CheckWritable(kSs, final_sp, size)) return false;
  const auto undo = [&] {
    SetSp(sp);
    gpr_[kEbp] = bp;
    return false;
  };
  if (!Push(size, ReadReg(kEbp, size))) return undo();
  const uint32_t frame_pointer = gpr_[kEsp] & SizeMask(size);
  uint32_t copy_from = StackSize() == 4 ? bp : bp & 0xFFFF;
  for (uint32_t i = 1; i < level; ++i) {
    copy_from = (copy_from - size) & SizeMask(StackSize());
    uint32_t v;
    if (!ReadMem(kSs, copy_from, size, &v) || !Push(size, v)) return undo();
  }
  if (level > 0 && !Push(size, frame_pointer)) return undo();
  WriteReg(kEbp, size, frame_pointer);
  SetSp(Sp() - frame);
  return true;
}

// One iteration of a string instruction. With REP/REPE/REPNE the instruction stays at its EIP
// until the count runs out (or the ZF condition ends it): each iteration is a step of its own,
// so an interrupt can come between two, and the instruction retires once.
bool Cpu::String(const Instruction& in) {
  const int size = in.opsize;
  const int as = in.addrsize;
  const uint32_t am = SizeMask(as);
  const bool rep = in.prefixes & (prefix::kRep | prefix::kRepne);
  if (rep && (gpr_[kEcx] & am) == 0) return true;
  const uint32_t si = gpr_[kEsi] & am, di = gpr_[kEdi] & am;
  uint32_t a = 0, b = 0;
  const auto advance = [&](int r) { AdvanceIndex(r, in); };
  switch (in.op) {
    case Op::kMovs:
      if (!ReadMem(in.seg, si, size, &a) || !WriteMem(kEs, di, size, a)) return false;
      advance(kEsi);
      advance(kEdi);
      break;
    case Op::kCmps:
      if (!ReadMem(in.seg, si, size, &a) || !ReadMem(kEs, di, size, &b)) return false;
      Alu(Op::kCmp, size, a, b);
      advance(kEsi);
      advance(kEdi);
      break;
    case Op::kStos:
      if (!WriteMem(kEs, di, size, ReadReg(kEax, size))) return false;
      advance(kEdi);
      break;
    case Op::kLods:
      if (!ReadMem(in.seg, si, size, &a)) return false;
      WriteReg(kEax, size, a);
      advance(kEsi);
      break;
    case Op::kScas:
      if (!ReadMem(kEs, di, size, &b)) return false;
      Alu(Op::kCmp, size, ReadReg(kEax, size), b);
      advance(kEdi);
      break;
    default:
      return false;
  }
  if (rep) CountIteration(in);
  return true;
}

// ESI or EDI (SI or DI with a 16-bit address size) on to the next element, as DF says.
void Cpu::AdvanceIndex(int r, const Instruction& in) {
  const uint32_t am = SizeMask(in.addrsize);
  const uint32_t step = (eflags_ & flag::kDF) ? 0u - in.opsize : static_cast<uint32_t>(in.opsize);
  const uint32_t v = (gpr_[r] + step) & am;
  gpr_[r] = in.addrsize == 4 ? v : (gpr_[r] & 0xFFFF0000u) | v;
}

// After one iteration under REP/REPE/REPNE: ECX (CX) counts down, and the instruction runs again
// while it is not zero (and, for CMPS and SCAS, while ZF says so).
void Cpu::CountIteration(const Instruction& in) {
  const uint32_t am = SizeMask(in.addrsize);
  const uint32_t count = (gpr_[kEcx] - 1) & am;
  gpr_[kEcx] = in.addrsize == 4 ? count : (gpr_[kEcx] & 0xFFFF0000u) | count;
  bool again = count != 0;
  if (Facts(in.op).attrs & attr::kRepZ) {
    const bool zf = eflags_ & flag::kZF;
    again = again && ((in.prefixes & prefix::kRep) ? zf : !zf);
  }
  if (again) repeat_ = between_iterations_ = true;
}

}  // namespace citcat::x86
