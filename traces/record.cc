#include "traces/record.h"

namespace citcat::traces {

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
    case BranchKind::kSoftwareInterrupt:
      return "int";
  }
  return "?";
}

}  // namespace citcat::traces
