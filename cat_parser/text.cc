#include "cat_parser/text.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cat_parser/header_codec.h"
#include "cat_parser/writer.h"

namespace citcat::cat {
namespace {

constexpr absl::string_view kFirstLine = "citcat-cat 1.0";
constexpr size_t kMaxLineBytes = 2 * kMaxRecordData + 4096;

constexpr std::pair<CacheType, absl::string_view> kCacheTypes[] = {
    {CacheType::kInstruction, "instruction"},
    {CacheType::kData, "data"},
    {CacheType::kUnified, "unified"}};
constexpr std::pair<WritePolicy, absl::string_view> kPolicies[] = {
    {WritePolicy::kWriteBack, "write-back"}, {WritePolicy::kWriteThrough, "write-through"}};
constexpr std::pair<WindowKind, absl::string_view> kWindowKinds[] = {
    {WindowKind::kMemoryMapped, "mmio"}, {WindowKind::kPort, "port"}};
constexpr std::pair<Machine, absl::string_view> kMachines[] = {{Machine::kR4400, "r4400"},
                                                               {Machine::kI486, "i486"}};
constexpr std::pair<ByteOrder, absl::string_view> kByteOrders[] = {{ByteOrder::kLittle, "little"},
                                                                   {ByteOrder::kBig, "big"}};
constexpr std::pair<uint8_t, absl::string_view> kFlagNames[] = {{kFlagCode, "code"},
                                                                {kFlagLocked, "lock"}};

template <typename T, size_t N>
absl::string_view NameOf(const std::pair<T, absl::string_view> (&table)[N], T value) {
  for (const auto& [v, name] : table) {
    if (v == value) return name;
  }
  return "?";
}

template <typename T, size_t N>
std::optional<T> ValueOf(const std::pair<T, absl::string_view> (&table)[N],
                         absl::string_view name) {
  for (const auto& [v, n] : table) {
    if (n == name) return v;
  }
  return std::nullopt;
}

std::string Hex(uint64_t v) { return absl::StrCat("0x", absl::Hex(v)); }

std::string WindowToText(absl::string_view keyword, const AddressWindow& w) {
  return absl::StrCat(keyword, " name=", w.name, " kind=", NameOf(kWindowKinds, w.kind),
                      " base=", Hex(w.base), " size=", Hex(w.size), "\n");
}

// Splits a line into its first word and its key=value pairs.
struct Line {
  int number = 0;
  absl::string_view keyword;
  std::vector<std::pair<absl::string_view, absl::string_view>> fields;
  absl::string_view rest;  // everything after the keyword
};

class TextParser {
 public:
  explicit TextParser(io::InputFile& in) : in_(in) {}

  // Next meaningful line; false at end of input.
  absl::StatusOr<bool> NextLine(Line& line);
  absl::Status Error(const Line& line, absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(in_.path(), ":", line.number, ": ", what));
  }

 private:
  absl::StatusOr<bool> ReadRawLine(std::string& out);
  io::InputFile& in_;
  std::vector<uint8_t> buffer_ = std::vector<uint8_t>(1 << 16);
  size_t start_ = 0, end_ = 0;
  bool eof_ = false;
  int number_ = 0;
  std::string current_;
};

absl::StatusOr<bool> TextParser::ReadRawLine(std::string& out) {
  out.clear();
  while (true) {
    for (size_t i = start_; i < end_; ++i) {
      if (buffer_[i] == '\n') {
        out.append(reinterpret_cast<const char*>(&buffer_[start_]), i - start_);
        start_ = i + 1;
        return true;
      }
    }
    out.append(reinterpret_cast<const char*>(&buffer_[start_]), end_ - start_);
    start_ = end_ = 0;
    if (out.size() > kMaxLineBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          in_.path(), ":", number_ + 1, ": line longer than ", kMaxLineBytes, " bytes"));
    }
    if (eof_) return !out.empty();
    absl::StatusOr<size_t> n = in_.Read(buffer_);
    if (!n.ok()) return n.status();
    end_ = *n;
    if (*n == 0) eof_ = true;
  }
}

absl::StatusOr<bool> TextParser::NextLine(Line& line) {
  while (true) {
    absl::StatusOr<bool> got = ReadRawLine(current_);
    if (!got.ok()) return got.status();
    if (!*got) return false;
    ++number_;
    absl::string_view text = current_;
    if (size_t hash = text.find('#'); hash != absl::string_view::npos) text = text.substr(0, hash);
    text = absl::StripAsciiWhitespace(text);
    if (text.empty()) continue;
    line = Line{};
    line.number = number_;
    size_t space = text.find_first_of(" \t");
    line.keyword = text.substr(0, space);
    line.rest = space == absl::string_view::npos
                    ? absl::string_view()
                    : absl::StripLeadingAsciiWhitespace(text.substr(space));
    for (absl::string_view word :
         absl::StrSplit(line.rest, absl::ByAnyChar(" \t"), absl::SkipEmpty())) {
      size_t eq = word.find('=');
      if (eq == absl::string_view::npos) {
        line.fields.emplace_back(word, absl::string_view());
      } else {
        line.fields.emplace_back(word.substr(0, eq), word.substr(eq + 1));
      }
    }
    return true;
  }
}

bool ParseNumber(absl::string_view text, uint64_t& out) {
  if (absl::ConsumePrefix(&text, "0x") || absl::ConsumePrefix(&text, "0X")) {
    return !text.empty() && absl::SimpleHexAtoi(text, &out);
  }
  return absl::SimpleAtoi(text, &out);
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads key=value fields of a line, each allowed once, checking that no unknown key appears.
class Fields {
 public:
  Fields(const TextParser& parser, const Line& line) : parser_(parser), line_(line) {}

  absl::Status Get(absl::string_view key, std::optional<absl::string_view>& out) {
    out.reset();
    for (const auto& [k, v] : line_.fields) {
      if (k != key) continue;
      if (out) return parser_.Error(line_, absl::StrCat("'", key, "' given twice"));
      out = v;
    }
    used_.push_back(key);
    return absl::OkStatus();
  }
  absl::Status Require(absl::string_view key, absl::string_view& out) {
    std::optional<absl::string_view> v;
    if (absl::Status s = Get(key, v); !s.ok()) return s;
    if (!v) return parser_.Error(line_, absl::StrCat("'", key, "=' is missing"));
    out = *v;
    return absl::OkStatus();
  }
  absl::Status RequireNumber(absl::string_view key, uint64_t& out, uint64_t max) {
    absl::string_view v;
    if (absl::Status s = Require(key, v); !s.ok()) return s;
    if (!ParseNumber(v, out) || out > max) {
      return parser_.Error(line_, absl::StrCat("'", key, "=", v, "' is not a valid number"));
    }
    return absl::OkStatus();
  }
  absl::Status CheckNoOthers() const {
    for (const auto& [k, v] : line_.fields) {
      if (std::find(used_.begin(), used_.end(), k) == used_.end()) {
        return parser_.Error(line_, absl::StrCat("unexpected '", k, "'"));
      }
    }
    return absl::OkStatus();
  }

 private:
  const TextParser& parser_;
  const Line& line_;
  std::vector<absl::string_view> used_;
};

template <typename T, size_t N>
absl::Status RequireName(const TextParser& parser, const Line& line, Fields& fields,
                         absl::string_view key, const std::pair<T, absl::string_view> (&table)[N],
                         T& out) {
  absl::string_view v;
  if (absl::Status s = fields.Require(key, v); !s.ok()) return s;
  std::optional<T> value = ValueOf(table, v);
  if (!value) return parser.Error(line, absl::StrCat("unknown ", key, " '", v, "'"));
  out = *value;
  return absl::OkStatus();
}

absl::Status ParseWindow(const TextParser& parser, const Line& line, AddressWindow& w) {
  Fields f(parser, line);
  absl::string_view name;
  if (absl::Status s = f.Require("name", name); !s.ok()) return s;
  w.name = std::string(name);
  absl::Status s = RequireName(parser, line, f, "kind", kWindowKinds, w.kind);
  if (s.ok()) s = f.RequireNumber("base", w.base, UINT64_MAX);
  if (s.ok()) s = f.RequireNumber("size", w.size, UINT64_MAX);
  if (s.ok()) s = f.CheckNoOthers();
  return s;
}

absl::Status ParseCache(const TextParser& parser, const Line& line, CacheGeometry& c) {
  Fields f(parser, line);
  uint64_t level = 0, size = 0, line_bytes = 0, ways = 0;
  absl::Status s = f.RequireNumber("level", level, 255);
  if (s.ok()) s = RequireName(parser, line, f, "type", kCacheTypes, c.type);
  if (s.ok()) s = f.RequireNumber("size", size, UINT32_MAX);
  if (s.ok()) s = f.RequireNumber("line", line_bytes, UINT32_MAX);
  if (s.ok()) s = f.RequireNumber("ways", ways, 255);
  if (s.ok()) s = RequireName(parser, line, f, "policy", kPolicies, c.policy);
  if (s.ok()) s = f.CheckNoOthers();
  c.level = static_cast<uint8_t>(level);
  c.size_bytes = static_cast<uint32_t>(size);
  c.line_bytes = static_cast<uint32_t>(line_bytes);
  c.ways = static_cast<uint8_t>(ways);
  return s;
}

absl::StatusOr<CatHeader> ParseHeader(TextParser& parser) {
  Line line;
  absl::StatusOr<bool> got = parser.NextLine(line);
  if (!got.ok()) return got.status();
  if (!*got || absl::StrCat(line.keyword, " ", line.rest) != kFirstLine) {
    return parser.Error(line, absl::StrCat("expected '", kFirstLine, "' as the first line"));
  }
  CatHeader h;
  h.side_band = 0;
  bool machine = false, order = false, memory = false;
  while (true) {
    got = parser.NextLine(line);
    if (!got.ok()) return got.status();
    if (!*got) return parser.Error(line, "input ends before the 'records' line");
    absl::Status s;
    if (line.keyword == "records") {
      if (!machine || !order || !memory) {
        return parser.Error(line, "header needs 'machine', 'byte-order' and 'memory-bytes'");
      }
      if (s = ValidateHeader(h); !s.ok()) return parser.Error(line, s.message());
      return h;
    } else if (line.keyword == "machine") {
      std::optional<Machine> m = ValueOf(kMachines, line.rest);
      if (!m) return parser.Error(line, absl::StrCat("unknown machine '", line.rest, "'"));
      h.machine = *m;
      machine = true;
    } else if (line.keyword == "byte-order") {
      std::optional<ByteOrder> o = ValueOf(kByteOrders, line.rest);
      if (!o) return parser.Error(line, absl::StrCat("unknown byte order '", line.rest, "'"));
      h.byte_order = *o;
      order = true;
    } else if (line.keyword == "memory-bytes") {
      if (!ParseNumber(line.rest, h.memory_bytes)) return parser.Error(line, "bad memory size");
      memory = true;
    } else if (line.keyword == "hole") {
      Fields f(parser, line);
      MemoryHole& hole = h.holes.emplace_back();
      s = f.RequireNumber("base", hole.base, UINT64_MAX);
      if (s.ok()) s = f.RequireNumber("size", hole.size, UINT64_MAX);
      if (s.ok()) s = f.CheckNoOthers();
    } else if (line.keyword == "rom") {
      Fields f(parser, line);
      RomWindow& rom = h.roms.emplace_back();
      s = f.RequireNumber("base", rom.base, UINT64_MAX);
      if (s.ok()) s = f.RequireNumber("size", rom.size, UINT64_MAX);
      if (s.ok()) s = f.CheckNoOthers();
    } else if (line.keyword == "from-reset") {
      if (!line.rest.empty()) return parser.Error(line, "'from-reset' takes no value");
      if (h.from_reset) return parser.Error(line, "'from-reset' repeated");
      h.from_reset = true;
    } else if (line.keyword == "side-band") {
      for (const auto& [name, unused] : line.fields) {
        if (name != "branch-count") {
          return parser.Error(line, absl::StrCat("unknown side-band signal '", name, "'"));
        }
        h.side_band |= kSideBandBranchCount;
      }
    } else if (line.keyword == "cache") {
      s = ParseCache(parser, line, h.caches.emplace_back());
    } else if (line.keyword == "device") {
      s = ParseWindow(parser, line, h.devices.emplace_back());
    } else if (line.keyword == "magic") {
      s = ParseWindow(parser, line, h.magic.emplace_back());
    } else if (line.keyword == "producer") {
      h.producer = std::string(line.rest);
    } else {
      return parser.Error(line, absl::StrCat("unknown header line '", line.keyword, "'"));
    }
    if (!s.ok()) return s;
  }
}

absl::Status ParseRecord(const TextParser& parser, const Line& line, const CatHeader& header,
                         OwnedRecord& r) {
  std::optional<RecordKind> kind = KindFromName(line.keyword);
  if (!kind) return parser.Error(line, absl::StrCat("unknown record kind '", line.keyword, "'"));
  r.kind = *kind;
  Fields f(parser, line);
  absl::Status s = f.RequireNumber("addr", r.address, UINT64_MAX);
  if (s.ok()) s = f.RequireNumber("bc", r.branch_count, UINT64_MAX);
  absl::string_view data;
  if (s.ok()) s = f.Require("data", data);
  std::optional<absl::string_view> master, flags;
  if (s.ok()) s = f.Get("master", master);
  if (s.ok()) s = f.Get("flags", flags);
  if (s.ok()) s = f.CheckNoOthers();
  if (!s.ok()) return s;

  if (data.size() % 2 != 0 || data.size() / 2 > kMaxRecordData) {
    return parser.Error(line, "data must be an even number of hex digits, at most 65536 bytes");
  }
  r.data.resize(data.size() / 2);
  for (size_t i = 0; i < r.data.size(); ++i) {
    int hi = HexDigit(data[2 * i]), lo = HexDigit(data[2 * i + 1]);
    if (hi < 0 || lo < 0) return parser.Error(line, "data has a character that is not hex");
    r.data[i] = static_cast<uint8_t>(hi << 4 | lo);
  }

  r.master = kMasterCpu;
  if (master && *master != "cpu") {
    uint64_t n = 0;
    bool found = ParseNumber(*master, n) && n >= 1 && n <= header.devices.size();
    for (size_t i = 0; !found && i < header.devices.size(); ++i) {
      if (header.devices[i].name == *master) {
        found = true;
        n = i + 1;
      }
    }
    if (!found) return parser.Error(line, absl::StrCat("no device '", *master, "' in the header"));
    r.master = static_cast<uint8_t>(n);
  }
  r.flags = 0;
  if (flags) {
    for (absl::string_view name : absl::StrSplit(*flags, ',')) {
      std::optional<uint8_t> bit = ValueOf(kFlagNames, name);
      if (!bit) return parser.Error(line, absl::StrCat("unknown flag '", name, "'"));
      r.flags |= *bit;
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string HeaderToText(const CatHeader& h) {
  std::string out =
      absl::StrCat(kFirstLine, "\nmachine ", NameOf(kMachines, h.machine), "\nbyte-order ",
                   NameOf(kByteOrders, h.byte_order), "\nmemory-bytes ", Hex(h.memory_bytes), "\n");
  for (const MemoryHole& hole : h.holes) {
    absl::StrAppend(&out, "hole base=", Hex(hole.base), " size=", Hex(hole.size), "\n");
  }
  for (const RomWindow& rom : h.roms) {
    absl::StrAppend(&out, "rom base=", Hex(rom.base), " size=", Hex(rom.size), "\n");
  }
  if (h.from_reset) out += "from-reset\n";
  if (h.side_band & kSideBandBranchCount) out += "side-band branch-count\n";
  for (const CacheGeometry& c : h.caches) {
    absl::StrAppend(&out, "cache level=", c.level, " type=", NameOf(kCacheTypes, c.type),
                    " size=", c.size_bytes, " line=", c.line_bytes, " ways=", c.ways,
                    " policy=", NameOf(kPolicies, c.policy), "\n");
  }
  for (const AddressWindow& w : h.devices) out += WindowToText("device", w);
  for (const AddressWindow& w : h.magic) out += WindowToText("magic", w);
  if (!h.producer.empty()) absl::StrAppend(&out, "producer ", h.producer, "\n");
  out += "records\n";
  return out;
}

std::string RecordToText(const BusRecord& r, const CatHeader& header) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(KindName(r.kind));
  out.resize(15, ' ');
  absl::StrAppend(&out, "addr=", Hex(r.address), " bc=", r.branch_count);
  if (r.master != kMasterCpu) {
    absl::StrAppend(&out, " master=",
                    r.master <= header.devices.size() ? header.devices[r.master - 1].name
                                                      : absl::StrCat(r.master));
  }
  if (r.flags & kKnownFlags) {
    out += " flags=";
    bool first = true;
    for (const auto& [bit, name] : kFlagNames) {
      if (!(r.flags & bit)) continue;
      absl::StrAppend(&out, first ? "" : ",", name);
      first = false;
    }
  }
  out += " data=";
  size_t at = out.size();
  out.resize(at + 2 * r.data.size());
  for (uint8_t b : r.data) {
    out[at++] = kDigits[b >> 4];
    out[at++] = kDigits[b & 15];
  }
  out += '\n';
  return out;
}

absl::Status DumpText(CatReader& reader, io::OutputFile& out, uint64_t limit,
                      const std::function<void()>& after_record) {
  if (absl::Status s = out.Write(HeaderToText(reader.header())); !s.ok()) return s;
  BusRecord r;
  for (uint64_t n = 0; n < limit; ++n) {
    absl::StatusOr<bool> more = reader.Next(r);
    if (!more.ok()) return more.status();
    if (!*more) break;
    if (absl::Status s = out.Write(RecordToText(r, reader.header())); !s.ok()) return s;
    if (after_record) after_record();
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> AssembleText(io::InputFile& in, const std::string& out_path) {
  TextParser parser(in);
  absl::StatusOr<CatHeader> header = ParseHeader(parser);
  if (!header.ok()) return header.status();
  absl::StatusOr<std::unique_ptr<CatWriter>> writer = CatWriter::Create(out_path, *header);
  if (!writer.ok()) return writer.status();
  Line line;
  OwnedRecord record;
  while (true) {
    absl::StatusOr<bool> got = parser.NextLine(line);
    if (!got.ok()) return got.status();
    if (!*got) break;
    if (absl::Status s = ParseRecord(parser, line, *header, record); !s.ok()) return s;
    if (absl::Status s = (*writer)->Write(record.view()); !s.ok()) return s;
  }
  if (absl::Status s = (*writer)->Finish(); !s.ok()) return s;
  return (*writer)->records_written();
}

}  // namespace citcat::cat
