// The traced R4400 system with a small hand-assembled guest: devices, DMA, the outside world's
// seed and the bus monitor.
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cat_parser/reader.h"
#include "cat_parser/writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "machine/r4400/machine.h"
#include "tests/simcore/mips_asm.h"

namespace citcat::machine {
namespace {

using namespace mips::as;  // NOLINT
using ::testing::HasSubstr;

constexpr int kZero = 0, kT0 = 8, kT1 = 9, kT2 = 10, kT3 = 11, kK1 = 27;
constexpr uint64_t kCodePhys = 0x10000;
constexpr uint64_t kEntry = 0xFFFFFFFF80010000ull;

// Marks the trace's beginning, prints "H", echoes a Count read, reads two disk blocks by DMA and
// waits for them, prints the first byte read, stores an entropy value, and powers off.
std::vector<uint32_t> Guest() {
  std::vector<uint32_t> p = {
      Lui(kK1, 0xBFE0),
      Lui(kT0, 0x4349),
      Ori(kT0, kT0, 0x5443),
      Dsll(kT0, kT0, 16),
      Ori(kT0, kT0, 0x4154),
      Dsll(kT0, kT0, 16),
      Ori(kT0, kT0, 0x0001),
      Sd(kT0, 0, kK1),  // begin marker
      Lui(kT1, 0xBF00),
      Addiu(kT2, kZero, 'H'),
      Sw(kT2, 0, kT1),
      Mfc0(kT3, 9),
      Sw(kT3, 0x5008, kK1),  // Count, echoed
      Lui(kT1, 0xBF10),
      Sw(kZero, 0, kT1),
      Lui(kT2, 0x2),
      Sw(kT2, 4, kT1),
      Addiu(kT2, kZero, 2),
      Sw(kT2, 8, kT1),
      Addiu(kT2, kZero, 1),
      Sw(kT2, 12, kT1),
      Lw(kT2, 0x10, kT1),
      Addiu(kT3, kZero, 2),
      Bne(kT2, kT3, -3),
      Nop(),                 // wait for done
      Sw(kZero, 0x14, kT1),  // acknowledge
      Lui(kT3, 0xA002),
      Lw(kT2, 0, kT3),
      Srl(kT2, kT2, 24),
      Lui(kT1, 0xBF00),
      Sw(kT2, 0, kT1),
      Lui(kT3, 0x8003),
      Lw(kT2, 0, kT3),
      Lw(kT2, 64, kT3),
      Sw(kT2, 128, kT3),  // cached traffic
      Lui(kT1, 0xBF20),
      Lw(kT2, 0, kT1),
      Sw(kT2, 0x6000, kK1),
      Sw(kZero, 8, kT1),  // power off
      Nop(),
      Nop(),
  };
  return p;
}

std::vector<uint8_t> Disk() {
  std::vector<uint8_t> disk(16 * 512);
  for (size_t i = 0; i < disk.size(); ++i) disk[i] = static_cast<uint8_t>('A' + i % 26);
  return disk;
}

struct Capture {
  RunSummary summary;
  std::string console;
  std::string cat_bytes;
};

// `step` > 0 runs the machine in many short Run calls of that many instructions each.
Capture RunGuest(uint64_t seed, uint64_t step = 0) {
  R4400Options options;
  options.seed = seed;
  options.disk = Disk();
  auto machine = R4400Machine::Create(options);
  EXPECT_TRUE(machine.ok()) << machine.status();
  LoadSegment code{kCodePhys, 0, {}};
  for (uint32_t w : Guest()) {
    code.bytes.insert(code.bytes.end(),
                      {uint8_t(w >> 24), uint8_t(w >> 16), uint8_t(w >> 8), uint8_t(w)});
  }
  code.size = code.bytes.size();
  EXPECT_TRUE((*machine)->Load({&code, 1}, kEntry).ok());
  std::string path = ::testing::TempDir() + "/machine-" + std::to_string(seed) + ".cat";
  auto writer = cat::CatWriter::Create(path, (*machine)->Header());
  EXPECT_TRUE(writer.ok());
  absl::StatusOr<RunSummary> summary;
  if (step == 0) {
    summary = (*machine)->Run(writer->get(), 1'000'000, 10'000'000);
  } else {
    for (uint64_t total = step; total < 10'000'000; total += step) {
      summary = (*machine)->Run(writer->get(), 1'000'000, total);
      if (!summary.ok() || summary->halted) break;
    }
  }
  EXPECT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE((*writer)->Finish().ok());
  std::ifstream in(path, std::ios::binary);
  return {*summary, (*machine)->console(),
          std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>())};
}

TEST(R4400Machine, RunsTheGuestToPowerOff) {
  Capture c = RunGuest(1);
  EXPECT_TRUE(c.summary.began);
  EXPECT_TRUE(c.summary.halted);
  EXPECT_EQ(c.console, "HA");
  EXPECT_EQ(c.summary.dma_transfers, 1u);
  EXPECT_EQ(c.summary.count_reads, 1u);
  EXPECT_GT(c.summary.device_reads, 1u);
}

TEST(R4400Machine, MonitorRecordsFromTheBeginMarker) {
  Capture c = RunGuest(1);
  auto reader = cat::CatReader::Open(io::InputFile::FromMemory(
      "m.cat", {reinterpret_cast<const uint8_t*>(c.cat_bytes.data()), c.cat_bytes.size()}));
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->header().devices.size(), 3u);
  ASSERT_NE((*reader)->header().FindMagic("count"), nullptr);
  std::vector<cat::OwnedRecord> records;
  cat::BusRecord r;
  while (*(*reader)->Next(r)) records.emplace_back(r);
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records[0].kind, cat::RecordKind::kUncachedWrite);
  EXPECT_EQ(records[0].address, kMagicBase);
  int dma = 0, fills = 0;
  for (const cat::OwnedRecord& rec : records) {
    if (rec.kind == cat::RecordKind::kDmaWrite) {
      ++dma;
      EXPECT_EQ(rec.master, 2);
      EXPECT_EQ(rec.data.size(), 512u);
      EXPECT_EQ(rec.address, 0x20000u + 512 * (dma - 1));
    }
    if (rec.kind == cat::RecordKind::kFill) ++fills;
  }
  EXPECT_EQ(dma, 2);
  EXPECT_GT(fills, 0);
  EXPECT_EQ(records.size(), c.summary.bus_records);
}

TEST(R4400Machine, SameSeedSameCatOtherSeedOtherSchedule) {
  Capture a = RunGuest(7), b = RunGuest(7), other = RunGuest(8);
  EXPECT_EQ(a.cat_bytes, b.cat_bytes);
  EXPECT_NE(a.cat_bytes, other.cat_bytes);
  EXPECT_EQ(a.console, other.console);  // the program's result does not depend on the world
}

// The outside world follows retired instructions, not how a run is cut into slices.
TEST(R4400Machine, HowARunIsSlicedDoesNotChangeTheCat) {
  Capture whole = RunGuest(5);
  for (uint64_t step : {1, 7, 1000}) {
    Capture sliced = RunGuest(5, step);
    EXPECT_TRUE(sliced.summary.halted);
    EXPECT_EQ(sliced.cat_bytes, whole.cat_bytes) << "slices of " << step;
  }
}

TEST(R4400Machine, RejectsImpossibleSettings) {
  R4400Options options;
  options.memory_bytes = 12345;
  EXPECT_THAT(std::string(R4400Machine::Create(options).status().message()),
              HasSubstr("memory size"));
  options = {};
  options.disk.resize(100);
  EXPECT_FALSE(R4400Machine::Create(options).ok());
  options = {};
  R4400Options ok;
  auto machine = R4400Machine::Create(ok);
  ASSERT_TRUE(machine.ok());
  LoadSegment huge{ok.memory_bytes - 4, 64, {}};
  EXPECT_FALSE((*machine)->Load({&huge, 1}, kEntry).ok());
}

// The ELF loader takes any machine's executable; the R4400 takes only big-endian MIPS kernels.
TEST(R4400Machine, LoadsOnlyBigEndianMipsKernels) {
  auto machine = R4400Machine::Create({});
  ASSERT_TRUE(machine.ok());
  ElfImage kernel;
  kernel.machine = kElfMachineMips;
  kernel.entry = 0x80001000;
  kernel.segments.push_back({0x80001000, 0x1000, 8, 5, std::vector<uint8_t>(8, 0)});
  EXPECT_TRUE(CheckR4400Elf(kernel).ok());
  EXPECT_TRUE((*machine)->LoadKernel(kernel).ok());
  kernel.big_endian = false;
  EXPECT_EQ(std::string((*machine)->LoadKernel(kernel).message()),
            "ELF: MIPS (e_machine 8), ELF32 little-endian, not a big-endian MIPS executable");
  kernel.machine = kElfMachine386;
  EXPECT_EQ(std::string(CheckR4400Elf(kernel).message()),
            "ELF: i386 (e_machine 3), ELF32 little-endian, not a big-endian MIPS executable");
}

// ---- traced from reset ----

std::vector<uint8_t> BigEndian(const std::vector<uint32_t>& words) {
  std::vector<uint8_t> b;
  for (uint32_t w : words)
    b.insert(b.end(), {uint8_t(w >> 24), uint8_t(w >> 16), uint8_t(w >> 8), uint8_t(w)});
  return b;
}

// At the reset vector: stores over its own ROM word at 0x100 (lost), loads it back uncached and
// through kseg0 (a line fill from the ROM), prints its low byte, and powers off.
std::vector<uint32_t> RomProgram() {
  std::vector<uint32_t> p = {
      Lui(kT0, 0xBFC0),       // kseg1 ROM
      Sw(kZero, 0x100, kT0),  // lost
      Lw(kT1, 0x100, kT0),    // the ROM's word
      Lui(kT3, 0x9FC0),       // kseg0 ROM
      Lw(kT2, 0x100, kT3),    // a fill from the ROM
      Lui(kT3, 0xBF00),
      Sw(kT1, 0, kT3),
      Sw(kT2, 0, kT3),
      Lui(kT3, 0xBF20),
      Sw(kZero, 8, kT3),  // power off
      Nop(),
  };
  p.resize(0x100 / 4, Nop());
  p.push_back('R');
  return p;
}

std::vector<cat::OwnedRecord> Records(const std::string& path) {
  auto reader = cat::CatReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  std::vector<cat::OwnedRecord> records;
  cat::BusRecord r;
  while (*(*reader)->Next(r)) records.emplace_back(r);
  return records;
}

TEST(R4400MachineFromReset, RecordsFromTheFirstFetchAndTheRomKeepsItsBytes) {
  R4400Options options;
  options.from_reset = true;
  auto machine = R4400Machine::Create(options);
  ASSERT_TRUE(machine.ok());
  ASSERT_TRUE((*machine)->LoadRom(kRomBase, BigEndian(RomProgram())).ok());
  const cat::CatHeader header = (*machine)->Header();
  EXPECT_TRUE(header.from_reset);
  EXPECT_EQ(header.roms, (std::vector<cat::RomWindow>{{0x1FC00000, 0x200000}}));
  EXPECT_EQ((*machine)->cpu().pc(), kResetVector);
  EXPECT_EQ((*machine)->cpu().status(), mips::kStatusBev | mips::kStatusErl);
  const std::string path = ::testing::TempDir() + "/machine-from-reset.cat";
  auto writer = cat::CatWriter::Create(path, header);
  ASSERT_TRUE(writer.ok());
  auto summary = (*machine)->Run(writer->get(), 1000, 1000);
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_TRUE((*writer)->Finish().ok());
  EXPECT_TRUE(summary->halted);
  EXPECT_EQ((*machine)->console(), "RR");
  const std::vector<cat::OwnedRecord> records = Records(path);
  ASSERT_GE(records.size(), 3u);
  EXPECT_EQ(records[0].kind, cat::RecordKind::kUncachedRead);  // the first fetch
  EXPECT_EQ(records[0].address, kRomBase);
  EXPECT_EQ(records[0].flags, cat::kFlagCode);
  EXPECT_EQ(records[0].branch_count, 0u);
  EXPECT_EQ(records[2].kind, cat::RecordKind::kUncachedWrite);  // the store the ROM ignores
  EXPECT_EQ(records[2].address, kRomBase + 0x100);
  EXPECT_EQ(std::count_if(records.begin(), records.end(),
                          [](const cat::OwnedRecord& r) {
                            return r.kind == cat::RecordKind::kFill &&
                                   r.address == kRomBase + 0x100;
                          }),
            1);
  EXPECT_EQ(summary->traced_instructions, summary->instructions);
  EXPECT_EQ(summary->bus_records, records.size());
}

// A store through kseg0 past the end of RAM needs a line there: the machine has none to give (a
// real R4400 takes a bus error), so the capture stops with an error instead of writing a CAT
// that extract would refuse.
TEST(R4400MachineFromReset, ACacheLineOutsideMemoryStopsTheRun) {
  R4400Options options;
  options.from_reset = true;
  auto machine = R4400Machine::Create(options);
  ASSERT_TRUE(machine.ok());
  const std::vector<uint32_t> program = {Lui(kT0, 0x8400), Sw(kZero, 0, kT0), Nop(), Nop()};
  ASSERT_TRUE((*machine)->LoadRom(kRomBase, BigEndian(program)).ok());
  const std::string path = ::testing::TempDir() + "/machine-line-outside.cat";
  auto writer = cat::CatWriter::Create(path, (*machine)->Header());
  ASSERT_TRUE(writer.ok());
  auto summary = (*machine)->Run(writer->get(), 1000, 1000);
  ASSERT_FALSE(summary.ok());
  EXPECT_EQ(summary.status().message(),
            "after 1 instructions, at 0xffffffffbfc00004: the program filled a cache line at "
            "physical address 0x4000000, outside main memory (32 MiB) and the ROM (the machine "
            "has no bus error to give it)");
}

TEST(R4400MachineFromReset, AnElfEntryElsewhereIsReachedByAJumpAtTheResetVector) {
  R4400Options options;
  options.from_reset = true;
  auto machine = R4400Machine::Create(options);
  ASSERT_TRUE(machine.ok());
  ElfImage elf;
  elf.machine = kElfMachineMips;
  elf.entry = 0x80012344;
  elf.segments.push_back({0x80012340, 0x80012340, 8, 5, std::vector<uint8_t>(8, 0)});
  ASSERT_TRUE((*machine)->LoadBareMetal(elf).ok());
  std::vector<uint8_t> stub(16);
  ASSERT_TRUE((*machine)->cpu().bus().Peek(kRomBase, stub));
  EXPECT_EQ(stub, BigEndian({0x3C1A8001, 0x375A2344, 0x03400008, 0}));
  // The entry at the reset vector itself needs none.
  auto other = R4400Machine::Create(options);
  elf.entry = 0xBFC00000;
  elf.segments = {{0xBFC00000, 0xBFC00000, 4, 5, {1, 2, 3, 4}}};
  ASSERT_TRUE((*other)->LoadBareMetal(elf).ok());
  ASSERT_TRUE((*other)->cpu().bus().Peek(kRomBase, stub));
  EXPECT_EQ(stub, (std::vector<uint8_t>{1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
}

TEST(R4400MachineFromReset, AMachineThatBootsItsKernelHasNoRom) {
  auto machine = R4400Machine::Create({});
  ASSERT_TRUE(machine.ok());
  EXPECT_TRUE((*machine)->Header().roms.empty());
  EXPECT_FALSE((*machine)->Header().from_reset);
  EXPECT_THAT(std::string((*machine)->LoadRom(kRomBase, {{1, 2, 3, 4}}).message()),
              HasSubstr("no ROM"));
}

}  // namespace
}  // namespace citcat::machine
