// Turns what the i486 core reports (simcore::Observer) into trace records. The core tells of each
// instruction (each REP iteration) before it executes, then of each data access it makes with
// its value, then of the next instruction or the event that ends it; a record is handed over once
// that tells how it ended: where control went, or that it faulted and did not complete.
//
// What the instruction's bytes say is worked out once per instruction at a linear address (a
// form, Record::form), as for the R4400 (mips_recorder.h); each execution fills in the rest.
#ifndef CITCAT_TRACES_X86_RECORDER_H_
#define CITCAT_TRACES_X86_RECORDER_H_

#include <memory>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "simcore/observer.h"
#include "simcore/x86/cpu.h"
#include "simcore/x86/disasm.h"
#include "traces/record.h"
#include "traces/sink.h"

namespace citcat::traces {

class X86Recorder final : public simcore::Observer, public Disassembler {
 public:
  X86Recorder(TraceSink& sink, const x86::Cpu& cpu);
  ~X86Recorder() override;

  // ---- simcore::Observer ----
  void OnInstruction(uint64_t eip, std::span<const uint8_t> bytes) override;
  void OnAccess(uint64_t linear, int size, bool write, uint64_t value) override;
  void OnEvent(simcore::EventKind kind, uint32_t vector, uint64_t eip) override;
  void OnRegister(uint16_t reg, uint64_t value) override;
  bool WantsRegisters() const override { return sink_.WantsRegisterValues(); }

  // After the last step: hands over the last record. The sink's Finish is the owner's call.
  void Flush();
  // The first error a sink returned; the caller stops the core when it is not OK.
  const absl::Status& status() const { return status_; }

  absl::string_view Text(const Record& record) override;

  // How many forms were built (tests).
  uint64_t forms_built() const { return forms_built_; }

  struct Form;  // one instruction at one linear address (x86_recorder.cc)

 private:
  // Inlined where they are called: calls from one function to the next cost as much as their
  // work.
  [[gnu::always_inline]] Form& FormFor(uint32_t eip, std::span<const uint8_t> bytes);
  void Build(Form& f, const x86::Segment& cs, uint32_t eip, const x86::Instruction& in,
             std::span<const uint8_t> bytes);
  [[gnu::always_inline]] void Complete();
  [[gnu::always_inline]] void Emit(const Record& record);

  TraceSink& sink_;
  const x86::Cpu& cpu_;
  std::vector<Form> forms_;  // direct-mapped by linear address
  uint64_t forms_built_ = 0;
  Form* pending_ = nullptr;  // the instruction observed last, until its record is handed over
  Record changed_;           // a pending record changed in ways its form does not cover
  Event next_before_;        // an event to attach to the next record
  std::unique_ptr<x86::Disassembler> disasm_;
  absl::Status status_;
};

}  // namespace citcat::traces

#endif  // CITCAT_TRACES_X86_RECORDER_H_
