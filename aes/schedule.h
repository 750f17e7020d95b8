// An AES read the way replay consumes it: each list of events in order, from the front. A
// schedule held as a message is read in place; one held as bytes (an aes.pb file, an archive's
// compressed section) is parsed an event at a time, each list by its own cursor through the
// bytes, so that replay's memory does not grow with the length of the capture.
#ifndef CITCAT_AES_SCHEDULE_H_
#define CITCAT_AES_SCHEDULE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "aes/aes.pb.h"
#include "google/protobuf/io/zero_copy_stream.h"

namespace citcat::aes {

// The serialized bytes of an EventSchedule, readable from the start as often as needed.
class ScheduleBytes {
 public:
  virtual ~ScheduleBytes() = default;
  // A new stream over all the bytes, from the first.
  virtual absl::StatusOr<std::unique_ptr<google::protobuf::io::ZeroCopyInputStream>> Open()
      const = 0;
  // For messages: the file or section the bytes come from.
  virtual const std::string& name() const = 0;
};

// The most one event of a schedule may take, serialized: a DMA transfer or device access carries
// the data of one CAT record (at most cat::kMaxRecordData bytes), and its other fields take a few
// dozen bytes more. A reader refuses a longer event before it reads it, so that an event never
// costs more memory than the bus could have carried.
inline constexpr uint64_t kMaxEventBytes = (64 << 10) + (4 << 10);

// Bytes held in memory (tests, and what was decoded already): at most 2 GiB, what a protobuf
// stream over memory can count (more opens as an error, never as nothing).
std::shared_ptr<const ScheduleBytes> BytesInMemory(std::string bytes, std::string name);
// An aes.pb file, read as the cursors advance.
std::shared_ptr<const ScheduleBytes> BytesInFile(std::string path);
// All of the bytes, in memory (at most `max_bytes`).
absl::StatusOr<std::string> ReadAll(const ScheduleBytes& bytes, uint64_t max_bytes);

// One list of a schedule (interrupts, DMA, device accesses or register reads), consumed from the
// front.
template <typename Event>
class EventQueue {
 public:
  // Sets *event to the list's next one and returns true, or returns false at its end (or at
  // bytes that do not parse: the reader's status says so).
  using Next = std::function<bool(Event& event)>;
  explicit EventQueue(Next next) : next_(std::move(next)) {}

  // The event `ahead` places after the next one (0: the next), or nullptr past the end. (Asked
  // at every bus transaction: the buffered case is a compare and an index.)
  const Event* Peek(size_t ahead = 0) {
    if (head_ + ahead < buffered_.size()) return &buffered_[head_ + ahead];
    return ended_ ? nullptr : Fill(ahead);
  }
  bool empty() { return Peek() == nullptr; }
  // Consumes the next event (there must be one); the reference stays valid until the next Pop.
  const Event& Pop() {
    Peek();
    last_ = std::move(buffered_[head_++]);
    if (head_ == buffered_.size()) {
      buffered_.clear();
      head_ = 0;
    }
    ++taken_;
    return last_;
  }
  // Events consumed so far.
  uint64_t taken() const { return taken_; }

 private:
  const Event* Fill(size_t ahead) {
    if (head_ > 0) {  // what was taken goes, so that lookahead never grows the buffer for long
      buffered_.erase(buffered_.begin(), buffered_.begin() + head_);
      head_ = 0;
    }
    while (ahead >= buffered_.size() && !ended_) {
      if (!next_(buffered_.emplace_back())) {
        buffered_.pop_back();
        ended_ = true;
      }
    }
    return ahead < buffered_.size() ? &buffered_[ahead] : nullptr;
  }

  Next next_;
  std::vector<Event> buffered_;  // from head_ on: the events read and not taken yet
  size_t head_ = 0;
  Event last_;
  bool ended_ = false;
  uint64_t taken_ = 0;
};

class ScheduleReader;

// A schedule to replay: its version, machine and end point, and readers of its lists. Cheap to
// copy; a schedule of a message refers to it (the message must outlive it).
class Schedule {
 public:
  // The message itself, read in place (implicit: a message passed to replay is read as it is).
  Schedule(const EventSchedule& message);  // NOLINT(google-explicit-constructor)
  // Serialized bytes: every event is parsed once here (a schedule that does not parse is refused
  // now, not halfway through a replay), one at a time, keeping none. An event longer than
  // kMaxEventBytes is refused by its length, before it is read.
  static absl::StatusOr<Schedule> Parse(std::shared_ptr<const ScheduleBytes> bytes);

  uint32_t format_version() const { return head_->format_version(); }
  ims::Machine machine() const { return head_->machine(); }
  const EndPoint& end() const { return head_->end(); }
  // How many events each list holds.
  uint64_t interrupts() const { return counts_[0]; }
  uint64_t dma() const { return counts_[1]; }
  uint64_t device_io() const { return counts_[2]; }
  uint64_t register_reads() const { return counts_[3]; }
  // The length of the serialized schedule.
  uint64_t bytes() const { return length_; }

  // A reader at the start of every list.
  std::unique_ptr<ScheduleReader> Read() const;

 private:
  Schedule() = default;
  // The message's fields but the lists (all of it, for a schedule of a message).
  std::shared_ptr<const EventSchedule> head_;
  const EventSchedule* message_ = nullptr;
  std::shared_ptr<const ScheduleBytes> bytes_;
  uint64_t counts_[4] = {};
  uint64_t length_ = 0;
};

// The four lists of one schedule, each at its own place.
class ScheduleReader {
 public:
  ~ScheduleReader();
  EventQueue<Interrupt>& interrupts() { return interrupts_; }
  EventQueue<DmaTransfer>& dma() { return dma_; }
  EventQueue<DeviceAccess>& device_io() { return device_io_; }
  EventQueue<RegisterRead>& register_reads() { return register_reads_; }
  // Not OK once bytes read after Schedule::Parse no longer parse (the file changed meanwhile).
  const absl::Status& status() const { return status_; }

 private:
  friend class Schedule;
  class Cursor;
  ScheduleReader(const EventSchedule* message, std::shared_ptr<const ScheduleBytes> bytes);

  std::shared_ptr<const ScheduleBytes> bytes_;
  std::unique_ptr<Cursor> cursors_[4];
  absl::Status status_;
  EventQueue<Interrupt> interrupts_;
  EventQueue<DmaTransfer> dma_;
  EventQueue<DeviceAccess> device_io_;
  EventQueue<RegisterRead> register_reads_;
};

// Writes an aes.pb as its events come, holding none of them: each list goes to an unnamed scratch
// file in the temporary directory, and Finish puts the lists together in the layout a whole message
// serializes to (field order), so the file is the same bytes as EventSchedule::SerializeAsString.
class ScheduleWriter {
 public:
  static absl::StatusOr<std::unique_ptr<ScheduleWriter>> Create(std::string path);
  ~ScheduleWriter();
  // Appends `batch`'s events to their lists and clears them (its other fields stay).
  absl::Status Append(EventSchedule& batch);
  // Writes the file: `head`'s format version, machine and end point around the lists appended,
  // and `head`'s own lists after those. The file appears under its name only when complete.
  absl::Status Finish(const EventSchedule& head);
  // The same bytes without a file: read from the scratch files, which live as long as the result
  // (for a command that replays what it extracted). The writer is done with afterwards.
  absl::StatusOr<std::shared_ptr<const ScheduleBytes>> FinishInScratch(const EventSchedule& head);

  // Events appended to each list (interrupts, DMA, device accesses, register reads), and the
  // file's length once finished.
  const std::array<uint64_t, 4>& counts() const { return counts_; }
  uint64_t bytes() const { return bytes_; }

  struct Scratch;  // the lists' unnamed files (schedule.cc)

 private:
  ScheduleWriter(std::string path, std::shared_ptr<Scratch> scratch);
  // Appends `head`'s lists and keeps its fields that go before and after the lists.
  absl::Status Close(const EventSchedule& head);
  const std::string path_;
  std::shared_ptr<Scratch> scratch_;
  std::array<uint64_t, 4> counts_ = {};
  uint64_t bytes_ = 0;
};

}  // namespace citcat::aes

#endif  // CITCAT_AES_SCHEDULE_H_
