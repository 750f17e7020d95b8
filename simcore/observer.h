// What a core tells whoever watches it run: the one shape in which both cores report their own
// effects (instruction traces, the replay's divergence context, tests). A core calls an observer
// only once one is set, from its own fetch, access and exception paths, so an unobserved run
// pays nothing for it.
#ifndef CITCAT_SIMCORE_OBSERVER_H_
#define CITCAT_SIMCORE_OBSERVER_H_

#include <cstdint>
#include <span>

namespace citcat::simcore {

// What the processor was doing when it entered a handler.
enum class EventKind : uint8_t {
  kFault,      // the instruction told last raised it and did not complete
  kTrap,       // a trap after the instruction told last, which completed (i486 debug traps)
  kInterrupt,  // an external interrupt (or NMI), taken before the next instruction
};

class Observer {
 public:
  virtual ~Observer() = default;

  // The instruction at `pc` (the R4400's PC, the i486's EIP) is about to run, once fetched and
  // decoded; `bytes` as the core fetched them, in memory order. Every i486 REP iteration is told;
  // an instruction that faulted is told again when it runs again.
  virtual void OnInstruction(uint64_t pc, std::span<const uint8_t> bytes) = 0;

  // A data access of that instruction that succeeded, with the value loaded into or stored from
  // its register, `size` bytes wide (a partial-word access: its aligned unit and the whole
  // register). i486: also the stack frame of a gate or an event, written before the handler's
  // first instruction; descriptor-table, IDT and TSS accesses are not data accesses.
  virtual void OnAccess(uint64_t address, int size, bool write, uint64_t value) {
    (void)address, (void)size, (void)write, (void)value;
  }

  // A register the instruction told last wrote, with the value it holds once the instruction
  // completed: told after it completes and before the next instruction or event is told, only to
  // an observer that WantsRegisters(), and never for an instruction that faulted. `reg` is the
  // machine's register number in the trace records' numbering (docs/trace-formats.md,
  // "Registers"). The registers are the ones the decoder lists as written, so one the
  // instruction may leave unchanged (CMPXCHG's EAX, a REP iteration's ECX) is told with the value
  // it kept; EFLAGS is told whole wherever the instruction writes any flag. Not told: the i486's
  // x87 stack (80 bits) and what an event's entry writes.
  virtual void OnRegister(uint16_t reg, uint64_t value) { (void)reg, (void)value; }
  // Asked once, when the observer is set: whether to tell OnRegister (it costs the core a look at
  // the written registers after every instruction).
  virtual bool WantsRegisters() const { return false; }

  // The processor enters the handler of `code` (the R4400's ExcCode, the i486's vector); `pc` is
  // where it was taken: the instruction that raised it (the R4400's faulting instruction, not the
  // branch before a delay slot), or the next one for a trap or an interrupt. The R4400 tells it
  // once its state is switched to the handler, the i486 just before it delivers it (a fault
  // while it delivers one is told too).
  virtual void OnEvent(EventKind kind, uint32_t code, uint64_t pc) {
    (void)kind, (void)code, (void)pc;
  }
};

}  // namespace citcat::simcore

#endif  // CITCAT_SIMCORE_OBSERVER_H_
