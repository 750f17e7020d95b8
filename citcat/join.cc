// citcat join: the pieces of an instruction trace or of a regenerated CAT, replayed segment by
// segment (citcat split, then one `citcat replay` per segment, on one machine or many), into the
// whole, in segment order (docs/archive-format.md, "Joining pieces").
#include "citcat/join.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "archive/archive.h"
#include "cat_parser/format.h"
#include "cat_parser/reader.h"
#include "cat_parser/writer.h"
#include "citcat/command.h"
#include "io/file.h"
#include "systems/system.h"
#include "traces/output.h"

ABSL_FLAG(std::string, segment_dir, "",
          "the directory citcat split wrote (required): every segment must have its piece, and "
          "each piece must hold what its segment's manifest counts and sums");

namespace citcat::cli {

std::string SegmentArchivePath(const std::string& dir, size_t k) {
  return absl::StrFormat("%s/segment-%04d.citcat", dir, k);
}

absl::StatusOr<std::vector<std::string>> SegmentArchives(const std::string& dir) {
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) {
    return absl::NotFoundError(absl::StrCat(dir, ": no such directory"));
  }
  size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (absl::StartsWith(name, "segment-") && absl::EndsWith(name, ".citcat")) ++count;
  }
  if (error) return absl::InternalError(absl::StrCat(dir, ": ", error.message()));
  std::vector<std::string> paths;
  for (size_t k = 1; k <= count; ++k) {
    paths.push_back(SegmentArchivePath(dir, k));
    if (!std::filesystem::is_regular_file(paths.back(), error)) {
      return absl::NotFoundError(absl::StrCat(dir, " holds ", count, " segment archives, but ",
                                              paths.back(), " is missing"));
    }
  }
  return paths;
}

namespace {

// The segment number a piece's file name carries: the digits that end its stem (the name up to
// its first dot), as in piece-0003.champsim.xz or segment-0003.cat.
std::optional<uint64_t> SegmentNumber(const std::string& path) {
  std::string stem = std::filesystem::path(path).filename().string();
  stem = stem.substr(0, stem.find('.'));
  size_t digits = stem.size();
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(stem[digits - 1]))) --digits;
  uint64_t n = 0;
  if (digits == stem.size() || !absl::SimpleAtoi(stem.substr(digits), &n)) return std::nullopt;
  return n;
}

// The compression suffix that decides how a trace is written (traces/output.h), or "".
std::string CompressionSuffix(const std::string& path) {
  return std::string(traces::SuffixOf(traces::CompressionOf(path)));
}

bool StartsWithCatMagic(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  uint8_t head[cat::format::kMagic.size()];
  const bool cat = std::fread(head, 1, sizeof head, f) == sizeof head &&
                   std::equal(cat::format::kMagic.begin(), cat::format::kMagic.end(), head);
  std::fclose(f);
  return cat;
}

// The pieces, named in segment order 1, 2, ..., each a regular file.
absl::Status CheckOrder(const std::vector<std::string>& pieces) {
  for (size_t i = 0; i < pieces.size(); ++i) {
    const std::optional<uint64_t> n = SegmentNumber(pieces[i]);
    if (!n) {
      return absl::InvalidArgumentError(absl::StrCat(
          pieces[i],
          ": no segment number in the file name (expected it at the end of the name's stem, "
          "as in piece-0001.trace)"));
    }
    if (*n != i + 1) {
      bool later = false;  // the right piece comes later in the list
      for (size_t j = i + 1; j < pieces.size(); ++j)
        later = later || SegmentNumber(pieces[j]) == i + 1;
      if (later || *n < i + 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("pieces out of order or given twice: ", pieces[i], " (segment ", *n,
                         ") given as piece ", i + 1));
      }
      return absl::NotFoundError(absl::StrCat("the piece of segment ", i + 1, " is missing: piece ",
                                              i + 1, " given is ", pieces[i], " (segment ", *n,
                                              ")"));
    }
    struct stat st;
    if (stat(pieces[i].c_str(), &st) != 0) {
      return absl::NotFoundError(
          absl::StrCat("the piece of segment ", i + 1, " is missing: ", pieces[i], " not found"));
    }
    if (!S_ISREG(st.st_mode)) {
      return absl::InvalidArgumentError(absl::StrCat(pieces[i], ": not a regular file"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckSegmentCount(const std::string& path, const archive::Manifest& m) {
  if (m.segment == 0 || m.segments != 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      path,
      ": written by an older citcat split, which did not record how many segments it cut, so a "
      "missing last segment could not be told: split the archive again"));
}

namespace {

// The segment archives `paths` of `dir`, in order; there must be one for each of `count` pieces,
// and each must name its place among them.
absl::StatusOr<std::vector<SegmentPiece>> ReadSegments(const std::string& dir,
                                                       const std::vector<std::string>& paths,
                                                       size_t count) {
  if (paths.size() != count) {
    return absl::InvalidArgumentError(
        absl::StrCat(dir, " holds ", paths.size(), " segments, but ", count, " pieces were given"));
  }
  std::vector<SegmentPiece> segments;
  for (size_t k = 1; k <= count; ++k) {
    const std::string& path = paths[k - 1];
    absl::StatusOr<archive::Archive> a = archive::Read(path);
    if (!a.ok()) return a.status();
    const archive::Manifest& m = a->manifest;
    if (absl::Status s = CheckSegmentCount(path, m); !s.ok()) return s;
    if (m.segment != k || m.segments != count) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": its manifest names segment ", m.segment, " of ", m.segments, ", not ", k, " of ",
          count, ": a segment missing, extra or out of its place"));
    }
    ims::InitialMachineState ims;
    aes::EventSchedule aes;
    if (absl::Status s = archive::Unpack(*a, ims, aes); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat(path, ": ", s.message()));
    }
    absl::StatusOr<const systems::System*> system = systems::ForIms(ims);
    if (!system.ok()) return system.status();
    SegmentPiece& p = segments.emplace_back();
    p.manifest = a->manifest;
    p.byte_order = ims.description().byte_order();
    p.header = (*system)->replay.header(ims);
    // Replay writes the state dump ahead of the records of a whole trace's first segment
    // (replay::Replay); the manifest's sums leave it out.
    if (!ims.start().from_reset() && !ims.start().segment() && (*system)->replay.state_dump) {
      absl::StatusOr<std::vector<cat::OwnedRecord>> dump =
          (*system)->replay.state_dump(p.header, ims);
      if (!dump.ok()) return dump.status();
      p.dump = *std::move(dump);
    }
  }
  return segments;
}

// A piece of replay's plain text trace (docs/replay.md), checked against its segment's manifest
// as it is read: its instruction lines ("%12d %016x BYTES  DISASSEMBLY") give the canonical
// instruction stream, whose entries and CRC-64 the manifest holds; event lines
// ("             - ...") are skipped. So a piece cut short, or another segment's, is refused.
class TextPieceCheck {
 public:
  TextPieceCheck(std::string path, const SegmentPiece& segment, size_t k)
      : path_(std::move(path)), segment_(segment), k_(k) {
    ims::InitialMachineState order;  // what the version 1 stream needs of the IMS
    order.mutable_description()->set_byte_order(segment.byte_order);
    sums_.Attach(hooks_, order, segment.manifest.version);
  }

  // Whether `head`, a piece's first bytes, starts as a plain text trace.
  static bool Starts(absl::string_view head) {
    const size_t end = head.find('\n');
    if (end == absl::string_view::npos) return false;
    replay::ExecutedInstruction e;
    bool event = false;
    return Parse(head.substr(0, end), e, event);
  }

  absl::Status Feed(absl::string_view bytes) {
    for (size_t end; (end = bytes.find('\n')) != absl::string_view::npos;) {
      absl::string_view line = bytes.substr(0, end);
      if (!partial_.empty()) {
        partial_.append(line.data(), line.size());
        line = partial_;
      }
      ++line_;
      replay::ExecutedInstruction e;
      bool event = false;
      if (!Parse(line, e, event)) {
        return absl::DataLossError(absl::StrCat(
            path_, ": line ", line_, " is not a line of the plain text trace: a damaged piece"));
      }
      if (!event) batch_.push_back(e);
      if (batch_.size() == 4096) Flush();
      partial_.clear();
      bytes.remove_prefix(end + 1);
    }
    partial_.append(bytes.data(), bytes.size());
    return absl::OkStatus();
  }

  absl::Status Finish() {
    Flush();
    archive::Manifest got;
    sums_.Fill(replay::ReplaySummary(), got);
    const archive::Manifest& want = segment_.manifest;
    if (!partial_.empty() || got.trace_entries != want.trace_entries ||
        got.instruction_crc64 != want.instruction_crc64) {
      return absl::DataLossError(absl::StrFormat(
          "%s: %d instructions, CRC-64 %016x%s; segment %d's manifest has %d, %016x: a piece cut "
          "short or damaged, or another segment's",
          path_, got.trace_entries, got.instruction_crc64,
          partial_.empty() ? "" : " and a last line cut short", k_, want.trace_entries,
          want.instruction_crc64));
    }
    return absl::OkStatus();
  }

 private:
  static bool Hex(absl::string_view digits, uint64_t& value) {
    value = 0;
    for (char c : digits) {
      const int d = absl::ascii_isdigit(c) ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (d < 0) return false;
      value = value << 4 | d;
    }
    return true;
  }
  static bool Parse(absl::string_view line, replay::ExecutedInstruction& e, bool& event) {
    event = absl::StartsWith(line, "             - ");
    if (event) return true;
    // The index right-aligned in 12 columns, a space, the PC in 16 digits, a space, the bytes.
    if (line.size() < 12 + 1 + 16 + 1 + 2 + 2 || line[12] != ' ' || line[29] != ' ') return false;
    const absl::string_view index = absl::StripLeadingAsciiWhitespace(line.substr(0, 12));
    if (index.empty() || !std::all_of(index.begin(), index.end(), absl::ascii_isdigit) ||
        !absl::SimpleAtoi(index, &e.index) || !Hex(line.substr(13, 16), e.pc)) {
      return false;
    }
    const absl::string_view rest = line.substr(30);
    const size_t digits = rest.find("  ");
    if (digits == absl::string_view::npos || digits == 0 || digits % 2 != 0 ||
        digits / 2 > e.bytes.size()) {
      return false;
    }
    e.size = static_cast<uint8_t>(digits / 2);
    for (size_t i = 0; i < e.size; ++i) {
      uint64_t b;
      if (!Hex(rest.substr(2 * i, 2), b)) return false;
      e.bytes[i] = static_cast<uint8_t>(b);
    }
    return true;
  }
  void Flush() {
    if (!batch_.empty()) hooks_.on_instructions(batch_);
    batch_.clear();
  }

  const std::string path_;
  const SegmentPiece& segment_;
  const size_t k_;
  archive::ReplayChecksums sums_;
  replay::ReplayOptions hooks_;
  std::vector<replay::ExecutedInstruction> batch_;
  std::string partial_;  // a line not yet ended
  uint64_t line_ = 0;
};

// The first bytes of a file (at most 256).
std::string Head(const std::string& path) {
  std::string head(256, '\0');
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return "";
  head.resize(std::fread(head.data(), 1, head.size(), f));
  std::fclose(f);
  return head;
}

// The trace pieces' bytes one after the other into `out_path`: compressed pieces as they are (one
// stream or frame each, each decompressed whole first to check it), or decompressed into a plain
// output (checked by the same decompression); plain text trace pieces checked against their
// segments' manifests as they are copied.
absl::Status JoinTraces(const std::vector<std::string>& pieces, const std::string& out_path,
                        const std::vector<SegmentPiece>& segments, uint64_t& bytes) {
  const std::string suffix = CompressionSuffix(out_path);
  const std::string piece_suffix = CompressionSuffix(pieces[0]);
  const bool decompress = suffix.empty() && !piece_suffix.empty();
  for (const std::string& piece : pieces) {
    if (CompressionSuffix(piece) != piece_suffix || (!suffix.empty() && piece_suffix != suffix)) {
      return absl::InvalidArgumentError(absl::StrCat(
          piece, ": a piece of ", out_path, " must be ",
          suffix.empty() ? absl::StrCat("compressed like the first piece (",
                                        piece_suffix.empty() ? "not at all" : piece_suffix, ")")
                         : absl::StrCat("compressed (", suffix, ") like it")));
    }
  }
  // A plain piece has no checksum of its own; only the plain text trace says which instructions
  // it holds.
  if (piece_suffix.empty() && !TextPieceCheck::Starts(Head(pieces[0]))) {
    return absl::InvalidArgumentError(absl::StrCat(
        pieces[0],
        ": join cannot check an uncompressed piece of this format (no checksum, and nothing in "
        "it names its instructions): give compressed pieces (.xz, .zst, .gz), each checked whole, "
        "or the plain text trace (replay -o without --format), checked against its segment's "
        "manifest"));
  }
  absl::StatusOr<std::unique_ptr<io::OutputFile>> out = io::OutputFile::Create(out_path);
  if (!out.ok()) return out.status();
  std::vector<uint8_t> buffer(1 << 20);
  for (size_t k = 0; k < pieces.size(); ++k) {
    const std::string& piece = pieces[k];
    if (decompress) {
      // Written as it is checked: a damaged piece stops the join, and the output never appears.
      absl::Status written;
      absl::StatusOr<uint64_t> n = traces::Decompress(piece, [&](absl::string_view part) {
        if (written.ok()) {
          written = (*out)->Write(
              std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(part.data()), part.size()));
        }
      });
      if (!n.ok()) return n.status();
      if (!written.ok()) return written;
      continue;
    }
    std::optional<TextPieceCheck> text;
    if (suffix.empty()) {
      text.emplace(piece, segments[k], k + 1);
    } else if (absl::StatusOr<uint64_t> ok = traces::CheckCompressed(piece); !ok.ok()) {
      return ok.status();
    }
    absl::StatusOr<std::unique_ptr<io::InputFile>> in = io::InputFile::Open(piece);
    if (!in.ok()) return in.status();
    for (;;) {
      absl::StatusOr<size_t> n = (*in)->Read(buffer);
      if (!n.ok()) return n.status();
      if (*n == 0) break;
      if (text) {
        absl::Status s = text->Feed({reinterpret_cast<const char*>(buffer.data()), *n});
        if (!s.ok()) return s;
      }
      if (absl::Status s = (*out)->Write(std::span<const uint8_t>(buffer.data(), *n)); !s.ok()) {
        return s;
      }
    }
    if (text) {
      if (absl::Status s = text->Finish(); !s.ok()) return s;
    }
  }
  bytes = (*out)->bytes_written();
  return (*out)->Commit();
}

}  // namespace

absl::Status JoinCats(const std::vector<std::string>& pieces, const std::string& out_path,
                      const std::vector<SegmentPiece>& segments, uint64_t& records) {
  std::unique_ptr<cat::CatWriter> writer;
  for (size_t i = 0; i < pieces.size(); ++i) {
    absl::StatusOr<std::unique_ptr<cat::CatReader>> reader = cat::CatReader::Open(pieces[i]);
    if (!reader.ok()) return reader.status();
    const cat::CatHeader& header = (*reader)->header();
    if (writer == nullptr) {
      absl::StatusOr<std::unique_ptr<cat::CatWriter>> w = cat::CatWriter::Create(out_path, header);
      if (!w.ok()) return w.status();
      writer = *std::move(w);
    } else if (!(header == writer->header())) {
      return absl::InvalidArgumentError(absl::StrCat(
          pieces[i], ": its header differs from ", pieces[0], "'s: not a piece of the same trace"));
    }
    const SegmentPiece* segment = segments.empty() ? nullptr : &segments[i];
    if (segment != nullptr && !(header == segment->header)) {
      return absl::InvalidArgumentError(
          absl::StrCat(pieces[i], ": not the header segment ", i + 1, "'s replay writes"));
    }
    // The manifest's record sums, as a replay computes them (archive::ReplayChecksums).
    archive::ReplayChecksums sums;
    replay::ReplayOptions hooks;
    sums.Attach(hooks, ims::InitialMachineState());
    cat::BusRecord r;
    uint64_t index = 0;
    for (;; ++index) {
      absl::StatusOr<bool> more = (*reader)->Next(r);
      if (!more.ok()) return more.status();
      if (!*more) break;
      if (segment != nullptr && index < segment->dump.size()) {
        if (!(cat::OwnedRecord(r) == segment->dump[index])) {
          return absl::DataLossError(
              absl::StrCat(pieces[i], ": record ", index, " is not the state dump segment ", i + 1,
                           "'s initial state implies: a damaged piece, or another segment's"));
        }
      } else {
        hooks.on_record_retired(r, 0);
      }
      if (absl::Status s = writer->Write(r); !s.ok()) return s;
    }
    if (segment != nullptr) {
      archive::Manifest got;
      sums.Fill(replay::ReplaySummary(), got);
      const archive::Manifest& want = segment->manifest;
      if (index < segment->dump.size() || got.records != want.records ||
          got.record_bytes != want.record_bytes || got.cat_crc64 != want.cat_crc64) {
        return absl::DataLossError(absl::StrFormat(
            "%s: %d records, %d data bytes, CRC-64 %016x after the state dump; segment %d's "
            "manifest has %d, %d, %016x: a damaged piece, or another segment's",
            pieces[i], got.records, got.record_bytes, got.cat_crc64, i + 1, want.records,
            want.record_bytes, want.cat_crc64));
      }
    }
  }
  records = writer->records_written();
  return writer->Finish();
}

absl::Status RunJoin(const std::vector<std::string>& args) {
  const char* synopsis = "PIECE-0001 PIECE-0002 ... -o WHOLE [--segment-dir DIR]";
  if (args.empty()) return UsageError("join", synopsis);
  std::string out_path;
  if (absl::Status s = RequireOutput("join", out_path); !s.ok()) return s;
  const std::string segment_dir = absl::GetFlag(FLAGS_segment_dir);
  if (segment_dir.empty()) {
    return BadUsage(
        "needs --segment-dir DIR, the directory citcat split wrote: without it, join cannot tell "
        "how many pieces there are (a missing last piece) nor check what they hold");
  }
  absl::StatusOr<std::vector<std::string>> archives = SegmentArchives(segment_dir);
  if (!archives.ok()) return archives.status();
  // The segment archives are inputs too: the output must not overwrite one.
  std::vector<std::string> inputs = args;
  inputs.insert(inputs.end(), archives->begin(), archives->end());
  if (absl::Status s = CheckOutputs(inputs, {out_path}); !s.ok()) return s;
  if (absl::Status s = CheckOrder(args); !s.ok()) return s;
  absl::StatusOr<std::vector<SegmentPiece>> read =
      ReadSegments(segment_dir, *archives, args.size());
  if (!read.ok()) return read.status();
  const std::vector<SegmentPiece> segments = *std::move(read);
  // All CATs or all trace pieces.
  const bool cat = StartsWithCatMagic(args[0]);
  for (const std::string& piece : args) {
    if (StartsWithCatMagic(piece) != cat) {
      return absl::InvalidArgumentError(absl::StrCat(
          cat ? args[0] : piece, " is a CAT, ", cat ? piece : args[0],
          " is not: the pieces of one trace or of one CAT (a CAT damaged at its start is no CAT)"));
    }
  }
  uint64_t count = 0;
  if (absl::Status s = cat ? JoinCats(args, out_path, segments, count)
                           : JoinTraces(args, out_path, segments, count);
      !s.ok()) {
    return s;
  }
  if (!absl::GetFlag(FLAGS_quiet)) {
    std::fprintf(stderr, "citcat join: %zu pieces, %llu %s in %s%s\n", args.size(),
                 static_cast<unsigned long long>(count), cat ? "records" : "bytes",
                 out_path.c_str(),
                 cat || CompressionSuffix(out_path).empty()
                     ? " (each piece as its segment's manifest sums it)"
                     : " (each piece's checksums checked)");
  }
  return absl::OkStatus();
}

}  // namespace citcat::cli
