#include "extract/i486_contract.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core_state/i486_state.h"
#include "machine/i486/contract.h"
#include "simcore/bus.h"
#include "simcore/x86/cpu.h"

namespace citcat::extract {
namespace {

using i486::LoadLE;

// The slot order of selectors and descriptors: ES CS SS DS FS GS LDTR TR.
constexpr int kSegments = 8;

// A segment register's hidden cache from the descriptor it was loaded from (zero for a null
// selector: an unusable segment).
void DecodeSegment(uint32_t selector, std::span<const uint8_t> d, ims::X86Segment& s) {
  const uint32_t raw_limit = static_cast<uint32_t>(LoadLE(d.subspan(0, 2))) | (d[6] & 0xFu) << 16;
  const bool granular = d[6] & 0x80;
  s.set_selector(selector);
  s.set_base(static_cast<uint32_t>(LoadLE(d.subspan(2, 3))) | uint32_t{d[7]} << 24);
  s.set_limit(granular ? raw_limit << 12 | 0xFFF : raw_limit);
  s.set_access_rights(d[5] | (d[6] & 0xF0u) << 8);
}

// The inverse: the 8 descriptor bytes, or false if no descriptor holds this limit.
bool EncodeSegment(const ims::X86Segment& s, uint8_t d[8]) {
  const bool granular = s.access_rights() & 0x8000;
  uint32_t raw = s.limit();
  if (granular) {
    if ((raw & 0xFFF) != 0xFFF) return false;
    raw >>= 12;
  } else if (raw > 0xFFFFF) {
    return false;
  }
  const uint32_t base = s.base();
  d[0] = raw & 0xFF;
  d[1] = (raw >> 8) & 0xFF;
  d[2] = base & 0xFF;
  d[3] = (base >> 8) & 0xFF;
  d[4] = (base >> 16) & 0xFF;
  d[5] = s.access_rights() & 0xFF;
  d[6] = static_cast<uint8_t>(((s.access_rights() >> 8) & 0xF0) | ((raw >> 16) & 0xF));
  d[7] = base >> 24;
  return s.access_rights() <= 0xF0FF;
}

ims::X86Segment* Segment(ims::X86State& s, int n) {
  ims::X86Segment* const segments[kSegments] = {s.mutable_es(),   s.mutable_cs(), s.mutable_ss(),
                                                s.mutable_ds(),   s.mutable_fs(), s.mutable_gs(),
                                                s.mutable_ldtr(), s.mutable_tr()};
  return segments[n];
}

const ims::X86Segment& Segment(const ims::X86State& s, int n) {
  const ims::X86Segment* const segments[kSegments] = {&s.es(), &s.cs(), &s.ss(),   &s.ds(),
                                                      &s.fs(), &s.gs(), &s.ldtr(), &s.tr()};
  return *segments[n];
}

// The state dump as the slots of machine/i486/contract.h hold it.
void DecodeState(std::span<const uint8_t> state, ims::X86State& s) {
  const auto dword = [&](uint64_t offset) {
    return static_cast<uint32_t>(LoadLE(state.subspan(offset, 4)));
  };
  const auto word = [&](uint64_t offset) {
    return static_cast<uint32_t>(LoadLE(state.subspan(offset, 2)));
  };
  for (int i = 0; i < 8; ++i) s.add_gpr(dword(CITCAT_I486_SLOT_GPR + 4 * i));
  s.set_eip(dword(CITCAT_I486_SLOT_EIP));
  s.set_eflags(dword(CITCAT_I486_SLOT_EFLAGS));
  s.set_cr0(dword(CITCAT_I486_SLOT_CR0));
  s.set_cr2(dword(CITCAT_I486_SLOT_CR2));
  s.set_cr3(dword(CITCAT_I486_SLOT_CR3));
  for (int i = 0; i < 4; ++i) s.add_dr(dword(CITCAT_I486_SLOT_DR + 4 * i));
  s.add_dr(dword(CITCAT_I486_SLOT_DR6));
  s.add_dr(dword(CITCAT_I486_SLOT_DR7));
  s.mutable_gdtr()->set_limit(word(CITCAT_I486_SLOT_GDTR));
  s.mutable_gdtr()->set_base(dword(CITCAT_I486_SLOT_GDTR + 2));
  s.mutable_idtr()->set_limit(word(CITCAT_I486_SLOT_IDTR));
  s.mutable_idtr()->set_base(dword(CITCAT_I486_SLOT_IDTR + 2));
  for (int n = 0; n < kSegments; ++n) {
    DecodeSegment(word(CITCAT_I486_SLOT_SELECTOR + 4 * n),
                  state.subspan(CITCAT_I486_SLOT_DESCRIPTOR + 8 * n, 8), *Segment(s, n));
  }
  // The FSAVE image, 32-bit protected-mode layout: the environment, then ST(0)..ST(7).
  const std::span<const uint8_t> fpu = state.subspan(CITCAT_I486_SLOT_FPU, 108);
  ims::X87State& x = *s.mutable_x87();
  x.set_control_word(static_cast<uint32_t>(LoadLE(fpu.subspan(0, 2))));
  x.set_status_word(static_cast<uint32_t>(LoadLE(fpu.subspan(4, 2))));
  x.set_tag_word(static_cast<uint32_t>(LoadLE(fpu.subspan(8, 2))));
  x.set_instruction_pointer(static_cast<uint32_t>(LoadLE(fpu.subspan(12, 4))));
  x.set_instruction_selector(static_cast<uint32_t>(LoadLE(fpu.subspan(16, 2))));
  x.set_opcode(static_cast<uint32_t>(LoadLE(fpu.subspan(18, 2))) & 0x7FF);
  x.set_operand_pointer(static_cast<uint32_t>(LoadLE(fpu.subspan(20, 4))));
  x.set_operand_selector(static_cast<uint32_t>(LoadLE(fpu.subspan(24, 2))));
  const int top = (x.status_word() >> 11) & 7;
  for (int physical = 0; physical < 8; ++physical) {
    const int st = (physical - top + 8) & 7;
    const std::span<const uint8_t> r = fpu.subspan(28 + 10 * st, 10);
    x.add_st(std::string(r.begin(), r.end()));
  }
}

// The bus of a core that is only built to be looked at: it never runs.
class NoBus final : public simcore::Bus {
 public:
  void Read(const cat::BusRecord&, std::span<uint8_t> data) override {
    std::fill(data.begin(), data.end(), 0);
  }
  void Write(const cat::BusRecord&) override {}
};

}  // namespace

absl::Status I486Contract::ResetState(ims::InitialMachineState& ims) const {
  return ResetStateFor(cat::CatHeader{}, ims);
}

absl::Status I486Contract::ResetStateFor(const cat::CatHeader&, ims::InitialMachineState& ims) {
  NoBus bus;
  const x86::Cpu cpu(bus);  // a new core is a core after RESET
  core_state::SaveX86State(cpu, *ims.mutable_x86());
  return absl::OkStatus();
}

namespace {

// What an external interrupt's pushed EFLAGS always holds: IF (the interrupt was taken) and bit 1
// (always one); and never: bits 3, 5 and 15 (always zero) and 19-31 (no flag there on the
// i486DX, whose EFLAGS ends with AC).
constexpr uint32_t kFlagsOnes = 0x202;
constexpr uint32_t kFlagsZeros = 0xFFF88028;
constexpr uint32_t kFlagsVm = 1u << 17;

// What each push of a frame is, as far as its value tells: a selector (zero-extended in a dword
// push), (E)FLAGS, or anything (ESP, EIP).
enum class Role { kSelector, kFlags, kAny };
constexpr Role kSameLevelRoles[] = {Role::kFlags, Role::kSelector, Role::kAny};
constexpr Role kOuterRingRoles[] = {Role::kSelector, Role::kAny, Role::kFlags, Role::kSelector,
                                    Role::kAny};
constexpr Role kV86Roles[] = {Role::kSelector, Role::kSelector, Role::kSelector,
                              Role::kSelector, Role::kSelector, Role::kAny,
                              Role::kFlags,    Role::kSelector, Role::kAny};

enum class Fit { kNo, kYes, kOpen };

Fit FitOf(I486Contract::Frame f, std::span<const I486Contract::FrameStore> stores, bool complete) {
  using Frame = I486Contract::Frame;
  const size_t n = I486Contract::FrameStores(f);
  if (stores.empty()) return complete ? Fit::kNo : Fit::kOpen;
  const int w = stores[0].size;
  // A word frame from V86 mode (a 16-bit gate) would hide VM, its only mark: not keyed.
  if ((w != 2 && w != 4) || (f == Frame::kV86 && w != 4)) return Fit::kNo;
  const Role* roles = f == Frame::kSameLevel   ? kSameLevelRoles
                      : f == Frame::kOuterRing ? kOuterRingRoles
                                               : kV86Roles;
  for (size_t i = 0; i < std::min(n, stores.size()); ++i) {
    const I486Contract::FrameStore& s = stores[i];
    if (s.size != w || (i > 0 && s.address + w != stores[i - 1].address)) return Fit::kNo;
    if (roles[i] == Role::kSelector && s.value > 0xFFFF) return Fit::kNo;
    if (roles[i] == Role::kFlags &&
        ((s.value & kFlagsOnes) != kFlagsOnes || (s.value & kFlagsZeros) != 0 ||
         (w == 4 && ((s.value & kFlagsVm) != 0) != (f == Frame::kV86)))) {
      return Fit::kNo;
    }
  }
  if (f == Frame::kOuterRing) {
    // The outer ring's SS and CS: neither null, both with its CPL (1 to 3) as RPL.
    const uint32_t ss = stores[0].value;
    if ((ss & ~3u) == 0 || (ss & 3) == 0) return Fit::kNo;
    if (stores.size() >= 4) {
      const uint32_t cs = stores[3].value;
      if ((cs & ~3u) == 0 || (cs & 3) != (ss & 3)) return Fit::kNo;
    }
  }
  if (stores.size() < n) return complete ? Fit::kNo : Fit::kOpen;
  return Fit::kYes;
}

std::string Values(std::span<const I486Contract::FrameStore> stores) {
  std::string out;
  for (const I486Contract::FrameStore& s : stores) {
    absl::StrAppend(&out, out.empty() ? "" : " ", "0x", absl::Hex(s.value), "@0x",
                    absl::Hex(s.address));
  }
  return out;
}

}  // namespace

const char* I486Contract::FrameName(Frame f) {
  switch (f) {
    case Frame::kSameLevel:
      return "taken at the handler's privilege level or in real mode ((E)FLAGS, CS, EIP)";
    case Frame::kOuterRing:
      return "taken from an outer ring (SS, ESP, EFLAGS, CS, EIP)";
    case Frame::kV86:
      return "taken from virtual-8086 mode (GS, FS, DS, ES, SS, ESP, EFLAGS, CS, EIP)";
  }
  return "";
}

absl::StatusOr<std::optional<I486Contract::Frame>> I486Contract::FindFrame(
    std::span<const FrameStore> stores, bool complete) {
  std::vector<Frame> fits;
  for (Frame f : {Frame::kSameLevel, Frame::kOuterRing, Frame::kV86}) {
    switch (FitOf(f, stores, complete)) {
      case Fit::kOpen:
        return std::nullopt;
      case Fit::kYes:
        fits.push_back(f);
        break;
      case Fit::kNo:
        break;
    }
  }
  const auto eip = [&](Frame f) { return stores[FrameStores(f) - 1].value; };
  if (fits.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the CPU stores after it (", Values(stores.first(std::min<size_t>(stores.size(), 9))),
        ") are no interrupt frame's pushes: neither (E)FLAGS, CS, EIP nor SS, ESP, EFLAGS, CS, EIP "
        "nor the nine dwords from virtual-8086 mode, of one size, to descending addresses"));
  }
  // Frames that agree on the return EIP give the same key: the CAT decides it.
  for (Frame f : fits) {
    if (eip(f) != eip(fits[0])) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the CPU stores after it fit both the frame of an interrupt ", FrameName(fits[0]),
          ", returning to 0x", absl::Hex(eip(fits[0])), ", and the frame of one ", FrameName(f),
          ", returning to 0x", absl::Hex(eip(f)), ": the CAT alone cannot tell which"));
    }
  }
  return fits[0];
}

absl::Status I486Contract::PlaceFrame(bool complete, aes::EventSchedule& aes) {
  absl::StatusOr<std::optional<Frame>> frame = FindFrame(ack_->stores, complete);
  if (!frame.ok()) {
    return absl::FailedPreconditionError(absl::StrCat("the interrupt acknowledged at record ",
                                                      ack_->index, ": ", frame.status().message()));
  }
  if (!frame->has_value()) return absl::OkStatus();
  aes::Interrupt* irq = aes.add_interrupts();
  irq->set_branch_count(ack_->branch_count);
  irq->set_pc(ack_->stores[FrameStores(**frame) - 1].value);
  irq->set_vector(ack_->vector);
  irq->set_cat_record(ack_->index);  // part of the key in a trace from reset
  ack_.reset();
  return absl::OkStatus();
}

absl::Status I486Contract::ResetTraceRecord(uint64_t, const cat::BusRecord& r,
                                            aes::EventSchedule& aes) {
  if (!ack_ || (r.flags & cat::kFlagLocked) ||
      (r.kind != cat::RecordKind::kWriteThrough && r.kind != cat::RecordKind::kUncachedWrite)) {
    return absl::OkStatus();
  }
  ack_->stores.push_back(
      {r.address, static_cast<uint32_t>(LoadLE(r.data.first(std::min<size_t>(r.data.size(), 4)))),
       static_cast<int>(r.data.size())});
  return PlaceFrame(false, aes);
}

absl::Status I486Contract::Start(const cat::CatHeader& header) {
  from_reset_ = header.from_reset;
  for (const i486::ReservedArea& a : i486::kReservedAreas) {
    const absl::string_view name(a.name.data(), a.name.size());
    const cat::AddressWindow* w = header.FindMagic(name);
    if (w == nullptr || w->kind != cat::WindowKind::kMemoryMapped) {
      return absl::InvalidArgumentError(
          absl::StrCat("header lacks the reserved area '", name, "' of the i486 system"));
    }
    if (w->size < a.size) {
      return absl::InvalidArgumentError(absl::StrCat("the reserved area '", name, "' has ", w->size,
                                                     " bytes, the i486 system's ", a.size));
    }
  }
  begin_ = header.FindMagic("trace-begin");
  state_ = header.FindMagic("cpu-state");
  done_ = header.FindMagic("state-done");
  interrupt_ = header.FindMagic("interrupt");
  return absl::OkStatus();
}

bool I486Contract::Carries(cat::RecordKind kind) const {
  using cat::RecordKind;
  return kind == RecordKind::kFill || kind == RecordKind::kWriteThrough ||
         kind == RecordKind::kUncachedRead || kind == RecordKind::kUncachedWrite ||
         kind == RecordKind::kPortRead || kind == RecordKind::kPortWrite ||
         kind == RecordKind::kInterruptAck;
}

bool I486Contract::EndsStateDump(const cat::CatHeader& header, const cat::BusRecord& r) {
  const cat::AddressWindow* done = header.FindMagic("state-done");
  return done != nullptr && r.master == cat::kMasterCpu &&
         r.kind == cat::RecordKind::kUncachedWrite && done->Contains(r.address);
}

bool I486Contract::IsBeginMarker(const cat::BusRecord& r) const {
  return r.master == cat::kMasterCpu && r.kind == cat::RecordKind::kUncachedWrite &&
         r.address == begin_->base && r.data.size() == 4 && LoadLE(r.data) == i486::kBeginMarker;
}

absl::StatusOr<bool> I486Contract::DumpStore(const ReservedStore& store, const ReservedMemory& dump,
                                             ims::InitialMachineState& ims) {
  if (&store.area == interrupt_) {
    return absl::FailedPreconditionError("an interrupt report inside the state dump");
  }
  if (&store.area != done_) return false;
  DecodeState(dump.Bytes(*state_), *ims.mutable_x86());
  // Nothing retires between the state-done store and the resume point.
  ims.mutable_start()->set_branch_count(store.record.branch_count);
  return true;
}

absl::Status I486Contract::InterruptAck(uint64_t index, const cat::BusRecord& r,
                                        aes::EventSchedule& aes) {
  if (r.data.size() != 1)
    return absl::FailedPreconditionError("an interrupt acknowledge of more than one byte");
  if (ack_ && from_reset_ && ack_->stores.size() >= FrameStores(Frame::kSameLevel)) {
    // Whatever frame it pushed, it pushed before this acknowledge.
    if (absl::Status s = PlaceFrame(true, aes); !s.ok()) return s;
  }
  if (ack_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "an interrupt acknowledge while the one at record ", ack_->index, " still waits for ",
        from_reset_ ? "the store of its return EIP" : "its interrupt report"));
  }
  ack_ = Acknowledge{index, r.branch_count, r.data[0]};
  return absl::OkStatus();
}

absl::Status I486Contract::HookStore(const ReservedStore& store, aes::EventSchedule& aes) {
  const cat::BusRecord& r = store.record;
  if (&store.area != interrupt_) {
    return absl::FailedPreconditionError("a second state dump inside the trace");
  }
  if (store.offset == CITCAT_I486_INTERRUPT_CS || store.offset == CITCAT_I486_INTERRUPT_EFLAGS) {
    return absl::OkStatus();  // for people reading the CAT; the key needs neither
  }
  if (r.data.size() != 4 ||
      (store.offset != CITCAT_I486_INTERRUPT_ECX && store.offset != CITCAT_I486_INTERRUPT_EIP)) {
    return absl::FailedPreconditionError("an interrupt report store that is not one of its dwords");
  }
  if (!ack_) {
    return absl::FailedPreconditionError(
        "an interrupt report with no interrupt acknowledge before it");
  }
  const uint32_t value = static_cast<uint32_t>(LoadLE(r.data));
  if (store.offset == CITCAT_I486_INTERRUPT_ECX) {
    ecx_ = value;
    return absl::OkStatus();
  }
  if (!ecx_) return absl::FailedPreconditionError("an interrupt report's EIP before its ECX");
  aes::Interrupt* irq = aes.add_interrupts();
  irq->set_branch_count(ack_->branch_count);
  irq->set_pc(value);
  irq->set_rep_remaining(*ecx_);
  irq->set_vector(ack_->vector);
  irq->set_cat_record(ack_->index);
  ack_.reset();
  ecx_.reset();
  return absl::OkStatus();
}

absl::Status I486Contract::Finish(aes::EventSchedule& aes) {
  if (ack_ && from_reset_ && ack_->stores.size() >= FrameStores(Frame::kSameLevel)) {
    if (absl::Status s = PlaceFrame(true, aes); !s.ok()) return s;
  }
  if (ack_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the trace ends between an interrupt acknowledge (record ", ack_->index, ") and ",
        from_reset_ ? "the store of its return EIP" : "its interrupt report"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<cat::OwnedRecord>> I486Contract::StateDump(
    const cat::CatHeader& header, const ims::InitialMachineState& ims) {
  const cat::AddressWindow *begin = header.FindMagic("trace-begin"),
                           *state = header.FindMagic("cpu-state"),
                           *done = header.FindMagic("state-done");
  if (begin == nullptr || state == nullptr || done == nullptr) {
    return absl::InvalidArgumentError("the header lacks the i486 state dump's reserved areas");
  }
  const ims::X86State& s = ims.x86();
  if (s.gpr_size() != 8 || s.dr_size() != 6 || s.x87().st_size() != 8) {
    return absl::InvalidArgumentError(absl::StrCat(
        "IMS x86 state has ", s.gpr_size(), " GPRs, ", s.dr_size(), " debug registers and ",
        s.x87().st_size(), " x87 registers; the i486 has 8, 6 and 8"));
  }
  std::vector<cat::OwnedRecord> out;
  const uint64_t branch_count = ims.start().branch_count();
  const auto store = [&](uint64_t address, uint64_t value, int bytes) {
    cat::OwnedRecord r;
    r.kind = cat::RecordKind::kUncachedWrite;
    r.address = address;
    r.branch_count = branch_count;
    for (int i = 0; i < bytes; ++i) r.data.push_back(static_cast<uint8_t>(value >> (8 * i)));
    out.push_back(std::move(r));
  };
  const auto slot = [&](uint64_t offset, uint64_t value, int bytes = 4) {
    store(state->base + offset, value, bytes);
  };
  store(begin->base, i486::kBeginMarker, 4);
  for (int i = 0; i < 8; ++i) slot(CITCAT_I486_SLOT_GPR + 4 * i, s.gpr(i));
  slot(CITCAT_I486_SLOT_EIP, s.eip());
  slot(CITCAT_I486_SLOT_EFLAGS, s.eflags());
  slot(CITCAT_I486_SLOT_CR0, s.cr0());
  slot(CITCAT_I486_SLOT_CR2, s.cr2());
  slot(CITCAT_I486_SLOT_CR3, s.cr3());
  for (int i = 0; i < 4; ++i) slot(CITCAT_I486_SLOT_DR + 4 * i, s.dr(i));
  slot(CITCAT_I486_SLOT_DR6, s.dr(4));
  slot(CITCAT_I486_SLOT_DR7, s.dr(5));
  for (const auto& [offset, table] :
       {std::pair{CITCAT_I486_SLOT_GDTR, &s.gdtr()}, std::pair{CITCAT_I486_SLOT_IDTR, &s.idtr()}}) {
    if (table->limit() > 0xFFFF) {
      return absl::InvalidArgumentError("IMS x86 state has a table limit above 0xFFFF");
    }
    slot(offset, table->limit(), 2);
    slot(offset + 2, table->base());
  }
  for (int n = 0; n < kSegments; ++n) {
    const ims::X86Segment& seg = Segment(s, n);
    uint8_t d[8];
    if (seg.selector() > 0xFFFF || !EncodeSegment(seg, d)) {
      return absl::InvalidArgumentError(
          absl::StrCat("IMS x86 segment ", n, " (selector 0x", absl::Hex(seg.selector()),
                       ") has a selector, limit or access rights no descriptor can hold"));
    }
    slot(CITCAT_I486_SLOT_SELECTOR + 4 * n, seg.selector(), 2);
    slot(CITCAT_I486_SLOT_DESCRIPTOR + 8 * n, LoadLE(std::span<const uint8_t>(d, 4)));
    slot(CITCAT_I486_SLOT_DESCRIPTOR + 8 * n + 4, LoadLE(std::span<const uint8_t>(d + 4, 4)));
  }
  // The FSAVE image as the i486 stores it (reserved halves zero), as dword stores.
  const ims::X87State& x = s.x87();
  uint8_t image[CITCAT_I486_FPU_IMAGE_SIZE] = {};
  const auto put = [&](int offset, uint32_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) image[offset + i] = static_cast<uint8_t>(value >> (8 * i));
  };
  put(0, x.control_word(), 2);
  put(4, x.status_word(), 2);
  put(8, x.tag_word(), 2);
  put(12, x.instruction_pointer(), 4);
  put(16, x.instruction_selector(), 2);
  put(18, x.opcode() & 0x7FF, 2);
  put(20, x.operand_pointer(), 4);
  put(24, x.operand_selector(), 2);
  const int top = (x.status_word() >> 11) & 7;
  for (int st = 0; st < 8; ++st) {
    const std::string& r = x.st((top + st) & 7);
    if (r.size() != 10) return absl::InvalidArgumentError("IMS x87 register that is not 10 bytes");
    std::copy(r.begin(), r.end(), image + 28 + 10 * st);
  }
  for (int offset = 0; offset < CITCAT_I486_FPU_IMAGE_SIZE; offset += 4) {
    slot(CITCAT_I486_SLOT_FPU + offset, LoadLE(std::span<const uint8_t>(image + offset, 4)));
  }
  store(done->base, 0, 4);
  return out;
}

}  // namespace citcat::extract
