// CP0 registers with their R4400 write masks, the TLB instructions and ERET.
#include "simcore/mips/cpu.h"

namespace citcat::mips {
namespace {

uint64_t Sext32(uint64_t v) { return static_cast<uint64_t>(static_cast<int32_t>(v)); }

// Status bits software may write. TS (TLB shutdown) can only be cleared; bits 23 and 19 are 0.
constexpr uint32_t kStatusWritable = 0xFE57FFFFu;

}  // namespace

uint32_t Cpu::random() const {
  // Random counts down from 47 once per retired instruction and wraps from Wired back to 47.
  if (wired_ >= 47) return 47;
  const uint64_t span = 48 - wired_;
  const uint64_t elapsed = retired() - random_anchor_retired_;
  const uint64_t offset = (47 - random_anchor_ + elapsed % span) % span;
  return static_cast<uint32_t>(47 - offset);
}

uint64_t Cpu::ReadCp0(int reg) {
  switch (reg) {
    case kCp0Index:
      return Sext32(index_);
    case kCp0Random:
      return random();
    case kCp0EntryLo0:
      return entry_lo0_;
    case kCp0EntryLo1:
      return entry_lo1_;
    case kCp0Context:
      return context_;
    case kCp0PageMask:
      return page_mask_;
    case kCp0Wired:
      return wired_;
    case kCp0BadVAddr:
      return bad_vaddr_;
    case kCp0Count:
      return Sext32(hooks_ ? hooks_->ReadCount(*this)
                           : static_cast<uint32_t>(count_offset_ + retired()));
    case kCp0EntryHi:
      return entry_hi_;
    case kCp0Compare:
      return Sext32(compare_);
    case kCp0Status:
      return Sext32(status_);
    case kCp0Cause:
      return Sext32(hooks_ ? hooks_->ReadCause(*this, cause_) : cause_);
    case kCp0Epc:
      return epc_;
    case kCp0PrId:
      return config_.prid;
    case kCp0Config:
      return Sext32(config_reg_);
    case kCp0LLAddr:
      return Sext32(lladdr_);
    case kCp0WatchLo:
      return Sext32(watch_lo_);
    case kCp0WatchHi:
      return watch_hi_;
    case kCp0XContext:
      return xcontext_;
    case kCp0Ecc:
      return ecc_;
    case kCp0CacheErr:
      return Sext32(cache_err_);
    case kCp0TagLo:
      return Sext32(tag_lo_);
    case kCp0TagHi:
      return Sext32(tag_hi_);
    case kCp0ErrorEpc:
      return error_epc_;
    default:
      return 0;  // registers 7, 21-25 and 31 are reserved
  }
}

void Cpu::WriteCp0(int reg, uint64_t v) {
  const uint32_t v32 = static_cast<uint32_t>(v);
  switch (reg) {
    case kCp0Index:
      index_ = (index_ & 0x80000000u) | (v32 & 0x3F);
      break;
    case kCp0EntryLo0:
      entry_lo0_ = v & kEntryLoMask;
      break;
    case kCp0EntryLo1:
      entry_lo1_ = v & kEntryLoMask;
      break;
    case kCp0Context:
      context_ = (v & ~uint64_t{0x7FFFFF}) | (context_ & 0x7FFFF0);
      break;
    case kCp0PageMask:
      page_mask_ = v32 & kPageMaskMask;
      break;
    case kCp0Wired:
      wired_ = v32 & 0x3F;
      random_anchor_ = 47;  // writing Wired sets Random to its upper bound
      random_anchor_retired_ = retired();
      break;
    case kCp0Count:
      if (hooks_) {
        hooks_->WriteCount(*this, v32);
      } else {
        count_offset_ = v32 - retired();
      }
      break;
    case kCp0EntryHi: {
      const uint64_t next = v & kEntryHiMask;
      if ((next & 0xFF) != (entry_hi_ & 0xFF)) FlushTranslations();  // the ASID changed
      entry_hi_ = next;
      break;
    }
    case kCp0Compare:
      compare_ = v32;
      if (hooks_) hooks_->WriteCompare(*this, v32);
      break;
    case kCp0Status:
      status_ = (v32 & kStatusWritable) | (status_ & v32 & kStatusTs);
      UpdateMode();
      UpdateInterruptPending();
      break;
    case kCp0Cause:  // only the software interrupt bits IP0/IP1 are writable
      cause_ = (cause_ & ~0x300u) | (v32 & 0x300u);
      UpdateInterruptPending();
      break;
    case kCp0Epc:
      epc_ = v;
      break;
    case kCp0Config:  // K0 and CU; the rest reflects the hardware configuration
      config_reg_ = (config_reg_ & ~0xFu) | (v32 & 0xFu);
      UpdateMode();
      break;
    case kCp0LLAddr:
      lladdr_ = v32;
      break;
    case kCp0WatchLo:
      watch_lo_ = v32 & 0xFFFFFFFBu;
      FlushTranslations();
      break;
    case kCp0WatchHi:
      watch_hi_ = v32 & 0xFu;
      FlushTranslations();
      break;
    case kCp0XContext:
      xcontext_ = (v & ~uint64_t{0x1FFFFFFFF}) | (xcontext_ & 0x1FFFFFFFF);
      break;
    case kCp0Ecc:
      ecc_ = v32 & 0xFF;
      break;
    case kCp0TagLo:
      tag_lo_ = v32 & 0xFFFFFFC1u;
      break;
    case kCp0TagHi:
      tag_hi_ = 0;
      break;  // reserved on the R4400: reads as zero
    case kCp0ErrorEpc:
      error_epc_ = v;
      break;
    default:
      break;  // read-only (Random, BadVAddr, PRId, CacheErr) or reserved
  }
}

void Cpu::LoadCp0(int reg, uint64_t v) {
  const uint32_t v32 = static_cast<uint32_t>(v);
  switch (reg) {
    case kCp0Index:
      index_ = v32 & 0x8000003Fu;
      break;
    case kCp0Random:
      random_anchor_ = v32 & 0x3F;
      random_anchor_retired_ = retired();
      break;
    case kCp0EntryLo0:
      entry_lo0_ = v;
      break;
    case kCp0EntryLo1:
      entry_lo1_ = v;
      break;
    case kCp0Context:
      context_ = v;
      break;
    case kCp0PageMask:
      page_mask_ = v32;
      break;
    case kCp0Wired:
      wired_ = v32 & 0x3F;
      break;  // Random is loaded on its own
    case kCp0BadVAddr:
      bad_vaddr_ = v;
      break;
    case kCp0Count:
      count_offset_ = v32 - retired();
      break;
    case kCp0EntryHi:
      entry_hi_ = v;
      break;
    case kCp0Compare:
      compare_ = v32;
      break;
    case kCp0Status:
      status_ = v32;
      break;
    case kCp0Cause:
      cause_ = v32;
      break;
    case kCp0Epc:
      epc_ = v;
      break;
    case kCp0Config:
      config_reg_ = v32;
      break;
    case kCp0LLAddr:
      lladdr_ = v32;
      break;
    case kCp0WatchLo:
      watch_lo_ = v32;
      break;
    case kCp0WatchHi:
      watch_hi_ = v32;
      break;
    case kCp0XContext:
      xcontext_ = v;
      break;
    case kCp0Ecc:
      ecc_ = v32;
      break;
    case kCp0CacheErr:
      cache_err_ = v32;
      break;
    case kCp0TagLo:
      tag_lo_ = v32;
      break;
    case kCp0TagHi:
      tag_hi_ = v32;
      break;
    case kCp0ErrorEpc:
      error_epc_ = v;
      break;
    default:
      return;  // PRId comes from CpuConfig; 7, 21-25 and 31 are reserved
  }
  UpdateMode();
  UpdateInterruptPending();
  FlushTranslations();
}

Cpu::Cp0State Cpu::StoredCp0() const {
  Cp0State s;
  s.index = index_;
  s.random = random();
  s.page_mask = page_mask_;
  s.wired = wired_;
  s.count = static_cast<uint32_t>(count_offset_ + retired());
  s.compare = compare_;
  s.status = status_;
  s.cause = cause_;
  s.prid = config_.prid;
  s.config = config_reg_;
  s.lladdr = lladdr_;
  s.watch_lo = watch_lo_;
  s.watch_hi = watch_hi_;
  s.ecc = ecc_;
  s.cache_err = cache_err_;
  s.tag_lo = tag_lo_;
  s.tag_hi = tag_hi_;
  s.entry_lo0 = entry_lo0_;
  s.entry_lo1 = entry_lo1_;
  s.context = context_;
  s.bad_vaddr = bad_vaddr_;
  s.entry_hi = entry_hi_;
  s.epc = epc_;
  s.xcontext = xcontext_;
  s.error_epc = error_epc_;
  s.ll_bit = ll_bit_;
  return s;
}

Cpu::Cp0State Cpu::SaveCp0() {
  Cp0State s = StoredCp0();
  s.count = static_cast<uint32_t>(ReadCp0(kCp0Count));
  return s;
}

void Cpu::RestoreCp0(const Cp0State& s) {
  index_ = s.index;
  page_mask_ = s.page_mask;
  wired_ = s.wired;
  random_anchor_ = s.random;
  random_anchor_retired_ = retired();
  compare_ = s.compare;
  status_ = s.status;
  cause_ = s.cause;
  config_.prid = s.prid;
  config_reg_ = s.config;
  lladdr_ = s.lladdr;
  watch_lo_ = s.watch_lo;
  watch_hi_ = s.watch_hi;
  ecc_ = s.ecc;
  cache_err_ = s.cache_err;
  tag_lo_ = s.tag_lo;
  tag_hi_ = s.tag_hi;
  entry_lo0_ = s.entry_lo0;
  entry_lo1_ = s.entry_lo1;
  context_ = s.context;
  bad_vaddr_ = s.bad_vaddr;
  entry_hi_ = s.entry_hi;
  epc_ = s.epc;
  xcontext_ = s.xcontext;
  error_epc_ = s.error_epc;
  ll_bit_ = s.ll_bit;
  WriteCp0(kCp0Count, s.count);
  mode_key_ = ~0u;  // forces a flush of every cached translation
  UpdateMode();
  UpdateInterruptPending();
}

void Cpu::TlbRead() {
  const int i = index_ & 0x3F;
  if (i >= Tlb::kEntries) return;
  const TlbEntry& e = tlb_.entry(i);
  const uint64_t g = e.global ? 1 : 0;
  if ((e.entry_hi & 0xFF) != (entry_hi_ & 0xFF)) FlushTranslations();
  page_mask_ = e.page_mask;
  entry_hi_ = e.entry_hi;
  entry_lo0_ = e.entry_lo[0] | g;
  entry_lo1_ = e.entry_lo[1] | g;
}

void Cpu::TlbWriteIndexed() {
  const int i = index_ & 0x3F;
  if (i >= Tlb::kEntries) return;
  ForgetTranslationsOf(tlb_.entry(i));
  tlb_.Write(i, page_mask_, entry_hi_, entry_lo0_, entry_lo1_);
}

void Cpu::TlbWriteRandom() {
  const int i = static_cast<int>(random());
  ForgetTranslationsOf(tlb_.entry(i));
  tlb_.Write(i, page_mask_, entry_hi_, entry_lo0_, entry_lo1_);
}

// A TLB write replaces one entry, so only translations that entry produced can go stale (the new
// entry's pages had no translation: the R4400 allows no two entries for one page). Dropping the
// cached-translation slots its pages index is enough, and much cheaper than emptying every table
// on each refill; for large pages that touch every slot, empty them all.
void Cpu::ForgetTranslationsOf(const TlbEntry& old) {
  const uint64_t pages = 2 * old.page_bytes() / 0x1000;
  if (pages >= kMicroTlbSize) {
    FlushTranslations();
    return;
  }
  const uint64_t first = (old.entry_hi & old.vpn2_mask()) >> 12;
  for (uint64_t p = 0; p < pages; ++p) {
    for (auto& table : utlb_) table[(first + p) & (kMicroTlbSize - 1)] = MicroTlbEntry{};
  }
  ForgetDataKeys();
  InvalidateFetchWindow();
}

void Cpu::TlbProbe() {
  const int i = tlb_.Probe(entry_hi_);
  index_ = i >= 0 ? static_cast<uint32_t>(i) : (0x80000000u | (index_ & 0x3F));
}

void Cpu::Eret() {
  uint64_t target;
  if (status_ & kStatusErl) {
    target = error_epc_;
    status_ &= ~kStatusErl;
  } else {
    target = epc_;
    status_ &= ~kStatusExl;
  }
  ll_bit_ = false;
  ++branch_count_;  // a control transfer without a branch: keeps (branch count, PC) unique
  pc_ = target;
  flow_ = kReturned;
  UpdateMode();
  UpdateInterruptPending();
}

}  // namespace citcat::mips
