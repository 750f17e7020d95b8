// --kernel, shared by capture (the kernel it boots) and replay (where --filter-idle finds the idle
// loop's symbols).
#include "absl/flags/flag.h"
#include "citcat/command.h"

ABSL_FLAG(std::string, kernel, "",
          "the guest kernel (an ELF file): the one capture boots, where replay --filter-idle "
          "finds the idle loop (default: the one this build made for the machine)");
