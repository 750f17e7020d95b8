// ChampSim's trace record, `input_instr`, as ChampSim reads it from a trace file: 64 bytes,
// little-endian, no padding (docs/trace-formats.md, "champsim"). Shared by the writer and by
// readers (tests, tools).
#ifndef CITCAT_TRACES_CHAMPSIM_H_
#define CITCAT_TRACES_CHAMPSIM_H_

#include <cstdint>

namespace citcat::traces::champsim {

inline constexpr int kRecordBytes = 64;
inline constexpr int kDestinations = 2;
inline constexpr int kSources = 4;
// The registers ChampSim tells branch types apart by.
inline constexpr uint8_t kStackPointer = 6;
inline constexpr uint8_t kFlags = 25;
inline constexpr uint8_t kInstructionPointer = 26;

struct InputInstr {
  uint64_t ip = 0;
  uint8_t is_branch = 0;
  uint8_t branch_taken = 0;
  uint8_t destination_registers[kDestinations] = {};  // 0: none
  uint8_t source_registers[kSources] = {};
  uint64_t destination_memory[kDestinations] = {};  // 0: none
  uint64_t source_memory[kSources] = {};
};

inline void PutLe64(uint64_t v, char* p) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
inline uint64_t GetLe64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | static_cast<uint8_t>(p[i]);
  return v;
}

// Byte offsets: ip 0, is_branch 8, branch_taken 9, destination_registers 10, source_registers
// 12, destination_memory 16, source_memory 32.
inline void Encode(const InputInstr& in, char* out) {
  PutLe64(in.ip, out);
  out[8] = static_cast<char>(in.is_branch);
  out[9] = static_cast<char>(in.branch_taken);
  for (int i = 0; i < kDestinations; ++i)
    out[10 + i] = static_cast<char>(in.destination_registers[i]);
  for (int i = 0; i < kSources; ++i) out[12 + i] = static_cast<char>(in.source_registers[i]);
  for (int i = 0; i < kDestinations; ++i) PutLe64(in.destination_memory[i], out + 16 + 8 * i);
  for (int i = 0; i < kSources; ++i) PutLe64(in.source_memory[i], out + 32 + 8 * i);
}

inline InputInstr Decode(const char* p) {
  InputInstr in;
  in.ip = GetLe64(p);
  in.is_branch = static_cast<uint8_t>(p[8]);
  in.branch_taken = static_cast<uint8_t>(p[9]);
  for (int i = 0; i < kDestinations; ++i)
    in.destination_registers[i] = static_cast<uint8_t>(p[10 + i]);
  for (int i = 0; i < kSources; ++i) in.source_registers[i] = static_cast<uint8_t>(p[12 + i]);
  for (int i = 0; i < kDestinations; ++i) in.destination_memory[i] = GetLe64(p + 16 + 8 * i);
  for (int i = 0; i < kSources; ++i) in.source_memory[i] = GetLe64(p + 32 + 8 * i);
  return in;
}

}  // namespace citcat::traces::champsim

#endif  // CITCAT_TRACES_CHAMPSIM_H_
