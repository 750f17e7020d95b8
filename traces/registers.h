// A machine's register table: the recorder numbers registers in its machine's own flat space and
// every record points at the table that names those numbers, so writers need no machine
// knowledge (docs/trace-formats.md, "Registers").
#ifndef CITCAT_TRACES_REGISTERS_H_
#define CITCAT_TRACES_REGISTERS_H_

#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace citcat::traces {

inline constexpr uint16_t kNoRegister = 0xFFFF;

struct RegisterInfo {
  absl::string_view name;  // "a0", "eax"; empty for a number the machine leaves unused
  // ChampSim's number for it (traces/champsim.h): clear of 0 ("none") and of ChampSim's special
  // registers unless the register is one of them (stack pointer, flags, instruction pointer).
  uint8_t champsim = 0;
};

class RegisterSet {
 public:
  constexpr RegisterSet() = default;
  // `registers` indexed by register number (not copied: static storage). `flags`: the condition
  // flags register (Penn's Flags field), kNoRegister if the machine has none. `value_bytes`: how
  // wide the machine's registers are, for writers that print their values.
  constexpr RegisterSet(absl::string_view machine, absl::Span<const RegisterInfo> registers,
                        uint16_t flags, uint8_t value_bytes = 8)
      : machine_(machine), registers_(registers), flags_(flags), value_bytes_(value_bytes) {}

  absl::string_view machine() const { return machine_; }
  // "" for a number outside the table (writers then print "r" and the number).
  absl::string_view Name(uint16_t reg) const {
    return reg < registers_.size() ? registers_[reg].name : absl::string_view();
  }
  // 0 (none) for a number outside the table.
  uint8_t ChampSim(uint16_t reg) const {
    return reg < registers_.size() ? registers_[reg].champsim : 0;
  }
  uint16_t flags() const { return flags_; }
  uint8_t value_bytes() const { return value_bytes_; }

 private:
  absl::string_view machine_;
  absl::Span<const RegisterInfo> registers_;
  uint16_t flags_ = kNoRegister;
  uint8_t value_bytes_ = 8;
};

// The table of a record no recorder filled in: no names, nothing for ChampSim.
inline constexpr RegisterSet kUnnamedRegisters;

}  // namespace citcat::traces

#endif  // CITCAT_TRACES_REGISTERS_H_
