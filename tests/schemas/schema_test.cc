// The IMS and AES schemas hold a state of either machine and survive serialization unchanged.
#include "aes/aes.pb.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "ims/ims.pb.h"

namespace citcat {
namespace {

using google::protobuf::util::MessageDifferencer;

template <typename Message>
Message RoundTrip(const Message& m) {
  std::string bytes;
  EXPECT_TRUE(m.SerializeToString(&bytes));
  Message back;
  EXPECT_TRUE(back.ParseFromString(bytes));
  return back;
}

TEST(ImsSchema, R4400StateRoundTrips) {
  ims::InitialMachineState state;
  state.set_format_version(1);
  state.mutable_description()->set_machine(ims::MACHINE_R4400);
  state.mutable_description()->set_byte_order(ims::BYTE_ORDER_BIG);
  ims::MipsState* mips = state.mutable_mips();
  for (int i = 0; i < 32; ++i) mips->add_gpr(i == 0 ? 0 : 0xFFFFFFFF80000000ull + i);
  for (int i = 0; i < 32; ++i) mips->add_fgr(0x3FF0000000000000ull + i);
  mips->set_pc(0xFFFFFFFF80001000ull);
  mips->mutable_cp0()->set_status(0x3400FF01);
  mips->mutable_cp0()->set_error_epc(0xFFFFFFFFBFC00000ull);
  for (int i = 0; i < 48; ++i) {
    ims::MipsTlbEntry* e = mips->add_tlb();
    e->set_entry_hi(0x1000u * i);
    e->set_entry_lo0(0x40u * i | 0x1F);
  }
  ims::MemoryExtent* extent = state.add_memory();
  extent->set_address(0x1000);
  extent->set_data(std::string("\x3c\x08\x80\x00", 4));
  state.mutable_start()->set_branch_count(12);

  ims::InitialMachineState back = RoundTrip(state);
  EXPECT_TRUE(MessageDifferencer::Equals(state, back));
  EXPECT_EQ(back.cpu_case(), ims::InitialMachineState::kMips);
  EXPECT_EQ(back.mips().tlb_size(), 48);
}

TEST(ImsSchema, I486StateRoundTrips) {
  ims::InitialMachineState state;
  state.mutable_description()->set_machine(ims::MACHINE_I486);
  ims::X86State* x86 = state.mutable_x86();
  for (int i = 0; i < 8; ++i) x86->add_gpr(0x1000 * i);
  x86->set_eip(0xC0100000);
  x86->mutable_cs()->set_selector(0x08);
  x86->mutable_cs()->set_limit(0xFFFFFFFF);
  x86->mutable_cs()->set_access_rights(0xCF9B);
  x86->set_cr0(0x80000011);
  for (int i = 0; i < 8; ++i) x86->mutable_x87()->add_st(std::string(10, static_cast<char>(i)));
  ims::InitialMachineState back = RoundTrip(state);
  EXPECT_TRUE(MessageDifferencer::Equals(state, back));
  EXPECT_EQ(back.cpu_case(), ims::InitialMachineState::kX86);
}

TEST(AesSchema, EveryEventKindRoundTrips) {
  aes::EventSchedule schedule;
  schedule.set_machine(ims::MACHINE_R4400);
  aes::Interrupt* irq = schedule.add_interrupts();
  irq->set_branch_count(1234);
  irq->set_pc(0xFFFFFFFF80002000ull);
  irq->set_cause_ip(0x80);
  aes::DmaTransfer* dma = schedule.add_dma();
  dma->set_after_cpu_transactions(77);
  dma->set_to_memory(true);
  dma->set_device(2);
  dma->set_data(std::string(512, 'x'));
  aes::DeviceAccess* io = schedule.add_device_io();
  io->set_address(0x1F000004);
  io->set_data("\x20");
  aes::RegisterRead* count = schedule.add_register_reads();
  count->set_register_(aes::RegisterRead::REGISTER_MIPS_COUNT);
  count->set_value(0x12345678);
  schedule.mutable_end()->set_cat_records(999);
  aes::EventSchedule back = RoundTrip(schedule);
  EXPECT_TRUE(MessageDifferencer::Equals(schedule, back));
}

}  // namespace
}  // namespace citcat
