// The guest disk image format and the kernel ELF reader.
#include "guest/r4400/tools/disk_image.h"

#include <fstream>
#include <iterator>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "guest/r4400/guest_paths.h"
#include "machine/elf_loader.h"
#include "machine/r4400/machine.h"

namespace citcat::guest {
namespace {

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

TEST(DiskImage, RoundTrip) {
  std::vector<DiskFile> files = {
      {"a", {1, 2, 3}}, {"empty", {}}, {"big", std::vector<uint8_t>(1500, 7)}};
  auto image = BuildDiskImage(files);
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_EQ(image->size() % kDiskBlockBytes, 0u);
  // directory: 1 block; a: 1 block; empty: none; big: 3 blocks
  EXPECT_EQ(image->size(), 5u * kDiskBlockBytes);
  EXPECT_EQ((*image)[0], 'C');
  auto back = ReadDiskImage(*image);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ((*back)[i].name, files[i].name);
    EXPECT_EQ((*back)[i].bytes, files[i].bytes);
  }
}

TEST(DiskImage, RejectsBadNamesAndImages) {
  EXPECT_FALSE(BuildDiskImage(std::vector<DiskFile>{{"", {}}}).ok());
  EXPECT_FALSE(BuildDiskImage(std::vector<DiskFile>{{"a,b", {}}}).ok());
  EXPECT_FALSE(BuildDiskImage(std::vector<DiskFile>{{std::string(24, 'x'), {}}}).ok());
  EXPECT_FALSE(BuildDiskImage(std::vector<DiskFile>{{"x", {}}, {"x", {}}}).ok());
  EXPECT_FALSE(ReadDiskImage(std::vector<uint8_t>(512, 0)).ok());
  EXPECT_FALSE(ReadDiskImage(std::vector<uint8_t>(100, 0)).ok());
  auto image = BuildDiskImage(std::vector<DiskFile>{{"f", std::vector<uint8_t>(600, 1)}});
  ASSERT_TRUE(image.ok());
  image->resize(1024);  // the file's second block is missing
  EXPECT_FALSE(ReadDiskImage(*image).ok());
}

TEST(DiskImage, BuiltImageHoldsEveryWorkloadAndIoData) {
  auto files = ReadDiskImage(ReadFile(CITCAT_R4400_DISK_IMAGE));
  ASSERT_TRUE(files.ok()) << files.status();
  std::vector<std::string> names;
  for (const DiskFile& f : *files) names.push_back(f.name);
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("sort", "hash", "compress", "int64", "fp",
                                                     "memcpy", "chase", "io", "iodata", "crash"));
  for (const DiskFile& f : *files) {
    if (f.name == "iodata") {
      EXPECT_EQ(f.bytes, IoData());
    }
  }
  AddOrReplace(*files, {"elf", {1}});
  AddOrReplace(*files, {"elf", {2}});
  EXPECT_EQ(files->size(), 11u);
  EXPECT_EQ(files->back().bytes, std::vector<uint8_t>{2});
}

TEST(KernelImage, LoadsIntoTheMachineAtItsPhysicalAddress) {
  auto elf = machine::LoadElfFile(CITCAT_R4400_KERNEL_ELF);
  ASSERT_TRUE(elf.ok()) << elf.status();
  EXPECT_EQ(elf->entry, 0x80010000u);
  auto m = machine::R4400Machine::Create({});
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE((*m)->LoadKernel(*elf).ok());
  EXPECT_EQ((*m)->cpu().pc(), 0xFFFFFFFF80010000ull);  // sign-extended kseg0
  uint8_t expected[4];
  ASSERT_TRUE(elf->Read(elf->segments[0].vaddr, expected, 4));
  uint8_t loaded[4];
  ASSERT_TRUE((*m)->cpu().bus().Peek(elf->segments[0].vaddr & 0x1FFFFFFF, loaded));
  EXPECT_EQ(std::vector<uint8_t>(loaded, loaded + 4), std::vector<uint8_t>(expected, expected + 4));

  machine::ElfImage user = *elf;
  user.segments[0].vaddr = 0x00400000;  // kuseg: not where a kernel runs
  EXPECT_FALSE((*m)->LoadKernel(user).ok());
}

}  // namespace
}  // namespace citcat::guest
