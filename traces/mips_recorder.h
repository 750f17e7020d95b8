// Turns the R4400 core's instruction observer calls into trace records. The observer sees each
// instruction before it executes, so a record is built in two halves: what the encoding and the
// registers before say (sources, addresses, stored values, branch outcome), then, at the next
// observed step, what only the state after tells (loaded values, a failed SC, an exception).
#ifndef CITCAT_TRACES_MIPS_RECORDER_H_
#define CITCAT_TRACES_MIPS_RECORDER_H_

#include <memory>

#include "absl/status/status.h"
#include "simcore/mips/cpu.h"
#include "simcore/mips/disasm.h"
#include "traces/record.h"
#include "traces/sink.h"

namespace citcat::traces {

class MipsRecorder final : public Disassembler {
 public:
  explicit MipsRecorder(TraceSink& sink);

  // Before the instruction at `pc` executes.
  void OnInstruction(mips::Cpu& cpu, uint64_t pc, uint32_t word);
  // After the core entered an exception handler (interrupts included).
  void OnException(mips::Cpu& cpu, uint8_t code, uint64_t faulting_pc, const char* name);
  // After the last step: hands over the last record. The sink's Finish is the owner's call.
  void Flush(mips::Cpu& cpu);
  // The first error a sink returned; the caller stops the core when it is not OK.
  const absl::Status& status() const { return status_; }

  absl::string_view Text(const Record& record) override;

 private:
  void Complete(mips::Cpu& cpu);
  void Emit();

  TraceSink& sink_;
  Record pending_;
  bool has_pending_ = false;
  int load_gpr_ = -1;          // the register a pending load writes
  int load_fpr_ = -1;          // the FP register a pending LWC1/LDC1 writes
  bool load_partial_ = false;  // LWL/LWR/LDL/LDR: the merged register is the value
  int sc_gpr_ = -1;            // SC/SCD: the register that tells whether it stored
  bool big_endian_ = true;     // the core's instruction byte order
  Event next_before_;          // an interrupt or fetch exception to attach to the next record
  std::unique_ptr<mips::Disassembler> disasm_;
  absl::Status status_;
};

}  // namespace citcat::traces

#endif  // CITCAT_TRACES_MIPS_RECORDER_H_
