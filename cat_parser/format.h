// Byte-level constants and little-endian helpers of CAT format 1.x (docs/cat-format.md).
// Internal to cat_parser: users see the record model and the reader/writer.
#ifndef CITCAT_CAT_PARSER_FORMAT_H_
#define CITCAT_CAT_PARSER_FORMAT_H_

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>

namespace citcat::cat::format {

static_assert(std::endian::native == std::endian::little,
              "CAT framing helpers assume a little-endian host");

inline constexpr std::array<uint8_t, 8> kMagic = {0x89, 'C', 'A', 'T', 0x0D, 0x0A, 0x1A, 0x0A};
inline constexpr uint16_t kMajorVersion = 1;
inline constexpr uint16_t kMinorVersion = 0;
// The minor version a writer puts in a file that uses the memory-hole field, added in 1.1.
inline constexpr uint16_t kMinorVersionHoles = 1;
// The minor version of a file with a ROM or from-reset field, added in 1.2.
inline constexpr uint16_t kMinorVersionRom = 2;
inline constexpr uint32_t kMaxHeaderBody = 1 << 20;
inline constexpr size_t kFileHeaderPrefix = 16;  // magic, versions, body length

inline constexpr size_t kChunkHeaderBytes = 24;
inline constexpr uint32_t kMaxChunkPayload = 1 << 20;
inline constexpr uint32_t kTargetChunkPayload = 64 * 1024;
inline constexpr uint32_t kChunkRecords = 0x53434552;  // "RECS" read as a little-endian u32
inline constexpr uint32_t kChunkDone = 0x454E4F44;     // "DONE"

inline constexpr size_t kRecordHeaderBytes = 24;

enum Tag : uint16_t {
  kTagMachine = 0x0001,
  kTagByteOrder = 0x0002,
  kTagMemoryBytes = 0x0003,
  kTagSideBand = 0x0004,
  kTagCache = 0x0005,
  kTagDevice = 0x0006,
  kTagMagic = 0x0007,
  kTagProducer = 0x0008,
  kTagMemoryHole = 0x0009,  // 1.1; required on purpose: a reader skipping it would take it for RAM
  // 1.2, both required on purpose: a reader skipping the ROM would take its fetches for device
  // reads, one skipping from-reset would look for a begin marker.
  kTagRom = 0x000A,
  kTagFromReset = 0x000B,
  kFirstOptionalTag = 0x8000,
};
inline constexpr size_t kMaxWindowName = 64;

inline uint16_t Load16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline uint32_t Load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void Store16(uint8_t* p, uint16_t v) { std::memcpy(p, &v, sizeof v); }
inline void Store32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, sizeof v); }
inline void Store64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, sizeof v); }

// Four-letter chunk type as text for messages, with non-printing bytes escaped.
std::string ChunkTypeName(uint32_t type);

}  // namespace citcat::cat::format

#endif  // CITCAT_CAT_PARSER_FORMAT_H_
