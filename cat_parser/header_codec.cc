#include "cat_parser/header_codec.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "cat_parser/format.h"

namespace citcat::cat {
namespace {

using namespace format;  // NOLINT: the codec is all about these constants

bool IsNameChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

absl::Status ValidateWindow(const AddressWindow& w, absl::string_view what) {
  if (w.name.empty() || w.name.size() > kMaxWindowName) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " name must be 1 to ", kMaxWindowName, " characters"));
  }
  for (char c : w.name) {
    if (!IsNameChar(c)) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " name '", w.name, "' has a character outside [A-Za-z0-9._-]"));
    }
  }
  if (w.kind != WindowKind::kMemoryMapped && w.kind != WindowKind::kPort) {
    return absl::InvalidArgumentError(absl::StrCat(what, " '", w.name, "' has an unknown kind"));
  }
  if (w.size == 0)
    return absl::InvalidArgumentError(absl::StrCat(what, " '", w.name, "' is empty"));
  return absl::OkStatus();
}

// Whether [a, a + n) and [b, b + m) share a byte; the ranges do not wrap.
bool Overlap(uint64_t a, uint64_t n, uint64_t b, uint64_t m) { return a < b + m && b < a + n; }

// ROM lies outside RAM (wholly in a hole if below the memory size), in address order, apart from
// other ROM and from memory-mapped device windows and reserved areas.
absl::Status ValidateRoms(const CatHeader& h) {
  uint64_t roms_end = 0;
  for (const RomWindow& rom : h.roms) {
    std::string where =
        absl::StrCat("ROM at 0x", absl::Hex(rom.base), " of 0x", absl::Hex(rom.size), " bytes");
    if (rom.size == 0) return absl::InvalidArgumentError(absl::StrCat(where, " is empty"));
    if (rom.size > UINT64_MAX - rom.base) {
      return absl::InvalidArgumentError(absl::StrCat(where, " runs past the address space"));
    }
    if (rom.base < h.memory_bytes &&
        std::none_of(h.holes.begin(), h.holes.end(), [&](const MemoryHole& hole) {
          return rom.base >= hole.base && rom.base + rom.size <= hole.base + hole.size;
        })) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " overlaps main memory outside its holes"));
    }
    if (rom.base < roms_end) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " overlaps the one before or comes out of address order"));
    }
    roms_end = rom.base + rom.size;
    for (const std::vector<AddressWindow>* list : {&h.devices, &h.magic}) {
      for (const AddressWindow& w : *list) {
        if (w.kind == WindowKind::kMemoryMapped && w.size <= UINT64_MAX - w.base &&
            Overlap(rom.base, rom.size, w.base, w.size)) {
          return absl::InvalidArgumentError(absl::StrCat(where, " overlaps '", w.name, "'"));
        }
      }
    }
  }
  return absl::OkStatus();
}

void PutField(std::vector<uint8_t>& out, uint16_t tag, std::span<const uint8_t> value) {
  uint8_t head[6];
  Store16(head, tag);
  Store32(head + 2, static_cast<uint32_t>(value.size()));
  out.insert(out.end(), head, head + 6);
  out.insert(out.end(), value.begin(), value.end());
}

void PutWindow(std::vector<uint8_t>& out, uint16_t tag, const AddressWindow& w) {
  std::vector<uint8_t> v(17);
  v[0] = static_cast<uint8_t>(w.kind);
  Store64(&v[1], w.base);
  Store64(&v[9], w.size);
  v.insert(v.end(), w.name.begin(), w.name.end());
  PutField(out, tag, v);
}

}  // namespace

absl::Status ValidateHeader(const CatHeader& h) {
  if (h.machine != Machine::kR4400 && h.machine != Machine::kI486) {
    return absl::InvalidArgumentError("unknown machine");
  }
  if (h.byte_order != ByteOrder::kLittle && h.byte_order != ByteOrder::kBig) {
    return absl::InvalidArgumentError("unknown byte order");
  }
  if ((h.side_band & ~kKnownSideBand) != 0) {
    return absl::InvalidArgumentError("unknown side-band signal");
  }
  uint64_t holes_end = 0;
  for (const MemoryHole& hole : h.holes) {
    std::string where = absl::StrCat("memory hole at 0x", absl::Hex(hole.base), " of 0x",
                                     absl::Hex(hole.size), " bytes");
    if (hole.size == 0) return absl::InvalidArgumentError(absl::StrCat(where, " is empty"));
    if (hole.base >= h.memory_bytes || hole.size > h.memory_bytes - hole.base) {
      return absl::InvalidArgumentError(absl::StrCat(where, " lies outside main memory"));
    }
    if (hole.base < holes_end) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " overlaps the one before or comes out of address order"));
    }
    holes_end = hole.base + hole.size;
  }
  for (const CacheGeometry& c : h.caches) {
    bool type_ok = c.type == CacheType::kInstruction || c.type == CacheType::kData ||
                   c.type == CacheType::kUnified;
    bool policy_ok = c.policy == WritePolicy::kWriteBack || c.policy == WritePolicy::kWriteThrough;
    if (!type_ok || !policy_ok || c.level == 0 || c.ways == 0 || c.line_bytes == 0 ||
        c.size_bytes % (c.line_bytes * c.ways) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("cache level ", c.level, " geometry is invalid"));
    }
  }
  for (const AddressWindow& w : h.devices) {
    if (absl::Status s = ValidateWindow(w, "device"); !s.ok()) return s;
  }
  if (h.devices.size() > 255) return absl::InvalidArgumentError("more than 255 devices");
  for (const AddressWindow& w : h.magic) {
    if (absl::Status s = ValidateWindow(w, "reserved area"); !s.ok()) return s;
  }
  return ValidateRoms(h);
}

std::vector<uint8_t> EncodeHeaderBody(const CatHeader& h) {
  std::vector<uint8_t> out;
  uint8_t b[12];
  b[0] = static_cast<uint8_t>(h.machine);
  PutField(out, kTagMachine, {b, 1});
  b[0] = static_cast<uint8_t>(h.byte_order);
  PutField(out, kTagByteOrder, {b, 1});
  Store64(b, h.memory_bytes);
  PutField(out, kTagMemoryBytes, {b, 8});
  for (const MemoryHole& hole : h.holes) {
    uint8_t v[16];
    Store64(v, hole.base);
    Store64(v + 8, hole.size);
    PutField(out, kTagMemoryHole, v);
  }
  for (const RomWindow& rom : h.roms) {
    uint8_t v[16];
    Store64(v, rom.base);
    Store64(v + 8, rom.size);
    PutField(out, kTagRom, v);
  }
  if (h.from_reset) PutField(out, kTagFromReset, {});
  Store32(b, h.side_band);
  PutField(out, kTagSideBand, {b, 4});
  for (const CacheGeometry& c : h.caches) {
    b[0] = c.level;
    b[1] = static_cast<uint8_t>(c.type);
    b[2] = c.ways;
    b[3] = static_cast<uint8_t>(c.policy);
    Store32(b + 4, c.size_bytes);
    Store32(b + 8, c.line_bytes);
    PutField(out, kTagCache, {b, 12});
  }
  for (const AddressWindow& w : h.devices) PutWindow(out, kTagDevice, w);
  for (const AddressWindow& w : h.magic) PutWindow(out, kTagMagic, w);
  if (!h.producer.empty()) {
    PutField(out, kTagProducer,
             {reinterpret_cast<const uint8_t*>(h.producer.data()), h.producer.size()});
  }
  return out;
}

namespace {

// Well-formed UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF.
bool IsUtf8(absl::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<uint8_t>(s[i]);
    int n = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
    if (n < 0 || s.size() - i <= static_cast<size_t>(n)) return false;
    uint32_t cp = n == 0 ? c : c & (0x3F >> n);
    for (int k = 1; k <= n; ++k) {
      const auto b = static_cast<uint8_t>(s[i + k]);
      if ((b & 0xC0) != 0x80) return false;
      cp = cp << 6 | (b & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

}  // namespace

absl::StatusOr<CatHeader> DecodeHeaderBody(std::span<const uint8_t> body, absl::string_view path,
                                           uint64_t body_offset) {
  CatHeader h;
  h.side_band = 0;
  bool seen_machine = false, seen_order = false, seen_memory = false, seen_side_band = false,
       seen_producer = false;
  size_t pos = 0;
  auto error = [&](size_t at, absl::string_view what) {
    return absl::DataLossError(
        absl::StrCat(path, ": offset ", body_offset + at, ": header ", what));
  };
  while (pos < body.size()) {
    if (body.size() - pos < 6) return error(pos, "field cut short");
    uint16_t tag = Load16(&body[pos]);
    uint32_t length = Load32(&body[pos + 2]);
    if (length > body.size() - pos - 6) return error(pos, "field runs past the header");
    const uint8_t* v = &body[pos + 6];
    auto want = [&](uint32_t n, bool& seen) -> absl::Status {
      if (seen) return error(pos, absl::StrCat("field ", tag, " repeated"));
      seen = true;
      if (length != n) return error(pos, absl::StrCat("field ", tag, " has length ", length));
      return absl::OkStatus();
    };
    absl::Status s;
    switch (tag) {
      case kTagMachine:
        s = want(1, seen_machine);
        h.machine = static_cast<Machine>(v[0]);
        break;
      case kTagByteOrder:
        s = want(1, seen_order);
        h.byte_order = static_cast<ByteOrder>(v[0]);
        break;
      case kTagMemoryBytes:
        s = want(8, seen_memory);
        h.memory_bytes = Load64(v);
        break;
      case kTagSideBand:
        s = want(4, seen_side_band);
        h.side_band = Load32(v);
        break;
      case kTagCache: {
        if (length != 12) return error(pos, "cache field has the wrong length");
        h.caches.push_back({v[0], static_cast<CacheType>(v[1]), v[2],
                            static_cast<WritePolicy>(v[3]), Load32(v + 4), Load32(v + 8)});
        break;
      }
      case kTagDevice:
      case kTagMagic: {
        if (length < 18 || length > 17 + kMaxWindowName) {
          return error(pos, "window field has the wrong length");
        }
        AddressWindow w{std::string(reinterpret_cast<const char*>(v + 17), length - 17),
                        static_cast<WindowKind>(v[0]), Load64(v + 1), Load64(v + 9)};
        (tag == kTagDevice ? h.devices : h.magic).push_back(std::move(w));
        break;
      }
      case kTagMemoryHole:
        if (length != 16) return error(pos, "memory hole field has the wrong length");
        h.holes.push_back({Load64(v), Load64(v + 8)});
        break;
      case kTagRom:
        if (length != 16) return error(pos, "ROM field has the wrong length");
        h.roms.push_back({Load64(v), Load64(v + 8)});
        break;
      case kTagFromReset:
        s = want(0, h.from_reset);
        break;
      case kTagProducer:
        if (seen_producer) return error(pos, "producer field repeated");
        seen_producer = true;
        h.producer.assign(reinterpret_cast<const char*>(v), length);
        // It travels on into the IMS, a protobuf string, which must be UTF-8.
        if (!IsUtf8(h.producer)) return error(pos, "producer field is not UTF-8 text");
        break;
      default:
        if (tag < kFirstOptionalTag) return error(pos, absl::StrCat("has unknown field ", tag));
        break;
    }
    if (!s.ok()) return s;
    pos += 6 + length;
  }
  if (!seen_machine || !seen_order || !seen_memory) {
    return error(body.size(), "lacks machine, byte order or memory size");
  }
  if (absl::Status s = ValidateHeader(h); !s.ok()) {
    return error(0, absl::StrCat("is invalid: ", s.message()));
  }
  return h;
}

}  // namespace citcat::cat
