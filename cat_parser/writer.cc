#include "cat_parser/writer.h"

#include "absl/strings/str_cat.h"
#include "cat_parser/crc.h"
#include "cat_parser/format.h"
#include "cat_parser/header_codec.h"

namespace citcat::cat {

using namespace format;  // NOLINT

namespace {

// The oldest minor version that has every field the header uses (docs/cat-format.md, "Versions").
uint16_t MinorVersionFor(const CatHeader& header) {
  if (!header.roms.empty() || header.from_reset) return kMinorVersionRom;
  if (!header.holes.empty()) return kMinorVersionHoles;
  return kMinorVersion;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CatWriter>> CatWriter::Create(const std::string& path,
                                                             const CatHeader& header) {
  absl::StatusOr<std::unique_ptr<io::OutputFile>> out = io::OutputFile::Create(path);
  if (!out.ok()) return out.status();
  return Create(std::move(*out), header);
}

absl::StatusOr<std::unique_ptr<CatWriter>> CatWriter::Create(std::unique_ptr<io::OutputFile> out,
                                                             const CatHeader& header) {
  if (absl::Status s = ValidateHeader(header); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(out->path(), ": header: ", s.message()));
  }
  std::vector<uint8_t> body = EncodeHeaderBody(header);
  std::vector<uint8_t> head(kMagic.begin(), kMagic.end());
  head.resize(kFileHeaderPrefix);
  Store16(&head[8], kMajorVersion);
  Store16(&head[10], MinorVersionFor(header));
  Store32(&head[12], static_cast<uint32_t>(body.size()));
  head.insert(head.end(), body.begin(), body.end());
  uint8_t crc[4];
  Store32(crc, Crc32(std::span(head).subspan(8)));
  head.insert(head.end(), crc, crc + 4);
  if (absl::Status s = out->Write(head); !s.ok()) return s;

  std::unique_ptr<CatWriter> writer(new CatWriter(std::move(out), header));
  writer->chunk_.reserve(kChunkHeaderBytes + kTargetChunkPayload + kRecordHeaderBytes +
                         kMaxRecordData);
  writer->chunk_.resize(kChunkHeaderBytes);
  return writer;
}

absl::Status CatWriter::Write(const BusRecord& r) {
  if (r.data.size() > kMaxRecordData) {
    return absl::InvalidArgumentError(absl::StrCat(out_->path(), ": record ", records_, " has ",
                                                   r.data.size(), " data bytes, more than ",
                                                   kMaxRecordData));
  }
  uint8_t kind = static_cast<uint8_t>(r.kind);
  if (!IsKnownKind(kind) && kind < kFirstOptionalKind) {
    return absl::InvalidArgumentError(
        absl::StrCat(out_->path(), ": record ", records_, " has unknown kind ", kind));
  }
  if (r.master > header_.devices.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(out_->path(), ": record ", records_, " names bus master ", r.master,
                     " but the header has ", header_.devices.size(), " devices"));
  }
  size_t payload = chunk_.size() - kChunkHeaderBytes;
  if (payload > 0 && payload + kRecordHeaderBytes + r.data.size() > kTargetChunkPayload) {
    if (absl::Status s = FlushChunk(); !s.ok()) return s;
  }
  size_t at = chunk_.size();
  chunk_.resize(at + kRecordHeaderBytes + r.data.size());
  uint8_t* p = &chunk_[at];
  p[0] = kind;
  p[1] = r.flags;
  p[2] = r.master;
  p[3] = 0;
  Store32(p + 4, static_cast<uint32_t>(r.data.size()));
  Store64(p + 8, r.address);
  Store64(p + 16, r.branch_count);
  if (!r.data.empty()) std::memcpy(p + kRecordHeaderBytes, r.data.data(), r.data.size());
  ++chunk_records_;
  ++records_;
  return absl::OkStatus();
}

absl::Status CatWriter::FlushChunk() {
  uint8_t* h = chunk_.data();
  Store32(h, kChunkRecords);
  Store32(h + 4, static_cast<uint32_t>(chunk_.size() - kChunkHeaderBytes));
  Store32(h + 8, chunk_records_);
  Store64(h + 12, chunk_first_);
  uint32_t crc = Crc32({h, 20});
  Store32(h + 20, Crc32(std::span(chunk_).subspan(kChunkHeaderBytes), crc));
  if (absl::Status s = out_->Write(chunk_); !s.ok()) return s;
  chunk_.resize(kChunkHeaderBytes);
  chunk_first_ = records_;
  chunk_records_ = 0;
  return absl::OkStatus();
}

absl::Status CatWriter::Finish() {
  if (chunk_records_ > 0) {
    if (absl::Status s = FlushChunk(); !s.ok()) return s;
  }
  uint8_t done[kChunkHeaderBytes] = {};
  Store32(done, kChunkDone);
  Store64(done + 12, records_);
  Store32(done + 20, Crc32({done, 20}));
  if (absl::Status s = out_->Write(done); !s.ok()) return s;
  return out_->Commit();
}

}  // namespace citcat::cat
