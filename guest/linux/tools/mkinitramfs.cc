// mkinitramfs LIST OUT.cpio [--mtime SECONDS]
// Writes a "newc" cpio archive (the Linux initramfs format, Documentation/driver-api/
// early-userspace/buffer-format.rst) from a list in the format of the kernel's usr/gen_init_cpio:
//   dir NAME MODE UID GID
//   file NAME LOCATION MODE UID GID
//   nod NAME MODE UID GID c|b MAJOR MINOR
//   slink NAME TARGET MODE UID GID
// one entry a line, '#' comments; MODE is octal. Entries are written in the list's order, inode
// numbers count from 721 as gen_init_cpio's do, every mtime is SECONDS (default 0): the same list
// and files give the same bytes, and device nodes need no root. OUT appears only complete.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace {

constexpr uint32_t kDir = 0040000, kFile = 0100000, kLink = 0120000, kChar = 0020000,
                   kBlock = 0060000;

struct Archive {
  std::string bytes;
  uint32_t ino = 721;
  uint32_t mtime = 0;

  void Pad() {
    while (bytes.size() % 4) bytes.push_back('\0');
  }
  void Entry(std::string_view path, uint32_t mode, uint32_t uid, uint32_t gid, uint32_t nlink,
             const std::string& data, uint32_t rmajor, uint32_t rminor) {
    while (!path.empty() && path.front() == '/') path.remove_prefix(1);
    const std::string name = path.empty() ? std::string(".") : std::string(path);
    absl::StrAppendFormat(&bytes, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
                          name == "TRAILER!!!" ? 0 : ino++, mode, uid, gid, nlink, mtime,
                          static_cast<uint32_t>(data.size()), 0, 0, rmajor, rminor,
                          static_cast<uint32_t>(name.size() + 1), 0);
    bytes += name;
    bytes.push_back('\0');
    Pad();
    bytes += data;
    Pad();
  }
};

bool Octal(const std::string& s, uint32_t* out) {
  if (s.empty()) return false;
  uint32_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '7') return false;
    v = v * 8 + static_cast<uint32_t>(c - '0');
  }
  *out = v & 07777;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && !(argc == 5 && std::string(argv[3]) == "--mtime")) {
    std::fprintf(stderr, "usage: mkinitramfs LIST OUT.cpio [--mtime SECONDS]\n");
    return 2;
  }
  Archive archive;
  if (argc == 5 && !absl::SimpleAtoi(argv[4], &archive.mtime)) {
    std::fprintf(stderr, "mkinitramfs: bad --mtime '%s'\n", argv[4]);
    return 2;
  }
  std::ifstream list(argv[1]);
  if (!list) {
    std::fprintf(stderr, "mkinitramfs: cannot read %s\n", argv[1]);
    return 1;
  }
  std::string line;
  int number = 0;
  while (std::getline(list, line)) {
    ++number;
    std::vector<std::string> w =
        absl::StrSplit(absl::StripAsciiWhitespace(line), absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (w.empty() || w[0][0] == '#') continue;
    auto fail = [&](const std::string& why) {
      std::fprintf(stderr, "mkinitramfs: %s:%d: %s\n", argv[1], number, why.c_str());
      return 1;
    };
    uint32_t mode = 0, uid = 0, gid = 0;
    auto common = [&](size_t at) {
      return w.size() > at + 2 && Octal(w[at], &mode) && absl::SimpleAtoi(w[at + 1], &uid) &&
             absl::SimpleAtoi(w[at + 2], &gid);
    };
    if (w[0] == "dir" && w.size() == 5 && common(2)) {
      archive.Entry(w[1], kDir | mode, uid, gid, 2, "", 0, 0);
    } else if (w[0] == "file" && w.size() == 6 && common(3)) {
      std::ifstream in(w[2], std::ios::binary);
      if (!in) return fail("cannot read " + w[2]);
      const std::string data{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
      archive.Entry(w[1], kFile | mode, uid, gid, 1, data, 0, 0);
    } else if (w[0] == "slink" && w.size() == 6 && common(3)) {
      archive.Entry(w[1], kLink | mode, uid, gid, 1, w[2], 0, 0);
    } else if (w[0] == "nod" && w.size() == 8 && common(2) && (w[5] == "c" || w[5] == "b")) {
      uint32_t major = 0, minor = 0;
      if (!absl::SimpleAtoi(w[6], &major) || !absl::SimpleAtoi(w[7], &minor)) {
        return fail("bad device number");
      }
      archive.Entry(w[1], (w[5] == "c" ? kChar : kBlock) | mode, uid, gid, 1, "", major, minor);
    } else {
      return fail("not a dir, file, nod or slink line: " + line);
    }
  }
  archive.Entry("TRAILER!!!", 0, 0, 0, 1, "", 0, 0);
  const std::string out = argv[2], partial = absl::StrCat(out, ".partial");
  {
    std::ofstream o(partial, std::ios::binary | std::ios::trunc);
    o.write(archive.bytes.data(), static_cast<std::streamsize>(archive.bytes.size()));
    if (!o.flush()) {
      std::fprintf(stderr, "mkinitramfs: cannot write %s\n", partial.c_str());
      return 1;
    }
  }
  if (std::rename(partial.c_str(), out.c_str()) != 0) {
    std::fprintf(stderr, "mkinitramfs: cannot rename %s\n", partial.c_str());
    return 1;
  }
  return 0;
}
