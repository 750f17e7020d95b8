// The ATA drive and its bus-master DMA engine: PIO reads of known sectors, IDENTIFY, READ DMA
// through a PRD table of several entries, the status and IRQ 14 sequence, errors, nIEN and SRST.
#include "machine/i486/ata.h"

#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace citcat::machine {
namespace {

// 64 KiB of memory below 1 MiB is "RAM"; every bus-master cycle is logged.
class FakeMemory : public DmaMemory {
 public:
  struct Cycle {
    bool write;
    uint32_t address;
    uint32_t size;
  };
  FakeMemory() : bytes(1 << 20, 0) {}
  bool DmaRead(uint32_t address, std::span<uint8_t> data) override {
    if (address + data.size() > bytes.size()) return false;
    std::memcpy(data.data(), &bytes[address], data.size());
    cycles.push_back({false, address, static_cast<uint32_t>(data.size())});
    return true;
  }
  bool DmaWrite(uint32_t address, std::span<const uint8_t> data) override {
    if (address + data.size() > bytes.size()) return false;
    std::memcpy(&bytes[address], data.data(), data.size());
    cycles.push_back({true, address, static_cast<uint32_t>(data.size())});
    return true;
  }
  void PutPrd(uint32_t at, uint32_t base, uint32_t count, bool last) {
    for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<uint8_t>(base >> (8 * i));
    bytes[at + 4] = static_cast<uint8_t>(count);
    bytes[at + 5] = static_cast<uint8_t>(count >> 8);
    bytes[at + 6] = 0;
    bytes[at + 7] = last ? 0x80 : 0;
  }
  std::vector<uint8_t> bytes;
  std::vector<Cycle> cycles;
};

// Block n holds n in every byte but its first two, which hold n little-endian.
std::vector<uint8_t> Image(int blocks) {
  std::vector<uint8_t> image(blocks * 512);
  for (int n = 0; n < blocks; ++n) {
    std::memset(&image[n * 512], n, 512);
    image[n * 512] = static_cast<uint8_t>(n);
    image[n * 512 + 1] = static_cast<uint8_t>(n >> 8);
  }
  return image;
}

class AtaTest : public ::testing::Test {
 protected:
  AtaTest() : disk(Image(64)), world(3, kPcTimerRate), ata(disk, world, memory) {}

  // LBA28 command with `count` sectors at `lba`.
  void Issue(uint8_t command, uint32_t lba, uint8_t count) {
    ata.WriteRegister(2, count, now);
    ata.WriteRegister(3, static_cast<uint8_t>(lba), now);
    ata.WriteRegister(4, static_cast<uint8_t>(lba >> 8), now);
    ata.WriteRegister(5, static_cast<uint8_t>(lba >> 16), now);
    ata.WriteRegister(6, static_cast<uint8_t>(0xE0 | (lba >> 24)), now);
    ata.WriteRegister(7, command, now);
  }
  // Runs the drive to its next event.
  void Step() {
    ASSERT_NE(ata.NextEvent(), AtaChannel::kNever);
    now = ata.NextEvent();
    ata.Advance(now);
  }
  std::vector<uint8_t> ReadSector() {
    std::vector<uint8_t> data;
    for (int i = 0; i < 256; ++i) {
      uint32_t w = ata.ReadData(2, now);
      data.push_back(static_cast<uint8_t>(w));
      data.push_back(static_cast<uint8_t>(w >> 8));
    }
    return data;
  }
  std::vector<uint8_t> Block(int n) {
    std::span<const uint8_t> b = disk.Block(n);
    return {b.begin(), b.end()};
  }

  Disk disk;
  World world;
  FakeMemory memory;
  AtaChannel ata;
  uint64_t now = 1000;
};

TEST_F(AtaTest, PioReadOfKnownSectors) {
  EXPECT_EQ(ata.ReadRegister(7), 0x50);  // ready, seek complete
  Issue(0x20, 5, 2);
  EXPECT_EQ(ata.ReadAltStatus(), 0x80);  // busy
  EXPECT_EQ(ata.ReadRegister(2), 0x80);  // while busy every register reads as status
  EXPECT_FALSE(ata.Irq());
  const uint64_t issued = now;
  Step();
  EXPECT_GE(now - issued, 3000u);        // the seek, from the outside world
  EXPECT_EQ(ata.ReadAltStatus(), 0x58);  // data request
  EXPECT_TRUE(ata.Irq());
  EXPECT_EQ(ata.ReadAltStatus(), 0x58);
  EXPECT_TRUE(ata.Irq());                // the alternate status does not acknowledge
  EXPECT_EQ(ata.ReadRegister(7), 0x58);  // the status does
  EXPECT_FALSE(ata.Irq());
  EXPECT_EQ(ReadSector(), Block(5));
  EXPECT_EQ(ata.ReadAltStatus(), 0x80);  // the next sector is on its way
  Step();
  EXPECT_TRUE(ata.Irq());
  EXPECT_EQ(ata.ReadRegister(7), 0x58);
  EXPECT_EQ(ReadSector(), Block(6));
  EXPECT_EQ(ata.ReadRegister(7), 0x50);  // done: no interrupt at the end of a PIO read
  EXPECT_FALSE(ata.Irq());
  EXPECT_EQ(ata.NextEvent(), AtaChannel::kNever);
  EXPECT_EQ(ata.ReadData(2, now), 0xFFFFu);  // no data request: nothing to read
}

TEST_F(AtaTest, DoubleWordDataReads) {
  Issue(0x20, 9, 1);
  Step();
  std::vector<uint8_t> data;
  for (int i = 0; i < 128; ++i) {
    uint32_t d = ata.ReadData(4, now);
    for (int b = 0; b < 4; ++b) data.push_back(static_cast<uint8_t>(d >> (8 * b)));
  }
  EXPECT_EQ(data, Block(9));
}

TEST_F(AtaTest, IdentifyDevice) {
  Issue(0xEC, 0, 0);
  Step();
  EXPECT_EQ(ata.ReadRegister(7), 0x58);
  std::vector<uint8_t> id = ReadSector();
  auto word = [&](int w) { return id[2 * w] | id[2 * w + 1] << 8; };
  EXPECT_EQ(word(0), 0x0040);
  EXPECT_EQ(word(49) & 0x0300, 0x0300);  // LBA and DMA
  EXPECT_EQ(word(60) | word(61) << 16, 64);
  std::string model;
  for (int w = 27; w < 47; ++w) {
    model.push_back(static_cast<char>(word(w) >> 8));
    model.push_back(static_cast<char>(word(w)));
  }
  EXPECT_EQ(model.substr(0, 15), "CITCAT ATA DISK");
}

TEST_F(AtaTest, ReadDmaThroughSeveralPrdEntries) {
  // Three sectors into three regions that cut them at odd places.
  memory.PutPrd(0x8000, 0x10000, 300, false);
  memory.PutPrd(0x8008, 0x20000, 724, false);
  memory.PutPrd(0x8010, 0x30000, 512, true);
  for (int i = 0; i < 4; ++i)
    ata.WriteBusMaster(4 + i, static_cast<uint8_t>(0x8000 >> (8 * i)), now);
  ata.WriteBusMaster(2, 0x06, now);  // clear Error and Interrupt
  Issue(0xC8, 10, 3);
  ata.WriteBusMaster(0, 0x09, now);              // start, to memory
  EXPECT_EQ(ata.ReadBusMaster(2) & 0x01, 0x01);  // active
  Step();
  Step();
  Step();
  EXPECT_FALSE(ata.Irq());  // the sectors are in; completion follows
  EXPECT_EQ(ata.ReadAltStatus(), 0x80);
  Step();
  EXPECT_TRUE(ata.Irq());
  EXPECT_EQ(ata.ReadBusMaster(2), 0x04);  // interrupt, no longer active: the table ended exactly
  EXPECT_EQ(ata.ReadRegister(7), 0x50);
  EXPECT_FALSE(ata.Irq());
  EXPECT_EQ(ata.dma_commands(), 1u);

  std::vector<uint8_t> got(memory.bytes.begin() + 0x10000, memory.bytes.begin() + 0x10000 + 300);
  got.insert(got.end(), memory.bytes.begin() + 0x20000, memory.bytes.begin() + 0x20000 + 724);
  got.insert(got.end(), memory.bytes.begin() + 0x30000, memory.bytes.begin() + 0x30000 + 512);
  std::vector<uint8_t> want = Block(10);
  for (int n : {11, 12}) {
    std::vector<uint8_t> b = Block(n);
    want.insert(want.end(), b.begin(), b.end());
  }
  EXPECT_EQ(got, want);
  // Entries are fetched as the data reaches them; a sector cut by an entry's end is two cycles.
  using C = FakeMemory::Cycle;
  std::vector<std::tuple<bool, uint32_t, uint32_t>> cycles;
  for (const C& c : memory.cycles) cycles.emplace_back(c.write, c.address, c.size);
  EXPECT_EQ(cycles, (std::vector<std::tuple<bool, uint32_t, uint32_t>>{
                        {false, 0x8000, 8},
                        {true, 0x10000, 300},
                        {false, 0x8008, 8},
                        {true, 0x20000, 212},
                        {true, 0x20000 + 212, 512},
                        {false, 0x8010, 8},
                        {true, 0x30000, 512},
                    }));
  ata.WriteBusMaster(2, 0x04, now);
  EXPECT_EQ(ata.ReadBusMaster(2), 0x00);
}

TEST_F(AtaTest, DriveWaitsForTheEngineAndALongTableStaysActive) {
  memory.PutPrd(0x8000, 0x40000, 0, true);  // 64 KiB: more than the transfer
  for (int i = 0; i < 4; ++i)
    ata.WriteBusMaster(4 + i, static_cast<uint8_t>(0x8000 >> (8 * i)), now);
  Issue(0xC8, 3, 1);
  Step();  // the sector is ready, the engine is not started
  EXPECT_TRUE(memory.cycles.empty());
  EXPECT_EQ(ata.NextEvent(), AtaChannel::kNever);
  now += 50;
  ata.WriteBusMaster(0, 0x09, now);
  EXPECT_EQ(ata.NextEvent(), now);  // moves at once
  Step();
  EXPECT_EQ(memory.cycles.size(), 2u);
  Step();
  EXPECT_TRUE(ata.Irq());
  EXPECT_EQ(ata.ReadBusMaster(2), 0x05);  // interrupt and still active
  ata.WriteBusMaster(0, 0x08, now);       // the driver stops the engine
  EXPECT_EQ(ata.ReadBusMaster(2), 0x04);
}

TEST_F(AtaTest, ShortPrdTableFailsTheCommand) {
  memory.PutPrd(0x8000, 0x10000, 512, true);
  for (int i = 0; i < 4; ++i)
    ata.WriteBusMaster(4 + i, static_cast<uint8_t>(0x8000 >> (8 * i)), now);
  ata.WriteBusMaster(0, 0x09, now);
  Issue(0xC8, 0, 2);
  Step();
  Step();
  EXPECT_TRUE(ata.Irq());
  EXPECT_EQ(ata.ReadBusMaster(2), 0x06);  // error and interrupt, not active
  EXPECT_EQ(ata.ReadRegister(7), 0x51);
  EXPECT_EQ(ata.ReadRegister(1), 0x04);  // aborted
}

TEST_F(AtaTest, ErrorsAreReportedWithAnInterrupt) {
  Issue(0x20, 63, 2);  // runs past the end of the disk
  Step();
  EXPECT_TRUE(ata.Irq());
  EXPECT_EQ(ata.ReadRegister(7), 0x51);
  EXPECT_EQ(ata.ReadRegister(1), 0x10);  // ID not found
  Issue(0x30, 0, 1);                     // WRITE SECTORS: not supported
  Step();
  EXPECT_EQ(ata.ReadRegister(7), 0x51);
  EXPECT_EQ(ata.ReadRegister(1), 0x04);
  ata.WriteRegister(6, 0xA0, now);  // CHS addressing
  ata.WriteRegister(7, 0x20, now);
  Step();
  EXPECT_EQ(ata.ReadRegister(1), 0x04);
  Issue(0xEF, 0, 0);  // SET FEATURES: accepted, no data
  Step();
  EXPECT_EQ(ata.ReadRegister(7), 0x50);
  Issue(0xE0, 0, 0);  // STANDBY IMMEDIATE (Linux at power-off): accepted, no data
  Step();
  EXPECT_TRUE(ata.Irq());
  EXPECT_EQ(ata.ReadRegister(7), 0x50);
}

TEST_F(AtaTest, InterruptEnableAndSoftwareReset) {
  ata.WriteControl(0x02, now);  // nIEN
  Issue(0x20, 1, 1);
  Step();
  EXPECT_FALSE(ata.Irq());
  EXPECT_EQ(ata.ReadBusMaster(2) & 0x04, 0);
  ata.WriteControl(0x00, now);
  EXPECT_TRUE(ata.Irq());       // INTRQ was pending all along
  ata.WriteControl(0x04, now);  // SRST
  EXPECT_EQ(ata.ReadAltStatus(), 0x80);
  EXPECT_FALSE(ata.Irq());
  ata.WriteControl(0x00, now);
  Step();
  EXPECT_EQ(ata.ReadRegister(7), 0x50);
  EXPECT_EQ(ata.ReadRegister(1), 0x01);  // diagnostic passed
  EXPECT_EQ(ata.ReadRegister(2), 0x01);  // the ATA signature
  EXPECT_EQ(ata.ReadRegister(3), 0x01);
  EXPECT_EQ(ata.ReadRegister(4), 0x00);
  EXPECT_EQ(ata.ReadRegister(5), 0x00);
}

TEST_F(AtaTest, DeviceOneAndNoDiskReadAsAbsent) {
  ata.WriteRegister(6, 0xF0, now);  // device 1
  EXPECT_EQ(ata.ReadRegister(7), 0x00);
  ata.WriteRegister(7, 0x20, now);
  EXPECT_EQ(ata.NextEvent(), AtaChannel::kNever);
  Disk none;
  AtaChannel empty(none, world, memory);
  EXPECT_EQ(empty.ReadRegister(7), 0x00);
}

}  // namespace
}  // namespace citcat::machine
