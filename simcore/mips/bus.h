// What lies beyond the CPU's caches: the system bus. The core reports every bus transaction
// (line fills, write-backs, uncached reads and writes) as a cat::BusRecord and the bus supplies
// the data for reads. The traced reference machine (RAM, devices, bus monitor) and the replay
// engine (memory image, event queues, regenerated CAT) both implement this interface.
#ifndef CITCAT_SIMCORE_MIPS_BUS_H_
#define CITCAT_SIMCORE_MIPS_BUS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "cat_parser/record.h"

namespace citcat::mips {

class Bus {
 public:
  virtual ~Bus() = default;

  // A read transaction (kFill or kUncachedRead). The bus fills `data`; `record.data` views the
  // same bytes, so once filled the record is exactly what a bus monitor would log.
  virtual void Read(const cat::BusRecord& record, std::span<uint8_t> data) = 0;

  // A write transaction (kWriteBack or kUncachedWrite) with its data.
  virtual void Write(const cat::BusRecord& record) = 0;

  // Side-effect-free look at physical memory for debuggers and tests: never a bus transaction.
  // Returns false where the bus has no plain memory.
  virtual bool Peek(uint64_t address, std::span<uint8_t> data) const {
    (void)address;
    (void)data;
    return false;
  }
};

// Plain RAM from physical address 0, optionally logging every transaction. Reads outside the
// RAM return 0xFF bytes (an open bus); writes outside it are dropped.
class RamBus : public Bus {
 public:
  explicit RamBus(size_t bytes) : ram_(bytes, 0) {}

  void Read(const cat::BusRecord& record, std::span<uint8_t> data) override;
  void Write(const cat::BusRecord& record) override;
  bool Peek(uint64_t address, std::span<uint8_t> data) const override;

  std::span<uint8_t> ram() { return ram_; }
  std::span<const uint8_t> ram() const { return ram_; }
  // Copies bytes into RAM without a bus transaction (loading a program, playing DMA).
  void Poke(uint64_t address, std::span<const uint8_t> bytes);
  // Big-endian 32-bit word helpers for tests.
  void PokeWordBE(uint64_t address, uint32_t word);
  uint32_t PeekWordBE(uint64_t address) const;

  void set_logging(bool on) { logging_ = on; }
  const std::vector<cat::OwnedRecord>& log() const { return log_; }
  void clear_log() { log_.clear(); }

 private:
  std::vector<uint8_t> ram_;
  bool logging_ = false;
  std::vector<cat::OwnedRecord> log_;
};

}  // namespace citcat::mips

#endif  // CITCAT_SIMCORE_MIPS_BUS_H_
