// A bare-metal program for a trace from reset on the traced i486 PC (docs/machines/i486-system.md,
// "Traces from reset"): a raw ROM image or a bare-metal ELF turned into the boot ROM's bytes and
// what goes into RAM before power-on. Where the program's first instruction is not the reset
// vector, a reset stub there jumps to it in real mode.
#ifndef CITCAT_MACHINE_I486_RESET_IMAGE_H_
#define CITCAT_MACHINE_I486_RESET_IMAGE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "machine/elf_loader.h"

namespace citcat::machine {

struct ResetImage {
  // The boot ROM, ending at the top of the 4 GB space: a whole number of 64 KiB, at most 1 MiB;
  // bytes no program put there read FFh (an erased flash).
  std::vector<uint8_t> rom;
  struct Piece {
    uint64_t address;  // physical, in RAM
    std::vector<uint8_t> bytes;
  };
  std::vector<Piece> ram;  // loaded before power-on, without bus transactions
};

// A raw image: ending at the top of the 4 GB space (its last 16 bytes at the reset vector), or
// starting at `address` (within the top 1 MiB); then, unless it covers the reset vector, a
// near JMP there goes to `address`, which must be in the top 64 KiB (what CS reaches at reset).
absl::StatusOr<ResetImage> RawResetImage(std::span<const uint8_t> image,
                                         std::optional<uint64_t> address);

// A bare-metal i386 ELF: each loadable segment at its physical (load) address, in RAM of a
// machine with `memory_bytes` or in the top 1 MiB (the ROM). Unless the entry point is the reset
// vector, a reset stub jumps to it: a near JMP to an entry in the top 64 KiB, a far JMP
// (segment = the entry's bits 16-19 << 12) to one below 1 MiB, entered in real mode either way.
absl::StatusOr<ResetImage> ElfResetImage(const ElfImage& elf, uint64_t memory_bytes);

}  // namespace citcat::machine

#endif  // CITCAT_MACHINE_I486_RESET_IMAGE_H_
