// The i486 core's state as an IMS holds it (ims.proto, X86State): loaded by replay at its start
// point, and saved from a running core at a segment's start (docs/archive-format.md), where the
// TLB, the cache and the core's pending conditions are part of it.
#ifndef CITCAT_CORE_STATE_I486_STATE_H_
#define CITCAT_CORE_STATE_I486_STATE_H_

#include "absl/status/status.h"
#include "ims/ims.pb.h"
#include "simcore/x86/cpu.h"

namespace citcat::core_state {

// Registers, descriptor caches, control and debug registers, the x87, CPL, and (where the state
// holds them) TLB entries, cache lines and pending conditions. The state must have been checked
// (8 GPRs, 6 debug registers, 8 x87 registers of 10 bytes); a TLB entry or cache line outside
// the i486's geometry is InvalidArgument.
absl::Status LoadX86State(const ims::X86State& s, x86::Cpu& cpu);

// The inverse, at an instruction boundary.
void SaveX86State(const x86::Cpu& cpu, ims::X86State& s);

}  // namespace citcat::core_state

#endif  // CITCAT_CORE_STATE_I486_STATE_H_
