// The sizes an IMS may declare, checked on its serialized bytes before anything is allocated for
// them: a memory extent no larger than the machine's memory map, a processor state no larger than
// a processor holds. A message that passes costs memory in proportion to what its description
// says the machine had; one that fails costs a fixed buffer (docs/archive-format.md, "Hostile
// input").
#ifndef CITCAT_IMS_BOUNDS_H_
#define CITCAT_IMS_BOUNDS_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/io/zero_copy_stream.h"
#include "ims/ims.pb.h"

namespace citcat::ims {

// Everything but the memory image, serialized: the description, registers, TLB, the caches'
// lines (a segment's start holds them with their bytes) and the start point.
inline constexpr uint64_t kMaxStateBytes = uint64_t{16} << 20;
// The largest memory replay accepts, and the largest ROM.
inline constexpr uint64_t kMaxMemoryBytes = uint64_t{1} << 30;
inline constexpr uint64_t kMaxRomBytes = uint64_t{16} << 20;
// The reserved areas of the guest contracts (a segment's start holds their bytes), with room.
inline constexpr uint64_t kMaxReservedBytes = uint64_t{64} << 10;
// The most an IMS may hold, serialized: the largest image and the state (kMaxStateBytes).
inline constexpr uint64_t kMaxImsBytes = kMaxMemoryBytes + kMaxStateBytes;

// The bytes of the memory image an IMS of `description` can hold: its RAM (at most
// kMaxMemoryBytes), its ROM twice (the i486 PC shows the ROM's tail below 1 MiB too) and the
// reserved areas.
uint64_t MaxImageBytes(const MachineDescription& description);

// A new stream over the serialized IMS, from its first byte.
using OpenStream =
    std::function<absl::StatusOr<std::unique_ptr<google::protobuf::io::ZeroCopyInputStream>>()>;

// Reads the serialized IMS through, holding none of it, for its description and to check every
// memory extent against it (non-empty, within MaxImageBytes, all together within it and within
// `max_image_bytes`, which a caller that knows how many bytes the trace read sets) and that the
// rest stays within kMaxStateBytes. InvalidArgument, one line saying what and at which byte. One
// pass when the description comes before the memory, as writers put it; otherwise, or when it
// refuses the message, three (the stream opened again each time).
absl::Status CheckSizes(const OpenStream& open,
                        uint64_t max_image_bytes = std::numeric_limits<uint64_t>::max());

// Reads an ims.pb file: refused by its size (kMaxImsBytes) or by CheckSizes before it is read
// into memory; InvalidArgument naming the file otherwise.
absl::Status ReadFile(const std::string& path, InitialMachineState& state);

}  // namespace citcat::ims

#endif  // CITCAT_IMS_BOUNDS_H_
