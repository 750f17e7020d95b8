#include "extract/r4400.h"

#include "absl/strings/str_cat.h"

namespace citcat::extract {
namespace {

constexpr uint64_t kBeginMarker = 0x4349544341540001ull;
constexpr int kTlbEntries = 48;
constexpr uint64_t kHiSlot = 0x100, kLoSlot = 0x108, kResumePcSlot = 0x110, kCp0Slots = 0x200,
                   kFgrSlots = 0x300, kFcr31Slot = 0x400;
constexpr uint32_t kWired = 6, kRandom = 1;

uint64_t LoadBE(std::span<const uint8_t> bytes) {
  uint64_t v = 0;
  for (uint8_t b : bytes) v = v << 8 | b;
  return v;
}

}  // namespace

absl::StatusOr<std::unique_ptr<R4400Extractor>> R4400Extractor::Create(const cat::CatHeader& header,
                                                                       std::string path) {
  std::unique_ptr<R4400Extractor> e(new R4400Extractor(header, std::move(path)));
  std::pair<const char*, Window*> areas[] = {
      {"trace-begin", &e->begin_}, {"cpu-state", &e->state_},     {"tlb", &e->tlb_},
      {"state-done", &e->done_},   {"exception", &e->exception_}, {"cause", &e->cause_},
      {"count", &e->count_},       {"console", &e->console_}};
  for (auto& [name, window] : areas) {
    const cat::AddressWindow* w = header.FindMagic(name);
    if (w == nullptr || w->size > (1 << 20)) {
      return absl::InvalidArgumentError(absl::StrCat(e->path_, ": header lacks the reserved area '",
                                                     name, "' of the R4400 system"));
    }
    window->area = *w;
    window->bytes.assign(w->size, 0);
  }
  return e;
}

absl::Status R4400Extractor::Error(uint64_t index, absl::string_view what) const {
  return absl::FailedPreconditionError(absl::StrCat(path_, ": record ", index, ": ", what));
}

R4400Extractor::Window* R4400Extractor::Area(const cat::BusRecord& r) {
  for (Window* w : {&begin_, &state_, &tlb_, &done_, &exception_, &cause_, &count_, &console_}) {
    if (r.address >= w->area.base && r.address - w->area.base < w->area.size) {
      if (r.data.size() > w->area.size - (r.address - w->area.base)) return nullptr;
      return w;
    }
  }
  return nullptr;
}

uint64_t R4400Extractor::Slot(const Window& w, uint64_t offset) const {
  return LoadBE(std::span(w.bytes).subspan(offset, 8));
}

absl::Status R4400Extractor::Add(uint64_t index, const cat::BusRecord& r) {
  switch (phase_) {
    case Phase::kBeforeBegin:
      if (r.kind != cat::RecordKind::kUncachedWrite || r.address != begin_.area.base ||
          r.data.size() != 8 || LoadBE(r.data) != kBeginMarker) {
        return Error(index, "the trace does not start with the begin-of-trace marker");
      }
      phase_ = Phase::kStateDump;
      return absl::OkStatus();
    case Phase::kStateDump:
      return AddStateDump(index, r);
    case Phase::kReplayed:
      return AddReplayed(index, r);
  }
  return absl::OkStatus();
}

// Between the begin marker and state-done only the driver runs: it stores the state and fetches
// its own uncached instructions. Nothing here is replayed.
absl::Status R4400Extractor::AddStateDump(uint64_t index, const cat::BusRecord& r) {
  if (r.master != cat::kMasterCpu) return absl::OkStatus();
  if (r.kind != cat::RecordKind::kUncachedWrite) return absl::OkStatus();
  Window* w = Area(r);
  if (w == &exception_) return Error(index, "an interrupt report inside the state dump");
  if (w == nullptr) return absl::OkStatus();
  std::copy(r.data.begin(), r.data.end(), w->bytes.begin() + (r.address - w->area.base));
  if (w == &done_) {
    DecodeState();
    out_.ims.mutable_start()->set_branch_count(r.branch_count + 1);
    out_.ims.mutable_start()->set_cat_record(index + 1);
    last_branch_count_ = r.branch_count + 1;
    phase_ = Phase::kReplayed;
  }
  return absl::OkStatus();
}

void R4400Extractor::DecodeState() {
  ims::MipsState& s = *out_.ims.mutable_mips();
  s.add_gpr(0);
  for (int i = 1; i < 32; ++i) s.add_gpr(Slot(state_, 8 * i));
  s.set_hi(Slot(state_, kHiSlot));
  s.set_lo(Slot(state_, kLoSlot));
  s.set_pc(Slot(state_, kResumePcSlot));
  s.set_ll_bit(false);
  auto cp0 = [&](int r) { return Slot(state_, kCp0Slots + 8 * r); };
  ims::MipsCp0& c = *s.mutable_cp0();
  c.set_index(cp0(0));
  c.set_entry_lo0(cp0(2));
  c.set_entry_lo1(cp0(3));
  c.set_context(cp0(4));
  c.set_page_mask(cp0(5));
  c.set_wired(cp0(kWired));
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
  uint32_t wired = static_cast<uint32_t>(cp0(kWired)) & 63;
  uint32_t random = static_cast<uint32_t>(cp0(kRandom)) & 63;
  if (wired < 48 && random >= wired) {
    uint32_t span = 48 - wired;
    uint32_t step = kR4400RandomReadToResume % span;
    random = wired + (random - wired + span - step) % span;
  }
  c.set_random(random);
  for (int i = 0; i < 32; ++i) s.add_fgr(Slot(state_, kFgrSlots + 8 * i));
  s.set_fcr31(static_cast<uint32_t>(Slot(state_, kFcr31Slot)));
  for (int i = 0; i < kTlbEntries; ++i) {
    ims::MipsTlbEntry* e = s.add_tlb();
    e->set_page_mask(Slot(tlb_, 32 * i));
    e->set_entry_hi(Slot(tlb_, 32 * i + 8));
    e->set_entry_lo0(Slot(tlb_, 32 * i + 16));
    e->set_entry_lo1(Slot(tlb_, 32 * i + 24));
  }
}

absl::Status R4400Extractor::AddReplayed(uint64_t index, const cat::BusRecord& r) {
  ++replayed_records_;
  last_branch_count_ = r.branch_count;
  using cat::RecordKind;
  if (r.master != cat::kMasterCpu) {
    if (r.kind != RecordKind::kDmaWrite && r.kind != RecordKind::kDmaRead) {
      return Error(index, absl::StrCat("a device's ", cat::KindName(r.kind), " record"));
    }
    if (!InRam(r)) return Error(index, "DMA outside main memory");
    aes::DmaTransfer* dma = out_.aes.add_dma();
    dma->set_after_cpu_transactions(cpu_transactions_);
    dma->set_to_memory(r.kind == RecordKind::kDmaWrite);
    dma->set_device(r.master);
    dma->set_address(r.address);
    dma->set_data(r.data.data(), r.data.size());
    dma->set_cat_record(index);
    dma->set_branch_count(r.branch_count);
    if (r.kind == RecordKind::kDmaWrite) {
      memory_.Write(r.address, r.data.size());
    } else {
      memory_.Read(r.address, r.data);
    }
    return absl::OkStatus();
  }

  ++cpu_transactions_;
  switch (r.kind) {
    case RecordKind::kFill:
    case RecordKind::kWriteBack:
      if (!InRam(r)) return Error(index, "a cache line outside main memory");
      if (r.kind == RecordKind::kFill) {
        memory_.Read(r.address, r.data);
      } else {
        memory_.Write(r.address, r.data.size());
      }
      return absl::OkStatus();
    case RecordKind::kUncachedRead:
    case RecordKind::kUncachedWrite:
      break;
    default:
      return Error(index, absl::StrCat("a ", cat::KindName(r.kind), " record on an R4400 bus"));
  }

  bool write = r.kind == RecordKind::kUncachedWrite;
  if (InRam(r)) {
    if (write) {
      memory_.Write(r.address, r.data.size());
    } else {
      memory_.Read(r.address, r.data);
    }
    return absl::OkStatus();
  }
  if (Window* w = Area(r)) {
    if (!write) return absl::OkStatus();  // reads of the reserved area give back what was stored
    std::copy(r.data.begin(), r.data.end(), w->bytes.begin() + (r.address - w->area.base));
    uint64_t offset = r.address - w->area.base;
    if (w == &cause_ || w == &count_) {
      if (offset != 0 || r.data.size() != 4) return Error(index, "an echo that is not one word");
      uint32_t value = static_cast<uint32_t>(LoadBE(r.data));
      aes::RegisterRead* read = out_.aes.add_register_reads();
      read->set_register_(w == &cause_ ? aes::RegisterRead::REGISTER_MIPS_CAUSE
                                       : aes::RegisterRead::REGISTER_MIPS_COUNT);
      read->set_value(value);
      read->set_cat_record(index);
      if (w == &cause_) {
        last_cause_ = value;
        cause_seen_ = true;
      }
    } else if (w == &exception_ && offset == 0) {
      if (r.data.size() != 8) return Error(index, "an interrupt report whose EPC is not 8 bytes");
      if (!cause_seen_) return Error(index, "an interrupt report without its Cause echo");
      if (r.branch_count < 2) return Error(index, "an interrupt report with branch count below 2");
      aes::Interrupt* irq = out_.aes.add_interrupts();
      irq->set_branch_count(r.branch_count - 2);
      irq->set_pc(LoadBE(r.data));
      irq->set_cause_ip((last_cause_ >> 8) & 0xFF);
      irq->set_cat_record(index);
    } else if (w == &begin_ || w == &state_ || w == &tlb_ || w == &done_) {
      return Error(index, "a second state dump inside the trace");
    }
    return absl::OkStatus();
  }
  aes::DeviceAccess* io = out_.aes.add_device_io();
  io->set_write(write);
  io->set_address(r.address);
  io->set_data(r.data.data(), r.data.size());
  io->set_cat_record(index);
  return absl::OkStatus();
}

absl::StatusOr<Extraction> R4400Extractor::Finish() && {
  if (phase_ == Phase::kBeforeBegin) {
    return absl::FailedPreconditionError(absl::StrCat(path_, ": the trace holds no records"));
  }
  if (phase_ == Phase::kStateDump) {
    return absl::FailedPreconditionError(
        absl::StrCat(path_, ": the trace ends inside the begin-of-trace state dump"));
  }
  ims::InitialMachineState& ims = out_.ims;
  ims.set_format_version(1);
  ims::MachineDescription& d = *ims.mutable_description();
  d.set_machine(ims::MACHINE_R4400);
  d.set_byte_order(header_.byte_order == cat::ByteOrder::kBig ? ims::BYTE_ORDER_BIG
                                                              : ims::BYTE_ORDER_LITTLE);
  d.set_memory_bytes(header_.memory_bytes);
  d.set_producer(header_.producer);
  for (const cat::CacheGeometry& g : header_.caches) {
    ims::Cache* c = d.add_caches();
    c->set_level(g.level);
    c->set_type(static_cast<ims::Cache::Type>(g.type));
    c->set_size_bytes(g.size_bytes);
    c->set_line_bytes(g.line_bytes);
    c->set_ways(g.ways);
    c->set_write_through(g.policy == cat::WritePolicy::kWriteThrough);
  }
  for (FirstTouchImage::Extent& e : memory_.Extents()) {
    ims::MemoryExtent* m = ims.add_memory();
    m->set_address(e.address);
    m->set_data(e.data.data(), e.data.size());
  }
  aes::EventSchedule& aes = out_.aes;
  aes.set_format_version(1);
  aes.set_machine(ims::MACHINE_R4400);
  aes.mutable_end()->set_branch_count(last_branch_count_);
  aes.mutable_end()->set_cat_records(replayed_records_);
  aes.mutable_end()->set_cpu_transactions(cpu_transactions_);
  return std::move(out_);
}

absl::StatusOr<Extraction> Extract(cat::CatReader& reader,
                                   const std::function<void()>& after_record) {
  if (reader.header().machine != cat::Machine::kR4400) {
    return absl::UnimplementedError(absl::StrCat(reader.path(), ": extraction for the ",
                                                 cat::MachineName(reader.header().machine),
                                                 " is not available yet"));
  }
  absl::StatusOr<std::unique_ptr<R4400Extractor>> extractor =
      R4400Extractor::Create(reader.header(), reader.path());
  if (!extractor.ok()) return extractor.status();
  cat::BusRecord record;
  while (true) {
    absl::StatusOr<bool> more = reader.Next(record);
    if (!more.ok()) return more.status();
    if (!*more) break;
    if (absl::Status s = (*extractor)->Add(reader.record_index(), record); !s.ok()) return s;
    if (after_record) after_record();
  }
  return std::move(**extractor).Finish();
}

}  // namespace citcat::extract
