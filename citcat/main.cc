// citcat: constructs instruction traces from cache-filtered address traces.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "citcat/command.h"
#include "citcat/version.h"
#include "io/cleanup.h"
#include "io/file.h"
#if __has_include(<google/protobuf/stubs/logging.h>)
#include <google/protobuf/stubs/logging.h>  // the log handler of Protocol Buffers 3.x
#endif

namespace citcat::cli {
namespace {

constexpr Command kCommands[] = {
    {"demo", "run the main job on a built-in default and print a summary",
     "citcat demo [--linux]\n\n"
     "Captures the default workload mix on the first traced machine of `citcat capture\n"
     "--list-machines`, extracts the IMS and AES from the CAT alone, replays them, checks\n"
     "that the regenerated CAT is identical to the captured one, and prints a summary.\n"
     "With --linux, the same with Linux and its userland on the i486.",
     "citcat/demo.cc", RunDemo, "citcat/kernel_flag.cc", /*takes_output=*/false,
     /*reads_back_outputs=*/true},
    {"dump", "print a CAT as text",
     "citcat dump CAPTURE.cat [-o OUT.txt] [--limit N]\n\n"
     "Prints the header and records of a CAT in the text form of docs/cat-format.md.\n"
     "Without -o the text goes to standard output.",
     "citcat/dump.cc", RunDump},
    {"capture", "run a workload on a traced machine and record its CAT",
     "citcat capture [--machine M] [--workload NAME[,NAME...] | --elf PROG.elf |\n"
     "               --elf A.c [B.c ...] [--cflags \"...\"]] [--seed N] [--instructions N]\n"
     "               -o CAPTURE.cat\n"
     "       citcat capture [--machine M] --rom IMAGE [--rom-address A] [--seed N]\n"
     "                      [--instructions N] -o CAPTURE.cat\n\n"
     "Boots the guest kernel on the reference machine, runs the workloads (or your program,\n"
     "built with the machine's guest SDK first if you give C files) to the end, or for at most\n"
     "N instructions, and writes what the bus monitor sees from the begin of the trace on; see\n"
     "docs/machines/ and guest/<machine>/sdk/README.md.\n"
     "With --rom it runs a bare-metal program instead, with no kernel: a raw ROM image at the\n"
     "reset vector (or at A), or an ELF (told by its magic number) loaded at its addresses,\n"
     "from power-on, and records the bus from the first instruction fetch until the program\n"
     "powers the machine off; see examples/README.md.",
     "citcat/capture.cc", RunCapture, "citcat/kernel_flag.cc"},
    {"extract", "extract the initial machine state and event schedule from a CAT",
     "citcat extract CAPTURE.cat -o DIR\n\n"
     "Reads the CAT once and writes DIR/ims.pb (the initial machine state) and DIR/aes.pb\n"
     "(the asynchronous event schedule); see docs/ims-aes.md.",
     "citcat/extract.cc", RunExtract},
    {"replay", "re-execute a trace from its IMS and AES: instruction trace, regenerated CAT",
     "citcat replay --ims DIR/ims.pb --aes DIR/aes.pb [-o TRACE.txt] [--cat REGENERATED.cat]\n"
     "       citcat replay TRACE.citcat [...]\n"
     "       citcat replay SEGMENTS_DIR [...]\n\n"
     "Runs the processor from the initial machine state under the event schedule (no CAT\n"
     "needed) and writes a text instruction trace (-o) and the regenerated CAT (--cat). Any\n"
     "disagreement with the schedule stops it with the first divergence; see docs/replay.md.\n"
     "`citcat replay TRACE.citcat` replays an archive (citcat pack) instead and checks its\n"
     "manifest's checksums at the end; `citcat replay SEGMENTS_DIR` replays the segment\n"
     "archives citcat split wrote there, in order, each checked against its own manifest, and\n"
     "joins their outputs (with --jobs N, N segments at a time); see docs/archive-format.md.",
     "citcat/replay.cc", RunReplay, "citcat/kernel_flag.cc"},
    {"verify", "check that replay regenerates a CAT exactly",
     "citcat verify CAPTURE.cat [REGENERATED.cat]\n\n"
     "With two files: compares the capture from its replay start point on with a regenerated\n"
     "CAT. With one: extracts, replays and compares in one go and prints a summary. Exits 0\n"
     "only if identical; otherwise names the first differing record; see docs/replay.md.",
     "citcat/verify.cc", RunVerify, nullptr, /*takes_output=*/false},
    {"assemble", "turn the text form of a CAT into a CAT file",
     "citcat assemble INPUT.txt -o OUTPUT.cat\n\n"
     "Reads the text form of docs/cat-format.md (as written by citcat dump, or by hand).",
     "citcat/assemble.cc", RunAssemble},
    {"pack", "pack an extraction's IMS and AES into one checked, compressed archive",
     "citcat pack DIR -o TRACE.citcat [--level N] [--segment-starts K]\n\n"
     "Reads DIR/ims.pb and DIR/aes.pb, replays them once to record the instruction count and\n"
     "the checksums of the instruction trace and regenerated CAT in a manifest, and where K\n"
     "segments of the replay begin (so that citcat replay --jobs starts them all at once), and\n"
     "writes them zstd-compressed; see docs/archive-format.md.",
     "citcat/pack.cc", RunPack},
    {"split", "cut an archive into segment archives that each replay alone",
     "citcat split TRACE.citcat --segments K | --every N -o DIR\n\n"
     "Replays the archive once, cutting it into K segments of about equal length (or one\n"
     "every N instructions) at the first point after each cut where a trace writer can start\n"
     "afresh, and writes DIR/segment-0001.citcat ... : each holds the machine's whole state at\n"
     "its first instruction, the first-touch memory image from there and its slice of the\n"
     "schedule, replays and verifies alone, and the segments' traces and regenerated CATs,\n"
     "concatenated, are those of the whole; see docs/archive-format.md, \"Segments\".",
     "citcat/split.cc", RunSplit, nullptr, /*takes_output=*/true, /*reads_back_outputs=*/true},
    {"join", "join the pieces of a trace or CAT replayed segment by segment into the whole",
     "citcat join PIECE-0001 PIECE-0002 ... -o WHOLE --segment-dir DIR\n\n"
     "Joins the pieces that `citcat replay DIR/segment-NNNN.citcat` wrote, one per segment of\n"
     "citcat split, in segment order: instruction trace pieces byte after byte (compressed\n"
     "ones, .xz or .zst like WHOLE, each checked whole first: one stream per segment; or\n"
     "replay's plain text trace, each piece checked against its segment's manifest), CAT\n"
     "pieces record after record under the first piece's header, each checked against its\n"
     "segment's manifest. The segment number ends each piece's file name stem\n"
     "(piece-0003.champsim.xz). --segment-dir, the split's directory, is required: there must\n"
     "be a piece for every segment it holds. A piece missing, out of order, damaged or of\n"
     "another segment is refused and nothing is written; so is an uncompressed piece of a\n"
     "format join cannot check; see docs/archive-format.md, \"Joining pieces\".",
     "citcat/join.cc", RunJoin},
    {"unpack", "write an archive's IMS, AES and manifest back as files",
     "citcat unpack TRACE.citcat -o DIR\n\n"
     "Checks the archive and writes DIR/ims.pb, DIR/aes.pb and DIR/manifest.txt.",
     "citcat/unpack.cc", RunUnpack},
    {"stats", "event counts, record sizes, perturbation and the CAT/IT curve of a trace",
     "citcat stats CAPTURE.cat|TRACE.citcat [-o STATS.txt] [--plot CURVE.svg]\n\n"
     "Extracts (for a CAT) and replays once, then prints the records by kind, the events, the\n"
     "raw and zstd size of each part of the IMS and AES (thesis Fig. 5) and the hooks'\n"
     "perturbation; --plot draws cumulative bus bytes against instructions (Fig. 4) as SVG.",
     "citcat/stats.cc", RunStats},
};

const Command* current = nullptr;

bool IsCommandFlagFile(absl::string_view file) {
  return absl::EndsWith(file, "citcat/common_flags.cc") ||
         (current != nullptr &&
          (absl::EndsWith(file, current->source) ||
           (current->shared_source != nullptr && absl::EndsWith(file, current->shared_source))));
}

void PrintOverview() {
  std::printf(
      "citcat: exact instruction traces from cache-filtered address traces\n\n"
      "usage: citcat COMMAND [options] [arguments]\n       citcat --version\n\ncommands:\n");
  for (const Command& c : kCommands) std::printf("  %-10s %s\n", c.name, c.summary);
  std::printf("\n`citcat COMMAND --help` describes one command and its options.\n");
}

// "--list-workloads=x" -> "--list_workloads=x"; anything after a lone "--" is left alone.
std::string UnderscoreName(absl::string_view arg) {
  static bool operands_only = false;
  std::string out(arg);
  if (arg == "--") operands_only = true;
  if (operands_only || arg.size() < 3 || arg[0] != '-') return out;
  size_t start = arg[1] == '-' ? 2 : 1;
  size_t end = std::min(out.find('='), out.size());
  for (size_t i = start; i < end; ++i) {
    if (out[i] == '-') out[i] = '_';
  }
  return out;
}

void PrintCommandHelp(const Command& c) {
  std::printf("usage: %s\n", c.usage);
  std::vector<const absl::CommandLineFlag*> flags;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (IsCommandFlagFile(flag->Filename()) && (c.takes_output || flag->Name() != "o")) {
      flags.push_back(flag);
    }
  }
  std::sort(flags.begin(), flags.end(), [](auto* a, auto* b) { return a->Name() < b->Name(); });
  std::printf("\noptions:\n");
  for (const absl::CommandLineFlag* f : flags) {
    std::string name =
        f->Name().size() == 1 ? absl::StrCat("-", f->Name()) : absl::StrCat("--", f->Name());
    std::replace(name.begin(), name.end(), '_', '-');
    std::string value = f->DefaultValue();
    std::printf(
        "  %-18s %s%s\n", name.c_str(), f->Help().c_str(),
        value.empty() || value == "false" ? "" : absl::StrCat(" (default ", value, ")").c_str());
  }
}

// absl accepts every flag defined anywhere in the binary, the same flag twice (the last one
// wins) and an empty value; a command takes only its own flags, each once, each with a value.
absl::Status CheckFlags(std::span<char*> args) {
  std::vector<std::string> given;
  for (size_t i = 0; i < args.size(); ++i) {
    absl::string_view a(args[i]);
    if (a == "--") break;
    if (!absl::ConsumePrefix(&a, "-")) continue;
    absl::ConsumePrefix(&a, "-");
    const size_t equals = a.find('=');
    absl::string_view name = a.substr(0, equals);
    if (name.empty()) continue;  // "-": standard input or output, an operand
    // The option as the user spelled it (dashes, not the flag's underscores).
    std::string option(args[i]);  // with dashes, as the user spelled it
    std::replace(option.begin(), option.begin() + std::min(option.size(), option.find('=')), '_',
                 '-');
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    bool negated = false;  // --noquiet
    if (flag == nullptr && absl::ConsumePrefix(&name, "no")) {
      flag = absl::FindCommandLineFlag(name);
      negated = flag != nullptr && flag->IsOfType<bool>();
      if (!negated) flag = nullptr;
    }
    if (flag == nullptr || (!IsCommandFlagFile(flag->Filename()) &&
                            !absl::StrContains(flag->Filename(), "absl/flags"))) {
      return BadUsage(
          absl::StrCat("unknown option '", option, "' (see citcat ", current->name, " --help)"));
    }
    std::string spelled = flag->Name().size() == 1 ? absl::StrCat("-", flag->Name())
                                                   : absl::StrCat("--", flag->Name());
    std::replace(spelled.begin(), spelled.end(), '_', '-');
    if (flag->Name() == "o" && !current->takes_output) {
      return BadUsage("writes no output file, so takes no -o");
    }
    if (std::find(given.begin(), given.end(), flag->Name()) != given.end()) {
      return BadUsage(absl::StrCat(spelled, " given more than once"));
    }
    given.emplace_back(flag->Name());
    // "-o FILE": the next argument is the value, not a flag of its own.
    const bool separate_value = equals == absl::string_view::npos && !flag->IsOfType<bool>();
    if (separate_value && i + 1 >= args.size()) {
      return BadUsage(absl::StrCat(spelled, " needs a value"));
    }
    const std::string value = separate_value ? std::string(args[++i])
                              : equals != absl::string_view::npos
                                  ? std::string(a.substr(equals + 1))
                                  : std::string();
    if (value.empty() && equals == absl::string_view::npos && !separate_value) continue;  // --quiet
    if (negated) return BadUsage(absl::StrCat(option, " takes no value"));
    if (value.empty() && flag->IsOfType<std::string>()) {
      return BadUsage(absl::StrCat(spelled, " needs a value, not ''"));
    }
    // The value must parse as the flag's type (absl's parser would end the program with a
    // message of its own).
    std::string error;
    if (!flag->IsOfType<std::string>() && !flag->ParseFrom(value, &error)) {
      return BadUsage(absl::StrCat(spelled, " ", value, ": not a valid value (", error, ")"));
    }
  }
  return absl::OkStatus();
}

// A command's printed results (demo's summary, dump to standard output) that could not be
// written are a failure, not a success.
int CheckStandardOutput() {
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return 0;
  std::fprintf(stderr, "citcat %s: standard output: write error: %s\n", current->name,
               std::strerror(errno));
  return 1;
}

int Main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
    std::printf("citcat %s\n", CITCAT_VERSION);
    return 0;
  }
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
      std::strcmp(argv[1], "help") == 0) {
    PrintOverview();
    return argc < 2 ? 2 : 0;
  }
  for (const Command& c : kCommands) {
    if (c.name == absl::string_view(argv[1])) current = &c;
  }
  if (current == nullptr) {
    std::fprintf(stderr, "citcat: unknown command '%s' (see citcat --help)\n", argv[1]);
    return 2;
  }

  for (int i = 2; i < argc; ++i) {
    absl::string_view a(argv[i]);
    if (a == "--") break;
    if (a == "--help" || a == "-help" || a == "-h") {
      PrintCommandHelp(*current);
      return 0;
    }
  }

  absl::FlagsUsageConfig config;
  config.contains_helpshort_flags = IsCommandFlagFile;
  config.contains_help_flags = IsCommandFlagFile;
  config.version_string = [] { return absl::StrCat("citcat ", CITCAT_VERSION, "\n"); };
  absl::SetFlagsUsageConfig(config);
  absl::SetProgramUsageMessage(absl::StrCat("\nusage: ", current->usage));

  // Parse "citcat COMMAND args..." as if COMMAND were the program. Options are written with
  // dashes (--list-workloads); the flags behind them are named with underscores.
  // "-o VALUE" becomes "-o=VALUE", so that a value starting with a dash ("-o -") is taken as
  // one without absl's warning that it might be meant as a flag.
  std::vector<std::string> spelled;
  bool operands_only = false;
  for (int i = 2; i < argc; ++i) {
    std::string arg = UnderscoreName(argv[i]);
    operands_only = operands_only || arg == "--";
    if (!operands_only && arg.size() > 1 && arg[0] == '-' && arg.find('=') == std::string::npos &&
        i + 1 < argc) {
      absl::string_view name = absl::StripPrefix(absl::StripPrefix(arg, "-"), "-");
      const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
      if (flag != nullptr && !flag->IsOfType<bool>()) arg = absl::StrCat(arg, "=", argv[++i]);
    }
    spelled.push_back(std::move(arg));
  }
  std::vector<char*> args = {argv[1]};
  for (std::string& s : spelled) args.push_back(s.data());
  if (absl::Status s = CheckFlags(std::span(args).subspan(1)); !s.ok()) {
    std::fprintf(stderr, "citcat %s: %s\n", current->name, std::string(s.message()).c_str());
    return 2;
  }
  std::vector<char*> positional =
      absl::ParseCommandLine(static_cast<int>(args.size()), args.data());
  std::vector<std::string> operands(positional.begin() + 1, positional.end());
  io::RemoveTemporariesOnSignal(absl::StrCat("citcat ", current->name));
#if __has_include(<google/protobuf/stubs/logging.h>)
  // Protocol Buffers would print why a message did not parse on a line of its own; the command's
  // error already says what and where, in one line.
  google::protobuf::SetLogHandler(nullptr);
#endif
  absl::Status status;
  {
    // Every output of the command appears together, or none does.
    std::optional<io::OutputGroup> outputs;
    if (!current->reads_back_outputs) outputs.emplace();
    status = current->run(operands);
    if (status.ok() && outputs) status = outputs->Publish();
  }
  if (!status.ok()) {
    std::fflush(stdout);
    std::fprintf(stderr, "citcat %s: %s\n", current->name, std::string(status.message()).c_str());
    return IsUsageError(status) ? 2 : 1;
  }
  return CheckStandardOutput();
}

}  // namespace
}  // namespace citcat::cli

int main(int argc, char** argv) { return citcat::cli::Main(argc, argv); }
