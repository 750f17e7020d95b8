#include "extract/r4400_contract.h"

#include "absl/strings/str_cat.h"
#include "machine/r4400/contract.h"

namespace citcat::extract {
namespace {

using r4400::LoadBE;

constexpr uint32_t kCp0Random = 1, kCp0Wired = 6;

}  // namespace

absl::Status R4400Contract::Start(const cat::CatHeader& header) {
  for (const r4400::ReservedArea& a : r4400::kReservedAreas) {
    const absl::string_view name(a.name.data(), a.name.size());
    const cat::AddressWindow* w = header.FindMagic(name);
    if (w == nullptr || w->kind != cat::WindowKind::kMemoryMapped) {
      return absl::InvalidArgumentError(
          absl::StrCat("header lacks the reserved area '", name, "' of the R4400 system"));
    }
    // The dump is read slot by slot: an area smaller than the kernel's would be read past.
    if (w->size < a.size) {
      return absl::InvalidArgumentError(absl::StrCat("the reserved area '", name, "' has ", w->size,
                                                     " bytes, the R4400 system's ", a.size));
    }
  }
  begin_ = header.FindMagic("trace-begin");
  state_ = header.FindMagic("cpu-state");
  tlb_ = header.FindMagic("tlb");
  done_ = header.FindMagic("state-done");
  exception_ = header.FindMagic("exception");
  cause_ = header.FindMagic("cause");
  count_ = header.FindMagic("count");
  return absl::OkStatus();
}

bool R4400Contract::Carries(cat::RecordKind kind) const {
  using cat::RecordKind;
  return kind == RecordKind::kFill || kind == RecordKind::kWriteBack ||
         kind == RecordKind::kUncachedRead || kind == RecordKind::kUncachedWrite;
}

bool R4400Contract::EndsStateDump(const cat::CatHeader& header, const cat::BusRecord& r) {
  const cat::AddressWindow* done = header.FindMagic("state-done");
  return done != nullptr && r.master == cat::kMasterCpu &&
         r.kind == cat::RecordKind::kUncachedWrite && done->Contains(r.address);
}

bool R4400Contract::IsBeginMarker(const cat::BusRecord& r) const {
  return r.master == cat::kMasterCpu && r.kind == cat::RecordKind::kUncachedWrite &&
         r.address == begin_->base && r.data.size() == 8 && LoadBE(r.data) == r4400::kBeginMarker;
}

absl::StatusOr<bool> R4400Contract::DumpStore(const ReservedStore& store,
                                              const ReservedMemory& dump,
                                              ims::InitialMachineState& ims) {
  if (&store.area == exception_) {
    return absl::FailedPreconditionError("an interrupt report inside the state dump");
  }
  if (&store.area != done_) return false;
  DecodeState(dump, *ims.mutable_mips());
  // The driver's last instruction, `jr`, retires after the state-done store in its delay slot.
  ims.mutable_start()->set_branch_count(store.record.branch_count + 1);
  return true;
}

void R4400Contract::DecodeState(const ReservedMemory& dump, ims::MipsState& s) const {
  std::span<const uint8_t> state = dump.Bytes(*state_), tlb = dump.Bytes(*tlb_);
  auto slot = [&](uint64_t offset) { return LoadBE(state.subspan(offset, 8)); };
  auto cp0 = [&](int r) { return slot(CITCAT_R4400_SLOT_CP0 + 8 * r); };
  s.add_gpr(0);
  for (int i = 1; i < 32; ++i) s.add_gpr(slot(CITCAT_R4400_SLOT_GPR + 8 * i));
  s.set_hi(slot(CITCAT_R4400_SLOT_HI));
  s.set_lo(slot(CITCAT_R4400_SLOT_LO));
  s.set_pc(slot(CITCAT_R4400_SLOT_RESUME_PC));
  s.set_ll_bit(false);
  ims::MipsCp0& c = *s.mutable_cp0();
  c.set_index(cp0(0));
  c.set_entry_lo0(cp0(2));
  c.set_entry_lo1(cp0(3));
  c.set_context(cp0(4));
  c.set_page_mask(cp0(5));
  c.set_wired(cp0(kCp0Wired));
  c.set_bad_vaddr(cp0(8));
  c.set_count(cp0(9));
  c.set_entry_hi(cp0(10));
  c.set_compare(cp0(11));
  c.set_status(cp0(12));
  c.set_cause(cp0(13));
  c.set_epc(cp0(14));
  c.set_prid(cp0(15));
  c.set_config(cp0(16));
  c.set_ll_addr(cp0(17));
  c.set_watch_lo(cp0(18));
  c.set_watch_hi(cp0(19));
  c.set_xcontext(cp0(20));
  c.set_ecc(cp0(26));
  c.set_cache_err(cp0(27));
  c.set_tag_lo(cp0(28));
  c.set_tag_hi(cp0(29));
  c.set_error_epc(cp0(30));
  // Random counts down from 47 to Wired once per retired instruction and wraps back to 47: step
  // the dumped value on to the resume point.
  uint32_t wired = static_cast<uint32_t>(cp0(kCp0Wired)) & 63;
  uint32_t random = static_cast<uint32_t>(cp0(kCp0Random)) & 63;
  if (wired < 48 && random >= wired) {
    uint32_t span = 48 - wired;
    uint32_t step = r4400::kRandomReadToResume % span;
    random = wired + (random - wired + span - step) % span;
  }
  c.set_random(random);
  for (int i = 0; i < 32; ++i) s.add_fgr(slot(CITCAT_R4400_SLOT_FGR + 8 * i));
  s.set_fcr31(static_cast<uint32_t>(slot(CITCAT_R4400_SLOT_FCR31)));
  for (int i = 0; i < CITCAT_R4400_TLB_ENTRIES; ++i) {
    auto field = [&](uint64_t offset) {
      return LoadBE(tlb.subspan(CITCAT_R4400_TLB_ENTRY_BYTES * i + offset, 8));
    };
    ims::MipsTlbEntry* e = s.add_tlb();
    e->set_page_mask(field(CITCAT_R4400_TLB_PAGE_MASK));
    e->set_entry_hi(field(CITCAT_R4400_TLB_ENTRY_HI));
    e->set_entry_lo0(field(CITCAT_R4400_TLB_ENTRY_LO0));
    e->set_entry_lo1(field(CITCAT_R4400_TLB_ENTRY_LO1));
  }
}

absl::Status R4400Contract::HookStore(const ReservedStore& store, aes::EventSchedule& aes) {
  const cat::BusRecord& r = store.record;
  if (&store.area == cause_ || &store.area == count_) {
    if (store.offset != 0 || r.data.size() != 4) {
      return absl::FailedPreconditionError("an echo that is not one word");
    }
    uint32_t value = static_cast<uint32_t>(LoadBE(r.data));
    aes::RegisterRead* read = aes.add_register_reads();
    read->set_register_(&store.area == cause_ ? aes::RegisterRead::REGISTER_MIPS_CAUSE
                                              : aes::RegisterRead::REGISTER_MIPS_COUNT);
    read->set_value(value);
    read->set_cat_record(store.index);
    if (&store.area == cause_) {
      last_cause_ = value;
      cause_seen_ = true;
    }
  } else if (&store.area == exception_ && store.offset == CITCAT_R4400_EXCEPTION_EPC) {
    // The interrupt's key: EPC, and the branch count before the two control transfers between
    // the interrupted instruction and this store (the exception entry and the handler's BNEZ).
    if (r.data.size() != 8) {
      return absl::FailedPreconditionError("an interrupt report whose EPC is not 8 bytes");
    }
    if (!cause_seen_)
      return absl::FailedPreconditionError("an interrupt report without its Cause echo");
    if (r.branch_count < 2) {
      return absl::FailedPreconditionError("an interrupt report with branch count below 2");
    }
    aes::Interrupt* irq = aes.add_interrupts();
    irq->set_branch_count(r.branch_count - 2);
    irq->set_pc(LoadBE(r.data));
    irq->set_cause_ip((last_cause_ >> 8) & 0xFF);
    irq->set_cat_record(store.index);
  } else if (&store.area == begin_ || &store.area == state_ || &store.area == tlb_ ||
             &store.area == done_) {
    return absl::FailedPreconditionError("a second state dump inside the trace");
  }
  return absl::OkStatus();
}

}  // namespace citcat::extract
