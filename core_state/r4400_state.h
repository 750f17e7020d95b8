// The R4400 core's state as an IMS holds it (ims.proto, MipsState): loaded by replay at its start
// point, and saved from a running core at a segment's start (docs/replay.md, "Segments"), where
// the caches' lines and a pending delay slot are part of it.
#ifndef CITCAT_CORE_STATE_R4400_STATE_H_
#define CITCAT_CORE_STATE_R4400_STATE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "ims/ims.pb.h"
#include "simcore/mips/cpu.h"

namespace citcat::core_state {

// Registers, CP0 (Cause without IP7..IP2, which follow device lines), the FPU, the TLB, the LL
// bit, the PC with a pending delay slot, and the lines of the caches, into a new core whose
// retired count becomes `instructions` (Random counts from there). The state must have been
// checked (32 GPRs, 32 FGRs, 48 TLB entries); a cache line outside the core's geometry is
// InvalidArgument naming the cache and the line.
absl::Status LoadMipsState(const ims::MipsState& s, uint64_t instructions, mips::Cpu& cpu);

// The inverse, at an instruction boundary. Count is the core's own clock: replay's comes from
// the schedule, and saving must not consume it.
void SaveMipsState(const mips::Cpu& cpu, ims::MipsState& s);

}  // namespace citcat::core_state

#endif  // CITCAT_CORE_STATE_R4400_STATE_H_
