// The i486's on-chip cache: 8 KB unified, 4-way set-associative, 128 sets of 16-byte lines,
// physically indexed and tagged, pseudo-LRU (plru.h), write-through with no write allocation,
// holding the real line data. Every bus cycle it makes is a cat::BusRecord on the simcore::Bus,
// stamped with the caller's branch-count side band:
//   - a cacheable read miss fills the whole line: one 16-byte kFill at the line address;
//   - a read that may not be cached (device, PCD, CR0.CD) and misses is a kUncachedRead;
//   - every store is a kWriteThrough (cacheable address) or kUncachedWrite (not cacheable), and
//     also updates the line when it hits; only CD = NW = 1 keeps a store hit off the bus;
//   - operands that cross a 4-byte boundary are split there into two bus cycles, the higher
//     addressed piece first, as the i486 bus unit does (Intel486 hardware reference, "operand
//     alignment").
// Locked reads (LOCK#, XCHG, page-table updates) invalidate the line they touch and always go
// to the bus. Each line slot carries a generation number that changes whenever its contents do,
// and an optional LineObserver is told, so predecoded instructions can be tied to a line.
// The choices the manual leaves open are in docs/machines/i486-core.md ("Cache, TLB and paging").
#ifndef CITCAT_SIMCORE_X86_CACHE_H_
#define CITCAT_SIMCORE_X86_CACHE_H_

#include <array>
#include <cstdint>
#include <cstring>
#include <span>

#include "simcore/bus.h"
#include "simcore/x86/plru.h"

namespace citcat::x86 {

// What a memory access is, besides its address and bytes.
struct Access {
  bool cacheable = true;  // the address may be cached (KEN#): false for device windows
  bool pcd = false;       // page-level cache disable of the translation (CR3/PDE for walks)
  bool code = false;      // instruction fetch: the bus record carries kFlagCode
  bool locked = false;    // part of a locked read-modify-write: kFlagLocked, always on the bus
};

// Told when predecoded instructions of a line must be dropped.
class LineObserver {
 public:
  virtual ~LineObserver() = default;
  // The line at physical `line_address` changed (a store hit it) or left the cache (replaced,
  // snooped or invalidated by a locked read).
  virtual void OnLineChanged(uint32_t line_address) = 0;
  // Every line left the cache (INVD, WBINVD, FLUSH#).
  virtual void OnAllInvalidated() = 0;
};

class Cache {
 public:
  static constexpr uint32_t kLineBytes = 16;
  static constexpr uint32_t kSets = 128;
  static constexpr uint32_t kWays = 4;
  static constexpr uint32_t kSlots = kSets * kWays;
  static constexpr uint32_t kSizeBytes = kSlots * kLineBytes;  // 8 KB

  // A line slot and the generation its contents had when the caller looked at them.
  struct LineRef {
    uint32_t slot = 0;  // set * kWays + way
    uint32_t generation = 0;
  };

  // `branch_count` is the side-band counter; it is read whenever a record is made.
  Cache(simcore::Bus& bus, const uint64_t& branch_count);

  // CR0.CD and CR0.NW. CD = 1 stops new fills (hits are still served, stores still written
  // through); CD = NW = 1 also keeps store hits and snoop invalidations off (the caches' contents
  // are frozen). Loading CD = 0 with NW = 1 is a #GP(0) the caller raises; see ValidControl.
  void SetControl(bool cd, bool nw) {
    cd_ = cd;
    nw_ = nw;
  }
  static constexpr bool ValidControl(bool cd, bool nw) { return cd || !nw; }
  bool cd() const { return cd_; }
  bool nw() const { return nw_; }

  // A read or write of a 1-, 2- or 4-byte operand (any alignment; `bytes` in address order).
  void Read(uint32_t paddr, std::span<uint8_t> bytes, Access access) {
    if (!ReadHit(paddr, bytes, access)) ReadSlow(paddr, bytes, access);
  }
  void Write(uint32_t paddr, std::span<const uint8_t> bytes, Access access);
  // Read in two halves, for a caller that works out the access's kind only when it misses: a read
  // that hits and lies inside one aligned 4-byte word is served by ReadHit as Read serves it (the
  // replacement bits updated), true; otherwise ReadHit does nothing and returns false, and
  // ReadSlow does the rest of Read.
  bool ReadHit(uint32_t paddr, std::span<uint8_t> bytes) { return ReadHit(paddr, bytes, Access{}); }
  void ReadSlow(uint32_t paddr, std::span<uint8_t> bytes, Access access);

  // Instruction fetch of a whole line: the line holding `paddr`, filled on a miss when the access
  // may be cached (a kFill with kFlagCode). Returns the line's 16 bytes and sets `ref`; returns
  // nullptr when the line is absent and may not be filled (fetch through Read with code = true).
  const uint8_t* FetchLine(uint32_t paddr, Access access, LineRef* ref);
  // Whether the contents a LineRef saw are still those of its slot.
  bool Current(LineRef ref) const { return generation_[ref.slot] == ref.generation; }
  // FetchLine again of a line whose LineRef is Current: the same replacement-bit update,
  // without the lookup.
  void Touch(LineRef ref) {
    lru_[ref.slot / kWays] = PlruTouch(lru_[ref.slot / kWays], ref.slot % kWays);
  }

  // INVD, WBINVD and FLUSH#: every line invalid (write-through: nothing to write back).
  void InvalidateAll();
  // EADS# snoop (another master wrote memory): invalidates the line holding `paddr`; ignored
  // while CD = NW = 1, as on the i486.
  void SnoopInvalidate(uint32_t paddr);

  void set_observer(LineObserver* observer) { observer_ = observer; }

  // Inspection, for tests, debuggers and the i486 cache test registers.
  static constexpr uint32_t SetOf(uint32_t paddr) { return (paddr / kLineBytes) % kSets; }
  // The way holding `paddr`, or -1. Does not touch the replacement bits.
  int WayOf(uint32_t paddr) const;
  bool Contains(uint32_t paddr) const { return WayOf(paddr) >= 0; }
  uint8_t lru_bits(uint32_t set) const { return lru_[set]; }
  bool valid(uint32_t set, uint32_t way) const { return tag_[set * kWays + way] & 1; }
  uint32_t line_address(uint32_t set, uint32_t way) const {
    return tag_[set * kWays + way] & ~uint32_t{1};
  }
  const uint8_t* line_data(uint32_t set, uint32_t way) const {
    return data_[set * kWays + way].data();
  }
  // Every slot's bytes, one slot after the other (slot = set * kWays + way).
  const uint8_t* slot_bytes() const { return data_.front().data(); }
  uint32_t generation(uint32_t slot) const { return generation_[slot]; }
  // A set's replacement bits, as a saved state (a segment's start) had them.
  void set_lru_bits(uint32_t set, uint8_t bits) { lru_[set] = bits; }

  // The cache write of the test interface (TR5 control 01, test_registers.h): the slot of `set`
  // and `way` gets `data`, the line address `tag` names (its bits 31:11; the set supplies bits
  // 10:4) and `valid`, and the set's replacement bits are updated as for an access to the way.
  // The slot's generation changes and the observer is told of the line that left the slot and
  // of the one that came, so predecoded code never outlives the bytes it was decoded from. No
  // bus cycle.
  void WriteLine(uint32_t set, uint32_t way, uint32_t tag, bool valid,
                 std::span<const uint8_t, kLineBytes> data);

 private:
  static constexpr uint32_t TagOf(uint32_t paddr) { return (paddr & ~(kLineBytes - 1)) | 1; }
  // Whether a miss of this access may allocate a line.
  bool Fillable(Access a) const { return a.cacheable && !a.pcd && !cd_; }
  int Find(uint32_t set, uint32_t tag) const {
    const uint32_t* t = &tag_[set * kWays];
#pragma GCC unroll 4
    for (uint32_t w = 0; w < kWays; ++w) {
      if (t[w] == tag) return static_cast<int>(w);
    }
    return -1;
  }
  // A read inside one aligned 4-byte word that hits: served with the replacement-bit update.
  // False (with nothing done) otherwise.
  bool ReadHit(uint32_t paddr, std::span<uint8_t> bytes, Access a) {
    const uint32_t last = paddr + static_cast<uint32_t>(bytes.size()) - 1;
    if (((paddr ^ last) & ~uint32_t{3}) != 0 || a.locked) return false;
    const uint32_t set = SetOf(paddr);
    const int way = Find(set, TagOf(paddr));
    if (way < 0) return false;
    lru_[set] = PlruTouch(lru_[set], way);
    std::memcpy(bytes.data(), &data_[set * kWays + way][paddr % kLineBytes], bytes.size());
    return true;
  }
  // Reads or writes bytes that lie inside one aligned 4-byte word.
  void ReadPiece(uint32_t paddr, std::span<uint8_t> bytes, Access a);
  void WritePiece(uint32_t paddr, std::span<const uint8_t> bytes, Access a);
  // Allocates a way of `set` for the line holding `paddr` and fills it from the bus.
  uint32_t Fill(uint32_t set, uint32_t paddr, Access a);
  void InvalidateSlot(uint32_t slot);
  uint8_t Flags(Access a) const {
    return static_cast<uint8_t>((a.code ? cat::kFlagCode : 0) | (a.locked ? cat::kFlagLocked : 0));
  }

  simcore::Bus& bus_;
  const uint64_t* branch_count_;
  bool cd_ = false;
  bool nw_ = false;
  LineObserver* observer_ = nullptr;
  std::array<uint32_t, kSlots> tag_{};  // line address | 1 when valid, 0 when invalid
  std::array<uint32_t, kSlots> generation_{};
  std::array<uint8_t, kSets> lru_{};
  std::array<std::array<uint8_t, kLineBytes>, kSlots> data_{};
  static_assert(sizeof(data_) == kSizeBytes);  // slot_bytes: no gap between the lines
};

}  // namespace citcat::x86

#endif  // CITCAT_SIMCORE_X86_CACHE_H_
