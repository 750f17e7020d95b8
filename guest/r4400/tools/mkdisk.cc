// Packs the guest disk image: mkdisk OUT NAME=FILE... (the generated `iodata` is always added).
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "guest/r4400/tools/disk_image.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT.img NAME=FILE...\n", argv[0]);
    return 2;
  }
  std::vector<citcat::guest::DiskFile> files;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    size_t eq = arg.find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "mkdisk: '%s' is not NAME=FILE\n", argv[i]);
      return 2;
    }
    std::ifstream in(arg.substr(eq + 1), std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "mkdisk: cannot read %s\n", arg.substr(eq + 1).c_str());
      return 1;
    }
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    files.push_back({arg.substr(0, eq), std::move(bytes)});
  }
  files.push_back({"iodata", citcat::guest::IoData()});
  auto image = citcat::guest::BuildDiskImage(files);
  if (!image.ok()) {
    std::fprintf(stderr, "mkdisk: %s\n", std::string(image.status().message()).c_str());
    return 1;
  }
  std::string tmp = std::string(argv[1]) + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(image->data()), static_cast<std::streamsize>(image->size()));
    if (!out) {
      std::fprintf(stderr, "mkdisk: cannot write %s\n", tmp.c_str());
      std::remove(tmp.c_str());
      return 1;
    }
  }
  if (std::rename(tmp.c_str(), argv[1]) != 0) {
    std::perror("mkdisk: rename");
    std::remove(tmp.c_str());
    return 1;
  }
  return 0;
}
