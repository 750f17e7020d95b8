#include "tests/simcore/x86_rom_lockstep.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "machine/elf_loader.h"

namespace citcat::x86::testing {

namespace {

// Whether TR names a 16-bit TSS (descriptor types 1 and 3).
bool In16BitTask(const Cpu& cpu, PcBus& bus) {
  if (cpu.tr().selector == 0) return false;
  const uint32_t type = bus.ByteAt(cpu.gdtr().base + (cpu.tr().selector & ~7u) + 5) & 0x0F;
  return type == 1 || type == 3;
}

}  // namespace

Lockstep RunLockstep(const std::string& rom, const std::vector<OracleState>& oracle,
                     const LockstepOptions& options) {
  const std::string& oracle_name = options.oracle;
  Lockstep run;
  if (oracle.size() < 10) {
    run.error = absl::StrCat(oracle_name, " ran ", oracle.size(), " instructions");
    return run;
  }
  absl::StatusOr<machine::ElfImage> elf = machine::LoadElfFile(rom);
  if (!elf.ok()) {
    run.error = std::string(elf.status().message());
    return run;
  }
  PcBus bus;
  bus.rom_writable = options.rom_writable;
  for (const machine::ElfSegment& s : elf->segments) {
    bus.Poke(static_cast<uint32_t>(s.vaddr), s.data);
  }
  bus.Poke(options.patch_address, options.patch);
  for (const machine::ElfSymbol& s : elf->symbols) {
    run.symbols[s.name] = static_cast<uint32_t>(s.value);
  }
  Cpu cpu(bus);
  cpu.set_deliver_interrupts(true);
  // EDX at RESET names the processor's model: the oracle's, not the core's i486DX.
  cpu.set_reg(kEdx, oracle[0].gpr[kEdx]);
  uint32_t undefined = 0;
  uint16_t task = cpu.tr().selector;
  // A register the last instruction left partly undefined, and those bits.
  int undefined_register = -1;
  uint32_t undefined_bits = 0;
  for (size_t i = 0; i < oracle.size(); ++i) {
    const OracleState& q = oracle[i];
    if (options.rep_count_check_records && i > 0 && q.eip == oracle[i - 1].eip &&
        cpu.eip() != q.eip && (q.gpr[kEcx] & 0xFFFF) == 0) {
      continue;
    }
    if (undefined_register >= 0) {
      const uint32_t r = static_cast<uint32_t>(undefined_register);
      cpu.set_reg(r, (cpu.reg(r) & ~undefined_bits) | (q.gpr[r] & undefined_bits));
      undefined_register = -1;
    }
    if (cpu.tr().selector != task) {
      task = cpu.tr().selector;
      if (In16BitTask(cpu, bus)) {
        for (int r = 0; r < 8; ++r) {
          cpu.set_reg(r, (q.gpr[r] & 0xFFFF0000u) | (cpu.reg(r) & 0xFFFF));
        }
      }
    }
    // Flags an instruction left undefined take the oracle's values, so that an instruction that
    // reads them (PUSHF, SETcc, ADC, a Jcc) sees the same on both.
    cpu.set_eflags((cpu.eflags() & ~undefined) | (q.eflags & undefined));
    std::string diff;
    const auto check = [&](const std::string& what, uint32_t ours, uint32_t theirs) {
      if (diff.empty() && ours != theirs) {
        diff = absl::StrFormat("%s is %#x, %s %#x", what, ours, oracle_name, theirs);
      }
    };
    check("EIP", cpu.eip(), q.eip);
    static constexpr const char* kGpr[8] = {"EAX", "ECX", "EDX", "EBX", "ESP", "EBP", "ESI", "EDI"};
    for (int r = 0; r < 8; ++r) check(kGpr[r], cpu.reg(r), q.gpr[r]);
    // RF: the core clears it as an instruction completes, Bochs as it begins (Intel SDM vol. 3,
    // 17.3.1.1: "at the start of the instruction"), and QEMU never sets it for an event; no
    // instruction can read it, and the images events save are compared where the oracle shows
    // memory (Bochs).
    const uint32_t compared_flags = ~(undefined | flag::kRF);
    check("EFLAGS", cpu.eflags() & compared_flags, q.eflags & compared_flags);
    if (q.has_system) {
      check("CPL", cpu.cpl(), q.cpl);
      static constexpr const char* kSeg[6] = {"ES", "CS", "SS", "DS", "FS", "GS"};
      for (int s = 0; s < 6; ++s) {
        check(absl::StrCat(kSeg[s], " selector"), cpu.segment(s).selector, q.selector[s]);
        check(absl::StrCat(kSeg[s], " base"), cpu.segment(s).base, q.base[s]);
      }
      check("LDTR selector", cpu.ldtr().selector, q.selector[6]);
      check("LDTR base", cpu.ldtr().base, q.base[6]);
      check("TR selector", cpu.tr().selector, q.selector[7]);
      check("TR base", cpu.tr().base, q.base[7]);
      check("CR0", cpu.cr0(), q.cr0);
      check("CR2", cpu.cr2(), q.cr2);
      check("CR3", cpu.cr3(), q.cr3);
      check("DR6", cpu.dr6(), q.dr6);
      check("DR7", cpu.dr7(), q.dr7);
    } else {
      check("CS selector", cpu.segment(kCs).selector, q.selector[kCs]);
    }
    if (!diff.empty()) {
      run.difference = diff;
      run.index = i;
      run.eip = q.eip;
      run.cs = q.selector[kCs];
      return run;
    }
    ++run.compared;
    if (i + 1 == oracle.size() && !options.run_last) break;
    const uint32_t linear = cpu.segment(kCs).base + cpu.eip();
    const Instruction in = Decode(bus.Bytes(linear), kMaxInstructionLength, cpu.segment(kCs).big);
    undefined = (undefined & ~(FlagsWritten(in) & ~FlagsUndefined(in))) | FlagsUndefined(in);
    cpu.Run(1);
    if (in.op == Op::kLar && in.opsize == 4 && (cpu.eflags() & flag::kZF)) {
      // A 32-bit LAR masks the descriptor's second dword with 00FxFF00h: bits 19:16 undefined.
      undefined_register = in.reg;
      undefined_bits = 0x000F0000;
    } else if (in.op == Op::kBswap && in.opsize == 2) {
      // BSWAP of a 16-bit register: "the result is undefined".
      undefined_register = in.reg;
      undefined_bits = ~0u;
    }
    if (cpu.exception().pending) {
      run.error =
          absl::StrFormat("instruction %d at %08x stopped the core (vector %d%s)", i, q.eip,
                          cpu.exception().vector, cpu.exception().unmodelled ? ", unmodelled" : "");
      return run;
    }
  }
  if (options.at_end) options.at_end(cpu, bus);
  return run;
}

std::string Describe(const std::string& name, const Lockstep& run) {
  if (!run.error.empty()) return absl::StrCat(name, ": ", run.error);
  if (run.difference.empty()) return "";
  return absl::StrFormat("%s: before instruction %d at %04x:%08x: %s", name, run.index, run.cs,
                         run.eip, run.difference);
}

std::string FirstDifferenceIs(const Lockstep& run, const std::string& oracle,
                              const std::string& what, const std::string& ours,
                              const std::string& theirs) {
  if (!run.error.empty()) return run.error;
  const auto value = [&](const std::string& v) -> std::string {
    uint32_t n = 0;
    if (absl::StartsWith(v, "0x") && absl::SimpleHexAtoi(v.substr(2), &n)) {
      return absl::StrFormat("%#x", n);
    }
    if (!run.symbols.count(v)) return absl::StrCat("(no label ", v, ")");
    return absl::StrFormat("%#x", run.symbols.at(v));
  };
  const std::string expected =
      absl::StrCat(what, " is ", value(ours), ", ", oracle, " ", value(theirs));
  if (run.difference != expected) {
    return absl::StrCat("the first difference is \"", run.difference, "\", not \"", expected, "\"");
  }
  if (run.compared <= 20) return absl::StrCat("only ", run.compared, " instructions agreed first");
  return "";
}

}  // namespace citcat::x86::testing
