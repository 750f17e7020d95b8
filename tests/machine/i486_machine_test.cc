// The whole traced PC: the i486 core on the PC bus running a boot ROM from the reset vector
// (tests/machine/i486_roms/pc_devices.S) that programs the PICs and the timer, takes timer
// interrupts through the vector table in real mode and through the IDT in protected mode,
// reads the RTC, the entropy port and the disk by DMA, prints on the UART and powers off.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "cat_parser/reader.h"
#include "cat_parser/writer.h"
#include "gtest/gtest.h"
#include "machine/i486/machine.h"
#include "machine/i486/system.h"

namespace citcat::machine {
namespace {

using cat::OwnedRecord;
using cat::RecordKind;

class Log : public BusMonitor {
 public:
  absl::Status OnRecord(const cat::BusRecord& record) override {
    records.emplace_back(record);
    return absl::OkStatus();
  }
  std::vector<OwnedRecord> records;
};

class Refuses : public BusMonitor {
 public:
  absl::Status OnRecord(const cat::BusRecord&) override {
    return ++seen < 100 ? absl::OkStatus() : absl::DataLossError("disk full");
  }
  int seen = 0;
};

#ifdef CITCAT_PC_ROMS

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Block n is filled with the text "block n" and then n; block 1 starts with "CITCAT!\n".
std::vector<uint8_t> DiskImage() {
  std::vector<uint8_t> image(8 * 512);
  for (int n = 0; n < 8; ++n) {
    std::memset(&image[n * 512], n, 512);
    std::string text = "block " + std::to_string(n);
    std::memcpy(&image[n * 512], text.data(), text.size());
  }
  std::memcpy(&image[512], "CITCAT!\n", 8);
  return image;
}

struct RomRun {
  // `chunk`: run in calls of at most this many instructions each (0: one call).
  explicit RomRun(uint64_t seed, uint64_t chunk = 0) {
    PcConfig pc;
    pc.seed = seed;
    pc.rom = ReadFile(std::string(CITCAT_PC_ROMS) + "/pc_devices.bin");
    pc.disk = DiskImage();
    auto created = I486Machine::Create({pc, "pc_devices"});
    EXPECT_TRUE(created.ok()) << created.status();
    machine = std::move(*created);
    uint64_t limit = chunk ? chunk : 5'000'000;
    while (true) {
      auto run = machine->Run(&log, limit);
      EXPECT_TRUE(run.ok()) << run.status();
      if (!run.ok()) break;
      summary = *run;
      if (run->powered_off || run->stuck || limit >= 5'000'000) break;
      limit += chunk;
    }
  }
  uint32_t Word(uint64_t address, int size = 4) {
    uint8_t b[4] = {};
    EXPECT_TRUE(machine->bus().Peek(address, std::span<uint8_t>(b, size)));
    return b[0] | b[1] << 8 | b[2] << 16 | static_cast<uint32_t>(b[3]) << 24;
  }
  std::vector<uint8_t> Acks() const {
    std::vector<uint8_t> vectors;
    for (const OwnedRecord& r : log.records) {
      if (r.kind == RecordKind::kInterruptAck) vectors.push_back(r.data[0]);
    }
    return vectors;
  }

  std::unique_ptr<I486Machine> machine;
  Log log;
  I486RunSummary summary;
};

TEST(I486MachineTest, BootRomDrivesTheDevicesAndPowersOff) {
  RomRun run(1);
  ASSERT_TRUE(run.summary.powered_off) << run.machine->console();
  EXPECT_FALSE(run.summary.stuck);
  EXPECT_EQ(run.machine->console(), "real\npm\nCITCAT!\n");
  EXPECT_GT(run.summary.idle, 0u);  // the real-mode and disk waits were HLTs
  // The busy wait ran about five periods of 2386 timer ticks: 5 x 66,000 instruction times,
  // at about 3 instructions a turn.
  EXPECT_NEAR(run.Word(0x518) * 3.0, 5 * 2386 * 33e6 / 1193182, 5 * 66000 * 0.3);
  EXPECT_EQ(run.summary.dma_transfers, 1u);
  EXPECT_EQ(run.summary.bus_records, run.log.records.size());

  // Interrupts: three through the vector table at 08h, five or more through the IDT at 20h, and
  // the disk's at 2Eh (IRQ 14 on the slave). Every acknowledge cycle is on the bus.
  const std::vector<uint8_t> acks = run.Acks();
  EXPECT_EQ(run.summary.interrupts, acks.size());
  ASSERT_GE(acks.size(), 9u);
  EXPECT_EQ(std::vector<uint8_t>(acks.begin(), acks.begin() + 3),
            (std::vector<uint8_t>{0x08, 0x08, 0x08}));
  EXPECT_EQ(std::count(acks.begin(), acks.end(), 0x2E), 1);
  EXPECT_GE(std::count(acks.begin(), acks.end(), 0x20), 5);
  EXPECT_EQ(run.Word(0x500, 2), 3u);
  EXPECT_GE(run.Word(0x504), 5u);
  EXPECT_EQ(run.Word(0x508, 1), 1u);
  EXPECT_EQ(run.Word(0x509, 1), 0x04u);  // bus master: interrupt, no longer active

  // The world's values: the first entropy draw; the RTC's seconds (BCD) within the run's second.
  World world(1, kPcTimerRate);
  EXPECT_EQ(run.Word(0x514), world.Entropy());
  const uint64_t second = world.boot_seconds() % 60;
  const uint32_t rtc = run.Word(0x510, 1);
  const uint32_t bcd = static_cast<uint32_t>(second / 10 << 4 | second % 10);
  const uint32_t next = static_cast<uint32_t>((second + 1) % 60 / 10 << 4 | (second + 1) % 10);
  EXPECT_TRUE(rtc == bcd || rtc == next) << std::hex << rtc;
  EXPECT_LE(run.Word(0x50C, 2), 2386u);  // a latched mode 3 count

  // The DMA: the PRD entries read and the sectors written by the bus master, in order.
  std::vector<std::tuple<RecordKind, uint64_t, size_t>> dma;
  std::vector<uint8_t> written;
  for (const OwnedRecord& r : run.log.records) {
    if (r.kind != RecordKind::kDmaRead && r.kind != RecordKind::kDmaWrite) continue;
    EXPECT_EQ(r.master, pc::kMasterBusMasterIde);
    dma.emplace_back(r.kind, r.address, r.data.size());
    if (r.kind == RecordKind::kDmaWrite)
      written.insert(written.end(), r.data.begin(), r.data.end());
  }
  EXPECT_EQ(dma, (std::vector<std::tuple<RecordKind, uint64_t, size_t>>{
                     {RecordKind::kDmaRead, 0x2000, 8},
                     {RecordKind::kDmaWrite, 0x3000, 512},
                     {RecordKind::kDmaWrite, 0x3200, 256},
                     {RecordKind::kDmaRead, 0x2008, 8},
                     {RecordKind::kDmaWrite, 0x3300, 256},
                 }));
  const std::vector<uint8_t> disk = DiskImage();
  EXPECT_EQ(written, std::vector<uint8_t>(disk.begin() + 512, disk.begin() + 1536));

  // The real-mode handler ran from the ROM's copy below 1 MiB; caching stayed in RAM; the
  // last transaction is the power-off.
  bool alias_fetch = false;
  for (const OwnedRecord& r : run.log.records) {
    if (r.kind == RecordKind::kUncachedRead && (r.flags & cat::kFlagCode) && r.address >= 0xF0000 &&
        r.address < 0x100000) {
      alias_fetch = true;
    }
    if (r.kind == RecordKind::kFill) {
      EXPECT_TRUE(r.address < 0xA0000 || (r.address >= 0x100000 && r.address < (32u << 20)))
          << std::hex << r.address;
    }
  }
  EXPECT_TRUE(alias_fetch);
  const OwnedRecord& last = run.log.records.back();
  EXPECT_EQ(last.kind, RecordKind::kPortWrite);
  EXPECT_EQ(last.address, pc::kClockPowerOff);
}

TEST(I486MachineTest, TheSeedDecidesTheScheduleAndNothingElse) {
  RomRun a(1), b(1), c(2);
  ASSERT_EQ(a.log.records.size(), b.log.records.size());
  EXPECT_TRUE(a.log.records == b.log.records);
  EXPECT_EQ(a.summary.instructions, b.summary.instructions);
  EXPECT_EQ(c.machine->console(), a.machine->console());
  // Another outside world: the interrupts fall at other instruction boundaries.
  auto ack_points = [](const RomRun& r) {
    std::vector<uint64_t> points;
    for (const OwnedRecord& rec : r.log.records) {
      if (rec.kind == RecordKind::kInterruptAck) points.push_back(rec.branch_count);
    }
    return points;
  };
  EXPECT_NE(ack_points(a), ack_points(c));
  EXPECT_NE(a.summary.idle, c.summary.idle);
  EXPECT_NE(a.Word(0x518), c.Word(0x518));  // turns of the busy wait
}

// A capture does not depend on how the run is cut into calls: the outside world is a function of
// instruction time alone.
TEST(I486MachineTest, TheScheduleDoesNotDependOnSlicing) {
  RomRun whole(3), sliced(3, 7777);
  EXPECT_TRUE(sliced.summary.powered_off);
  ASSERT_EQ(whole.log.records.size(), sliced.log.records.size());
  EXPECT_TRUE(whole.log.records == sliced.log.records);
  EXPECT_EQ(whole.summary.instructions, sliced.summary.instructions);
}

TEST(I486MachineTest, RecordsAndHeaderMakeAValidCat) {
  RomRun run(3);
  ASSERT_TRUE(run.summary.powered_off);
  const std::string path = ::testing::TempDir() + "/i486_pc_devices.cat";
  {
    auto writer = cat::CatWriter::Create(path, run.machine->Header());
    ASSERT_TRUE(writer.ok()) << writer.status();
    for (const OwnedRecord& r : run.log.records) ASSERT_TRUE((*writer)->Write(r.view()).ok());
    ASSERT_TRUE((*writer)->Finish().ok());
  }
  auto reader = cat::CatReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->header(), run.machine->Header());
  cat::BusRecord r;
  size_t i = 0;
  for (;;) {
    absl::StatusOr<bool> more = (*reader)->Next(r);
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;
    ASSERT_LT(i, run.log.records.size());
    EXPECT_EQ(OwnedRecord(r), run.log.records[i]) << "record " << i;
    ++i;
  }
  EXPECT_EQ(i, run.log.records.size());
  std::remove(path.c_str());
}

#endif  // CITCAT_PC_ROMS

TEST(I486MachineTest, AHaltNoInterruptCanEndIsStuck) {
  // The timer runs (mode 2, count 65536) but its interrupt is masked: STI; HLT never ends.
  PcConfig pc;
  pc.rom.assign(0x10000, 0x90);
  const uint8_t code[] = {0xB0, 0x34, 0xE6, 0x43,  // mov al,34h; out 43h,al
                          0xB0, 0x00, 0xE6, 0x40,  // mov al,0; out 40h,al
                          0xE6, 0x40,              // out 40h,al
                          0xB0, 0xFF, 0xE6, 0x21,  // mov al,FFh; out 21h,al (OCW1)
                          0xFB, 0xF4,              // sti; hlt
                          0xEB, 0xFD};             // jmp to the hlt
  std::memcpy(pc.rom.data(), code, sizeof code);
  const uint8_t reset[] = {0xE9, 0x0D, 0x00};  // jmp 0000h
  std::memcpy(&pc.rom[0xFFF0], reset, sizeof reset);
  auto m = I486Machine::Create({pc, ""});
  ASSERT_TRUE(m.ok());
  auto run = (*m)->Run(nullptr, 1000);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(run->stuck);
  EXPECT_EQ(run->instructions, 10u);
  EXPECT_GE(run->idle, 60 * 33'000'000ull - 2'000'000);
  EXPECT_EQ(run->interrupts, 0u);
}

TEST(I486MachineTest, MonitorErrorStopsTheMachine) {
  // A jump to itself at the reset vector, fetched uncached: a record per instruction.
  PcConfig pc;
  pc.rom.assign(0x10000, 0x90);
  pc.rom[0xFFF0] = 0xEB;  // JMP $-2: loops on itself
  pc.rom[0xFFF1] = 0xFE;
  auto m = I486Machine::Create({pc, ""});
  ASSERT_TRUE(m.ok());
  Refuses monitor;
  auto run = (*m)->Run(&monitor, 1'000'000);
  EXPECT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), absl::StatusCode::kDataLoss);
}

TEST(I486MachineTest, UnmodelledOrShutdownStopsWithAnError) {
  PcConfig pc;
  pc.rom.assign(0x10000, 0x90);
  // At the reset vector: LIDT of a zero-limit table, then INT 3: #GP delivering, then #DF, then
  // shutdown.
  const uint8_t code[] = {0x66, 0x2E, 0x0F, 0x01, 0x1E, 0xF8, 0xFF,  // lidtd cs:[0xFFF8]
                          0xCC};                                     // int3
  std::memcpy(&pc.rom[0xFFF0], code, sizeof code);
  std::memset(&pc.rom[0xFFF8], 0, 6);  // the table: limit 0
  auto m = I486Machine::Create({pc, ""});
  ASSERT_TRUE(m.ok());
  auto run = (*m)->Run(nullptr, 1000);
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.status().message().find("shut down"), std::string::npos) << run.status();
}

}  // namespace
}  // namespace citcat::machine
