#include "tests/simcore/x86_unicorn_lockstep.h"

#include <capstone/capstone.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace citcat::x86::testing {
namespace {

constexpr uint32_t kCompared = flag::kOSZAPC | flag::kDF;
constexpr const char* kGprName[8] = {"EAX", "ECX", "EDX", "EBX", "ESP", "EBP", "ESI", "EDI"};
constexpr uc_x86_reg kUcGpr[8] = {UC_X86_REG_EAX, UC_X86_REG_ECX, UC_X86_REG_EDX, UC_X86_REG_EBX,
                                  UC_X86_REG_ESP, UC_X86_REG_EBP, UC_X86_REG_ESI, UC_X86_REG_EDI};

// The opcode byte after any prefixes.
uint8_t OpcodeByte(const uint8_t* bytes) {
  int i = 0;
  while (i < kMaxInstructionLength - 1) {
    const uint8_t b = bytes[i];
    const bool prefix = b == 0x26 || b == 0x2E || b == 0x36 || b == 0x3E || b == 0x64 ||
                        b == 0x65 || b == 0x66 || b == 0x67 || b == 0xF0 || b == 0xF2 || b == 0xF3;
    if (!prefix) break;
    ++i;
  }
  return bytes[i];
}

bool IsX87(const uint8_t* bytes) {
  const uint8_t op = OpcodeByte(bytes);
  return (op >= 0xD8 && op <= 0xDF) || op == 0x9B;
}

}  // namespace

void RecordingBus::Read(const cat::BusRecord& r, std::span<uint8_t> data) {
  for (size_t i = 0; i < data.size(); ++i) {
    const uint64_t a = r.address + i;
    data[i] = r.kind != cat::RecordKind::kPortRead && a < ram_.size() ? ram_[a] : 0xFF;
  }
}

void RecordingBus::Write(const cat::BusRecord& r) {
  if (r.kind == cat::RecordKind::kPortWrite || r.address + r.data.size() > ram_.size()) return;
  std::memcpy(&ram_[r.address], r.data.data(), r.data.size());
  writes_.push_back({static_cast<uint32_t>(r.address), static_cast<uint32_t>(r.data.size())});
}

UnicornLockstep::UnicornLockstep(Mode mode, uint32_t ram_bytes)
    : mode_(mode), bus_(ram_bytes), cpu_(bus_), uc_ram_(ram_bytes, 0) {
  uc_open(UC_ARCH_X86, mode == Mode::kFlat32 ? UC_MODE_32 : UC_MODE_16, &uc_);
  uc_mem_map_ptr(uc_, 0, ram_bytes, UC_PROT_ALL, uc_ram_.data());
  uc_hook hook;
  uc_hook_add(uc_, &hook, UC_HOOK_CODE, reinterpret_cast<void*>(&OnCode), this, 1, 0);
  uc_hook_add(uc_, &hook, UC_HOOK_INTR, reinterpret_cast<void*>(&OnInterrupt), this, 1, 0);
  if (mode == Mode::kFlat32) {
    cpu_.SetFlat32();
  } else {
    cpu_.SetReal(0, 0, 0);
  }
  cpu_.fpu().Init();
  for (int r = 0; r < 8; ++r) SetReg(r, 0);
  SetEflags(2);
}

UnicornLockstep::~UnicornLockstep() { uc_close(uc_); }

void UnicornLockstep::Load(uint32_t address, std::span<const uint8_t> bytes) {
  std::copy(bytes.begin(), bytes.end(), bus_.ram().begin() + address);
  std::copy(bytes.begin(), bytes.end(), uc_ram_.begin() + address);
}

void UnicornLockstep::SetReg(int r, uint32_t value) {
  cpu_.set_reg(r, value);
  uc_reg_write(uc_, kUcGpr[r], &value);
}

void UnicornLockstep::SetEflags(uint32_t value) {
  cpu_.set_eflags(value);
  uc_reg_write(uc_, UC_X86_REG_EFLAGS, &value);
}

void UnicornLockstep::SetRealSegments(uint16_t cs, uint16_t ds, uint16_t ss) {
  cpu_.SetReal(cs, ds, ss);
  const uint32_t values[6] = {ds, cs, ss, ds, ds, ds};
  const uc_x86_reg regs[6] = {UC_X86_REG_ES, UC_X86_REG_CS, UC_X86_REG_SS,
                              UC_X86_REG_DS, UC_X86_REG_FS, UC_X86_REG_GS};
  for (int s = 0; s < 6; ++s) uc_reg_write(uc_, regs[s], &values[s]);
}

// Unicorn starts with a zero control word and all registers tagged valid: both get FNINIT's state.
void UnicornLockstep::CompareX87() {
  compare_x87_ = true;
  const uint32_t cw = 0x037F, sw = 0, tags = 0xFFFF;
  uc_reg_write(uc_, UC_X86_REG_FPCW, &cw);
  uc_reg_write(uc_, UC_X86_REG_FPSW, &sw);
  uc_reg_write(uc_, UC_X86_REG_FPTAG, &tags);
}

uint32_t UnicornLockstep::UcReg(uc_x86_reg r) const {
  uint32_t v = 0;
  uc_reg_read(uc_, r, &v);
  return v;
}

UnicornLockstep::Result UnicornLockstep::Run(uint32_t eip, uint32_t end, uint64_t max) {
  compared_ = x87_compared_ = 0;
  max_ = max;
  mismatch_.clear();
  fault_ = -1;
  uc_vector_ = -1;
  core_ahead_ = false;
  cpu_.set_eip(eip);
  bus_.writes().clear();
  const uint32_t cs_base = cpu_.segment(kCs).base;
  uint32_t start = cs_base + eip;
  while (true) {
    resume_ = true;  // the core is where Unicorn starts: nothing to step at the first hook
    sync_flags_ = stopped_ = false;
    const uc_err err = uc_emu_start(uc_, start, cs_base + end, 0, 0);
    if (!mismatch_.empty() || fault_ >= 0) break;
    if (err == UC_ERR_INSN_INVALID && !core_ahead_) {  // #UD ends Unicorn's run with this error
      FaultOnCore(kVecInvalidOpcode);
      break;
    }
    if (err != UC_ERR_OK) {
      Fail(absl::StrCat("Unicorn stopped: ", uc_strerror(err)));
      break;
    }
    if (sync_flags_) {
      // The core's flags (equal in every defined bit) to Unicorn, from outside the run.
      const uint32_t flags = cpu_.eflags();
      uc_reg_write(uc_, UC_X86_REG_EFLAGS, &flags);
      start = cs_base + UcReg(UC_X86_REG_EIP);
      continue;
    }
    if (stopped_) break;  // enough instructions
    // At `end` or after a HLT: the core runs the last instruction Unicorn ran.
    if (Linear() != cs_base + UcReg(UC_X86_REG_EIP) && !core_ahead_) {
      if (StepCore() && CompareState(true)) CompareMemory();
    } else if (core_ahead_) {
      CompareState(true);
    }
    break;
  }
  Result result;
  result.compared = compared_;
  result.x87_compared = x87_compared_;
  result.fault = fault_;
  result.halted = cpu_.halted();
  result.mismatch = mismatch_;
  if (result.mismatch.empty() && !SameRam()) result.mismatch = mismatch_;
  return result;
}

void UnicornLockstep::OnCode(uc_engine*, uint64_t address, uint32_t, void* self) {
  static_cast<UnicornLockstep*>(self)->Code(static_cast<uint32_t>(address));
}

void UnicornLockstep::Code(uint32_t linear) {
  if (resume_) {
    resume_ = false;
  } else if (core_ahead_) {
    core_ahead_ = false;
    if (!CompareState(true)) return;
  } else {
    if (!StepCore()) return;
    if (Linear() != linear && RepTail(linear)) {
      core_ahead_ = true;
      if (!CompareState(false)) return;
    } else if (!CompareState(true)) {
      return;
    }
    if (!CompareMemory()) return;
    if (compared_ % kRamCheckInterval == 0 && !SameRam()) return;
  }
  if (compared_ >= max_ || sync_flags_) {
    stopped_ = true;
    uc_emu_stop(uc_);
  }
}

// QEMU runs a REP string instruction once more after the iteration that left (E)CX zero; the
// core has gone on to the next instruction.
bool UnicornLockstep::RepTail(uint32_t linear) const {
  const Past& last = past_[(steps_ - 1) % past_.size()];
  if (last.linear != linear) return false;
  const Instruction in = Decode(last.bytes.data(), last.bytes.size(), mode_ == Mode::kFlat32);
  if (!(Facts(in.op).attrs & attr::kString) || !(in.prefixes & (prefix::kRep | prefix::kRepne))) {
    return false;
  }
  const uint32_t count = UcReg(UC_X86_REG_ECX);
  return (in.addrsize == 2 ? count & 0xFFFF : count) == 0;
}

bool UnicornLockstep::StepCore() {
  Past& p = past_[steps_++ % past_.size()];
  p.linear = Linear();
  const size_t n = std::min<size_t>(p.bytes.size(), bus_.ram().size() - p.linear);
  std::memcpy(p.bytes.data(), &bus_.ram()[p.linear], n);
  cpu_.Run(1);
  const Exception& e = cpu_.exception();
  if (e.pending) {
    if (e.unmodelled) {
      Fail("the core does not model the instruction");
      return false;
    }
    if (!e.trap) {
      Fail(absl::StrFormat("the core raised vector %d, Unicorn nothing", e.vector));
      return false;
    }
    if (uc_vector_ != e.vector) {
      Fail(absl::StrFormat("the core trapped to vector %d, Unicorn %d", e.vector, uc_vector_));
      return false;
    }
    cpu_.ClearException();
  } else if (uc_vector_ >= 0) {
    Fail(absl::StrFormat("Unicorn raised vector %d, the core nothing", uc_vector_));
    return false;
  }
  uc_vector_ = -1;
  ++compared_;
  return true;
}

void UnicornLockstep::OnInterrupt(uc_engine* uc, uint32_t vector, void* self) {
  auto* s = static_cast<UnicornLockstep*>(self);
  s->uc_vector_ = static_cast<int>(vector);
  // A trap (INT3, INTO) completed the instruction, and Unicorn goes on after it: the next code
  // hook steps the core through it. A fault left it undone: the core must raise the same one.
  const uint32_t eip = s->UcReg(UC_X86_REG_EIP);
  if (eip != s->cpu_.eip()) return;
  s->stopped_ = true;
  uc_emu_stop(uc);
  if (s->core_ahead_) {
    s->Fail("Unicorn faulted on the REP string instruction the core finished");
    return;
  }
  s->FaultOnCore(static_cast<int>(vector));
}

// Unicorn faulted with `vector` on the instruction the core is at: the core must too.
void UnicornLockstep::FaultOnCore(int vector) {
  Past& p = past_[steps_++ % past_.size()];
  p.linear = Linear();
  std::memcpy(p.bytes.data(), &bus_.ram()[p.linear], p.bytes.size());
  cpu_.Run(1);
  const Exception& e = cpu_.exception();
  if (!e.pending || e.trap || e.vector != vector) {
    Fail(absl::StrFormat("Unicorn faulted with vector %d, the core %s", vector,
                         e.pending ? absl::StrCat("with vector ", e.vector) : "did not"));
    return;
  }
  ++compared_;
  if (CompareState(true) && CompareMemory()) fault_ = vector;
}

bool UnicornLockstep::CompareState(bool compare_eip) {
  uc_x86_reg regs[10] = {UC_X86_REG_EAX, UC_X86_REG_ECX,   UC_X86_REG_EDX, UC_X86_REG_EBX,
                         UC_X86_REG_ESP, UC_X86_REG_EBP,   UC_X86_REG_ESI, UC_X86_REG_EDI,
                         UC_X86_REG_EIP, UC_X86_REG_EFLAGS};
  uint32_t values[10] = {};
  void* ptrs[10];
  for (int i = 0; i < 10; ++i) ptrs[i] = &values[i];
  uc_reg_read_batch(uc_, reinterpret_cast<int*>(regs), ptrs, 10);
  if (compare_eip && cpu_.eip() != values[8]) {
    Fail(absl::StrFormat("EIP: Unicorn %08x, core %08x", values[8], cpu_.eip()));
    return false;
  }
  for (int r = 0; r < 8; ++r) {
    if (cpu_.reg(r) != values[r]) {
      Fail(absl::StrFormat("%s: Unicorn %08x, core %08x", kGprName[r], values[r], cpu_.reg(r)));
      return false;
    }
  }
  const uint32_t differ = (cpu_.eflags() ^ values[9]) & kCompared;
  if (differ != 0) {
    const Past& last = past_[(steps_ - 1) % past_.size()];
    const Instruction in = Decode(last.bytes.data(), last.bytes.size(), mode_ == Mode::kFlat32);
    if (differ & ~FlagsUndefined(in)) {
      Fail(absl::StrFormat("EFLAGS: Unicorn %08x, core %08x (differ in %04x)", values[9],
                           cpu_.eflags(), differ));
      return false;
    }
    sync_flags_ = true;
  }
  if (compare_x87_ && IsX87(past_[(steps_ - 1) % past_.size()].bytes.data())) return CompareFpu();
  return true;
}

bool UnicornLockstep::CompareMemory() {
  bool same = true;
  for (const RecordingBus::Span& s : bus_.writes()) {
    for (uint32_t a = s.address; same && a < s.address + s.size; ++a) {
      if (uc_ram_[a] != bus_.ram()[a]) {
        Fail(absl::StrFormat("memory at %08x: Unicorn %02x, core %02x", a, uc_ram_[a],
                             bus_.ram()[a]));
        same = false;
      }
    }
  }
  bus_.writes().clear();
  return same;
}

// The whole RAM: catches what Unicorn wrote and the core did not.
bool UnicornLockstep::SameRam() {
  const auto [theirs, ours] = std::mismatch(uc_ram_.begin(), uc_ram_.end(), bus_.ram().begin());
  if (theirs == uc_ram_.end()) return true;
  Fail(absl::StrFormat("memory at %08x: Unicorn %02x, core %02x (found by the whole-RAM check)",
                       theirs - uc_ram_.begin(), *theirs, *ours));
  return false;
}

bool UnicornLockstep::CompareFpu() {
  ++x87_compared_;
  const Fpu& f = cpu_.fpu();
  const uint32_t cw = UcReg(UC_X86_REG_FPCW), sw = UcReg(UC_X86_REG_FPSW);
  if (cw != f.control_word()) {
    Fail(absl::StrFormat("FPU control word: Unicorn %04x, core %04x", cw, f.control_word()));
    return false;
  }
  // Unicorn 2.0.1's x87 (QEMU 5.0's) keeps no exception flags, and QEMU never sets C1 for a
  // result rounded up: TOP, C0, C2 and C3 are compared.
  constexpr uint16_t kSwCompared = 0x7D00;
  if ((sw ^ f.status_word()) & kSwCompared) {
    Fail(absl::StrFormat("FPU status word: Unicorn %04x, core %04x (compared bits %04x)", sw,
                         f.status_word(), kSwCompared));
    return false;
  }
  const uint32_t tags = UcReg(UC_X86_REG_FPTAG);
  for (int r = 0; r < 8; ++r) {
    const bool empty = ((f.tag_word() >> 2 * r) & 3) == 3, their_empty = ((tags >> 2 * r) & 3) == 3;
    if (empty != their_empty) {
      Fail(absl::StrFormat("FPU tag word: Unicorn %04x, core %04x", tags, f.tag_word()));
      return false;
    }
  }
  for (int i = 0; i < 8; ++i) {
    if (f.st_empty(i)) continue;
    uint8_t raw[10] = {};
    uc_reg_read(uc_, UC_X86_REG_ST0 + i, raw);  // ST(i), top-relative
    Float80 theirs;
    std::memcpy(&theirs.signif, raw, 8);
    std::memcpy(&theirs.sign_exp, raw + 8, 2);
    if (!(theirs == f.st(i))) {
      Fail(absl::StrFormat("ST(%d): Unicorn %04x:%016x, core %04x:%016x", i, theirs.sign_exp,
                           theirs.signif, f.st(i).sign_exp, f.st(i).signif));
      return false;
    }
  }
  return true;
}

void UnicornLockstep::Fail(const std::string& what) {
  if (!mismatch_.empty()) return;
  mismatch_ = absl::StrFormat("after %d instructions, at EIP %08x: %s\nthe last instructions:\n%s",
                              compared_, cpu_.eip(), what, History());
  stopped_ = true;
  uc_emu_stop(uc_);
}

// The last instructions the core ran, oldest first, disassembled by Capstone.
std::string UnicornLockstep::History() const {
  csh cs;
  if (cs_open(CS_ARCH_X86, mode_ == Mode::kFlat32 ? CS_MODE_32 : CS_MODE_16, &cs) != CS_ERR_OK) {
    return "";
  }
  std::string out;
  const uint64_t n = std::min<uint64_t>(steps_, past_.size());
  for (uint64_t i = steps_ - n; i < steps_; ++i) {
    const Past& p = past_[i % past_.size()];
    cs_insn* insn = nullptr;
    const size_t count = cs_disasm(cs, p.bytes.data(), p.bytes.size(), p.linear, 1, &insn);
    if (count == 1) {
      out += absl::StrFormat("  %08x  %s %s\n", p.linear, insn->mnemonic, insn->op_str);
    } else {
      out += absl::StrFormat("  %08x  (%02x %02x %02x)\n", p.linear, p.bytes[0], p.bytes[1],
                             p.bytes[2]);
    }
    cs_free(insn, count);
  }
  cs_close(&cs);
  return out;
}

void PrintCompared(const std::string& oracle, const std::string& what, uint64_t instructions,
                   const std::string& detail) {
  std::printf("COMPARED %s %s: %llu instructions (%s)\n", oracle.c_str(), what.c_str(),
              static_cast<unsigned long long>(instructions), detail.c_str());
  std::fflush(stdout);
}

}  // namespace citcat::x86::testing
