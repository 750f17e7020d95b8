// --kernel and --linux, shared by capture (the kernel it boots), replay (where --filter-idle finds
// the idle loop's symbols) and, for --linux, demo.
#include "absl/flags/flag.h"
#include "citcat/command.h"

ABSL_FLAG(std::string, kernel, "",
          "the guest kernel (an ELF file): the one capture boots, where replay --filter-idle "
          "finds the idle loop (default: the one this build made for the machine)");
ABSL_FLAG(bool, linux, false,
          "the guest is Linux and its userland (the i486 only; docs/machines/i486-linux.md): "
          "capture and demo boot it instead of our own kernel, replay --filter-idle finds the "
          "idle code in its vmlinux; --kernel then names a vmlinux");
