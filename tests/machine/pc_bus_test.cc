// The PC bus on its own: the memory map (RAM, the hole, the boot ROM and its copy below 1 MiB,
// unmapped space), port dispatch and byte splitting, the clock and power-off ports, interrupt
// acknowledge cycles, reserved areas, the monitor and the CAT header.
#include "machine/i486/pc_bus.h"

#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "machine/i486/machine.h"
#include "machine/i486/system.h"

namespace citcat::machine {
namespace {

using cat::RecordKind;

class Log : public BusMonitor {
 public:
  absl::Status OnRecord(const cat::BusRecord& record) override {
    records.emplace_back(record);
    return absl::OkStatus();
  }
  std::vector<cat::OwnedRecord> records;
};

std::unique_ptr<I486Machine> Machine(PcConfig pc) {
  auto m = I486Machine::Create({std::move(pc), "test"});
  EXPECT_TRUE(m.ok()) << m.status();
  return std::move(*m);
}

std::vector<uint8_t> Read(PcBus& bus, RecordKind kind, uint64_t address, size_t size) {
  std::vector<uint8_t> data(size);
  cat::BusRecord r{kind, 0, cat::kMasterCpu, address, 0, data};
  bus.Read(r, data);
  return data;
}

void Write(PcBus& bus, RecordKind kind, uint64_t address, std::vector<uint8_t> data) {
  bus.Write({kind, 0, cat::kMasterCpu, address, 0, data});
}

uint8_t In(PcBus& bus, uint16_t port) { return Read(bus, RecordKind::kPortRead, port, 1)[0]; }
void Out(PcBus& bus, uint16_t port, uint8_t value) {
  Write(bus, RecordKind::kPortWrite, port, {value});
}

TEST(PcBusTest, MemoryMap) {
  PcConfig pc;
  pc.memory_bytes = 2 << 20;
  pc.rom.assign(0x40000, 0);  // 256 KiB: its last 128 KiB appear below 1 MiB
  for (size_t i = 0; i < pc.rom.size(); ++i) pc.rom[i] = static_cast<uint8_t>(i * 7 + (i >> 16));
  const std::vector<uint8_t> rom = pc.rom;
  auto m = Machine(pc);
  PcBus& bus = m->bus();
  const auto kRead = RecordKind::kUncachedRead, kWrite = RecordKind::kUncachedWrite;

  Write(bus, RecordKind::kWriteThrough, 0x9FFFC, {1, 2, 3, 4});
  EXPECT_EQ(Read(bus, RecordKind::kFill, 0x9FFF0, 16)[15], 4);
  Write(bus, kWrite, 0xB8000, {0x41, 0x07});  // the hole: lost
  EXPECT_EQ(Read(bus, kRead, 0xB8000, 2), (std::vector<uint8_t>{0xFF, 0xFF}));
  EXPECT_EQ(Read(bus, kRead, 0xDFFFE, 2), (std::vector<uint8_t>{0xFF, 0xFF}));
  // The top of the address space and the copy below 1 MiB.
  EXPECT_EQ(Read(bus, kRead, 0xFFFFFFF0, 4),
            (std::vector<uint8_t>{rom[0x3FFF0], rom[0x3FFF1], rom[0x3FFF2], rom[0x3FFF3]}));
  EXPECT_EQ(Read(bus, kRead, 0xFFFC0000, 1)[0], rom[0]);
  EXPECT_EQ(Read(bus, kRead, 0xE0000, 1)[0], rom[0x20000]);
  EXPECT_EQ(Read(bus, kRead, 0xFFFF0, 2), (std::vector<uint8_t>{rom[0x3FFF0], rom[0x3FFF1]}));
  Write(bus, kWrite, 0xFFFF0, {0, 0});  // ROM: read-only
  EXPECT_EQ(Read(bus, kRead, 0xFFFF0, 1)[0], rom[0x3FFF0]);
  // Unmapped: above RAM, below the ROM.
  EXPECT_EQ(Read(bus, kRead, 2 << 20, 4), (std::vector<uint8_t>(4, 0xFF)));
  EXPECT_EQ(Read(bus, kRead, 0xFFFBFFFC, 4), (std::vector<uint8_t>(4, 0xFF)));
  // Peek sees RAM only.
  std::vector<uint8_t> peek(4);
  EXPECT_TRUE(bus.Peek(0x9FFFC, peek));
  EXPECT_EQ(peek, (std::vector<uint8_t>{1, 2, 3, 4}));
  EXPECT_FALSE(bus.Peek(0xA0000, peek));
  EXPECT_TRUE(bus.LoadRam(0x100000, peek).ok());
  EXPECT_FALSE(bus.LoadRam(0x9FFFE, peek).ok());
}

TEST(PcBusTest, DefaultRomIsHltAtTheResetVector) {
  auto m = Machine({});
  EXPECT_EQ(Read(m->bus(), RecordKind::kUncachedRead, 0xFFFFFFF0, 1)[0], 0xF4);
  EXPECT_EQ(Read(m->bus(), RecordKind::kUncachedRead, 0xF0000, 1)[0], 0xF4);
  EXPECT_EQ(Read(m->bus(), RecordKind::kUncachedRead, 0xEFFFF, 1)[0], 0xFF);
  // The processor halts with interrupts off: nothing can wake it.
  auto run = m->Run(nullptr, 1000);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(run->stuck);
  EXPECT_EQ(run->instructions, 1u);
}

TEST(PcBusTest, PortsSplitIntoByteCyclesAndOpenBus) {
  auto m = Machine({});
  PcBus& bus = m->bus();
  EXPECT_EQ(In(bus, 0x80), 0xFF);  // no device
  // A word written to 20h/21h is two byte cycles: ICW1 then ICW2.
  Write(bus, RecordKind::kPortWrite, 0x20, {0x11, 0x20});
  Out(bus, 0x21, 0x04);
  Out(bus, 0x21, 0x01);
  Out(bus, 0x21, 0xA5);  // OCW1
  EXPECT_EQ(Read(bus, RecordKind::kPortRead, 0x20, 2), (std::vector<uint8_t>{0x00, 0xA5}));
  // The UART's registers, the RTC's.
  EXPECT_EQ(In(bus, 0x3FD), 0x60);
  Out(bus, 0x3FB, 0x03);  // 8 data bits: the reset leaves 5
  Out(bus, 0x3F8, 'Z');
  EXPECT_EQ(bus.console(), "Z");
  Out(bus, 0x70, 0x0D);
  EXPECT_EQ(In(bus, 0x71), 0x80);
}

TEST(PcBusTest, ClockEntropyAndPowerOff) {
  PcConfig pc;
  pc.seed = 42;
  auto m = Machine(pc);
  PcBus& bus = m->bus();
  World world(42, kPcTimerRate);
  const uint32_t first = world.Entropy(), second = world.Entropy();
  auto le32 = [](const std::vector<uint8_t>& d) {
    return d[0] | d[1] << 8 | d[2] << 16 | static_cast<uint32_t>(d[3]) << 24;
  };
  EXPECT_EQ(le32(Read(bus, RecordKind::kPortRead, pc::kClockEntropy, 4)), first);
  EXPECT_EQ(Read(bus, RecordKind::kPortRead, pc::kClockEntropy, 1)[0], second & 0xFF);
  EXPECT_EQ(le32(Read(bus, RecordKind::kPortRead, pc::kClockMicroseconds, 4)), 0u);
  EXPECT_EQ(Read(bus, RecordKind::kPortRead, pc::kClockPort + 2, 2),
            (std::vector<uint8_t>{0xFF, 0xFF}));
  bus.IdleUntil(33'000'000);  // about a second
  const uint32_t us = le32(Read(bus, RecordKind::kPortRead, pc::kClockMicroseconds, 4));
  EXPECT_EQ(us, world.Microseconds(33'000'000));
  EXPECT_NEAR(us, 1'000'000, 10'000);
  EXPECT_FALSE(bus.powered_off());
  Out(bus, pc::kClockPowerOff, 0);
  EXPECT_TRUE(bus.powered_off());
}

TEST(PcBusTest, InterruptAcknowledgeCarriesTheVector) {
  auto m = Machine({});
  PcBus& bus = m->bus();
  Log log;
  bus.set_monitor(&log);
  for (auto [port, value] : std::vector<std::pair<uint16_t, uint8_t>>{{0x20, 0x11},
                                                                      {0x21, 0x20},
                                                                      {0x21, 0x04},
                                                                      {0x21, 0x01},
                                                                      {0xA0, 0x11},
                                                                      {0xA1, 0x28},
                                                                      {0xA1, 0x02},
                                                                      {0xA1, 0x01}}) {
    Out(bus, port, value);
  }
  m->cpu().set_eflags(x86::flag::kIF);
  EXPECT_FALSE(bus.InterruptReady());
  bus.pics().SetIrq(14, true);
  EXPECT_TRUE(bus.pics().Intr());
  EXPECT_TRUE(bus.InterruptReady());
  EXPECT_EQ(Read(bus, RecordKind::kInterruptAck, 0, 1)[0], 0x2E);
  EXPECT_FALSE(bus.InterruptReady());
  ASSERT_EQ(log.records.size(), 9u);
  const cat::OwnedRecord& ack = log.records.back();
  EXPECT_EQ(ack.kind, RecordKind::kInterruptAck);
  EXPECT_EQ(ack.data, (std::vector<uint8_t>{0x2E}));
  EXPECT_EQ(bus.interrupt_acks(), 1u);
  EXPECT_EQ(log.records[0].kind, RecordKind::kPortWrite);
  EXPECT_EQ(log.records[0].address, 0x20u);
}

TEST(PcBusTest, TimerDrivesIrq0ThroughTheEventLoop) {
  auto m = Machine({});
  PcBus& bus = m->bus();
  for (auto [port, value] : std::vector<std::pair<uint16_t, uint8_t>>{
           {0x20, 0x13}, {0x21, 0x08}, {0x21, 0x01}, {0x43, 0x34}, {0x40, 0x00}, {0x40, 0x10}}) {
    Out(bus, port, value);  // a single PIC at 08h; the timer at 4096 ticks
  }
  const uint64_t next = bus.NextEvent();
  World world(1, kPcTimerRate);
  EXPECT_EQ(next, world.WhenTicksReach(0, 4096));  // OUT falls one tick before the reload
  bus.IdleUntil(next);
  bus.Advance();
  EXPECT_FALSE(bus.pics().Intr());
  bus.IdleUntil(bus.NextEvent());
  bus.Advance();
  EXPECT_TRUE(bus.pics().Intr());  // OUT rose: IRQ 0
  EXPECT_EQ(bus.Now(), world.WhenTicksReach(0, 4097));
}

TEST(PcBusTest, ReservedAreasReadBackWhatWasStored) {
  PcConfig pc;
  pc.memory_bytes = 4 << 20;
  pc.reserved = {{"hook", cat::WindowKind::kMemoryMapped, 0xFEE00000, 0x100},
                 {"marker", cat::WindowKind::kPort, 0x5D0, 8}};
  auto m = Machine(pc);
  PcBus& bus = m->bus();
  Write(bus, RecordKind::kUncachedWrite, 0xFEE00010, {1, 2, 3, 4});
  EXPECT_EQ(Read(bus, RecordKind::kUncachedRead, 0xFEE00010, 4),
            (std::vector<uint8_t>{1, 2, 3, 4}));
  Write(bus, RecordKind::kPortWrite, 0x5D4, {9, 8});
  EXPECT_EQ(Read(bus, RecordKind::kPortRead, 0x5D4, 2), (std::vector<uint8_t>{9, 8}));
  cat::CatHeader h = m->Header();
  ASSERT_EQ(h.magic.size(), 2u);
  EXPECT_EQ(h.magic[1].name, "marker");

  for (const cat::AddressWindow& bad :
       {cat::AddressWindow{"ram", cat::WindowKind::kMemoryMapped, 0x100000, 16},
        cat::AddressWindow{"rom", cat::WindowKind::kMemoryMapped, 0xFFFFFF00, 16},
        cat::AddressWindow{"pit", cat::WindowKind::kPort, 0x42, 4},
        cat::AddressWindow{"empty", cat::WindowKind::kPort, 0x600, 0}}) {
    PcConfig c;
    c.reserved = {bad};
    EXPECT_FALSE(PcBus::Check(c).ok()) << bad.name;
  }
}

TEST(PcBusTest, ConfigurationChecks) {
  PcConfig c;
  c.memory_bytes = 512 << 10;
  EXPECT_FALSE(PcBus::Check(c).ok());
  c.memory_bytes = 257 << 20;
  EXPECT_FALSE(PcBus::Check(c).ok());
  c.memory_bytes = 32 << 20;
  c.disk.resize(100);
  EXPECT_FALSE(PcBus::Check(c).ok());
  c.disk.clear();
  c.rom.resize((1 << 20) + 1);
  EXPECT_FALSE(PcBus::Check(c).ok());
  c.rom.resize(1 << 20);
  EXPECT_TRUE(PcBus::Check(c).ok());
}

TEST(PcBusTest, Header) {
  PcConfig pc;
  pc.memory_bytes = 64 << 20;
  auto m = Machine(pc);
  cat::CatHeader h = m->Header();
  EXPECT_EQ(h.machine, cat::Machine::kI486);
  EXPECT_EQ(h.byte_order, cat::ByteOrder::kLittle);
  EXPECT_EQ(h.memory_bytes, 64u << 20);
  ASSERT_EQ(h.holes.size(), 1u);
  EXPECT_EQ(h.holes[0], (cat::MemoryHole{0xA0000, 0x60000}));
  ASSERT_EQ(h.caches.size(), 1u);
  EXPECT_EQ(h.caches[0], (cat::CacheGeometry{1, cat::CacheType::kUnified, 4,
                                             cat::WritePolicy::kWriteThrough, 8192, 16}));
  ASSERT_EQ(h.devices.size(), 11u);
  EXPECT_EQ(h.devices[pc::kMasterBusMasterIde - 1].name, "ide-dma");
  EXPECT_EQ(h.devices.back().base, 0xFFFF0000u);
  EXPECT_EQ(h.producer, "test");
  EXPECT_TRUE(h.IsMemory(0x9FFFF, 1));
  EXPECT_FALSE(h.IsMemory(0xA0000, 1));
  EXPECT_TRUE(h.IsMemory(0x100000, 1));
}

}  // namespace
}  // namespace citcat::machine
