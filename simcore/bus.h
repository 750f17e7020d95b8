// What lies beyond a CPU's caches: the system bus, one interface for every core. A core reports
// each bus transaction as a cat::BusRecord whose kind says what it is, and the bus supplies the
// data of reads:
//   Read:  kFill, kUncachedRead (memory or a memory-mapped device), kPortRead (port I/O), and
//          kInterruptAck (the bus supplies the vector the interrupt controller puts on it).
//   Write: kWriteBack, kWriteThrough (every store of a write-through cache), kUncachedWrite and
//          kPortWrite.
// The traced reference machines (RAM, devices, bus monitor) and the replay engine (memory image,
// event queues, regenerated CAT) implement it; the cores know nothing else of what lies beyond.
#ifndef CITCAT_SIMCORE_BUS_H_
#define CITCAT_SIMCORE_BUS_H_

#include <cstdint>
#include <span>

#include "cat_parser/record.h"

namespace citcat::simcore {

class Bus {
 public:
  virtual ~Bus() = default;

  // A read transaction. The bus fills `data`; `record.data` views the same bytes, so once filled
  // the record is exactly what a bus monitor would log.
  virtual void Read(const cat::BusRecord& record, std::span<uint8_t> data) = 0;

  // A write transaction with its data.
  virtual void Write(const cat::BusRecord& record) = 0;

  // Side-effect-free look at physical memory for debuggers and tests: never a bus transaction.
  // Returns false where the bus has no plain memory.
  virtual bool Peek(uint64_t address, std::span<uint8_t> data) const {
    (void)address;
    (void)data;
    return false;
  }
};

}  // namespace citcat::simcore

#endif  // CITCAT_SIMCORE_BUS_H_
