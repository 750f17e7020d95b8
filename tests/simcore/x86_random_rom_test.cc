// Random instruction streams (x86_random_stream.h: every class of integer instruction, with and
// without operand-size, address-size, segment and LOCK prefixes) run from RESET in a bare-metal
// ROM (x86_roms/random_host.S), in real mode, 16-bit protected mode (16-bit code and stack), flat
// 32-bit protected mode at ring 0 and at ring 3, and virtual-8086 mode, on the core and on Bochs,
// compared at every instruction (x86_rom_lockstep.h) and, where the ROM stops, in the 64 KiB of
// memory that hold the stream's data and stack. A fault (#DE, an INTO) ends a stream on both
// through the host's handler. Each run prints how many instructions it compared.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "tests/simcore/x86_bochs_system.h"
#include "tests/simcore/x86_qemu_system.h"
#include "tests/simcore/x86_random_stream.h"
#include "tests/simcore/x86_rom_lockstep.h"

namespace citcat::x86 {
namespace {

using testing::Lockstep;
using testing::OracleState;
using testing::PcBus;

constexpr uint32_t kBlock = 0xFFFF8000;  // random_host.S's BLOCK
constexpr uint32_t kBlockOffset = kBlock - 0xFFFF0000;
constexpr uint32_t kStreamOffset = 0x200;
constexpr uint32_t kMemory = 0x20000, kMemoryBytes = 0x10000;  // the data and the stack
constexpr int kStreams = 12, kLength = 300;

// The block random_host.S reads: the registers (ESP and EDI aside: the host sets them), EFLAGS,
// the data, and the stream with the end of the run after it.
std::vector<uint8_t> Block(uint32_t seed, bool code16) {
  std::mt19937 rng(seed * 7919 + 1);
  std::vector<uint8_t> block(kStreamOffset);
  const auto put = [&](uint32_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) block[at + i] = static_cast<uint8_t>(v >> (8 * i));
  };
  for (int r = 0; r < 8; ++r) put(4 * r, static_cast<uint32_t>(rng()));
  put(32, (static_cast<uint32_t>(rng()) & flag::kOSZAPC) | 2);
  for (uint32_t i = 0; i < testing::kDataBytes; ++i) block[0x40 + i] = static_cast<uint8_t>(rng());
  const std::vector<uint8_t> stream = testing::LoopedStream(seed, kLength, code16);
  block.insert(block.end(), stream.begin(), stream.end());
  // end_of_run (end.inc): OUT F4h, AL; XCHG BX, BX; HLT
  if (code16) {
    block.insert(block.end(), {0xE6, 0xF4, 0x87, 0xDB, 0xF4});
  } else {
    block.insert(block.end(), {0xE6, 0xF4, 0x66, 0x87, 0xDB, 0xF4});
  }
  // random_host.S copies 1000h bytes of the stream for V86 mode.
  EXPECT_LE(block.size(), kStreamOffset + 0x1000u);
  return block;
}

// The modes random_host.S is built for.
struct Mode {
  const char* name;  // random_host_NAME
  const char* text;
  bool code16;
};
void PrintTo(const Mode& mode, std::ostream* os) { *os << mode.name; }
constexpr Mode kModes[] = {{"real", "real mode", true},
                           {"pm16", "16-bit protected mode", true},
                           {"flat32", "flat 32-bit protected mode", false},
                           {"ring3", "flat 32-bit code at ring 3", false},
                           {"v86", "virtual-8086 mode", true}};

// One stream in its host: the ELF the core loads, the block patched over it, and the ROM image
// with the block, written into `dir` for the oracles.
struct Rom {
  std::string elf, image_path, error;
  std::vector<uint8_t> block;
};

Rom MakeRom(uint32_t seed, const Mode& mode, const std::string& dir) {
  Rom rom;
  const std::string host = absl::StrCat(CITCAT_X86_ROMS, "/random_host_", mode.name);
  rom.elf = host + ".elf";
  rom.block = Block(seed, mode.code16);
  std::string image;
  {
    std::ifstream in(host + ".bin", std::ios::binary);
    image.assign(std::istreambuf_iterator<char>(in), {});
  }
  if (image.size() != 0x10000) {
    rom.error = absl::StrCat(host, ".bin is not a 64 KiB ROM");
    return rom;
  }
  std::copy(rom.block.begin(), rom.block.end(), image.begin() + kBlockOffset);
  rom.image_path = dir + "/rom.bin";
  std::ofstream(rom.image_path, std::ios::binary) << image;
  return rom;
}

// The core against Bochs on one stream; "" if they agree at every instruction and at the end.
std::string CompareWithBochs(uint32_t seed, const Mode& mode, size_t* compared) {
  const std::string dir =
      absl::StrCat(::testing::TempDir(), "/x86-random-", mode.name, "-", seed, "-", getpid());
  std::filesystem::create_directories(dir);
  const Rom rom = MakeRom(seed, mode, dir);
  if (!rom.error.empty()) return rom.error;
  oracle::BochsOptions options;
  options.rom = rom.image_path;
  options.work_dir = dir;
  options.trace = true;
  options.dumps = {{kMemory, kMemoryBytes}};
  absl::StatusOr<oracle::BochsRun> bochs = oracle::RunBochs(options);
  if (!bochs.ok()) return std::string(bochs.status().message());
  if (!bochs->stopped) return absl::StrCat("seed ", seed, ": Bochs never reached the end");
  std::string at_end;
  testing::LockstepOptions lockstep;
  lockstep.oracle = "Bochs";
  lockstep.run_last = true;
  lockstep.patch_address = kBlock;
  lockstep.patch = rom.block;
  lockstep.at_end = [&](Cpu&, PcBus& bus) {
    const std::vector<uint8_t>& memory = bochs->dumps[0];
    if (memory.size() != kMemoryBytes) {
      at_end = "Bochs's memory dump is short";
      return;
    }
    if (std::string d = testing::FirstMemoryDifference(bus, kMemory, memory); !d.empty()) {
      at_end = absl::StrCat("at the end, ", d);
    }
  };
  const Lockstep run = testing::RunLockstep(rom.elf, testing::BochsStates(*bochs), lockstep);
  *compared += run.compared;
  std::string d = testing::Describe(absl::StrCat("seed ", seed), run);
  if (d.empty() && !at_end.empty()) d = absl::StrCat("seed ", seed, ": ", at_end);
  if (d.empty() && getenv("CITCAT_KEEP_TEST_FILES") == nullptr) std::filesystem::remove_all(dir);
  return d;
}

#ifdef CITCAT_QEMU_I386
// The core against full-system QEMU on one stream, at every instruction (QEMU shows no memory).
std::string CompareWithQemu(uint32_t seed, const Mode& mode, size_t* compared, int* unchecked) {
  const std::string dir =
      absl::StrCat(::testing::TempDir(), "/x86-random-qemu-", mode.name, "-", seed, "-", getpid());
  std::filesystem::create_directories(dir);
  const Rom rom = MakeRom(seed, mode, dir);
  if (!rom.error.empty()) return rom.error;
  testing::LockstepOptions lockstep;
  lockstep.oracle = "QEMU";
  lockstep.rom_writable = true;
  lockstep.rep_count_check_records = true;
  lockstep.patch_address = kBlock;
  lockstep.patch = rom.block;
  const Lockstep run = testing::RunLockstep(
      rom.elf, testing::RunQemuSystem(CITCAT_QEMU_I386, rom.image_path, dir), lockstep);
  *compared += run.compared;
  // QEMU checks no segment's rights or limit on a data access (ORACLES.md): a write through CS
  // in 16-bit protected mode, #GP(0) on the i486 (and on Bochs, over the same streams), runs on
  // QEMU. The comparison ends there.
  if (mode.name == std::string("pm16") && run.error.empty() &&
      absl::StartsWith(run.difference,
                       absl::StrFormat("EIP is %#x, QEMU ", run.symbols.at("fault")))) {
    ++*unchecked;
    std::filesystem::remove_all(dir);
    return "";
  }
  std::string d = testing::Describe(absl::StrCat("seed ", seed), run);
  if (d.empty()) std::filesystem::remove_all(dir);
  return d;
}
#endif

class X86RandomRoms : public ::testing::TestWithParam<Mode> {};

TEST_P(X86RandomRoms, AgreeWithBochsAtEveryInstruction) {
  if (oracle::FindBochs().empty()) GTEST_SKIP() << "bochs and vgabios are not installed";
  size_t compared = 0;
  for (uint32_t seed = 1; seed <= kStreams; ++seed) {
    EXPECT_EQ(CompareWithBochs(seed, GetParam(), &compared), "");
  }
  EXPECT_GT(compared, size_t{kStreams} * 100);
  std::printf("COMPARED Bochs random ROM streams (%s): %zu instructions (from RESET)\n",
              GetParam().text, compared);
}

#ifdef CITCAT_QEMU_I386
TEST_P(X86RandomRoms, AgreeWithQemuAtEveryInstruction) {
  size_t compared = 0;
  int unchecked = 0;  // streams that ended at a fault QEMU does not raise
  for (uint32_t seed = 1; seed <= kStreams; ++seed) {
    EXPECT_EQ(CompareWithQemu(seed, GetParam(), &compared, &unchecked), "");
  }
  EXPECT_GT(compared, size_t{kStreams} * 100);
  std::printf(
      "COMPARED QEMU-system random ROM streams (%s): %zu instructions (from RESET), %d streams "
      "to a write through CS\n",
      GetParam().text, compared, unchecked);
}
#endif

INSTANTIATE_TEST_SUITE_P(Modes, X86RandomRoms, ::testing::ValuesIn(kModes),
                         [](const ::testing::TestParamInfo<Mode>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace citcat::x86
