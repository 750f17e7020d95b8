#include "aes/schedule.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "aes/interrupt_columns.h"
#include "cat_parser/record.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/wire_format_lite.h"
#include "io/file.h"

namespace citcat::aes {
namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;
using google::protobuf::io::ZeroCopyInputStream;

// The lists' field numbers in aes.proto, in the order of Schedule's counts.
constexpr int kListFields[4] = {EventSchedule::kInterruptsFieldNumber,
                                EventSchedule::kDmaFieldNumber, EventSchedule::kDeviceIoFieldNumber,
                                EventSchedule::kRegisterReadsFieldNumber};
// What one event of each list is called in messages.
constexpr const char* kEventNames[4] = {"interrupt", "DMA transfer", "device access",
                                        "register read"};

static_assert(kMaxEventBytes >= cat::kMaxRecordData + 1024,
              "an event holds a record's data and its own fields");

class InMemory final : public ScheduleBytes {
 public:
  InMemory(std::string bytes, std::string name)
      : bytes_(std::move(bytes)), name_(std::move(name)) {}
  absl::StatusOr<std::unique_ptr<ZeroCopyInputStream>> Open() const override {
    // An ArrayInputStream counts in an int: a larger size would wrap (to nothing, at 4 GiB).
    if (bytes_.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
      return absl::ResourceExhaustedError(
          absl::StrCat(name_, ": ", bytes_.size(), " bytes, more than a schedule in memory holds"));
    }
    return std::make_unique<google::protobuf::io::ArrayInputStream>(
        bytes_.data(), static_cast<int>(bytes_.size()));
  }
  const std::string& name() const override { return name_; }

 private:
  const std::string bytes_;
  const std::string name_;
};

// A FileInputStream that closes its descriptor.
class FileStream final : public ZeroCopyInputStream {
 public:
  explicit FileStream(int fd) : in_(fd) { in_.SetCloseOnDelete(true); }
  bool Next(const void** data, int* size) override { return in_.Next(data, size); }
  void BackUp(int count) override { in_.BackUp(count); }
  bool Skip(int count) override { return in_.Skip(count); }
  int64_t ByteCount() const override { return in_.ByteCount(); }

 private:
  google::protobuf::io::FileInputStream in_;
};

class InFile final : public ScheduleBytes {
 public:
  explicit InFile(std::string path) : path_(std::move(path)) {}
  absl::StatusOr<std::unique_ptr<ZeroCopyInputStream>> Open() const override {
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return absl::NotFoundError(absl::StrCat(path_, ": ", std::strerror(errno)));
    return std::make_unique<FileStream>(fd);
  }
  const std::string& name() const override { return path_; }

 private:
  const std::string path_;
};

// Reads one field of the serialized schedule: its messages in order, the rest skipped.
class FieldReader {
 public:
  explicit FieldReader(std::unique_ptr<ZeroCopyInputStream> stream) : stream_(std::move(stream)) {
    Renew();
  }

  // The next field of the top-level message: its number and wire type, or false at the end.
  // Bytes that are no field leave `broken_`.
  bool NextField(int& number, WireFormatLite::WireType& type) {
    // A coded stream counts its position in an int: start a new one well before that wraps.
    if (coded_->CurrentPosition() > (1 << 30)) Renew();
    const uint32_t tag = coded_->ReadTag();
    if (tag == 0) {
      broken_ = !coded_->ConsumedEntireMessage();
      return false;
    }
    number = WireFormatLite::GetTagFieldNumber(tag);
    type = WireFormatLite::GetTagWireType(tag);
    tag_ = tag;
    return true;
  }
  // The field just read, as an embedded message. Its bytes first, parsed then by the parser a
  // whole message goes through (a coded stream would take a cut-short one for a complete one).
  // Its length is checked first: no event is longer than kMaxEventBytes.
  bool ReadMessage(google::protobuf::MessageLite& m) {
    const uint64_t at = position();
    uint32_t length;
    if (!coded_->ReadVarint32(&length)) return Broken();
    if (length > kMaxEventBytes) {
      why_ = absl::StrCat("at byte ", at, ", ", length, " bytes, more than the ", kMaxEventBytes,
                          " an event may take (a CAT record carries at most ", cat::kMaxRecordData,
                          " data bytes)");
      return Broken();
    }
    if (!coded_->ReadString(&scratch_, static_cast<int>(length)) || !m.ParseFromString(scratch_)) {
      return Broken();
    }
    return true;
  }
  bool ReadVarint(uint64_t& v) { return coded_->ReadVarint64(&v) || Broken(); }
  bool SkipField() { return WireFormatLite::SkipField(coded_.get(), tag_) || Broken(); }
  bool broken() const { return broken_; }
  // Why it broke, when more can be said than that the bytes are no message ("" otherwise).
  const std::string& why() const { return why_; }
  // Bytes read so far.
  uint64_t position() const { return base_ + coded_->CurrentPosition(); }

 private:
  bool Broken() {
    broken_ = true;
    return false;
  }
  void Renew() {
    coded_.reset();  // hands its unread bytes back to the stream
    base_ = stream_->ByteCount();
    coded_ = std::make_unique<CodedInputStream>(stream_.get());
  }

  std::unique_ptr<ZeroCopyInputStream> stream_;
  std::unique_ptr<CodedInputStream> coded_;
  uint64_t base_ = 0;  // bytes of the stream before coded_ started
  std::string why_;
  std::string scratch_;
  uint32_t tag_ = 0;
  bool broken_ = false;
};

constexpr char kListAndBlocks[] = "it holds interrupts both in a list and in blocks";

// Which list (0 to 3) a field number is, or -1.
int ListOf(int number) {
  for (int i = 0; i < 4; ++i)
    if (kListFields[i] == number) return i;
  return -1;
}

absl::Status NotASchedule(const ScheduleBytes& bytes, absl::string_view why = "") {
  return absl::InvalidArgumentError(absl::StrCat(bytes.name(), ": not a ",
                                                 EventSchedule::descriptor()->full_name(),
                                                 " message", why.empty() ? "" : ": ", why));
}

// NotASchedule, saying which event broke `in` when it can.
absl::Status BrokenEvent(const ScheduleBytes& bytes, const FieldReader& in, int list,
                         uint64_t index) {
  if (in.why().empty()) return NotASchedule(bytes);
  return NotASchedule(bytes, absl::StrCat(kEventNames[list], " ", index, " ", in.why()));
}

}  // namespace

std::shared_ptr<const ScheduleBytes> BytesInMemory(std::string bytes, std::string name) {
  return std::make_shared<InMemory>(std::move(bytes), std::move(name));
}

std::shared_ptr<const ScheduleBytes> BytesInFile(std::string path) {
  return std::make_shared<InFile>(std::move(path));
}

absl::StatusOr<std::string> ReadAll(const ScheduleBytes& bytes, uint64_t max_bytes) {
  absl::StatusOr<std::unique_ptr<ZeroCopyInputStream>> in = bytes.Open();
  if (!in.ok()) return in.status();
  std::string all;
  const void* data;
  int size;
  while ((*in)->Next(&data, &size)) {
    if (all.size() + size > max_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat(bytes.name(), ": larger than the limit of ", max_bytes, " bytes"));
    }
    all.append(static_cast<const char*>(data), size);
  }
  return all;
}

// ---- ScheduleWriter ----

namespace {

// Moves list `i` of `from` into an otherwise empty message.
EventSchedule TakeList(EventSchedule& from, int i) {
  EventSchedule one;
  switch (i) {
    case 0:
      one.mutable_interrupts()->Swap(from.mutable_interrupts());
      one.mutable_interrupt_blocks()->Swap(from.mutable_interrupt_blocks());
      break;
    case 1:
      one.mutable_dma()->Swap(from.mutable_dma());
      break;
    case 2:
      one.mutable_device_io()->Swap(from.mutable_device_io());
      break;
    default:
      one.mutable_register_reads()->Swap(from.mutable_register_reads());
      break;
  }
  return one;
}

absl::Status WriteAll(int fd, absl::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return absl::UnavailableError(absl::StrCat(path, ": cannot write: ", std::strerror(errno)));
    }
    bytes.remove_prefix(n);
  }
  return absl::OkStatus();
}

// A file with no name in the temporary directory: nothing is left behind, however the process
// ends.
int UnnamedScratchFile(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)) return fd;
  std::string name = dir + "/citcat-aes-XXXXXX";  // a file system without O_TMPFILE
  fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd >= 0) ::unlink(name.c_str());
  return fd;
}

}  // namespace

struct ScheduleWriter::Scratch {
  int fd[4] = {-1, -1, -1, -1};  // one per list, in field order
  std::string first, last;       // the head's fields before and after the lists
  ~Scratch() {
    for (int f : fd) ::close(f);
  }
};

namespace {

// The bytes of a schedule whose lists lie in scratch files: the head's first fields, each list's
// file, the end point.
class InScratch final : public ScheduleBytes {
 public:
  explicit InScratch(std::shared_ptr<const ScheduleWriter::Scratch> s, std::string name)
      : s_(std::move(s)), name_(std::move(name)) {}
  absl::StatusOr<std::unique_ptr<ZeroCopyInputStream>> Open() const override {
    auto stream = std::make_unique<google::protobuf::io::CopyingInputStreamAdaptor>(new Reader(s_));
    stream->SetOwnsCopyingStream(true);
    return stream;
  }
  const std::string& name() const override { return name_; }

 private:
  class Reader final : public google::protobuf::io::CopyingInputStream {
   public:
    explicit Reader(std::shared_ptr<const ScheduleWriter::Scratch> s) : s_(std::move(s)) {}
    int Read(void* buffer, int size) override {
      while (part_ < 6) {
        int n;
        if (part_ == 0 || part_ == 5) {
          const std::string& text = part_ == 0 ? s_->first : s_->last;
          n = static_cast<int>(std::min<size_t>(size, text.size() - at_));
          std::memcpy(buffer, text.data() + at_, n);
        } else {
          const ssize_t got = ::pread(s_->fd[part_ - 1], buffer, size, at_);
          if (got < 0) return -1;
          n = static_cast<int>(got);
        }
        if (n > 0) {
          at_ += n;
          return n;
        }
        ++part_;
        at_ = 0;
      }
      return 0;
    }

   private:
    std::shared_ptr<const ScheduleWriter::Scratch> s_;
    int part_ = 0;  // 0: first, 1-4: the lists, 5: last
    uint64_t at_ = 0;
  };

  const std::shared_ptr<const ScheduleWriter::Scratch> s_;
  const std::string name_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ScheduleWriter>> ScheduleWriter::Create(std::string path) {
  std::error_code error;
  const std::string dir = std::filesystem::temp_directory_path(error).string();
  if (error) {
    return absl::UnavailableError(absl::StrCat("no temporary directory: ", error.message()));
  }
  auto scratch = std::make_shared<Scratch>();
  for (int& fd : scratch->fd) {
    fd = UnnamedScratchFile(dir);
    if (fd < 0) {
      return absl::UnavailableError(
          absl::StrCat(dir, ": cannot make a scratch file for ", path, ": ", std::strerror(errno)));
    }
  }
  return std::unique_ptr<ScheduleWriter>(new ScheduleWriter(std::move(path), std::move(scratch)));
}

ScheduleWriter::ScheduleWriter(std::string path, std::shared_ptr<Scratch> scratch)
    : path_(std::move(path)), scratch_(std::move(scratch)) {}

ScheduleWriter::~ScheduleWriter() = default;

absl::Status ScheduleWriter::Append(EventSchedule& batch) {
  for (int i = 0; i < 4; ++i) {
    const EventSchedule list = TakeList(batch, i);
    counts_[i] += list.interrupts_size() + list.dma_size() + list.device_io_size() +
                  list.register_reads_size();
    for (const InterruptBlock& b : list.interrupt_blocks()) counts_[i] += b.count();
    const std::string bytes = list.SerializeAsString();
    bytes_ += bytes.size();
    if (absl::Status s = WriteAll(scratch_->fd[i], bytes, path_); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status ScheduleWriter::Close(const EventSchedule& head) {
  EventSchedule rest = head;
  if (absl::Status s = Append(rest); !s.ok()) return s;
  EventSchedule before, after;
  before.set_format_version(head.format_version());
  before.set_machine(head.machine());
  if (head.has_end()) *after.mutable_end() = head.end();
  scratch_->first = before.SerializeAsString();
  scratch_->last = after.SerializeAsString();
  bytes_ += scratch_->first.size() + scratch_->last.size();
  return absl::OkStatus();
}

absl::Status ScheduleWriter::Finish(const EventSchedule& head) {
  if (absl::Status s = Close(head); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<io::OutputFile>> out = io::OutputFile::Create(path_);
  if (!out.ok()) return out.status();
  absl::StatusOr<std::unique_ptr<ZeroCopyInputStream>> in = InScratch(scratch_, path_).Open();
  if (!in.ok()) return in.status();
  const void* data;
  int size;
  while ((*in)->Next(&data, &size)) {
    if (absl::Status s =
            (*out)->Write({static_cast<const uint8_t*>(data), static_cast<size_t>(size)});
        !s.ok()) {
      return s;
    }
  }
  if ((*out)->bytes_written() != bytes_) {
    return absl::UnavailableError(absl::StrCat(path_, ": cannot read back a scratch file"));
  }
  return (*out)->Commit();
}

absl::StatusOr<std::shared_ptr<const ScheduleBytes>> ScheduleWriter::FinishInScratch(
    const EventSchedule& head) {
  if (absl::Status s = Close(head); !s.ok()) return s;
  return std::make_shared<InScratch>(std::move(scratch_), path_);
}

// ---- Schedule ----

Schedule::Schedule(const EventSchedule& message)
    : head_(std::shared_ptr<const EventSchedule>(), &message), message_(&message) {
  counts_[0] = message.interrupts_size();
  for (const InterruptBlock& b : message.interrupt_blocks()) counts_[0] += b.count();
  counts_[1] = message.dma_size();
  counts_[2] = message.device_io_size();
  counts_[3] = message.register_reads_size();
  length_ = message.ByteSizeLong();
}

absl::StatusOr<Schedule> Schedule::Parse(std::shared_ptr<const ScheduleBytes> bytes) {
  absl::StatusOr<std::unique_ptr<ZeroCopyInputStream>> stream = bytes->Open();
  if (!stream.ok()) return stream.status();
  FieldReader in(*std::move(stream));
  auto head = std::make_shared<EventSchedule>();
  Schedule s;
  Interrupt interrupt;
  DmaTransfer dma;
  DeviceAccess io;
  RegisterRead reg;
  google::protobuf::MessageLite* events[4] = {&interrupt, &dma, &io, &reg};
  EndPoint end;
  InterruptBlock block;
  InterruptColumnReader columns;
  bool in_list = false, in_blocks = false;  // where the interrupts were met
  int number;
  WireFormatLite::WireType type;
  while (in.NextField(number, type)) {
    const bool embedded = type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
    const bool varint = type == WireFormatLite::WIRETYPE_VARINT;
    uint64_t v;
    if (const int list = ListOf(number); embedded && list >= 0) {
      if (!in.ReadMessage(*events[list])) return BrokenEvent(*bytes, in, list, s.counts_[list] + 1);
      ++s.counts_[list];
      in_list |= list == 0;
    } else if (embedded && number == EventSchedule::kInterruptBlocksFieldNumber) {
      if (!in.ReadMessage(block)) return BrokenEvent(*bytes, in, 0, s.counts_[0] + 1);
      if (absl::Status st = columns.Load(block); !st.ok())
        return NotASchedule(*bytes, st.message());
      s.counts_[0] += columns.loaded();
      in_blocks = true;
    } else if (embedded && number == EventSchedule::kEndFieldNumber) {
      // A repeated singular message merges, as the parser of a whole message would.
      if (!in.ReadMessage(end)) return NotASchedule(*bytes, in.why());
      head->mutable_end()->MergeFrom(end);
    } else if (varint && number == EventSchedule::kFormatVersionFieldNumber) {
      if (!in.ReadVarint(v)) return NotASchedule(*bytes);
      head->set_format_version(static_cast<uint32_t>(v));
    } else if (varint && number == EventSchedule::kMachineFieldNumber) {
      if (!in.ReadVarint(v)) return NotASchedule(*bytes);
      head->set_machine(static_cast<ims::Machine>(static_cast<int>(v)));
    } else if (!in.SkipField()) {  // unknown to this schema: kept by a message, unused here
      return NotASchedule(*bytes);
    }
  }
  if (in.broken()) return NotASchedule(*bytes);
  if (in_list && in_blocks) return NotASchedule(*bytes, kListAndBlocks);
  s.length_ = in.position();
  s.head_ = std::move(head);
  s.bytes_ = std::move(bytes);
  return s;
}

std::unique_ptr<ScheduleReader> Schedule::Read() const {
  return std::unique_ptr<ScheduleReader>(new ScheduleReader(message_, bytes_));
}

// ---- ScheduleReader ----

// One list's place in the bytes.
class ScheduleReader::Cursor {
 public:
  Cursor(const ScheduleBytes& bytes, int field, absl::Status& status)
      : bytes_(bytes), field_(field), status_(status) {}

  // The next event of the list. Interrupts come one per field, or many in a block (format
  // version 2): `event` is then an Interrupt.
  bool Next(google::protobuf::MessageLite& event) {
    if (!status_.ok() || done_) return false;
    const bool interrupts = field_ == EventSchedule::kInterruptsFieldNumber;
    if (interrupts && columns_.Next(static_cast<Interrupt&>(event))) return true;
    if (!in_) {
      absl::StatusOr<std::unique_ptr<ZeroCopyInputStream>> stream = bytes_.Open();
      if (!stream.ok()) return Fail(stream.status());
      in_ = std::make_unique<FieldReader>(*std::move(stream));
    }
    int number;
    WireFormatLite::WireType type;
    while (in_->NextField(number, type)) {
      const bool embedded = type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
      if (embedded && number == field_) {
        return in_->ReadMessage(event) || Fail(NotASchedule(bytes_, in_->why()));
      }
      if (embedded && interrupts && number == EventSchedule::kInterruptBlocksFieldNumber) {
        if (!in_->ReadMessage(block_)) return Fail(NotASchedule(bytes_, in_->why()));
        if (absl::Status s = columns_.Load(block_); !s.ok()) {
          return Fail(NotASchedule(bytes_, s.message()));
        }
        if (columns_.Next(static_cast<Interrupt&>(event))) return true;
      }
      if (!in_->SkipField()) return Fail(NotASchedule(bytes_));
    }
    if (in_->broken()) return Fail(NotASchedule(bytes_));
    done_ = true;
    in_.reset();
    return false;
  }

 private:
  bool Fail(absl::Status s) {
    if (status_.ok()) status_ = std::move(s);
    return false;
  }

  const ScheduleBytes& bytes_;
  const int field_;
  absl::Status& status_;
  std::unique_ptr<FieldReader> in_;  // opened at the first event asked for
  bool done_ = false;
  // Interrupts: the last block read, its interrupts not given out yet in columns_.
  InterruptBlock block_;
  InterruptColumnReader columns_;
};

namespace {

// The next of a message's list, by index.
template <typename Event>
typename EventQueue<Event>::Next FromList(const google::protobuf::RepeatedPtrField<Event>& list) {
  return [&list, i = 0](Event& e) mutable {
    if (i >= list.size()) return false;
    e = list.Get(i++);
    return true;
  };
}

// The interrupts of a message's blocks (a message holds them in a list or in blocks, not both).
EventQueue<Interrupt>::Next FromBlocks(
    const google::protobuf::RepeatedPtrField<InterruptBlock>& blocks, absl::Status& status) {
  struct State {
    InterruptColumnReader columns;
    int block = 0;
  };
  return [&blocks, &status, state = std::make_shared<State>()](Interrupt& e) {
    while (!state->columns.Next(e)) {
      if (state->block >= blocks.size() || !status.ok()) return false;
      if (absl::Status s = state->columns.Load(blocks.Get(state->block++)); !s.ok()) {
        status = std::move(s);
        return false;
      }
    }
    return true;
  };
}

}  // namespace

ScheduleReader::ScheduleReader(const EventSchedule* message,
                               std::shared_ptr<const ScheduleBytes> bytes)
    : bytes_(std::move(bytes)),
      interrupts_(message ? (message->interrupt_blocks_size() > 0
                                 ? FromBlocks(message->interrupt_blocks(), status_)
                                 : FromList(message->interrupts()))
                          : [this](Interrupt& e) { return cursors_[0]->Next(e); }),
      dma_(message ? FromList(message->dma())
                   : [this](DmaTransfer& e) { return cursors_[1]->Next(e); }),
      device_io_(message ? FromList(message->device_io())
                         : [this](DeviceAccess& e) { return cursors_[2]->Next(e); }),
      register_reads_(message ? FromList(message->register_reads())
                              : [this](RegisterRead& e) { return cursors_[3]->Next(e); }) {
  if (message != nullptr) return;
  for (int i = 0; i < 4; ++i)
    cursors_[i] = std::make_unique<Cursor>(*bytes_, kListFields[i], status_);
}

ScheduleReader::~ScheduleReader() = default;

}  // namespace citcat::aes
