#include "simcore/x86/paging.h"

namespace citcat::x86 {
namespace {

uint32_t LoadLe(const uint8_t* b) {
  return uint32_t{b[0]} | (uint32_t{b[1]} << 8) | (uint32_t{b[2]} << 16) | (uint32_t{b[3]} << 24);
}

void StoreLe(uint8_t* b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace

uint32_t CachedPageTables::ReadEntry(uint32_t paddr, bool pcd) {
  uint8_t b[4];
  cache_.Read(paddr, b, {.cacheable = true, .pcd = pcd});
  return LoadLe(b);
}

uint32_t CachedPageTables::SetBits(uint32_t paddr, uint32_t bits, bool pcd) {
  const Access locked{.cacheable = true, .pcd = pcd, .locked = true};
  uint8_t b[4];
  cache_.Read(paddr, b, locked);
  const uint32_t value = LoadLe(b) | bits;
  StoreLe(b, value);
  cache_.Write(paddr, b, locked);
  return value;
}

Translation Paging::Walk(uint32_t linear, bool write, bool user) {
  const uint32_t pde_addr = (cr3_ & kPteFrame) | ((linear >> 20) & 0xFFC);
  const bool dir_pcd = cr3_ & kPtePcd;
  const uint32_t pde = memory_.ReadEntry(pde_addr, dir_pcd);
  if (!(pde & kPtePresent)) return Fault(0, write, user);
  const uint32_t pte_addr = (pde & kPteFrame) | ((linear >> 10) & 0xFFC);
  const bool table_pcd = pde & kPtePcd;
  uint32_t pte = memory_.ReadEntry(pte_addr, table_pcd);
  if (!(pte & kPtePresent)) return Fault(0, write, user);
  const uint32_t rights = pde & pte & (kPteUser | kPteWritable);
  if (!Allowed(rights, write, user)) return Fault(kPfProtection, write, user);

  // Only a walk that succeeds marks the entries, directory first (see i486-core.md).
  if (!(pde & kPteAccessed)) memory_.SetBits(pde_addr, kPteAccessed, dir_pcd);
  const uint32_t needed = kPteAccessed | (write ? kPteDirty : 0);
  if ((pte & needed) != needed) pte = memory_.SetBits(pte_addr, needed, table_pcd);

  tlb_.Insert(linear, (pte & ~(kPteUser | kPteWritable)) | rights);
  return {true, (pte & kPteFrame) | (linear & 0xFFF), bool(pte & kPtePcd), bool(pte & kPtePwt), 0};
}

}  // namespace citcat::x86
