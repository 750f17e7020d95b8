// Plausible CATs made up from a seed: for benchmarks, tests, fuzzing seeds and the demo until a
// traced machine produces real ones. The records follow the format's rules but describe no real
// program.
#ifndef CITCAT_CAT_PARSER_SYNTHETIC_H_
#define CITCAT_CAT_PARSER_SYNTHETIC_H_

#include <cstdint>
#include <random>
#include <vector>

#include "cat_parser/record.h"

namespace citcat::cat {

// A header as an R4400 or i486 reference machine would write it.
CatHeader SyntheticHeader(Machine machine);

// An endless source of records: mostly line fills and write-backs, with uncached, DMA and
// (on the i486) port and interrupt-acknowledge traffic mixed in.
class SyntheticRecords {
 public:
  SyntheticRecords(const CatHeader& header, uint64_t seed);
  // The next record; its data stays valid until the next call.
  BusRecord Next();

 private:
  const CatHeader& header_;
  std::mt19937_64 rng_;
  uint64_t branch_count_ = 0;
  uint32_t line_bytes_;
  std::vector<uint8_t> data_;
};

}  // namespace citcat::cat

#endif  // CITCAT_CAT_PARSER_SYNTHETIC_H_
