#include "archive/segment_starts.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "archive/archive.h"

namespace citcat::archive {
namespace {

// A segment of fewer bus transactions replays in well under a millisecond: its start would cost
// more to make than it saves.
constexpr uint64_t kMinSegmentTransactions = 1 << 12;

// A segment start's memory differs from the whole's in aligned blocks of this many bytes.
constexpr uint64_t kGranule = 32;

using Extents = google::protobuf::RepeatedPtrField<ims::MemoryExtent>;

// The index of the first extent of `extents` (ascending) that begins after `address`.
int After(const Extents& extents, uint64_t address) {
  return static_cast<int>(
      std::upper_bound(extents.begin(), extents.end(), address,
                       [](uint64_t a, const ims::MemoryExtent& e) { return a < e.address(); }) -
      extents.begin());
}

// The index of the extent of `extents` (ascending, non-overlapping) that holds `address`, or -1.
int Holding(const Extents& extents, uint64_t address) {
  const int before = After(extents, address) - 1;
  if (before < 0) return -1;
  const ims::MemoryExtent& e = extents[before];
  return address - e.address() < e.data().size() ? before : -1;
}

// Whether `extents` ascend without overlapping, as an IMS's should.
bool InOrder(const Extents& extents) {
  for (int i = 1; i < extents.size(); ++i) {
    const ims::MemoryExtent& before = extents[i - 1];
    if (extents[i].address() - before.address() < before.data().size() ||
        extents[i].address() < before.address()) {
      return false;
    }
  }
  return true;
}

// Appends `value` at `address` to `out`, extending its last extent when it ends there.
void AddByte(Extents& out, uint64_t address, char value) {
  if (out.empty() || out.rbegin()->address() + out.rbegin()->data().size() != address) {
    out.Add()->set_address(address);
  }
  out.rbegin()->mutable_data()->push_back(value);
}

// `whole`'s memory with `top`'s bytes written over it: ascending and non-overlapping again.
Extents Overlay(const Extents& whole, const Extents& top) {
  Extents out = whole;
  Extents outside;  // bytes of `top` where `whole` has none
  for (const ims::MemoryExtent& e : top) {
    for (uint64_t i = 0; i < e.data().size();) {
      const uint64_t a = e.address() + i;
      uint64_t n = e.data().size() - i;
      if (const int under = Holding(out, a); under >= 0) {
        ims::MemoryExtent& u = out[under];
        const uint64_t at = a - u.address();
        n = std::min<uint64_t>(n, u.data().size() - at);
        std::memcpy(u.mutable_data()->data() + at, e.data().data() + i, n);
      } else {
        if (const int next = After(out, a); next < out.size()) {
          n = std::min(n, out[next].address() - a);  // up to the next extent
        }
        ims::MemoryExtent& x = *outside.Add();
        x.set_address(a);
        x.set_data(e.data().substr(i, n));
      }
      i += n;
    }
  }
  for (ims::MemoryExtent& e : outside) *out.Add() = std::move(e);
  std::sort(out.begin(), out.end(), [](const ims::MemoryExtent& x, const ims::MemoryExtent& y) {
    return x.address() < y.address();
  });
  return out;
}

// The next `count` events of `list` (all that are left when `rest`) onto `out`.
template <typename Event>
absl::Status Take(aes::EventQueue<Event>& list, uint64_t count, bool rest,
                  google::protobuf::RepeatedPtrField<Event>& out, const char* what) {
  for (uint64_t n = 0; rest ? !list.empty() : n < count; ++n) {
    if (list.empty()) {
      return absl::DataLossError(
          absl::StrCat("the segment starts use more ", what, " than the schedule holds"));
    }
    *out.Add() = list.Pop();
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<uint64_t> SegmentCuts(const ims::InitialMachineState& whole, const aes::EndPoint& end,
                                  uint64_t segments) {
  // A replay from reset is not cut (its start is the machine's reset, not a state); a start's
  // memory is found against the whole's, which must then be in order.
  if (whole.start().from_reset() || !InOrder(whole.memory())) return {};
  const uint64_t transactions = end.cpu_transactions();
  segments = std::min({segments, transactions / kMinSegmentTransactions, kMaxSegmentStarts + 1});
  std::vector<uint64_t> cuts;
  for (uint64_t k = 1; k < segments; ++k) cuts.push_back(transactions / segments * k);
  return cuts;
}

SegmentStartsBuilder::SegmentStartsBuilder(const ims::InitialMachineState& whole) : whole_(whole) {}

char SegmentStartsBuilder::WholeByte(uint64_t address) const {
  const int under = Holding(whole_.memory(), address);
  if (under < 0) return 0;
  const ims::MemoryExtent& e = whole_.memory(under);
  return e.data()[address - e.address()];
}

absl::Status SegmentStartsBuilder::Add(replay::Segment segment) {
  if (!first_) {
    ims::SegmentStart& start = *starts_.add_starts();
    start = next_;
    ims::InitialMachineState& state = *start.mutable_state();
    state = std::move(segment.ims);
    state.clear_description();
    // Only the granules the whole's memory does not already hold (whole granules, so that a
    // few changed bytes among equal ones make one extent, not many).
    Extents differs;
    for (const ims::MemoryExtent& e : state.memory()) {
      const std::string& bytes = e.data();
      for (uint64_t i = 0; i < bytes.size();) {
        const uint64_t a = e.address() + i;
        const uint64_t n = std::min<uint64_t>(bytes.size() - i, kGranule - a % kGranule);
        bool same = true;
        for (uint64_t j = 0; j < n && same; ++j) same = bytes[i + j] == WholeByte(a + j);
        if (!same) {
          for (uint64_t j = 0; j < n; ++j) AddByte(differs, a + j, bytes[i + j]);
        }
        i += n;
      }
    }
    state.mutable_memory()->Swap(&differs);
  }
  first_ = false;
  const aes::EventSchedule& events = segment.aes;
  next_.set_interrupts_before(next_.interrupts_before() + events.interrupts_size());
  next_.set_dma_before(next_.dma_before() + events.dma_size());
  next_.set_device_io_before(next_.device_io_before() + events.device_io_size());
  next_.set_register_reads_before(next_.register_reads_before() + events.register_reads_size());
  next_.set_cpu_transactions_before(next_.cpu_transactions_before() +
                                    events.end().cpu_transactions());
  next_.set_records_before(next_.records_before() + events.end().cat_records());
  return absl::OkStatus();
}

absl::Status CheckSegmentStarts(const ims::SegmentStarts& starts, const Manifest& manifest,
                                const ims::InitialMachineState& whole,
                                const aes::Schedule& schedule) {
  if (static_cast<uint64_t>(starts.starts_size()) > kMaxSegmentStarts) {
    return absl::DataLossError(absl::StrCat("the archive's segment starts: ", starts.starts_size(),
                                            ", more than ", kMaxSegmentStarts));
  }
  const ims::StartPoint& first = whole.start();
  ims::SegmentStart before;  // all zero: where the first segment begins
  uint64_t instructions = first.instructions(), branch_count = first.branch_count();
  for (int k = 0; k < starts.starts_size(); ++k) {
    const ims::SegmentStart& s = starts.starts(k);
    const ims::StartPoint& at = s.state().start();
    const auto bad = [k](const std::string& what) {
      return absl::DataLossError(
          absl::StrCat("the archive's segment start ", k + 2, " (section 'segs'): ", what));
    };
    if (!at.segment() || s.state().cpu_case() != whole.cpu_case()) {
      return bad("not a segment's state of the archive's machine");
    }
    if (at.instructions() <= instructions ||
        at.instructions() >= first.instructions() + manifest.instructions ||
        at.branch_count() < branch_count || at.branch_count() > manifest.end_branch_count) {
      return bad("out of order, or outside the replay the manifest describes");
    }
    if (s.interrupts_before() < before.interrupts_before() ||
        s.dma_before() < before.dma_before() || s.device_io_before() < before.device_io_before() ||
        s.register_reads_before() < before.register_reads_before() ||
        s.cpu_transactions_before() < before.cpu_transactions_before() ||
        s.records_before() < before.records_before() ||
        s.interrupts_before() > schedule.interrupts() || s.dma_before() > schedule.dma() ||
        s.device_io_before() > schedule.device_io() ||
        s.register_reads_before() > schedule.register_reads() ||
        s.cpu_transactions_before() > schedule.end().cpu_transactions() ||
        s.records_before() > manifest.records) {
      return bad("uses the schedule out of order, or more of it than there is");
    }
    before = s;
    instructions = at.instructions();
    branch_count = at.branch_count();
  }
  return absl::OkStatus();
}

SegmentMaker::SegmentMaker(const ims::InitialMachineState& whole, const aes::Schedule& schedule,
                           const ims::SegmentStarts& starts)
    : whole_(whole), schedule_(schedule), starts_(starts), events_(schedule.Read()) {}

absl::StatusOr<replay::Segment> SegmentMaker::Next() {
  const size_t k = next_++;
  const bool last = k + 1 == count();
  // (The last segment takes all that is left of each list: `to`'s counts go unused.)
  const ims::SegmentStart& none = ims::SegmentStart::default_instance();
  const ims::SegmentStart& from = k == 0 ? none : starts_.starts(k - 1);
  const ims::SegmentStart& to = last ? none : starts_.starts(k);
  replay::Segment segment;
  if (k == 0) {
    segment.ims = whole_;
  } else {
    segment.ims = from.state();
    *segment.ims.mutable_description() = whole_.description();
    *segment.ims.mutable_memory() = Overlay(whole_.memory(), from.state().memory());
  }

  aes::EventSchedule& events = segment.aes;
  events.set_format_version(schedule_.format_version());
  events.set_machine(schedule_.machine());
  aes::EndPoint& end = *events.mutable_end();
  if (last) {
    end = schedule_.end();
    end.set_cat_records(end.cat_records() - from.records_before());
    end.set_cpu_transactions(end.cpu_transactions() - from.cpu_transactions_before());
  } else {
    end.set_branch_count(to.state().start().branch_count());
    end.set_cat_records(to.records_before() - from.records_before());
    end.set_cpu_transactions(to.cpu_transactions_before() - from.cpu_transactions_before());
    end.set_at_branch_count(true);
  }
  aes::ScheduleReader& in = *events_;
  absl::Status s = Take(in.interrupts(), to.interrupts_before() - from.interrupts_before(), last,
                        *events.mutable_interrupts(), "interrupts");
  if (s.ok()) {
    s = Take(in.dma(), to.dma_before() - from.dma_before(), last, *events.mutable_dma(),
             "DMA transfers");
  }
  if (s.ok()) {
    s = Take(in.device_io(), to.device_io_before() - from.device_io_before(), last,
             *events.mutable_device_io(), "device accesses");
  }
  if (s.ok()) {
    s = Take(in.register_reads(), to.register_reads_before() - from.register_reads_before(), last,
             *events.mutable_register_reads(), "register reads");
  }
  if (s.ok()) s = in.status();
  if (!s.ok()) return s;
  for (aes::DmaTransfer& d : *events.mutable_dma()) {
    if (d.after_cpu_transactions() < from.cpu_transactions_before()) {
      return absl::DataLossError(absl::StrCat("segment ", k + 1,
                                              " begins after a DMA transfer it holds, by the "
                                              "archive's segment starts"));
    }
    d.set_after_cpu_transactions(d.after_cpu_transactions() - from.cpu_transactions_before());
  }
  return segment;
}

}  // namespace citcat::archive
