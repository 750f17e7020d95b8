#include "extract/r4400_contract.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core_state/r4400_state.h"
#include "machine/r4400/contract.h"
#include "simcore/bus.h"
#include "simcore/mips/cpu.h"

namespace citcat::extract {
namespace {

using r4400::LoadBE;

constexpr uint32_t kCp0Random = 1, kCp0Wired = 6;

// The bus of a core that is only built to be looked at: it never runs.
class NoBus final : public simcore::Bus {
 public:
  void Read(const cat::BusRecord&, std::span<uint8_t> data) override {
    std::fill(data.begin(), data.end(), 0);
  }
  void Write(const cat::BusRecord&) override {}
};

// The core's configuration in a system with this header: what sets Config at reset.
absl::StatusOr<mips::CpuConfig> CpuConfigFor(const cat::CatHeader& header) {
  mips::CpuConfig c;
  c.big_endian = header.byte_order == cat::ByteOrder::kBig;
  for (const cat::CacheGeometry& g : header.caches) {
    if (g.level != 1 || g.ways != 1 || g.policy != cat::WritePolicy::kWriteBack ||
        g.type == cat::CacheType::kUnified) {
      return absl::InvalidArgumentError("the header has a cache the R4400 core does not model");
    }
    (g.type == cat::CacheType::kInstruction ? c.icache_bytes : c.dcache_bytes) = g.size_bytes;
    (g.type == cat::CacheType::kInstruction ? c.icache_line : c.dcache_line) = g.line_bytes;
  }
  if (absl::Status s = mips::ValidateCpuConfig(c); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("the header's caches: ", s.message()));
  }
  return c;
}

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
  header_ = &header;
  begin_ = header.FindMagic("trace-begin");
  state_ = header.FindMagic("cpu-state");
  tlb_ = header.FindMagic("tlb");
  done_ = header.FindMagic("state-done");
  exception_ = header.FindMagic("exception");
  cause_ = header.FindMagic("cause");
  count_ = header.FindMagic("count");
  return absl::OkStatus();
}

absl::Status R4400Contract::ResetState(ims::InitialMachineState& ims) const {
  return ResetStateFor(*header_, ims);
}

absl::Status R4400Contract::ResetStateFor(const cat::CatHeader& header,
                                          ims::InitialMachineState& ims) {
  absl::StatusOr<mips::CpuConfig> config = CpuConfigFor(header);
  if (!config.ok()) return config.status();
  NoBus bus;
  mips::Cpu cpu(bus, *config);  // a new core is a core after its cold reset
  core_state::SaveMipsState(cpu, *ims.mutable_mips());
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

absl::StatusOr<std::vector<cat::OwnedRecord>> R4400Contract::StateDump(
    const cat::CatHeader& header, const ims::InitialMachineState& ims) {
  const cat::AddressWindow *begin = header.FindMagic("trace-begin"),
                           *state = header.FindMagic("cpu-state"), *tlb = header.FindMagic("tlb"),
                           *done = header.FindMagic("state-done");
  if (begin == nullptr || state == nullptr || tlb == nullptr || done == nullptr) {
    return absl::InvalidArgumentError("the header lacks the R4400 state dump's reserved areas");
  }
  const ims::MipsState& s = ims.mips();
  if (s.ll_bit()) {
    return absl::InvalidArgumentError(
        "IMS mips.ll_bit is set: the R4400 state dump leaves it clear");
  }
  if (s.gpr_size() != 32 || s.fgr_size() != 32 || s.tlb_size() != CITCAT_R4400_TLB_ENTRIES) {
    return absl::InvalidArgumentError(absl::StrCat(
        "IMS mips state has ", s.gpr_size(), " GPRs, ", s.fgr_size(), " FGRs and ", s.tlb_size(),
        " TLB entries; the R4400 has 32, 32 and ", CITCAT_R4400_TLB_ENTRIES));
  }
  std::vector<cat::OwnedRecord> out;
  const uint64_t branch_count = ims.start().branch_count() - 1;
  // A 64-bit slot, or the low word of one for a 32-bit register (the dump may hold it
  // sign-extended, and extraction reads only the low word).
  const auto store = [&](uint64_t address, uint64_t value, int bytes) {
    cat::OwnedRecord r;
    r.kind = cat::RecordKind::kUncachedWrite;
    r.address = address + 8 - bytes;
    r.branch_count = branch_count;
    for (int i = bytes - 1; i >= 0; --i) r.data.push_back(static_cast<uint8_t>(value >> (8 * i)));
    out.push_back(std::move(r));
  };
  store(begin->base, r4400::kBeginMarker, 8);
  const auto slot = [&](uint64_t offset, uint64_t value, int bytes = 8) {
    store(state->base + offset, value, bytes);
  };
  const auto cp0 = [&](int r, uint64_t value, int bytes) {
    slot(CITCAT_R4400_SLOT_CP0 + 8 * r, value, bytes);
  };
  for (int i = 0; i < 32; ++i) slot(CITCAT_R4400_SLOT_GPR + 8 * i, s.gpr(i));
  slot(CITCAT_R4400_SLOT_HI, s.hi());
  slot(CITCAT_R4400_SLOT_LO, s.lo());
  slot(CITCAT_R4400_SLOT_RESUME_PC, s.pc());
  const ims::MipsCp0& c = s.cp0();
  // Random as the driver read it: DecodeState's step to the resume point, undone.
  const uint32_t wired = c.wired() & 63;
  uint32_t random = c.random();
  if (wired < 48 && random >= wired && random < 48) {
    const uint32_t span = 48 - wired, step = r4400::kRandomReadToResume % span;
    random = wired + (random - wired + step) % span;
  }
  cp0(0, c.index(), 4);
  cp0(kCp0Random, random, 4);
  cp0(2, c.entry_lo0(), 8);
  cp0(3, c.entry_lo1(), 8);
  cp0(4, c.context(), 8);
  cp0(5, c.page_mask(), 4);
  cp0(kCp0Wired, c.wired(), 4);
  cp0(8, c.bad_vaddr(), 8);
  cp0(9, c.count(), 4);
  cp0(10, c.entry_hi(), 8);
  cp0(11, c.compare(), 4);
  cp0(12, c.status(), 4);
  cp0(13, c.cause(), 4);
  cp0(14, c.epc(), 8);
  cp0(15, c.prid(), 4);
  cp0(16, c.config(), 4);
  cp0(17, c.ll_addr(), 4);
  cp0(18, c.watch_lo(), 4);
  cp0(19, c.watch_hi(), 4);
  cp0(20, c.xcontext(), 8);
  cp0(26, c.ecc(), 4);
  cp0(27, c.cache_err(), 4);
  cp0(28, c.tag_lo(), 4);
  cp0(29, c.tag_hi(), 4);
  cp0(30, c.error_epc(), 8);
  for (int i = 0; i < 32; ++i) slot(CITCAT_R4400_SLOT_FGR + 8 * i, s.fgr(i));
  slot(CITCAT_R4400_SLOT_FCR31, s.fcr31(), 4);
  for (int i = 0; i < CITCAT_R4400_TLB_ENTRIES; ++i) {
    const ims::MipsTlbEntry& e = s.tlb(i);
    const uint64_t at = tlb->base + CITCAT_R4400_TLB_ENTRY_BYTES * i;
    store(at + CITCAT_R4400_TLB_PAGE_MASK, e.page_mask(), 8);
    store(at + CITCAT_R4400_TLB_ENTRY_HI, e.entry_hi(), 8);
    store(at + CITCAT_R4400_TLB_ENTRY_LO0, e.entry_lo0(), 8);
    store(at + CITCAT_R4400_TLB_ENTRY_LO1, e.entry_lo1(), 8);
  }
  store(done->base, 0, 8);
  return out;
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
