#include "cat_parser/reader.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "cat_parser/crc.h"
#include "cat_parser/format.h"
#include "cat_parser/header_codec.h"

namespace citcat::cat {

using namespace format;  // NOLINT

std::string format::ChunkTypeName(uint32_t type) {
  std::string name;
  for (int i = 0; i < 4; ++i) {
    char c = static_cast<char>(type >> (8 * i));
    if (c >= 0x20 && c < 0x7F) {
      name += c;
    } else {
      absl::StrAppend(&name, "\\x", absl::Hex(static_cast<uint8_t>(c), absl::kZeroPad2));
    }
  }
  return name;
}

absl::StatusOr<std::unique_ptr<CatReader>> CatReader::Open(const std::string& path) {
  absl::StatusOr<std::unique_ptr<io::InputFile>> in = io::InputFile::Open(path);
  if (!in.ok()) return in.status();
  return Open(std::move(*in));
}

absl::StatusOr<std::unique_ptr<CatReader>> CatReader::Open(std::unique_ptr<io::InputFile> in) {
  std::unique_ptr<CatReader> reader(new CatReader(std::move(in)));
  if (absl::Status s = reader->ReadHeader(); !s.ok()) return s;
  return reader;
}

absl::Status CatReader::Corrupt(uint64_t offset, absl::string_view what) const {
  return absl::DataLossError(absl::StrCat(in_->path(), ": offset ", offset, ": ", what));
}

absl::Status CatReader::ReadHeader() {
  uint8_t prefix[kFileHeaderPrefix];
  absl::StatusOr<size_t> got = in_->Read(prefix);
  if (!got.ok()) return got.status();
  if (*got == 0) return absl::DataLossError(absl::StrCat(in_->path(), ": empty file, not a CAT"));
  if (*got < kMagic.size() || !std::equal(kMagic.begin(), kMagic.end(), prefix)) {
    return absl::InvalidArgumentError(
        absl::StrCat(in_->path(), ": offset 0: not a CAT file (wrong magic number)"));
  }
  if (*got < kFileHeaderPrefix) return Corrupt(*got, "truncated file header");
  uint16_t major = Load16(prefix + 8);
  minor_version_ = Load16(prefix + 10);
  if (major != kMajorVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat(in_->path(), ": offset 8: CAT version ", major, ".", minor_version_,
                     " is not supported (this reader knows version ", kMajorVersion, ".x)"));
  }
  uint32_t body_length = Load32(prefix + 12);
  if (body_length > kMaxHeaderBody) {
    return Corrupt(
        12, absl::StrCat("header length ", body_length, " exceeds the limit of ", kMaxHeaderBody));
  }
  std::vector<uint8_t> body(body_length + 4);
  if (absl::Status s = in_->ReadExactly(body, "file header"); !s.ok()) return s;
  uint32_t stored = Load32(&body[body_length]);
  uint32_t crc = Crc32({body.data(), body_length}, Crc32({prefix + 8, 8}));
  if (stored != crc) return Corrupt(kFileHeaderPrefix + body_length, "header checksum mismatch");
  absl::StatusOr<CatHeader> header =
      DecodeHeaderBody({body.data(), body_length}, in_->path(), kFileHeaderPrefix);
  if (!header.ok()) return header.status();
  header_ = std::move(*header);
  return absl::OkStatus();
}

absl::Status CatReader::LoadChunk() {
  while (true) {
    uint64_t chunk_offset = in_->offset();
    uint8_t h[kChunkHeaderBytes];
    absl::StatusOr<size_t> got = in_->Read(h);
    if (!got.ok()) return got.status();
    if (*got == 0) {
      return Corrupt(chunk_offset, "file ends without its end chunk (truncated)");
    }
    if (*got < kChunkHeaderBytes) return Corrupt(chunk_offset, "truncated chunk header");
    uint32_t type = Load32(h);
    uint32_t length = Load32(h + 4);
    uint32_t count = Load32(h + 8);
    uint64_t index = Load64(h + 12);
    if (length > kMaxChunkPayload) {
      return Corrupt(chunk_offset, absl::StrCat("chunk payload length ", length,
                                                " exceeds the limit of ", kMaxChunkPayload));
    }
    payload_.resize(length);
    if (absl::Status s = in_->ReadExactly(payload_, "chunk payload"); !s.ok()) return s;
    if (Crc32(payload_, Crc32({h, 20})) != Load32(h + 20)) {
      return Corrupt(chunk_offset, absl::StrCat("checksum mismatch in chunk '", ChunkTypeName(type),
                                                "' (records from ", next_index_, ")"));
    }
    payload_offset_ = chunk_offset + kChunkHeaderBytes;
    if (type == kChunkRecords) {
      if (index != next_index_) {
        return Corrupt(chunk_offset, absl::StrCat("chunk starts at record ", index, " but record ",
                                                  next_index_, " was expected"));
      }
      if (count == 0) return Corrupt(chunk_offset, "record chunk holds no records");
      cursor_ = 0;
      chunk_left_ = count;
      return absl::OkStatus();
    }
    if (type == kChunkDone) {
      if (length != 0 || count != 0) return Corrupt(chunk_offset, "malformed end chunk");
      if (index != next_index_) {
        return Corrupt(chunk_offset, absl::StrCat("end chunk counts ", index, " records but ",
                                                  next_index_, " were read"));
      }
      uint8_t extra;
      absl::StatusOr<size_t> more = in_->Read({&extra, 1});
      if (!more.ok()) return more.status();
      if (*more != 0) return Corrupt(in_->offset() - 1, "bytes after the end chunk");
      done_ = true;
      return absl::OkStatus();
    }
    char first = static_cast<char>(type & 0xFF);
    if (first < 'a' || first > 'z') {
      return Corrupt(chunk_offset, absl::StrCat("unknown chunk type '", ChunkTypeName(type), "'"));
    }
    // An optional chunk this reader does not know: its checksum was good, so skip it.
  }
}

absl::StatusOr<bool> CatReader::Next(BusRecord& r) {
  while (true) {
    if (chunk_left_ == 0) {
      if (done_) return false;
      if (cursor_ != payload_.size()) {
        return Corrupt(payload_offset_ + cursor_, "chunk has bytes after its last record");
      }
      if (absl::Status s = LoadChunk(); !s.ok()) return s;
      if (done_) return false;
    }
    size_t left = payload_.size() - cursor_;
    record_offset_ = payload_offset_ + cursor_;
    if (left < kRecordHeaderBytes) {
      return Corrupt(record_offset_, absl::StrCat("record ", next_index_, " runs past its chunk"));
    }
    const uint8_t* p = &payload_[cursor_];
    uint32_t size = Load32(p + 4);
    if (size > kMaxRecordData) {
      return Corrupt(record_offset_, absl::StrCat("record ", next_index_, " has ", size,
                                                  " data bytes, more than ", kMaxRecordData));
    }
    if (size > left - kRecordHeaderBytes) {
      return Corrupt(record_offset_, absl::StrCat("record ", next_index_, " runs past its chunk"));
    }
    cursor_ += kRecordHeaderBytes + size;
    --chunk_left_;
    ++next_index_;
    uint8_t kind = p[0];
    if (!IsKnownKind(kind)) {
      if (kind >= kFirstOptionalKind) continue;
      return Corrupt(record_offset_,
                     absl::StrCat("record ", next_index_ - 1, " has unknown kind ", kind));
    }
    if (p[2] > header_.devices.size()) {
      return Corrupt(record_offset_,
                     absl::StrCat("record ", next_index_ - 1, " names bus master ", p[2],
                                  " but the header has ", header_.devices.size(), " devices"));
    }
    r.kind = static_cast<RecordKind>(kind);
    r.flags = p[1];
    r.master = p[2];
    r.address = Load64(p + 8);
    r.branch_count = Load64(p + 16);
    r.data = {p + kRecordHeaderBytes, size};
    return true;
  }
}

}  // namespace citcat::cat
