// Replay of a traced R4400 system (docs/replay.md): the R4400 core over a bus made of the
// first-touch memory image, the reserved CITCAT area and the AES's queues.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "machine/r4400/system.h"
#include "replay/replay.h"
#include "simcore/mips/cpu.h"
#include "simcore/mips/disasm.h"
#include "traces/mips_recorder.h"

namespace citcat::replay {
namespace {

// The traced system's fixed address map (docs/machines/r4400-system.md).
using machine::kClockBase;
using machine::kDeviceWindow;
using machine::kDiskBase;
using machine::kMagicBase;
using machine::kUartBase;

constexpr uint32_t kHardwareIp = 0xFC00;  // Cause.IP7..IP2: device lines replay does not model
constexpr uint64_t kSlice = uint64_t{1} << 24;  // steps per core call (the core stops itself)
constexpr int kRingSize = 16;
constexpr char kRecordPayload[] = "citcat.replay/divergence-record";

std::string Hex(uint64_t v) { return absl::StrCat("0x", absl::Hex(v)); }

std::string BytesHex(absl::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * bytes.size());
  for (unsigned char b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}
std::string BytesHex(std::span<const uint8_t> bytes) {
  return BytesHex(absl::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

std::string Describe(const aes::DeviceAccess& e) {
  return absl::StrCat(e.write() ? "a write of " : "a read of ", e.data().size(), " bytes at ",
                      Hex(e.address()), " data=", BytesHex(e.data()), " (CAT record ",
                      e.cat_record(), ")");
}

std::string Describe(const aes::RegisterRead& e) {
  return absl::StrCat(e.register_() == aes::RegisterRead::REGISTER_MIPS_COUNT ? "Count" : "Cause",
                      " = ", Hex(e.value()), " (CAT record ", e.cat_record(), ")");
}

const char* ExceptionName(mips::ExcCode code) {
  switch (code) {
    case mips::kExcInt:
      return "interrupt";
    case mips::kExcMod:
      return "TLB modified";
    case mips::kExcTlbl:
      return "TLB load";
    case mips::kExcTlbs:
      return "TLB store";
    case mips::kExcAdel:
      return "address error load";
    case mips::kExcAdes:
      return "address error store";
    case mips::kExcSys:
      return "syscall";
    case mips::kExcBp:
      return "breakpoint";
    case mips::kExcRi:
      return "reserved instruction";
    case mips::kExcCpu:
      return "coprocessor unusable";
    case mips::kExcOv:
      return "overflow";
    case mips::kExcTr:
      return "trap";
    case mips::kExcFpe:
      return "floating point";
    case mips::kExcWatch:
      return "watch";
    default:
      return "exception";
  }
}

absl::Status Invalid(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("the IMS/AES cannot be replayed: ", what));
}

class R4400Replayer final : public mips::Bus,
                            public mips::Cp0Hooks,
                            public mips::ExceptionObserver,
                            public mips::InstructionObserver {
 public:
  // `observe`: look at every instruction (text trace, or the divergence context).
  R4400Replayer(const ims::InitialMachineState& ims, const aes::EventSchedule& aes,
                const ReplayOptions& options, bool observe, const mips::CpuConfig& config)
      : ims_(ims),
        aes_(aes),
        options_(options),
        observe_(observe),
        header_(R4400Header(ims)),
        ram_size_(ims.description().memory_bytes()),
        // calloc: the zero pages come from the OS on first touch, so memory the trace never
        // touches costs nothing.
        ram_(static_cast<uint8_t*>(std::calloc(ram_size_, 1))),
        cpu_(*this, config) {}

  static absl::StatusOr<mips::CpuConfig> Config(const ims::InitialMachineState& ims);
  absl::Status Load();
  absl::StatusOr<ReplaySummary> Run();
  bool diverged() const { return !divergence_.empty(); }

  // ---- mips::Bus ----
  void Read(const cat::BusRecord& r, std::span<uint8_t> data) override;
  void Write(const cat::BusRecord& r) override;
  bool Peek(uint64_t address, std::span<uint8_t> data) const override {
    if (!InRam(address, data.size())) return false;
    std::memcpy(data.data(), &ram_[address], data.size());
    return true;
  }

  // ---- mips::Cp0Hooks ----
  uint32_t ReadCount(mips::Cpu&) override;
  void WriteCount(mips::Cpu&, uint32_t) override {}    // Count follows the outside world
  void WriteCompare(mips::Cpu&, uint32_t) override {}  // the timer comes from the AES
  uint32_t ReadCause(mips::Cpu&, uint32_t cause) override;

  // ---- mips::ExceptionObserver, mips::InstructionObserver ----
  void OnException(mips::Cpu& cpu, mips::ExcCode code, uint64_t faulting_pc) override;
  void OnInstruction(mips::Cpu& cpu, uint64_t pc, uint32_t word) override;

 private:
  struct Reserved {
    cat::AddressWindow area;
    std::vector<uint8_t> bytes;  // the last value stored to each byte
  };
  struct Executed {
    uint64_t index, pc;
    uint32_t word;
  };

  bool Stopped() const { return diverged() || ended_ || !error_.ok(); }
  bool InRam(uint64_t a, uint64_t n) const { return a < ram_size_ && n <= ram_size_ - a; }
  Reserved* ReservedArea(uint64_t a, uint64_t n);
  uint64_t CurrentRecord() const { return ims_.start().cat_record() + records_; }
  void Diverge(uint64_t cat_record, const std::string& what);
  absl::Status DivergenceStatus() const {
    absl::Status s = absl::AbortedError(divergence_);
    s.SetPayload(kRecordPayload, absl::Cord(absl::StrCat(divergence_record_)));
    return s;
  }
  void RunCore(uint64_t steps) {
    if (observe_) {
      cpu_.Run(steps, *this);
    } else {
      cpu_.Run(steps);
    }
  }
  void ApproachAndInject(const aes::Interrupt& irq);
  bool ExpectDelaySlot(const aes::Interrupt& irq) const;
  void BeginCpuTransaction(const cat::BusRecord& r);
  void EndCpuTransaction(const cat::BusRecord& r);
  void ApplyDma(const aes::DmaTransfer& d);
  void Emit(const cat::BusRecord& r);
  void DeviceRead(const cat::BusRecord& r, std::span<uint8_t> data);
  void DeviceWrite(const cat::BusRecord& r);
  void CheckEverythingUsed();
  std::string EchoRaceHint() const;
  void TraceEvent(const std::string& text);
  void FlushTrace();

  const ims::InitialMachineState& ims_;
  const aes::EventSchedule& aes_;
  const ReplayOptions& options_;
  const bool observe_;
  const cat::CatHeader header_;
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  const uint64_t ram_size_;
  std::unique_ptr<uint8_t[], Free> ram_;
  std::vector<Reserved> reserved_;
  mips::Cpu cpu_;

  bool end_known_ = false;
  bool ended_ = false;
  std::string divergence_;
  uint64_t divergence_record_ = 0;
  absl::Status error_;
  uint64_t cpu_transactions_ = 0;
  uint64_t records_ = 0;
  uint64_t last_record_bc_ = 0;
  int next_irq_ = 0, next_dma_ = 0, next_io_ = 0, next_reg_ = 0;
  bool injecting_ = false;

  std::array<Executed, kRingSize> ring_{};
  uint64_t ring_count_ = 0;
  std::unique_ptr<mips::Disassembler> disasm_;
  std::string trace_buffer_;
  std::unique_ptr<traces::MipsRecorder> recorder_;  // feeds options_.sink
};

absl::StatusOr<mips::CpuConfig> R4400Replayer::Config(const ims::InitialMachineState& ims) {
  if (!ims.has_mips() || ims.description().machine() != ims::MACHINE_R4400) {
    return Invalid("the IMS is not an R4400 state");
  }
  const ims::MachineDescription& d = ims.description();
  if (d.memory_bytes() < (1 << 20) || d.memory_bytes() > (uint64_t{1} << 30) ||
      d.memory_bytes() % 4096 != 0) {
    return Invalid(absl::StrCat("memory size ", d.memory_bytes()));
  }
  const ims::MipsState& s = ims.mips();
  if (s.gpr_size() != 32 || s.fgr_size() != 32 || s.tlb_size() != 48) {
    return Invalid("the R4400 state needs 32 GPRs, 32 FGRs and 48 TLB entries");
  }
  mips::CpuConfig c;
  c.big_endian = d.byte_order() == ims::BYTE_ORDER_BIG;
  if (s.cp0().prid() != 0) c.prid = s.cp0().prid();
  bool icache = false, dcache = false;
  for (const ims::Cache& cache : d.caches()) {
    bool ok = cache.level() == 1 && (cache.line_bytes() == 16 || cache.line_bytes() == 32) &&
              cache.size_bytes() >= 4096 && cache.size_bytes() <= 65536 &&
              std::has_single_bit(cache.size_bytes()) && cache.ways() <= 1 &&
              !cache.write_through();
    if (!ok) return Invalid("a cache the R4400 core does not model");
    if (cache.type() == ims::Cache::TYPE_INSTRUCTION) {
      c.icache_bytes = cache.size_bytes();
      c.icache_line = cache.line_bytes();
      icache = true;
    } else if (cache.type() == ims::Cache::TYPE_DATA) {
      c.dcache_bytes = cache.size_bytes();
      c.dcache_line = cache.line_bytes();
      dcache = true;
    } else {
      return Invalid("a unified primary cache on an R4400");
    }
  }
  if (!icache || !dcache) return Invalid("the machine description lacks a primary cache");
  if (absl::Status s = mips::ValidateCpuConfig(c); !s.ok()) return Invalid(s.message());
  for (const ims::MemoryExtent& e : ims.memory()) {
    if (e.address() >= d.memory_bytes() || e.data().size() > d.memory_bytes() - e.address()) {
      return Invalid(absl::StrCat("memory extent at ", Hex(e.address()), " outside main memory"));
    }
  }
  return c;
}

absl::Status R4400Replayer::Load() {
  if (ram_ == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate ", ram_size_, " bytes for the replayed memory"));
  }
  for (const cat::AddressWindow& w : header_.magic)
    reserved_.push_back({w, std::vector<uint8_t>(w.size)});
  for (const ims::MemoryExtent& e : ims_.memory()) {
    std::memcpy(&ram_[e.address()], e.data().data(), e.data().size());
  }
  const ims::MipsState& s = ims_.mips();
  for (int i = 1; i < 32; ++i) cpu_.set_gpr(i, s.gpr(i));
  cpu_.set_hi(s.hi());
  cpu_.set_lo(s.lo());
  for (int i = 0; i < 32; ++i) cpu_.fpu().set_raw_fgr(i, s.fgr(i));
  cpu_.fpu().set_fcsr(s.fcr31());
  for (int i = 0; i < 48; ++i) {
    const ims::MipsTlbEntry& e = s.tlb(i);
    cpu_.tlb().Write(i, static_cast<uint32_t>(e.page_mask()), e.entry_hi(), e.entry_lo0(),
                     e.entry_lo1());
  }
  const ims::MipsCp0& c = s.cp0();
  // Every CP0 register as the driver read it, read-only fields included; Random from here on.
  mips::Cpu::Cp0State cp0 = cpu_.SaveCp0();
  cp0.index = c.index();
  cp0.random = c.random();
  cp0.page_mask = c.page_mask();
  cp0.wired = c.wired();
  cp0.count = c.count();
  cp0.compare = c.compare();
  cp0.status = c.status();
  // The dumped IP7..IP2 follow device lines; replay raises them only from the AES.
  cp0.cause = c.cause() & ~kHardwareIp;
  if (c.prid() != 0) cp0.prid = c.prid();
  cp0.config = c.config();
  cp0.lladdr = c.ll_addr();
  cp0.watch_lo = c.watch_lo();
  cp0.watch_hi = c.watch_hi();
  cp0.ecc = c.ecc();
  cp0.cache_err = c.cache_err();
  cp0.tag_lo = c.tag_lo();
  cp0.tag_hi = c.tag_hi();
  cp0.entry_lo0 = c.entry_lo0();
  cp0.entry_lo1 = c.entry_lo1();
  cp0.context = c.context();
  cp0.bad_vaddr = c.bad_vaddr();
  cp0.entry_hi = c.entry_hi();
  cp0.epc = c.epc();
  cp0.xcontext = c.xcontext();
  cp0.error_epc = c.error_epc();
  cp0.ll_bit = false;  // the driver runs with no LL/SC sequence open
  cpu_.RestoreCp0(cp0);
  cpu_.FlushTranslations();
  cpu_.set_branch_count(ims_.start().branch_count());
  cpu_.SetPc(s.pc());
  cpu_.set_cp0_hooks(this);
  cpu_.set_exception_observer(this);

  const aes::EndPoint& end = aes_.end();
  end_known_ = end.branch_count() != 0 || end.cat_records() != 0;
  if (end_known_ && end.cpu_transactions() == 0) ended_ = true;
  last_record_bc_ = ims_.start().branch_count();
  if (options_.trace != nullptr) disasm_ = std::make_unique<mips::Disassembler>();
  if (observe_ && !disasm_) disasm_ = std::make_unique<mips::Disassembler>();
  if (options_.sink != nullptr) recorder_ = std::make_unique<traces::MipsRecorder>(*options_.sink);
  return absl::OkStatus();
}

R4400Replayer::Reserved* R4400Replayer::ReservedArea(uint64_t a, uint64_t n) {
  // The same rule as extraction: an access inside a named area, wholly.
  for (Reserved& r : reserved_) {
    if (a >= r.area.base && a - r.area.base < r.area.size) {
      return n <= r.area.size - (a - r.area.base) ? &r : nullptr;
    }
  }
  return nullptr;
}

void R4400Replayer::Diverge(uint64_t cat_record, const std::string& what) {
  if (diverged()) return;
  divergence_record_ = cat_record;
  divergence_ =
      absl::StrCat("divergence at CAT record ", cat_record, ", instruction ", cpu_.retired(),
                   ", PC ", Hex(cpu_.pc()), " (branch count ", cpu_.branch_count(), "): ", what);
  if (observe_) {
    absl::StrAppend(&divergence_, "\nlast instructions executed:");
    const uint64_t n = std::min<uint64_t>(ring_count_, kRingSize);
    for (uint64_t i = ring_count_ - n; i < ring_count_; ++i) {
      const Executed& e = ring_[i % kRingSize];
      absl::StrAppendFormat(&divergence_, "\n  %10d  %016x  %08x  %s", e.index, e.pc, e.word,
                            disasm_->Text(e.pc, e.word));
    }
  }
  cpu_.RequestStop();
}

// ---- the run loop ----

absl::StatusOr<ReplaySummary> R4400Replayer::Run() {
  const auto start = std::chrono::steady_clock::now();
  const uint64_t end_bc = aes_.end().branch_count();
  if (!end_known_) {
    // Without an end point nothing bounds the run (an idle loop waiting for an interrupt that
    // never comes would spin forever), so this is the first thing replay cannot match.
    Diverge(CurrentRecord(), "the schedule has no end point (an empty or damaged AES)");
  }
  while (!Stopped()) {
    const aes::Interrupt* irq =
        next_irq_ < aes_.interrupts_size() ? &aes_.interrupts(next_irq_) : nullptr;
    uint64_t target = end_known_ ? end_bc + 1 : ~uint64_t{0};
    if (irq != nullptr) target = std::min(target, irq->branch_count());
    const uint64_t bc = cpu_.branch_count();
    if (bc < target) {
      // Big slices: the core stops by itself when the branch count reaches the target.
      cpu_.set_stop_branch_count(target);
      RunCore(kSlice);
    } else if (irq != nullptr && bc == irq->branch_count()) {
      ApproachAndInject(*irq);
    } else if (irq != nullptr && bc > irq->branch_count()) {
      Diverge(CurrentRecord(),
              absl::StrCat("the schedule has an interrupt at branch count ", irq->branch_count(),
                           ", EPC ", Hex(irq->pc()), " (reported at CAT record ", irq->cat_record(),
                           "), which the core went past"));
    } else {
      Diverge(CurrentRecord(),
              absl::StrCat("the core went past the end point's branch count ", end_bc, " with ",
                           aes_.end().cat_records() - std::min(aes_.end().cat_records(), records_),
                           " of the schedule's records not regenerated"));
    }
  }
  cpu_.set_stop_branch_count(~uint64_t{0});
  if (!error_.ok()) return error_;
  if (!diverged()) {
    // DMA after the last CPU transaction, then nothing of the schedule may be left over. The
    // traced machine may have run on past its last CPU transaction (an idle loop waiting for the
    // disk) before such a DMA: run the core on to the DMA's branch count. Any CPU transaction
    // on the way is a divergence (it would be beyond the end of the schedule).
    while (next_dma_ < aes_.dma_size() && !diverged() && error_.ok()) {
      const aes::DmaTransfer& d = aes_.dma(next_dma_++);
      if (d.branch_count() > cpu_.branch_count() && d.branch_count() <= end_bc) {
        cpu_.set_stop_branch_count(d.branch_count());
        while (cpu_.branch_count() < d.branch_count() && !diverged() && error_.ok()) {
          RunCore(kSlice);
        }
        cpu_.set_stop_branch_count(~uint64_t{0});
      }
      if (!diverged()) ApplyDma(d);
    }
    if (!diverged() && error_.ok()) CheckEverythingUsed();
  }
  if (recorder_) {
    recorder_->Flush(cpu_);
    if (!recorder_->status().ok() && error_.ok()) error_ = recorder_->status();
  }
  FlushTrace();
  if (!error_.ok()) return error_;
  if (diverged()) return DivergenceStatus();
  ReplaySummary s;
  s.instructions = cpu_.retired();
  s.steps = cpu_.steps();
  s.records = records_;
  s.interrupts = next_irq_;
  s.dma = next_dma_;
  s.device_accesses = next_io_;
  s.register_reads = next_reg_;
  s.end_branch_count = cpu_.branch_count();
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return s;
}

// The interrupt report does not say whether the interrupted instruction was a delay slot (the
// boundary before a branch and the one before its slot share the key (branch count, EPC)); the
// handler's Cause echo does, in Cause.BD. It is the last Cause echo before the report.
bool R4400Replayer::ExpectDelaySlot(const aes::Interrupt& irq) const {
  bool bd = false;
  for (int i = next_reg_; i < aes_.register_reads_size(); ++i) {
    const aes::RegisterRead& r = aes_.register_reads(i);
    if (r.cat_record() > irq.cat_record()) break;
    if (r.register_() == aes::RegisterRead::REGISTER_MIPS_CAUSE) bd = (r.value() >> 31) & 1;
  }
  return bd;
}

void R4400Replayer::ApproachAndInject(const aes::Interrupt& irq) {
  const bool bd = ExpectDelaySlot(irq);
  auto at_boundary = [&] {
    return bd ? cpu_.in_delay_slot() && cpu_.pc() - 4 == irq.pc()
              : !cpu_.in_delay_slot() && cpu_.pc() == irq.pc();
  };
  // Between two branch-count increments execution is a straight line: step through it.
  const int before = next_irq_;
  while (!Stopped() && next_irq_ == before && cpu_.branch_count() == irq.branch_count() &&
         !at_boundary()) {
    RunCore(1);
  }
  if (Stopped() || next_irq_ != before) return;  // diverged, ended, or taken by the core itself
  if (cpu_.branch_count() != irq.branch_count()) {
    Diverge(
        CurrentRecord(),
        absl::StrCat("the schedule has an interrupt at branch count ", irq.branch_count(), ", EPC ",
                     Hex(irq.pc()), bd ? " (delay slot)" : "", " (reported at CAT record ",
                     irq.cat_record(), "), but the core never reached that boundary"));
    return;
  }
  const uint32_t ip = (irq.cause_ip() << mips::kCauseIpShift) & kHardwareIp;
  for (int line = 2; line <= 7; ++line) {
    if (ip & (1u << (mips::kCauseIpShift + line))) cpu_.SetInterruptLine(line, true);
  }
  const uint32_t status = cpu_.status();
  const bool can_take =
      (cpu_.cause() & status & 0xFF00) != 0 &&
      (status & (mips::kStatusIe | mips::kStatusExl | mips::kStatusErl)) == mips::kStatusIe;
  if (can_take) {
    injecting_ = true;
    RunCore(1);  // the step is the interrupt entry (OnException checks and counts it)
    injecting_ = false;
  }
  for (int line = 2; line <= 7; ++line) cpu_.SetInterruptLine(line, false);
  if (!can_take) {
    Diverge(CurrentRecord(),
            absl::StrFormat("the schedule has an interrupt (Cause.IP 0x%02x) at branch count %d, "
                            "EPC %s (reported at CAT record %d), but there Status is 0x%08x and "
                            "it cannot be taken",
                            irq.cause_ip(), irq.branch_count(), Hex(irq.pc()), irq.cat_record(),
                            status));
  } else if (next_irq_ == before && !Stopped()) {
    Diverge(CurrentRecord(), absl::StrCat("the interrupt reported at CAT record ", irq.cat_record(),
                                          " was not taken"));
  }
}

void R4400Replayer::OnException(mips::Cpu& cpu, mips::ExcCode code, uint64_t faulting_pc) {
  if (recorder_) recorder_->OnException(cpu, code, faulting_pc, ExceptionName(code));
  if (options_.trace != nullptr) {
    TraceEvent(absl::StrCat(ExceptionName(code), " (code ", static_cast<int>(code), ") at ",
                            Hex(faulting_pc), ", EPC ", Hex(cpu.epc()), ", Cause ",
                            Hex(cpu.cause()),
                            code == mips::kExcInt && injecting_ ? ", from the AES" : ""));
  }
  if (code != mips::kExcInt) return;
  if (next_irq_ >= aes_.interrupts_size()) {
    Diverge(CurrentRecord(),
            absl::StrCat("the core took an interrupt at branch count ", cpu.branch_count() - 1,
                         ", EPC ", Hex(cpu.epc()), " that the schedule does not have"));
    return;
  }
  const aes::Interrupt& irq = aes_.interrupts(next_irq_);
  if (cpu.branch_count() - 1 != irq.branch_count() || cpu.epc() != irq.pc()) {
    Diverge(CurrentRecord(),
            absl::StrCat("expected the interrupt at branch count ", irq.branch_count(), ", EPC ",
                         Hex(irq.pc()), " (reported at CAT record ", irq.cat_record(),
                         "), the core took one at branch count ", cpu.branch_count() - 1, ", EPC ",
                         Hex(cpu.epc())));
    return;
  }
  ++next_irq_;
}

void R4400Replayer::OnInstruction(mips::Cpu& cpu, uint64_t pc, uint32_t word) {
  ring_[ring_count_++ % kRingSize] = {cpu.retired(), pc, word};
  if (recorder_) {
    recorder_->OnInstruction(cpu, pc, word);
    if (!recorder_->status().ok() && error_.ok()) {
      error_ = recorder_->status();
      cpu.RequestStop();
    }
  }
  if (options_.on_instruction) {
    // The word's bytes in memory order: the IMS's byte order (big-endian on the traced R4400).
    const bool big = ims_.description().byte_order() == ims::BYTE_ORDER_BIG;
    uint8_t bytes[4];
    for (int i = 0; i < 4; ++i) bytes[i] = static_cast<uint8_t>(word >> (8 * (big ? 3 - i : i)));
    options_.on_instruction(pc, bytes);
  }
  if (options_.trace == nullptr) return;
  // "%12d %016x %08x  %s\n" by hand: printf-style formatting would cost more than the replay.
  static constexpr char kDigits[] = "0123456789abcdef";
  char line[12 + 1 + 16 + 1 + 8 + 2];
  char* p = line + 12;
  uint64_t n = cpu.retired();
  do {
    *--p = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n != 0 && p > line);
  std::memset(line, ' ', p - line);
  p = line + 12;
  *p++ = ' ';
  for (int shift = 60; shift >= 0; shift -= 4) *p++ = kDigits[(pc >> shift) & 15];
  *p++ = ' ';
  for (int shift = 28; shift >= 0; shift -= 4) *p++ = kDigits[(word >> shift) & 15];
  *p++ = ' ';
  *p++ = ' ';
  trace_buffer_.append(line, sizeof line);
  trace_buffer_ += disasm_->Text(pc, word);
  trace_buffer_ += '\n';
  if (trace_buffer_.size() >= (1 << 16)) FlushTrace();
}

void R4400Replayer::TraceEvent(const std::string& text) {
  absl::StrAppend(&trace_buffer_, "             - ", text, "\n");
  if (trace_buffer_.size() >= (1 << 16)) FlushTrace();
}

void R4400Replayer::FlushTrace() {
  if (options_.trace == nullptr || trace_buffer_.empty()) return;
  if (absl::Status s = options_.trace->Write(trace_buffer_); !s.ok() && error_.ok()) {
    error_ = s;
    cpu_.RequestStop();
  }
  trace_buffer_.clear();
}

// ---- the bus ----

void R4400Replayer::BeginCpuTransaction(const cat::BusRecord& r) {
  // DMA placed after this many CPU transactions happens before this one.
  while (next_dma_ < aes_.dma_size() &&
         aes_.dma(next_dma_).after_cpu_transactions() <= cpu_transactions_ && !diverged()) {
    ApplyDma(aes_.dma(next_dma_++));
  }
  if (end_known_ && cpu_transactions_ >= aes_.end().cpu_transactions()) {
    Diverge(CurrentRecord(),
            absl::StrCat("a ", cat::KindName(r.kind), " of ", r.data.size(), " bytes at ",
                         Hex(r.address), " after the end of the schedule"));
  }
}

void R4400Replayer::EndCpuTransaction(const cat::BusRecord& r) {
  Emit(r);
  ++cpu_transactions_;
  if (end_known_ && cpu_transactions_ == aes_.end().cpu_transactions()) {
    ended_ = true;
    cpu_.RequestStop();
  }
}

void R4400Replayer::Emit(const cat::BusRecord& r) {
  if (diverged()) return;
  ++records_;
  last_record_bc_ = r.branch_count;
  if (options_.regenerated != nullptr && error_.ok()) {
    if (absl::Status s = options_.regenerated->Write(r); !s.ok()) {
      error_ = s;
      cpu_.RequestStop();
    }
  }
  if (options_.on_record && error_.ok()) {
    if (absl::Status s = options_.on_record(r); !s.ok()) {
      error_ = s;
      cpu_.RequestStop();
    }
  }
  if (options_.on_record_retired) options_.on_record_retired(r, cpu_.retired());
}

void R4400Replayer::ApplyDma(const aes::DmaTransfer& d) {
  const uint64_t n = d.data().size();
  if (!InRam(d.address(), n)) {
    Diverge(d.cat_record(),
            absl::StrCat("a DMA transfer at ", Hex(d.address()), " outside main memory"));
    return;
  }
  // The record's side band: recorded, or (older AES files) the latest it can have been.
  uint64_t bc = d.branch_count() != 0 ? d.branch_count() : cpu_.branch_count();
  if (bc > cpu_.branch_count() || bc < last_record_bc_) {
    Diverge(d.cat_record(),
            absl::StrCat("the DMA transfer at ", Hex(d.address()), " has branch count ", bc,
                         ", but at its bus position the core is between branch counts ",
                         last_record_bc_, " and ", cpu_.branch_count()));
    return;
  }
  uint8_t* mem = &ram_[d.address()];
  const auto* bytes = reinterpret_cast<const uint8_t*>(d.data().data());
  if (d.to_memory()) {
    std::memcpy(mem, bytes, n);
  } else if (std::memcmp(mem, bytes, n) != 0) {
    Diverge(d.cat_record(), absl::StrCat("the device's DMA read at ", Hex(d.address()), " got ",
                                         BytesHex(d.data()), ", the replayed memory holds ",
                                         BytesHex(std::span<const uint8_t>(mem, n))));
    return;
  }
  cat::BusRecord r;
  r.kind = d.to_memory() ? cat::RecordKind::kDmaWrite : cat::RecordKind::kDmaRead;
  r.master = static_cast<uint8_t>(d.device());
  r.address = d.address();
  r.branch_count = bc;
  r.data = {bytes, n};
  if (options_.trace != nullptr) {
    TraceEvent(absl::StrCat("DMA ", d.to_memory() ? "write" : "read", " of ", n, " bytes at ",
                            Hex(d.address()), " by device ", d.device()));
  }
  Emit(r);
}

void R4400Replayer::Read(const cat::BusRecord& r, std::span<uint8_t> data) {
  std::fill(data.begin(), data.end(), 0);
  BeginCpuTransaction(r);
  const uint64_t a = r.address;
  if (InRam(a, data.size())) {
    std::memcpy(data.data(), &ram_[a], data.size());
  } else if (Reserved* w = ReservedArea(a, data.size())) {
    std::memcpy(data.data(), &w->bytes[a - w->area.base], data.size());
  } else if (r.kind != cat::RecordKind::kUncachedRead) {
    Diverge(CurrentRecord(),
            absl::StrCat("a ", cat::KindName(r.kind), " at ", Hex(a), " outside main memory"));
  } else {
    DeviceRead(r, data);
  }
  EndCpuTransaction(r);
}

void R4400Replayer::Write(const cat::BusRecord& r) {
  BeginCpuTransaction(r);
  const uint64_t a = r.address;
  if (InRam(a, r.data.size())) {
    std::memcpy(&ram_[a], r.data.data(), r.data.size());
  } else if (Reserved* w = ReservedArea(a, r.data.size())) {
    std::memcpy(&w->bytes[a - w->area.base], r.data.data(), r.data.size());
  } else if (r.kind != cat::RecordKind::kUncachedWrite) {
    Diverge(CurrentRecord(),
            absl::StrCat("a ", cat::KindName(r.kind), " at ", Hex(a), " outside main memory"));
  } else {
    DeviceWrite(r);
  }
  EndCpuTransaction(r);
}

void R4400Replayer::DeviceRead(const cat::BusRecord& r, std::span<uint8_t> data) {
  const std::string actual = absl::StrCat("a read of ", data.size(), " bytes at ", Hex(r.address));
  if (next_io_ >= aes_.device_io_size()) {
    Diverge(CurrentRecord(),
            absl::StrCat("the core made ", actual, ", but the schedule has no device access left"));
    return;
  }
  const aes::DeviceAccess& e = aes_.device_io(next_io_);
  if (e.write() || e.port() || e.address() != r.address || e.data().size() != data.size()) {
    Diverge(CurrentRecord(), absl::StrCat("expected ", Describe(e), ", the core made ", actual));
    return;
  }
  std::memcpy(data.data(), e.data().data(), data.size());
  ++next_io_;
  if (options_.trace != nullptr) {
    TraceEvent(absl::StrCat("device read at ", Hex(r.address), ": ", BytesHex(e.data())));
  }
}

void R4400Replayer::DeviceWrite(const cat::BusRecord& r) {
  const std::string actual = absl::StrCat("a write of ", r.data.size(), " bytes at ",
                                          Hex(r.address), " data=", BytesHex(r.data));
  if (next_io_ >= aes_.device_io_size()) {
    Diverge(CurrentRecord(),
            absl::StrCat("the core made ", actual, ", but the schedule has no device access left"));
    return;
  }
  const aes::DeviceAccess& e = aes_.device_io(next_io_);
  if (!e.write() || e.port() || e.address() != r.address || e.data().size() != r.data.size() ||
      std::memcmp(e.data().data(), r.data.data(), r.data.size()) != 0) {
    Diverge(CurrentRecord(), absl::StrCat("expected ", Describe(e), ", the core made ", actual));
    return;
  }
  ++next_io_;
}

// ---- CP0 values from the outside world ----

// A read whose echo store an interrupt delayed: the echo, and so the AES entry, then comes after
// the handler's own echoes. The contract rules this out (read and echo with interrupts masked);
// say so when it looks like the cause of a divergence.
std::string R4400Replayer::EchoRaceHint() const {
  if (next_irq_ >= aes_.interrupts_size()) return "";
  const aes::Interrupt& irq = aes_.interrupts(next_irq_);
  if (irq.branch_count() != cpu_.branch_count() || irq.pc() != cpu_.pc() + 4) return "";
  return "; an interrupt is scheduled right after this read: taken between the read and its "
         "echo store, it puts the echo after the handler's (the traced kernel must read and "
         "echo with interrupts masked)";
}

uint32_t R4400Replayer::ReadCount(mips::Cpu&) {
  if (next_reg_ >= aes_.register_reads_size() ||
      aes_.register_reads(next_reg_).register_() != aes::RegisterRead::REGISTER_MIPS_COUNT) {
    Diverge(CurrentRecord(),
            absl::StrCat("the core read Count, the schedule's next register read is ",
                         next_reg_ < aes_.register_reads_size()
                             ? Describe(aes_.register_reads(next_reg_))
                             : "none (all used)",
                         EchoRaceHint()));
    return 0;
  }
  const uint32_t count = static_cast<uint32_t>(aes_.register_reads(next_reg_++).value());
  if (options_.trace != nullptr) TraceEvent(absl::StrCat("Count = ", Hex(count)));
  return count;
}

uint32_t R4400Replayer::ReadCause(mips::Cpu&, uint32_t cause) {
  if (next_reg_ >= aes_.register_reads_size() ||
      aes_.register_reads(next_reg_).register_() != aes::RegisterRead::REGISTER_MIPS_CAUSE) {
    Diverge(CurrentRecord(),
            absl::StrCat("the core read Cause, the schedule's next register read is ",
                         next_reg_ < aes_.register_reads_size()
                             ? Describe(aes_.register_reads(next_reg_))
                             : "none (all used)",
                         EchoRaceHint()));
    return cause;
  }
  const aes::RegisterRead& e = aes_.register_reads(next_reg_++);
  const uint32_t echo = static_cast<uint32_t>(e.value());
  // Only IP7..IP2 come from the outside world; the rest is the core's own.
  if ((echo ^ cause) & ~kHardwareIp) {
    Diverge(CurrentRecord(), absl::StrFormat("the kernel read Cause as 0x%08x, the core's Cause "
                                             "is 0x%08x (outside IP7..IP2)",
                                             echo, cause));
  }
  if (options_.trace != nullptr) TraceEvent(absl::StrCat("Cause = ", Hex(echo)));
  return echo;
}

void R4400Replayer::CheckEverythingUsed() {
  if (records_ != aes_.end().cat_records()) {
    Diverge(CurrentRecord(), absl::StrCat("the schedule has ", aes_.end().cat_records(),
                                          " records, replay regenerated ", records_));
  } else if (next_irq_ < aes_.interrupts_size()) {
    const aes::Interrupt& irq = aes_.interrupts(next_irq_);
    Diverge(irq.cat_record(), absl::StrCat("the interrupt at branch count ", irq.branch_count(),
                                           ", EPC ", Hex(irq.pc()), " was never taken"));
  } else if (next_io_ < aes_.device_io_size()) {
    const aes::DeviceAccess& e = aes_.device_io(next_io_);
    Diverge(e.cat_record(), absl::StrCat("the core never made ", Describe(e)));
  } else if (next_reg_ < aes_.register_reads_size()) {
    const aes::RegisterRead& e = aes_.register_reads(next_reg_);
    Diverge(e.cat_record(), absl::StrCat("the core never read ", Describe(e)));
  }
}

}  // namespace

std::optional<uint64_t> DivergenceRecord(const absl::Status& status) {
  auto payload = status.GetPayload(kRecordPayload);
  uint64_t record;
  if (!payload || !absl::SimpleAtoi(std::string(*payload), &record)) return std::nullopt;
  return record;
}

cat::CatHeader R4400Header(const ims::InitialMachineState& ims) {
  const ims::MachineDescription& d = ims.description();
  std::vector<cat::CacheGeometry> caches;
  for (const ims::Cache& c : d.caches()) {
    caches.push_back(
        {static_cast<uint8_t>(c.level()), static_cast<cat::CacheType>(c.type()),
         static_cast<uint8_t>(c.ways()),
         c.write_through() ? cat::WritePolicy::kWriteThrough : cat::WritePolicy::kWriteBack,
         c.size_bytes(), c.line_bytes()});
  }
  cat::CatHeader h = machine::R4400SystemHeader(d.memory_bytes(), std::move(caches), d.producer());
  h.byte_order =
      d.byte_order() == ims::BYTE_ORDER_BIG ? cat::ByteOrder::kBig : cat::ByteOrder::kLittle;
  return h;
}

absl::StatusOr<ReplaySummary> Replay(const ims::InitialMachineState& ims,
                                     const aes::EventSchedule& aes, const ReplayOptions& options) {
  absl::StatusOr<mips::CpuConfig> config = R4400Replayer::Config(ims);
  if (!config.ok()) return config.status();
  if (aes.machine() != ims::MACHINE_R4400 && aes.machine() != ims::MACHINE_UNSPECIFIED) {
    return Invalid("the AES is not an R4400 schedule");
  }
  const bool observe =
      options.trace != nullptr || options.sink != nullptr || options.on_instruction != nullptr;
  auto replayer = std::make_unique<R4400Replayer>(ims, aes, options, observe, *config);
  if (absl::Status s = replayer->Load(); !s.ok()) return s;
  absl::StatusOr<ReplaySummary> result = replayer->Run();
  if (result.ok() || !absl::IsAborted(result.status()) || observe) return result;
  // The fast run does not look at single instructions; replay is deterministic, so a second run
  // that does reaches the same divergence and can name the instructions that led to it.
  ReplayOptions quiet;
  auto again = std::make_unique<R4400Replayer>(ims, aes, quiet, /*observe=*/true, *config);
  if (!again->Load().ok()) return result;
  absl::StatusOr<ReplaySummary> second = again->Run();
  if (!second.ok() && absl::IsAborted(second.status())) return second.status();
  return result;
}

}  // namespace citcat::replay
