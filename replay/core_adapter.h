// What the replay engine needs of a machine's core, and nothing more: load the IMS, run to a
// boundary, say where it stands, and enter an interrupt the schedule names. One adapter per
// machine (r4400_adapter.cc); the engine (engine.h) holds everything that is the same on every
// machine. See docs/replay.md, "Engine and core adapters".
#ifndef CITCAT_REPLAY_CORE_ADAPTER_H_
#define CITCAT_REPLAY_CORE_ADAPTER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "aes/aes.pb.h"
#include "ims/ims.pb.h"
#include "simcore/instruction_log.h"

namespace citcat::replay {

class Engine;

class CoreAdapter {
 public:
  virtual ~CoreAdapter() = default;

  // Registers, translation state and start point from the IMS (memory is the engine's). The
  // core's bus is the engine.
  virtual absl::Status Load(const ims::InitialMachineState& ims) = 0;

  // Runs at most `steps` steps (instructions plus exception and interrupt entries). The core
  // stops early after the step that brings the branch count to stop_branch_count() or beyond,
  // and when RequestStop() is called (from the bus, a hook or the engine).
  virtual void Run(uint64_t steps) = 0;
  virtual void set_stop_branch_count(uint64_t count) = 0;
  virtual void RequestStop() = 0;

  // Where the core stands.
  virtual uint64_t branch_count() const = 0;
  virtual uint64_t retired() const = 0;  // instructions completed
  virtual uint64_t steps() const = 0;    // instructions plus exception and interrupt entries
  virtual uint64_t pc() const = 0;

  // Called with the branch count at the schedule's next interrupt: steps to the boundary its
  // key names and enters the interrupt there (the adapter reports it to
  // Engine::InterruptTaken), or diverges saying why it cannot.
  virtual void Inject(const aes::Interrupt& interrupt) = 0;

  // Another bus master wrote memory (DMA): a core whose cache snoops the bus (the i486's EADS#)
  // drops the lines it holds there. The R4400's does not (its kernel invalidates by itself).
  virtual void MemoryWritten(uint64_t address, uint64_t size) {
    (void)address;
    (void)size;
  }

  // What the key's PC is called in reports ("EPC", "return EIP").
  virtual const char* key_pc_name() const = 0;
  // One line of disassembly for the text trace and the divergence context.
  virtual std::string Disassemble(uint64_t pc, std::span<const uint8_t> bytes) = 0;

  // After the last step: hands the last instruction-trace record to the sink. A sink error is
  // returned.
  virtual absl::Status Finish() = 0;

  // Whether the next instruction is not the sequential successor of the last one run, with no
  // delay slot or REP iteration pending: only there may a replay be cut into segments, so that
  // every trace writer starts a segment the way it goes on in the whole. False where unsure.
  virtual bool AtFlowBreak() const { return false; }

  // When the engine needs each instruction's index, PC and bytes and nothing more (no trace, no
  // sink): a core that can write them into `log` from its own run loops, instead of telling an
  // observer of each, does so from now on and says true (the adapter then observes nothing).
  virtual bool LogInstructions(simcore::InstructionLog* log) {
    (void)log;
    return false;
  }

  // The processor's whole state at this instruction boundary into the `cpu` oneof of `ims`, what
  // is not architectural included (a segment's start). Unimplemented where the core cannot yet.
  virtual absl::Status SaveState(ims::InitialMachineState& ims) const {
    (void)ims;
    return absl::UnimplementedError("this machine's replay cannot be cut into segments yet");
  }
};

// Makes the adapter for a machine, its core on `engine`'s bus. `observe`: the engine looks at
// every instruction (a trace, or the context of a divergence), so the core must report each
// one to Engine::Instruction. An IMS the core cannot run is InvalidArgument.
using CoreAdapterFactory = std::function<absl::StatusOr<std::unique_ptr<CoreAdapter>>(
    const ims::InitialMachineState& ims, Engine& engine, bool observe)>;

}  // namespace citcat::replay

#endif  // CITCAT_REPLAY_CORE_ADAPTER_H_
