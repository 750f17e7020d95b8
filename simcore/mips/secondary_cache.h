// Optional R4400 secondary cache: unified, direct-mapped, physically indexed and tagged,
// write-back, between the primary caches and the system bus. It is itself a Bus to the primary
// caches (they fill from it and write back into it) and sends its own line fills and
// write-backs to the real bus, so with it configured the CAT sees secondary-cache traffic.
// Inclusion is kept as on the R4400: before a secondary line is replaced, the CPU writes back and
// invalidates every primary line inside it (the eviction callback).
#ifndef CITCAT_SIMCORE_MIPS_SECONDARY_CACHE_H_
#define CITCAT_SIMCORE_MIPS_SECONDARY_CACHE_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "simcore/bus.h"
#include "simcore/mips/cache.h"

namespace citcat::mips {

class SecondaryCache : public simcore::Bus {
 public:
  // `line_bytes` must be at least the primary line size.
  SecondaryCache(simcore::Bus& bus, uint32_t size_bytes, uint32_t line_bytes);

  // Called with the physical line address and size before a valid line is replaced or
  // invalidated by a CACHE operation, so that the primaries can give up their copies.
  void set_evict_callback(std::function<void(uint64_t, uint32_t)> cb) { evict_ = std::move(cb); }
  // The side-band counter to stamp on this cache's own bus records.
  void set_branch_count(const uint64_t* bc) { branch_count_ = bc; }

  // Primary-cache traffic: kFill reads and kWriteBack writes of primary lines.
  void Read(const cat::BusRecord& record, std::span<uint8_t> data) override;
  void Write(const cat::BusRecord& record) override;
  bool Peek(uint64_t address, std::span<uint8_t> data) const override;

  // CACHE operations on the secondary cache (op bits 20..18), by physical address.
  void Operate(uint32_t kind, uint64_t paddr, uint32_t* tag_lo);

  const Cache& lines() const { return cache_; }
  // Direct access (loading a machine state): the primaries must not hold lines outside it.
  Cache& lines() { return cache_; }
  void InvalidateAll() { cache_.InvalidateAll(); }
  uint32_t line_bytes() const { return cache_.line_bytes(); }

 private:
  // Makes the line holding `paddr` present (writing back and filling as needed); its index.
  uint32_t Ensure(uint64_t paddr);
  void Evict(uint32_t index);
  uint64_t bc() const { return branch_count_ ? *branch_count_ : 0; }

  simcore::Bus& bus_;
  Cache cache_;  // physically indexed: Index() is given the physical address
  std::function<void(uint64_t, uint32_t)> evict_;
  const uint64_t* branch_count_ = nullptr;
};

}  // namespace citcat::mips

#endif  // CITCAT_SIMCORE_MIPS_SECONDARY_CACHE_H_
