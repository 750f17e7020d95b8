// Plain RAM behind the Bus interface, for tests and benchmarks of a core on its own.
#ifndef CITCAT_SIMCORE_RAM_BUS_H_
#define CITCAT_SIMCORE_RAM_BUS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "simcore/bus.h"

namespace citcat::simcore {

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

}  // namespace citcat::simcore

#endif  // CITCAT_SIMCORE_RAM_BUS_H_
