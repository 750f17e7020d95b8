// Programs as their authors wrote them (tests/guest/programs/), built with the i486 SDK on newlib,
// run on the traced PC: they print what a host build of the same source prints. Also what the
// shared SDK runtime maps onto the i486 kernel: files of the disk image through stdio, exit
// codes, a failed assert, the heap in demand-zero pages; and the SDK's build command of
// guest_paths.h, as a capture would run it on a user's C file.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "guest/i486/guest_paths.h"
#include "guest/i486/tools/boot.h"
#include "guest/r4400/tools/disk_image.h"
#include "machine/elf_loader.h"
#include "machine/i486/machine.h"

namespace citcat::guest::i486 {
namespace {

using ::testing::HasSubstr;

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

// What the program printed: the console without the kernel's own lines.
std::string ProgramOutput(const std::string& console) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(console, '\n', absl::SkipEmpty())) {
    if (!absl::StartsWith(line, "kernel: ")) absl::StrAppend(&out, line, "\n");
  }
  return out;
}

struct ProgramRun {
  std::string console;
  machine::I486RunSummary summary;
};

// Boots the kernel with `elf` on the disk as "elf" and runs it to the power-off.
ProgramRun RunProgram(const std::string& elf) {
  ProgramRun run;
  std::vector<uint8_t> image = ReadFile(CITCAT_I486_DISK_IMAGE);
  absl::StatusOr<std::vector<DiskFile>> files = ReadDiskImage(image);
  EXPECT_TRUE(files.ok()) << files.status();
  if (!files.ok()) return run;
  AddOrReplace(*files, {"elf", ReadFile(elf)});
  absl::StatusOr<std::vector<uint8_t>> disk = BuildDiskImage(*files);
  EXPECT_TRUE(disk.ok()) << disk.status();
  machine::I486Options o;
  o.pc.rom = ReadFile(CITCAT_I486_BOOT_ROM);
  o.pc.disk = *disk;
  o.pc.reserved = ReservedWindows();
  auto m = machine::I486Machine::Create(o);
  EXPECT_TRUE(m.ok()) << m.status();
  auto kernel = machine::LoadElfFile(CITCAT_I486_KERNEL_ELF);
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_TRUE(LoadKernel(**m, *kernel, "elf").ok());
  auto summary = (*m)->Run(nullptr, 2'000'000'000);
  EXPECT_TRUE(summary.ok()) << summary.status();
  if (summary.ok()) run.summary = *summary;
  run.console = (*m)->console();
  EXPECT_TRUE(run.summary.powered_off) << run.console;
  return run;
}

std::string HostOutput(const std::string& program) {
  std::string out;
  FILE* pipe = popen(program.c_str(), "r");
  EXPECT_NE(pipe, nullptr);
  if (!pipe) return out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  const int status = pclose(pipe);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << program << ": host build failed";
  return out;
}

// The output without the lines that start with `prefix`.
std::string Without(const std::string& out, const std::string& prefix) {
  std::string kept;
  for (absl::string_view line : absl::StrSplit(out, '\n', absl::SkipEmpty())) {
    if (!absl::StartsWith(line, prefix)) absl::StrAppend(&kept, line, "\n");
  }
  return kept;
}

class SdkProgram : public ::testing::TestWithParam<std::string> {};

TEST_P(SdkProgram, PrintsWhatTheHostBuildPrints) {
  const std::string& name = GetParam();
  std::string host = HostOutput(absl::StrCat(CITCAT_TEST_PROGRAMS_DIR, "/", name, ".host"));
  ASSERT_GT(host.size(), 40u);
  ProgramRun run = RunProgram(absl::StrCat(CITCAT_I486_TEST_PROGRAMS_DIR, "/", name, ".elf"));
  EXPECT_THAT(run.console, HasSubstr("exit 0,"));
  std::string guest = ProgramOutput(run.console);
  if (name == "bits") {
    // Sums of floats: the x87 keeps float expressions in double precision between assignments
    // (C's FLT_EVAL_METHOD is not 0 on i386), where the host's SSE rounds every operation to
    // float. Every other line, doubles included, is the host's.
    EXPECT_THAT(guest, HasSubstr("conversions: "));
    guest = Without(guest, "conversions: ");
    host = Without(host, "conversions: ");
  }
  EXPECT_EQ(guest, host);
}

INSTANTIATE_TEST_SUITE_P(Programs, SdkProgram,
                         ::testing::Values("nbody", "wordsort", "lz", "mathtab", "bits"),
                         [](const auto& info) { return info.param; });

// Builds a C source as `citcat capture --elf prog.c` would: the SDK command of guest_paths.h.
std::string Build(const std::string& name, const std::string& text) {
  const std::string base = absl::StrCat(::testing::TempDir(), "/i486-", getpid(), "-", name);
  std::ofstream(base + ".c") << text;
  const std::string sdk = CITCAT_I486_SDK_ROOT;
  const std::string command = absl::StrCat(
      CITCAT_I486_GCC, " ", absl::StrReplaceAll(CITCAT_I486_SDK_BUILD, {{"%SDK%", sdk}}), " ", base,
      ".c ", absl::StrReplaceAll(CITCAT_I486_SDK_LIBS, {{"%SDK%", sdk}}), " -o ", base, ".elf");
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return base + ".elf";
}

// stdio reads a file of the disk image (fopen, fseek, ftell, fread, fgetc) as the host reads it.
TEST(SdkRuntime, ReadsFilesOfTheDiskImageThroughStdio) {
  const std::string elf = Build("files", R"(
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
  const std::vector<uint8_t> iodata = IoData();
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t b : iodata) h = (h ^ b) * 0x100000001b3ull;
  ProgramRun run = RunProgram(elf);
  EXPECT_EQ(ProgramOutput(run.console),
            absl::StrFormat("size %d read %d fnv %016x byte1000 %d missing 1/1 write 1\n",
                            iodata.size(), iodata.size(), h, iodata[1000]));
  EXPECT_GT(run.summary.dma_transfers, 3u);  // the directory, the program, then the file
}

// A failed assert prints its message and ends the task as abort() does (128 + SIGABRT); exit()
// flushes stdio, runs atexit and hands the kernel its code.
TEST(SdkRuntime, ExitCodesAndAFailedAssert) {
  ProgramRun aborted = RunProgram(Build("assert", R"(
#include <assert.h>
#include <stdio.h>
int main(int argc, char **argv) {
  printf("argc %d argv0 %s\n", argc, argv[0]);
  assert(argc == 2);
  return 0;
}
)"));
  EXPECT_THAT(aborted.console, HasSubstr("argc 1 argv0 program\n"));
  EXPECT_THAT(aborted.console, HasSubstr("assertion \"argc == 2\" failed"));
  EXPECT_THAT(aborted.console, HasSubstr("exit 134,"));

  ProgramRun exited = RunProgram(Build("exit", R"(
#include <stdio.h>
#include <stdlib.h>
static void bye(void) { printf("atexit ran\n"); }
int main(void) { atexit(bye); printf("buffered"); exit(7); }
)"));
  EXPECT_THAT(exited.console, HasSubstr("bufferedatexit ran\n"));
  EXPECT_THAT(exited.console, HasSubstr("exit 7,"));
}

// malloc's heap is the SDK's 1 MiB of bss, made page by page on first touch: a program can use
// most of it, and malloc fails cleanly after.
TEST(SdkRuntime, MallocUsesTheHeapAndFailsCleanlyWhenItIsGone) {
  ProgramRun run = RunProgram(Build("heap", R"(
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
)"));
  EXPECT_THAT(run.console, HasSubstr("got 15 blocks, 960 KiB\n"));
  EXPECT_THAT(run.console, HasSubstr("after free: ok\n"));
}

// <fenv.h> on the x87 alone (newlib's own asks CPUID, which an i486 lacks).
TEST(SdkRuntime, FenvRunsOnTheX87) {
  ProgramRun run = RunProgram(Build("fenv", R"(
#include <fenv.h>
#include <stdio.h>
int main(void) {
  volatile double one = 1.0, three = 3.0, zero = 0.0;
  fesetround(FE_UPWARD);
  volatile double up = one / three;
  fesetround(FE_DOWNWARD);
  volatile double down = one / three;
  fesetround(FE_TONEAREST);
  feclearexcept(FE_ALL_EXCEPT);
  volatile double inf = one / zero;
  printf("round %d up>down %d divbyzero %d inexact %d inf %g\n", fegetround(), up > down,
         fetestexcept(FE_DIVBYZERO) != 0, fetestexcept(FE_INEXACT) != 0, inf);
  fenv_t env;
  feholdexcept(&env);
  feraiseexcept(FE_OVERFLOW);
  int held = fetestexcept(FE_OVERFLOW) != 0;
  feupdateenv(&env);
  printf("held %d after update %d\n", held, fetestexcept(FE_OVERFLOW) != 0);
  fesetround(FE_TOWARDZERO);
  fesetenv(FE_DFL_ENV);
  printf("default round %d flags %d traps %d\n", fegetround(), fetestexcept(FE_ALL_EXCEPT),
         fegetexcept());
  return 0;
}
)"));
  EXPECT_EQ(ProgramOutput(run.console),
            "round 0 up>down 1 divbyzero 1 inexact 0 inf inf\n"
            "held 1 after update 1\n"
            "default round 0 flags 0 traps 0\n");
}

// An unmasked x87 exception is delivered as #MF (CR0.NE) and ends the task; a deep recursion
// grows the stack page by page.
TEST(SdkRuntime, AnUnmaskedFpuExceptionEndsTheTaskAndTheStackGrows) {
  ProgramRun run = RunProgram(Build("mf", R"(
#include <stdio.h>
static int depth(int n) {
  volatile char pad[3000];
  pad[n % 3000] = 1;
  return n ? depth(n - 1) + pad[n % 3000] : 0;
}
int main(void) {
  printf("depth %d\n", depth(1000));
  unsigned short cw = 0x027E; /* precision 53 bits, invalid operation unmasked */
  __asm__ volatile("fldcw %0" : : "m"(cw));
  volatile double zero = 0.0;
  volatile double nan = zero / zero;
  printf("still running %f\n", nan);
  return 0;
}
)"));
  EXPECT_THAT(run.console, HasSubstr("depth 1000\n"));
  EXPECT_THAT(run.console, HasSubstr("killed: floating-point error"));
  EXPECT_THAT(run.console, ::testing::Not(HasSubstr("still running")));
  EXPECT_THAT(run.console, HasSubstr("exit 144,"));
}

}  // namespace
}  // namespace citcat::guest::i486
