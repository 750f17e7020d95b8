#include "extract/extractor.h"

#include "absl/strings/str_cat.h"
#include "aes/aes_util.h"
#include "ims/ims_util.h"

namespace citcat::extract {
namespace {

// A bound on each reserved area, so that a hostile header cannot ask for gigabytes.
constexpr uint64_t kMaxReservedArea = 1 << 20;

bool IsPort(cat::RecordKind kind) {
  return kind == cat::RecordKind::kPortRead || kind == cat::RecordKind::kPortWrite;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Extractor>> Extractor::Create(const cat::CatHeader& header,
                                                             std::string path,
                                                             SystemContract& contract) {
  if (cat::MachineName(header.machine) != ims::MachineName(contract.machine())) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": a CAT of the ",
                                                   cat::MachineName(header.machine), ", not the ",
                                                   ims::MachineName(contract.machine())));
  }
  for (const cat::AddressWindow& w : header.magic) {
    if (w.size > kMaxReservedArea) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": the reserved area '", w.name, "' is larger than ", kMaxReservedArea, " bytes"));
    }
  }
  std::unique_ptr<Extractor> e(new Extractor(header, std::move(path), contract));
  if (absl::Status s = contract.Start(e->header_); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(e->path_, ": ", s.message()));
  }
  if (e->header_.from_reset) {
    // No begin marker, no dump: the processor at power-on, the first record replayed.
    if (absl::Status s = contract.ResetState(e->out_.ims); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(e->path_, ": ", s.message()));
    }
    ims::StartPoint& start = *e->out_.ims.mutable_start();
    start.set_from_reset(true);
    start.set_branch_count(0);
    start.set_cat_record(0);
    e->phase_ = Phase::kReplayed;
  }
  return e;
}

absl::Status Extractor::Error(uint64_t index, absl::string_view what) const {
  return absl::FailedPreconditionError(absl::StrCat(path_, ": record ", index, ": ", what));
}

const cat::AddressWindow* Extractor::ReservedAt(const cat::BusRecord& r) const {
  return header_.MagicAt(r.address, r.data.size(),
                         IsPort(r.kind) ? cat::WindowKind::kPort : cat::WindowKind::kMemoryMapped);
}

const cat::AddressWindow* Extractor::StoreReserved(const cat::BusRecord& r) {
  const cat::AddressWindow* area = ReservedAt(r);
  if (area != nullptr) reserved_.Store(*area, r.address - area->base, r.data);
  return area;
}

absl::Status Extractor::Add(uint64_t index, const cat::BusRecord& r) {
  switch (phase_) {
    case Phase::kBeforeBegin:
      if (!contract_.IsBeginMarker(r)) {
        return Error(index, "the trace does not start with the begin-of-trace marker");
      }
      phase_ = Phase::kStateDump;
      return absl::OkStatus();
    case Phase::kStateDump:
      return AddStateDump(index, r);
    case Phase::kReplayed: {
      if (absl::Status s = AddReplayed(index, r); !s.ok()) return s;
      const aes::EventSchedule& a = out_.aes;
      constexpr int kBatch = 4096;
      if (events_ != nullptr &&
          a.interrupts_size() + a.dma_size() + a.device_io_size() + a.register_reads_size() >=
              kBatch) {
        return events_->Append(out_.aes);
      }
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

// Between the begin marker and the end of the dump only the driver runs: it stores the state
// and fetches its own uncached instructions. Nothing here is replayed.
absl::Status Extractor::AddStateDump(uint64_t index, const cat::BusRecord& r) {
  if (r.master != cat::kMasterCpu) return absl::OkStatus();
  if (r.kind != cat::RecordKind::kUncachedWrite && r.kind != cat::RecordKind::kPortWrite) {
    return absl::OkStatus();
  }
  const cat::AddressWindow* area = StoreReserved(r);
  if (area == nullptr) return absl::OkStatus();
  absl::StatusOr<bool> done =
      contract_.DumpStore({index, r, *area, r.address - area->base}, reserved_, out_.ims);
  if (!done.ok()) return Error(index, done.status().message());
  if (*done) {
    out_.ims.mutable_start()->set_cat_record(index + 1);
    last_branch_count_ = out_.ims.start().branch_count();
    phase_ = Phase::kReplayed;
  }
  return absl::OkStatus();
}

absl::Status Extractor::AddDma(uint64_t index, const cat::BusRecord& r) {
  using cat::RecordKind;
  if (r.kind != RecordKind::kDmaWrite && r.kind != RecordKind::kDmaRead) {
    return Error(index, absl::StrCat("a device's ", cat::KindName(r.kind), " record"));
  }
  if (!header_.IsMemory(r.address, r.data.size())) return Error(index, "DMA outside main memory");
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

// ROM holds its bytes whatever the CPU writes: a read is known memory, a write is lost.
void Extractor::AddRom(const cat::BusRecord& r) {
  const bool write = r.kind == cat::RecordKind::kWriteBack ||
                     r.kind == cat::RecordKind::kWriteThrough ||
                     r.kind == cat::RecordKind::kUncachedWrite;
  if (!write) memory_.Read(r.address, r.data);
}

absl::Status Extractor::AddReplayed(uint64_t index, const cat::BusRecord& r) {
  ++replayed_records_;
  last_branch_count_ = r.branch_count;
  if (r.master != cat::kMasterCpu) return AddDma(index, r);

  ++cpu_transactions_;
  using cat::RecordKind;
  if (!contract_.Carries(r.kind)) {
    return Error(index, absl::StrCat("a ", cat::KindName(r.kind), " record on an ",
                                     contract_.name(), " bus"));
  }
  if (header_.from_reset) {
    if (absl::Status s = contract_.ResetTraceRecord(index, r, out_.aes); !s.ok()) {
      return Error(index, s.message());
    }
  }
  bool write = false;
  switch (r.kind) {
    case RecordKind::kFill:
    case RecordKind::kWriteBack:
    case RecordKind::kWriteThrough:
      if (header_.RomAt(r.address, r.data.size()) != nullptr) {
        AddRom(r);
        return absl::OkStatus();
      }
      if (!header_.IsMemory(r.address, r.data.size())) {
        return Error(index, "a cache line outside main memory");
      }
      if (r.kind == RecordKind::kFill) {
        memory_.Read(r.address, r.data);
      } else {
        memory_.Write(r.address, r.data.size());
      }
      return absl::OkStatus();
    case RecordKind::kInterruptAck:
      if (absl::Status s = contract_.InterruptAck(index, r, out_.aes); !s.ok()) {
        return Error(index, s.message());
      }
      return absl::OkStatus();
    case RecordKind::kUncachedWrite:
    case RecordKind::kPortWrite:
      write = true;
      break;
    case RecordKind::kUncachedRead:
    case RecordKind::kPortRead:
      break;
    default:
      return Error(index, absl::StrCat("a CPU's ", cat::KindName(r.kind), " record"));
  }

  const bool port = IsPort(r.kind);
  if (!port && header_.RomAt(r.address, r.data.size()) != nullptr) {
    AddRom(r);
    return absl::OkStatus();
  }
  if (!port && header_.IsMemory(r.address, r.data.size())) {
    if (write) {
      memory_.Write(r.address, r.data.size());
    } else {
      memory_.Read(r.address, r.data);
    }
    return absl::OkStatus();
  }
  if (!write) {
    // Reads of a reserved area give back what was stored: nothing from the outside world.
    if (ReservedAt(r) != nullptr) return absl::OkStatus();
  } else if (const cat::AddressWindow* area = StoreReserved(r)) {
    // A program traced from reset has no hooks: what it stores there is its own business, and
    // replay keeps it as the machine does.
    if (header_.from_reset) return absl::OkStatus();
    if (absl::Status s = contract_.HookStore({index, r, *area, r.address - area->base}, out_.aes);
        !s.ok()) {
      return Error(index, s.message());
    }
    return absl::OkStatus();
  }
  aes::DeviceAccess* io = out_.aes.add_device_io();
  io->set_write(write);
  io->set_port(port);
  io->set_address(r.address);
  io->set_data(r.data.data(), r.data.size());
  io->set_cat_record(index);
  return absl::OkStatus();
}

absl::StatusOr<Extraction> Extractor::Finish() && {
  if (phase_ == Phase::kBeforeBegin) {
    return absl::FailedPreconditionError(absl::StrCat(path_, ": the trace holds no records"));
  }
  if (phase_ == Phase::kStateDump) {
    return absl::FailedPreconditionError(
        absl::StrCat(path_, ": the trace ends inside the begin-of-trace state dump"));
  }
  if (absl::Status s = contract_.Finish(out_.aes); !s.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(path_, ": at the end: ", s.message()));
  }
  ims::InitialMachineState& ims = out_.ims;
  ims.set_format_version(ims::kFormatVersion);
  ims::MachineDescription& d = *ims.mutable_description();
  d.set_machine(contract_.machine());
  d.set_byte_order(header_.byte_order == cat::ByteOrder::kBig ? ims::BYTE_ORDER_BIG
                                                              : ims::BYTE_ORDER_LITTLE);
  d.set_memory_bytes(header_.memory_bytes);
  d.set_producer(header_.producer);
  if (!header_.roms.empty()) {
    // The highest: a machine whose ROM is seen at a second, lower place too (the i486 PC's tail
    // below 1 MiB) rebuilds that one from it.
    d.set_rom_base(header_.roms.back().base);
    d.set_rom_bytes(header_.roms.back().size);
  } else {
    for (const cat::AddressWindow& w : header_.devices) {
      if (w.name == "boot-rom") d.set_rom_bytes(w.size);
    }
  }
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
  aes.set_format_version(aes::kFormatVersion);
  aes.set_machine(contract_.machine());
  aes.mutable_end()->set_branch_count(last_branch_count_);
  aes.mutable_end()->set_cat_records(replayed_records_);
  aes.mutable_end()->set_cpu_transactions(cpu_transactions_);
  return std::move(out_);
}

absl::StatusOr<Extraction> Extract(cat::CatReader& reader, SystemContract& contract,
                                   const std::function<void()>& after_record,
                                   aes::ScheduleWriter* events) {
  absl::StatusOr<std::unique_ptr<Extractor>> extractor =
      Extractor::Create(reader.header(), reader.path(), contract);
  if (!extractor.ok()) return extractor.status();
  (*extractor)->set_event_writer(events);
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
