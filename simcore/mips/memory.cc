// Address translation (segments and the JTLB), uncached bus access, partial stores and the
// CACHE instruction.
#include <algorithm>
#include <cstring>

#include "simcore/mips/cpu.h"

namespace citcat::mips {
namespace {

constexpr uint64_t kXuseg = uint64_t{1} << 40;  // 40-bit virtual addresses in 64-bit mode

uint64_t Sext32(uint64_t v) { return static_cast<uint64_t>(static_cast<int32_t>(v)); }

}  // namespace

Cpu::Translation Cpu::Walk(uint64_t va, Access access) const {
  Translation t;
  const bool store = access == Access::kStore;
  auto address_error = [&] {
    t.fault = store ? kExcAdes : kExcAdel;
    return t;
  };
  auto unmapped = [&](uint64_t pa, bool cached) {
    t.ok = true;
    t.paddr = pa;
    t.cached = cached;
    return t;
  };
  const bool k0_cached = (config_reg_ & 7) != 2;
  const bool erl = status_ & kStatusErl;
  bool mapped = false;
  if (!addr64_) {
    if (va != Sext32(va)) return address_error();
    const uint32_t a = static_cast<uint32_t>(va);
    if (a < 0x80000000u) {
      if (erl) return unmapped(a, false);  // kuseg is unmapped and uncached while ERL=1
      mapped = true;
    } else if (mode_ == 2) {
      return address_error();
    } else if (mode_ == 1) {
      if (a < 0xC0000000u || a >= 0xE0000000u) return address_error();
      mapped = true;
    } else if (a < 0xA0000000u) {
      return unmapped(a - 0x80000000u, k0_cached);
    } else if (a < 0xC0000000u) {
      return unmapped(a - 0xA0000000u, false);
    } else {
      mapped = true;
    }
  } else {
    switch (va >> 62) {
      case 0:  // xkuseg / xsuseg / xuseg
        if (va >= kXuseg) return address_error();
        if (erl && va < 0x80000000u) return unmapped(va, false);
        mapped = true;
        break;
      case 1:  // xksseg / xsseg
        if (mode_ == 2 || (va & 0x3FFFFFFFFFFFFFFFull) >= kXuseg) return address_error();
        mapped = true;
        break;
      case 2:  // xkphys: unmapped, bits 61..59 select the cache algorithm
        if (mode_ != 0 || (va & 0x07FFFFF000000000ull)) return address_error();
        return unmapped(va & 0xFFFFFFFFFull, ((va >> 59) & 7) != 2);
      default:
        if (va >= 0xFFFFFFFF80000000ull) {  // the 32-bit compatibility segments
          const uint32_t a = static_cast<uint32_t>(va);
          if (mode_ == 2) return address_error();
          if (mode_ == 1) {
            if (a < 0xC0000000u || a >= 0xE0000000u) return address_error();
          } else if (a < 0xA0000000u) {
            return unmapped(a - 0x80000000u, k0_cached);
          } else if (a < 0xC0000000u) {
            return unmapped(a - 0xA0000000u, false);
          }
          mapped = true;
        } else {  // xkseg
          if (mode_ != 0 || va >= 0xC00000FF80000000ull) return address_error();
          mapped = true;
        }
    }
  }
  (void)mapped;
  const int i = tlb_.Lookup(va, static_cast<uint8_t>(entry_hi_));
  if (i < 0) {
    t.fault = store ? kExcTlbs : kExcTlbl;
    t.refill = true;
    return t;
  }
  const TlbEntry& e = tlb_.entry(i);
  const uint64_t page = e.page_bytes();
  const uint64_t lo = e.entry_lo[(va & page) ? 1 : 0];
  if (!(lo & 2)) {  // V
    t.fault = store ? kExcTlbs : kExcTlbl;
    return t;
  }
  if (store && !(lo & 4)) {  // D
    t.fault = kExcMod;
    return t;
  }
  t.ok = true;
  t.paddr = (((lo >> 6) << 12) & ~(page - 1) & 0xFFFFFFFFFull) | (va & (page - 1));
  t.cached = ((lo >> 3) & 7) != 2;
  t.writable = (lo & 4) != 0;
  return t;
}

bool Cpu::Translate(uint64_t vaddr, Access access, uint64_t* paddr, bool* cached) {
  const Translation t = Walk(vaddr, access);
  if (!t.ok) {
    if (t.fault == kExcAdel || t.fault == kExcAdes) {
      AddressError(vaddr, access);
    } else {
      TlbException(t.fault, vaddr, t.refill);
    }
    return false;
  }
  const bool watching = (watch_lo_ & 3) != 0;
  const uint64_t watch_page = ((uint64_t{watch_hi_ & 0xF} << 32) | (watch_lo_ & ~7u)) >> 12;
  if (watching && access != Access::kFetch && CheckWatch(t.paddr, access)) return false;
  // Cache the 4 KB page for the fast path, except the watched one (it must see every access).
  if (!watching || (t.paddr >> 12) != watch_page) {
    MicroTlbEntry& e = utlb_cur_[(vaddr >> 12) & (kMicroTlbSize - 1)];
    e.vpage = vaddr >> 12;
    e.pbase = t.paddr & ~uint64_t{0xFFF};
    e.cached = t.cached;
    e.writable = t.writable;
  }
  *paddr = t.paddr;
  *cached = t.cached;
  return true;
}

bool Cpu::CheckWatch(uint64_t paddr, Access access) {
  const uint64_t watch = (uint64_t{watch_hi_ & 0xF} << 32) | (watch_lo_ & ~7u);
  const bool enabled = access == Access::kStore ? (watch_lo_ & 1) : (watch_lo_ & 2);
  if (!enabled || (paddr & ~uint64_t{7}) != watch) return false;
  if (status_ & (kStatusExl | kStatusErl)) return false;  // not taken inside handlers
  Exception(kExcWatch);
  return true;
}

void Cpu::UncachedRead(uint64_t paddr, uint8_t* bytes, int n, uint8_t flags) {
  std::span<uint8_t> data(bytes, n);
  cat::BusRecord rec;
  rec.kind = cat::RecordKind::kUncachedRead;
  rec.flags = flags;
  rec.address = paddr;
  rec.branch_count = branch_count_;
  rec.data = data;
  bus_.Read(rec, data);
}

void Cpu::UncachedWrite(uint64_t paddr, const uint8_t* bytes, int n) {
  cat::BusRecord rec;
  rec.kind = cat::RecordKind::kUncachedWrite;
  rec.address = paddr;
  rec.branch_count = branch_count_;
  rec.data = std::span<const uint8_t>(bytes, n);
  bus_.Write(rec);
}

bool Cpu::LoadSlow(uint64_t vaddr, uint8_t* bytes, int n) {
  uint64_t pa;
  bool cached;
  if (!TranslateData(vaddr, Access::kLoad, &pa, &cached)) return false;
  if (!cached) {
    UncachedRead(pa, bytes, n);
    return true;
  }
  std::memcpy(bytes, DataLine(vaddr, pa, false), n);
  if (!DataFast(vaddr, false)) RememberDataLine(vaddr, false);  // keep a store key it has
  return true;
}

bool Cpu::StoreSlow(uint64_t vaddr, const uint8_t* bytes, int n) {
  uint64_t pa;
  bool cached;
  if (!TranslateData(vaddr, Access::kStore, &pa, &cached)) return false;
  if (!cached) {
    UncachedWrite(pa, bytes, n);
    return true;
  }
  std::memcpy(DataLine(vaddr, pa, true), bytes, n);
  // The store made the line dirty and the page is writable (else it would have faulted).
  RememberDataLine(vaddr, true);
  return true;
}

void Cpu::RememberDataLine(uint64_t vaddr, bool store) {
  // Only a page the micro-TLB holds gets a key: never the watched one. And none while an observer
  // is told of every access (Accessed).
  if (observer_ != nullptr) return;
  if (utlb_cur_[(vaddr >> 12) & (kMicroTlbSize - 1)].vpage != (vaddr >> 12)) return;
  data_keys_[dcache_.Index(vaddr)] = DataKey{DataVline(vaddr), data_stamp_ | (store ? 1 : 0)};
}

template <typename T>
bool Cpu::StorePartial(uint64_t vaddr, T value, T mask) {
  constexpr int kN = sizeof(T);
  uint64_t pa;
  bool cached;
  // Translate the instruction's own (unaligned) address: a fault reports it in BadVAddr.
  if (!TranslateData(vaddr, Access::kStore, &pa, &cached)) return false;
  vaddr &= ~uint64_t{kN - 1};
  pa &= ~uint64_t{kN - 1};
  // Lane s (0 = least significant byte) lives at offset N-1-s (big-endian) or s (little).
  uint8_t bytes[kN];
  int first = kN, last = -1;
  for (int s = 0; s < kN; ++s) {
    if (!((mask >> (8 * s)) & 0xFF)) continue;
    const int off = data_big_ ? kN - 1 - s : s;
    bytes[off] = static_cast<uint8_t>(value >> (8 * s));
    first = std::min(first, off);
    last = std::max(last, off);
  }
  if (cached) {
    uint8_t* line = DataLine(vaddr, pa, true);
    std::copy(bytes + first, bytes + last + 1, line + first);
  } else {
    UncachedWrite(pa + first, bytes + first, last - first + 1);
  }
  return true;
}
template bool Cpu::StorePartial<uint32_t>(uint64_t, uint32_t, uint32_t);
template bool Cpu::StorePartial<uint64_t>(uint64_t, uint64_t, uint64_t);

void Cpu::CacheOp(uint32_t op, uint64_t vaddr) {
  const uint32_t which = op & 3;  // 0 primary I, 1 primary D, 2/3 secondary (unified here)
  const uint32_t kind = op >> 2;
  if (which >= 2 && !scache_) return;  // no secondary cache: the operation does nothing
  uint64_t pa = 0;
  bool cached = true;
  // Every CACHE operation translates its address (index operations normally use kseg0).
  if (!Translate(vaddr, Access::kLoad, &pa, &cached)) return;
  if (which >= 2) {
    scache_->Operate(kind, pa, &tag_lo_);
    return;
  }
  Cache& cache = which == 0 ? icache_ : dcache_;
  const uint32_t index = cache.Index(vaddr);
  if (which == 1) ForgetDataKeys();  // any D-cache operation may change the line or its state
  Cache::Line& line = cache.line(index);
  if (which == 0) InvalidateFetchWindow();  // any I-cache operation may change the line
  const bool hit = cache.Hit(vaddr, pa);
  switch (kind) {
    case 0:  // I: Index_Invalidate; D: Index_Writeback_Invalidate
      if (which == 1) cache.WriteBack(index, *line_bus_, branch_count_);
      cache.Invalidate(index);
      break;
    case 1: {  // Index_Load_Tag: PTagLo = PA[35:12], PState (0 invalid, 2 clean, 3 dirty)
      uint32_t state = cache.valid(index) ? (line.dirty ? 3 : 2) : 0;
      tag_lo_ = static_cast<uint32_t>((cache.line_address(index) >> 12) << 8) | (state << 6);
      tag_hi_ = 0;
      break;
    }
    case 2: {  // Index_Store_Tag
      const uint32_t state = (tag_lo_ >> 6) & 3;
      const uint64_t line_pa = (uint64_t{tag_lo_ >> 8} << 12) | cache.LineOf(vaddr & 0xFFF);
      line.tag = state ? (line_pa | 1) : 0;
      line.dirty = state == 3 && which == 1;
      break;
    }
    case 3:  // D: Create_Dirty_Exclusive (no fill; the old line is written back if dirty)
      if (which == 1 && !hit) {
        cache.WriteBack(index, *line_bus_, branch_count_);
        line.tag = cache.TagFor(pa);
      }
      if (which == 1) line.dirty = true;
      break;
    case 4:  // Hit_Invalidate
      if (hit) cache.Invalidate(index);
      break;
    case 5:  // I: Fill; D: Hit_Writeback_Invalidate
      if (which == 0) {
        RefillILine(index, pa);
      } else if (hit) {
        cache.WriteBack(index, *line_bus_, branch_count_);
        cache.Invalidate(index);
      }
      break;
    case 6:  // Hit_Writeback (the I-cache writes its line unconditionally)
      if (hit) cache.WriteBack(index, *line_bus_, branch_count_, which == 0);
      break;
    default:
      break;
  }
}

bool Cpu::DebugTranslate(uint64_t vaddr, uint64_t* paddr, bool* cached) {
  const Translation t = Walk(vaddr, Access::kLoad);
  if (!t.ok) return false;
  *paddr = t.paddr;
  *cached = t.cached;
  return true;
}

bool Cpu::PeekVirtual(uint64_t vaddr, std::span<uint8_t> out) {
  for (size_t i = 0; i < out.size(); ++i) {
    uint64_t pa;
    bool cached;
    if (!DebugTranslate(vaddr + i, &pa, &cached)) return false;
    if (cached && dcache_.Hit(vaddr + i, pa)) {
      out[i] = *dcache_.ByteAt(vaddr + i);
    } else if (!line_bus_->Peek(pa, out.subspan(i, 1))) {
      return false;
    }
  }
  return true;
}

}  // namespace citcat::mips
