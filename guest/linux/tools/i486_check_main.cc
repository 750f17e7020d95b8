// i486_check [--allow NAME,...] [--skip-section NAME]... [--max N] [--verbose] FILE...
// Fails (exit 1) when an ELF32 i386 file, or a member of a static archive, holds an instruction
// an i486 lacks in an executable section: prints the first N findings (default 20) as
// "FILE: 0xADDR: insn (an i486 has no ...)" and a count per file. Exit 2: usage or a file that
// cannot be read. See i486_check.h for the names --allow takes.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "guest/linux/tools/i486_check.h"

namespace {

int Usage() {
  std::fprintf(stderr,
               "usage: i486_check [--allow NAME,...] [--skip-section NAME]... [--max N] "
               "[--verbose] FILE...\n"
               "  fails on any instruction an i486 lacks in the executable sections of ELF32\n"
               "  i386 files and static archives of them; NAME is a mnemonic (rdtsc) or a\n"
               "  class (cmov, fcmov, fcomi, nopl, mmx, sse, avx, cpuid, undecodable, ...)\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  citcat::i486check::Options options;
  std::vector<std::string> files;
  int max = 20;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (arg == "--allow") {
      const char* v = value();
      if (!v) return Usage();
      for (auto name : absl::StrSplit(v, ',', absl::SkipEmpty())) options.allow.emplace_back(name);
    } else if (arg == "--skip-section") {
      const char* v = value();
      if (!v) return Usage();
      options.skip_sections.emplace_back(v);
    } else if (arg == "--max") {
      const char* v = value();
      if (!v || !absl::SimpleAtoi(v, &max) || max < 0) return Usage();
    } else if (arg == "--verbose" || arg == "-v") {
      verbose = true;
    } else if (arg == "--help" || arg == "-h") {
      Usage();
      return 0;
    } else if (!arg.empty() && arg[0] == '-') {
      return Usage();
    } else {
      files.push_back(arg);
    }
  }
  if (files.empty()) return Usage();
  int status = 0;
  for (const std::string& file : files) {
    absl::StatusOr<citcat::i486check::Result> result = citcat::i486check::CheckFile(file, options);
    if (!result.ok()) {
      std::fprintf(stderr, "i486_check: %s\n", std::string(result.status().message()).c_str());
      status = 2;
      continue;
    }
    const auto& findings = result->findings;
    for (size_t i = 0; i < findings.size() && i < static_cast<size_t>(max); ++i) {
      std::fprintf(stderr, "%s\n", citcat::i486check::Describe(findings[i]).c_str());
    }
    if (!findings.empty()) {
      std::fprintf(stderr, "%s: %zu instructions an i486 lacks (of %llu decoded)\n", file.c_str(),
                   findings.size(), static_cast<unsigned long long>(result->instructions));
      if (status == 0) status = 1;
    } else if (verbose) {
      std::printf("%s: %llu instructions in %d sections of %d ELF files, all i486 (%llu allowed)\n",
                  file.c_str(), static_cast<unsigned long long>(result->instructions),
                  result->sections, result->members,
                  static_cast<unsigned long long>(result->allowed));
    }
    if (result->members == 0) {
      std::fprintf(stderr, "i486_check: %s: no ELF file in it\n", file.c_str());
      status = 2;
    }
  }
  return status;
}
