// The i486 recorder's branch outcomes come from the core (Cpu::BranchTaken): LOOP, LOOPNE, JCXZ
// and INTO, taken and not, recorded as the core runs them.
#include "traces/x86_recorder.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "simcore/x86/cpu.h"
#include "tests/simcore/pc_bus.h"

namespace citcat::traces {
namespace {

class Collect final : public TraceSink {
 public:
  absl::Status Consume(const Record& record) override {
    records.push_back(record);
    return absl::OkStatus();
  }
  std::vector<Record> records;
};

TEST(X86Recorder, ConditionalBranchesAreTakenAsTheCoreTakesThem) {
  // Real mode, code at 1000:0000; vector 4 (INTO) to 0000:0500, a HLT.
  const std::vector<uint8_t> code = {
      0xB9, 0x03, 0x00,  // 00 mov cx, 3
      0xE2, 0xFE,        // 03 loop 03: taken, taken, not taken
      0xE3, 0x00,        // 05 jcxz 07: taken (CX = 0)
      0x41,              // 07 inc cx
      0xE3, 0x00,        // 08 jcxz 0A: not taken
      0x41,              // 0A inc cx (CX = 2)
      0x39, 0xC0,        // 0B cmp ax, ax: ZF = 1
      0xE0, 0x00,        // 0D loopne 0F: not taken (ZF), CX = 1
      0xCE,              // 0F into: not taken (OF = 0)
      0xB0, 0x7F,        // 10 mov al, 7Fh
      0x04, 0x01,        // 12 add al, 1: OF = 1
      0xCE,              // 14 into: taken, to the handler
  };
  x86::testing::PcBus bus;
  bus.Poke(0x10000, code);
  bus.Poke(0x500, {0xF4});
  bus.Poke(4 * 4, {0x00, 0x05, 0x00, 0x00});
  x86::Cpu cpu(bus);
  cpu.SetReal(0x1000, 0x1000, 0x2000);
  cpu.set_idtr({0, 0x3FF, 0});
  cpu.set_eip(0);
  cpu.set_reg(x86::kEsp, 0x100);
  cpu.set_deliver_interrupts(true);
  Collect sink;
  X86Recorder recorder(sink, cpu);
  cpu.set_observer(&recorder);
  cpu.Run(16);
  recorder.Flush();
  ASSERT_TRUE(recorder.status().ok());

  struct Branch {
    uint64_t pc;
    bool taken;
  };
  std::vector<Branch> got;
  for (const Record& r : sink.records) {
    if (r.branch != BranchKind::kNone) got.push_back({r.pc - 0x10000, r.taken});
  }
  const std::vector<Branch> want = {{0x03, true},  {0x03, true},  {0x03, false}, {0x05, true},
                                    {0x08, false}, {0x0D, false}, {0x0F, false}, {0x14, true}};
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].pc, want[i].pc) << "branch " << i;
    EXPECT_EQ(got[i].taken, want[i].taken) << "branch " << i << " at " << want[i].pc;
  }
  EXPECT_EQ(cpu.segment(x86::kCs).base + cpu.eip(), 0x501u);  // halted in the INTO handler
}

// The core tells of an x87 memory operand as a trace shows it: in quadwords, then what is left
// (it moves the operand in doublewords and a last word).
TEST(X86Recorder, AnX87OperandIsOneAccessPerQuadword) {
  const std::vector<uint8_t> code = {
      0xDB, 0xE3,              // fninit (after RESET every register is tagged valid)
      0xDD, 0x06, 0x00, 0x20,  // fld qword [2000h]
      0xDB, 0x2E, 0x10, 0x20,  // fld tword [2010h]
      0xF4,                    // hlt
  };
  x86::testing::PcBus bus;
  bus.Poke(0x10000, code);
  bus.Poke(0x22000, {0, 0, 0, 0, 0, 0, 0xF0, 0x3F});           // 1.0 as a double
  bus.Poke(0x22010, {0, 0, 0, 0, 0, 0, 0, 0x80, 0xFF, 0x3F});  // 1.0 as 80 bits
  x86::Cpu cpu(bus);
  cpu.SetReal(0x1000, 0x2000, 0x3000);
  cpu.set_eip(0);
  Collect sink;
  X86Recorder recorder(sink, cpu);
  cpu.set_observer(&recorder);
  cpu.Run(4);
  recorder.Flush();
  ASSERT_TRUE(recorder.status().ok());
  ASSERT_GE(sink.records.size(), 3u);
  const auto& qword = sink.records[1].accesses;
  ASSERT_EQ(qword.size(), 1u);
  EXPECT_EQ(qword[0].address, 0x22000u);
  EXPECT_EQ(qword[0].size, 8);
  EXPECT_FALSE(qword[0].store);
  EXPECT_EQ(qword[0].value, 0x3FF0000000000000u);
  const auto& tword = sink.records[2].accesses;
  ASSERT_EQ(tword.size(), 2u);
  EXPECT_EQ(tword[0].address, 0x22010u);
  EXPECT_EQ(tword[0].size, 8);
  EXPECT_EQ(tword[0].value, 0x8000000000000000u);
  EXPECT_EQ(tword[1].address, 0x22018u);
  EXPECT_EQ(tword[1].size, 2);
  EXPECT_EQ(tword[1].value, 0x3FFFu);
}

}  // namespace
}  // namespace citcat::traces
