// Replay's R4400 core adapter (docs/replay.md): what only the R4400 needs of the replay engine.
#include "replay/r4400_adapter.h"

#include <bit>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core_state/r4400_state.h"
#include "replay/divergence.h"
#include "replay/engine.h"
#include "simcore/mips/cpu.h"
#include "simcore/mips/disasm.h"
#include "traces/mips_recorder.h"

namespace citcat::replay {
namespace {

constexpr uint32_t kHardwareIp = 0xFC00;  // Cause.IP7..IP2: device lines replay does not model

std::string Hex(uint64_t v) { return absl::StrCat("0x", absl::Hex(v)); }

absl::StatusOr<mips::CpuConfig> Config(const ims::InitialMachineState& ims) {
  if (!ims.has_mips() || ims.description().machine() != ims::MACHINE_R4400) {
    return InvalidReplayInput("the IMS is not an R4400 state");
  }
  const ims::MachineDescription& d = ims.description();
  const ims::MipsState& s = ims.mips();
  if (s.gpr_size() != 32 || s.fgr_size() != 32 || s.tlb_size() != 48) {
    return InvalidReplayInput("the R4400 state needs 32 GPRs, 32 FGRs and 48 TLB entries");
  }
  mips::CpuConfig c;
  c.big_endian = d.byte_order() == ims::BYTE_ORDER_BIG;
  if (s.cp0().prid() != 0) c.prid = s.cp0().prid();
  bool icache = false, dcache = false;
  for (const ims::Cache& cache : d.caches()) {
    bool ok = cache.level() == 1 && (cache.line_bytes() == 16 || cache.line_bytes() == 32) &&
              cache.size_bytes() >= 4096 && cache.size_bytes() <= 65536 &&
              std::has_single_bit(cache.size_bytes()) && cache.ways() <= 1 &&
              !cache.write_through();
    if (!ok) return InvalidReplayInput("a cache the R4400 core does not model");
    if (cache.type() == ims::Cache::TYPE_INSTRUCTION) {
      c.icache_bytes = cache.size_bytes();
      c.icache_line = cache.line_bytes();
      icache = true;
    } else if (cache.type() == ims::Cache::TYPE_DATA) {
      c.dcache_bytes = cache.size_bytes();
      c.dcache_line = cache.line_bytes();
      dcache = true;
    } else {
      return InvalidReplayInput("a unified primary cache on an R4400");
    }
  }
  if (!icache || !dcache)
    return InvalidReplayInput("the machine description lacks a primary cache");
  if (absl::Status s = mips::ValidateCpuConfig(c); !s.ok()) return InvalidReplayInput(s.message());
  return c;
}

// The observer first: the call per instruction then needs no this-adjusting thunk.
class R4400Adapter final : public simcore::Observer, public CoreAdapter, public mips::Cp0Hooks {
 public:
  R4400Adapter(Engine& engine, bool observe, const mips::CpuConfig& config)
      : engine_(engine), observe_(observe), cpu_(engine, config) {
    if (observe_) disasm_ = std::make_unique<mips::Disassembler>();
    if (engine.options().sink != nullptr) {
      recorder_ = std::make_unique<traces::MipsRecorder>(*engine.options().sink, cpu_);
    }
  }

  // ---- CoreAdapter ----
  absl::Status Load(const ims::InitialMachineState& ims) override;
  void Run(uint64_t steps) override { cpu_.Run(steps); }
  void set_stop_branch_count(uint64_t count) override { cpu_.set_stop_branch_count(count); }
  void RequestStop() override { cpu_.RequestStop(); }
  uint64_t branch_count() const override { return cpu_.branch_count(); }
  uint64_t retired() const override { return cpu_.retired(); }
  uint64_t steps() const override { return cpu_.steps(); }
  uint64_t pc() const override { return cpu_.pc(); }
  void Inject(const aes::Interrupt& irq) override;
  const char* key_pc_name() const override { return "EPC"; }
  std::string Disassemble(uint64_t pc, std::span<const uint8_t> bytes) override {
    if (bytes.size() != 4) return "?";
    return disasm_->Text(pc, mips::BytesWord(bytes.data(), cpu_.big_endian()));
  }
  bool AtFlowBreak() const override { return cpu_.AtFlowBreak(); }
  bool LogInstructions(simcore::InstructionLog* log) override {
    if (recorder_) return false;
    cpu_.set_observer(nullptr);
    cpu_.set_instruction_log(log);
    return true;
  }
  absl::Status SaveState(ims::InitialMachineState& ims) const override {
    core_state::SaveMipsState(cpu_, *ims.mutable_mips());
    return absl::OkStatus();
  }
  absl::Status Finish() override {
    if (!recorder_) return absl::OkStatus();
    recorder_->Flush();
    return recorder_->status();
  }

  // ---- mips::Cp0Hooks ----
  uint32_t ReadCount(mips::Cpu&) override;
  void WriteCount(mips::Cpu&, uint32_t) override {}    // Count follows the outside world
  void WriteCompare(mips::Cpu&, uint32_t) override {}  // the timer comes from the AES
  uint32_t ReadCause(mips::Cpu&, uint32_t cause) override;

  void ExceptionEntered(mips::Cpu& cpu, mips::ExcCode code, uint64_t faulting_pc) override;

  // ---- simcore::Observer ----
  void OnInstruction(uint64_t pc, std::span<const uint8_t> bytes) override;
  void OnAccess(uint64_t address, int size, bool write, uint64_t value) override {
    if (recorder_) recorder_->OnAccess(address, size, write, value);
  }
  void OnEvent(simcore::EventKind kind, uint32_t code, uint64_t pc) override {
    if (recorder_) recorder_->OnEvent(kind, code, pc);
  }
  void OnRegister(uint16_t reg, uint64_t value) override { recorder_->OnRegister(reg, value); }
  bool WantsRegisters() const override { return recorder_ && recorder_->WantsRegisters(); }

 private:
  bool ExpectDelaySlot(const aes::Interrupt& irq) const;
  std::string EchoRaceHint() const;

  Engine& engine_;
  const bool observe_;
  mips::Cpu cpu_;
  // A trace from reset: no kernel echoes Cause, and the only interrupts the program may take
  // are its own software interrupts (the capture refuses device interrupts).
  bool from_reset_ = false;
  bool injecting_ = false;
  // An interrupt was entered from the schedule with Cause.IP entered_ip_, and the handler has
  // not read Cause yet.
  bool check_entry_ip_ = false;
  uint32_t entered_ip_ = 0;
  std::unique_ptr<mips::Disassembler> disasm_;
  std::unique_ptr<traces::MipsRecorder> recorder_;  // feeds the options' sink
};

absl::Status R4400Adapter::Load(const ims::InitialMachineState& ims) {
  const ims::MipsState& s = ims.mips();
  const aes::Schedule& aes = engine_.schedule();
  if (ims.start().from_reset() && (aes.interrupts() != 0 || aes.register_reads() != 0)) {
    // Nothing on the bus of a bare-metal program could have given them (no interrupt reports,
    // no echoes), and an interrupt whose handler stays in the caches would pass unseen.
    return InvalidReplayInput(
        "an R4400 trace from reset has no interrupts and no Count or Cause values in its "
        "schedule");
  }
  // Only a segment's start holds what the core had at a cut: no begin-of-trace driver leaves
  // a line in the caches or stops in a delay slot, and the count starts at 0 there.
  if (!ims.start().segment() &&
      (ims.start().instructions() != 0 || s.delay_slot() || s.primary_icache().lines_size() != 0 ||
       s.primary_dcache().lines_size() != 0 || s.secondary_cache().lines_size() != 0)) {
    return InvalidReplayInput(
        "the IMS holds retired instructions, a pending delay slot or cache lines, which only a "
        "segment's start (start.segment) has");
  }
  // A segment's start holds the instructions retired before it; Random counts from there.
  if (absl::Status st = core_state::LoadMipsState(s, ims.start().instructions(), cpu_); !st.ok()) {
    return InvalidReplayInput(st.message());
  }
  cpu_.set_branch_count(ims.start().branch_count());
  from_reset_ = ims.start().from_reset();
  cpu_.set_cp0_hooks(this);
  if (observe_) cpu_.set_observer(this);
  return absl::OkStatus();
}

// The interrupt report does not say whether the interrupted instruction was a delay slot (the
// boundary before a branch and the one before its slot share the key (branch count, EPC)); the
// handler's Cause echo does, in Cause.BD. It is the last Cause echo before the report.
bool R4400Adapter::ExpectDelaySlot(const aes::Interrupt& irq) const {
  if (irq.has_delay_slot()) return irq.delay_slot();
  aes::EventQueue<aes::RegisterRead>& reads = engine_.events().register_reads();
  bool bd = false;
  for (size_t i = 0; const aes::RegisterRead* r = reads.Peek(i); ++i) {
    if (r->cat_record() > irq.cat_record()) break;
    if (r->register_() == aes::RegisterRead::REGISTER_MIPS_CAUSE) bd = (r->value() >> 31) & 1;
  }
  return bd;
}

void R4400Adapter::Inject(const aes::Interrupt& irq) {
  const bool bd = ExpectDelaySlot(irq);
  aes::Interrupt key = irq;
  key.clear_cat_record();
  key.set_delay_slot(bd);
  engine_.NoteInterruptKey(key);
  auto at_boundary = [&] {
    return bd ? cpu_.in_delay_slot() && cpu_.pc() - 4 == irq.pc()
              : !cpu_.in_delay_slot() && cpu_.pc() == irq.pc();
  };
  // Between two branch-count increments execution is a straight line: step through it.
  const uint64_t before = engine_.interrupts_taken();
  while (!engine_.stopped() && engine_.interrupts_taken() == before &&
         cpu_.branch_count() == irq.branch_count() && !at_boundary()) {
    Run(1);
  }
  // Diverged, ended, or taken by the core itself.
  if (engine_.stopped() || engine_.interrupts_taken() != before) return;
  if (cpu_.branch_count() != irq.branch_count()) {
    engine_.Diverge(absl::StrCat("the schedule has an interrupt at branch count ",
                                 irq.branch_count(), ", EPC ", Hex(irq.pc()),
                                 bd ? " (delay slot)" : "", Engine::ReportedAt(irq),
                                 ", but the core never reached that boundary"));
    return;
  }
  const uint32_t ip = (irq.cause_ip() << mips::kCauseIpShift) & kHardwareIp;
  for (int line = 2; line <= 7; ++line) {
    if (ip & (1u << (mips::kCauseIpShift + line))) cpu_.SetInterruptLine(line, true);
  }
  const uint32_t status = cpu_.status();
  const bool can_take =
      (cpu_.cause() & status & 0xFF00) != 0 &&
      (status & (mips::kStatusIe | mips::kStatusExl | mips::kStatusErl)) == mips::kStatusIe;
  if (can_take) {
    injecting_ = true;
    Run(1);  // the step is the interrupt entry (ExceptionEntered checks and counts it)
    injecting_ = false;
    // Extraction took cause_ip from the handler's Cause echo; the entry must agree with it, or
    // the trace would show another Cause than the capture while the echo hides it.
    entered_ip_ = irq.cause_ip();
    check_entry_ip_ = true;
  }
  for (int line = 2; line <= 7; ++line) cpu_.SetInterruptLine(line, false);
  if (!can_take) {
    engine_.Diverge(absl::StrFormat(
        "the schedule has an interrupt (Cause.IP 0x%02x) at branch count %d, EPC %s%s, but there "
        "Status is 0x%08x and it cannot be taken",
        irq.cause_ip(), irq.branch_count(), Hex(irq.pc()), Engine::ReportedAt(irq), status));
  }
}

void R4400Adapter::ExceptionEntered(mips::Cpu& cpu, mips::ExcCode code, uint64_t faulting_pc) {
  if (engine_.tracing_text()) {
    engine_.TraceEvent(absl::StrCat(mips::ExceptionName(code), " (code ", static_cast<int>(code),
                                    ") at ", Hex(faulting_pc), ", EPC ", Hex(cpu.epc()), ", Cause ",
                                    Hex(cpu.cause()),
                                    code == mips::kExcInt && injecting_ ? ", from the AES" : ""));
  }
  if (code != mips::kExcInt) return;
  // Without the AES replay raises no device line, so this is a software interrupt (Cause.IP1..0),
  // the program's own doing: nothing in the schedule keys it.
  if (from_reset_ && !injecting_) return;
  aes::Interrupt key;
  key.set_branch_count(cpu.branch_count() - 1);  // exception entry counts as a control transfer
  key.set_pc(cpu.epc());
  engine_.InterruptTaken(key);
}

void R4400Adapter::OnInstruction(uint64_t pc, std::span<const uint8_t> bytes) {
  if (recorder_) {
    recorder_->OnInstruction(pc, bytes);
    if (!recorder_->status().ok()) engine_.Fail(recorder_->status());
  }
  engine_.Instruction(cpu_.retired(), pc, bytes);
}

// ---- CP0 values from the outside world ----

// A read whose echo store an interrupt delayed: the echo, and so the AES entry, then comes after
// the handler's own echoes. The contract rules this out (read and echo with interrupts masked);
// say so when it looks like the cause of a divergence.
std::string R4400Adapter::EchoRaceHint() const {
  const aes::Interrupt* irq = engine_.events().interrupts().Peek();
  if (irq == nullptr || irq->branch_count() != cpu_.branch_count() || irq->pc() != cpu_.pc() + 4) {
    return "";
  }
  return "; an interrupt is scheduled right after this read: taken between the read and its "
         "echo store, it puts the echo after the handler's (the traced kernel must read and "
         "echo with interrupts masked)";
}

uint32_t R4400Adapter::ReadCount(mips::Cpu&) {
  const aes::RegisterRead* r =
      engine_.TakeRegisterRead(aes::RegisterRead::REGISTER_MIPS_COUNT, "Count", EchoRaceHint());
  if (r == nullptr) return 0;
  const uint32_t count = static_cast<uint32_t>(r->value());
  if (engine_.tracing_text()) engine_.TraceEvent(absl::StrCat("Count = ", Hex(count)));
  return count;
}

uint32_t R4400Adapter::ReadCause(mips::Cpu&, uint32_t cause) {
  // From reset no device line was pending at a read of Cause (the capture refuses it), so the
  // core's own Cause is the one the program read.
  if (from_reset_) return cause;
  const aes::RegisterRead* r =
      engine_.TakeRegisterRead(aes::RegisterRead::REGISTER_MIPS_CAUSE, "Cause", EchoRaceHint());
  if (r == nullptr) return cause;
  const uint32_t echo = static_cast<uint32_t>(r->value());
  // Only IP7..IP2 come from the outside world; the rest is the core's own.
  if ((echo ^ cause) & ~kHardwareIp) {
    engine_.Diverge(absl::StrFormat(
        "the kernel read Cause as 0x%08x, the core's Cause is 0x%08x (outside IP7..IP2)", echo,
        cause));
  } else if (check_entry_ip_ && ((echo >> mips::kCauseIpShift) & 0xFF) != entered_ip_) {
    engine_.Diverge(absl::StrFormat(
        "the interrupt was entered with Cause.IP 0x%02x (the schedule's cause_ip), but the "
        "handler read Cause as 0x%08x",
        entered_ip_, echo));
  }
  check_entry_ip_ = false;
  if (engine_.tracing_text()) engine_.TraceEvent(absl::StrCat("Cause = ", Hex(echo)));
  return echo;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CoreAdapter>> MakeR4400Adapter(const ims::InitialMachineState& ims,
                                                              Engine& engine, bool observe) {
  absl::StatusOr<mips::CpuConfig> config = Config(ims);
  if (!config.ok()) return config.status();
  return std::make_unique<R4400Adapter>(engine, observe, *config);
}

}  // namespace citcat::replay
