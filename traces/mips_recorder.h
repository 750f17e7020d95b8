// Turns what the R4400 core reports (simcore::Observer) into trace records. The core tells of
// each instruction before it runs, then of its access with the value; a record is handed over at
// the next instruction or event, once nothing more can come for it.
//
// What the encoding alone says is worked out once per instruction word at a PC (a form,
// Record::form): each form keeps a record whose static fields are filled in, and each execution
// fills in only the dynamic ones.
#ifndef CITCAT_TRACES_MIPS_RECORDER_H_
#define CITCAT_TRACES_MIPS_RECORDER_H_

#include <memory>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "simcore/mips/cpu.h"
#include "simcore/mips/disasm.h"
#include "simcore/observer.h"
#include "traces/record.h"
#include "traces/sink.h"

namespace citcat::traces {

class MipsRecorder final : public simcore::Observer, public Disassembler {
 public:
  MipsRecorder(TraceSink& sink, const mips::Cpu& cpu);
  ~MipsRecorder() override;

  // ---- simcore::Observer ----
  void OnInstruction(uint64_t pc, std::span<const uint8_t> bytes) override;
  void OnAccess(uint64_t address, int size, bool write, uint64_t value) override;
  void OnEvent(simcore::EventKind kind, uint32_t code, uint64_t pc) override;
  void OnRegister(uint16_t reg, uint64_t value) override;
  bool WantsRegisters() const override { return sink_.WantsRegisterValues(); }

  // After the last step: hands over the last record. The sink's Finish is the owner's call.
  void Flush();
  // The first error a sink returned; the caller stops the core when it is not OK.
  const absl::Status& status() const { return status_; }

  absl::string_view Text(const Record& record) override;

  // How many forms were built: each distinct (PC, word) once, again after another took its
  // place (tests).
  uint64_t forms_built() const { return forms_built_; }

  struct Form;  // one instruction word at one PC (mips_recorder.cc)

 private:
  Form& FormFor(uint64_t pc, uint32_t word);
  void Build(Form& f, uint64_t pc, uint32_t word, bool big_endian);
  // Inlined into OnInstruction: calls from one function to the next were a fifth of the
  // recorder's time.
  [[gnu::always_inline]] void Emit(const Record& record);

  TraceSink& sink_;
  const mips::Cpu& cpu_;
  std::vector<Form> forms_;  // direct-mapped by PC
  uint64_t forms_built_ = 0;
  Form* pending_ = nullptr;  // the instruction observed last, until its record is handed over
  Record changed_;           // a pending record changed in ways its form does not cover
  Event next_before_;        // an interrupt or fetch exception to attach to the next record
  std::unique_ptr<mips::Disassembler> disasm_;
  absl::Status status_;
};

}  // namespace citcat::traces

#endif  // CITCAT_TRACES_MIPS_RECORDER_H_
