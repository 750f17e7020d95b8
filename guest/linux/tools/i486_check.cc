// The i486 instruction check: see i486_check.h.
//
// Capstone decodes for the whole x86 family; what an i486DX lacks is decided here, from the
// instruction's id (the single instructions later processors added), its groups (the extension
// sets: CMOV, MMX, SSE, AVX, ...), its register operands (any MMX, XMM, YMM, ZMM or mask
// register) and its opcode bytes (0F 18 .. 0F 1F, the hint space that holds PREFETCHh, the
// multi-byte NOP and ENDBR32, all #UD on an i486). Bytes Capstone cannot decode are a finding
// too ("undecodable"): an i486 raises #UD on them, and plain compiler output has no data in its
// code sections, so none turn up in the userland.
#include "guest/linux/tools/i486_check.h"

#include <capstone/capstone.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <iterator>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

namespace citcat::i486check {
namespace {

struct Rule {
  const char* name;
  const char* why;
};

// Single instructions an i486 lacks, by Capstone id.
struct IdRule {
  x86_insn id;
  Rule rule;
};
constexpr IdRule kIdRules[] = {
    {X86_INS_CPUID, {"cpuid", "an i486DX has no CPUID (later i486 steppings, Pentium)"}},
    {X86_INS_RDTSC, {"rdtsc", "an i486 has no RDTSC (Pentium)"}},
    {X86_INS_RDTSCP, {"rdtscp", "an i486 has no RDTSCP"}},
    {X86_INS_RDPMC, {"rdpmc", "an i486 has no RDPMC (Pentium Pro)"}},
    {X86_INS_RDMSR, {"rdmsr", "an i486 has no RDMSR (Pentium)"}},
    {X86_INS_WRMSR, {"wrmsr", "an i486 has no WRMSR (Pentium)"}},
    {X86_INS_RSM, {"rsm", "an i486DX has no RSM (SMM)"}},
    {X86_INS_CMPXCHG8B, {"cmpxchg8b", "an i486 has no CMPXCHG8B (Pentium)"}},
    {X86_INS_CMPXCHG16B, {"cmpxchg16b", "an i486 has no CMPXCHG16B"}},
    {X86_INS_SYSENTER, {"sysenter", "an i486 has no SYSENTER (Pentium II)"}},
    {X86_INS_SYSEXIT, {"sysexit", "an i486 has no SYSEXIT (Pentium II)"}},
    {X86_INS_SYSCALL, {"syscall", "an i486 has no SYSCALL"}},
    {X86_INS_SYSRET, {"sysret", "an i486 has no SYSRET"}},
    {X86_INS_FCOMI, {"fcomi", "an i486 has no FCOMI (P6)"}},
    {X86_INS_FCOMIP, {"fcomi", "an i486 has no FCOMIP (P6)"}},
    {X86_INS_FUCOMI, {"fcomi", "an i486 has no FUCOMI (P6)"}},
    {X86_INS_FUCOMIP, {"fcomi", "an i486 has no FUCOMIP (P6)"}},
    {X86_INS_FCMOVB, {"fcmov", "an i486 has no FCMOVcc (P6)"}},
    {X86_INS_FCMOVBE, {"fcmov", "an i486 has no FCMOVcc (P6)"}},
    {X86_INS_FCMOVE, {"fcmov", "an i486 has no FCMOVcc (P6)"}},
    {X86_INS_FCMOVNB, {"fcmov", "an i486 has no FCMOVcc (P6)"}},
    {X86_INS_FCMOVNBE, {"fcmov", "an i486 has no FCMOVcc (P6)"}},
    {X86_INS_FCMOVNE, {"fcmov", "an i486 has no FCMOVcc (P6)"}},
    {X86_INS_FCMOVNU, {"fcmov", "an i486 has no FCMOVcc (P6)"}},
    {X86_INS_FCMOVU, {"fcmov", "an i486 has no FCMOVcc (P6)"}},
    {X86_INS_FISTTP, {"fisttp", "an i486 has no FISTTP (SSE3)"}},
    {X86_INS_FXSAVE, {"fxsave", "an i486 has no FXSAVE (Pentium II)"}},
    {X86_INS_FXSAVE64, {"fxsave", "an i486 has no FXSAVE"}},
    {X86_INS_FXRSTOR, {"fxrstor", "an i486 has no FXRSTOR (Pentium II)"}},
    {X86_INS_FXRSTOR64, {"fxrstor", "an i486 has no FXRSTOR"}},
    {X86_INS_XSAVE, {"xsave", "an i486 has no XSAVE"}},
    {X86_INS_XSAVEOPT, {"xsave", "an i486 has no XSAVEOPT"}},
    {X86_INS_XSAVEC, {"xsave", "an i486 has no XSAVEC"}},
    {X86_INS_XSAVES, {"xsave", "an i486 has no XSAVES"}},
    {X86_INS_XRSTOR, {"xrstor", "an i486 has no XRSTOR"}},
    {X86_INS_XRSTORS, {"xrstor", "an i486 has no XRSTORS"}},
    {X86_INS_XGETBV, {"xgetbv", "an i486 has no XGETBV"}},
    {X86_INS_XSETBV, {"xsetbv", "an i486 has no XSETBV"}},
    {X86_INS_LFENCE, {"fence", "an i486 has no LFENCE (SSE2)"}},
    {X86_INS_MFENCE, {"fence", "an i486 has no MFENCE (SSE2)"}},
    {X86_INS_SFENCE, {"fence", "an i486 has no SFENCE (SSE)"}},
    {X86_INS_CLFLUSH, {"clflush", "an i486 has no CLFLUSH (SSE2)"}},
    {X86_INS_CLFLUSHOPT, {"clflush", "an i486 has no CLFLUSHOPT"}},
    {X86_INS_CLWB, {"clflush", "an i486 has no CLWB"}},
    {X86_INS_PREFETCH, {"prefetch", "an i486 has no PREFETCH (3DNow!)"}},
    {X86_INS_PREFETCHW, {"prefetch", "an i486 has no PREFETCHW"}},
    {X86_INS_PREFETCHNTA, {"prefetch", "an i486 has no PREFETCHNTA (SSE)"}},
    {X86_INS_PREFETCHT0, {"prefetch", "an i486 has no PREFETCHT0 (SSE)"}},
    {X86_INS_PREFETCHT1, {"prefetch", "an i486 has no PREFETCHT1 (SSE)"}},
    {X86_INS_PREFETCHT2, {"prefetch", "an i486 has no PREFETCHT2 (SSE)"}},
    {X86_INS_POPCNT, {"popcnt", "an i486 has no POPCNT"}},
    {X86_INS_LZCNT, {"lzcnt", "an i486 has no LZCNT"}},
    {X86_INS_TZCNT, {"tzcnt", "an i486 has no TZCNT"}},
    {X86_INS_MOVBE, {"movbe", "an i486 has no MOVBE"}},
    {X86_INS_CRC32, {"crc32", "an i486 has no CRC32 (SSE4.2)"}},
    {X86_INS_MONITOR, {"monitor", "an i486 has no MONITOR (SSE3)"}},
    {X86_INS_MWAIT, {"mwait", "an i486 has no MWAIT (SSE3)"}},
    {X86_INS_RDRAND, {"rdrand", "an i486 has no RDRAND"}},
    {X86_INS_RDSEED, {"rdseed", "an i486 has no RDSEED"}},
    {X86_INS_MOVNTI, {"movnti", "an i486 has no MOVNTI (SSE2)"}},
    {X86_INS_CLAC, {"clac", "an i486 has no CLAC (SMAP)"}},
    {X86_INS_STAC, {"stac", "an i486 has no STAC (SMAP)"}},
    {X86_INS_ENDBR32, {"endbr", "an i486 has no ENDBR32 (CET; build with -fcf-protection=none)"}},
    {X86_INS_ENDBR64, {"endbr", "an i486 has no ENDBR64"}},
    {X86_INS_UD0, {"ud0", "UD0 (0F FF) is not UD2: an i486 traps on it, by accident"}},
    {X86_INS_XBEGIN, {"rtm", "an i486 has no XBEGIN (TSX)"}},
    {X86_INS_XEND, {"rtm", "an i486 has no XEND (TSX)"}},
    {X86_INS_XABORT, {"rtm", "an i486 has no XABORT (TSX)"}},
    {X86_INS_XTEST, {"rtm", "an i486 has no XTEST (TSX)"}},
    {X86_INS_INVPCID, {"invpcid", "an i486 has no INVPCID"}},
    {X86_INS_GETSEC, {"getsec", "an i486 has no GETSEC (SMX)"}},
    {X86_INS_VMCALL, {"vm", "an i486 has no VMX"}},
};

// Extension sets an i486 lacks, by Capstone group.
struct GroupRule {
  uint8_t group;
  Rule rule;
};
constexpr GroupRule kGroupRules[] = {
    {X86_GRP_CMOV, {"cmov", "an i486 has no CMOVcc (P6)"}},
    {X86_GRP_MMX, {"mmx", "an i486 has no MMX"}},
    {X86_GRP_3DNOW, {"3dnow", "an i486 has no 3DNow!"}},
    {X86_GRP_SSE1, {"sse", "an i486 has no SSE"}},
    {X86_GRP_SSE2, {"sse", "an i486 has no SSE2"}},
    {X86_GRP_SSE3, {"sse", "an i486 has no SSE3"}},
    {X86_GRP_SSSE3, {"sse", "an i486 has no SSSE3"}},
    {X86_GRP_SSE41, {"sse", "an i486 has no SSE4.1"}},
    {X86_GRP_SSE42, {"sse", "an i486 has no SSE4.2"}},
    {X86_GRP_SSE4A, {"sse", "an i486 has no SSE4a"}},
    {X86_GRP_AVX, {"avx", "an i486 has no AVX"}},
    {X86_GRP_AVX2, {"avx", "an i486 has no AVX2"}},
    {X86_GRP_AVX512, {"avx", "an i486 has no AVX-512"}},
    {X86_GRP_FMA, {"avx", "an i486 has no FMA"}},
    {X86_GRP_FMA4, {"avx", "an i486 has no FMA4"}},
    {X86_GRP_F16C, {"avx", "an i486 has no F16C"}},
    {X86_GRP_XOP, {"avx", "an i486 has no XOP"}},
    {X86_GRP_AES, {"sse", "an i486 has no AES-NI"}},
    {X86_GRP_PCLMUL, {"sse", "an i486 has no PCLMULQDQ"}},
    {X86_GRP_SHA, {"sse", "an i486 has no SHA extensions"}},
    {X86_GRP_BMI, {"bmi", "an i486 has no BMI"}},
    {X86_GRP_BMI2, {"bmi", "an i486 has no BMI2"}},
    {X86_GRP_TBM, {"bmi", "an i486 has no TBM"}},
    {X86_GRP_ADX, {"adx", "an i486 has no ADX"}},
    {X86_GRP_VM, {"vm", "an i486 has no virtualization extensions"}},
    {X86_GRP_SGX, {"sgx", "an i486 has no SGX"}},
    {X86_GRP_RTM, {"rtm", "an i486 has no TSX"}},
    {X86_GRP_FSGSBASE, {"fsgsbase", "an i486 has no FSGSBASE"}},
    {X86_GRP_SMAP, {"smap", "an i486 has no SMAP instructions"}},
    {X86_GRP_MODE64, {"mode64", "64-bit-mode only"}},
};

constexpr Rule kHintRule = {
    "nopl", "an i486 has no opcode 0F 18-1F (multi-byte NOP, PREFETCHh, ENDBR; P6)"};
constexpr Rule kVectorRegisterRule = {"sse", "an i486 has no MMX, XMM, YMM, ZMM or mask registers"};
constexpr Rule kUndecodableRule = {"undecodable", "not an instruction: an i486 raises #UD"};

// Whether register `reg` is one an i486 lacks (MMX, XMM, YMM, ZMM, mask), from its name.
bool IsVectorRegister(csh handle, unsigned reg) {
  static std::array<int8_t, X86_REG_ENDING> known{};  // 0 unknown, 1 yes, -1 no
  if (reg == X86_REG_INVALID || reg >= X86_REG_ENDING) return false;
  if (known[reg] == 0) {
    const char* name = cs_reg_name(handle, reg);
    const std::string n = name ? name : "";
    const bool vector = absl::StartsWith(n, "mm") || absl::StartsWith(n, "xmm") ||
                        absl::StartsWith(n, "ymm") || absl::StartsWith(n, "zmm") ||
                        (n.size() == 2 && n[0] == 'k' && n[1] >= '0' && n[1] <= '7') ||
                        n == "mxcsr";
    known[reg] = vector ? 1 : -1;
  }
  return known[reg] == 1;
}

// The opcode byte after the legacy prefixes, and the one after it (0 past the end).
std::pair<uint8_t, uint8_t> OpcodeBytes(const uint8_t* bytes, size_t size) {
  size_t i = 0;
  while (i < size &&
         (bytes[i] == 0x66 || bytes[i] == 0x67 || bytes[i] == 0xF0 || bytes[i] == 0xF2 ||
          bytes[i] == 0xF3 || bytes[i] == 0x2E || bytes[i] == 0x36 || bytes[i] == 0x3E ||
          bytes[i] == 0x26 || bytes[i] == 0x64 || bytes[i] == 0x65)) {
    ++i;
  }
  return {i < size ? bytes[i] : 0, i + 1 < size ? bytes[i + 1] : 0};
}

// The rule `insn` breaks, or nullptr if an i486 runs it.
const Rule* Broken(csh handle, const cs_insn& insn) {
  // PAUSE (F3 90, musl's spin loops) is REP NOP to an i486, which ignores REP before a
  // non-string instruction: a NOP there, and in the core (docs/machines/i486-core.md).
  if (insn.id == X86_INS_PAUSE) return nullptr;
  const auto [op0, op1] = OpcodeBytes(insn.bytes, insn.size);
  if (op0 == 0x0F && op1 >= 0x18 && op1 <= 0x1F) return &kHintRule;
  for (const IdRule& r : kIdRules) {
    if (insn.id == static_cast<unsigned>(r.id)) return &r.rule;
  }
  const cs_detail& d = *insn.detail;
  for (int g = 0; g < d.groups_count; ++g) {
    for (const GroupRule& r : kGroupRules) {
      if (d.groups[g] == r.group) return &r.rule;
    }
  }
  for (int i = 0; i < d.x86.op_count; ++i) {
    const cs_x86_op& op = d.x86.operands[i];
    if (op.type == X86_OP_REG && IsVectorRegister(handle, op.reg)) return &kVectorRegisterRule;
    if (op.type == X86_OP_MEM && IsVectorRegister(handle, op.mem.index)) {
      return &kVectorRegisterRule;  // a vector SIB
    }
  }
  for (int i = 0; i < d.regs_read_count; ++i) {
    if (IsVectorRegister(handle, d.regs_read[i])) return &kVectorRegisterRule;
  }
  for (int i = 0; i < d.regs_write_count; ++i) {
    if (IsVectorRegister(handle, d.regs_write[i])) return &kVectorRegisterRule;
  }
  return nullptr;
}

bool Allowed(const Options& options, const std::string& name, const std::string& mnemonic) {
  for (const std::string& a : options.allow) {
    if (a == name || a == mnemonic) return true;
  }
  return false;
}

void Add(const Options& options, Result* result, const std::string& where, uint64_t address,
         std::string instruction, const Rule& rule, const std::string& mnemonic) {
  if (Allowed(options, rule.name, mnemonic)) {
    ++result->allowed;
    return;
  }
  result->findings.push_back({where, address, std::move(instruction), rule.name, rule.why});
}

uint32_t Le32(const std::string& b, size_t at) {
  return static_cast<uint8_t>(b[at]) | static_cast<uint8_t>(b[at + 1]) << 8 |
         static_cast<uint8_t>(b[at + 2]) << 16 | uint32_t{static_cast<uint8_t>(b[at + 3])} << 24;
}
uint16_t Le16(const std::string& b, size_t at) {
  return static_cast<uint16_t>(static_cast<uint8_t>(b[at]) | static_cast<uint8_t>(b[at + 1]) << 8);
}

constexpr uint32_t kShtProgbits = 1;
constexpr uint32_t kShfExecinstr = 0x4;
constexpr uint32_t kPtLoad = 1;
constexpr uint32_t kPfX = 0x1;

}  // namespace

void CheckCode(const uint8_t* code, size_t size, uint64_t address, const std::string& where,
               const Options& options, Result* result) {
  csh handle;
  if (cs_open(CS_ARCH_X86, CS_MODE_32, &handle) != CS_ERR_OK) {
    result->findings.push_back({where, address, "", "capstone", "Capstone does not open"});
    return;
  }
  cs_option(handle, CS_OPT_DETAIL, CS_OPT_ON);
  cs_insn* insn = cs_malloc(handle);
  const uint8_t* p = code;
  size_t left = size;
  uint64_t at = address;
  while (left > 0) {
    if (cs_disasm_iter(handle, &p, &left, &at, insn)) {
      ++result->instructions;
      if (const Rule* rule = Broken(handle, *insn)) {
        std::string text = insn->mnemonic;
        if (insn->op_str[0]) absl::StrAppend(&text, " ", insn->op_str);
        Add(options, result, where, insn->address, std::move(text), *rule, insn->mnemonic);
      }
      continue;
    }
    // Not decodable: one byte is a finding, and the sweep goes on after it.
    std::string bytes;
    for (size_t i = 0; i < std::min<size_t>(left, 4); ++i) {
      absl::StrAppend(&bytes, i ? " " : "", absl::Hex(p[i], absl::kZeroPad2));
    }
    Add(options, result, where, at, absl::StrCat("(bytes ", bytes, ")"), kUndecodableRule, "");
    ++p;
    --left;
    ++at;
  }
  cs_free(insn, 1);
  cs_close(&handle);
}

absl::Status CheckElf(const std::string& elf, const std::string& where, const Options& options,
                      Result* result) {
  if (elf.size() < 52 || elf[0] != '\x7F' || elf.compare(1, 3, "ELF") != 0) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": not an ELF file"));
  }
  if (elf[4] != 1 || elf[5] != 1 || Le16(elf, 18) != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": not an ELF32 little-endian i386 file (EM_386)"));
  }
  ++result->members;
  const uint16_t type = Le16(elf, 16);
  const uint32_t shoff = Le32(elf, 32);
  const uint16_t shentsize = Le16(elf, 46), shnum = Le16(elf, 48), shstrndx = Le16(elf, 50);
  if (shoff != 0 && shnum != 0) {
    if (shentsize < 40 || shoff + uint64_t{shnum} * shentsize > elf.size()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": section headers out of the file"));
    }
    std::string names;
    if (shstrndx < shnum) {
      const size_t sh = shoff + size_t{shstrndx} * shentsize;
      const uint32_t off = Le32(elf, sh + 16), size = Le32(elf, sh + 20);
      if (uint64_t{off} + size <= elf.size()) names = elf.substr(off, size);
    }
    for (uint16_t i = 0; i < shnum; ++i) {
      const size_t sh = shoff + size_t{i} * shentsize;
      const uint32_t name = Le32(elf, sh), sh_type = Le32(elf, sh + 4), flags = Le32(elf, sh + 8),
                     addr = Le32(elf, sh + 12), off = Le32(elf, sh + 16), size = Le32(elf, sh + 20);
      if (sh_type != kShtProgbits || !(flags & kShfExecinstr) || size == 0) continue;
      const std::string section =
          name < names.size() ? std::string(names.c_str() + name) : absl::StrCat("#", i);
      if (std::find(options.skip_sections.begin(), options.skip_sections.end(), section) !=
          options.skip_sections.end()) {
        continue;
      }
      if (uint64_t{off} + size > elf.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": section ", section, " out of the file"));
      }
      ++result->sections;
      // A relocatable object's sections all start at 0: name the section.
      const std::string at = type == 1 ? absl::StrCat(where, " ", section) : where;
      CheckCode(reinterpret_cast<const uint8_t*>(elf.data()) + off, size, addr, at, options,
                result);
    }
    return absl::OkStatus();
  }
  // No section headers: the executable segments.
  const uint32_t phoff = Le32(elf, 28);
  const uint16_t phentsize = Le16(elf, 42), phnum = Le16(elf, 44);
  if (phentsize < 32 || phoff + uint64_t{phnum} * phentsize > elf.size()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": program headers out of the file"));
  }
  for (uint16_t i = 0; i < phnum; ++i) {
    const size_t ph = phoff + size_t{i} * phentsize;
    const uint32_t p_type = Le32(elf, ph), off = Le32(elf, ph + 4), vaddr = Le32(elf, ph + 8),
                   filesz = Le32(elf, ph + 16), flags = Le32(elf, ph + 24);
    if (p_type != kPtLoad || !(flags & kPfX) || filesz == 0) continue;
    if (uint64_t{off} + filesz > elf.size()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": segment out of the file"));
    }
    ++result->sections;
    CheckCode(reinterpret_cast<const uint8_t*>(elf.data()) + off, filesz, vaddr, where, options,
              result);
  }
  return absl::OkStatus();
}

absl::StatusOr<Result> CheckFile(const std::string& path, const Options& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  const std::string file{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  Result result;
  if (file.compare(0, 8, "!<arch>\n") != 0) {
    if (absl::Status s = CheckElf(file, path, options, &result); !s.ok()) return s;
    return result;
  }
  // A static archive: 60-byte member headers, GNU long names in the "//" member.
  std::string long_names;
  size_t at = 8;
  while (at + 60 <= file.size()) {
    std::string name = file.substr(at, 16);
    uint64_t size = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(file.substr(at + 48, 10)), &size) ||
        at + 60 + size > file.size()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": bad archive member header"));
    }
    const std::string body = file.substr(at + 60, size);
    name = std::string(absl::StripTrailingAsciiWhitespace(name));
    if (name == "//") {
      long_names = body;
    } else if (name != "/" && name != "/SYM64/") {
      if (name.size() > 1 && name[0] == '/') {
        size_t offset = 0;
        if (absl::SimpleAtoi(name.substr(1), &offset) && offset < long_names.size()) {
          name = long_names.substr(offset, long_names.find('\n', offset) - offset);
        }
      }
      if (!name.empty() && name.back() == '/') name.pop_back();
      if (body.size() > 4 && body[0] == '\x7F' && body.compare(1, 3, "ELF") == 0) {
        if (absl::Status s = CheckElf(body, absl::StrCat(path, "(", name, ")"), options, &result);
            !s.ok()) {
          return s;
        }
      }
    }
    at += 60 + size + (size & 1);
  }
  return result;
}

std::string Describe(const Finding& f) {
  return absl::StrFormat("%s: 0x%08x: %s (%s)", f.where, f.address, f.instruction, f.why);
}

}  // namespace citcat::i486check
