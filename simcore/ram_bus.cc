#include "simcore/ram_bus.h"

#include <algorithm>

namespace citcat::simcore {

void RamBus::Read(const cat::BusRecord& record, std::span<uint8_t> data) {
  if (record.address <= ram_.size() && data.size() <= ram_.size() - record.address) {
    std::copy_n(ram_.begin() + record.address, data.size(), data.begin());
    if (logging_) log_.emplace_back(record);
    return;
  }
  for (size_t i = 0; i < data.size(); ++i) {
    uint64_t a = record.address + i;
    data[i] = a < ram_.size() ? ram_[a] : 0xFF;
  }
  if (logging_) log_.emplace_back(record);
}

void RamBus::Write(const cat::BusRecord& record) {
  if (record.address <= ram_.size() && record.data.size() <= ram_.size() - record.address) {
    std::copy_n(record.data.begin(), record.data.size(), ram_.begin() + record.address);
    if (logging_) log_.emplace_back(record);
    return;
  }
  for (size_t i = 0; i < record.data.size(); ++i) {
    uint64_t a = record.address + i;
    if (a < ram_.size()) ram_[a] = record.data[i];
  }
  if (logging_) log_.emplace_back(record);
}

bool RamBus::Peek(uint64_t address, std::span<uint8_t> data) const {
  if (address > ram_.size() || data.size() > ram_.size() - address) return false;
  std::copy_n(ram_.begin() + address, data.size(), data.begin());
  return true;
}

void RamBus::Poke(uint64_t address, std::span<const uint8_t> bytes) {
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (address + i < ram_.size()) ram_[address + i] = bytes[i];
  }
}

void RamBus::PokeWordBE(uint64_t address, uint32_t word) {
  const uint8_t b[4] = {static_cast<uint8_t>(word >> 24), static_cast<uint8_t>(word >> 16),
                        static_cast<uint8_t>(word >> 8), static_cast<uint8_t>(word)};
  Poke(address, b);
}

uint32_t RamBus::PeekWordBE(uint64_t address) const {
  uint8_t b[4] = {0, 0, 0, 0};
  Peek(address, b);
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
}

}  // namespace citcat::simcore
