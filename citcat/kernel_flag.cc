// --kernel, shared by capture (the kernel it boots) and replay (where --filter-idle finds the idle
// loop's symbols).
#include "absl/flags/flag.h"
#include "citcat/command.h"
#include "guest/r4400/guest_paths.h"

ABSL_FLAG(
    std::string, kernel, CITCAT_R4400_KERNEL_ELF,
    "the guest kernel (an ELF file): the one capture boots, where replay --filter-idle finds the "
    "idle loop");
