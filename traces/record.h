// The one instruction-trace record every writer and in-process consumer sees: what one executed
// instruction did, in terms that do not depend on the machine (docs/trace-formats.md).
#ifndef CITCAT_TRACES_RECORD_H_
#define CITCAT_TRACES_RECORD_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace citcat::traces {

// Register numbers in one flat space, so that writers need no machine knowledge. The MIPS
// integer registers are 0..31, HI and LO 32 and 33, the FP registers 64..95 and the FP condition
// bit (the MIPS stand-in for condition flags) kFlags.
inline constexpr uint16_t kRegHi = 32;
inline constexpr uint16_t kRegLo = 33;
inline constexpr uint16_t kRegFpr0 = 64;
inline constexpr uint16_t kRegFlags = 96;

enum class Mode : uint8_t { kKernel, kSupervisor, kUser };

enum class BranchKind : uint8_t {
  kNone,
  kConditional,      // conditional, PC-relative
  kDirectJump,       // unconditional, target in the instruction
  kIndirectJump,     // unconditional, target from a register
  kDirectCall,       // links, target in the instruction
  kIndirectCall,     // links, target from a register
  kConditionalCall,  // links only when taken (MIPS BLTZAL, BGEZAL)
  kReturn,           // an indirect jump through the return-address register
  kExceptionReturn,  // ERET
};

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

class Record;

// Produces disassembly on demand: most consumers never look at it, and it is the costliest field.
class Disassembler {
 public:
  virtual ~Disassembler() = default;
  virtual absl::string_view Text(const Record& record) = 0;
};

class Record {
 public:
  static constexpr int kMaxRegisters = 4;
  static constexpr int kMaxAccesses = 2;

  uint64_t index = 0;  // instructions retired before this one since the start of the replay
  uint64_t pc = 0;
  uint32_t word = 0;  // the raw instruction as a number (MIPS: the 32-bit word)
  uint8_t size = 4;   // instruction bytes
  Mode mode = Mode::kKernel;
  absl::string_view mnemonic;  // "addiu": the operation, from the decoder (static storage)
  int64_t immediate = 0;       // the instruction's immediate field, extended as it uses it

  uint8_t num_read = 0, num_written = 0;
  uint16_t read[kMaxRegisters] = {};
  uint16_t written[kMaxRegisters] = {};

  uint8_t num_accesses = 0;
  MemoryAccess access[kMaxAccesses];

  BranchKind branch = BranchKind::kNone;
  bool taken = false;
  uint64_t target = 0;       // where a taken branch goes (also set when not taken)
  bool delay_slot = false;   // the branch has a delay slot: the next record is that slot
  uint64_t fallthrough = 0;  // the next instruction in memory order (after a delay slot)

  Event raised;        // this instruction raised an exception and did not complete
  Event taken_before;  // an interrupt or fetch exception was taken just before this instruction

  // Lazily produced; "" without a disassembler.
  absl::string_view Disassembly() const {
    return disassembler == nullptr ? absl::string_view() : disassembler->Text(*this);
  }
  Disassembler* disassembler = nullptr;

  bool Reads(uint16_t reg) const {
    for (int i = 0; i < num_read; ++i)
      if (read[i] == reg) return true;
    return false;
  }
  void AddRead(uint16_t reg) {
    if (num_read < kMaxRegisters && !Reads(reg)) read[num_read++] = reg;
  }
  void AddWritten(uint16_t reg) {
    if (num_written < kMaxRegisters) written[num_written++] = reg;
  }
};

// "a0", "hi", "f12", "fcc": MIPS ABI names for the register numbers above.
std::string RegisterName(uint16_t reg);
const char* ModeName(Mode mode);  // "kernel", "supervisor", "user"
const char* BranchKindName(BranchKind kind);

}  // namespace citcat::traces

#endif  // CITCAT_TRACES_RECORD_H_
