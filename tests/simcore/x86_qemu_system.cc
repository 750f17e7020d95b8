#include "tests/simcore/x86_qemu_system.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace citcat::x86::testing {
namespace {

uint32_t Hex(absl::string_view s) {
  uint32_t v = 0;
  return absl::SimpleHexAtoi(s, &v) ? v : 0;
}

// "NAME=value" fields of a line.
void Fields(absl::string_view line, OracleState& s) {
  static constexpr const char* kGpr[8] = {"EAX", "ECX", "EDX", "EBX", "ESP", "EBP", "ESI", "EDI"};
  static constexpr const char* kSeg[8] = {
      "ES =", "CS =", "SS =", "DS =", "FS =", "GS =", "LDT=", "TR ="};
  for (int i = 0; i < 8; ++i) {
    // "CS =f000 ffff0000 0000ffff 00009b00"
    if (absl::StartsWith(line, kSeg[i])) {
      std::vector<absl::string_view> parts = absl::StrSplit(line.substr(4), ' ');
      if (parts.size() >= 2) {
        s.selector[i] = static_cast<uint16_t>(Hex(parts[0]));
        s.base[i] = Hex(parts[1]);
      }
      return;
    }
  }
  for (absl::string_view field : absl::StrSplit(line, ' ', absl::SkipEmpty())) {
    const size_t eq = field.find('=');
    if (eq == absl::string_view::npos) continue;
    const absl::string_view name = field.substr(0, eq), value = field.substr(eq + 1);
    for (int r = 0; r < 8; ++r) {
      if (name == kGpr[r]) s.gpr[r] = Hex(value);
    }
    if (name == "EIP") s.eip = Hex(value);
    if (name == "EFL") s.eflags = Hex(value);
    if (name == "CPL") s.cpl = static_cast<int>(Hex(value));
    if (name == "CR0") s.cr0 = Hex(value);
    if (name == "CR2") s.cr2 = Hex(value);
    if (name == "CR3") s.cr3 = Hex(value);
    if (name == "DR6") s.dr6 = Hex(value);
    if (name == "DR7") s.dr7 = Hex(value);
  }
}

}  // namespace

std::vector<OracleState> RunQemuSystem(const std::string& qemu, const std::string& rom,
                                       const std::string& work_dir) {
  const std::string dir = work_dir + "/x86-qemu-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::string log = dir + "/log";
  const std::string command = absl::StrCat(
      qemu, " -M isapc -cpu 486 -m 16 -bios ", rom,
      " -display none -monitor none -serial none -nodefaults",
      " -device isa-debug-exit,iobase=0xf4,iosize=4 -icount shift=0,sleep=off -singlestep",
      " -d cpu,exec,nochain -D ", log, " >/dev/null 2>&1");
  std::system(command.c_str());  // exits through the debug port with a non-zero status
  std::ifstream in(log);
  std::vector<OracleState> states;
  std::vector<bool> dropped;
  std::string line;
  while (std::getline(in, line)) {
    if (absl::StartsWith(line, "Trace ")) {
      states.emplace_back().has_system = true;
      dropped.push_back(false);
    } else if (absl::StartsWith(line, "Stopped execution of TB chain before") && !states.empty()) {
      dropped.back() = true;  // that record's instruction did not run
    } else if (!states.empty()) {
      Fields(line, states.back());
    }
  }
  std::filesystem::remove_all(dir);
  std::vector<OracleState> ran;
  for (size_t i = 0; i < states.size(); ++i) {
    if (!dropped[i]) ran.push_back(states[i]);
  }
  return ran;
}

}  // namespace citcat::x86::testing
