#include "core_state/r4400_state.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace citcat::core_state {
namespace {

constexpr uint32_t kHardwareIp = 0xFC00;  // Cause.IP7..IP2: device lines replay does not model

// Lines of `contents` into `cache`. A primary cache is indexed by the virtual address, so only
// the index bits inside a 4 KB page must agree with the physical address; the secondary cache is
// indexed by the physical address, whose index bits below 128 KB (what its Index_Store_Tag keeps
// of the index) must agree.
absl::Status LoadLines(const ims::CacheContents& contents, const char* name, bool physical,
                       mips::Cache& cache) {
  const uint32_t line = cache.line_bytes();
  // The address bits the index must match.
  const uint64_t fixed = std::min<uint64_t>(cache.size(), physical ? 0x20000 : 0x1000) - 1;
  auto refuse = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat("IMS mips.", name, ": ", what,
                                                   "; the cache has ", cache.num_lines(),
                                                   " lines of ", line, " bytes, direct-mapped"));
  };
  if (!contents.replacement().empty()) {
    return refuse("replacement bits for a direct-mapped cache");
  }
  std::vector<bool> seen(cache.num_lines());
  for (const ims::CacheLine& l : contents.lines()) {
    const std::string which = absl::StrCat("the line at set ", l.set(), ", way ", l.way(),
                                           ", address 0x", absl::Hex(l.address()));
    if (l.set() >= cache.num_lines() || l.way() != 0)
      return refuse(absl::StrCat(which, " is outside it"));
    if (l.data().size() != line) {
      return refuse(absl::StrCat(which, " has ", l.data().size(), " bytes"));
    }
    if (l.address() % line != 0 ||
        (l.address() & fixed) != ((uint64_t{l.set()} << cache.line_shift()) & fixed)) {
      return refuse(absl::StrCat(which, " does not belong in that set"));
    }
    if (l.dirty() && cache.instruction()) return refuse(absl::StrCat(which, " is dirty"));
    if (seen[l.set()]) return refuse(absl::StrCat(which, " is the second in its set"));
    seen[l.set()] = true;
    cache.line(l.set()) = {l.address() | 1, l.dirty()};
    std::memcpy(cache.LineData(l.set()), l.data().data(), line);
  }
  return absl::OkStatus();
}

// The valid lines of `cache`.
ims::CacheContents Lines(const mips::Cache& cache) {
  ims::CacheContents contents;
  for (uint32_t i = 0; i < cache.num_lines(); ++i) {
    if (!cache.valid(i)) continue;
    ims::CacheLine& l = *contents.add_lines();
    l.set_set(i);
    l.set_address(cache.line_address(i));
    l.set_data(reinterpret_cast<const char*>(cache.LineData(i)), cache.line_bytes());
    l.set_dirty(cache.line(i).dirty);
  }
  return contents;
}

}  // namespace

absl::Status LoadMipsState(const ims::MipsState& s, uint64_t instructions, mips::Cpu& cpu) {
  for (int i = 1; i < 32; ++i) cpu.set_gpr(i, s.gpr(i));
  cpu.set_hi(s.hi());
  cpu.set_lo(s.lo());
  for (int i = 0; i < 32; ++i) cpu.fpu().set_raw_fgr(i, s.fgr(i));
  cpu.fpu().set_fcsr(s.fcr31());
  for (int i = 0; i < mips::Tlb::kEntries; ++i) {
    const ims::MipsTlbEntry& e = s.tlb(i);
    cpu.tlb().Write(i, static_cast<uint32_t>(e.page_mask()), e.entry_hi(), e.entry_lo0(),
                    e.entry_lo1());
  }
  // Random counts from the retired count it is loaded at.
  cpu.set_retired(instructions);
  const ims::MipsCp0& c = s.cp0();
  // Every CP0 register as the driver read it (or the core held it), read-only fields included.
  mips::Cpu::Cp0State cp0 = cpu.StoredCp0();
  cp0.index = c.index();
  cp0.random = c.random();
  cp0.page_mask = c.page_mask();
  cp0.wired = c.wired();
  cp0.count = c.count();
  cp0.compare = c.compare();
  cp0.status = c.status();
  // The dumped IP7..IP2 follow device lines; replay raises them only from the AES.
  cp0.cause = c.cause() & ~kHardwareIp;
  if (c.prid() != 0) cp0.prid = c.prid();
  cp0.config = c.config();
  cp0.lladdr = c.ll_addr();
  cp0.watch_lo = c.watch_lo();
  cp0.watch_hi = c.watch_hi();
  cp0.ecc = c.ecc();
  cp0.cache_err = c.cache_err();
  cp0.tag_lo = c.tag_lo();
  cp0.tag_hi = c.tag_hi();
  cp0.entry_lo0 = c.entry_lo0();
  cp0.entry_lo1 = c.entry_lo1();
  cp0.context = c.context();
  cp0.bad_vaddr = c.bad_vaddr();
  cp0.entry_hi = c.entry_hi();
  cp0.epc = c.epc();
  cp0.xcontext = c.xcontext();
  cp0.error_epc = c.error_epc();
  cp0.ll_bit = s.ll_bit();  // a begin-of-trace IMS has none (its dump refuses it)
  cpu.RestoreCp0(cp0);

  if (absl::Status st = LoadLines(s.primary_icache(), "primary_icache", false, cpu.icache());
      !st.ok()) {
    return st;
  }
  if (absl::Status st = LoadLines(s.primary_dcache(), "primary_dcache", false, cpu.dcache());
      !st.ok()) {
    return st;
  }
  if (cpu.scache() != nullptr) {
    if (absl::Status st =
            LoadLines(s.secondary_cache(), "secondary_cache", true, cpu.scache()->lines());
        !st.ok()) {
      return st;
    }
  } else if (s.secondary_cache().lines_size() != 0) {
    return absl::InvalidArgumentError(
        "IMS mips.secondary_cache has lines, but the machine has no secondary cache");
  }
  // The predecoded lines, the fetch window, the data keys and the cached translations follow the
  // lines and the TLB just written.
  cpu.CachesLoaded();
  if (!s.delay_slot() && s.branch_target() != 0) {
    return absl::InvalidArgumentError("IMS mips.branch_target is set without mips.delay_slot");
  }
  if (s.delay_slot()) {
    cpu.SetPcInDelaySlot(s.pc(), s.branch_target());
  } else {
    cpu.SetPc(s.pc());
  }
  return absl::OkStatus();
}

void SaveMipsState(const mips::Cpu& cpu, ims::MipsState& s) {
  s.Clear();
  for (int i = 0; i < 32; ++i) s.add_gpr(cpu.gpr(i));
  s.set_hi(cpu.hi());
  s.set_lo(cpu.lo());
  s.set_pc(cpu.pc());
  s.set_ll_bit(cpu.ll_bit());
  const mips::Cpu::Cp0State c0 = cpu.StoredCp0();
  ims::MipsCp0& c = *s.mutable_cp0();
  c.set_index(c0.index);
  c.set_random(c0.random);
  c.set_entry_lo0(c0.entry_lo0);
  c.set_entry_lo1(c0.entry_lo1);
  c.set_context(c0.context);
  c.set_page_mask(c0.page_mask);
  c.set_wired(c0.wired);
  c.set_bad_vaddr(c0.bad_vaddr);
  c.set_count(c0.count);
  c.set_entry_hi(c0.entry_hi);
  c.set_compare(c0.compare);
  c.set_status(c0.status);
  c.set_cause(c0.cause);
  c.set_epc(c0.epc);
  c.set_prid(c0.prid);
  c.set_config(c0.config);
  c.set_ll_addr(c0.lladdr);
  c.set_watch_lo(c0.watch_lo);
  c.set_watch_hi(c0.watch_hi);
  c.set_xcontext(c0.xcontext);
  c.set_ecc(c0.ecc);
  c.set_cache_err(c0.cache_err);
  c.set_tag_lo(c0.tag_lo);
  c.set_tag_hi(c0.tag_hi);
  c.set_error_epc(c0.error_epc);
  for (int i = 0; i < 32; ++i) s.add_fgr(cpu.fpu().raw_fgr(i));
  s.set_fcr31(cpu.fpu().fcsr());
  for (int i = 0; i < mips::Tlb::kEntries; ++i) {
    // As TLBR would read the entry: G in both EntryLo registers.
    const mips::TlbEntry& t = cpu.tlb().entry(i);
    ims::MipsTlbEntry* e = s.add_tlb();
    e->set_page_mask(t.page_mask);
    e->set_entry_hi(t.entry_hi);
    e->set_entry_lo0(t.entry_lo[0] | (t.global ? 1 : 0));
    e->set_entry_lo1(t.entry_lo[1] | (t.global ? 1 : 0));
  }
  if (cpu.in_delay_slot()) {
    s.set_delay_slot(true);
    s.set_branch_target(cpu.branch_target());
  }
  // An empty cache (after reset) leaves its field unset, as a begin-of-trace IMS has it.
  if (ims::CacheContents c = Lines(cpu.icache()); c.lines_size() != 0) {
    *s.mutable_primary_icache() = std::move(c);
  }
  if (ims::CacheContents c = Lines(cpu.dcache()); c.lines_size() != 0) {
    *s.mutable_primary_dcache() = std::move(c);
  }
  if (cpu.scache() != nullptr) {
    if (ims::CacheContents c = Lines(cpu.scache()->lines()); c.lines_size() != 0) {
      *s.mutable_secondary_cache() = std::move(c);
    }
  }
}

}  // namespace citcat::core_state
