// i486 paging: the two-level walk over 4 KB pages, accessed and dirty bits, the U/S and R/W
// checks with CR0.WP, and the #PF error code, with the TLB (tlb.h) in front. The walk reads and
// updates entries through a PageTableMemory; CachedPageTables does it as an i486 does, through
// the on-chip cache like any data read, the bit updates as locked read-modify-write cycles.
// The caller owns CR0.PG (no translation while it is clear), CR2 and the #PF delivery; it
// passes `user` for CPL 3 accesses other than the implicitly supervisor ones (descriptor
// tables, TSS, the stacks of a privilege change).
#ifndef CITCAT_SIMCORE_X86_PAGING_H_
#define CITCAT_SIMCORE_X86_PAGING_H_

#include <cstdint>
#include <optional>

#include "simcore/bus.h"
#include "simcore/x86/cache.h"
#include "simcore/x86/tlb.h"

namespace citcat::x86 {

// How the walk reaches the page directory and page tables. Entries are 4-byte aligned,
// little-endian; `pcd` is the cache-disable bit of the table holding the entry (CR3.PCD for the
// directory, the PDE's PCD for a page table).
class PageTableMemory {
 public:
  virtual ~PageTableMemory() = default;
  // A plain data read of the entry.
  virtual uint32_t ReadEntry(uint32_t paddr, bool pcd) = 0;
  // A locked read-modify-write: reads the entry again, ORs in `bits`, writes it back; returns
  // the value written.
  virtual uint32_t SetBits(uint32_t paddr, uint32_t bits, bool pcd) = 0;
};

// Page tables in cacheable memory, reached through the on-chip cache: entry reads hit or fill
// lines; a bit update is a locked kUncachedRead of the 4-byte entry (which invalidates a cached
// copy) followed by a locked kWriteThrough of the new value (kUncachedWrite when `pcd`).
class CachedPageTables : public PageTableMemory {
 public:
  explicit CachedPageTables(Cache& cache) : cache_(cache) {}
  uint32_t ReadEntry(uint32_t paddr, bool pcd) override;
  uint32_t SetBits(uint32_t paddr, uint32_t bits, bool pcd) override;

 private:
  Cache& cache_;
};

// #PF error code bits (the i486 has no others).
inline constexpr uint32_t kPfProtection = 1u << 0;  // 0: page not present; 1: rights violated
inline constexpr uint32_t kPfWrite = 1u << 1;       // the access was a write
inline constexpr uint32_t kPfUser = 1u << 2;        // the access was made in user mode

struct Translation {
  bool ok = false;
  uint32_t paddr = 0;  // when ok
  bool pcd = false;    // the page's PCD and PWT, for the cache and the bus (when ok)
  bool pwt = false;
  uint32_t error_code = 0;  // when not ok: the #PF error code (CR2 = the linear address)
};

class Paging {
 public:
  explicit Paging(PageTableMemory& memory) : memory_(memory) {}

  // A CR3 load: the new directory base (and its PCD/PWT); flushes the TLB. A task switch that
  // loads CR3 comes here too.
  void LoadCr3(uint32_t cr3) {
    cr3_ = cr3;
    tlb_.FlushAll();
  }
  uint32_t cr3() const { return cr3_; }
  void set_wp(bool wp) { wp_ = wp; }  // CR0.WP
  bool wp() const { return wp_; }

  // Translates one access of `linear` (instruction fetches are reads). A TLB hit decides the
  // rights by itself; the walk runs on a miss, and on a write to a page whose cached entry is not
  // yet dirty (so that the dirty bit gets set in memory).
  Translation Translate(uint32_t linear, bool write, bool user) {
    if (const TlbEntry* e = tlb_.Lookup(linear)) {
      if (!Allowed(e->pte, write, user)) return Fault(kPfProtection, write, user);
      if (!write || e->dirty()) {
        return {true, e->frame() | (linear & 0xFFF), e->pcd(), e->pwt(), 0};
      }
    }
    return Walk(linear, write, user);
  }
  // Whether combined rights (kPteUser / kPteWritable) allow the access: user mode needs U/S = 1,
  // and R/W = 1 to write; supervisor mode may write read-only pages unless CR0.WP is set.
  bool Allowed(uint32_t rights, bool write, bool user) const {
    if (user) return (rights & kPteUser) && (!write || (rights & kPteWritable));
    return !write || !wp_ || (rights & kPteWritable);
  }

  Tlb& tlb() { return tlb_; }
  const Tlb& tlb() const { return tlb_; }

 private:
  Translation Walk(uint32_t linear, bool write, bool user);
  static Translation Fault(uint32_t p, bool write, bool user) {
    return {false, 0, false, false, p | (write ? kPfWrite : 0) | (user ? kPfUser : 0)};
  }

  PageTableMemory& memory_;
  Tlb tlb_;
  uint32_t cr3_ = 0;
  bool wp_ = false;
};

}  // namespace citcat::x86

#endif  // CITCAT_SIMCORE_X86_PAGING_H_
