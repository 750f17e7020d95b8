// The i486 contract of extraction (extract/i486_contract.h) on CATs made from its own inverse:
// a state dump written from a known state must extract to that state, field for field, and the
// interrupt evidence (acknowledge, then report) must key the interrupts.
#include <string>
#include <vector>

#include "cat_parser/reader.h"
#include "extract/extractor.h"
#include "extract/i486_contract.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "machine/i486/contract.h"
#include "tests/cat_parser/cat_test_util.h"

namespace citcat::extract {
namespace {

using cat::OwnedRecord;
using cat::RecordKind;
using ::testing::HasSubstr;

constexpr uint64_t kBase = i486::kReservedBase;
constexpr uint64_t kInterrupt = kBase + CITCAT_I486_INTERRUPT;

cat::CatHeader Header() {
  cat::CatHeader h;
  h.machine = cat::Machine::kI486;
  h.byte_order = cat::ByteOrder::kLittle;
  h.memory_bytes = 4 << 20;
  h.holes = {{0xA0000, 0x60000}};
  h.caches = {{1, cat::CacheType::kUnified, 4, cat::WritePolicy::kWriteThrough, 8192, 16}};
  h.devices = {{"uart", cat::WindowKind::kPort, 0x3F8, 8}};
  for (const i486::ReservedArea& a : i486::kReservedAreas) {
    h.magic.push_back(
        {std::string(a.name), cat::WindowKind::kMemoryMapped, kBase + a.offset, a.size});
  }
  return h;
}

void SetSegment(ims::X86Segment* s, uint32_t selector, uint32_t base, uint32_t limit,
                uint32_t rights) {
  s->set_selector(selector);
  s->set_base(base);
  s->set_limit(limit);
  s->set_access_rights(rights);
}

// A kernel's state at the resume point: flat ring-0 segments, a TSS, no LDT, paging and caching
// off as the driver leaves them, an x87 with TOP = 3 and every register distinct.
ims::InitialMachineState State() {
  ims::InitialMachineState ims;
  ims.mutable_start()->set_branch_count(123456);
  ims::X86State& s = *ims.mutable_x86();
  for (uint32_t i = 0; i < 8; ++i) s.add_gpr(0x11111111u * (i + 1));
  s.set_eip(0x1234);
  s.set_eflags(0x46);
  SetSegment(s.mutable_cs(), 0x08, 0, 0xFFFFFFFF, 0xC09B);
  for (ims::X86Segment* d : {s.mutable_ss(), s.mutable_ds(), s.mutable_es(), s.mutable_fs()}) {
    SetSegment(d, 0x10, 0, 0xFFFFFFFF, 0xC093);
  }
  SetSegment(s.mutable_gs(), 0x18, 0x12345678, 0xABCDE, 0x4093);  // byte granular
  SetSegment(s.mutable_ldtr(), 0, 0, 0, 0);
  SetSegment(s.mutable_tr(), 0x28, 0x9000, 0x67, 0x008B);
  s.mutable_gdtr()->set_base(0x8000);
  s.mutable_gdtr()->set_limit(0x2F);
  s.mutable_idtr()->set_base(0x8800);
  s.mutable_idtr()->set_limit(0x7FF);
  s.set_cr0(0x60000011);
  s.set_cr2(0xDEAD000);
  s.set_cr3(0x20000);
  for (uint32_t v : {1u, 2u, 3u, 4u, 0xFFFF0FF0u, 0x400u}) s.add_dr(v);
  ims::X87State& x = *s.mutable_x87();
  x.set_control_word(0x37F);
  x.set_status_word(3 << 11 | 0x20);
  x.set_tag_word(0x5A5A);
  x.set_instruction_pointer(0x4000);
  x.set_instruction_selector(0x08);
  x.set_operand_pointer(0x5000);
  x.set_operand_selector(0x10);
  x.set_opcode(0x5D9);
  for (int r = 0; r < 8; ++r) x.add_st(std::string(10, static_cast<char>(0x10 + r)));
  return ims;
}

OwnedRecord Rec(RecordKind kind, uint64_t address, uint64_t bc, std::vector<uint8_t> data) {
  OwnedRecord r;
  r.kind = kind;
  r.address = address;
  r.branch_count = bc;
  r.data = std::move(data);
  return r;
}

std::vector<uint8_t> Dword(uint32_t v) {
  return {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v >> 16),
          static_cast<uint8_t>(v >> 24)};
}

std::vector<OwnedRecord> Dump() {
  auto dump = I486Contract::StateDump(Header(), State());
  EXPECT_TRUE(dump.ok()) << dump.status();
  return dump.ok() ? *dump : std::vector<OwnedRecord>{};
}

// An interrupt at branch count `bc`: acknowledge, then the report (ECX, EIP, CS, EFLAGS).
std::vector<OwnedRecord> Interrupt(uint64_t bc, uint8_t vector, uint32_t eip, uint32_t ecx) {
  return {
      Rec(RecordKind::kInterruptAck, 0, bc, {vector}),
      Rec(RecordKind::kUncachedWrite, kInterrupt + CITCAT_I486_INTERRUPT_ECX, bc + 1, Dword(ecx)),
      Rec(RecordKind::kUncachedWrite, kInterrupt + CITCAT_I486_INTERRUPT_EIP, bc + 1, Dword(eip)),
      Rec(RecordKind::kUncachedWrite, kInterrupt + CITCAT_I486_INTERRUPT_CS, bc + 1, Dword(0x1B)),
      Rec(RecordKind::kUncachedWrite, kInterrupt + CITCAT_I486_INTERRUPT_EFLAGS, bc + 1,
          Dword(0x202))};
}

absl::StatusOr<Extraction> ExtractRecords(const std::vector<OwnedRecord>& records) {
  auto reader = cat::CatReader::Open(
      io::InputFile::FromMemory("i486.cat", cat::testing::EncodeCat(Header(), records)));
  if (!reader.ok()) return reader.status();
  I486Contract contract;
  return Extract(**reader, contract);
}

std::vector<OwnedRecord> operator+(std::vector<OwnedRecord> a, const std::vector<OwnedRecord>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(I486Extract, TheDumpOfAStateExtractsToThatState) {
  const std::vector<OwnedRecord> records =
      Dump() + std::vector{Rec(RecordKind::kFill, 0x1230, 123456, std::vector<uint8_t>(16, 0x90))};
  auto x = ExtractRecords(records);
  ASSERT_TRUE(x.ok()) << x.status();
  std::string diff;
  google::protobuf::util::MessageDifferencer d;
  d.ReportDifferencesToString(&diff);
  EXPECT_TRUE(d.Compare(State().x86(), x->ims.x86())) << diff;
  EXPECT_EQ(x->ims.start().branch_count(), 123456u);
  EXPECT_EQ(x->ims.start().cat_record(), Dump().size());
  EXPECT_EQ(x->ims.description().machine(), ims::MACHINE_I486);
}

TEST(I486Extract, InterruptsAreKeyedByAcknowledgeAndReport) {
  const std::vector<OwnedRecord> records =
      Dump() + Interrupt(123500, 0x20, 0x40001000, 77) +
      std::vector{Rec(RecordKind::kPortRead, 0x3FD, 123510, {0x60})} +
      Interrupt(123600, 0x2E, 0x40002000, 0);
  auto x = ExtractRecords(records);
  ASSERT_TRUE(x.ok()) << x.status();
  ASSERT_EQ(x->aes.interrupts_size(), 2);
  const aes::Interrupt& a = x->aes.interrupts(0);
  EXPECT_EQ(a.branch_count(), 123500u);
  EXPECT_EQ(a.pc(), 0x40001000u);
  EXPECT_EQ(a.rep_remaining(), 77u);
  EXPECT_EQ(a.vector(), 0x20u);
  EXPECT_EQ(a.cat_record(), Dump().size());  // the acknowledge record
  EXPECT_EQ(x->aes.interrupts(1).vector(), 0x2Eu);
  ASSERT_EQ(x->aes.device_io_size(), 1);
  EXPECT_TRUE(x->aes.device_io(0).port());
}

TEST(I486Extract, BrokenInterruptEvidenceIsOneLineNamingTheRecord) {
  const std::vector<OwnedRecord> ack = {Rec(RecordKind::kInterruptAck, 0, 123500, {0x20})};
  const std::vector<OwnedRecord> report = Interrupt(123500, 0x20, 0x1000, 1);
  struct Case {
    std::vector<OwnedRecord> after;
    const char* message;
  };
  const Case cases[] = {
      {ack, "ends between an interrupt acknowledge"},
      {ack + ack, "still waits for its interrupt report"},
      {{report[1], report[2]}, "no interrupt acknowledge before it"},
      {{report[0], report[2]}, "EIP before its ECX"},
      {{Dump()[3]}, "a second state dump"},
  };
  for (const Case& c : cases) {
    auto x = ExtractRecords(Dump() + c.after);
    ASSERT_FALSE(x.ok()) << c.message;
    EXPECT_THAT(x.status().message(), HasSubstr(c.message));
    EXPECT_EQ(std::string(x.status().message()).find('\n'), std::string::npos);
  }
}

TEST(I486Extract, AnInterruptReportInsideTheDumpIsRefused) {
  std::vector<OwnedRecord> records = Dump();
  records.insert(records.begin() + 2, Interrupt(1, 0x20, 0x1000, 1)[1]);
  auto x = ExtractRecords(records);
  ASSERT_FALSE(x.ok());
  EXPECT_THAT(x.status().message(), HasSubstr("inside the state dump"));
}

TEST(I486Extract, StatesNoDumpCanHoldAreRefused) {
  ims::InitialMachineState ims = State();
  ims.mutable_x86()->mutable_ds()->set_limit(0x12345);  // granular, low 12 bits not all ones
  EXPECT_FALSE(I486Contract::StateDump(Header(), ims).ok());
  ims = State();
  ims.mutable_x86()->mutable_gdtr()->set_limit(0x10000);
  EXPECT_FALSE(I486Contract::StateDump(Header(), ims).ok());
  ims = State();
  ims.mutable_x86()->clear_gpr();
  EXPECT_FALSE(I486Contract::StateDump(Header(), ims).ok());
}

}  // namespace
}  // namespace citcat::extract
