// An observer that checks what a core tells of the registers each instruction wrote
// (simcore::Observer::OnRegister): every register the instruction changed is told, with the value
// it holds once the instruction completed, before the next instruction or event is told; an
// instruction that raised an exception tells none. It snapshots the registers before each
// instruction, so it also checks the decoder's lists of registers written against what the core
// does.
#ifndef CITCAT_TESTS_SUPPORT_REGISTER_CHECKER_H_
#define CITCAT_TESTS_SUPPORT_REGISTER_CHECKER_H_

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <utility>

#include "gtest/gtest.h"
#include "simcore/observer.h"

namespace citcat::testing {

// `N` registers, numbered as the core tells them; `registers` reads them all from the core.
template <size_t N>
class RegisterChecker final : public simcore::Observer {
 public:
  using Registers = std::array<uint64_t, N>;
  explicit RegisterChecker(std::function<Registers()> registers)
      : registers_(std::move(registers)) {}

  bool WantsRegisters() const override { return true; }
  void OnInstruction(uint64_t pc, std::span<const uint8_t>) override {
    Check();
    before_ = registers_();
    told_.fill(false);
    pending_ = true;
    pc_ = pc;
  }
  void OnRegister(uint16_t reg, uint64_t value) override {
    ASSERT_TRUE(pending_) << "register " << reg << " told with no instruction";
    ASSERT_LT(reg, N);
    EXPECT_EQ(value, registers_()[reg]) << "register " << reg << " at " << std::hex << pc_;
    told_[reg] = true;
    ++told;
  }
  void OnEvent(simcore::EventKind kind, uint32_t, uint64_t pc) override {
    Check(kind == simcore::EventKind::kFault && pc == pc_);
  }

  // The instruction told last, once it completed (after a run: the core tells its registers by
  // the time Run returns) or `faulted`.
  void Check(bool faulted = false) {
    if (!std::exchange(pending_, false)) return;
    const Registers after = registers_();
    for (size_t r = 0; r < N; ++r) {
      if (faulted) {
        EXPECT_FALSE(told_[r]) << "register " << r << " told by a faulting " << std::hex << pc_;
      } else if (after[r] != before_[r]) {
        EXPECT_TRUE(told_[r]) << "register " << r << " changed, untold, at " << std::hex << pc_;
      }
      if (::testing::Test::HasFailure()) return;
    }
    ++checked;
  }

  uint64_t checked = 0, told = 0;

 private:
  std::function<Registers()> registers_;
  Registers before_{};
  std::array<bool, N> told_{};
  bool pending_ = false;
  uint64_t pc_ = 0;
};

}  // namespace citcat::testing

#endif  // CITCAT_TESTS_SUPPORT_REGISTER_CHECKER_H_
