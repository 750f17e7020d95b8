// The run loop, instruction fetch, exception entry and interrupts.
#include "simcore/mips/cpu.h"

#include <algorithm>
#include <bit>

namespace citcat::mips {

namespace {

bool PowerOfTwoIn(uint32_t v, uint32_t lo, uint32_t hi) {
  return v >= lo && v <= hi && (v & (v - 1)) == 0;
}

// The configuration with every invalid field replaced by its default.
CpuConfig Sanitized(CpuConfig c) {
  const CpuConfig d;
  if (!PowerOfTwoIn(c.icache_bytes, 4096, 65536)) c.icache_bytes = d.icache_bytes;
  if (!PowerOfTwoIn(c.dcache_bytes, 4096, 65536)) c.dcache_bytes = d.dcache_bytes;
  if (!PowerOfTwoIn(c.icache_line, 16, 32)) c.icache_line = d.icache_line;
  if (!PowerOfTwoIn(c.dcache_line, 16, 32)) c.dcache_line = d.dcache_line;
  if (c.scache_bytes != 0 && !PowerOfTwoIn(c.scache_bytes, 16 * 1024, 16 << 20)) {
    c.scache_bytes = 0;
  }
  if (!PowerOfTwoIn(c.scache_line, 16, 128)) c.scache_line = d.scache_line;
  return c;
}

}  // namespace

absl::Status ValidateCpuConfig(const CpuConfig& c) {
  if (!PowerOfTwoIn(c.icache_bytes, 4096, 65536) || !PowerOfTwoIn(c.dcache_bytes, 4096, 65536)) {
    return absl::InvalidArgumentError("primary caches must be 4 KB..64 KB, a power of two");
  }
  if (!PowerOfTwoIn(c.icache_line, 16, 32) || !PowerOfTwoIn(c.dcache_line, 16, 32)) {
    return absl::InvalidArgumentError("primary cache lines must be 16 or 32 bytes");
  }
  if (c.scache_bytes != 0 && (!PowerOfTwoIn(c.scache_bytes, 16 * 1024, 16 << 20) ||
                              !PowerOfTwoIn(c.scache_line, 16, 128))) {
    return absl::InvalidArgumentError(
        "a secondary cache must be 16 KB..16 MB with 16..128-byte lines, powers of two");
  }
  return absl::OkStatus();
}

Cpu::Cpu(simcore::Bus& bus, const CpuConfig& requested) : Cpu(bus, Sanitized(requested), 0) {}

Cpu::Cpu(simcore::Bus& bus, const CpuConfig& config, int)
    : bus_(bus),
      config_(config),
      // A secondary line holds whole primary lines: never smaller than either of them.
      scache_(config.scache_bytes
                  ? std::make_unique<SecondaryCache>(
                        bus, config.scache_bytes,
                        std::max({config.scache_line, config.icache_line, config.dcache_line}))
                  : nullptr),
      line_bus_(scache_ ? static_cast<simcore::Bus*>(scache_.get()) : &bus),
      big_endian_(config.big_endian),
      data_big_(config.big_endian),
      icache_(config.icache_bytes, config.icache_line, true),
      dcache_(config.dcache_bytes, config.dcache_line, false),
      decoded_(config.icache_bytes / config.icache_line * (config.icache_line / 4 + 1),
               Predecode(0)) {
  data_keys_.resize(dcache_.num_lines());
  const uint32_t words = config.icache_line / 4;
  // Each sentinel names the next I-cache line (the run loop's way into it), -1 for none.
  const uint32_t lines = config.icache_bytes / config.icache_line;
  for (uint32_t k = 0; k < lines; ++k) {
    Inst& sentinel = LineInsts(k)[words];
    sentinel.op = kLineEnd;
    sentinel.run = static_cast<uint16_t>(kLineEnd);
    sentinel.imm = k + 1 < lines ? static_cast<int32_t>(k + 1) : -1;
  }
  uncached_inst_[1].op = kLineEnd;
  uncached_inst_[1].run = static_cast<uint16_t>(kLineEnd);
  uncached_inst_[1].imm = -1;
  if (scache_) {
    scache_->set_branch_count(&branch_count_);
    scache_->set_evict_callback([this](uint64_t pa, uint32_t n) { PurgePrimaries(pa, n); });
  }
  Reset();
}

void Cpu::Reset() {
  gpr_.fill(0);
  hi_ = lo_ = 0;
  ll_bit_ = false;
  status_ = kStatusErl | kStatusBev;
  cause_ = 0;
  index_ = wired_ = page_mask_ = compare_ = 0;
  lladdr_ = watch_lo_ = watch_hi_ = ecc_ = cache_err_ = tag_lo_ = tag_hi_ = 0;
  entry_lo0_ = entry_lo1_ = context_ = bad_vaddr_ = entry_hi_ = epc_ = xcontext_ = 0;
  error_epc_ = 0;
  // Config: cache sizes (IC/DC = log2(size) - 12), line sizes (IB/DB: 1 = 32 bytes), the
  // secondary cache (SC=0 and SB = block size 16..128 as 0..3 if present, else SC=1), byte order
  // (BE), K0 = 3 (cacheable noncoherent).
  auto log2 = [](uint32_t v) { return static_cast<uint32_t>(std::countr_zero(v)); };
  const uint32_t secondary = scache_ ? (log2(scache_->line_bytes() / 16) & 3) << 22 : 1u << 17;
  config_reg_ =
      secondary | (big_endian_ ? 1u << 15 : 0) | ((log2(config_.icache_bytes) - 12) << 9) |
      ((log2(config_.dcache_bytes) - 12) << 6) | (config_.icache_line == 32 ? 1u << 5 : 0) |
      (config_.dcache_line == 32 ? 1u << 4 : 0) | 3u;
  random_anchor_ = 47;
  random_anchor_retired_ = retired();
  icache_.InvalidateAll();
  dcache_.InvalidateAll();
  if (scache_) scache_->InvalidateAll();
  InvalidateFetchWindow();
  fpu_.Reset();
  fpu_.set_fr(false);
  mode_key_ = ~0u;
  UpdateMode();
  UpdateInterruptPending();
  SetPc(0xFFFFFFFFBFC00000ull);
}

void Cpu::SetPc(uint64_t pc) {
  pc_ = pc;
  flow_ = kSequential;
  in_delay_ = false;
}

void Cpu::SetPcInDelaySlot(uint64_t slot, uint64_t target) {
  pc_ = slot;
  target_ = target;
  flow_ = kDelaySlot;
  in_delay_ = true;
}

void Cpu::CachesLoaded() {
  for (uint32_t i = 0; i < icache_.num_lines(); ++i) {
    if (icache_.valid(i)) DecodeILine(i);
  }
  FlushTranslations();
}

const char* ExceptionName(ExcCode code) {
  switch (code) {
    case kExcInt:
      return "interrupt";
    case kExcMod:
      return "TLB modified";
    case kExcTlbl:
      return "TLB load";
    case kExcTlbs:
      return "TLB store";
    case kExcAdel:
      return "address error load";
    case kExcAdes:
      return "address error store";
    case kExcSys:
      return "syscall";
    case kExcBp:
      return "breakpoint";
    case kExcRi:
      return "reserved instruction";
    case kExcCpu:
      return "coprocessor unusable";
    case kExcOv:
      return "overflow";
    case kExcTr:
      return "trap";
    case kExcFpe:
      return "floating point";
    case kExcWatch:
      return "watch";
    default:
      return "exception";
  }
}

// Inlined into Run, one copy for each: the fetch at its top then needs no call.
template <Cpu::Watch kWatch>
[[gnu::always_inline]] inline uint64_t Cpu::RunLoop(uint64_t n) {
  stop_ = false;
  flow_break_ = false;
  uint64_t done = 0;
  while (done < n && !stop_) {
    const uint64_t pc = pc_;
    if (irq_pending_) [[unlikely]] {
      Exception(kExcInt);
      FinishFlow(pc);
      ++done;
    } else if (const Inst* inst = Fetch()) [[likely]] {
      done += RunStraight<kWatch>(inst, n - done);
    } else {  // a fetch exception
      FinishFlow(pc);
      ++done;
    }
  }
  return done;
}

uint64_t Cpu::Run(uint64_t n) {
  if (observer_ == nullptr) {
    return log_ == nullptr ? RunLoop<Watch::kNone>(n) : RunLoop<Watch::kLog>(n);
  }
  const uint64_t done = RunLoop<Watch::kObserver>(n);
  ReportRegisters();
  return done;
}

void Cpu::ReportRegisters() {
  if (!reported_pending_) return;
  reported_pending_ = false;
  const InstructionInfo info = Describe(reported_word_);
  for (uint32_t m = info.gpr_written & ~1u; m != 0; m &= m - 1) {
    const int r = std::countr_zero(m);
    observer_->OnRegister(static_cast<uint16_t>(r), gpr_[r]);
  }
  if (info.writes_hi) observer_->OnRegister(kRegHi, hi_);
  if (info.writes_lo) observer_->OnRegister(kRegLo, lo_);
  if (info.fpr_written >= 0) {
    observer_->OnRegister(kRegFpr0 + info.fpr_written, fpu_.raw_fgr(info.fpr_written));
  }
  if (info.writes_fcc) observer_->OnRegister(kRegFcc, fpu_.condition());
}

void Cpu::FinishFlow(uint64_t pc) {
  const uint8_t flow = flow_ & ~kRecheck;
  flow_ = kSequential;
  retired_ += flow != kRedirected;
  switch (flow) {
    case kSequential:
      pc_ = pc + 4;
      return;
    case kBranch:  // the delay slot comes next
      pc_ = pc + 4;
      in_delay_ = true;
      flow_ = kDelaySlot;
      return;
    case kDelaySlot:  // the delay slot completed: the branch retires and takes effect
      pc_ = target_;
      in_delay_ = false;
      ++branch_count_;
      break;
    case kSkipSlot:
      pc_ = pc + 8;
      break;
    default:  // kRedirected, kReturned
      in_delay_ = false;
      break;
  }
  if (branch_count_ >= stop_branch_count_) [[unlikely]] {
    stop_ = true;
    flow_break_ = flow == kSkipSlot || flow == kRedirected || flow == kReturned ||
                  (flow == kDelaySlot && target_ != pc + 4);
  }
}

const Inst* Cpu::FetchSlow() {
  if (pc_ & 3) {
    AddressError(pc_, Access::kFetch);
    return nullptr;
  }
  uint64_t pa;
  bool cached;
  const MicroTlbEntry& e = utlb_cur_[(pc_ >> 12) & (kMicroTlbSize - 1)];
  if (e.vpage == (pc_ >> 12)) {
    pa = e.pbase | (pc_ & 0xFFF);
    cached = e.cached;
  } else if (!Translate(pc_, Access::kFetch, &pa, &cached)) {
    return nullptr;
  }
  if (cached) {
    const uint32_t index = icache_.Index(pc_);
    if (!icache_.Hit(pc_, pa)) RefillILine(index, pa);
    OpenFetchWindow(pc_, pa & ~uint64_t{0xFFF});
    return InstAt(index, pc_);
  }
  uint32_t word;
  UncachedRead(pa, reinterpret_cast<uint8_t*>(&word), 4, cat::kFlagCode);
  uncached_inst_[0] = Predecode(ToHost(word, big_endian_));
  return &uncached_inst_[0];
}

void Cpu::RefillILine(uint32_t index, uint64_t paddr) {
  // The fetch window needs no closing: it compares the line's tag on every entry to a line.
  icache_.Refill(index, paddr, *line_bus_, branch_count_);
  DecodeILine(index);
}

void Cpu::PurgePrimaries(uint64_t paddr, uint32_t bytes) {
  // The primaries are virtually indexed: a physical line can sit at any index whose low 12 bits
  // match, so look at each of those candidates.
  for (Cache* cache : {&dcache_, &icache_}) {
    const uint32_t line = cache->line_bytes();
    const uint32_t aliases = cache->size() > 4096 ? cache->size() / 4096 : 1;
    for (uint64_t a = paddr; a < paddr + bytes; a += line) {
      for (uint32_t k = 0; k < aliases; ++k) {
        const uint64_t va = (uint64_t{k} << 12) | (a & 0xFFF);
        const uint32_t index = cache->Index(va);
        if (cache->line(index).tag != cache->TagFor(a)) continue;
        if (cache == &dcache_) cache->WriteBack(index, *line_bus_, branch_count_);
        cache->Invalidate(index);
      }
    }
  }
  ForgetDataKeys();
  InvalidateFetchWindow();
}

void Cpu::DecodeILine(uint32_t index) {
  // The predecoded instructions belong to the I-cache line they came from: they change only
  // when the line is refilled, which is also the only way new code reaches the I-cache.
  const uint8_t* bytes = icache_.LineData(index);
  const uint32_t words = icache_.line_bytes() / 4;
  for (uint32_t j = 0; j < words; ++j) {
    uint32_t w;
    std::memcpy(&w, bytes + 4 * j, 4);
    LineInsts(index)[j] = Predecode(ToHost(w, big_endian_));
  }
  FusePairs(LineInsts(index), words);
}

void Cpu::UpdateMode() {
  const uint32_t s = status_;
  const uint32_t ksu = (s >> kStatusKsuShift) & 3;
  kernel_ = (s & (kStatusExl | kStatusErl)) || ksu == 0;
  mode_ = kernel_ ? 0 : (ksu == 1 ? 1 : 2);
  const uint32_t xbit = mode_ == 0 ? kStatusKx : mode_ == 1 ? kStatusSx : kStatusUx;
  addr64_ = (s & xbit) != 0;
  ops64_ = kernel_ || addr64_;
  // Reverse endian applies to user-mode data accesses only; instructions keep the CPU's order.
  data_big_ = big_endian_ != (mode_ == 2 && (s & kStatusRe));
  cu0_ = kernel_ || (s & kStatusCu0);
  // The micro-TLB is per privilege mode; what it caches also depends on these bits.
  uint32_t key = (s & (kStatusKx | kStatusSx | kStatusUx | kStatusErl)) | ((config_reg_ & 7) << 28);
  if (key != mode_key_) {
    mode_key_ = key;
    FlushTranslations();
  }
  utlb_cur_ = utlb_[mode_].data();
  data_stamp_ = (data_stamp_ & ~uint64_t{7}) | (uint64_t(mode_) << 1);
  InvalidateFetchWindow();
  if (fpu_.fr() != ((s & kStatusFr) != 0)) fpu_.set_fr((s & kStatusFr) != 0);
}

void Cpu::FlushTranslations() {
  for (auto& table : utlb_) table.fill(MicroTlbEntry{});
  ForgetDataKeys();
  InvalidateFetchWindow();
}

void Cpu::UpdateInterruptPending() {
  const uint32_t pending = cause_ & status_ & 0xFF00;
  irq_pending_ = pending && (status_ & (kStatusIe | kStatusExl | kStatusErl)) == kStatusIe;
  if (irq_pending_) flow_ |= kRecheck;
}

void Cpu::SetInterruptLine(int line, bool asserted) {
  if (line < 2 || line > 7) return;
  const uint32_t bit = 1u << (kCauseIpShift + line);
  cause_ = asserted ? (cause_ | bit) : (cause_ & ~bit);
  UpdateInterruptPending();
}

void Cpu::Exception(ExcCode code, int coprocessor, uint32_t vector_offset) {
  ++exceptions_;
  event_retired_ = retired_;
  ++branch_count_;
  const uint64_t faulting_pc = pc_;
  if (!(status_ & kStatusExl)) {
    // EPC names the branch when the faulting instruction sits in its delay slot.
    if (in_delay_) {
      epc_ = pc_ - 4;
      cause_ |= kCauseBd;
    } else {
      epc_ = pc_;
      cause_ &= ~kCauseBd;
    }
  } else {
    vector_offset = 0x180;  // nested: TLB refills go to the general vector, EPC/BD kept
  }
  cause_ = (cause_ & ~(0x7Cu | (3u << 28))) | (uint32_t{code} << 2) |
           (static_cast<uint32_t>(coprocessor & 3) << 28);
  status_ |= kStatusExl;
  const uint64_t base = (status_ & kStatusBev) ? 0xFFFFFFFFBFC00200ull : 0xFFFFFFFF80000000ull;
  pc_ = base + vector_offset;
  flow_ = kRedirected;  // also cancels a pending delay slot: the branch will re-execute
  in_delay_ = false;
  UpdateMode();
  UpdateInterruptPending();
  if (observer_ != nullptr) {
    // The instruction told last completed unless it raised this (a fetch exception comes from
    // the next one).
    if (code != kExcInt && reported_pc_ == faulting_pc) reported_pending_ = false;
    ReportRegisters();
    observer_->OnEvent(
        code == kExcInt ? simcore::EventKind::kInterrupt : simcore::EventKind::kFault, code,
        faulting_pc);
  }
  if (hooks_ != nullptr) hooks_->ExceptionEntered(*this, code, faulting_pc);
}

void Cpu::EnterResetVector() {
  ++exceptions_;
  event_retired_ = retired_;
  ++branch_count_;
  error_epc_ = in_delay_ ? pc_ - 4 : pc_;  // a pending delay slot is abandoned with its branch
  status_ = (status_ | kStatusBev | kStatusSr | kStatusErl) & ~kStatusTs;
  pc_ = 0xFFFFFFFFBFC00000ull;
  flow_ = kSequential;
  in_delay_ = false;
  UpdateMode();
  UpdateInterruptPending();
}

void Cpu::AddressError(uint64_t vaddr, Access access) {
  bad_vaddr_ = vaddr;
  Exception(access == Access::kStore ? kExcAdes : kExcAdel);
}

void Cpu::TlbException(ExcCode code, uint64_t vaddr, bool refill) {
  bad_vaddr_ = vaddr;
  context_ = (context_ & ~uint64_t{0x7FFFF0}) | (((vaddr >> 13) & 0x7FFFF) << 4);
  xcontext_ = (xcontext_ & ~uint64_t{0x1FFFFFFF0}) | (((vaddr >> 62) & 3) << 31) |
              (((vaddr >> 13) & 0x7FFFFFF) << 4);
  entry_hi_ = (vaddr & kEntryHiVpn2Mask) | (entry_hi_ & 0xFF);
  uint32_t offset = 0x180;
  if (refill) offset = addr64_ ? 0x080 : 0x000;
  Exception(code, 0, offset);
}

}  // namespace citcat::mips
