// The machine-neutral half of replay: the memory image, the reserved CITCAT areas, the device
// queue, DMA at its bus position, the regenerated CAT, the text trace, the divergence report and
// the check that the whole schedule was used. A CoreAdapter (core_adapter.h) runs the machine's
// core on this engine's bus. See docs/replay.md.
#ifndef CITCAT_REPLAY_ENGINE_H_
#define CITCAT_REPLAY_ENGINE_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "aes/aes.pb.h"
#include "aes/schedule.h"
#include "cat_parser/record.h"
#include "ims/ims.pb.h"
#include "replay/core_adapter.h"
#include "replay/replay.h"
#include "simcore/bus.h"
#include "simcore/copy_bytes.h"
#include "traces/plain_text.h"

namespace citcat::replay {

class Engine final : public simcore::Bus {
 public:
  // `header`: the CAT header the traced system writes (its memory map and reserved areas).
  // `observe`: look at every instruction (a trace, or the context of a divergence).
  Engine(const ims::InitialMachineState& ims, const aes::Schedule& aes,
         const ReplayOptions& options, cat::CatHeader header, bool observe);
  ~Engine() override;

  // Loads the memory image and makes and loads the core.
  absl::Status Load(const CoreAdapterFactory& make_core);
  absl::StatusOr<ReplaySummary> Run();

  // ---- simcore::Bus: the core's transactions ----
  void Read(const cat::BusRecord& r, std::span<uint8_t> data) override;
  void Write(const cat::BusRecord& r) override;
  bool Peek(uint64_t address, std::span<uint8_t> data) const override;

  // ---- for core adapters ----
  const aes::Schedule& schedule() const { return aes_; }
  // The schedule's lists, each at the next event replay has not used.
  aes::ScheduleReader& events() { return *events_; }
  uint64_t interrupts_taken() const { return events_->interrupts().taken(); }
  const ReplayOptions& options() const { return options_; }
  const cat::CatHeader& header() const { return header_; }
  // The header's memory map, quick to ask at every access.
  const cat::MemoryPages& memory() const { return memory_; }
  bool stopped() const { return diverged() || ended_ || !error_.ok(); }

  // Stops the replay with a divergence at the current record.
  void Diverge(const std::string& what) { Diverge(CurrentRecord(), what); }
  // Stops the replay with an error (a trace sink that failed).
  void Fail(const absl::Status& status);

  // Each instruction the core starts when observing, in order (a faulting one appears again
  // when re-executed): the ring of last instructions, the text trace, on_instructions. `index`:
  // the instructions retired before it (the core's retired()).
  // (Defined here for the adapters to inline: it runs for every instruction of every trace.)
  void Instruction(uint64_t index, uint64_t pc, std::span<const uint8_t> bytes) {
    ring_.Add(index, pc, bytes);
    if (options_.trace != nullptr) TraceInstruction(index, pc, bytes);
  }
  // A line of the text trace that is not an instruction (an exception, a device read).
  bool tracing_text() const { return options_.trace != nullptr; }
  void TraceEvent(absl::string_view text);

  // The index of the next CAT record replay regenerates (an i486 trace from reset keys its
  // interrupts by the acknowledge's index too).
  uint64_t next_record() const { return CurrentRecord(); }
  // The core entered an interrupt at this key: it must be the schedule's next one.
  void InterruptTaken(const aes::Interrupt& key);
  // The key that found the next interrupt's boundary, for options().on_interrupt_key (every
  // interrupt taken must have one).
  void NoteInterruptKey(const aes::Interrupt& key) {
    if (options_.on_interrupt_key) noted_key_ = key;
  }
  // Where an interrupt was reported, for messages: " (reported at CAT record N)", or "" when its
  // key has no record.
  static std::string ReportedAt(const aes::Interrupt& irq);
  // The schedule's next register read if it is `reg`, consumed; otherwise a divergence naming
  // `name` (what the core read) and `hint`, and nullptr.
  const aes::RegisterRead* TakeRegisterRead(aes::RegisterRead::Register reg, absl::string_view name,
                                            absl::string_view hint = "");

 private:
  struct Reserved {
    uint64_t base;
    std::vector<uint8_t> bytes;  // the last value stored to each byte
  };
  struct Rom {
    uint64_t base;
    std::vector<uint8_t> bytes;  // the first-touch image's bytes, zero where it has none
  };
  struct Free {
    void operator()(uint8_t* p) const;
  };

  bool diverged() const { return !divergence_.empty(); }
  // Main memory by the header's memory map (holes, device windows and reserved areas are not).
  bool InRam(uint64_t a, uint64_t n) const { return memory_.IsMemory(a, n); }
  Reserved* ReservedArea(uint64_t a, uint64_t n);
  // The header's ROM window holding the access wholly, or nullptr.
  Rom* RomArea(uint64_t a, uint64_t n);
  const Rom* RomArea(uint64_t a, uint64_t n) const;
  absl::Status LoadMemory();
  absl::Status PlaceExtent(const ims::MemoryExtent& e);
  uint64_t CurrentRecord() const { return ims_.start().cat_record() + records_; }
  void Diverge(uint64_t cat_record, const std::string& what);
  absl::Status DivergenceStatus() const;
  void FinishSchedule();
  // Instructions retired since the IMS's start.
  uint64_t Replayed() const { return core_->retired() - ims_.start().instructions(); }
  // Steps for the core's next run: kSlice, or fewer to stop just past options().max_instructions.
  uint64_t Slice() const;
  // Past options().max_instructions: a divergence, and true.
  bool PastMaxInstructions();
  // Before a CPU transaction: the DMA placed before it, and the end's check; a compare for the
  // transactions between those places.
  void BeginCpuTransaction(const cat::BusRecord& r) {
    if (cpu_transactions_ >= look_at_) [[unlikely]]
      LookAtSchedule(r);
  }
  void LookAtSchedule(const cat::BusRecord& r);
  void EndCpuTransaction(const cat::BusRecord& r);
  void ApplyDma(const aes::DmaTransfer& d);
  void Emit(const cat::BusRecord& r);
  void DeviceRead(const cat::BusRecord& r, std::span<uint8_t> data);
  void DeviceWrite(const cat::BusRecord& r);
  void CheckEverythingUsed();
  std::string Key(uint64_t branch_count, uint64_t pc) const;
  // An event's record, or where replay is for an event that names none (an archive's).
  uint64_t RecordOr(uint64_t cat_record) const {
    return cat_record != 0 ? cat_record : CurrentRecord();
  }
  // Bus data: a word, a line, rarely more.
  static void CopyData(const uint8_t* from, size_t n, uint8_t* to) {
    if (n < 32) [[likely]] {
      simcore::CopyFewBytes(from, n, to);
    } else {
      std::memcpy(to, from, n);
    }
  }
  void TraceInstruction(uint64_t index, uint64_t pc, std::span<const uint8_t> bytes);
  void FlushTrace();

  // ---- segments (ReplayOptions::cut_at_instructions) ----
  // Where the segment being replayed began, and what it has read first.
  struct SegmentStart {
    ims::InitialMachineState ims;  // without its memory, which is known at its end
    aes::EventSchedule events;     // the events used since it began
    uint64_t transactions = 0, records = 0;
  };
  bool cutting() const { return options_.on_segment != nullptr; }
  // Whether a cut point of either kind has been passed.
  bool CutDue() const;
  // Ends the current segment (handed to on_segment) and begins the next at this boundary.
  void Cut();
  void HandOverSegment(bool last);
  // The next event of `list`, consumed (and kept for the segment when cutting).
  template <typename Event>
  const Event& Take(aes::EventQueue<Event>& list,
                    google::protobuf::RepeatedPtrField<Event>& segment_list) {
    const Event& e = list.Pop();
    if (cutting()) *segment_list.Add() = e;
    return e;
  }
  // RAM bytes the current segment has read or written (or DMA wrote), and the value each had
  // when it first read it.
  void Touch(uint64_t a, uint64_t n, bool read);
  std::vector<ims::MemoryExtent> SegmentImage() const;

  // The last instructions started, for a divergence report (the last kContext of them) and
  // on_instructions (the whole ring each time it fills). Filled through Instruction, or by a
  // core that logs them itself (CoreAdapter::LogInstructions).
  class Ring final : public simcore::InstructionLog {
   public:
    explicit Ring(const ReplayOptions& options) : options_(options) {}

   private:
    void Full(std::span<const ExecutedInstruction> ring) override {
      if (options_.on_instructions) options_.on_instructions(ring);
    }
    const ReplayOptions& options_;
  };
  static constexpr int kContext = 16;
  void FlushInstructions();

  const ims::InitialMachineState& ims_;
  const aes::Schedule aes_;
  const aes::EndPoint end_;  // aes_.end(), asked at every bus transaction
  const std::unique_ptr<aes::ScheduleReader> events_;
  const ReplayOptions& options_;
  const cat::CatHeader header_;
  const bool observe_;
  const uint64_t ram_size_;
  const cat::MemoryPages memory_{header_};
  std::unique_ptr<uint8_t[], Free> ram_;
  std::vector<Reserved> reserved_;  // one per header_.magic entry
  std::vector<Rom> roms_;           // one per header_.roms entry
  std::unique_ptr<CoreAdapter> core_;

  bool end_known_ = false;
  bool ended_ = false;
  std::string divergence_;
  uint64_t divergence_record_ = 0;
  absl::Status error_;
  uint64_t cpu_transactions_ = 0;
  // The CPU transaction count from which the schedule needs a look (LookAtSchedule): the next
  // DMA transfer's place or the end's, whichever comes first; never later than either.
  uint64_t look_at_ = 0;
  uint64_t records_ = 0;
  uint64_t last_record_bc_ = 0;

  SegmentStart segment_;
  std::optional<aes::Interrupt> noted_key_;
  size_t next_cut_ = 0;              // the next of options_.cut_at_instructions
  size_t next_transaction_cut_ = 0;  // the next of options_.cut_at_cpu_transactions
  bool cut_armed_ = false;           // a transaction passed the cut: cut at the next flow break
  std::vector<uint64_t> touched_, first_known_;  // RAM bitmaps of the current segment
  std::vector<uint8_t> first_;                   // the first-read values
  std::map<uint64_t, uint8_t> rom_first_;        // ROM bytes the current segment has read

  Ring ring_{options_};
  std::optional<traces::PlainTextTrace> text_;  // into options_.trace, if any
};

}  // namespace citcat::replay

#endif  // CITCAT_REPLAY_ENGINE_H_
