#include "tests/oracles/bochs.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace citcat::oracle {
namespace {

constexpr const char* kVgaBios = "/usr/share/vgabios/vgabios.bin";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool Hex(absl::string_view text, uint64_t& value) {
  text = absl::StripPrefix(text, "0x");
  std::string digits(text);
  digits.erase(std::remove(digits.begin(), digits.end(), '_'), digits.end());
  return absl::SimpleHexAtoi(digits, &value);
}

// "rax: 00000000_00000000": the register's index in the core's order, or -1.
int GprIndex(absl::string_view name) {
  static constexpr const char* kNames[8] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi"};
  for (int i = 0; i < 8; ++i) {
    if (name == kNames[i]) return i;
  }
  return -1;
}

// The trace of `c`: a register block ("CPU0:", "rax: ...", ..., "rip: ...", "eflags 0x...")
// before each instruction line "(0).[icount] [0xLINEAR] CS:OFFSET (...): text ; bytes".
absl::Status ParseTrace(absl::string_view section, std::vector<BochsState>& states) {
  BochsState next;
  // A run that was killed may end in the middle of a line: only whole lines count.
  section = section.substr(0, section.rfind('\n') + 1);
  for (absl::string_view line : absl::StrSplit(section, '\n')) {
    uint64_t v = 0;
    if (const size_t colon = line.find(": ");
        colon != absl::string_view::npos && colon <= 3 && GprIndex(line.substr(0, 3)) >= 0) {
      if (!Hex(line.substr(colon + 2), v))
        return absl::DataLossError(absl::StrCat("bad line: ", line));
      next.gpr[GprIndex(line.substr(0, 3))] = static_cast<uint32_t>(v);
    } else if (absl::StartsWith(line, "rip: ")) {
      if (!Hex(line.substr(5), v)) return absl::DataLossError(absl::StrCat("bad line: ", line));
      next.eip = static_cast<uint32_t>(v);
    } else if (absl::StartsWith(line, "eflags 0x")) {
      if (!Hex(line.substr(7, 10), v)) return absl::DataLossError(absl::StrCat("bad line: ", line));
      next.eflags = static_cast<uint32_t>(v);
    } else if (absl::StartsWith(line, "(0).[")) {
      // (0).[12] [0x0000ffff0029] 0008:00000000ffff0029 (unk. ctxt): jmp .+0 ...
      std::vector<absl::string_view> f =
          absl::StrSplit(line, absl::ByAnyChar("[] "), absl::SkipEmpty());
      if (f.size() < 4 || !absl::SimpleAtoi(f[1], &next.icount) || !Hex(f[2], v)) {
        return absl::DataLossError(absl::StrCat("bad trace line: ", line));
      }
      next.linear = static_cast<uint32_t>(v);
      uint64_t cs = 0;
      if (!Hex(f[3].substr(0, f[3].find(':')), cs)) {
        return absl::DataLossError(absl::StrCat("bad trace line: ", line));
      }
      next.cs = static_cast<uint16_t>(cs);
      states.push_back(next);
    }
  }
  return absl::OkStatus();
}

// `sreg`: "cs:0x0008, dh=0x00cf9b00, dl=0x0000ffff, valid=1" and "gdtr:base=0x..., limit=0x...".
void ParseSegments(absl::string_view section, BochsRun& run) {
  static constexpr const char* kNames[8] = {
      "es:", "cs:", "ss:", "ds:", "fs:", "gs:", "ldtr:", "tr:"};
  for (absl::string_view line : absl::StrSplit(section, '\n')) {
    uint64_t v = 0;
    if (absl::ConsumePrefix(&line, "gdtr:base=")) {
      if (Hex(line.substr(0, line.find(',')), v)) run.gdtr_base = static_cast<uint32_t>(v);
      continue;
    }
    if (absl::ConsumePrefix(&line, "idtr:base=")) {
      if (Hex(line.substr(0, line.find(',')), v)) run.idtr_base = static_cast<uint32_t>(v);
      continue;
    }
    for (int i = 0; i < 8; ++i) {
      if (!absl::ConsumePrefix(&line, kNames[i])) continue;
      std::vector<absl::string_view> f = absl::StrSplit(line, ", ");
      uint64_t selector = 0, dh = 0, dl = 0;
      if (f.size() < 3 || !Hex(f[0], selector) || !Hex(absl::StripPrefix(f[1], "dh="), dh) ||
          !Hex(absl::StripPrefix(f[2], "dl="), dl)) {
        break;
      }
      run.segment[i].selector = static_cast<uint16_t>(selector);
      run.segment[i].base =
          static_cast<uint32_t>((dl >> 16) | ((dh & 0xFF) << 16) | (dh & 0xFF000000));
      break;
    }
  }
}

// `creg`: "CR0=0x60000011: ...", "CR2=page fault laddr=0x...", "CR3=0x...".
void ParseControlRegisters(absl::string_view section, BochsRun& run) {
  for (absl::string_view line : absl::StrSplit(section, '\n')) {
    uint64_t v = 0;
    if (absl::ConsumePrefix(&line, "CR0=")) {
      if (Hex(line.substr(0, line.find(':')), v)) run.cr0 = static_cast<uint32_t>(v);
    } else if (absl::ConsumePrefix(&line, "CR2=page fault laddr=")) {
      if (Hex(line, v)) run.cr2 = static_cast<uint32_t>(v);
    } else if (absl::ConsumePrefix(&line, "CR3=")) {
      if (Hex(line.substr(0, line.find_first_of(": \t")), v)) run.cr3 = static_cast<uint32_t>(v);
    }
  }
}

}  // namespace

std::string FindBochs() {
  if (!std::filesystem::exists(kVgaBios)) return "";
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path != nullptr ? path : "", ':')) {
    const std::string candidate = absl::StrCat(dir, "/bochs");
    if (!dir.empty() && access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

absl::StatusOr<BochsRun> RunBochs(const BochsOptions& options) {
  const std::string bochs = FindBochs();
  if (bochs.empty()) return absl::NotFoundError("bochs (and its VGA BIOS, vgabios) not installed");
  std::filesystem::create_directories(options.work_dir);
  const std::string dir = options.work_dir, console = dir + "/console.txt";
  std::filesystem::remove(console);
  {
    std::ofstream rc(dir + "/bochsrc");
    rc << "megs: " << options.memory_mb << "\n"
       << "romimage: file=\"" << options.rom << "\", address=0xffff0000\n"
       << "vgaromimage: file=" << kVgaBios << "\n"
       << "cpu: model=pentium, count=1\n"
       // RFB with no wait for a viewer: Bochs runs headless.
       << "display_library: rfb, options=\"timeout=0\"\n"
       << "sound: waveoutdrv=dummy, waveindrv=dummy, midioutdrv=dummy\n"
       << "speaker: enabled=0\n"
       << "pci: enabled=0\n"
       << "magic_break: enabled=1\n"
       << "com1: enabled=1, mode=file, dev=\"" << console << "\"\n"
       << "log: \"" << dir << "/bochs.log\"\n"
       << "panic: action=fatal\n"
       << "error: action=report\n";
  }
  // The debugger's commands, one prompt each; the sections of its output follow them in order.
  std::vector<std::string> commands;
  if (options.trace) {
    commands.emplace_back("trace-reg on");
    commands.emplace_back("trace on");
  }
  const size_t run_command = commands.size();
  commands.emplace_back("c");
  commands.emplace_back("trace off");
  commands.emplace_back("sreg");
  commands.emplace_back("creg");
  std::vector<std::string> dump_files;
  for (size_t i = 0; i < options.dumps.size(); ++i) {
    dump_files.push_back(absl::StrCat(dir, "/dump", i, ".bin"));
    std::filesystem::remove(dump_files.back());
    commands.push_back(absl::StrCat("writemem \"", dump_files.back(), "\" ",
                                    options.dumps[i].address, " ", options.dumps[i].bytes));
  }
  commands.emplace_back("quit");
  {
    std::ofstream in(dir + "/commands");
    for (const std::string& c : commands) in << c << "\n";
  }
  const std::string command =
      // At most 1 GiB of output (about a million traced instructions).
      absl::StrCat("cd '", dir, "' && ulimit -f 2097152 && timeout -s KILL ",
                   options.timeout_seconds, " ", bochs,
                   " -q -f bochsrc < commands > output.txt 2> errors.txt");
  // Bochs's RFB display takes a TCP port from 5900 to 5949 and gives up when it gets none; with
  // other runs starting at the same moment it sometimes does: try again.
  for (int attempt = 0; attempt < 5; ++attempt) {
    std::system(command.c_str());
    if (!absl::StrContains(ReadFile(dir + "/errors.txt"), "RFB could not bind")) break;
    sleep(1);
  }

  BochsRun run;
  run.output = ReadFile(dir + "/output.txt");
  // Section k is what Bochs printed after its (k+1)-th prompt "<bochs:N> ", up to the next one.
  std::vector<absl::string_view> sections;
  const absl::string_view output = run.output;
  for (size_t at = output.find("<bochs:"); at != absl::string_view::npos;) {
    const size_t begin = output.find('>', at);
    if (begin == absl::string_view::npos) break;
    const size_t next = output.find("<bochs:", begin);
    sections.push_back(
        output.substr(begin + 1, next == absl::string_view::npos ? next : next - begin - 1));
    at = next;
  }
  if (sections.size() <= run_command) {
    return absl::UnavailableError(
        absl::StrCat("bochs did not start: ", ReadFile(dir + "/errors.txt")));
  }
  if (absl::Status s = ParseTrace(sections[run_command], run.states); !s.ok()) return s;
  // After `c`, a prompt again: the ROM stopped at its XCHG BX,BX (a Bochs that panicked or was
  // killed prints none).
  run.stopped = sections.size() > run_command + 1;
  if (run.stopped) {
    if (sections.size() > run_command + 2) ParseSegments(sections[run_command + 2], run);
    if (sections.size() > run_command + 3) ParseControlRegisters(sections[run_command + 3], run);
    for (const std::string& f : dump_files) {
      const std::string bytes = ReadFile(f);
      run.dumps.emplace_back(bytes.begin(), bytes.end());
    }
  }
  run.console = ReadFile(console);
  return run;
}

}  // namespace citcat::oracle
