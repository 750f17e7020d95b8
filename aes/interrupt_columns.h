// Interrupts in columns (aes.proto's InterruptBlock, docs/ims-aes.md, "Interrupts in columns"):
// what `citcat pack` stores instead of one message per interrupt. An interrupt's information is a
// branch-count delta around a near-constant timer period, a PC from a small set and a vector;
// each goes to a column of its own, where the archive's compressor finds its repeats.
#ifndef CITCAT_AES_INTERRUPT_COLUMNS_H_
#define CITCAT_AES_INTERRUPT_COLUMNS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "aes/aes.pb.h"

namespace citcat::aes {

// The most interrupts one block holds: its columns stay below kMaxEventBytes whatever they hold.
inline constexpr uint32_t kInterruptsPerBlock = 1024;
// How many recently used PCs a PC code may name.
inline constexpr size_t kRecentPcs = 255;

// The PCs used most recently, most recent first (move to front).
class RecentPcs {
 public:
  // The code of `pc` (0 if it is not among them), and `pc` moved to the front.
  uint64_t Use(uint64_t pc);
  // The PC of code `code` > 0 moved to the front, or false if there is none.
  bool Take(uint64_t code, uint64_t& pc);
  void Add(uint64_t pc);  // a new PC at the front

 private:
  std::vector<uint64_t> pcs_;
};

// Puts interrupts, in the order taken, into blocks.
class InterruptColumnWriter {
 public:
  void Add(const Interrupt& irq);
  uint32_t size() const { return block_.count(); }
  // The block so far; the next one continues from it.
  InterruptBlock Take();

 private:
  InterruptBlock block_;
  uint64_t last_branch_count_ = 0, last_new_pc_ = 0, last_cat_record_ = 0;
  RecentPcs recent_;
};

// Reads blocks back, each continuing the one before, and hands out their interrupts in order.
class InterruptColumnReader {
 public:
  // Reads the next block (once the one before is used up), or says what in it is wrong.
  absl::Status Load(const InterruptBlock& block);
  // The interrupts of the block loaded last.
  size_t loaded() const { return pending_.size(); }
  // Sets `irq` to the loaded block's next interrupt, or returns false when it is used up.
  bool Next(Interrupt& irq) {
    if (next_ == pending_.size()) return false;
    irq = std::move(pending_[next_++]);
    return true;
  }

 private:
  uint64_t last_branch_count_ = 0, last_new_pc_ = 0, last_cat_record_ = 0;
  RecentPcs recent_;
  uint64_t blocks_ = 0;
  std::vector<Interrupt> pending_;
  size_t next_ = 0;
};

// `schedule`'s interrupt blocks, if any, as its `interrupts` list.
absl::Status ExpandInterruptBlocks(EventSchedule& schedule);
// The other way: `schedule`'s interrupts list into blocks.
void PutInterruptsInBlocks(EventSchedule& schedule);

}  // namespace citcat::aes

#endif  // CITCAT_AES_INTERRUPT_COLUMNS_H_
