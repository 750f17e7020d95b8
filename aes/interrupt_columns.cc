#include "aes/interrupt_columns.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"

namespace citcat::aes {
namespace {

using google::protobuf::internal::WireFormatLite;

// The flags column's bits.
constexpr uint64_t kHasRepRemaining = 1, kHasCatRecord = 2, kHasDelaySlot = 4, kDelaySlot = 8,
                   kHasStepsAfterArrival = 16;

// A difference of two unsigned values, as a small unsigned number whichever its sign.
uint64_t ZigZag(uint64_t difference) {
  return WireFormatLite::ZigZagEncode64(static_cast<int64_t>(difference));
}
uint64_t UnZigZag(uint64_t v) { return static_cast<uint64_t>(WireFormatLite::ZigZagDecode64(v)); }

void Put(std::string* column, uint64_t v) {
  uint8_t bytes[10];  // the longest varint of 64 bits
  const uint8_t* end = google::protobuf::io::CodedOutputStream::WriteVarint64ToArray(v, bytes);
  column->append(reinterpret_cast<const char*>(bytes), end - bytes);
}

// One column being read: its varints in order, and whether it held exactly those asked for.
class Column {
 public:
  Column(const std::string& bytes, const char* name)
      : in_(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size())),
        size_(bytes.size()),
        name_(name) {}
  bool Get(uint64_t& v) { return in_.ReadVarint64(&v); }
  bool AtEnd() { return in_.CurrentPosition() == static_cast<int>(size_); }
  const char* name() const { return name_; }

 private:
  google::protobuf::io::CodedInputStream in_;
  size_t size_;
  const char* name_;
};

}  // namespace

uint64_t RecentPcs::Use(uint64_t pc) {
  const auto it = std::find(pcs_.begin(), pcs_.end(), pc);
  if (it == pcs_.end()) {
    Add(pc);
    return 0;
  }
  const uint64_t code = it - pcs_.begin() + 1;
  std::rotate(pcs_.begin(), it, it + 1);
  return code;
}

bool RecentPcs::Take(uint64_t code, uint64_t& pc) {
  if (code == 0 || code > pcs_.size()) return false;
  const auto it = pcs_.begin() + static_cast<ptrdiff_t>(code - 1);
  pc = *it;
  std::rotate(pcs_.begin(), it, it + 1);
  return true;
}

void RecentPcs::Add(uint64_t pc) {
  if (pcs_.size() == kRecentPcs) pcs_.pop_back();
  pcs_.insert(pcs_.begin(), pc);
}

void InterruptColumnWriter::Add(const Interrupt& irq) {
  InterruptBlock& b = block_;
  b.set_count(b.count() + 1);
  // The low byte of the delta is close to random, the rest repeats: apart, zstd finds the repeats.
  const uint64_t delta = ZigZag(irq.branch_count() - last_branch_count_);
  last_branch_count_ = irq.branch_count();
  b.mutable_branch_count_low()->push_back(static_cast<char>(delta & 0xFF));
  Put(b.mutable_branch_count_high(), delta >> 8);
  const uint64_t code = recent_.Use(irq.pc());
  Put(b.mutable_pc_codes(), code);
  if (code == 0) {
    Put(b.mutable_new_pc_deltas(), ZigZag(irq.pc() - last_new_pc_));
    last_new_pc_ = irq.pc();
  }
  Put(b.mutable_vectors(), irq.vector());
  Put(b.mutable_cause_ips(), irq.cause_ip());
  uint64_t flags = 0;
  if (irq.has_rep_remaining()) {
    flags |= kHasRepRemaining;
    Put(b.mutable_rep_remaining(), irq.rep_remaining());
  }
  if (irq.has_cat_record()) {
    flags |= kHasCatRecord;
    Put(b.mutable_cat_record_deltas(), ZigZag(irq.cat_record() - last_cat_record_));
    last_cat_record_ = irq.cat_record();
  }
  if (irq.has_delay_slot()) flags |= kHasDelaySlot | (irq.delay_slot() ? kDelaySlot : uint64_t{0});
  if (irq.has_steps_after_arrival()) {
    flags |= kHasStepsAfterArrival;
    Put(b.mutable_steps_after_arrival(), irq.steps_after_arrival());
  }
  Put(b.mutable_flags(), flags);
}

InterruptBlock InterruptColumnWriter::Take() {
  InterruptBlock b;
  b.Swap(&block_);
  return b;
}

absl::Status InterruptColumnReader::Load(const InterruptBlock& block) {
  ++blocks_;
  pending_.clear();
  next_ = 0;
  std::vector<Interrupt>& out = pending_;
  const auto bad = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("interrupt block ", blocks_, ": ", what));
  };
  if (block.count() > kInterruptsPerBlock) {
    return bad(absl::StrCat(block.count(), " interrupts, more than the ", kInterruptsPerBlock,
                            " a block holds"));
  }
  if (block.branch_count_low().size() != block.count()) {
    return bad(absl::StrCat("its column branch_count_low holds ", block.branch_count_low().size(),
                            " bytes for ", block.count(), " interrupts"));
  }
  Column high(block.branch_count_high(), "branch_count_high"), codes(block.pc_codes(), "pc_codes"),
      new_pcs(block.new_pc_deltas(), "new_pc_deltas"), vectors(block.vectors(), "vectors"),
      cause_ips(block.cause_ips(), "cause_ips"), flags(block.flags(), "flags"),
      reps(block.rep_remaining(), "rep_remaining"),
      cats(block.cat_record_deltas(), "cat_record_deltas"),
      steps(block.steps_after_arrival(), "steps_after_arrival");
  const auto short_of = [&](const Column& c) {
    return bad(absl::StrCat("its column ", c.name(), " ends before its ", block.count(),
                            " interrupts do"));
  };
  for (uint32_t i = 0; i < block.count(); ++i) {
    Interrupt& irq = out.emplace_back();
    uint64_t delta, code, pc, vector, cause_ip, f;
    if (!high.Get(delta)) return short_of(high);
    if (delta > (UINT64_MAX >> 8)) return bad("a branch count delta too large");
    delta = delta << 8 | static_cast<uint8_t>(block.branch_count_low()[i]);
    last_branch_count_ += UnZigZag(delta);
    irq.set_branch_count(last_branch_count_);
    if (!codes.Get(code)) return short_of(codes);
    if (code == 0) {
      uint64_t d;
      if (!new_pcs.Get(d)) return short_of(new_pcs);
      pc = last_new_pc_ += UnZigZag(d);
      recent_.Add(pc);
    } else if (!recent_.Take(code, pc)) {
      return bad(absl::StrCat("PC code ", code, " names no recent PC"));
    }
    irq.set_pc(pc);
    if (!vectors.Get(vector)) return short_of(vectors);
    if (!cause_ips.Get(cause_ip)) return short_of(cause_ips);
    if (vector > UINT32_MAX || cause_ip > UINT32_MAX) return bad("a vector or Cause.IP too large");
    irq.set_vector(static_cast<uint32_t>(vector));
    irq.set_cause_ip(static_cast<uint32_t>(cause_ip));
    if (!flags.Get(f)) return short_of(flags);
    if (f >
        (kHasRepRemaining | kHasCatRecord | kHasDelaySlot | kDelaySlot | kHasStepsAfterArrival)) {
      return bad(absl::StrCat("flags ", f, " this reader does not know"));
    }
    if (f & kHasRepRemaining) {
      uint64_t rep;
      if (!reps.Get(rep)) return short_of(reps);
      irq.set_rep_remaining(rep);
    }
    if (f & kHasCatRecord) {
      uint64_t d;
      if (!cats.Get(d)) return short_of(cats);
      last_cat_record_ += UnZigZag(d);
      irq.set_cat_record(last_cat_record_);
    }
    if (f & kHasDelaySlot) irq.set_delay_slot((f & kDelaySlot) != 0);
    if (f & kHasStepsAfterArrival) {
      uint64_t n;
      if (!steps.Get(n)) return short_of(steps);
      irq.set_steps_after_arrival(n);
    }
  }
  for (Column* c : {&high, &codes, &new_pcs, &vectors, &cause_ips, &flags, &reps, &cats, &steps}) {
    if (!c->AtEnd()) {
      return bad(absl::StrCat("its column ", c->name(), " holds more than its ", block.count(),
                              " interrupts"));
    }
  }
  return absl::OkStatus();
}

absl::Status ExpandInterruptBlocks(EventSchedule& schedule) {
  if (schedule.interrupt_blocks_size() == 0) return absl::OkStatus();
  if (schedule.interrupts_size() != 0) {
    return absl::InvalidArgumentError("the AES holds interrupts both in a list and in blocks");
  }
  InterruptColumnReader reader;
  for (const InterruptBlock& b : schedule.interrupt_blocks()) {
    if (absl::Status s = reader.Load(b); !s.ok()) return s;
    for (Interrupt irq; reader.Next(irq);) *schedule.add_interrupts() = std::move(irq);
  }
  schedule.clear_interrupt_blocks();
  return absl::OkStatus();
}

void PutInterruptsInBlocks(EventSchedule& schedule) {
  InterruptColumnWriter columns;
  for (const Interrupt& irq : schedule.interrupts()) {
    columns.Add(irq);
    if (columns.size() == kInterruptsPerBlock) *schedule.add_interrupt_blocks() = columns.Take();
  }
  if (columns.size() > 0) *schedule.add_interrupt_blocks() = columns.Take();
  schedule.clear_interrupts();
}

}  // namespace citcat::aes
