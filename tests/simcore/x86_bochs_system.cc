#include "tests/simcore/x86_bochs_system.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace citcat::x86::testing {

std::vector<OracleState> BochsStates(const oracle::BochsRun& run) {
  std::vector<OracleState> states;
  states.reserve(run.states.size());
  for (const oracle::BochsState& b : run.states) {
    OracleState& s = states.emplace_back();
    std::copy(std::begin(b.gpr), std::end(b.gpr), s.gpr);
    s.eip = b.eip;
    s.eflags = b.eflags;
    s.selector[kCs] = b.cs;
  }
  return states;
}

std::string FirstMemoryDifference(PcBus& bus, uint32_t address,
                                  const std::vector<uint8_t>& theirs) {
  const auto dword = [](auto byte) {
    return byte(0) | byte(1) << 8 | byte(2) << 16 | static_cast<uint32_t>(byte(3)) << 24;
  };
  for (uint32_t i = 0; i + 4 <= theirs.size(); i += 4) {
    const uint32_t ours = dword([&](uint32_t k) { return uint32_t{bus.ByteAt(address + i + k)}; });
    const uint32_t bochs = dword([&](uint32_t k) { return uint32_t{theirs[i + k]}; });
    if (ours != bochs) {
      return absl::StrFormat("the dword at %05x is %#x, Bochs %#x", address + i, ours, bochs);
    }
  }
  return "";
}

}  // namespace citcat::x86::testing
