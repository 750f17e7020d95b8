#include "traces/record.h"

#include "absl/strings/str_cat.h"

namespace citcat::traces {

std::string RegisterName(uint16_t reg) {
  static constexpr const char* kGpr[32] = {"zero", "at", "v0", "v1", "a0", "a1", "a2", "a3",
                                           "t0",   "t1", "t2", "t3", "t4", "t5", "t6", "t7",
                                           "s0",   "s1", "s2", "s3", "s4", "s5", "s6", "s7",
                                           "t8",   "t9", "k0", "k1", "gp", "sp", "fp", "ra"};
  if (reg < 32) return kGpr[reg];
  if (reg == kRegHi) return "hi";
  if (reg == kRegLo) return "lo";
  if (reg >= kRegFpr0 && reg < kRegFpr0 + 32) return absl::StrCat("f", reg - kRegFpr0);
  if (reg == kRegFlags) return "fcc";
  return absl::StrCat("r", reg);
}

const char* ModeName(Mode mode) {
  switch (mode) {
    case Mode::kKernel:
      return "kernel";
    case Mode::kSupervisor:
      return "supervisor";
    case Mode::kUser:
      return "user";
  }
  return "?";
}

const char* BranchKindName(BranchKind kind) {
  switch (kind) {
    case BranchKind::kNone:
      return "none";
    case BranchKind::kConditional:
      return "conditional";
    case BranchKind::kDirectJump:
      return "jump";
    case BranchKind::kIndirectJump:
      return "indirect";
    case BranchKind::kDirectCall:
      return "call";
    case BranchKind::kIndirectCall:
      return "indirect-call";
    case BranchKind::kConditionalCall:
      return "conditional-call";
    case BranchKind::kReturn:
      return "return";
    case BranchKind::kExceptionReturn:
      return "eret";
  }
  return "?";
}

}  // namespace citcat::traces
