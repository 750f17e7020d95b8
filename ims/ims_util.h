// Machine-neutral questions about an IMS, answered from whichever `cpu` the schema holds, so that
// shared code (archive, CLI) never has to look at one machine's registers itself.
#ifndef CITCAT_IMS_IMS_UTIL_H_
#define CITCAT_IMS_IMS_UTIL_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "ims/ims.pb.h"

namespace citcat::ims {

// The one format version of ims.pb this build writes and reads (docs/ims-aes.md, "Versions").
inline constexpr uint32_t kFormatVersion = 1;

// The address of the first instruction replay executes, as traces list PCs: the MIPS PC, or for
// the x86 the linear address CS.base + EIP (modulo 2^32, so real-mode CS:IP is covered too). 0
// when the IMS holds no CPU state.
uint64_t StartPc(const InitialMachineState& ims);

// A machine's name, the schema's enum name without `MACHINE_`, in lower case ("r4400", "i486");
// empty for MACHINE_UNSPECIFIED or a value the schema does not name.
std::string MachineName(Machine machine);

// The machine a name stands for, if the schema names it (MACHINE_UNSPECIFIED is never named).
std::optional<Machine> MachineFromName(absl::string_view name);

}  // namespace citcat::ims

#endif  // CITCAT_IMS_IMS_UTIL_H_
