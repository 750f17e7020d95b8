// Turns the R4400 core's instruction observer calls into trace records. The observer sees each
// instruction before it executes, so a record is built in two halves: what the encoding and the
// registers before say (sources, addresses, stored values, branch outcome), then, at the next
// observed step, what only the state after tells (loaded values, a failed SC, an exception).
//
// What the encoding alone says is worked out once per instruction word at a PC (a form,
// Record::form): each form keeps a record whose static fields are filled in, and each execution
// fills in only the dynamic ones.
#ifndef CITCAT_TRACES_MIPS_RECORDER_H_
#define CITCAT_TRACES_MIPS_RECORDER_H_

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "simcore/mips/cpu.h"
#include "simcore/mips/disasm.h"
#include "traces/record.h"
#include "traces/sink.h"

namespace citcat::traces {

class MipsRecorder final : public Disassembler {
 public:
  explicit MipsRecorder(TraceSink& sink);
  ~MipsRecorder() override;

  // Before the instruction at `pc` executes.
  void OnInstruction(mips::Cpu& cpu, uint64_t pc, uint32_t word);
  // After the core entered an exception handler (interrupts included).
  void OnException(mips::Cpu& cpu, uint8_t code, uint64_t faulting_pc, const char* name);
  // After the last step: hands over the last record. The sink's Finish is the owner's call.
  void Flush(mips::Cpu& cpu);
  // The first error a sink returned; the caller stops the core when it is not OK.
  const absl::Status& status() const { return status_; }

  absl::string_view Text(const Record& record) override;

  // How many forms were built: each distinct (PC, word) once, again after another took its
  // place (tests).
  uint64_t forms_built() const { return forms_built_; }

  struct Form;  // one instruction word at one PC (mips_recorder.cc)

 private:
  Form& FormFor(mips::Cpu& cpu, uint64_t pc, uint32_t word);
  void Build(Form& f, uint64_t pc, uint32_t word, bool big_endian);
  // Inlined into OnInstruction: calls from one function to the next were a fifth of the
  // recorder's time.
  [[gnu::always_inline]] void Complete(mips::Cpu& cpu);
  [[gnu::always_inline]] void Emit(const Record& record);

  TraceSink& sink_;
  std::vector<Form> forms_;  // direct-mapped by PC
  uint64_t forms_built_ = 0;
  Form* pending_ = nullptr;  // the instruction observed last, until its record is handed over
  Record changed_;           // a pending record changed in ways its form does not cover
  bool big_endian_ = true;   // the core's instruction byte order
  Event next_before_;        // an interrupt or fetch exception to attach to the next record
  std::unique_ptr<mips::Disassembler> disasm_;
  absl::Status status_;
};

}  // namespace citcat::traces

#endif  // CITCAT_TRACES_MIPS_RECORDER_H_
