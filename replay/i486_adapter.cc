// Replay's i486 core adapter (docs/replay.md): what only the i486 needs of the replay engine.
#include "replay/i486_adapter.h"

#include <array>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core_state/i486_state.h"
#include "machine/i486/contract.h"
#include "replay/divergence.h"
#include "replay/engine.h"
#include "simcore/x86/cpu.h"
#include "simcore/x86/disasm.h"
#include "traces/x86_recorder.h"

namespace citcat::replay {
namespace {

std::string Hex(uint64_t v) { return absl::StrCat("0x", absl::Hex(v)); }

absl::Status CheckIms(const ims::InitialMachineState& ims) {
  if (!ims.has_x86() || ims.description().machine() != ims::MACHINE_I486) {
    return InvalidReplayInput("the IMS is not an i486 state");
  }
  const ims::X86State& s = ims.x86();
  if (s.gpr_size() != 8 || s.dr_size() != 6 || s.x87().st_size() != 8) {
    return InvalidReplayInput("the i486 state needs 8 GPRs, 6 debug registers and 8 x87 registers");
  }
  for (const std::string& r : s.x87().st()) {
    if (r.size() != 10) return InvalidReplayInput("an x87 register that is not 10 bytes");
  }
  const ims::MachineDescription& d = ims.description();
  if (d.caches_size() != 1 || d.caches(0).type() != ims::Cache::TYPE_UNIFIED ||
      d.caches(0).size_bytes() != 8192 || d.caches(0).line_bytes() != 16 ||
      d.caches(0).ways() != 4 || !d.caches(0).write_through()) {
    return InvalidReplayInput(
        "a cache the i486 core does not model (it has 8 KB, 4-way, 16-byte "
        "lines, write-through, unified)");
  }
  if (d.byte_order() != ims::BYTE_ORDER_LITTLE) return InvalidReplayInput("a big-endian i486");
  return absl::OkStatus();
}

class I486Adapter final : public CoreAdapter, public simcore::Observer {
 public:
  I486Adapter(Engine& engine, bool observe) : engine_(engine), observe_(observe), cpu_(engine) {
    if (engine.options().sink != nullptr) {
      recorder_ = std::make_unique<traces::X86Recorder>(*engine.options().sink, cpu_);
    }
    if (observe_) cpu_.set_observer(this);  // after the recorder: WantsRegisters asks it
  }

  // ---- CoreAdapter ----
  absl::Status Load(const ims::InitialMachineState& ims) override;
  void Run(uint64_t steps) override;
  void set_stop_branch_count(uint64_t count) override { cpu_.set_stop_branch_count(count); }
  void RequestStop() override { cpu_.RequestStop(); }
  uint64_t branch_count() const override { return cpu_.branch_count(); }
  uint64_t retired() const override { return cpu_.retired(); }
  uint64_t steps() const override { return cpu_.steps(); }
  uint64_t pc() const override { return cpu_.eip(); }
  void Inject(const aes::Interrupt& irq) override;
  // The traced PC's DMA snoops the cache line by line (docs/machines/i486-system.md).
  void MemoryWritten(uint64_t address, uint64_t size) override {
    const uint64_t line = x86::Cache::kLineBytes;
    for (uint64_t a = address & ~(line - 1); a < address + size; a += line) {
      cpu_.cache().SnoopInvalidate(static_cast<uint32_t>(a));
    }
  }
  const char* key_pc_name() const override { return "return EIP"; }
  std::string Disassemble(uint64_t pc, std::span<const uint8_t> bytes) override {
    return disasm_.Text(static_cast<uint32_t>(pc), bytes, cpu_.segment(x86::kCs).big);
  }
  bool AtFlowBreak() const override { return cpu_.AtFlowBreak(); }
  bool LogInstructions(simcore::InstructionLog* log) override {
    if (recorder_) return false;
    cpu_.set_observer(nullptr);
    cpu_.set_instruction_log(log);
    return true;
  }
  absl::Status SaveState(ims::InitialMachineState& ims) const override {
    core_state::SaveX86State(cpu_, *ims.mutable_x86());
    return absl::OkStatus();
  }
  absl::Status Finish() override {
    if (!recorder_) return absl::OkStatus();
    recorder_->Flush();
    return recorder_->status();
  }

  // ---- simcore::Observer ----
  void OnInstruction(uint64_t eip, std::span<const uint8_t> bytes) override {
    if (recorder_) {
      recorder_->OnInstruction(eip, bytes);
      if (!recorder_->status().ok()) engine_.Fail(recorder_->status());
    }
    engine_.Instruction(cpu_.retired(), eip, bytes);
  }
  void OnAccess(uint64_t linear, int size, bool write, uint64_t value) override {
    if (recorder_) recorder_->OnAccess(linear, size, write, value);
  }
  void OnEvent(simcore::EventKind kind, uint32_t vector, uint64_t eip) override {
    if (recorder_) recorder_->OnEvent(kind, vector, eip);
  }
  void OnRegister(uint16_t reg, uint64_t value) override { recorder_->OnRegister(reg, value); }
  bool WantsRegisters() const override { return recorder_ && recorder_->WantsRegisters(); }

 private:
  // Why the core stopped by itself, as a divergence (shutdown, or what it does not model).
  void CheckStopped();

  Engine& engine_;
  const bool observe_;
  x86::Cpu cpu_;
  x86::Disassembler disasm_;
  std::unique_ptr<traces::X86Recorder> recorder_;  // feeds the options' sink
  bool from_reset_ = false;
};

absl::Status I486Adapter::Load(const ims::InitialMachineState& ims) {
  // From reset the new core is the i486 after RESET, which replay has checked the IMS holds
  // (ReplayMachine::reset_state); only the machine's wiring is left.
  from_reset_ = ims.start().from_reset();
  // Only a segment's start holds what the core had at a cut: the begin-of-trace driver flushes
  // the TLB and the cache, reset empties them, and the count starts at 0 at both.
  const ims::X86State& s = ims.x86();
  if (!ims.start().segment() &&
      (ims.start().instructions() != 0 || s.tlb_size() != 0 || s.cache().lines_size() != 0)) {
    return InvalidReplayInput(
        "the IMS holds retired instructions, TLB entries or cache lines, which only a segment's "
        "start (start.segment) has");
  }
  if (!from_reset_) {
    if (absl::Status s = core_state::LoadX86State(ims.x86(), cpu_); !s.ok()) {
      return InvalidReplayInput(s.message());
    }
  }
  // KEN#: the traced PC caches RAM only (docs/machines/i486-system.md).
  cpu_.set_cacheable(
      [&memory = engine_.memory()](uint32_t page) { return memory.IsMemory(page, 1); });
  cpu_.set_deliver_interrupts(true);
  cpu_.set_branch_count(ims.start().branch_count());
  cpu_.set_retired(ims.start().instructions());
  return absl::OkStatus();
}

void I486Adapter::Run(uint64_t steps) {
  const uint64_t before = cpu_.steps();
  cpu_.Run(steps);
  CheckStopped();
  if (engine_.stopped() || cpu_.steps() != before || steps == 0) return;
  // Halted, and nothing will wake it: replay enters interrupts only at their scheduled keys.
  if (cpu_.halted()) {
    engine_.Diverge(absl::StrCat("the core halted at EIP ", Hex(cpu_.eip()), ", branch count ",
                                 cpu_.branch_count(),
                                 ", and the schedule has no interrupt to wake it there"));
  }
}

void I486Adapter::CheckStopped() {
  const x86::Exception& e = cpu_.exception();
  if (!e.pending || engine_.stopped()) return;
  if (e.shutdown) {
    engine_.Diverge(
        absl::StrCat("the core shut down (a fault while delivering a double fault) at "
                     "EIP ",
                     Hex(e.eip)));
  } else if (e.unmodelled) {
    engine_.Diverge(absl::StrCat("the instruction at EIP ", Hex(e.eip),
                                 " has a result the i486 leaves undefined (the core does not "
                                 "guess one)"));
  } else {
    engine_.Diverge(
        absl::StrCat("the core stopped with exception ", int{e.vector}, " at EIP ", Hex(e.eip)));
  }
}

void I486Adapter::Inject(const aes::Interrupt& irq) {
  // Between two branch-count increments execution is a straight line (REP iterations included):
  // step through it to the key. Its EIP is reached once in that line unless a REP string
  // instruction is interrupted between iterations. An archive's key then says how many steps
  // after the first arrival; extraction's says ECX, or in a trace from reset, which has no ECX
  // (no kernel reported it), the acknowledge's place in the CAT (docs/machines/i486-system.md,
  // "Traces from reset"). A key with none of them is the first arrival.
  uint64_t at_pc = 0;  // steps run from the key's EIP: once there, the line stays until it leaves
  const auto at_boundary = [&] {
    if (cpu_.eip() != irq.pc()) return false;
    if (irq.has_steps_after_arrival()) return at_pc == irq.steps_after_arrival();
    if (from_reset_) return !irq.has_cat_record() || engine_.next_record() == irq.cat_record();
    return !irq.has_rep_remaining() || cpu_.reg(x86::kEcx) == irq.rep_remaining();
  };
  const uint64_t before = engine_.interrupts_taken();
  while (!engine_.stopped() && engine_.interrupts_taken() == before &&
         cpu_.branch_count() == irq.branch_count() && !at_boundary() && !cpu_.halted()) {
    at_pc += cpu_.eip() == irq.pc();
    Run(1);
  }
  if (engine_.stopped() || engine_.interrupts_taken() != before) return;
  if (cpu_.branch_count() != irq.branch_count() || !at_boundary()) {
    engine_.Diverge(absl::StrCat(
        "the schedule has an interrupt (vector ", irq.vector(), ") at branch count ",
        irq.branch_count(), ", return EIP ", Hex(irq.pc()),
        irq.has_rep_remaining() ? absl::StrCat(", ECX ", Hex(irq.rep_remaining())) : "",
        irq.has_steps_after_arrival()
            ? absl::StrCat(", ", irq.steps_after_arrival(), " steps after its first arrival")
            : "",
        Engine::ReportedAt(irq), ", but the core never reached it: ", "it is at branch count ",
        cpu_.branch_count(), ", EIP ", Hex(cpu_.eip()), ", ECX ", Hex(cpu_.reg(x86::kEcx))));
    return;
  }
  if (!cpu_.CanTakeIntr()) {
    engine_.Diverge(absl::StrFormat(
        "the schedule has an interrupt (vector %d) at branch count %d, return EIP %s%s, but there "
        "EFLAGS is 0x%08x%s and it cannot be taken",
        irq.vector(), irq.branch_count(), Hex(irq.pc()), Engine::ReportedAt(irq), cpu_.eflags(),
        cpu_.eflags() & x86::flag::kIF ? " (right after STI or a load of SS)" : ""));
    return;
  }
  aes::Interrupt key = irq;  // a tie-break only where the first arrival is not the boundary
  key.clear_cat_record();
  key.clear_rep_remaining();
  key.clear_steps_after_arrival();
  if (at_pc != 0) key.set_steps_after_arrival(at_pc);
  engine_.NoteInterruptKey(key);
  if (engine_.tracing_text()) {
    engine_.TraceEvent(absl::StrCat("interrupt, vector ", Hex(irq.vector()), ", from the AES"));
  }
  cpu_.SetIntr(true);
  cpu_.Run(1);  // the acknowledge cycle (the engine supplies the vector) and the entry
  cpu_.SetIntr(false);
  CheckStopped();
  if (engine_.stopped()) return;
  engine_.InterruptTaken(irq);
}

}  // namespace

absl::StatusOr<std::unique_ptr<CoreAdapter>> MakeI486Adapter(const ims::InitialMachineState& ims,
                                                             Engine& engine, bool observe) {
  if (absl::Status s = CheckIms(ims); !s.ok()) return s;
  return std::make_unique<I486Adapter>(engine, observe);
}

}  // namespace citcat::replay
