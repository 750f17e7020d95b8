#include "archive/archive.h"

#include <fcntl.h>
#ifdef CITCAT_HAVE_ISAL
#include <isa-l/crc64.h>
#endif
#include <lzma.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "aes/aes_util.h"
#include "aes/interrupt_columns.h"
#include "archive/segment_starts.h"
#include "cat_parser/crc.h"
#include "cat_parser/format.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "ims/bounds.h"
#include "ims/ims_util.h"
#include "systems/system.h"

namespace citcat::archive {
namespace {

constexpr uint8_t kMagic[8] = {0x89, 'C', 'T', 'Z', '\r', '\n', 0x1a, '\n'};
constexpr uint16_t kMinor = 0;
constexpr int kOldestVersion = 1;  // major versions this reader knows: 1 to kFormatVersion
constexpr size_t kFileHeader = 20, kSectionHeader = 36;
constexpr uint32_t kMaxSections = 64;
constexpr uint64_t kMaxRaw = uint64_t{4} << 30;  // what the format can declare
// What each section can plausibly hold: a manifest is a page of text; an IMS at most the memory
// image of the largest memory replay accepts (1 GiB) plus the processor state.
constexpr uint64_t kMaxManifest = 64 << 10;
constexpr uint64_t kMaxIms = ims::kMaxImsBytes;
constexpr uint8_t kStored = 0, kZstd = 1;
constexpr int kAesWindowLog = 20;

// A section left in its file (ReadForReplay): where its header and payload lie, and what the
// header says of them.
struct SectionInFile {
  uint64_t at = 0;  // the section header's offset
  uint8_t codec = 0;
  uint64_t payload = 0;  // bytes after the header
  uint64_t raw = 0, raw_crc = 0;
  uint32_t crc32 = 0;  // of the header's first 32 bytes and the payload
  std::string header;  // those 32 bytes
};
constexpr char kManifestType[] = "MANI", kImsType[] = "IMSP", kAesType[] = "AESP";
// Optional: a reader that does not know it checks and skips it.
constexpr char kSegmentStartsType[] = "segs";
constexpr char kManifestFirstLine[] = "citcat-archive-manifest ";  // then the version

uint64_t Load(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = v << 8 | p[i];
  return v;
}
void Store(std::string& out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
std::span<const uint8_t> Bytes(absl::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::string Hex64(uint64_t v) { return absl::StrFormat("0x%016x", v); }

absl::Status Damaged(const std::string& name, uint64_t offset, absl::string_view what) {
  return absl::DataLossError(
      absl::StrCat(name, ": not a valid CITCAT archive at byte offset ", offset, ": ", what));
}

// ---- what the manifest's counts allow (docs/archive-format.md, "Hostile input") ----

// Every AES event comes from a CAT record the replay regenerates (a segment may take one
// interrupt whose report lies past its cut): at most this many more events than records.
constexpr uint64_t kExtraEvents = 64;
// An event's fields but its data, serialized, with room for fields later versions add; and the
// schedule's own fields (version, machine, end point).
constexpr uint64_t kEventFieldBytes = 256, kScheduleFieldBytes = 4 << 10;
// A memory extent's fields but its bytes, serialized (tags, lengths, the address).
constexpr uint64_t kExtentFieldBytes = 24;

// The counts, capped where no capture reaches, so that the sums below cannot wrap.
uint64_t Records(const Manifest& m) { return std::min(m.records, uint64_t{1} << 40); }
uint64_t RecordBytes(const Manifest& m) { return std::min(m.record_bytes, uint64_t{1} << 40); }

uint64_t MaxEvents(const Manifest& m) { return Records(m) + kExtraEvents; }
// The AES: its events' fields, and the data they carry, which the records carry too.
uint64_t MaxAesBytes(const Manifest& m) {
  return std::min(kMaxRaw, kScheduleFieldBytes + MaxEvents(m) * kEventFieldBytes + RecordBytes(m));
}
// The first-touch image holds bytes the replay reads over the bus, and a segment's start the
// reserved areas too.
uint64_t MaxImageBytes(const Manifest& m) { return RecordBytes(m) + ims::kMaxReservedBytes; }
// The IMS: the image in extents of a byte at least, and the state.
uint64_t MaxImsBytes(const Manifest& m) {
  return std::min(kMaxIms, ims::kMaxStateBytes + MaxImageBytes(m) * (1 + kExtentFieldBytes));
}
// Segment starts: the segments' first-touch bytes are the whole's records' as the IMS's are (the
// segments do not overlap), and their states as many again as the IMS's may hold.
uint64_t MaxSegmentStartsBytes(const Manifest& m) { return std::min(kMaxIms, 2 * MaxImsBytes(m)); }

std::string Counts(const Manifest& m) {
  return absl::StrCat("(", m.records, " records of ", m.record_bytes, " bytes)");
}

// Reads a section's content, decoding as it goes, from its payload in memory or in its file, and
// keeps the CRC-64 of what it read.
class SectionReader {
 public:
  SectionReader(uint8_t codec, std::span<const uint8_t> payload) : SectionReader(-1, codec, 0, 0) {
    in_ = {payload.data(), payload.size(), 0};
  }
  static absl::StatusOr<std::unique_ptr<SectionReader>> Open(const std::string& path,
                                                             const SectionInFile& section) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return absl::NotFoundError(absl::StrCat(path, ": ", std::strerror(errno)));
    return std::unique_ptr<SectionReader>(
        new SectionReader(fd, section.codec, section.at + kSectionHeader, section.payload));
  }
  ~SectionReader() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool ok() const { return codec_ != kZstd || zstd_ != nullptr; }

  // Up to out.size() bytes of content, 0 at its end; -1 when the payload does not decode as one
  // frame (or the file cannot be read), with nothing more to read.
  int64_t Read(std::span<uint8_t> out) {
    while (!broken_) {
      if (frame_done_) {  // one frame, and nothing after it
        return in_.pos == in_.size && left_ == 0 ? 0 : Broken();
      }
      if (in_.pos == in_.size && left_ > 0) {
        const size_t n = std::min<uint64_t>(left_, buffer_.size());
        const ssize_t got = ::pread(fd_, buffer_.data(), n, offset_);
        if (got <= 0) return Broken();
        offset_ += got;
        left_ -= got;
        in_ = {buffer_.data(), static_cast<size_t>(got), 0};
      }
      size_t produced;
      if (codec_ == kStored) {
        produced = std::min(out.size(), in_.size - in_.pos);
        std::memcpy(out.data(), static_cast<const uint8_t*>(in_.src) + in_.pos, produced);
        in_.pos += produced;
      } else {
        ZSTD_outBuffer o{out.data(), out.size(), 0};
        const size_t r = ZSTD_decompressStream(zstd_.get(), &o, &in_);
        if (ZSTD_isError(r)) return Broken();
        produced = o.pos;
        frame_done_ = r == 0;
      }
      if (produced > 0) {
        raw_ += produced;
        crc64_ = Crc64(out.first(produced), crc64_);
        return static_cast<int64_t>(produced);
      }
      // Nothing came out: the end, when all input is used (and for zstd the frame complete).
      if (in_.pos == in_.size && left_ == 0) {
        if (codec_ == kZstd && !frame_done_) return Broken();
        return 0;
      }
    }
    return -1;
  }

  uint64_t raw() const { return raw_; }
  uint64_t crc64() const { return crc64_; }

 private:
  SectionReader(int fd, uint8_t codec, uint64_t offset, uint64_t payload)
      : fd_(fd),
        codec_(codec),
        offset_(offset),
        left_(payload),
        zstd_(codec == kZstd ? ZSTD_createDCtx() : nullptr, ZSTD_freeDCtx) {
    if (fd >= 0) buffer_.resize(1 << 16);
  }
  int64_t Broken() {
    broken_ = true;
    return -1;
  }

  const int fd_;  // -1: the payload is in memory, all in in_
  const uint8_t codec_;
  uint64_t offset_, left_;  // what is still to read from the file
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> zstd_;
  std::vector<uint8_t> buffer_;
  ZSTD_inBuffer in_{nullptr, 0, 0};
  bool frame_done_ = false, broken_ = false;
  uint64_t raw_ = 0, crc64_ = 0;
};

// Reads a section's content through once: "" when it is `raw` bytes whose CRC-64 is `crc`
// (appended to `keep` if given), else what is wrong. Without `keep`, memory stays that of one
// buffer however much a damaged or hostile section decodes to.
std::string CheckContent(SectionReader& r, uint64_t raw, uint64_t crc, std::string* keep) {
  if (!r.ok()) return "cannot start the zstd decoder";
  std::vector<uint8_t> buffer(ZSTD_DStreamOutSize());
  int64_t n;
  while ((n = r.Read(buffer)) > 0) {
    if (r.raw() > raw) return "does not decompress";
    if (keep) keep->append(reinterpret_cast<const char*>(buffer.data()), n);
  }
  if (n < 0 || r.raw() != raw) return "does not decompress";
  return r.crc64() == crc ? "" : "content checksum mismatch";
}

// Decodes content that a streaming pass found sound (`raw` bytes whose CRC-64 is `crc`) into
// `out`, all at once. Returns what is wrong, or "".
std::string DecodeSound(uint8_t codec, std::span<const uint8_t> payload, uint64_t raw, uint64_t crc,
                        std::string& out) {
  if (codec == kStored) {
    out.assign(reinterpret_cast<const char*>(payload.data()), payload.size());
  } else {
    out.resize(raw);
    const size_t n = ZSTD_decompress(out.data(), raw, payload.data(), payload.size());
    if (ZSTD_isError(n) || n != raw) return "does not decompress";
  }
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(out.data()), out.size());
  return out.size() == raw && Crc64(bytes) == crc ? "" : "content checksum mismatch";
}

// Decodes one zstd frame of exactly `raw` bytes whose CRC-64 is `crc`: a first pass only checks
// it, and only a frame that passes is decoded again into `out`. So memory grows with what a sound
// section holds, never with what a damaged or hostile one claims. Returns what is wrong, or "".
std::string Decompress(std::span<const uint8_t> payload, uint64_t raw, uint64_t crc,
                       std::string& out) {
  SectionReader check(kZstd, payload);
  if (std::string bad = CheckContent(check, raw, crc, nullptr); !bad.empty()) return bad;
  return DecodeSound(kZstd, payload, raw, crc, out);
}

// The section's content as a protobuf input stream, read through `r` (kept, if `owned`).
class SectionStream final : public google::protobuf::io::CopyingInputStream {
 public:
  SectionStream(SectionReader& r, std::unique_ptr<SectionReader> owned)
      : r_(r), owned_(std::move(owned)) {}
  int Read(void* buffer, int size) override {
    return static_cast<int>(r_.Read({static_cast<uint8_t*>(buffer), static_cast<size_t>(size)}));
  }

 private:
  SectionReader& r_;
  std::unique_ptr<SectionReader> owned_;
};

std::unique_ptr<google::protobuf::io::ZeroCopyInputStream> StreamOver(
    SectionReader& r, std::unique_ptr<SectionReader> owned = nullptr) {
  auto stream = std::make_unique<google::protobuf::io::CopyingInputStreamAdaptor>(
      new SectionStream(r, std::move(owned)));
  stream->SetOwnsCopyingStream(true);
  return stream;
}

std::unique_ptr<google::protobuf::io::ZeroCopyInputStream> StreamOf(
    std::unique_ptr<SectionReader> r) {
  SectionReader& reader = *r;
  return StreamOver(reader, std::move(r));
}

// An AES section read from a copy of its stored bytes, decoded as it is read: the schedule is
// never in memory whole, whatever its section claims.
class AesPayload final : public aes::ScheduleBytes {
 public:
  AesPayload(uint8_t codec, std::span<const uint8_t> payload, std::string name)
      : codec_(codec), payload_(payload.begin(), payload.end()), name_(std::move(name)) {}
  absl::StatusOr<std::unique_ptr<google::protobuf::io::ZeroCopyInputStream>> Open() const override {
    auto r = std::make_unique<SectionReader>(codec_, payload_);
    if (!r->ok()) return absl::ResourceExhaustedError("cannot start the zstd decoder");
    return StreamOf(std::move(r));
  }
  const std::string& name() const override { return name_; }

 private:
  const uint8_t codec_;
  const std::vector<uint8_t> payload_;
  const std::string name_;
};

// What CheckContent found wrong with section `type` at `at`, as the one-line error.
absl::Status ContentDamage(const std::string& name, uint64_t at, const std::string& type,
                           uint64_t raw, const std::string& bad) {
  return Damaged(name, bad == "content checksum mismatch" ? at + 24 : at + kSectionHeader,
                 absl::StrCat("section '", type, "' ",
                              bad == "does not decompress"
                                  ? absl::StrCat("does not decompress to ", raw, " bytes")
                                  : bad));
}

}  // namespace

// ISA-L's crc64_ecma_refl and liblzma's lzma_crc64 are both this CRC (xz's check type CRC64),
// with the same initial and final inversions; ISA-L's folds 16 bytes at a time with carry-less
// multiplication where the processor has it.
uint64_t Crc64(std::span<const uint8_t> bytes, uint64_t crc) {
#ifdef CITCAT_HAVE_ISAL
  return crc64_ecma_refl(crc, bytes.data(), bytes.size());
#else
  return lzma_crc64(bytes.data(), bytes.size(), crc);
#endif
}

namespace {

// A 64x64 matrix over GF(2), one column per bit, applied to a vector.
uint64_t Gf2Times(const std::array<uint64_t, 64>& matrix, uint64_t vector) {
  uint64_t sum = 0;
  for (int i = 0; vector != 0; ++i, vector >>= 1) {
    if (vector & 1) sum ^= matrix[i];
  }
  return sum;
}

std::array<uint64_t, 64> Gf2Square(const std::array<uint64_t, 64>& matrix) {
  std::array<uint64_t, 64> square;
  for (int i = 0; i < 64; ++i) square[i] = Gf2Times(matrix, matrix[i]);
  return square;
}

}  // namespace

// The CRC register after `length` more zero bytes is a linear map of the register before: the
// map for one zero bit, squared up to the bits of `length * 8`, carries `first` over the second
// piece's length, and the pre- and post-inversions cancel in the XOR with `second`.
uint64_t Crc64Combine(uint64_t first, uint64_t second, uint64_t length) {
  if (length == 0) return first;
  std::array<uint64_t, 64> one_bit;  // the register shifted by one zero bit
  one_bit[0] = 0xC96C5795D7870F42ull;
  for (int i = 1; i < 64; ++i) one_bit[i] = uint64_t{1} << (i - 1);
  std::array<uint64_t, 64> step = Gf2Square(Gf2Square(Gf2Square(one_bit)));  // one zero byte
  for (uint64_t n = length; n != 0; n >>= 1) {
    if (n & 1) first = Gf2Times(step, first);
    if (n > 1) step = Gf2Square(step);
  }
  return first ^ second;
}

// ---- manifest ----

std::string Manifest::ToText() const {
  std::string s = absl::StrCat(kManifestFirstLine, version, "\n");
  auto add = [&s](absl::string_view key, const std::string& value) {
    absl::StrAppend(&s, key, " ", value, "\n");
  };
  add("machine", machine);
  add("instructions", absl::StrCat(instructions));
  add("trace-entries", absl::StrCat(trace_entries));
  add("start-branch-count", absl::StrCat(start_branch_count));
  add("start-pc", Hex64(start_pc));
  add("end-branch-count", absl::StrCat(end_branch_count));
  add("records", absl::StrCat(records));
  add("record-bytes", absl::StrCat(record_bytes));
  add("instruction-crc64", Hex64(instruction_crc64));
  add("cat-crc64", Hex64(cat_crc64));
  add("ims-bytes", absl::StrCat(ims_bytes));
  add("aes-bytes", absl::StrCat(aes_bytes));
  if (segment != 0) {
    add("segment", segments != 0 ? absl::StrCat(segment, " of ", segments) : absl::StrCat(segment));
  }
  // One line: a producer never holds a line break that could start a key of its own.
  std::string p = producer;
  for (char& c : p) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  add("producer", p);
  return s;
}

namespace {

// A number as ToText writes it: decimal without leading zeros, or (`hex`) "0x" and 16 lower-case
// hexadecimal digits. One spelling per value, so that a manifest has one text.
bool ParseCanonical(absl::string_view text, bool hex, uint64_t& value) {
  if (hex) {
    if (!absl::ConsumePrefix(&text, "0x") || text.size() != 16) return false;
    for (char c : text) {
      if (!absl::ascii_isdigit(c) && (c < 'a' || c > 'f')) return false;
    }
    return absl::SimpleHexAtoi(text, &value);
  }
  if (text.empty() || text.size() > 20 || (text.size() > 1 && text[0] == '0')) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(c)) return false;
  }
  return absl::SimpleAtoi(text, &value);
}

}  // namespace

absl::StatusOr<Manifest> Manifest::FromText(absl::string_view text) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  absl::string_view first = lines[0];
  Manifest m;
  uint64_t version = 0;
  if (!absl::ConsumePrefix(&first, kManifestFirstLine) || !ParseCanonical(first, false, version)) {
    return absl::InvalidArgumentError("the manifest does not start with its first line");
  }
  if (version < kOldestVersion || version > kFormatVersion) {
    return absl::InvalidArgumentError(absl::StrCat("the manifest's version ", version,
                                                   " is not one this reader knows (",
                                                   kOldestVersion, " to ", kFormatVersion, ")"));
  }
  m.version = static_cast<int>(version);
  // Every line ends with a line break, the last one too: the text ends with an empty "line".
  if (!lines.back().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("manifest line ", lines.size(), ": not ended by a line break"));
  }
  lines.pop_back();
  struct Field {
    const char* key;
    uint64_t* value;
    bool hex;
    bool seen = false;
  };
  Field fields[] = {{"instructions", &m.instructions, false},
                    {"trace-entries", &m.trace_entries, false},
                    {"start-branch-count", &m.start_branch_count, false},
                    {"start-pc", &m.start_pc, true},
                    {"end-branch-count", &m.end_branch_count, false},
                    {"records", &m.records, false},
                    {"record-bytes", &m.record_bytes, false},
                    {"instruction-crc64", &m.instruction_crc64, true},
                    {"cat-crc64", &m.cat_crc64, true},
                    {"ims-bytes", &m.ims_bytes, false},
                    {"aes-bytes", &m.aes_bytes, false}};
  bool segment_seen = false, machine_seen = false, producer_seen = false;
  for (size_t i = 1; i < lines.size(); ++i) {
    const absl::string_view line = lines[i];
    const auto bad = [i](absl::string_view what) {
      return absl::InvalidArgumentError(absl::StrCat("manifest line ", i + 1, ": ", what));
    };
    if (absl::StrContains(line, '\r')) return bad("a carriage return (CRLF line ends?)");
    // `key value`: a key of lower-case letters, digits and dashes, one space, the value.
    const size_t space = line.find(' ');
    const absl::string_view key = line.substr(0, space);
    if (key.empty() || !std::all_of(key.begin(), key.end(), [](char c) {
          return absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '-';
        })) {
      return bad(line.empty() ? absl::string_view("an empty line")
                              : absl::string_view("not a key of lower-case letters, digits and "
                                                  "dashes followed by one space and its value"));
    }
    if (space == absl::string_view::npos) return bad(absl::StrCat(key, " without a value"));
    const absl::string_view value = line.substr(space + 1);
    if (key == "producer") {  // free text, as the capture named itself (possibly empty)
      if (producer_seen) return bad("repeated producer");
      producer_seen = true;
      m.producer = std::string(value);
      continue;
    }
    if (value.empty() || value.front() == ' ' || value.back() == ' ') {
      return bad(absl::StrCat(key, " with spaces around its value, or none"));
    }
    if (key == "machine") {
      if (machine_seen) return bad("repeated machine");
      machine_seen = true;
      m.machine = std::string(value);
      if (!ims::MachineFromName(m.machine)) {
        return bad(absl::StrCat("the machine '", m.machine, "' is not one the IMS schema names"));
      }
      continue;
    }
    if (key == "segment") {
      // `segment K of N` (N from 1; older splits wrote `segment K`, their count unknown).
      if (segment_seen) return bad("repeated segment");
      segment_seen = true;
      const std::vector<absl::string_view> words = absl::StrSplit(value, ' ');
      const bool ok = (words.size() == 1 || (words.size() == 3 && words[1] == "of" &&
                                             ParseCanonical(words[2], false, m.segments))) &&
                      ParseCanonical(words[0], false, m.segment) && m.segment >= 1 &&
                      (words.size() == 1 || m.segment <= m.segments);
      if (!ok) return bad("segment is not 'K of N' with 1 <= K <= N");
      continue;
    }
    // Keys this reader does not know come from a newer minor version: skipped.
    for (Field& f : fields) {
      if (key != f.key) continue;
      if (f.seen) return bad(absl::StrCat("repeated ", f.key));
      if (!ParseCanonical(value, f.hex, *f.value)) {
        return bad(absl::StrCat(f.key, " is not ",
                                f.hex ? "0x and 16 lower-case hexadecimal digits"
                                      : "a decimal number without leading zeros"));
      }
      f.seen = true;
    }
  }
  if (!machine_seen) return absl::InvalidArgumentError("the manifest names no machine");
  for (const Field& f : fields) {
    if (!f.seen) return absl::InvalidArgumentError(absl::StrCat("the manifest has no ", f.key));
  }
  return m;
}

// ---- checksums during replay ----

void ReplayChecksums::Attach(replay::ReplayOptions& options, const ims::InitialMachineState& state,
                             int version) {
  if (version == 1) {
    // Version 1 summed the 32-bit instruction word, stored little-endian whatever the machine's
    // byte order, so the bytes in memory order are turned back into that word. It knows no other
    // instruction length (only 4-byte words were ever packed in it): such an entry is summed as
    // PC and bytes, a stream no version 1 writer made.
    const bool big = state.description().byte_order() == ims::BYTE_ORDER_BIG;
    options.on_instructions = [this, big](std::span<const replay::ExecutedInstruction> batch) {
      uint8_t* const start = instructions_.Claim(batch.size() * (8 + 15));
      uint8_t* out = start;
      for (const replay::ExecutedInstruction& e : batch) {
        cat::format::Store64(out, e.pc);
        if (e.size == 4) {
          uint32_t word;
          std::memcpy(&word, e.bytes.data(), 4);
          cat::format::Store32(out + 8, big ? __builtin_bswap32(word) : word);
        } else {
          std::memcpy(out + 8, e.bytes.data(), e.size);
        }
        out += 8 + e.size;
      }
      instructions_.Commit(static_cast<size_t>(out - start));
      entries_ += batch.size();
    };
  } else {
    // Entries of at most 9 + 15 bytes.
    options.on_instructions = [this](std::span<const replay::ExecutedInstruction> batch) {
      uint8_t* const start = instructions_.Claim(batch.size() * (9 + 15));
      uint8_t* out = start;
      for (const replay::ExecutedInstruction& e : batch) {
        cat::format::Store64(out, e.pc);
        out[8] = e.size;
        std::memcpy(out + 9, e.bytes.data(), e.bytes.size());  // the whole array: a fixed copy
        out += 9 + e.size;
      }
      instructions_.Commit(static_cast<size_t>(out - start));
      entries_ += batch.size();
    };
  }
  options.on_record_retired = [this](const cat::BusRecord& r, uint64_t) {
    // The record as docs/cat-format.md encodes it, so a regenerated CAT file yields the same sum.
    uint8_t* head = cat_.Claim(24);
    head[0] = static_cast<uint8_t>(r.kind);
    head[1] = r.flags;
    head[2] = r.master;
    head[3] = 0;
    cat::format::Store32(head + 4, static_cast<uint32_t>(r.data.size()));
    cat::format::Store64(head + 8, r.address);
    cat::format::Store64(head + 16, r.branch_count);
    cat_.Commit(24);
    cat_.Add(r.data);
    ++records_;
    record_bytes_ += r.data.size();
  };
}

void ReplayChecksums::StreamCrc::Sum() {
  crc_ = Crc64(std::span<const uint8_t>(pending_.data(), used_), crc_);
  used_ = 0;
}

void ReplayChecksums::StreamCrc::Add(std::span<const uint8_t> bytes) {
  if (bytes.size() > 64) {  // (a line or more: summed where it lies)
    Sum();
    crc_ = Crc64(bytes, crc_);
    bytes_ += bytes.size();
    return;
  }
  std::memcpy(Claim(bytes.size()), bytes.data(), bytes.size());
  Commit(bytes.size());
}

uint64_t ReplayChecksums::StreamCrc::Value() const {
  return Crc64(std::span<const uint8_t>(pending_.data(), used_), crc_);
}

void ReplayChecksums::StreamCrc::Append(const StreamCrc& next) {
  crc_ = Crc64Combine(Value(), next.Value(), next.bytes_);
  used_ = 0;
  bytes_ += next.bytes_;
}

void ReplayChecksums::Append(const ReplayChecksums& next) {
  instructions_.Append(next.instructions_);
  cat_.Append(next.cat_);
  entries_ += next.entries_;
  records_ += next.records_;
  record_bytes_ += next.record_bytes_;
}

void ReplayChecksums::Fill(const replay::ReplaySummary& summary, Manifest& m) const {
  m.instructions = summary.instructions;
  m.end_branch_count = summary.end_branch_count;
  m.trace_entries = entries_;
  m.records = records_;
  m.record_bytes = record_bytes_;
  m.instruction_crc64 = instructions_.Value();
  m.cat_crc64 = cat_.Value();
}

void ReplayChecksums::Attach(replay::ReplayOptions& options, const ims::InitialMachineState& ims,
                             const Manifest& manifest) {
  Attach(options, ims, manifest.version);
  options.max_instructions = manifest.instructions;
}

absl::Status ReplayChecksums::Check(const replay::ReplaySummary& summary,
                                    const Manifest& manifest) const {
  Manifest replayed;
  Fill(summary, replayed);
  return CompareWithManifest(manifest, replayed);
}

absl::Status CompareWithManifest(const Manifest& expected, const Manifest& got) {
  std::string diffs;
  auto check = [&diffs](const char* key, uint64_t want, uint64_t have, bool hex) {
    if (want == have) return;
    absl::StrAppend(&diffs, diffs.empty() ? "" : "; ", key, " is ",
                    hex ? Hex64(have) : absl::StrCat(have), ", the manifest says ",
                    hex ? Hex64(want) : absl::StrCat(want));
  };
  check("instruction-crc64", expected.instruction_crc64, got.instruction_crc64, true);
  check("cat-crc64", expected.cat_crc64, got.cat_crc64, true);
  check("instructions", expected.instructions, got.instructions, false);
  check("trace-entries", expected.trace_entries, got.trace_entries, false);
  check("records", expected.records, got.records, false);
  check("record-bytes", expected.record_bytes, got.record_bytes, false);
  check("end-branch-count", expected.end_branch_count, got.end_branch_count, false);
  if (diffs.empty()) return absl::OkStatus();
  return absl::DataLossError(
      absl::StrCat("the replay does not match the archive's manifest: ", diffs));
}

namespace {

// Builds the AES an archive stores (format version 2) as the packing replay takes the
// interrupts: each keyed as replay needed it, in blocks of columns; then the other lists without
// the CAT record each came from, which replay never needs with such keys (the record of a
// message is then the replay's own). Held in scratch files, not in memory.
class PackedSchedule {
 public:
  static absl::StatusOr<PackedSchedule> Create() {
    absl::StatusOr<std::unique_ptr<aes::ScheduleWriter>> w =
        aes::ScheduleWriter::Create("the archive's AES");
    if (!w.ok()) return w.status();
    return PackedSchedule(*std::move(w));
  }

  void Add(const aes::Interrupt& key) {
    columns_.Add(key);
    if (columns_.size() == aes::kInterruptsPerBlock) Flush();
  }

  absl::StatusOr<std::shared_ptr<const aes::ScheduleBytes>> Finish(const aes::Schedule& original) {
    Flush();
    const std::unique_ptr<aes::ScheduleReader> in = original.Read();
    Copy(in->dma(), &aes::EventSchedule::add_dma);
    Copy(in->device_io(), &aes::EventSchedule::add_device_io);
    Copy(in->register_reads(), &aes::EventSchedule::add_register_reads);
    if (!in->status().ok()) return in->status();
    if (!status_.ok()) return status_;
    aes::EventSchedule head;
    head.set_format_version(aes::kPackedFormatVersion);
    head.set_machine(original.machine());
    *head.mutable_end() = original.end();
    return writer_->FinishInScratch(head);
  }
  // Once finished: the interrupts keyed, and the length of the packed schedule.
  uint64_t interrupts() const { return writer_->counts()[0]; }
  uint64_t bytes() const { return writer_->bytes(); }

 private:
  explicit PackedSchedule(std::unique_ptr<aes::ScheduleWriter> writer)
      : writer_(std::move(writer)) {}

  void Flush() {
    if (columns_.size() == 0) return;
    *batch_.add_interrupt_blocks() = columns_.Take();
    Append();
  }
  void Append() {
    if (status_.ok()) status_ = writer_->Append(batch_);
  }
  template <typename Event>
  void Copy(aes::EventQueue<Event>& queue, Event* (aes::EventSchedule::*add)()) {
    for (int n = 1; !queue.empty(); ++n) {
      Event& e = *(batch_.*add)();
      e = queue.Pop();
      e.clear_cat_record();
      if (n % 256 == 0) Append();
    }
    Append();
  }

  std::unique_ptr<aes::ScheduleWriter> writer_;
  aes::InterruptColumnWriter columns_;
  aes::EventSchedule batch_;
  absl::Status status_;
};

}  // namespace

absl::StatusOr<Archive> Pack(const ims::InitialMachineState& state,
                             std::shared_ptr<const aes::ScheduleBytes> schedule,
                             uint64_t segments) {
  Archive a;
  Manifest& m = a.manifest;
  m.machine = ims::MachineName(state.description().machine());
  if (m.machine.empty()) {
    return absl::InvalidArgumentError("the IMS's description names no machine");
  }
  absl::StatusOr<aes::Schedule> parsed = aes::Schedule::Parse(schedule);
  if (!parsed.ok()) return parsed.status();
  absl::StatusOr<PackedSchedule> packed = PackedSchedule::Create();
  if (!packed.ok()) return packed.status();
  a.ims = state.SerializeAsString();
  // One replay fills the manifest and keys the interrupts for the packed schedule.
  replay::ReplayOptions options;
  ReplayChecksums sums;
  sums.Attach(options, state);
  options.on_interrupt_key = [&packed](const aes::Interrupt& key) { packed->Add(key); };
  // The same replay records where the segments begin.
  SegmentStartsBuilder starts(state);
  options.cut_at_cpu_transactions = SegmentCuts(state, parsed->end(), segments);
  if (!options.cut_at_cpu_transactions.empty()) {
    options.on_segment = [&starts](replay::Segment s) { return starts.Add(std::move(s)); };
  }
  absl::StatusOr<replay::ReplaySummary> summary = systems::Replay(state, *parsed, options);
  if (!summary.ok()) return summary.status();
  absl::StatusOr<std::shared_ptr<const aes::ScheduleBytes>> bytes = packed->Finish(*parsed);
  if (!bytes.ok()) return bytes.status();
  if (packed->interrupts() != parsed->interrupts()) {
    return absl::InternalError(absl::StrCat("the packing replay keyed ", packed->interrupts(),
                                            " of the schedule's ", parsed->interrupts(),
                                            " interrupts"));
  }
  a.aes = *std::move(bytes);
  sums.Fill(*summary, m);
  if (starts.starts().ByteSizeLong() <=
      MaxSegmentStartsBytes(m)) {  // else more than a reader takes
    a.segment_starts = starts.starts();
  }
  m.start_branch_count = state.start().branch_count();
  m.start_pc = ims::StartPc(state);
  m.ims_bytes = a.ims.size();
  m.aes_bytes = packed->bytes();
  m.producer = state.description().producer();
  return a;
}

absl::StatusOr<Archive> Pack(const ims::InitialMachineState& state,
                             const aes::EventSchedule& schedule, uint64_t segments) {
  return Pack(state, aes::BytesInMemory(schedule.SerializeAsString(), "the AES"), segments);
}

// A manifest that names a segment's place must be a segment's (docs/archive-format.md,
// "Segments"): every segment after the first starts at a cut (no state dump ahead of its
// records), and every one before the last ends at one (at a branch count).
absl::Status CheckSegmentPlace(const Manifest& m, const ims::StartPoint& start,
                               const aes::EndPoint& end) {
  if (m.segment == 0) return absl::OkStatus();
  const std::string place =
      m.segments != 0 ? absl::StrCat(m.segment, " of ", m.segments) : absl::StrCat(m.segment);
  if (m.segment >= 2 && !start.segment()) {
    return absl::InvalidArgumentError(absl::StrCat("the archive's manifest names segment ", place,
                                                   ", but its IMS does not start at a cut"));
  }
  // Older splits did not say how many segments they cut; their first segment, of two or more,
  // ends at a cut (one segment of one is no more than the whole).
  const bool before_last = m.segments != 0 ? m.segment < m.segments : m.segment == 1;
  if (before_last && !end.at_branch_count()) {
    return absl::InvalidArgumentError(absl::StrCat("the archive's manifest names segment ", place,
                                                   ", but its AES does not end at a cut"));
  }
  return absl::OkStatus();
}

absl::Status Unpack(const Archive& a, ims::InitialMachineState& state,
                    aes::EventSchedule& schedule) {
  if (absl::Status s = UnpackIms(a, state); !s.ok()) return s;
  // Read event by event first, in constant memory: only a schedule whose every event and count
  // is one the manifest allows is then held whole.
  if (absl::StatusOr<aes::Schedule> checked = ScheduleOf(a); !checked.ok()) {
    return checked.status();
  }
  absl::StatusOr<std::string> bytes = aes::ReadAll(*a.aes, kMaxRaw);
  if (!bytes.ok()) return bytes.status();
  if (!schedule.ParseFromString(*bytes)) {
    return absl::InvalidArgumentError("the archive's AES section is not an AES message");
  }
  // A whole message's readers see every interrupt in the list, keyed as stored.
  if (absl::Status s = aes::ExpandInterruptBlocks(schedule); !s.ok()) return s;
  return CheckSegmentPlace(a.manifest, state.start(), schedule.end());
}

absl::Status UnpackIms(const Archive& a, ims::InitialMachineState& state) {
  if (!state.ParseFromString(a.ims)) {
    return absl::InvalidArgumentError("the archive's IMS section is not an IMS message");
  }
  // The checksums were made by a replay of this machine: another one could never match them.
  const std::string machine = ims::MachineName(state.description().machine());
  if (machine != a.manifest.machine) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the archive's manifest names the machine '", a.manifest.machine, "' but its IMS is for ",
        machine.empty() ? "no machine the schema names" : absl::StrCat("'", machine, "'")));
  }
  // The replay starts where the IMS says; the manifest must say the same.
  if (a.manifest.start_branch_count != state.start().branch_count() ||
      a.manifest.start_pc != ims::StartPc(state)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the archive's manifest starts at branch count ", a.manifest.start_branch_count, ", PC ",
        Hex64(a.manifest.start_pc), ", its IMS at branch count ", state.start().branch_count(),
        ", PC ", Hex64(ims::StartPc(state))));
  }
  return absl::OkStatus();
}

// ---- the container ----

absl::Status Write(const Archive& a, io::OutputFile& out, int level) {
  std::string head(reinterpret_cast<const char*>(kMagic), sizeof kMagic);
  if (a.manifest.version < kOldestVersion || a.manifest.version > kFormatVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("no archive format version ", a.manifest.version));
  }
  Store(head, a.manifest.version, 2);  // the major version is the manifest's
  Store(head, kMinor, 2);
  const std::string starts_bytes = a.segment_starts.SerializeAsString();
  const bool starts = !starts_bytes.empty();
  Store(head, starts ? 4 : 3, 4);
  Store(head, cat::Crc32(Bytes(head).subspan(8)), 4);
  if (absl::Status s = out.Write(head); !s.ok()) return s;
  const std::string manifest = a.manifest.ToText();
  using Stream = std::unique_ptr<google::protobuf::io::ZeroCopyInputStream>;
  const auto in_memory = [](const std::string& bytes) {
    return [&bytes]() -> absl::StatusOr<Stream> {
      return std::make_unique<google::protobuf::io::ArrayInputStream>(
          bytes.data(), static_cast<int>(bytes.size()));
    };
  };
  std::vector<std::pair<const char*, std::function<absl::StatusOr<Stream>()>>> sections = {
      {kManifestType, in_memory(manifest)}, {kImsType, in_memory(a.ims)}, {kAesType, [&a] {
                                                                             return a.aes->Open();
                                                                           }}};
  if (starts) sections.emplace_back(kSegmentStartsType, in_memory(starts_bytes));
  for (const auto& [type, open] : sections) {
    // Two passes over the content, streamed: its length and CRC-64 for the header, then the
    // frame (with the length in it).
    uint64_t raw = 0, crc = 0;
    absl::StatusOr<Stream> in = open();
    if (!in.ok()) return in.status();
    const void* data;
    int size;
    while ((*in)->Next(&data, &size)) {
      raw += size;
      crc = Crc64({static_cast<const uint8_t*>(data), static_cast<size_t>(size)}, crc);
    }
    if (raw > kMaxRaw) return absl::InvalidArgumentError(absl::StrCat(type, " too large"));
    // What a reader would refuse is not written (the manifest's own section has no bound).
    const uint64_t most = type == kImsType             ? MaxImsBytes(a.manifest)
                          : type == kAesType           ? MaxAesBytes(a.manifest)
                          : type == kSegmentStartsType ? MaxSegmentStartsBytes(a.manifest)
                                                       : kMaxRaw;
    if (raw > most) {
      return absl::InvalidArgumentError(absl::StrCat(type, ": ", raw, " bytes, more than the ",
                                                     most, " the manifest's counts allow ",
                                                     Counts(a.manifest)));
    }
    std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> z(ZSTD_createCCtx(), ZSTD_freeCCtx);
    if (z == nullptr) return absl::ResourceExhaustedError("cannot start the zstd encoder");
    ZSTD_CCtx_setParameter(z.get(), ZSTD_c_compressionLevel, level);
    // Replay decodes the AES with one decoder per list of events, each holding a window: keep
    // it small (the schedule's repeats are short-range: 1 MiB packs it as well as 8).
    if (type == kAesType) ZSTD_CCtx_setParameter(z.get(), ZSTD_c_windowLog, kAesWindowLog);
    ZSTD_CCtx_setPledgedSrcSize(z.get(), raw);
    std::string packed;
    std::vector<char> chunk(ZSTD_CStreamOutSize());
    in = open();
    if (!in.ok()) return in.status();
    uint64_t fed = 0;
    bool more = true;
    while (more) {
      more = (*in)->Next(&data, &size);
      if (!more) size = 0;
      fed += size;
      ZSTD_inBuffer zin{data, static_cast<size_t>(size), 0};
      const ZSTD_EndDirective mode = more ? ZSTD_e_continue : ZSTD_e_end;
      size_t left;
      do {
        ZSTD_outBuffer zout{chunk.data(), chunk.size(), 0};
        left = ZSTD_compressStream2(z.get(), &zout, &zin, mode);
        if (ZSTD_isError(left)) {
          return absl::InternalError(absl::StrCat("zstd: ", ZSTD_getErrorName(left)));
        }
        packed.append(chunk.data(), zout.pos);
      } while (mode == ZSTD_e_end ? left != 0 : zin.pos < zin.size);
    }
    if (fed != raw) {
      return absl::DataLossError(absl::StrCat(type, ": the content changed while it was packed"));
    }
    std::string h(type, 4);
    h.push_back(static_cast<char>(kZstd));
    h.append(3, '\0');
    Store(h, packed.size(), 8);
    Store(h, raw, 8);
    Store(h, crc, 8);
    Store(h, cat::Crc32(Bytes(packed), cat::Crc32(Bytes(h))), 4);
    if (absl::Status s = out.Write(h); !s.ok()) return s;
    if (absl::Status s = out.Write(packed); !s.ok()) return s;
  }
  return absl::OkStatus();
}

namespace {

// Parse, leaving the AES section's payload unread when `aes_in_place` (ReadForReplay): where
// it lies goes there.
absl::StatusOr<Archive> ParseArchive(std::span<const uint8_t> b, const std::string& name,
                                     uint64_t max_content,
                                     std::optional<SectionInFile>* aes_in_place) {
  max_content = std::min(max_content, kMaxRaw);
  if (b.empty()) return Damaged(name, 0, "the file is empty");
  if (b.size() < kFileHeader) return Damaged(name, b.size(), "the file header is cut short");
  if (std::memcmp(b.data(), kMagic, sizeof kMagic) != 0) {
    return Damaged(name, 0, "wrong magic (not a .citcat archive)");
  }
  const uint64_t major = Load(&b[8], 2);
  if (major < kOldestVersion || major > kFormatVersion) {
    return Damaged(name, 8,
                   absl::StrCat("major version ", major, " is not one this reader knows (",
                                kOldestVersion, " to ", kFormatVersion, ")"));
  }
  if (cat::Crc32(b.subspan(8, 8)) != Load(&b[16], 4)) {
    return Damaged(name, 16, "file header checksum mismatch");
  }
  const uint64_t count = Load(&b[12], 4);
  if (count == 0 || count > kMaxSections) {
    return Damaged(name, 12, absl::StrCat("section count ", count, " outside 1..", kMaxSections));
  }
  // Every section header first: the manifest is decoded before the IMS and AES, whose sizes it
  // states, so that no size is believed before it has been checked against another.
  struct Section {
    std::string type;
    uint8_t codec;
    uint64_t raw, raw_crc, at;
    std::span<const uint8_t> payload;
  };
  std::vector<Section> sections;
  size_t at = kFileHeader;
  for (uint64_t i = 0; i < count; ++i) {
    if (b.size() - at < kSectionHeader)
      return Damaged(name, b.size(), "a section header is cut short");
    const uint8_t* h = &b[at];
    const std::string type(reinterpret_cast<const char*>(h), 4);
    const uint64_t stored = Load(h + 8, 8);
    if (stored > b.size() - at - kSectionHeader) {
      return Damaged(
          name, at + 8,
          absl::StrCat("section '", type, "' of ", stored, " bytes runs past the end of the file"));
    }
    std::span<const uint8_t> payload = b.subspan(at + kSectionHeader, stored);
    const bool in_place = aes_in_place != nullptr && type == kAesType;  // checked as it is read
    if (!in_place && cat::Crc32(payload, cat::Crc32({h, 32})) != Load(h + 32, 4)) {
      return Damaged(name, at, absl::StrCat("section '", type, "' checksum mismatch"));
    }
    const uint64_t section_at = at;
    at += kSectionHeader + stored;
    if (type != kManifestType && type != kImsType && type != kAesType &&
        type != kSegmentStartsType) {
      if (type[0] >= 'a' && type[0] <= 'z') continue;  // optional: checked, then skipped
      return Damaged(name, section_at, absl::StrCat("unknown required section '", type, "'"));
    }
    for (const Section& other : sections) {
      if (other.type == type) {
        return Damaged(name, section_at, absl::StrCat("repeated section '", type, "'"));
      }
    }
    sections.push_back({type, h[4], Load(h + 16, 8), Load(h + 24, 8), section_at, payload});
  }
  if (at != b.size()) return Damaged(name, at, "bytes after the last section");
  if (std::count_if(sections.begin(), sections.end(),
                    [](const Section& x) { return x.type != kSegmentStartsType; }) != 3) {
    return Damaged(name, at, "a required section (MANI, IMSP, AESP) is missing");
  }
  std::sort(sections.begin(), sections.end(), [](const Section& x, const Section& y) {
    return (x.type == kManifestType) > (y.type == kManifestType);
  });

  Archive a;
  for (const Section& sec : sections) {
    std::string manifest_text;
    const uint64_t limit = std::min(max_content, sec.type == kManifestType ? kMaxManifest
                                                 : sec.type == kImsType    ? kMaxIms
                                                                           : kMaxRaw);
    if (sec.raw > limit) {
      return Damaged(name, sec.at + 16,
                     absl::StrCat("section '", sec.type, "' claims ", sec.raw,
                                  " bytes, more than the ", limit, " such a section may hold"));
    }
    if (sec.type == kSegmentStartsType && sec.raw > MaxSegmentStartsBytes(a.manifest)) {
      return Damaged(name, sec.at + 16,
                     absl::StrCat("section 'segs' claims ", sec.raw, " bytes, more than the ",
                                  MaxSegmentStartsBytes(a.manifest),
                                  " the manifest's counts allow ", Counts(a.manifest)));
    }
    if (sec.type == kImsType || sec.type == kAesType) {
      const uint64_t stated = sec.type == kImsType ? a.manifest.ims_bytes : a.manifest.aes_bytes;
      if (sec.raw != stated) {
        return Damaged(name, sec.at + 16,
                       absl::StrCat("section '", sec.type, "' claims ", sec.raw,
                                    " bytes, the manifest ", stated));
      }
      // No more than the replay's records can account for: a hostile size is refused here,
      // before a byte of it is decoded.
      const uint64_t most =
          sec.type == kImsType ? MaxImsBytes(a.manifest) : MaxAesBytes(a.manifest);
      if (sec.raw > most) {
        return Damaged(
            name, sec.at + 16,
            absl::StrCat("section '", sec.type, "' claims ", sec.raw, " bytes, more than the ",
                         most, " the manifest's counts allow ", Counts(a.manifest)));
      }
    }
    if (sec.codec != kStored && sec.codec != kZstd) {
      return Damaged(name, sec.at + 4, absl::StrCat("unknown codec ", sec.codec));
    }
    if (aes_in_place != nullptr && sec.type == kAesType) {
      const uint8_t* h = b.data() + sec.at;
      *aes_in_place = SectionInFile{sec.at,
                                    sec.codec,
                                    sec.payload.size(),
                                    sec.raw,
                                    sec.raw_crc,
                                    static_cast<uint32_t>(Load(h + 32, 4)),
                                    std::string(reinterpret_cast<const char*>(h), 32)};
      continue;
    }
    if (sec.codec == kStored) {
      if (sec.raw != sec.payload.size()) {
        return Damaged(name, sec.at + 16, "stored section size mismatch");
      }
      if (Crc64(sec.payload) != sec.raw_crc) {
        return Damaged(name, sec.at + 24,
                       absl::StrCat("section '", sec.type, "' content checksum mismatch"));
      }
      if (sec.type == kManifestType) {
        manifest_text.assign(reinterpret_cast<const char*>(sec.payload.data()), sec.payload.size());
      }
    } else {
      const unsigned long long frame =
          ZSTD_getFrameContentSize(sec.payload.data(), sec.payload.size());
      if (frame != sec.raw) {
        return Damaged(
            name, sec.at + kSectionHeader,
            absl::StrCat("section '", sec.type, "' is not a zstd frame of ", sec.raw, " bytes"));
      }
      if (sec.type == kImsType) {
        // checked below, in the same pass as its sizes
      } else if (sec.type != kManifestType) {  // checked streaming; decoded below, if at all
        SectionReader check(kZstd, sec.payload);
        if (std::string bad = CheckContent(check, sec.raw, sec.raw_crc, nullptr); !bad.empty()) {
          return ContentDamage(name, sec.at, sec.type, sec.raw, bad);
        }
      } else if (std::string bad = Decompress(sec.payload, sec.raw, sec.raw_crc, manifest_text);
                 !bad.empty()) {
        return ContentDamage(name, sec.at, sec.type, sec.raw, bad);
      }
    }
    if (sec.type == kAesType) {
      a.aes = std::make_shared<AesPayload>(sec.codec, sec.payload, name + ": section 'AESP'");
      continue;
    }
    if (sec.type == kImsType) {
      // Every size in the IMS against its machine and the manifest's counts, before it is
      // decoded into memory; the same read checks the content (a damaged one is named as such,
      // whatever its sizes look like).
      std::unique_ptr<SectionReader> reader;
      const ims::OpenStream open =
          [&]() -> absl::StatusOr<std::unique_ptr<google::protobuf::io::ZeroCopyInputStream>> {
        reader = std::make_unique<SectionReader>(sec.codec, sec.payload);
        return StreamOver(*reader);
      };
      const absl::Status sizes = ims::CheckSizes(open, MaxImageBytes(a.manifest));
      if (!sizes.ok()) reader = std::make_unique<SectionReader>(sec.codec, sec.payload);
      // (after the sizes' pass, what is left of the content, if anything)
      if (std::string bad = CheckContent(*reader, sec.raw, sec.raw_crc, nullptr); !bad.empty()) {
        return ContentDamage(name, sec.at, sec.type, sec.raw, bad);
      }
      if (!sizes.ok()) {
        return Damaged(name, sec.at + kSectionHeader,
                       absl::StrCat("section 'IMSP': ", sizes.message()));
      }
      if (std::string bad = DecodeSound(sec.codec, sec.payload, sec.raw, sec.raw_crc, a.ims);
          !bad.empty()) {
        return ContentDamage(name, sec.at, sec.type, sec.raw, bad);
      }
    }
    if (sec.type == kSegmentStartsType) {
      // Parsed as it is decoded: bytes that are no such message stop it at once.
      if (!a.segment_starts.ParseFromZeroCopyStream(
              StreamOf(std::make_unique<SectionReader>(sec.codec, sec.payload)).get())) {
        return Damaged(name, sec.at + kSectionHeader,
                       "section 'segs' is not a SegmentStarts message");
      }
    }
    if (sec.type != kManifestType) continue;
    absl::StatusOr<Manifest> m = Manifest::FromText(manifest_text);
    if (!m.ok()) return Damaged(name, kFileHeader, m.status().message());
    if (static_cast<uint64_t>(m->version) != major) {
      return Damaged(name, kFileHeader,
                     absl::StrCat("the manifest's version ", m->version,
                                  " differs from the file's major version ", major));
    }
    a.manifest = *std::move(m);
  }
  return a;
}

}  // namespace

absl::StatusOr<Archive> Parse(std::span<const uint8_t> b, const std::string& name,
                              uint64_t max_content) {
  return ParseArchive(b, name, max_content, /*aes_in_place=*/nullptr);
}

absl::StatusOr<Archive> Read(const std::string& path) {
  absl::StatusOr<std::string> bytes = io::ReadWholeFile(path, uint64_t{16} << 30);
  if (!bytes.ok()) return bytes.status();
  return Parse(Bytes(*bytes), path);
}

// ---- a section left in its file ----

namespace {

class AesInFile final : public aes::ScheduleBytes {
 public:
  AesInFile(std::string path, SectionInFile section)
      : path_(std::move(path)), section_(std::move(section)), name_(path_ + ": section 'AESP'") {}
  absl::StatusOr<std::unique_ptr<google::protobuf::io::ZeroCopyInputStream>> Open() const override {
    absl::StatusOr<std::unique_ptr<SectionReader>> r = SectionReader::Open(path_, section_);
    if (!r.ok()) return r.status();
    return StreamOf(*std::move(r));
  }
  const std::string& name() const override { return name_; }

 private:
  const std::string path_;
  const SectionInFile section_;
  const std::string name_;
};

// The checks Parse makes of a section in memory, in the same order, reading it from its file:
// the header's CRC-32 over the payload, then that it decodes to its size, then its CRC-64.
absl::Status CheckSection(const std::string& path, const SectionInFile& section) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrCat(path, ": ", std::strerror(errno)));
  std::vector<uint8_t> out(1 << 16);
  uint32_t crc32 =
      cat::Crc32({reinterpret_cast<const uint8_t*>(section.header.data()), section.header.size()});
  for (uint64_t at = 0; at < section.payload;) {
    const ssize_t got =
        ::pread(fd, out.data(), std::min<uint64_t>(out.size(), section.payload - at),
                section.at + kSectionHeader + at);
    if (got <= 0) break;
    crc32 = cat::Crc32({out.data(), static_cast<size_t>(got)}, crc32);
    at += got;
  }
  ::close(fd);
  if (crc32 != section.crc32) return Damaged(path, section.at, "section 'AESP' checksum mismatch");
  absl::StatusOr<std::unique_ptr<SectionReader>> r = SectionReader::Open(path, section);
  if (!r.ok()) return r.status();
  if (std::string bad = CheckContent(**r, section.raw, section.raw_crc, nullptr); !bad.empty()) {
    return ContentDamage(path, section.at, kAesType, section.raw, bad);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Archive> ReadForReplay(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
    if (fd >= 0) ::close(fd);
    return Read(path);  // what cannot be mapped is read whole, with Read's messages
  }
  // Mapped, not read: the AES section's pages are never touched here.
  void* map = ::mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return Read(path);
  std::optional<SectionInFile> section;
  absl::StatusOr<Archive> a = ParseArchive(
      {static_cast<const uint8_t*>(map), static_cast<size_t>(st.st_size)}, path, kMaxRaw, &section);
  ::munmap(map, st.st_size);
  if (!a.ok()) return a;
  if (absl::Status s = CheckSection(path, *section); !s.ok()) return s;
  a->aes = std::make_shared<AesInFile>(path, *std::move(section));
  return a;
}

absl::StatusOr<aes::Schedule> ScheduleOf(const Archive& a) {
  // The message names the section and, for an event too long to be one, the event.
  absl::StatusOr<aes::Schedule> s = aes::Schedule::Parse(a.aes);
  if (!s.ok()) return s;
  const uint64_t events = s->interrupts() + s->dma() + s->device_io() + s->register_reads();
  if (events > MaxEvents(a.manifest)) {
    return absl::InvalidArgumentError(
        absl::StrCat(a.aes->name(), ": ", events, " events, more than the ", MaxEvents(a.manifest),
                     " the manifest's counts allow ", Counts(a.manifest)));
  }
  return s;
}

absl::StatusOr<ReplayInput> OpenForReplay(const std::string& path) {
  absl::StatusOr<Archive> packed = ReadForReplay(path);
  if (!packed.ok()) return packed.status();
  ims::InitialMachineState ims;
  if (absl::Status s = UnpackIms(*packed, ims); !s.ok()) return s;
  absl::StatusOr<aes::Schedule> schedule = ScheduleOf(*packed);
  if (!schedule.ok()) return schedule.status();
  if (absl::Status s = CheckSegmentPlace(packed->manifest, ims.start(), schedule->end()); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", s.message()));
  }
  if (absl::Status s = CheckSegmentStarts(packed->segment_starts, packed->manifest, ims, *schedule);
      !s.ok()) {
    return absl::DataLossError(absl::StrCat(path, ": ", s.message()));
  }
  return ReplayInput{packed->manifest, std::move(ims), *std::move(schedule),
                     std::move(packed->segment_starts)};
}

bool LooksLikeArchive(const std::string& path) {
  if (path == "-") return false;  // standard input cannot be read twice: taken as a CAT
  absl::StatusOr<std::unique_ptr<io::InputFile>> in = io::InputFile::Open(path);
  if (!in.ok()) return false;
  uint8_t magic[sizeof kMagic];
  absl::StatusOr<size_t> n = (*in)->Read(magic);
  return n.ok() && *n == sizeof magic && std::memcmp(magic, kMagic, sizeof magic) == 0;
}

}  // namespace citcat::archive
