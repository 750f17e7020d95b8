// The machine-neutral replay engine (docs/replay.md): the bus the core runs on, made of the
// first-touch memory image, the reserved CITCAT areas and the AES's queues, and the run loop
// that takes the core from one scheduled event to the next.
#include "replay/engine.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "aes/aes_util.h"
#include "cat_parser/header_codec.h"
#include "replay/divergence.h"

namespace citcat::replay {
namespace {

constexpr uint64_t kSlice = uint64_t{1} << 24;  // steps per core call (the core stops itself)
// A bound on each ROM window, so that an edited IMS cannot ask for gigabytes.
constexpr uint64_t kMaxRomBytes = uint64_t{16} << 20;

std::string Hex(uint64_t v) { return absl::StrCat("0x", absl::Hex(v)); }

std::string BytesHex(std::span<const uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * bytes.size());
  for (uint8_t b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}
std::string BytesHex(absl::string_view bytes) {
  return BytesHex(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
}

// An event's record in messages: an archive's events name none (0; record 0 is never an event's).
std::string AtRecord(uint64_t cat_record) {
  return cat_record != 0 ? absl::StrCat(" (CAT record ", cat_record, ")") : "";
}

std::string Describe(const aes::DeviceAccess& e) {
  return absl::StrCat(e.write() ? "a write of " : "a read of ", e.data().size(), " bytes at ",
                      e.port() ? "port " : "", Hex(e.address()), " data=", BytesHex(e.data()),
                      AtRecord(e.cat_record()));
}

std::string Describe(const aes::RegisterRead& e) {
  return absl::StrCat(aes::RegisterReadName(e.register_()), " = ", Hex(e.value()),
                      AtRecord(e.cat_record()));
}

// Copies n <= 15 bytes in fixed-size pieces, by the bits of n: a library call per instruction
// would cost as much as everything else the ring does.
bool IsPort(cat::RecordKind kind) {
  return kind == cat::RecordKind::kPortRead || kind == cat::RecordKind::kPortWrite;
}

}  // namespace

void Engine::Free::operator()(uint8_t* p) const { std::free(p); }

Engine::Engine(const ims::InitialMachineState& ims, const aes::Schedule& aes,
               const ReplayOptions& options, cat::CatHeader header, bool observe)
    : ims_(ims),
      aes_(aes),
      end_(aes.end()),
      events_(aes.Read()),
      options_(options),
      header_(std::move(header)),
      observe_(observe),
      ram_size_(ims.description().memory_bytes()),
      // calloc: the zero pages come from the OS on first touch, so memory the trace never
      // touches costs nothing.
      ram_(static_cast<uint8_t*>(std::calloc(ram_size_, 1))) {
  if (options.trace != nullptr) text_.emplace(*options.trace);
}

Engine::~Engine() = default;

absl::Status Engine::Load(const CoreAdapterFactory& make_core) {
  const uint64_t memory = ims_.description().memory_bytes();
  if (memory < (1 << 20) || memory > (uint64_t{1} << 30) || memory % 4096 != 0) {
    return InvalidReplayInput(absl::StrCat("memory size ", memory));
  }
  if (header_.memory_bytes != memory) {
    return InvalidReplayInput(absl::StrCat("the system's memory map has ", header_.memory_bytes,
                                           " bytes of memory, the IMS ", memory));
  }
  // The map comes from the IMS (its ROM, say): the same rules as a CAT header's.
  if (absl::Status s = cat::ValidateHeader(header_); !s.ok()) {
    return InvalidReplayInput(absl::StrCat("the system's memory map: ", s.message()));
  }
  if (ram_ == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate ", ram_size_, " bytes for the replayed memory"));
  }
  if (absl::Status s = LoadMemory(); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<CoreAdapter>> core = make_core(ims_, *this, observe_);
  if (!core.ok()) return core.status();
  core_ = std::move(*core);
  if (absl::Status s = core_->Load(ims_); !s.ok()) return s;
  // Only the ring to fill (an archive's checksums, a divergence's context): the core may log
  // the instructions itself and keep its fast paths.
  if (observe_ && options_.trace == nullptr && options_.sink == nullptr) {
    core_->LogInstructions(&ring_);
  }

  const aes::EndPoint& end = end_;
  end_known_ = end.branch_count() != 0 || end.cat_records() != 0;
  if (end_known_ && end.cpu_transactions() == 0 && !end.at_branch_count()) ended_ = true;
  last_record_bc_ = ims_.start().segment() ? ims_.start().last_record_branch_count()
                                           : ims_.start().branch_count();
  if (cutting()) {
    if (ims_.start().from_reset()) {
      return InvalidReplayInput("a trace from reset cannot be cut into segments yet");
    }
    segment_.ims = ims_;  // the first segment starts where the replay does
    const uint64_t words = (ram_size_ + 63) / 64;
    touched_.assign(words, 0);
    first_known_.assign(words, 0);
    first_.assign(ram_size_, 0);
  }
  return absl::OkStatus();
}

absl::Status Engine::LoadMemory() {
  for (const cat::AddressWindow& w : header_.magic) {
    reserved_.push_back({w.base, std::vector<uint8_t>(w.size)});
  }
  for (const cat::RomWindow& w : header_.roms) {
    if (w.size > kMaxRomBytes) {
      return InvalidReplayInput(absl::StrCat("a ROM of ", w.size, " bytes, more than ",
                                             kMaxRomBytes, " (the IMS's machine description)"));
    }
    roms_.push_back({w.base, std::vector<uint8_t>(w.size)});
  }
  for (const ims::MemoryExtent& e : ims_.memory()) {
    if (absl::Status s = PlaceExtent(e); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// An extent's bytes go to RAM, ROM or a reserved area (a segment's start holds the bytes last
// stored there), whichever holds each address (one extent may run from one into the other: a ROM
// inside a hole just below RAM); a byte in none is an error.
absl::Status Engine::PlaceExtent(const ims::MemoryExtent& e) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(e.data().data());
  const uint64_t size = e.data().size();
  if (size > UINT64_MAX - e.address()) {
    return InvalidReplayInput(absl::StrCat("memory extent at ", Hex(e.address()), " wraps"));
  }
  for (uint64_t done = 0; done < size;) {
    const uint64_t a = e.address() + done;
    uint64_t n = size - done;
    if (Rom* rom = RomArea(a, 1)) {
      n = std::min(n, rom->base + rom->bytes.size() - a);
      std::memcpy(&rom->bytes[a - rom->base], bytes + done, n);
    } else if (Reserved* w = ReservedArea(a, 1)) {
      // A segment's start: what was last stored there.
      n = std::min(n, w->base + w->bytes.size() - a);
      std::memcpy(&w->bytes[a - w->base], bytes + done, n);
    } else if (a < ram_size_) {
      n = std::min(n, ram_size_ - a);
      for (const Rom& rom : roms_) {
        if (rom.base > a) n = std::min(n, rom.base - a);
      }
      std::memcpy(&ram_[a], bytes + done, n);
    } else {
      return InvalidReplayInput(
          absl::StrCat("memory extent at ", Hex(e.address()), " outside main memory and ROM"));
    }
    done += n;
  }
  return absl::OkStatus();
}

Engine::Rom* Engine::RomArea(uint64_t a, uint64_t n) {
  const cat::RomWindow* w = header_.RomAt(a, n);
  return w == nullptr ? nullptr : &roms_[w - header_.roms.data()];
}

const Engine::Rom* Engine::RomArea(uint64_t a, uint64_t n) const {
  const cat::RomWindow* w = header_.RomAt(a, n);
  return w == nullptr ? nullptr : &roms_[w - header_.roms.data()];
}

Engine::Reserved* Engine::ReservedArea(uint64_t a, uint64_t n) {
  // The same rule as extraction: an access inside a named area, wholly.
  const cat::AddressWindow* w = header_.MagicAt(a, n);
  return w == nullptr ? nullptr : &reserved_[w - header_.magic.data()];
}

void Engine::Diverge(uint64_t cat_record, const std::string& what) {
  if (diverged()) return;
  divergence_record_ = cat_record;
  divergence_ = absl::StrCat("divergence at CAT record ", cat_record, ", instruction ",
                             core_->retired(), ", PC ", Hex(core_->pc()), " (branch count ",
                             core_->branch_count(), "): ", what);
  if (observe_) {
    absl::StrAppend(&divergence_, "\nlast instructions executed:");
    const uint64_t n = std::min<uint64_t>(ring_.count(), kContext);
    for (uint64_t i = ring_.count() - n; i < ring_.count(); ++i) {
      const ExecutedInstruction& e = ring_.at(i);
      const std::span<const uint8_t> bytes = e.Bytes();
      absl::StrAppendFormat(&divergence_, "\n  %10d  %016x  %s  %s", e.index, e.pc, BytesHex(bytes),
                            core_->Disassemble(e.pc, bytes));
    }
  }
  core_->RequestStop();
}

absl::Status Engine::DivergenceStatus() const {
  return DivergenceError(divergence_, divergence_record_);
}

void Engine::Fail(const absl::Status& status) {
  if (error_.ok()) error_ = status;
  if (core_) core_->RequestStop();
}

std::string Engine::ReportedAt(const aes::Interrupt& irq) {
  return irq.has_cat_record() ? absl::StrCat(" (reported at CAT record ", irq.cat_record(), ")")
                              : "";
}

std::string Engine::Key(uint64_t branch_count, uint64_t pc) const {
  return absl::StrCat("branch count ", branch_count, ", ", core_->key_pc_name(), " ", Hex(pc));
}

// ---- the run loop ----

absl::StatusOr<ReplaySummary> Engine::Run() {
  const auto start = std::chrono::steady_clock::now();
  const uint64_t end_bc = end_.branch_count();
  if (!end_known_) {
    // Without an end point nothing bounds the run (an idle loop waiting for an interrupt that
    // never comes would spin forever), so this is the first thing replay cannot match.
    Diverge("the schedule has no end point (an empty or damaged AES)");
  }
  const bool end_at_bc = end_known_ && end_.at_branch_count();
  while (!stopped() && !PastMaxInstructions()) {
    if (end_at_bc && core_->branch_count() >= end_bc &&
        cpu_transactions_ == end_.cpu_transactions()) {
      ended_ = true;  // where the next segment begins
      break;
    }
    const aes::Interrupt* irq = events_->interrupts().Peek();
    uint64_t target = end_known_ ? (end_at_bc ? end_bc : end_bc + 1) : ~uint64_t{0};
    if (irq != nullptr) target = std::min(target, irq->branch_count());
    // A cut is due: stop at every control transfer until one leaves a flow break.
    if (cut_armed_) target = std::min(target, core_->branch_count() + 1);
    const uint64_t bc = core_->branch_count();
    if (bc < target) {
      // Big slices: the core stops by itself when the branch count reaches the target.
      core_->set_stop_branch_count(target);
      core_->Run(Slice());
      if (cut_armed_ && !stopped() && core_->AtFlowBreak()) Cut();
    } else if (irq != nullptr && bc == irq->branch_count()) {
      const uint64_t before = events_->interrupts().taken();
      const aes::Interrupt scheduled = *irq;  // taking it consumes the queue's copy
      core_->Inject(scheduled);
      if (cut_armed_ && !stopped() && core_->AtFlowBreak()) Cut();
      if (!stopped() && events_->interrupts().taken() == before) {
        Diverge(absl::StrCat("the interrupt at ", Key(scheduled.branch_count(), scheduled.pc()),
                             ReportedAt(scheduled), " was not taken"));
      }
    } else if (irq != nullptr && bc > irq->branch_count()) {
      Diverge(absl::StrCat("the schedule has an interrupt at ", Key(irq->branch_count(), irq->pc()),
                           ReportedAt(*irq), ", which the core went past"));
    } else {
      Diverge(absl::StrCat("the core went past the end point's branch count ", end_bc, " with ",
                           end_.cat_records() - std::min(end_.cat_records(), records_),
                           " of the schedule's records not regenerated"));
    }
  }
  core_->set_stop_branch_count(~uint64_t{0});
  if (error_.ok() && !diverged()) FinishSchedule();
  if (error_.ok() && !diverged()) PastMaxInstructions();
  // Bytes of the schedule that stopped parsing end a list early: that, not what it looked like.
  if (error_.ok() && !events_->status().ok()) error_ = events_->status();
  if (absl::Status s = core_->Finish(); !s.ok() && error_.ok()) error_ = s;
  if (cutting() && error_.ok() && !diverged()) HandOverSegment(/*last=*/true);
  FlushInstructions();
  FlushTrace();
  // The trace may still be writing a buffer that goes with the engine: an empty write waits for
  // it (ByteOutput's contract).
  if (options_.trace != nullptr) {
    if (absl::Status s = options_.trace->Write({}); !s.ok() && error_.ok()) error_ = s;
  }
  if (!error_.ok()) return error_;
  if (diverged()) return DivergenceStatus();
  ReplaySummary s;
  s.instructions = Replayed();
  s.steps = core_->steps();
  s.records = records_;
  s.interrupts = events_->interrupts().taken();
  s.dma = events_->dma().taken();
  s.device_accesses = events_->device_io().taken();
  s.register_reads = events_->register_reads().taken();
  s.end_branch_count = core_->branch_count();
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return s;
}

uint64_t Engine::Slice() const {
  const uint64_t left = options_.max_instructions - std::min(Replayed(), options_.max_instructions);
  return left < kSlice ? left + 1 : kSlice;
}

bool Engine::PastMaxInstructions() {
  const uint64_t done = Replayed();
  if (done <= options_.max_instructions) return false;
  Diverge(absl::StrCat("the replay went past the ", options_.max_instructions,
                       " instructions the manifest records (", done, " retired, ",
                       end_.cat_records() - std::min(end_.cat_records(), records_),
                       " of the schedule's records not regenerated)"));
  return true;
}

// DMA after the last CPU transaction, then nothing of the schedule may be left over. The traced
// machine may have run on past its last CPU transaction (an idle loop waiting for the disk)
// before such a DMA: run the core on to the DMA's branch count. Any CPU transaction on the way
// is a divergence (it would be beyond the end of the schedule).
void Engine::FinishSchedule() {
  const uint64_t end_bc = end_.branch_count();
  while (!events_->dma().empty() && !diverged() && error_.ok()) {
    // A copy: the core runs on before it is applied, and may take the queue's next.
    const aes::DmaTransfer d = Take(events_->dma(), *segment_.events.mutable_dma());
    look_at_ = 0;  // the next transfer may be placed anywhere
    if (d.branch_count() > core_->branch_count() && d.branch_count() <= end_bc) {
      core_->set_stop_branch_count(d.branch_count());
      while (core_->branch_count() < d.branch_count() && !diverged() && error_.ok() &&
             !PastMaxInstructions()) {
        core_->Run(Slice());
      }
      core_->set_stop_branch_count(~uint64_t{0});
    }
    if (!diverged()) ApplyDma(d);
  }
  if (!diverged() && error_.ok()) CheckEverythingUsed();
}

void Engine::InterruptTaken(const aes::Interrupt& key) {
  const aes::Interrupt* next = events_->interrupts().Peek();
  if (next == nullptr) {
    Diverge(absl::StrCat("the core took an interrupt at ", Key(key.branch_count(), key.pc()),
                         " that the schedule does not have"));
    return;
  }
  const aes::Interrupt& irq = *next;
  if (key.branch_count() != irq.branch_count() || key.pc() != irq.pc() ||
      (irq.has_rep_remaining() && key.rep_remaining() != irq.rep_remaining())) {
    Diverge(absl::StrCat("expected the interrupt at ", Key(irq.branch_count(), irq.pc()),
                         ReportedAt(irq), ", the core took one at ",
                         Key(key.branch_count(), key.pc())));
    return;
  }
  if (options_.on_interrupt_key) {
    if (!noted_key_) {
      Fail(absl::InternalError(absl::StrCat("the interrupt at ", Key(irq.branch_count(), irq.pc()),
                                            " was taken without a key from the core adapter")));
      return;
    }
    options_.on_interrupt_key(*noted_key_);
    noted_key_.reset();
  }
  Take(events_->interrupts(), *segment_.events.mutable_interrupts());
}

const aes::RegisterRead* Engine::TakeRegisterRead(aes::RegisterRead::Register reg,
                                                  absl::string_view name, absl::string_view hint) {
  const aes::RegisterRead* next = events_->register_reads().Peek();
  if (next == nullptr || next->register_() != reg) {
    Diverge(absl::StrCat("the core read ", name, ", the schedule's next register read is ",
                         next != nullptr ? Describe(*next) : "none (all used)", hint));
    return nullptr;
  }
  return &Take(events_->register_reads(), *segment_.events.mutable_register_reads());
}

// ---- the instruction trace ----

void Engine::TraceInstruction(uint64_t index, uint64_t pc, std::span<const uint8_t> bytes) {
  if (absl::Status s = text_->Instruction(index, pc, bytes, core_->Disassemble(pc, bytes));
      !s.ok()) {
    Fail(s);
  }
}

// The instructions started since the ring last filled, for on_instructions.
void Engine::FlushInstructions() {
  if (!ring_.Pending().empty() && options_.on_instructions) {
    options_.on_instructions(ring_.Pending());
  }
}

void Engine::TraceEvent(absl::string_view text) {
  if (!text_) return;
  if (absl::Status s = text_->Event(text); !s.ok()) Fail(s);
}

void Engine::FlushTrace() {
  if (!text_) return;
  if (absl::Status s = text_->Flush(); !s.ok()) Fail(s);
}

// ---- the bus ----

void Engine::LookAtSchedule(const cat::BusRecord& r) {
  // DMA placed after this many CPU transactions happens before this one.
  for (const aes::DmaTransfer* d = events_->dma().Peek();
       d != nullptr && d->after_cpu_transactions() <= cpu_transactions_ && !diverged();
       d = events_->dma().Peek()) {
    ApplyDma(Take(events_->dma(), *segment_.events.mutable_dma()));
  }
  if (end_known_ && cpu_transactions_ >= end_.cpu_transactions()) {
    Diverge(absl::StrCat("a ", cat::KindName(r.kind), " of ", r.data.size(), " bytes at ",
                         Hex(r.address), " after the end of the schedule"));
  }
  const aes::DmaTransfer* next = events_->dma().Peek();
  look_at_ = next != nullptr ? next->after_cpu_transactions() : ~uint64_t{0};
  if (end_known_) look_at_ = std::min<uint64_t>(look_at_, end_.cpu_transactions());
}

void Engine::EndCpuTransaction(const cat::BusRecord& r) {
  Emit(r);
  ++cpu_transactions_;
  if (end_known_ && cpu_transactions_ == end_.cpu_transactions() && !end_.at_branch_count()) {
    ended_ = true;
    core_->RequestStop();
  } else if (cutting() && !cut_armed_ && CutDue()) {
    cut_armed_ = true;  // at the first flow break from the end of this step on
    core_->RequestStop();
  }
}

// ---- segments ----

void Engine::Touch(uint64_t a, uint64_t n, bool read) {
  // Most accesses lie in one word of the bitmap, touched before: one test of all their bits.
  if (n < 64 && a % 64 + n <= 64) {
    const uint64_t word = a / 64;
    const uint64_t fresh = (((uint64_t{1} << n) - 1) << (a % 64)) & ~touched_[word];
    if (fresh == 0) return;
    touched_[word] |= fresh;
    if (read) {
      first_known_[word] |= fresh;
      for (uint64_t m = fresh; m != 0; m &= m - 1) {
        const uint64_t b = word * 64 + static_cast<uint64_t>(std::countr_zero(m));
        first_[b] = ram_[b];
      }
    }
    return;
  }
  for (uint64_t b = a; b < a + n; ++b) {
    const uint64_t bit = uint64_t{1} << (b % 64);
    if (touched_[b / 64] & bit) continue;
    touched_[b / 64] |= bit;
    if (read) {
      first_known_[b / 64] |= bit;
      first_[b] = ram_[b];
    }
  }
}

// Whether `count` has reached the next of `cuts` (ascending), the one at `next`.
static bool Reached(const std::vector<uint64_t>& cuts, size_t next, uint64_t count) {
  return next < cuts.size() && count >= cuts[next];
}

bool Engine::CutDue() const {
  return Reached(options_.cut_at_instructions, next_cut_, core_->retired()) ||
         Reached(options_.cut_at_cpu_transactions, next_transaction_cut_, cpu_transactions_);
}

void Engine::Cut() {
  cut_armed_ = false;
  while (Reached(options_.cut_at_instructions, next_cut_, core_->retired())) ++next_cut_;
  while (Reached(options_.cut_at_cpu_transactions, next_transaction_cut_, cpu_transactions_)) {
    ++next_transaction_cut_;
  }
  HandOverSegment(/*last=*/false);
  if (stopped()) return;
  segment_ = SegmentStart();
  ims::InitialMachineState& s = segment_.ims;
  s.set_format_version(ims_.format_version());
  *s.mutable_description() = ims_.description();
  if (absl::Status st = core_->SaveState(s); !st.ok()) {
    Fail(st);
    return;
  }
  ims::StartPoint& start = *s.mutable_start();
  start.set_branch_count(core_->branch_count());
  start.set_cat_record(CurrentRecord());
  start.set_segment(true);
  start.set_instructions(core_->retired());
  start.set_last_record_branch_count(last_record_bc_);
  for (const Reserved& w : reserved_) {
    ims::MemoryExtent& e = *s.add_memory();
    e.set_address(w.base);
    e.set_data(w.bytes.data(), w.bytes.size());
  }
  segment_.transactions = cpu_transactions_;
  segment_.records = records_;
  std::fill(touched_.begin(), touched_.end(), 0);
  std::fill(first_known_.begin(), first_known_.end(), 0);
  rom_first_.clear();
}

std::vector<ims::MemoryExtent> Engine::SegmentImage() const {
  std::vector<ims::MemoryExtent> extents;
  // Bytes in ascending address order, each run of neighbours one extent.
  const auto add = [&extents](uint64_t address, uint8_t value) {
    if (extents.empty() || extents.back().address() + extents.back().data().size() != address) {
      extents.emplace_back().set_address(address);
    }
    extents.back().mutable_data()->push_back(static_cast<char>(value));
  };
  for (uint64_t w = 0; w < first_known_.size(); ++w) {
    for (uint64_t bits = first_known_[w]; bits != 0; bits &= bits - 1) {
      const uint64_t b = w * 64 + std::countr_zero(bits);
      add(b, first_[b]);
    }
  }
  for (const auto& [address, value] : rom_first_) add(address, value);
  return extents;
}

void Engine::HandOverSegment(bool last) {
  Segment seg;
  seg.ims = std::move(segment_.ims);
  if (seg.ims.start().segment()) {
    std::vector<ims::MemoryExtent> image = SegmentImage();
    for (ims::MemoryExtent& e : image) *seg.ims.add_memory() = std::move(e);
    std::sort(seg.ims.mutable_memory()->begin(), seg.ims.mutable_memory()->end(),
              [](const ims::MemoryExtent& a, const ims::MemoryExtent& b) {
                return a.address() < b.address();
              });
  }
  aes::EventSchedule& a = seg.aes;
  a = std::move(segment_.events);
  a.set_format_version(aes_.format_version());
  a.set_machine(aes_.machine());
  if (last) {
    while (!events_->dma().empty()) *a.add_dma() = events_->dma().Pop();
  }
  for (aes::DmaTransfer& d : *a.mutable_dma()) {
    d.set_after_cpu_transactions(d.after_cpu_transactions() - segment_.transactions);
  }
  aes::EndPoint& end = *a.mutable_end();
  if (last) {
    end.set_branch_count(end_.branch_count());
    end.set_cat_records(end_.cat_records() - segment_.records);
    end.set_cpu_transactions(end_.cpu_transactions() - segment_.transactions);
    // A trace that itself ends at a cut (a segment archive, replayed with --jobs) ends its last
    // piece there too: at the branch count, past its last CPU transaction.
    end.set_at_branch_count(end_.at_branch_count());
  } else {
    end.set_branch_count(core_->branch_count());
    end.set_cat_records(records_ - segment_.records);
    end.set_cpu_transactions(cpu_transactions_ - segment_.transactions);
    end.set_at_branch_count(true);
  }
  if (absl::Status s = options_.on_segment(std::move(seg)); !s.ok()) Fail(s);
}

void Engine::Emit(const cat::BusRecord& r) {
  if (diverged()) return;
  ++records_;
  last_record_bc_ = r.branch_count;
  if (options_.regenerated != nullptr && error_.ok()) {
    if (absl::Status s = options_.regenerated->Write(r); !s.ok()) Fail(s);
  }
  if (options_.on_record && error_.ok()) {
    if (absl::Status s = options_.on_record(r); !s.ok()) Fail(s);
  }
  if (options_.on_record_retired) options_.on_record_retired(r, core_->retired());
}

void Engine::ApplyDma(const aes::DmaTransfer& d) {
  const uint64_t n = d.data().size();
  if (!InRam(d.address(), n)) {
    Diverge(RecordOr(d.cat_record()),
            absl::StrCat("a DMA transfer at ", Hex(d.address()), " outside main memory"));
    return;
  }
  // The record's side band: recorded, or (older AES files) the latest it can have been.
  const uint64_t bc = d.branch_count() != 0 ? d.branch_count() : core_->branch_count();
  if (bc > core_->branch_count() || bc < last_record_bc_) {
    Diverge(RecordOr(d.cat_record()),
            absl::StrCat("the DMA transfer at ", Hex(d.address()), " has branch count ", bc,
                         ", but at its bus position the core is between branch counts ",
                         last_record_bc_, " and ", core_->branch_count()));
    return;
  }
  uint8_t* mem = &ram_[d.address()];
  const auto* bytes = reinterpret_cast<const uint8_t*>(d.data().data());
  if (cutting()) Touch(d.address(), n, /*read=*/!d.to_memory());
  if (d.to_memory()) {
    std::memcpy(mem, bytes, n);
    core_->MemoryWritten(d.address(), n);
  } else if (std::memcmp(mem, bytes, n) != 0) {
    Diverge(
        RecordOr(d.cat_record()),
        absl::StrCat("the device's DMA read at ", Hex(d.address()), " got ", BytesHex(d.data()),
                     ", the replayed memory holds ", BytesHex(std::span<const uint8_t>(mem, n))));
    return;
  }
  cat::BusRecord r;
  r.kind = d.to_memory() ? cat::RecordKind::kDmaWrite : cat::RecordKind::kDmaRead;
  r.master = static_cast<uint8_t>(d.device());
  r.address = d.address();
  r.branch_count = bc;
  r.data = {bytes, n};
  if (text_) {
    TraceEvent(absl::StrCat("DMA ", d.to_memory() ? "write" : "read", " of ", n, " bytes at ",
                            Hex(d.address()), " by device ", d.device()));
  }
  Emit(r);
}

void Engine::Read(const cat::BusRecord& r, std::span<uint8_t> data) {
  BeginCpuTransaction(r);
  const uint64_t a = r.address;
  const bool memory = r.kind != cat::RecordKind::kInterruptAck && !IsPort(r.kind);
  if (memory && InRam(a, data.size())) [[likely]] {
    if (cutting()) Touch(a, data.size(), /*read=*/true);
    CopyData(&ram_[a], data.size(), data.data());
    EndCpuTransaction(r);
    return;
  }
  std::fill(data.begin(), data.end(), 0);  // what a divergence leaves
  if (r.kind == cat::RecordKind::kInterruptAck) {
    // The vector the interrupt controller put on the bus: the scheduled interrupt's.
    if (const aes::Interrupt* irq = events_->interrupts().Peek(); irq != nullptr && !data.empty()) {
      data[0] = static_cast<uint8_t>(irq->vector());
    } else {
      Diverge("an interrupt acknowledge cycle with no interrupt scheduled");
    }
  } else if (IsPort(r.kind)) {
    DeviceRead(r, data);
  } else if (const Rom* rom = RomArea(a, data.size())) {
    std::memcpy(data.data(), &rom->bytes[a - rom->base], data.size());
    if (cutting()) {
      for (uint64_t i = 0; i < data.size(); ++i) rom_first_.try_emplace(a + i, data[i]);
    }
  } else if (Reserved* w = ReservedArea(a, data.size())) {
    std::memcpy(data.data(), &w->bytes[a - w->base], data.size());
  } else if (r.kind != cat::RecordKind::kUncachedRead) {
    Diverge(absl::StrCat("a ", cat::KindName(r.kind), " at ", Hex(a), " outside main memory"));
  } else {
    DeviceRead(r, data);
  }
  EndCpuTransaction(r);
}

void Engine::Write(const cat::BusRecord& r) {
  BeginCpuTransaction(r);
  const uint64_t a = r.address;
  if (IsPort(r.kind)) {
    DeviceWrite(r);
  } else if (InRam(a, r.data.size())) {
    if (cutting()) Touch(a, r.data.size(), /*read=*/false);
    CopyData(r.data.data(), r.data.size(), &ram_[a]);
  } else if (RomArea(a, r.data.size()) != nullptr) {
    // Lost, as on the traced machine: ROM keeps its bytes.
  } else if (Reserved* w = ReservedArea(a, r.data.size())) {
    std::memcpy(&w->bytes[a - w->base], r.data.data(), r.data.size());
  } else if (r.kind != cat::RecordKind::kUncachedWrite) {
    Diverge(absl::StrCat("a ", cat::KindName(r.kind), " at ", Hex(a), " outside main memory"));
  } else {
    DeviceWrite(r);
  }
  EndCpuTransaction(r);
}

bool Engine::Peek(uint64_t address, std::span<uint8_t> data) const {
  if (InRam(address, data.size())) {
    std::memcpy(data.data(), &ram_[address], data.size());
  } else if (const Rom* rom = RomArea(address, data.size())) {
    std::memcpy(data.data(), &rom->bytes[address - rom->base], data.size());
  } else {
    return false;
  }
  return true;
}

void Engine::DeviceRead(const cat::BusRecord& r, std::span<uint8_t> data) {
  const bool port = IsPort(r.kind);
  // (Words for a divergence only: device accesses are many, divergences one.)
  const auto actual = [&] {
    return absl::StrCat("a read of ", data.size(), " bytes at ", port ? "port " : "",
                        Hex(r.address));
  };
  const aes::DeviceAccess* next = events_->device_io().Peek();
  if (next == nullptr) {
    Diverge(
        absl::StrCat("the core made ", actual(), ", but the schedule has no device access left"));
    return;
  }
  const aes::DeviceAccess& e = *next;
  if (e.write() || e.port() != port || e.address() != r.address || e.data().size() != data.size()) {
    Diverge(absl::StrCat("expected ", Describe(e), ", the core made ", actual()));
    return;
  }
  std::memcpy(data.data(), e.data().data(), data.size());
  const aes::DeviceAccess& used = Take(events_->device_io(), *segment_.events.mutable_device_io());
  if (text_) {
    TraceEvent(absl::StrCat("device read at ", port ? "port " : "", Hex(r.address), ": ",
                            BytesHex(used.data())));
  }
}

void Engine::DeviceWrite(const cat::BusRecord& r) {
  const bool port = IsPort(r.kind);
  const auto actual = [&] {
    return absl::StrCat("a write of ", r.data.size(), " bytes at ", port ? "port " : "",
                        Hex(r.address), " data=", BytesHex(r.data));
  };
  const aes::DeviceAccess* next = events_->device_io().Peek();
  if (next == nullptr) {
    Diverge(
        absl::StrCat("the core made ", actual(), ", but the schedule has no device access left"));
    return;
  }
  const aes::DeviceAccess& e = *next;
  if (!e.write() || e.port() != port || e.address() != r.address ||
      e.data().size() != r.data.size() ||
      std::memcmp(e.data().data(), r.data.data(), r.data.size()) != 0) {
    Diverge(absl::StrCat("expected ", Describe(e), ", the core made ", actual()));
    return;
  }
  Take(events_->device_io(), *segment_.events.mutable_device_io());
}

void Engine::CheckEverythingUsed() {
  if (records_ != end_.cat_records()) {
    Diverge(absl::StrCat("the schedule has ", end_.cat_records(), " records, replay regenerated ",
                         records_));
  } else if (const aes::Interrupt* next = events_->interrupts().Peek()) {
    const aes::Interrupt& irq = *next;
    Diverge(RecordOr(irq.cat_record()),
            absl::StrCat("the interrupt at ", Key(irq.branch_count(), irq.pc()), ReportedAt(irq),
                         " was never taken"));
  } else if (const aes::DeviceAccess* io = events_->device_io().Peek()) {
    const aes::DeviceAccess& e = *io;
    Diverge(RecordOr(e.cat_record()), absl::StrCat("the core never made ", Describe(e)));
  } else if (const aes::RegisterRead* reg = events_->register_reads().Peek()) {
    const aes::RegisterRead& e = *reg;
    Diverge(RecordOr(e.cat_record()), absl::StrCat("the core never read ", Describe(e)));
  }
}

}  // namespace citcat::replay
