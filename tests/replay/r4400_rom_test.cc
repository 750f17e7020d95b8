// Bare-metal R4400 programs traced from reset, as a user runs them (examples/README.md):
// `citcat capture --rom` of the examples, extract, replay and verify with zero divergence, what
// `citcat dump` shows of the program's writes, the header's round trip, the programs and images
// a trace from reset refuses, and an IMS whose registers are not the reset state.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ims/ims.pb.h"
#include "tests/support/run_citcat.h"

namespace citcat {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::ReadFile;
using ::testing::StartsWith;

std::string Example(const std::string& name) {
  return absl::StrCat(CITCAT_R4400_EXAMPLES, "/", name);
}
// The test's own programs (rom_guest/).
std::string Program(const std::string& name) {
  return absl::StrCat(CITCAT_ROM_TEST_PROGRAMS, "/", name);
}

class RomCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(testing::FreshTestDir("rom-cli"));
    // The self-test from its raw image, extracted: most tests look at it.
    capture_ = new CommandResult(Run(absl::StrCat(
        "capture --machine r4400 --rom ", Example("selftest.bin"), " -o ", Path("selftest.cat"))));
    extract_ =
        new CommandResult(Run(absl::StrCat("extract ", Path("selftest.cat"), " -o ", Path("x"))));
  }
  void SetUp() override {
    ASSERT_EQ(capture_->exit_code, 0) << capture_->err;
    ASSERT_EQ(extract_->exit_code, 0) << extract_->err;
  }
  static CommandResult Run(const std::string& args) { return testing::RunCitcat(*dir_, args); }
  static std::string Path(const std::string& name) { return (*dir_ / name).string(); }
  static std::vector<std::string> DumpLines(const std::string& cat) {
    CommandResult r = Run(absl::StrCat("dump ", cat));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  }

  static inline fs::path* dir_ = nullptr;
  static inline CommandResult *capture_ = nullptr, *extract_ = nullptr;
};

TEST_F(RomCli, TheSelfTestPassesAndReplaysWithZeroDivergence) {
  EXPECT_THAT(capture_->out, HasSubstr("citcat bare-metal R4400 self-test\n"));
  EXPECT_THAT(capture_->out, HasSubstr("\nPASS\n"));
  EXPECT_THAT(capture_->out, HasSubstr("(traced from reset)"));
  EXPECT_THAT(capture_->out, HasSubstr("the program powered off"));

  CommandResult r =
      Run(absl::StrCat("replay --ims ", Path("x/ims.pb"), " --aes ", Path("x/aes.pb"), " -o ",
                       Path("trace.txt"), " --cat ", Path("regenerated.cat")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Run(absl::StrCat("verify ", Path("selftest.cat"), " ", Path("regenerated.cat")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("identical"));
  EXPECT_THAT(r.err, HasSubstr("from record 0 on"));
  r = Run(absl::StrCat("verify ", Path("selftest.cat")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("identical"));

  r = Run(absl::StrCat("stats ", Path("selftest.cat")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("the run ends with the guest halting"));
  EXPECT_THAT(r.out, HasSubstr("perturbation: none (traced from reset: no kernel, no hooks)"));

  // What the program went through, as the replayed trace shows it.
  const std::string trace = ReadFile(Path("trace.txt"));
  EXPECT_THAT(trace, StartsWith("           0 ffffffffbfc00000 "));  // the reset vector first
  for (const char* event :
       {"interrupt (code 0)", "TLB modified (code 1)", "TLB load (code 2)", "TLB store (code 3)",
        "address error load (code 4)", "address error store (code 5)", "syscall (code 8)",
        "breakpoint (code 9)"}) {
    EXPECT_THAT(trace, HasSubstr(event));
  }
  EXPECT_THAT(trace, HasSubstr(" 0000000000400000 "));  // user mode, mapped onto the ROM
  EXPECT_THAT(trace, HasSubstr(" ffffffff80000000 "));  // the refill vector once BEV is clear
  EXPECT_THAT(trace, HasSubstr(" ffffffffbfc00200 "));  // and while it is set
}

TEST_F(RomCli, DumpShowsEveryUncachedWriteOfTheProgram) {
  const std::vector<std::string> lines = DumpLines(Path("selftest.cat"));
  // The counts and the verdict the program stores uncached to physical 0x400.
  const uint32_t expected[] = {1, 1, 2, 1, 3, 3, 3, 0x3fe0, 0x600dc0de};
  for (int i = 0; i < 9; ++i) {
    const std::string want =
        absl::StrCat("uncached-write addr=0x", absl::Hex(0x400 + 4 * i), " bc=");
    const std::string data = absl::StrCat(" data=", absl::Hex(expected[i], absl::kZeroPad8));
    EXPECT_EQ(std::count_if(
                  lines.begin(), lines.end(),
                  [&](const std::string& l) { return l.starts_with(want) && l.ends_with(data); }),
              1)
        << want << "..." << data;
  }
  // Every character on the console is one store to the UART's transmit register.
  const std::string console = capture_->out.substr(0, capture_->out.find("\ncitcat capture:"));
  std::string from_dump;
  for (const std::string& l : lines) {
    if (l.starts_with("uncached-write addr=0x1f000000 ")) {
      from_dump += static_cast<char>(std::stoul(l.substr(l.size() - 2), nullptr, 16));
    }
  }
  EXPECT_EQ(from_dump, console);
  EXPECT_THAT(lines.back(), StartsWith("uncached-write addr=0x1f200008 "));  // power off
}

TEST_F(RomCli, TheHeaderSaysFromResetAndRoundTripsThroughText) {
  CommandResult r = Run(absl::StrCat("dump ", Path("selftest.cat"), " -o ", Path("dump.txt")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = ReadFile(Path("dump.txt"));
  EXPECT_THAT(text, HasSubstr("\nrom base=0x1fc00000 size=0x200000\nfrom-reset\n"));
  r = Run(absl::StrCat("assemble ", Path("dump.txt"), " -o ", Path("again.cat")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string bytes = ReadFile(Path("selftest.cat"));
  EXPECT_EQ(ReadFile(Path("again.cat")), bytes);
  ASSERT_GT(bytes.size(), 12u);
  EXPECT_EQ(bytes[10], 2);  // CAT 1.2
  EXPECT_EQ(bytes[11], 0);
}

TEST_F(RomCli, TheElfAndItsRawImageGiveTheSameTrace) {
  CommandResult r = Run(
      absl::StrCat("capture --rom ", Example("selftest.elf"), " -o ", Path("selftest-elf.cat")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> a = DumpLines(Path("selftest.cat"));
  std::vector<std::string> b = DumpLines(Path("selftest-elf.cat"));
  std::erase_if(a, [](const std::string& l) { return l.starts_with("producer "); });
  std::erase_if(b, [](const std::string& l) { return l.starts_with("producer "); });
  EXPECT_EQ(a, b);
}

TEST_F(RomCli, AnElfInRamIsEnteredByAJumpAtTheResetVector) {
  CommandResult r =
      Run(absl::StrCat("capture --rom ", Example("hello.elf"), " -o ", Path("hello.cat")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("hello from RAM\n"));
  const std::vector<std::string> lines = DumpLines(Path("hello.cat"));
  const auto records = std::find(lines.begin(), lines.end(), "records");
  ASSERT_GE(lines.end() - records, 5);
  // lui $k0, 0x8001; ori $k0, $k0, 0; jr $k0; nop: fetched uncached from the ROM.
  EXPECT_EQ(records[1], "uncached-read  addr=0x1fc00000 bc=0 flags=code data=3c1a8001");
  EXPECT_EQ(records[2], "uncached-read  addr=0x1fc00004 bc=0 flags=code data=375a0000");
  EXPECT_EQ(records[3], "uncached-read  addr=0x1fc00008 bc=0 flags=code data=03400008");
  EXPECT_EQ(records[4], "uncached-read  addr=0x1fc0000c bc=0 flags=code data=00000000");
  // The program's report of $k0: its entry point.
  EXPECT_THAT(lines, ::testing::Contains("uncached-write addr=0x400 bc=32 data=80010000"));
  r = Run(absl::StrCat("verify ", Path("hello.cat")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(RomCli, ARawImageGoesWhereRomAddressSays) {
  CommandResult r = Run(absl::StrCat("capture --rom ", Program("offset.bin"),
                                     " --rom-address 0xbfc00100 -o ", Path("offset.cat")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("hello from RAM\n"));
  const std::vector<std::string> lines = DumpLines(Path("offset.cat"));
  // The zero words before the image are NOPs the CPU runs through.
  EXPECT_THAT(lines, ::testing::Contains("uncached-read  addr=0x1fc000fc bc=0 flags=code "
                                         "data=00000000"));
  EXPECT_THAT(lines,
              ::testing::Contains("uncached-read  addr=0x1fc00100 bc=0 flags=code data=3c04bfc0"));
  r = Run(absl::StrCat("verify ", Path("offset.cat")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // The same place by its physical address.
  r = Run(absl::StrCat("capture --rom ", Program("offset.bin"), " --rom-address 0x1fc00100 -o ",
                       Path("offset2.cat")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

// One line on standard error, naming the file, and no output left behind.
void ExpectRefused(const CommandResult& r, const std::string& output, const std::string& what) {
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("citcat capture: "));
  EXPECT_THAT(r.err, HasSubstr(what));
  EXPECT_THAT(r.err, EndsWith("\n"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(fs::exists(output)) << output;
}

TEST_F(RomCli, WhatATraceFromResetCannotShowStopsTheCapture) {
  const struct {
    const char* program;
    const char* what;
  } cases[] = {
      {"refused-interrupt.elf",
       "the program took an interrupt from a device line (Cause.IP 0x80): a trace from reset "
       "cannot place it, since the R4400 acknowledges interrupts on no bus cycle"},
      {"refused-count.elf", "the program read Count"},
      {"refused-cause.elf", "the program read Cause with a device interrupt line pending"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.program);
    const std::string out = Path("refused.cat");
    CommandResult r = Run(absl::StrCat("capture --rom ", Program(c.program), " -o ", out));
    ExpectRefused(r, out, c.what);
    EXPECT_THAT(r.err, HasSubstr(absl::StrCat(Program(c.program), ": after ")));
    EXPECT_THAT(r.err, HasSubstr(" instructions, at 0xffffffffbfc0"));
  }
}

// A static ELF32 executable with one loadable segment.
std::string Elf(uint16_t machine, bool big_endian, uint32_t entry, uint32_t paddr,
                const std::vector<uint8_t>& bytes) {
  std::string f(52 + 32, '\0');
  auto put = [&](size_t at, uint64_t v, int n) {
    for (int i = 0; i < n; ++i) {
      f[at + (big_endian ? n - 1 - i : i)] = static_cast<char>(v >> (8 * i));
    }
  };
  f[0] = 0x7F, f[1] = 'E', f[2] = 'L', f[3] = 'F', f[4] = 1, f[5] = big_endian ? 2 : 1, f[6] = 1;
  put(16, 2, 2);  // ET_EXEC
  put(18, machine, 2);
  put(20, 1, 4);
  put(24, entry, 4);
  put(28, 52, 4);  // program headers
  put(40, 52, 2);
  put(42, 32, 2);
  put(44, 1, 2);
  put(52, 1, 4);   // PT_LOAD
  put(56, 84, 4);  // offset
  put(60, paddr, 4);
  put(64, paddr, 4);
  put(68, bytes.size(), 4);
  put(72, bytes.size(), 4);
  put(76, 5, 4);
  f.append(bytes.begin(), bytes.end());
  return f;
}

TEST_F(RomCli, BadImagesAndOptionsAreRefusedInOneLine) {
  const std::string out = Path("bad.cat");
  auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(Path(name), std::ios::binary) << bytes;
    return Path(name);
  };
  const std::vector<uint8_t> nops(16, 0);
  const struct {
    std::string args, what;
  } cases[] = {
      {"--rom " + Path("nowhere.bin"), "nowhere.bin: cannot open"},
      {"--rom " + write("big.bin", std::string((2 << 20) + 4, '\0')),
       "big.bin: the image has 2097156 bytes, more than the 2097152 the ROM holds"},
      {"--rom " + write("empty.bin", ""), "empty.bin: the ROM image is empty"},
      {"--rom " + write("i386.elf", Elf(3, false, 0x8048000, 0x8048000, nops)),
       "i386.elf: ELF: i386 (e_machine 3), ELF32 little-endian, not a big-endian MIPS"},
      {"--rom " + write("far.elf", Elf(8, true, 0x8F000000, 0x8F000000, nops)),
       "far.elf: the segment loaded at 0x8f000000 (16 bytes) lies neither in RAM"},
      {"--rom " + write("mapped.elf", Elf(8, true, 0x80001000, 0x00400000 | 0x40000000, nops)),
       "mapped.elf: the segment loaded at 0x40400000 (16 bytes) is not at a physical"},
      {"--rom " + write("user.elf", Elf(8, true, 0x00400000, 0x80001000, nops)),
       "user.elf: the entry point 0x400000 is not in kseg0 or kseg1"},
      {"--rom " + write("vector.elf", Elf(8, true, 0x80001000, 0xBFC00000, nops)),
       "vector.elf: the ELF puts bytes at the reset vector 0xbfc00000 but its entry point is "
       "0xffffffff80001000"},
      {"--rom " + Example("hello.elf") + " --rom-address 0xbfc00000",
       "hello.elf: an ELF is loaded at its own addresses"},
      {"--rom " + Program("offset.bin") + " --rom-address 0xbfe00000",
       "offset.bin: the ROM address 0x1fe00000 is not a word in the ROM"},
      {"--rom " + Program("offset.bin") + " --rom-address 0xbfdfffe0",
       "offset.bin: the image has 80 bytes, more than the 32 the ROM holds from physical "
       "0x1fdfffe0"},
      {"--rom " + Program("offset.bin") + " --rom-address 0x2x", "--rom-address '0x2x' is not"},
      {"--rom-address 0xbfc00000", "--rom-address needs --rom"},
      {"--rom " + Example("selftest.bin") + " --workload sort", "--rom runs a bare-metal program"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args);
    ExpectRefused(Run(absl::StrCat("capture --machine r4400 ", c.args, " -o ", out)), out, c.what);
  }
}

TEST_F(RomCli, AnImsWhoseRegistersAreNotTheResetStateIsRefused) {
  ims::InitialMachineState ims;
  ASSERT_TRUE(ims.ParseFromString(ReadFile(Path("x/ims.pb"))));
  ASSERT_TRUE(ims.start().from_reset());
  EXPECT_EQ(ims.mips().pc(), 0xFFFFFFFFBFC00000u);
  EXPECT_EQ(ims.mips().cp0().status(), 0x00400004u);  // BEV, ERL
  EXPECT_EQ(ims.description().rom_base(), 0x1FC00000u);
  EXPECT_EQ(ims.description().rom_bytes(), 0x200000u);
  const struct {
    const char* name;
    void (*edit)(ims::InitialMachineState&);
    const char* what;
  } edits[] = {
      {"gpr", [](ims::InitialMachineState& m) { m.mutable_mips()->set_gpr(3, 1); },
       "must hold the r4400's reset state; it differs: modified: mips.gpr[3]: 0 -> 1"},
      {"status",
       [](ims::InitialMachineState& m) { m.mutable_mips()->mutable_cp0()->set_status(0x400000); },
       "modified: mips.cp0.status: 4194308 -> 4194304"},
      {"tlb",
       [](ims::InitialMachineState& m) { m.mutable_mips()->mutable_tlb(47)->set_entry_hi(0x2000); },
       "mips.tlb[47].entry_hi"},
      {"start", [](ims::InitialMachineState& m) { m.mutable_start()->set_branch_count(7); },
       "a trace from reset starts at branch count 0 and CAT record 0; the IMS says 7 and 0"},
  };
  for (const auto& e : edits) {
    SCOPED_TRACE(e.name);
    ims::InitialMachineState edited = ims;
    e.edit(edited);
    std::ofstream(Path("edited.pb"), std::ios::binary) << edited.SerializeAsString();
    CommandResult r = Run(absl::StrCat("replay --ims ", Path("edited.pb"), " --aes ",
                                       Path("x/aes.pb"), " -o ", Path("edited.txt")));
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_THAT(r.err, HasSubstr("the IMS/AES cannot be replayed: "));
    EXPECT_THAT(r.err, HasSubstr(e.what));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(Path("edited.txt")));
  }
}

}  // namespace
}  // namespace citcat
