// How a control transfer is classed, the same way for both cores: what trace formats and branch
// predictors tell apart. Each core's decoder says it of each instruction.
#ifndef CITCAT_SIMCORE_BRANCH_KIND_H_
#define CITCAT_SIMCORE_BRANCH_KIND_H_

#include <cstdint>

namespace citcat::simcore {

enum class BranchKind : uint8_t {
  kNone,
  kConditional,        // conditional, PC-relative
  kDirectJump,         // unconditional, target in the instruction
  kIndirectJump,       // unconditional, target from a register
  kDirectCall,         // links, target in the instruction
  kIndirectCall,       // links, target from a register
  kConditionalCall,    // links only when taken (MIPS BLTZAL, BGEZAL)
  kReturn,             // an indirect jump through the return-address register
  kExceptionReturn,    // ERET, IRET
  kSoftwareInterrupt,  // x86 INT n, INT3, INTO: completes and enters a handler (through the IDT)
};

}  // namespace citcat::simcore

#endif  // CITCAT_SIMCORE_BRANCH_KIND_H_
