#include "ims/ims_util.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace citcat::ims {
namespace {

constexpr absl::string_view kPrefix = "MACHINE_";

}  // namespace

uint64_t StartPc(const InitialMachineState& ims) {
  switch (ims.cpu_case()) {
    case InitialMachineState::kMips:
      return ims.mips().pc();
    case InitialMachineState::kX86:
      return uint32_t{ims.x86().cs().base() + ims.x86().eip()};
    case InitialMachineState::CPU_NOT_SET:
      break;
  }
  return 0;
}

std::string MachineName(Machine machine) {
  if (machine == MACHINE_UNSPECIFIED || !Machine_IsValid(machine)) return "";
  absl::string_view name = Machine_Name(machine);
  if (!absl::ConsumePrefix(&name, kPrefix)) return "";
  return absl::AsciiStrToLower(name);
}

std::optional<Machine> MachineFromName(absl::string_view name) {
  Machine machine = MACHINE_UNSPECIFIED;
  if (name.empty() || name != absl::AsciiStrToLower(name) ||
      !Machine_Parse(absl::StrCat(kPrefix, absl::AsciiStrToUpper(name)), &machine) ||
      machine == MACHINE_UNSPECIFIED) {
    return std::nullopt;
  }
  return machine;
}

}  // namespace citcat::ims
