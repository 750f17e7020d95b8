#include "ims/bounds.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "google/protobuf/wire_format_lite.h"

namespace citcat::ims {
namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;
using google::protobuf::io::ZeroCopyInputStream;

absl::Status NotAnIms(uint64_t at) {
  return absl::InvalidArgumentError(absl::StrCat(
      "not a ", InitialMachineState::descriptor()->full_name(), " message (at byte ", at, ")"));
}

absl::Status TooLarge(uint64_t at, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("at byte ", at, " of the IMS: ", what));
}

// One pass over the serialized message, its fields one at a time.
class Pass {
 public:
  static absl::StatusOr<Pass> Open(const OpenStream& open) {
    absl::StatusOr<std::unique_ptr<ZeroCopyInputStream>> stream = open();
    if (!stream.ok()) return stream.status();
    return Pass(*std::move(stream));
  }
  Pass(Pass&&) = default;

  CodedInputStream& in() { return *in_; }
  uint64_t at() const { return in_->CurrentPosition(); }
  // The length of the length-delimited field whose tag was just read.
  bool Length(uint32_t& n) { return in_->ReadVarint32(&n); }
  // The end of the message (or of a PushLimit): whether it ended where a message may.
  bool Ended() const { return in_->ConsumedEntireMessage(); }

 private:
  explicit Pass(std::unique_ptr<ZeroCopyInputStream> stream)
      : stream_(std::move(stream)), in_(std::make_unique<CodedInputStream>(stream_.get())) {
    in_->SetTotalBytesLimit(INT_MAX);
  }
  std::unique_ptr<ZeroCopyInputStream> stream_;
  std::unique_ptr<CodedInputStream> in_;
};

bool LengthDelimited(uint32_t tag) {
  return WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
}

// Reads one occurrence of the description, whose tag was just read at `at`, and merges it into
// `description` as a parser would.
absl::Status MergeDescription(Pass& pass, uint64_t at, MachineDescription& description) {
  uint32_t length;
  if (!pass.Length(length)) return NotAnIms(at);
  if (length > kMaxStateBytes) {
    return TooLarge(at, absl::StrCat("a machine description of ", length, " bytes, more than the ",
                                     kMaxStateBytes, " all but the memory image may take"));
  }
  std::string bytes;
  MachineDescription part;
  if (!pass.in().ReadString(&bytes, static_cast<int>(length)) || !part.ParseFromString(bytes)) {
    return NotAnIms(at);
  }
  description.MergeFrom(part);
  return absl::OkStatus();
}

bool IsDescription(uint32_t tag) {
  return WireFormatLite::GetTagFieldNumber(tag) == InitialMachineState::kDescriptionFieldNumber &&
         LengthDelimited(tag);
}

// The description, merged from every occurrence; everything else skipped.
absl::Status ReadDescription(const OpenStream& open, MachineDescription& description) {
  absl::StatusOr<Pass> pass = Pass::Open(open);
  if (!pass.ok()) return pass.status();
  CodedInputStream& in = pass->in();
  uint64_t at;
  for (;;) {
    at = pass->at();
    const uint32_t tag = in.ReadTag();
    if (tag == 0) break;
    if (!IsDescription(tag)) {
      if (!WireFormatLite::SkipField(&in, tag)) return NotAnIms(at);
      continue;
    }
    if (absl::Status s = MergeDescription(*pass, at, description); !s.ok()) return s;
  }
  if (!pass->Ended()) return NotAnIms(at);
  return absl::OkStatus();
}

// The sizes of the memory extents and of the rest, in one pass, against `description`. With
// `merging`, the description is read in the same pass, and each extent is checked against what
// was read of it so far: `*late` tells the caller when an occurrence of it came after an extent,
// whose check then did not see the whole description.
absl::Status CheckPass(const OpenStream& open, uint64_t max_image_bytes, bool merging,
                       MachineDescription& description, bool* late) {
  absl::StatusOr<Pass> pass = Pass::Open(open);
  if (!pass.ok()) return pass.status();
  CodedInputStream& in = pass->in();
  uint64_t image = 0, state = 0, extents = 0;
  const auto add_state = [&](uint64_t at) -> absl::Status {
    state += pass->at() - at;
    if (state > kMaxStateBytes) {
      return TooLarge(at, absl::StrCat("more than the ", kMaxStateBytes,
                                       " bytes all but the memory image may take"));
    }
    return absl::OkStatus();
  };
  // What counts as state: every field outside the memory extents, and in an extent every field
  // but its address and data.
  const auto skip_as_state = [&](uint32_t tag, uint64_t at) -> absl::Status {
    if (!WireFormatLite::SkipField(&in, tag)) return NotAnIms(at);
    return add_state(at);
  };
  uint64_t at;
  for (;;) {
    at = pass->at();
    const uint32_t tag = in.ReadTag();
    if (tag == 0) break;
    if (merging && IsDescription(tag)) {
      if (extents > 0) {
        *late = true;
        return absl::OkStatus();
      }
      if (absl::Status s = MergeDescription(*pass, at, description); !s.ok()) return s;
      if (absl::Status s = add_state(at); !s.ok()) return s;
      continue;
    }
    if (WireFormatLite::GetTagFieldNumber(tag) != InitialMachineState::kMemoryFieldNumber ||
        !LengthDelimited(tag)) {
      if (absl::Status s = skip_as_state(tag, at); !s.ok()) return s;
      continue;
    }
    const uint64_t map = MaxImageBytes(description);
    const uint64_t max_image = std::min(map, max_image_bytes);
    ++extents;
    uint32_t length;
    if (!pass->Length(length)) return NotAnIms(at);
    const CodedInputStream::Limit limit = in.PushLimit(static_cast<int>(length));
    uint64_t data = 0, field_at;
    for (;;) {
      field_at = pass->at();
      const uint32_t field = in.ReadTag();
      if (field == 0) break;
      const int number = WireFormatLite::GetTagFieldNumber(field);
      if (number == MemoryExtent::kAddressFieldNumber &&
          WireFormatLite::GetTagWireType(field) == WireFormatLite::WIRETYPE_VARINT) {
        uint64_t address;
        if (!in.ReadVarint64(&address)) return NotAnIms(field_at);
        continue;
      }
      if (number != MemoryExtent::kDataFieldNumber || !LengthDelimited(field)) {
        if (absl::Status s = skip_as_state(field, field_at); !s.ok()) return s;
        continue;
      }
      uint32_t size;
      if (!pass->Length(size)) return NotAnIms(field_at);
      data += size;
      if (data > map) {
        return TooLarge(
            at, absl::StrCat("memory extent ", extents, " holds ", data, " bytes, more than the ",
                             map, " of the machine's memory map (", description.memory_bytes(),
                             " bytes of memory, ", description.rom_bytes(), " of ROM)"));
      }
      if (image + data > max_image) {
        return TooLarge(at, absl::StrCat("memory extent ", extents, " brings the image to ",
                                         image + data, " bytes, more than the ", max_image,
                                         max_image < map ? " the trace can have read"
                                                         : " of the machine's memory map"));
      }
      if (!in.Skip(static_cast<int>(size))) return NotAnIms(field_at);
    }
    if (!pass->Ended()) return NotAnIms(field_at);
    in.PopLimit(limit);
    // Every extent holds a byte at least: so their number is bounded with their bytes.
    if (data == 0) return TooLarge(at, absl::StrCat("memory extent ", extents, " holds no byte"));
    image += data;
  }
  if (!pass->Ended()) return NotAnIms(at);
  return absl::OkStatus();
}

}  // namespace

uint64_t MaxImageBytes(const MachineDescription& d) {
  return std::min(d.memory_bytes(), kMaxMemoryBytes) + 2 * std::min(d.rom_bytes(), kMaxRomBytes) +
         kMaxReservedBytes;
}

absl::Status CheckSizes(const OpenStream& open, uint64_t max_image_bytes) {
  // Writers put the description before the memory (its field number is lower), so one pass
  // reads it before any extent is checked against it. Any other message, and any that fails,
  // is read through twice, the description first, so that what refuses it is exact.
  MachineDescription description;
  bool late = false;
  if (CheckPass(open, max_image_bytes, /*merging=*/true, description, &late).ok() && !late) {
    return absl::OkStatus();
  }
  description.Clear();
  if (absl::Status s = ReadDescription(open, description); !s.ok()) return s;
  return CheckPass(open, max_image_bytes, /*merging=*/false, description, &late);
}

absl::Status ReadFile(const std::string& path, InitialMachineState& state) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    const int error = errno;
    if (fd >= 0) ::close(fd);
    return absl::NotFoundError(absl::StrCat(path, ": ", std::strerror(error)));
  }
  // A file that cannot be read twice (a FIFO) is read into memory first, within the same bound.
  std::string bytes;
  bool too_large = S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > kMaxImsBytes;
  if (!S_ISREG(st.st_mode)) {
    char block[1 << 16];
    ssize_t n;
    while (!too_large && (n = ::read(fd, block, sizeof block)) > 0) {
      bytes.append(block, n);
      too_large = bytes.size() > kMaxImsBytes;
    }
  }
  ::close(fd);
  if (too_large) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": more than the ", kMaxImsBytes, " bytes an IMS can hold"));
  }
  const bool regular = S_ISREG(st.st_mode);
  const auto open = [&]() -> absl::StatusOr<std::unique_ptr<ZeroCopyInputStream>> {
    if (!regular) {
      return std::make_unique<google::protobuf::io::ArrayInputStream>(
          bytes.data(), static_cast<int>(bytes.size()));
    }
    const int f = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (f < 0) return absl::NotFoundError(absl::StrCat(path, ": ", std::strerror(errno)));
    auto in = std::make_unique<google::protobuf::io::FileInputStream>(f);
    in->SetCloseOnDelete(true);
    return in;
  };
  if (absl::Status s = CheckSizes(open); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(path, ": ", s.message()));
  }
  absl::StatusOr<std::unique_ptr<ZeroCopyInputStream>> in = open();
  if (!in.ok()) return in.status();
  if (!state.ParseFromZeroCopyStream(in->get())) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a ", InitialMachineState::descriptor()->full_name(), " message"));
  }
  return absl::OkStatus();
}

}  // namespace citcat::ims
