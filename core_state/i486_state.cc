#include "core_state/i486_state.h"

#include <span>
#include <string>
#include <utility>

#include "machine/i486/contract.h"

namespace citcat::core_state {
namespace {

constexpr uint32_t kBig = 0x4000, kGranular = 0x8000;  // access_rights' D/B and G bits

x86::Segment SegmentOf(const ims::X86Segment& s) {
  return {static_cast<uint16_t>(s.selector()), s.base(), s.limit(), (s.access_rights() & kBig) != 0,
          static_cast<uint8_t>(s.access_rights())};
}

void SaveSegment(const x86::Segment& from, ims::X86Segment& to) {
  to.set_selector(from.selector);
  to.set_base(from.base);
  to.set_limit(from.limit);
  // G: a limit beyond 20 bits can only have come from 4 KB granularity.
  to.set_access_rights(from.access | (from.big ? kBig : 0) |
                       (from.limit > 0xFFFFF ? kGranular : 0));
}

}  // namespace

absl::Status LoadX86State(const ims::X86State& s, x86::Cpu& cpu) {
  for (int i = 0; i < 8; ++i) cpu.set_reg(i, s.gpr(i));
  cpu.set_eip(s.eip());
  cpu.set_eflags(s.eflags());
  const ims::X86Segment* segments[6] = {&s.es(), &s.cs(), &s.ss(), &s.ds(), &s.fs(), &s.gs()};
  for (int i = 0; i < 6; ++i) cpu.set_segment(i, SegmentOf(*segments[i]));
  cpu.set_gdtr({s.gdtr().base(), s.gdtr().limit(), 0});
  cpu.set_idtr({s.idtr().base(), s.idtr().limit(), 0});
  cpu.set_ldtr({s.ldtr().base(), s.ldtr().limit(), static_cast<uint16_t>(s.ldtr().selector())});
  // Type 9 and B are 32-bit TSSs, 1 and 3 16-bit ones.
  cpu.set_tr({s.tr().base(), s.tr().limit(), static_cast<uint16_t>(s.tr().selector())},
             (s.tr().access_rights() & 0x8) != 0);
  cpu.set_cr0(s.cr0());
  cpu.set_cr2(s.cr2());
  cpu.set_cr3(s.cr3());
  cpu.set_debug({s.dr(0), s.dr(1), s.dr(2), s.dr(3)}, s.dr(4), s.dr(5));
  const bool v86 = s.eflags() & x86::flag::kVM;
  cpu.set_cpl(cpu.real_mode() ? 0 : v86 ? 3 : static_cast<int>(s.cs().selector() & 3));
  x86::FpuState f;
  const ims::X87State& x = s.x87();
  for (int r = 0; r < 8; ++r) {
    const auto bytes = std::span(reinterpret_cast<const uint8_t*>(x.st(r).data()), 10);
    f.physical[r] = {i486::LoadLE(bytes.first(8)),
                     static_cast<uint16_t>(i486::LoadLE(bytes.last(2)))};
  }
  f.cw = static_cast<uint16_t>(x.control_word());
  f.sw = static_cast<uint16_t>(x.status_word());
  f.tw = static_cast<uint16_t>(x.tag_word());
  f.fcs = static_cast<uint16_t>(x.instruction_selector());
  f.fds = static_cast<uint16_t>(x.operand_selector());
  f.opcode = static_cast<uint16_t>(x.opcode());
  f.fip = x.instruction_pointer();
  f.fdp = x.operand_pointer();
  cpu.fpu().set_state(f);

  // After CR3 (whose load flushes the TLB): what a segment's start holds.
  x86::Tlb& tlb = cpu.tlb();
  for (const ims::X86TlbEntry& e : s.tlb()) {
    if (e.set() >= x86::Tlb::kSets || e.way() >= x86::Tlb::kWays ||
        x86::Tlb::SetOf(e.page()) != e.set()) {
      return absl::InvalidArgumentError("a TLB entry outside the i486 TLB's 8 sets of 4 ways");
    }
    tlb.WriteEntry(e.way(), e.page(), true, e.pte());
  }
  for (size_t set = 0; set < s.tlb_replacement().size() && set < x86::Tlb::kSets; ++set) {
    tlb.set_lru_bits(set, static_cast<uint8_t>(s.tlb_replacement()[set]));
  }
  x86::Cache& cache = cpu.cache();
  for (const ims::CacheLine& l : s.cache().lines()) {
    if (l.set() >= x86::Cache::kSets || l.way() >= x86::Cache::kWays ||
        l.data().size() != x86::Cache::kLineBytes ||
        x86::Cache::SetOf(static_cast<uint32_t>(l.address())) != l.set() || l.dirty()) {
      return absl::InvalidArgumentError(
          "a cache line outside the i486 cache's 128 sets of 4 ways of 16 bytes, or a dirty one "
          "(the i486 cache is write-through)");
    }
    cache.WriteLine(l.set(), l.way(), static_cast<uint32_t>(l.address()), true,
                    std::span<const uint8_t, x86::Cache::kLineBytes>(
                        reinterpret_cast<const uint8_t*>(l.data().data()), 16));
  }
  for (size_t set = 0; set < s.cache().replacement().size() && set < x86::Cache::kSets; ++set) {
    cache.set_lru_bits(set, static_cast<uint8_t>(s.cache().replacement()[set]));
  }
  if (s.test_registers_size() != 0) {
    if (s.test_registers_size() != 12) {
      return absl::InvalidArgumentError("the test registers need 12 doublewords");
    }
    x86::TestRegisters t;
    for (int i = 0; i < 4; ++i) {
      t.fill_buffer[i] = s.test_registers(i);
      t.read_buffer[i] = s.test_registers(4 + i);
    }
    t.tr4 = s.test_registers(8);
    t.tr5 = s.test_registers(9);
    t.tr6 = s.test_registers(10);
    t.tr7 = s.test_registers(11);
    cpu.set_test_registers(t);
  }
  cpu.set_interrupt_shadow(s.interrupt_shadow());
  cpu.set_halted(s.halted());
  cpu.set_nmi_blocked(s.nmi_blocked());
  return absl::OkStatus();
}

void SaveX86State(const x86::Cpu& cpu, ims::X86State& s) {
  s.Clear();
  for (int i = 0; i < 8; ++i) s.add_gpr(cpu.reg(i));
  s.set_eip(cpu.eip());
  s.set_eflags(cpu.eflags());
  ims::X86Segment* const segments[6] = {s.mutable_es(), s.mutable_cs(), s.mutable_ss(),
                                        s.mutable_ds(), s.mutable_fs(), s.mutable_gs()};
  for (int i = 0; i < 6; ++i) SaveSegment(cpu.segment(i), *segments[i]);
  s.mutable_gdtr()->set_base(cpu.gdtr().base);
  s.mutable_gdtr()->set_limit(cpu.gdtr().limit);
  s.mutable_idtr()->set_base(cpu.idtr().base);
  s.mutable_idtr()->set_limit(cpu.idtr().limit);
  s.mutable_ldtr()->set_selector(cpu.ldtr().selector);
  s.mutable_ldtr()->set_base(cpu.ldtr().base);
  s.mutable_ldtr()->set_limit(cpu.ldtr().limit);
  s.mutable_ldtr()->set_access_rights(0x82);
  s.mutable_tr()->set_selector(cpu.tr().selector);
  s.mutable_tr()->set_base(cpu.tr().base);
  s.mutable_tr()->set_limit(cpu.tr().limit);
  s.mutable_tr()->set_access_rights(cpu.tss32() ? 0x8B : 0x83);  // busy TSS
  s.set_cr0(cpu.cr0());
  s.set_cr2(cpu.cr2());
  s.set_cr3(cpu.cr3());
  for (uint32_t d : cpu.dr()) s.add_dr(d);
  s.add_dr(cpu.dr6());
  s.add_dr(cpu.dr7());
  const x86::FpuState f = cpu.fpu().state();
  ims::X87State& x = *s.mutable_x87();
  for (int r = 0; r < 8; ++r) {
    std::string bytes(10, '\0');
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(f.physical[r].signif >> (8 * i));
    bytes[8] = static_cast<char>(f.physical[r].sign_exp);
    bytes[9] = static_cast<char>(f.physical[r].sign_exp >> 8);
    x.add_st(bytes);
  }
  x.set_control_word(f.cw);
  x.set_status_word(f.sw);
  x.set_tag_word(f.tw);
  x.set_instruction_selector(f.fcs);
  x.set_operand_selector(f.fds);
  x.set_opcode(f.opcode);
  x.set_instruction_pointer(f.fip);
  x.set_operand_pointer(f.fdp);

  const x86::Tlb& tlb = cpu.paging().tlb();
  std::string tlb_lru(x86::Tlb::kSets, '\0');
  for (uint32_t set = 0; set < x86::Tlb::kSets; ++set) {
    tlb_lru[set] = static_cast<char>(tlb.lru_bits(set));
    for (uint32_t way = 0; way < x86::Tlb::kWays; ++way) {
      const x86::TlbEntry& e = tlb.entry(set, way);
      if (!e.valid()) continue;
      ims::X86TlbEntry& out = *s.add_tlb();
      out.set_set(set);
      out.set_way(way);
      out.set_page(e.page & x86::kPteFrame);
      out.set_pte(e.pte);
    }
  }
  if (tlb_lru.find_first_not_of('\0') != std::string::npos) s.set_tlb_replacement(tlb_lru);
  const x86::Cache& cache = cpu.cache();
  ims::CacheContents contents;
  std::string cache_lru(x86::Cache::kSets, '\0');
  for (uint32_t set = 0; set < x86::Cache::kSets; ++set) {
    cache_lru[set] = static_cast<char>(cache.lru_bits(set));
    for (uint32_t way = 0; way < x86::Cache::kWays; ++way) {
      if (!cache.valid(set, way)) continue;
      ims::CacheLine& l = *contents.add_lines();
      l.set_set(set);
      l.set_way(way);
      l.set_address(cache.line_address(set, way));
      l.set_data(reinterpret_cast<const char*>(cache.line_data(set, way)), x86::Cache::kLineBytes);
    }
  }
  if (cache_lru.find_first_not_of('\0') != std::string::npos) contents.set_replacement(cache_lru);
  // After RESET or a flush there is nothing to say: the state is as a begin-of-trace IMS has it.
  if (contents.lines_size() != 0 || !contents.replacement().empty()) {
    *s.mutable_cache() = std::move(contents);
  }
  const x86::TestRegisters& t = cpu.test_registers();
  if (t != x86::TestRegisters()) {
    for (uint32_t v : t.fill_buffer) s.add_test_registers(v);
    for (uint32_t v : t.read_buffer) s.add_test_registers(v);
    for (uint32_t v : {t.tr4, t.tr5, t.tr6, t.tr7}) s.add_test_registers(v);
  }
  s.set_interrupt_shadow(cpu.interrupt_shadow());
  s.set_halted(cpu.halted());
  s.set_nmi_blocked(cpu.nmi_blocked());
}

}  // namespace citcat::core_state
