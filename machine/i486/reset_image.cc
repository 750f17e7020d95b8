#include "machine/i486/reset_image.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "machine/i486/system.h"

namespace citcat::machine {
namespace {

using pc::kAddressSpace;
using pc::kMaxRomBytes;
using pc::kResetVector;
using pc::kRomGranule;

constexpr uint64_t kRomLowest = kAddressSpace - kMaxRomBytes;
constexpr uint64_t kTopSegment = kAddressSpace - 0x10000;  // CS's reach after reset

std::string Hex(uint64_t v) { return absl::StrCat("0x", absl::Hex(v)); }

// A ROM from `lowest` (the lowest byte a program puts there) to the top, FFh-filled.
std::vector<uint8_t> EmptyRom(uint64_t lowest) {
  const uint64_t need = kAddressSpace - std::min(lowest, kAddressSpace - kRomGranule);
  return std::vector<uint8_t>((need + kRomGranule - 1) / kRomGranule * kRomGranule, 0xFF);
}

uint8_t& RomByte(std::vector<uint8_t>& rom, uint64_t address) {
  return rom[address - (kAddressSpace - rom.size())];
}

// The reset stub at the reset vector: a jump to `entry` in real mode, as CS is at reset.
absl::Status PutResetStub(std::vector<uint8_t>& rom, uint64_t entry, const char* what) {
  std::vector<uint8_t> stub;
  if (entry >= kTopSegment && entry < kResetVector) {
    // JMP rel16 (E9): IP after it is FFF3h; CS keeps its base FFFF0000h.
    const uint16_t rel = static_cast<uint16_t>((entry - kTopSegment) - 0xFFF3);
    stub = {0xE9, static_cast<uint8_t>(rel), static_cast<uint8_t>(rel >> 8)};
  } else if (entry < pc::kHoleEnd) {
    // JMP FAR seg:off (EA): CS = seg with base seg * 16.
    const uint16_t seg = static_cast<uint16_t>((entry >> 4) & 0xF000);
    const uint16_t off = static_cast<uint16_t>(entry - (uint64_t{seg} << 4));
    stub = {0xEA, static_cast<uint8_t>(off), static_cast<uint8_t>(off >> 8),
            static_cast<uint8_t>(seg), static_cast<uint8_t>(seg >> 8)};
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", Hex(entry),
                     " is out of real mode's reach at reset: it must be below 1 MiB (a far JMP "
                     "from the reset vector) or in the ROM's top 64 KiB (0xffff0000 and up, a "
                     "near JMP)"));
  }
  for (size_t i = 0; i < stub.size(); ++i) RomByte(rom, kResetVector + i) = stub[i];
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ResetImage> RawResetImage(std::span<const uint8_t> image,
                                         std::optional<uint64_t> address) {
  if (image.empty()) return absl::InvalidArgumentError("the ROM image is empty");
  const uint64_t at =
      address.value_or(kAddressSpace - std::min<uint64_t>(image.size(), kAddressSpace));
  if (at < kRomLowest || at >= kAddressSpace) {
    return absl::InvalidArgumentError(
        absl::StrCat("the ROM address ", Hex(at), " is not in the ROM (", Hex(kRomLowest),
                     " to 0xffffffff, the top 1 MiB of the 4 GB space)"));
  }
  const uint64_t room = kAddressSpace - at;
  if (image.size() > room) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the image has ", image.size(), " bytes, more than the ", room, " the ROM holds from ",
        Hex(at), " (the ROM: at most 1 MiB, ending at the top of the 4 GB space)"));
  }
  ResetImage out;
  out.rom = EmptyRom(at);
  std::copy(image.begin(), image.end(), &RomByte(out.rom, at));
  if (at + image.size() <= kResetVector) {
    if (absl::Status s = PutResetStub(out.rom, at, "the ROM address"); !s.ok()) return s;
  } else if (at + image.size() < kAddressSpace) {
    return absl::InvalidArgumentError(
        absl::StrCat("the image ends inside the reset vector's 16 bytes (at ",
                     Hex(at + image.size()), "): no room for its code or for a jump to it"));
  }
  return out;
}

absl::StatusOr<ResetImage> ElfResetImage(const ElfImage& elf, uint64_t memory_bytes) {
  if (elf.is64 || elf.big_endian || elf.machine != kElfMachine386) {
    return absl::InvalidArgumentError(
        absl::StrCat("ELF: ", elf.Describe(), ", not an i386 ELF32 little-endian program"));
  }
  const auto in_ram = [&](uint64_t a, uint64_t n) {
    return a + n <= memory_bytes && (a + n <= pc::kHoleBase || a >= pc::kHoleEnd);
  };
  uint64_t lowest = kAddressSpace;
  for (const ElfSegment& s : elf.segments) {
    if (s.memsz == 0) continue;
    const std::string what =
        absl::StrCat("the segment loaded at ", Hex(s.paddr), " (", s.memsz, " bytes)");
    if (s.paddr >= kRomLowest && s.paddr < kAddressSpace && s.memsz <= kAddressSpace - s.paddr) {
      lowest = std::min(lowest, s.paddr);
    } else if (!in_ram(s.paddr, s.memsz)) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " lies neither in RAM (0 to 0x9ffff, 0x100000 to ", Hex(memory_bytes - 1),
          ") nor in the ROM (", Hex(kRomLowest), " to 0xffffffff)"));
    }
  }
  ResetImage out;
  out.rom = EmptyRom(lowest);
  bool at_reset_vector = false;  // a segment puts bytes into the reset vector's 16 bytes
  for (const ElfSegment& s : elf.segments) {
    if (s.memsz == 0) continue;
    std::vector<uint8_t> bytes(s.data);
    bytes.resize(s.memsz, 0);
    if (s.paddr >= kRomLowest) {
      std::copy(bytes.begin(), bytes.end(), &RomByte(out.rom, s.paddr));
      at_reset_vector |= s.paddr + s.memsz > kResetVector;
    } else {
      out.ram.push_back({s.paddr, std::move(bytes)});
    }
  }
  if (elf.entry == kResetVector) return out;
  if (at_reset_vector) {
    return absl::InvalidArgumentError(
        absl::StrCat("the ELF puts bytes at the reset vector 0xfffffff0 but its entry point is ",
                     Hex(elf.entry), ": no room for the jump to it"));
  }
  if (absl::Status s = PutResetStub(out.rom, elf.entry, "the entry point"); !s.ok()) return s;
  return out;
}

}  // namespace citcat::machine
