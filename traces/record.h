// The one instruction-trace record every writer and in-process consumer sees: what one executed
// instruction did, in terms that do not depend on the machine (docs/trace-formats.md).
#ifndef CITCAT_TRACES_RECORD_H_
#define CITCAT_TRACES_RECORD_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "simcore/branch_kind.h"
#include "traces/registers.h"

namespace citcat::traces {

// The machine-neutral privilege class that filters (`--mode`) use. The machine's own number is
// Record::privilege.
enum class Mode : uint8_t { kKernel, kSupervisor, kUser };

// For machines with privilege rings numbered 0 (most privileged) to 3, such as the i486's CPL:
// ring 0 is the kernel, ring 3 user code, and rings 1 and 2 (unused by most systems, OS/2 and
// some drivers aside) supervisor, neither `--mode user` nor `--mode kernel`.
constexpr Mode ModeOfRing(uint8_t ring) {
  return ring == 0 ? Mode::kKernel : ring >= 3 ? Mode::kUser : Mode::kSupervisor;
}

// The class of a control transfer, as the cores' decoders give it (simcore/branch_kind.h).
using BranchKind = simcore::BranchKind;

struct MemoryAccess {
  uint64_t address = 0;  // virtual address (the aligned unit for partial-word accesses)
  uint8_t size = 0;      // bytes: 1, 2, 4 or 8
  bool store = false;
  bool value_known = false;
  uint64_t value = 0;  // the value loaded into or stored from the register, `size` bytes wide
};

// An exception or interrupt. `code` is the machine's own (MIPS Cause.ExcCode; 0 is an interrupt).
struct Event {
  bool present = false;
  uint8_t code = 0;
  uint64_t pc = 0;  // the instruction it was taken at
  std::string name;
};

// A register an instruction wrote and the value it holds after it.
struct RegisterValue {
  uint16_t reg = kNoRegister;
  uint64_t value = 0;
};

class Record;

// Produces disassembly on demand: most consumers never look at it, and it is the costliest field.
class Disassembler {
 public:
  virtual ~Disassembler() = default;
  virtual absl::string_view Text(const Record& record) = 0;
};

class Record {
 public:
  static constexpr int kMaxInstructionBytes = 15;  // x86's limit; MIPS uses 4
  // Inline room covers every MIPS instruction and all but a few x86 ones (PUSHAD, POPAD, ENTER
  // with nesting, far transfers, FSAVE): those spill to the heap, which is rare enough not to
  // matter, while a fixed capacity for the worst case (a task switch touches ~100 bytes of TSS)
  // would make every record several times larger for writers that stream millions a second.
  static constexpr int kInlineRegisters = 8;
  static constexpr int kInlineAccesses = 4;
  using Registers = absl::InlinedVector<uint16_t, kInlineRegisters>;
  using Accesses = absl::InlinedVector<MemoryAccess, kInlineAccesses>;
  using Values = absl::InlinedVector<RegisterValue, kInlineRegisters / 2>;

  uint64_t index = 0;  // instructions retired before this one since the start of the replay
  // Names the record's static part: records with the same non-zero form have the same pc,
  // next_pc, size, bytes, registers, mnemonic, immediate, read, written, branch, delay_slot,
  // fallthrough and disassembly, so a writer works out what it takes from those once per form
  // (form_cache.h). Only the other fields (index, privilege, mode, accesses, taken, target,
  // raised, taken_before) change from one execution to the next. A recorder numbers its forms
  // from 1 and never gives a number to two different static parts; 0 (a record built by hand, or
  // one changed after the fact, such as an instruction that raised an exception) promises
  // nothing.
  uint64_t form = 0;
  uint64_t pc = 0;
  // The instruction after this one in memory (a MIPS branch's delay slot). Not always pc + size:
  // x86 16-bit code wraps its IP within the segment.
  uint64_t next_pc = 0;
  uint8_t size = 0;                          // instruction bytes, 1..kMaxInstructionBytes
  uint8_t bytes[kMaxInstructionBytes] = {};  // as they lie in memory (MIPS: in the core's order)
  // The machine's own privilege number (MIPS: 0 kernel, 1 supervisor, 2 user as in Status.KSU,
  // 0 while EXL or ERL is set; i486: the CPL) and its neutral class.
  uint8_t privilege = 0;
  Mode mode = Mode::kKernel;
  const RegisterSet* registers = &kUnnamedRegisters;  // names the numbers in read and written
  absl::string_view mnemonic;  // "addiu": the operation, from the decoder (static storage)
  int64_t immediate = 0;       // the instruction's immediate field, extended as it uses it

  Registers read;     // each listed once
  Registers written;  // in the order written
  Accesses accesses;  // in the order made
  // For a sink that WantsRegisterValues (else empty): the registers of `written` the core told,
  // in its order, with their values once the instruction completed (simcore/observer.h,
  // OnRegister; not the i486's x87 stack). Empty for an instruction that raised an exception.
  Values values;

  BranchKind branch = BranchKind::kNone;
  bool taken = false;
  uint64_t target = 0;      // where a taken branch goes (also set when not taken)
  bool delay_slot = false;  // the branch has a delay slot: the next record is that slot
  // A string instruction with a REP prefix (x86): one record per iteration, all at the same pc
  // and index (RepeatRun tells the iterations of one execution apart from the next).
  bool repeated = false;
  uint64_t fallthrough = 0;  // where execution goes on untaken (after a delay slot)

  Event raised;        // this instruction raised an exception and did not complete
  Event taken_before;  // an interrupt or fetch exception was taken just before this instruction

  // Lazily produced; "" without a disassembler.
  absl::string_view Disassembly() const {
    return disassembler == nullptr ? absl::string_view() : disassembler->Text(*this);
  }
  Disassembler* disassembler = nullptr;

  absl::Span<const uint8_t> Bytes() const { return {bytes, size}; }
  void SetBytes(absl::Span<const uint8_t> b) {
    size = static_cast<uint8_t>(b.size() < kMaxInstructionBytes ? b.size() : kMaxInstructionBytes);
    std::memcpy(bytes, b.data(), size);
  }

  // This instruction raised `e` and did not complete: nothing it would have written or accessed
  // is real, and without its registers written it is no longer its form.
  void Raise(Event e) {
    form = 0;
    raised = std::move(e);
    accesses.clear();
    written.clear();
    values.clear();
  }

  bool Reads(uint16_t reg) const {
    for (uint16_t r : read)
      if (r == reg) return true;
    return false;
  }
  void AddRead(uint16_t reg) {
    if (!Reads(reg)) read.push_back(reg);
  }
  void AddWritten(uint16_t reg) { written.push_back(reg); }
  // An access the core made, with its value.
  void AddAccess(uint64_t address, int size, bool store, uint64_t value) {
    MemoryAccess& a = accesses.emplace_back();
    a.address = address;
    a.size = static_cast<uint8_t>(size);
    a.store = store;
    a.value_known = true;
    a.value = value;
  }
};

// Follows runs of REP iterations through a trace, for writers that write a REP instruction's
// fetch once and mark the end of its data references (din, IDtrace).
class RepeatRun {
 public:
  // Takes the next record; true if it is a further iteration of the REP instruction the record
  // before it was an iteration of, with no event in between.
  bool Next(const Record& r) {
    const bool continues =
        r.repeated && open_ && r.pc == pc_ && !raised_ && !r.taken_before.present;
    open_ = r.repeated;
    raised_ = r.raised.present;
    pc_ = r.pc;
    return continues;
  }
  // The record taken last was a REP iteration.
  bool open() const { return open_; }

 private:
  bool open_ = false, raised_ = false;
  uint64_t pc_ = 0;
};

const char* ModeName(Mode mode);  // "kernel", "supervisor", "user"
const char* BranchKindName(BranchKind kind);

}  // namespace citcat::traces

#endif  // CITCAT_TRACES_RECORD_H_
