#include "machine/elf_loader.h"

#include <cstring>
#include <fstream>
#include <iterator>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace citcat::machine {
namespace {

constexpr uint16_t kEtExec = 2;
constexpr uint32_t kPtLoad = 1;
constexpr uint32_t kPtDynamic = 2;
constexpr uint32_t kPtInterp = 3;
constexpr uint32_t kShtSymtab = 2;

// Bounds-checked reader of one ELF file in either byte order.
class Reader {
 public:
  Reader(std::span<const uint8_t> file, bool big_endian) : file_(file), big_(big_endian) {}

  bool Has(uint64_t offset, uint64_t size) const {
    return offset <= file_.size() && size <= file_.size() - offset;
  }
  uint64_t Get(uint64_t offset, int size) const {
    uint64_t v = 0;
    for (int i = 0; i < size; ++i) {
      const uint8_t b = file_[offset + (big_ ? i : size - 1 - i)];
      v = (v << 8) | b;
    }
    return v;
  }
  std::span<const uint8_t> Bytes(uint64_t offset, uint64_t size) const {
    return file_.subspan(offset, size);
  }

 private:
  std::span<const uint8_t> file_;
  bool big_;
};

absl::Status Bad(std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("ELF: ", std::string(what)));
}

}  // namespace

const ElfSegment* ElfImage::FindSegment(uint64_t vaddr, uint64_t size) const {
  for (const ElfSegment& s : segments) {
    if (vaddr >= s.vaddr && size <= s.memsz && vaddr - s.vaddr <= s.memsz - size) return &s;
  }
  return nullptr;
}

bool ElfImage::Read(uint64_t vaddr, void* out, uint64_t size) const {
  const ElfSegment* s = FindSegment(vaddr, size);
  if (s == nullptr) return false;
  auto* dst = static_cast<uint8_t*>(out);
  const uint64_t off = vaddr - s->vaddr;
  for (uint64_t i = 0; i < size; ++i) {
    dst[i] = off + i < s->data.size() ? s->data[off + i] : 0;
  }
  return true;
}

std::optional<uint32_t> ElfImage::ReadWord32(uint64_t vaddr) const {
  uint8_t b[4];
  if (!Read(vaddr, b, 4)) return std::nullopt;
  if (big_endian) {
    return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
  }
  return (uint32_t{b[3]} << 24) | (uint32_t{b[2]} << 16) | (uint32_t{b[1]} << 8) | b[0];
}

const ElfSymbol* ElfImage::FindSymbol(std::string_view name) const {
  for (const ElfSymbol& s : symbols) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::string ElfImage::Describe() const {
  const char* name = "unknown machine";
  switch (machine) {
    case kElfMachine386:
      name = "i386";
      break;
    case kElfMachineMips:
      name = "MIPS";
      break;
    case kElfMachineX86_64:
      name = "x86-64";
      break;
  }
  return absl::StrCat(name, " (e_machine ", machine, "), ", is64 ? "ELF64" : "ELF32", " ",
                      big_endian ? "big-endian" : "little-endian");
}

bool IsElf(std::span<const uint8_t> file) {
  return file.size() >= 4 && file[0] == 0x7F && file[1] == 'E' && file[2] == 'L' && file[3] == 'F';
}

absl::StatusOr<ElfImage> ParseElf(std::span<const uint8_t> file) {
  if (file.size() < 52 || std::memcmp(file.data(),
                                      "\x7F"
                                      "ELF",
                                      4) != 0) {
    return Bad("not an ELF file");
  }
  const uint8_t cls = file[4], data = file[5];
  if (cls != 1 && cls != 2) return Bad("unknown ELF class");
  if (data != 1 && data != 2) return Bad("unknown byte order");
  ElfImage img;
  img.is64 = cls == 2;
  img.big_endian = data == 2;
  const Reader r(file, img.big_endian);
  const int w = img.is64 ? 8 : 4;  // address/offset width
  const uint64_t ehsize = img.is64 ? 64 : 52;
  if (!r.Has(0, ehsize)) return Bad("truncated header");
  const uint16_t type = static_cast<uint16_t>(r.Get(16, 2));
  img.machine = static_cast<uint16_t>(r.Get(18, 2));
  if (type != kEtExec) return Bad("not a static executable (e_type != ET_EXEC)");
  img.entry = r.Get(24, w);
  const uint64_t phoff = r.Get(24 + w, w);
  const uint64_t shoff = r.Get(24 + 2 * w, w);
  const uint64_t base = 24 + 3 * w;
  img.e_flags = static_cast<uint32_t>(r.Get(base, 4));
  const uint64_t phentsize = r.Get(base + 6, 2), phnum = r.Get(base + 8, 2);
  const uint64_t shentsize = r.Get(base + 10, 2), shnum = r.Get(base + 12, 2);
  const uint64_t want_ph = img.is64 ? 56 : 32, want_sh = img.is64 ? 64 : 40;
  if (phnum == 0) return Bad("no program headers");
  if (phentsize != want_ph || !r.Has(phoff, phnum * phentsize)) return Bad("bad program headers");

  for (uint64_t i = 0; i < phnum; ++i) {
    const uint64_t p = phoff + i * phentsize;
    const uint32_t ptype = static_cast<uint32_t>(r.Get(p, 4));
    if (ptype == kPtDynamic || ptype == kPtInterp) return Bad("dynamically linked");
    if (ptype != kPtLoad) continue;
    uint64_t offset, vaddr, paddr, filesz, memsz, flags;
    if (img.is64) {
      flags = r.Get(p + 4, 4);
      offset = r.Get(p + 8, 8);
      vaddr = r.Get(p + 16, 8);
      paddr = r.Get(p + 24, 8);
      filesz = r.Get(p + 32, 8);
      memsz = r.Get(p + 40, 8);
    } else {
      offset = r.Get(p + 4, 4);
      vaddr = r.Get(p + 8, 4);
      paddr = r.Get(p + 12, 4);
      filesz = r.Get(p + 16, 4);
      memsz = r.Get(p + 20, 4);
      flags = r.Get(p + 24, 4);
    }
    if (filesz > memsz) return Bad("segment file size exceeds memory size");
    if (!r.Has(offset, filesz)) return Bad("segment outside the file");
    const uint64_t space_end = img.is64 ? 0 : uint64_t{1} << 32;  // 0: the whole 64-bit space
    if (vaddr + memsz < vaddr || (space_end != 0 && vaddr + memsz > space_end)) {
      return Bad("segment wraps the address space");
    }
    if (memsz > (uint64_t{1} << 32)) return Bad("segment too large");
    ElfSegment seg;
    seg.vaddr = vaddr;
    seg.paddr = paddr;
    seg.memsz = memsz;
    seg.flags = static_cast<uint32_t>(flags);
    const auto bytes = r.Bytes(offset, filesz);
    seg.data.assign(bytes.begin(), bytes.end());
    img.segments.push_back(std::move(seg));
  }
  if (img.segments.empty()) return Bad("no loadable segments");

  // Symbols (optional): .symtab and its linked string table.
  if (shnum != 0 && shoff != 0) {
    if (shentsize != want_sh || !r.Has(shoff, shnum * shentsize)) return Bad("bad section headers");
    auto section = [&](uint64_t i, uint64_t* type_out, uint64_t* off, uint64_t* size,
                       uint64_t* link, uint64_t* entsize) {
      const uint64_t s = shoff + i * shentsize;
      *type_out = r.Get(s + 4, 4);
      if (img.is64) {
        *off = r.Get(s + 24, 8);
        *size = r.Get(s + 32, 8);
        *link = r.Get(s + 40, 4);
        *entsize = r.Get(s + 56, 8);
      } else {
        *off = r.Get(s + 16, 4);
        *size = r.Get(s + 20, 4);
        *link = r.Get(s + 24, 4);
        *entsize = r.Get(s + 36, 4);
      }
    };
    for (uint64_t i = 0; i < shnum; ++i) {
      uint64_t stype, off, size, link, entsize;
      section(i, &stype, &off, &size, &link, &entsize);
      if (stype != kShtSymtab) continue;
      const uint64_t want_ent = img.is64 ? 24 : 16;
      if (entsize != want_ent || !r.Has(off, size) || link >= shnum) return Bad("bad .symtab");
      uint64_t strtype, stroff, strsize, l2, e2;
      section(link, &strtype, &stroff, &strsize, &l2, &e2);
      if (!r.Has(stroff, strsize)) return Bad("bad symbol string table");
      for (uint64_t e = off; e + want_ent <= off + size; e += want_ent) {
        ElfSymbol sym;
        const uint64_t name = r.Get(e, 4);
        uint8_t info;
        if (img.is64) {
          info = static_cast<uint8_t>(r.Get(e + 4, 1));
          sym.value = r.Get(e + 8, 8);
          sym.size = r.Get(e + 16, 8);
        } else {
          sym.value = r.Get(e + 4, 4);
          sym.size = r.Get(e + 8, 4);
          info = static_cast<uint8_t>(r.Get(e + 12, 1));
        }
        sym.type = info & 0xF;
        if (name >= strsize) return Bad("symbol name outside the string table");
        const auto names = r.Bytes(stroff + name, strsize - name);
        const void* nul = std::memchr(names.data(), 0, names.size());
        if (nul == nullptr) return Bad("unterminated symbol name");
        sym.name.assign(reinterpret_cast<const char*>(names.data()),
                        static_cast<const uint8_t*>(nul) - names.data());
        if (!sym.name.empty()) img.symbols.push_back(std::move(sym));
      }
      break;
    }
  }
  return img;
}

absl::StatusOr<ElfImage> LoadElfFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  auto img = ParseElf(bytes);
  if (!img.ok()) {
    return absl::Status(img.status().code(), absl::StrCat(path, ": ", img.status().message()));
  }
  return img;
}

}  // namespace citcat::machine
