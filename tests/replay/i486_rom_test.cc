// Bare-metal i486 programs traced from reset, as a user runs them (examples/README.md):
// `citcat capture --machine i486 --rom` of the examples (raw image and ELF), extract, replay and
// verify with zero divergence and timer interrupts keyed from the CAT alone (from ring 0, ring 3
// and V86 mode), the result codes
// `citcat dump` shows, the header, the IMS's reset state, the reset stubs, and what a trace from
// reset refuses.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "aes/schedule.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ims/ims.pb.h"
#include "tests/support/run_citcat.h"

namespace citcat {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using ::testing::Contains;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using testing::ReadFile;
using ::testing::StartsWith;

std::string Example(const std::string& name) {
  return absl::StrCat(CITCAT_I486_EXAMPLES, "/", name);
}
std::string Program(const std::string& name) {
  return absl::StrCat(CITCAT_ROM486_TEST_PROGRAMS, "/", name);
}

class Rom486Cli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(testing::FreshTestDir("rom486-cli"));
    capture_ = new CommandResult(Run(absl::StrCat(
        "capture --machine i486 --rom ", Example("selftest.bin"), " -o ", Path("selftest.cat"))));
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
  static std::string Write(const std::string& name, const std::string& bytes) {
    std::ofstream(Path(name), std::ios::binary) << bytes;
    return Path(name);
  }

  static inline fs::path* dir_ = nullptr;
  static inline CommandResult *capture_ = nullptr, *extract_ = nullptr;
};

TEST_F(Rom486Cli, TheSelfTestPassesAndReplaysWithZeroDivergence) {
  EXPECT_THAT(capture_->out, StartsWith("citcat bare-metal i486 self-test\n"));
  EXPECT_THAT(capture_->out, HasSubstr("\nPASS\n"));
  EXPECT_THAT(capture_->out, HasSubstr("(traced from reset)"));
  EXPECT_THAT(capture_->out, HasSubstr("the program powered off"));
  EXPECT_THAT(capture_->out, HasSubstr("  interrupts       10\n"));
  EXPECT_THAT(extract_->err, HasSubstr("10 interrupts"));

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
  EXPECT_THAT(r.err, HasSubstr("10 interrupts"));
  r = Run(absl::StrCat("stats ", Path("selftest.cat")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("perturbation: none (traced from reset: no kernel, no hooks)"));

  // The replayed trace: the reset vector's far JMP first, then the copy below 1 MiB, and timer
  // interrupts
  // between iterations of REP STOSD (keyed by the acknowledge's place in the CAT) and at HLT.
  const std::string trace = ReadFile(Path("trace.txt"));
  EXPECT_THAT(trace, StartsWith("           0 000000000000fff0 ea000000f0  ljmp 0xf000:0\n"
                                "           1 0000000000000000 fa  cli\n"));
  const std::vector<std::string> lines = absl::StrSplit(trace, '\n');
  int on_rep = 0, on_hlt = 0, interrupts = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].find("interrupt, vector 0x20, from the AES") == std::string::npos) continue;
    ++interrupts;
    on_rep += lines[i - 1].find("rep stosd") != std::string::npos;
    on_hlt += lines[i - 1].ends_with("  hlt");
  }
  EXPECT_EQ(interrupts, 10);
  EXPECT_GE(on_rep, 1);
  EXPECT_EQ(on_hlt, 2);
}

// Packed, an interrupt from reset is keyed by its steps after the first arrival at its EIP in its
// straight line, in place of its CAT record, only where that is not 0: between iterations of REP
// STOSD. The archive replays the capture exactly.
TEST_F(Rom486Cli, PackCountsRepIterationsOnlyWhereNeeded) {
  CommandResult r = Run(absl::StrCat("pack ", Path("x"), " -o ", Path("selftest.citcat")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Run(absl::StrCat("unpack ", Path("selftest.citcat"), " -o ", Path("unpacked")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  absl::StatusOr<aes::Schedule> s = aes::Schedule::Parse(aes::BytesInFile(Path("unpacked/aes.pb")));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->format_version(), 2u);
  ASSERT_EQ(s->interrupts(), 10u);
  int with_steps = 0;
  std::unique_ptr<aes::ScheduleReader> reader = s->Read();
  while (!reader->interrupts().empty()) {
    const aes::Interrupt& irq = reader->interrupts().Pop();
    with_steps += irq.has_steps_after_arrival();
    EXPECT_FALSE(irq.has_rep_remaining());
    EXPECT_FALSE(irq.has_cat_record());
  }
  EXPECT_GE(with_steps, 1);  // the test above: at least one between REP STOSD iterations
  EXPECT_LE(with_steps, 8);  // never the two at HLT
  r = Run(absl::StrCat("replay ", Path("selftest.citcat"), " --cat ", Path("packed.cat")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Run(absl::StrCat("verify ", Path("selftest.cat"), " ", Path("packed.cat")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("identical"));
}

TEST_F(Rom486Cli, DumpShowsTheResultCodesOnPort80) {
  const std::vector<std::string> lines = DumpLines(Path("selftest.cat"));
  std::vector<std::string> codes;
  for (const std::string& l : lines) {
    if (l.starts_with("port-write     addr=0x80 ")) codes.push_back(l.substr(l.rfind(' ') + 1));
  }
  // Little-endian dwords: 1, 1, 1, 1, 1, 400000h, 2, C0DEh, 10, 30303030h, then the verdict.
  EXPECT_THAT(codes, ::testing::ElementsAre("data=01000000", "data=01000000", "data=01000000",
                                            "data=01000000", "data=01000000", "data=00004000",
                                            "data=02000000", "data=dec00000", "data=0a000000",
                                            "data=30303030", "data=dec00d60"));
  // Every character on the console is a port write to the UART's transmit register.
  const std::string console = capture_->out.substr(0, capture_->out.find("\ncitcat capture:"));
  std::string from_dump;
  for (const std::string& l : lines) {
    if (l.starts_with("port-write     addr=0x3f8 ")) {
      from_dump += static_cast<char>(std::stoul(l.substr(l.size() - 2), nullptr, 16));
    }
  }
  EXPECT_EQ(from_dump, console);
  EXPECT_THAT(lines.back(), StartsWith("port-write     addr=0x5c8 "));  // power off
}

TEST_F(Rom486Cli, AnotherSeedMovesTheInterruptsAndOnlyItsOwnScheduleReplaysIt) {
  CommandResult r = Run(absl::StrCat("capture --machine i486 --rom ", Example("selftest.bin"),
                                     " --seed 2 -o ", Path("seed2.cat")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\nPASS\n"));
  const auto acks = [](const std::vector<std::string>& lines) {
    std::vector<std::string> out;
    for (const std::string& l : lines) {
      if (l.starts_with("interrupt-ack ")) out.push_back(l);
    }
    return out;
  };
  EXPECT_NE(acks(DumpLines(Path("seed2.cat"))), acks(DumpLines(Path("selftest.cat"))));
  r = Run(absl::StrCat("verify ", Path("seed2.cat")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // The same program from the same reset state: the first seed's IMS with the second seed's
  // schedule regenerates the second seed's records, not the first's: the schedule is what
  // differs (the headers differ in their producer only).
  r = Run(absl::StrCat("extract ", Path("seed2.cat"), " -o ", Path("s2")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Run(absl::StrCat("replay --ims ", Path("x/ims.pb"), " --aes ", Path("s2/aes.pb"), " --cat ",
                       Path("mixed.cat")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto records = [](std::vector<std::string> lines) {
    std::erase_if(lines, [](const std::string& l) { return l.starts_with("producer "); });
    return lines;
  };
  const std::vector<std::string> mixed = records(DumpLines(Path("mixed.cat")));
  EXPECT_TRUE(mixed == records(DumpLines(Path("seed2.cat"))));
  EXPECT_FALSE(mixed == records(DumpLines(Path("selftest.cat"))));
}

TEST_F(Rom486Cli, TheHeaderShowsTheRomTwiceAndSaysFromReset) {
  CommandResult r = Run(absl::StrCat("dump ", Path("selftest.cat"), " -o ", Path("dump.txt")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = ReadFile(Path("dump.txt"));
  EXPECT_THAT(text, HasSubstr("\nrom base=0xf0000 size=0x10000\nrom base=0xffff0000 "
                              "size=0x10000\nfrom-reset\n"));
  EXPECT_THAT(text, Not(HasSubstr("boot-rom")));
  // The first fetch is the reset vector's, then the copy below 1 MiB after its far jump.
  EXPECT_THAT(text,
              HasSubstr("\nrecords\nuncached-read  addr=0xfffffff0 bc=0 flags=code data=ea\n"));
  EXPECT_THAT(text, HasSubstr("\nuncached-read  addr=0xf0000 bc=1 flags=code data=fa\n"));
  r = Run(absl::StrCat("assemble ", Path("dump.txt"), " -o ", Path("again.cat")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadFile(Path("again.cat")), ReadFile(Path("selftest.cat")));
}

TEST_F(Rom486Cli, TheImsHoldsTheResetStateAndAnotherIsRefused) {
  ims::InitialMachineState ims;
  ASSERT_TRUE(ims.ParseFromString(ReadFile(Path("x/ims.pb"))));
  ASSERT_TRUE(ims.start().from_reset());
  EXPECT_EQ(ims.start().branch_count(), 0u);
  EXPECT_EQ(ims.start().cat_record(), 0u);
  EXPECT_EQ(ims.description().rom_base(), 0xFFFF0000u);
  EXPECT_EQ(ims.description().rom_bytes(), 0x10000u);
  const ims::X86State& s = ims.x86();
  EXPECT_THAT(s.gpr(), ::testing::ElementsAre(0, 0, 0x0401, 0, 0, 0, 0, 0));  // EDX: i486DX
  EXPECT_EQ(s.eip(), 0xFFF0u);
  EXPECT_EQ(s.eflags(), 2u);
  EXPECT_EQ(s.cs().selector(), 0xF000u);
  EXPECT_EQ(s.cs().base(), 0xFFFF0000u);
  EXPECT_EQ(s.cs().limit(), 0xFFFFu);
  for (const ims::X86Segment* seg : {&s.es(), &s.ss(), &s.ds(), &s.fs(), &s.gs()}) {
    EXPECT_EQ(seg->selector(), 0u);
    EXPECT_EQ(seg->base(), 0u);
    EXPECT_EQ(seg->limit(), 0xFFFFu);
    EXPECT_EQ(seg->access_rights(), 0x93u);
  }
  EXPECT_EQ(s.cr0(), 0x60000010u);
  EXPECT_EQ(s.cr2(), 0u);
  EXPECT_EQ(s.cr3(), 0u);
  EXPECT_THAT(s.dr(), ::testing::ElementsAre(0, 0, 0, 0, 0xFFFF0FF0u, 0x400u));
  EXPECT_EQ(s.idtr().base(), 0u);
  EXPECT_EQ(s.idtr().limit(), 0x3FFu);
  EXPECT_EQ(s.gdtr().base(), 0u);
  EXPECT_EQ(s.gdtr().limit(), 0xFFFFu);
  EXPECT_EQ(s.x87().control_word(), 0x40u);
  EXPECT_EQ(s.x87().status_word(), 0u);
  EXPECT_EQ(s.x87().tag_word(), 0x5555u);
  for (const std::string& r : s.x87().st()) EXPECT_EQ(r, std::string(10, '\0'));

  const struct {
    const char* name;
    void (*edit)(ims::InitialMachineState&);
    const char* what;
  } edits[] = {
      {"edx", [](ims::InitialMachineState& m) { m.mutable_x86()->set_gpr(2, 0x0402); },
       "must hold the i486's reset state; it differs: modified: x86.gpr[2]: 1025 -> 1026"},
      {"cr0", [](ims::InitialMachineState& m) { m.mutable_x86()->set_cr0(0x10); }, "x86.cr0"},
      {"start", [](ims::InitialMachineState& m) { m.mutable_start()->set_cat_record(3); },
       "a trace from reset starts at branch count 0 and CAT record 0; the IMS says 0 and 3"},
  };
  for (const auto& e : edits) {
    SCOPED_TRACE(e.name);
    ims::InitialMachineState edited = ims;
    e.edit(edited);
    Write("edited.pb", edited.SerializeAsString());
    CommandResult r = Run(absl::StrCat("replay --ims ", Path("edited.pb"), " --aes ",
                                       Path("x/aes.pb"), " -o ", Path("edited.txt")));
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_THAT(r.err, HasSubstr("the IMS/AES cannot be replayed: "));
    EXPECT_THAT(r.err, HasSubstr(e.what));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(Path("edited.txt")));
  }
}

TEST_F(Rom486Cli, TheElfAndItsRawImageGiveTheSameTrace) {
  CommandResult r = Run(absl::StrCat("capture --machine i486 --rom ", Example("selftest.elf"),
                                     " -o ", Path("selftest-elf.cat")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> a = DumpLines(Path("selftest.cat"));
  std::vector<std::string> b = DumpLines(Path("selftest-elf.cat"));
  std::erase_if(a, [](const std::string& l) { return l.starts_with("producer "); });
  std::erase_if(b, [](const std::string& l) { return l.starts_with("producer "); });
  EXPECT_EQ(a, b);
}

TEST_F(Rom486Cli, AnElfInRamIsEnteredByAFarJumpAtTheResetVector) {
  CommandResult r = Run(absl::StrCat("capture --machine i486 --rom ", Example("hello.elf"), " -o ",
                                     Path("hello.cat")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("hello from RAM\n"));
  const std::vector<std::string> lines = DumpLines(Path("hello.cat"));
  const auto records = std::find(lines.begin(), lines.end(), "records");
  ASSERT_GE(lines.end() - records, 6);
  // JMP FAR 0000:8000, fetched uncached from the ROM a byte at a time.
  const char* stub[] = {"ea", "00", "80", "00", "00"};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(records[1 + i], absl::StrCat("uncached-read  addr=0x", absl::Hex(0xFFFFFFF0u + i),
                                           " bc=0 flags=code data=", stub[i]));
  }
  // The program's report of CS:IP after the jump.
  EXPECT_THAT(lines, Contains("port-write     addr=0x80 bc=2 data=05800000"));
  r = Run(absl::StrCat("verify ", Path("hello.cat")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(Rom486Cli, ARawImageAtRomAddressIsEnteredByANearJump) {
  // mov dx, 5C8h; out dx, al: power off.
  const std::string off = Write("off.bin", std::string("\xBA\xC8\x05\xEE\xF4", 5));
  CommandResult r = Run(absl::StrCat("capture --machine i486 --rom ", off,
                                     " --rom-address 0xffff8000 -o ", Path("off.cat")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("  instructions     3, the program powered off\n"));
  const std::vector<std::string> lines = DumpLines(Path("off.cat"));
  // JMP rel16 from FFF3h to 8000h: 800Dh.
  EXPECT_THAT(lines, Contains("uncached-read  addr=0xfffffff0 bc=0 flags=code data=e9"));
  EXPECT_THAT(lines, Contains("uncached-read  addr=0xfffffff1 bc=0 flags=code data=0d"));
  EXPECT_THAT(lines, Contains("uncached-read  addr=0xfffffff2 bc=0 flags=code data=80"));
  EXPECT_THAT(lines, Contains("uncached-read  addr=0xffff8000 bc=1 flags=code data=ba"));
  EXPECT_THAT(lines, Contains("rom base=0xffff0000 size=0x10000"));
  r = Run(absl::StrCat("verify ", Path("off.cat")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// A program that ends with CLI; HLT stops for good: the summary says so (not "cut short"), and
// the trace to that point replays.
TEST_F(Rom486Cli, AHaltWithInterruptsOffEndsTheTraceAndSaysWhere) {
  const std::string image(0xFFF0, '\x90');
  const std::string rom =
      Write("clihlt.bin", image + std::string("\xFA\xF4", 2) + std::string(14, '\x90'));
  CommandResult r =
      Run(absl::StrCat("capture --machine i486 --rom ", rom, " -o ", Path("clihlt.cat")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("  instructions     2, the processor halted with interrupts off at "
                               "EIP 0xfff2\n"));
  EXPECT_EQ(r.err,
            "citcat capture: the processor halted with interrupts off at EIP 0xfff2: the trace "
            "ends there\n");
  EXPECT_EQ(Run(absl::StrCat("verify ", Path("clihlt.cat"))).exit_code, 0);
}

// Timer interrupts taken in ring 3 (frames of five dwords) and in virtual-8086 mode (nine), after
// five in ring 0 (three): every one keyed from the CAT alone, and the trace replays identically.
// The program counts the frames its handler finds and writes the counts to port 80h.
TEST_F(Rom486Cli, InterruptsFromRing3AndV86ModeAreKeyedAndReplayExactly) {
  const struct {
    const char* program;
    const char* ring3;
    const char* v86;
  } cases[] = {
      {"rings-ring3", "data=73000000", "data=00000000"},  // 115 of the 120 from ring 3
      {"rings-v86", "data=00000000", "data=73000000"},    // 115 from V86 mode
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.program);
    const std::string cat = Path(absl::StrCat(c.program, ".cat"));
    CommandResult r = Run(absl::StrCat("capture --machine i486 --rom ",
                                       Program(absl::StrCat(c.program, ".elf")), " -o ", cat));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("the program powered off"));
    EXPECT_THAT(r.out, HasSubstr("  interrupts       120\n"));
    std::vector<std::string> codes;
    for (const std::string& l : DumpLines(cat)) {
      if (l.starts_with("port-write     addr=0x80 ")) codes.push_back(l.substr(l.rfind(' ') + 1));
    }
    EXPECT_THAT(codes, ::testing::ElementsAre("data=78000000", c.ring3, c.v86));

    const std::string x = Path(c.program);
    r = Run(absl::StrCat("extract ", cat, " -o ", x));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.err, HasSubstr("120 interrupts"));
    const std::string again = Path(absl::StrCat(c.program, "-replayed.cat"));
    r = Run(absl::StrCat("replay --ims ", x, "/ims.pb --aes ", x, "/aes.pb --cat ", again));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = Run(absl::StrCat("verify ", cat, " ", again));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.err, HasSubstr("identical"));
    EXPECT_THAT(r.err, HasSubstr("from record 0 on"));
  }
}

// One line on standard error and no output left behind.
void ExpectRefused(const CommandResult& r, const std::string& output, const std::string& what) {
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("citcat capture: "));
  EXPECT_THAT(r.err, HasSubstr(what));
  EXPECT_THAT(r.err, EndsWith("\n"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(fs::exists(output)) << output;
}

TEST_F(Rom486Cli, InterruptsTheCatCannotKeyStopTheCapture) {
  const struct {
    const char* program;
    const char* what;
  } cases[] = {
      {"refused-task-gate.elf", "the interrupt acknowledged at record "},
      {"refused-rep-lods.elf", "between two iterations of the REP string instruction at EIP "},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.program);
    const std::string out = Path("refused.cat");
    CommandResult r =
        Run(absl::StrCat("capture --machine i486 --rom ", Program(c.program), " -o ", out));
    ExpectRefused(r, out, c.what);
    EXPECT_THAT(r.err, HasSubstr(absl::StrCat(Program(c.program), ": after ")));
    EXPECT_THAT(r.err, HasSubstr(" instructions, at EIP 0xffff00"));
  }
  // A task switch saves the old task in its TSS, at ascending addresses: no frame.
  CommandResult r =
      Run(absl::StrCat("capture --machine i486 --rom ", Program("refused-task-gate.elf"), " -o ",
                       Path("refused.cat")));
  EXPECT_THAT(r.err, HasSubstr(": the CPU stores after it (0xffff00"));
  EXPECT_THAT(r.err, HasSubstr(") are no interrupt frame's pushes: "));
}

TEST_F(Rom486Cli, ACatCutBetweenAnAcknowledgeAndItsFrameIsRefusedByExtract) {
  CommandResult r = Run(absl::StrCat("dump ", Path("selftest.cat")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t ack = r.out.find("\ninterrupt-ack ");
  ASSERT_NE(ack, std::string::npos);
  const size_t end = r.out.find('\n', ack + 1);
  Write("cut.txt", r.out.substr(0, end + 1));
  r = Run(absl::StrCat("assemble ", Path("cut.txt"), " -o ", Path("cut.cat")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Run(absl::StrCat("extract ", Path("cut.cat"), " -o ", Path("cut")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("the trace ends between an interrupt acknowledge (record "));
  EXPECT_THAT(r.err, HasSubstr(") and the store of its return EIP"));
}

// A static ELF32 i386 executable with one loadable segment.
std::string Elf(uint32_t entry, uint32_t paddr, const std::vector<uint8_t>& bytes,
                uint16_t machine = 3) {
  std::string f(52 + 32, '\0');
  auto put = [&](size_t at, uint64_t v, int n) {
    for (int i = 0; i < n; ++i) f[at + i] = static_cast<char>(v >> (8 * i));
  };
  f[0] = 0x7F, f[1] = 'E', f[2] = 'L', f[3] = 'F', f[4] = 1, f[5] = 1, f[6] = 1;
  put(16, 2, 2);
  put(18, machine, 2);
  put(20, 1, 4);
  put(24, entry, 4);
  put(28, 52, 4);
  put(40, 52, 2);
  put(42, 32, 2);
  put(44, 1, 2);
  put(52, 1, 4);
  put(56, 84, 4);
  put(60, paddr, 4);
  put(64, paddr, 4);
  put(68, bytes.size(), 4);
  put(72, bytes.size(), 4);
  put(76, 5, 4);
  f.append(bytes.begin(), bytes.end());
  return f;
}

TEST_F(Rom486Cli, BadImagesAndOptionsAreRefusedInOneLine) {
  const std::string out = Path("bad.cat");
  const std::vector<uint8_t> code(16, 0x90);
  const struct {
    std::string args, what;
  } cases[] = {
      {"--rom " + Write("empty.bin", ""), "empty.bin: the ROM image is empty"},
      {"--rom " + Write("big.bin", std::string((1 << 20) + 1, '\xF4')),
       "big.bin: the ROM address 0xffefffff is not in the ROM (0xfff00000 to 0xffffffff"},
      {"--rom " + Write("small.bin", std::string(16, '\xF4')) + " --rom-address 0xfffffff8",
       "small.bin: the image has 16 bytes, more than the 8 the ROM holds from 0xfffffff8"},
      {"--rom " + Write("short.bin", std::string(8, '\xF4')) + " --rom-address 0xfffffff4",
       "short.bin: the image ends inside the reset vector's 16 bytes"},
      {"--rom " + Write("low.bin", std::string(8, '\xF4')) + " --rom-address 0xfff00000",
       "low.bin: the ROM address 0xfff00000 is out of real mode's reach at reset"},
      {"--rom " + Example("hello.elf") + " --rom-address 0xffff0000",
       "hello.elf: an ELF is loaded at its own addresses"},
      {"--rom " + Write("mips.elf", Elf(0x8000, 0x8000, code, 8)),
       "mips.elf: ELF: MIPS (e_machine 8)"},
      {"--rom " + Write("far.elf", Elf(0x200000, 0x4000000, code)),
       "far.elf: the segment loaded at 0x4000000 (16 bytes) lies neither in RAM"},
      {"--rom " + Write("hole.elf", Elf(0xA0000, 0xA0000, code)),
       "hole.elf: the segment loaded at 0xa0000 (16 bytes) lies neither in RAM"},
      {"--rom " + Write("high.elf", Elf(0x200000, 0x200000, code)),
       "high.elf: the entry point 0x200000 is out of real mode's reach at reset"},
      {"--rom " + Write("vector.elf", Elf(0x8000, 0xFFFFFFF0, code)),
       "vector.elf: the ELF puts bytes at the reset vector 0xfffffff0 but its entry point is "
       "0x8000"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args);
    ExpectRefused(Run(absl::StrCat("capture --machine i486 ", c.args, " -o ", out)), out, c.what);
  }
}

}  // namespace
}  // namespace citcat
