// Programs as their authors wrote them (tests/guest/programs/: stdio with %f, malloc/free,
// qsort, strtol, <math.h>, assert), built with the R4400 SDK on newlib: on the traced machine
// they print what a host build of the same source prints, and their captures replay with zero
// divergence. Also what the SDK runtime maps onto the kernel: files on the disk image through
// stdio, exit codes, abort().
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "cat_parser/reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "guest/r4400/guest_paths.h"
#include "guest/r4400/tools/disk_image.h"
#include "systems/system.h"

namespace citcat {
namespace {

using ::testing::HasSubstr;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// What the program printed: the console without the kernel's own lines.
std::string ProgramOutput(const std::string& console) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(console, '\n', absl::SkipEmpty())) {
    if (!absl::StartsWith(line, "kernel: ")) absl::StrAppend(&out, line, "\n");
  }
  return out;
}

struct Captured {
  systems::CaptureReport report;
  std::string cat;
};

Captured Capture(const std::vector<std::string>& program, const std::string& name) {
  absl::StatusOr<const systems::System*> r4400 = systems::ByName("r4400");
  EXPECT_TRUE(r4400.ok());
  systems::CaptureRequest request;
  request.program = program;
  Captured run;
  run.cat = absl::StrCat(::testing::TempDir(), "/sdk-", name, "-", getpid(), ".cat");
  absl::StatusOr<systems::CaptureReport> report = (*r4400)->capture(request, run.cat);
  EXPECT_TRUE(report.ok()) << report.status();
  if (report.ok()) run.report = *report;
  return run;
}

// Extracts the capture and replays it against itself: every record must come back.
void ExpectExactReplay(const std::string& cat_path) {
  absl::StatusOr<std::unique_ptr<cat::CatReader>> reader = cat::CatReader::Open(cat_path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  absl::StatusOr<extract::Extraction> x = systems::Extract(**reader);
  ASSERT_TRUE(x.ok()) << x.status();
  replay::ReplaySummary summary;
  absl::StatusOr<replay::VerifyResult> v =
      systems::ReplayAgainst(cat_path, x->ims, x->aes, {}, &summary);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(v->identical) << v->report;
  EXPECT_GT(v->compared, 100u);
  EXPECT_GT(summary.instructions, 10'000u);
}

class SdkProgram : public ::testing::TestWithParam<std::string> {};

TEST_P(SdkProgram, PrintsWhatTheHostBuildPrintsAndReplaysExactly) {
  const std::string& name = GetParam();
  const std::string dir = CITCAT_TEST_PROGRAMS_DIR;
  // The host build of the same source.
  std::string host_out;
  FILE* pipe = popen((dir + "/" + name + ".host").c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) host_out.append(buf, n);
  const int status = pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << name << ": host build failed";
  ASSERT_GT(host_out.size(), 40u);

  Captured run = Capture({dir + "/" + name + ".elf"}, name);
  EXPECT_TRUE(run.report.halted);
  EXPECT_FALSE(run.report.cut_short);
  EXPECT_THAT(run.report.console, HasSubstr("exit 0,"));
  EXPECT_EQ(ProgramOutput(run.report.console), host_out);
  ExpectExactReplay(run.cat);
}

INSTANTIATE_TEST_SUITE_P(Programs, SdkProgram,
                         ::testing::Values("nbody", "wordsort", "lz", "mathtab", "bits"),
                         [](const auto& info) { return info.param; });

std::string WriteSource(const std::string& name, const std::string& text) {
  const std::string path = absl::StrCat(::testing::TempDir(), "/", getpid(), "-", name);
  std::ofstream(path) << text;
  return path;
}

// stdio reads a file of the disk image (fopen, fseek, ftell, fread, fgetc) as the host reads it.
TEST(SdkRuntime, ReadsFilesOfTheDiskImageThroughStdio) {
  const std::string source = WriteSource("files.c", R"(
#include <errno.h>
#include <stdio.h>
int main(void) {
  FILE *f = fopen("iodata", "rb");
  if (!f) return 1;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  rewind(f);
  unsigned long long h = 0xcbf29ce484222325ull;
  static unsigned char buf[3000];
  size_t n, total = 0;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
    for (size_t i = 0; i < n; ++i) h = (h ^ buf[i]) * 0x100000001b3ull;
    total += n;
  }
  fseek(f, 1000, SEEK_SET);
  int c = fgetc(f);
  fclose(f);
  FILE *missing = fopen("no-such-file", "r");
  int err = errno;
  FILE *w = fopen("iodata", "w");
  printf("size %ld read %zu fnv %016llx byte1000 %d missing %d/%d write %d\n", size, total, h, c,
         missing == NULL, err == ENOENT, w == NULL);
  return 0;
}
)");
  // The same from the disk image on the host.
  const std::string disk = ReadFile(CITCAT_R4400_DISK_IMAGE);
  absl::StatusOr<std::vector<guest::DiskFile>> files =
      guest::ReadDiskImage({reinterpret_cast<const uint8_t*>(disk.data()), disk.size()});
  ASSERT_TRUE(files.ok()) << files.status();
  const guest::DiskFile* iodata = nullptr;
  for (const guest::DiskFile& f : *files) {
    if (f.name == "iodata") iodata = &f;
  }
  ASSERT_NE(iodata, nullptr);
  ASSERT_GT(iodata->bytes.size(), 3000u);
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t b : iodata->bytes) h = (h ^ b) * 0x100000001b3ull;
  const std::string expected =
      absl::StrFormat("size %d read %d fnv %016x byte1000 %d missing 1/1 write 1\n",
                      iodata->bytes.size(), iodata->bytes.size(), h, iodata->bytes[1000]);

  Captured run = Capture({source}, "files");
  EXPECT_EQ(ProgramOutput(run.report.console), expected);
  EXPECT_GT(run.report.dma_transfers, 0u);
  ExpectExactReplay(run.cat);
}

// A failed assert prints its message and ends the task as abort() does (128 + SIGABRT); exit()
// flushes stdio and hands the kernel its code.
TEST(SdkRuntime, ExitCodesAndAFailedAssert) {
  const std::string source = WriteSource("assert.c", R"(
#include <assert.h>
#include <stdio.h>
int main(int argc, char **argv) {
  printf("argc %d argv0 %s\n", argc, argv[0]);
  printf("no newline before the assert");
  assert(argc == 2);
  return 0;
}
)");
  Captured run = Capture({source}, "assert");
  EXPECT_THAT(run.report.console, HasSubstr("argc 1 argv0 program\n"));
  EXPECT_THAT(run.report.console, HasSubstr("assertion \"argc == 2\" failed"));
  EXPECT_THAT(run.report.console, HasSubstr("exit 134,"));
  EXPECT_TRUE(run.report.halted);

  const std::string exits = WriteSource("exit.c", R"(
#include <stdio.h>
#include <stdlib.h>
static void bye(void) { printf("atexit ran\n"); }
int main(void) { atexit(bye); printf("buffered"); exit(7); }
)");
  Captured exited = Capture({exits}, "exit");
  EXPECT_THAT(exited.report.console, HasSubstr("bufferedatexit ran\n"));
  EXPECT_THAT(exited.report.console, HasSubstr("exit 7,"));
}

// malloc's heap is the SDK's 1 MiB: a program can use most of it, and malloc fails cleanly after.
TEST(SdkRuntime, MallocUsesTheHeapAndFailsCleanlyWhenItIsGone) {
  const std::string source = WriteSource("heap.c", R"(
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) {
  size_t total = 0;
  void *blocks[64];
  int n = 0;
  for (; n < 64; ++n) {
    blocks[n] = malloc(64 * 1024);
    if (!blocks[n]) break;
    memset(blocks[n], n, 64 * 1024);
    total += 64 * 1024;
  }
  printf("got %d blocks, %zu KiB\n", n, total / 1024);
  for (int i = 0; i < n; ++i) free(blocks[i]);
  void *again = malloc(512 * 1024);
  printf("after free: %s\n", again ? "ok" : "failed");
  return 0;
}
)");
  Captured run = Capture({source}, "heap");
  EXPECT_THAT(run.report.console, HasSubstr("got 15 blocks, 960 KiB\n"));
  EXPECT_THAT(run.report.console, HasSubstr("after free: ok\n"));
}

}  // namespace
}  // namespace citcat
