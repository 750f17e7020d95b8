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

// ---- Traces from reset: the interrupt frame found from the stores after the acknowledge ----

using Frame = I486Contract::Frame;
using FrameStore = I486Contract::FrameStore;

// The pushes of a frame, in order, to descending addresses from `top`.
std::vector<FrameStore> Pushes(uint64_t top, int size, std::vector<uint32_t> values) {
  std::vector<FrameStore> out;
  for (uint32_t v : values) out.push_back({top -= size, v, size});
  return out;
}

std::vector<FrameStore> operator+(std::vector<FrameStore> a, const std::vector<FrameStore>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The frame FindFrame decides on, or a message.
std::string Found(const std::vector<FrameStore>& stores, bool complete) {
  absl::StatusOr<std::optional<Frame>> f = I486Contract::FindFrame(stores, complete);
  if (!f.ok()) return std::string(f.status().message());
  if (!f->has_value()) return "open";
  switch (**f) {
    case Frame::kSameLevel:
      return "same level";
    case Frame::kOuterRing:
      return "outer ring";
    case Frame::kV86:
      return "v86";
  }
  return "?";
}

TEST(I486FrameRule, EachFrameIsFoundFromItsValues) {
  // Ring 0 to ring 0: EFLAGS, CS, EIP; the handler's stores follow.
  const std::vector<FrameStore> same = Pushes(0x90000, 4, {0x202, 0x08, 0xFFFF00CA});
  // Its third store is neither an outer ring's EFLAGS nor a V86 frame's DS: decided there.
  EXPECT_EQ(Found(same, false), "same level");
  // The handler's own pushes after the frame: EAX, then a value like an EFLAGS.
  EXPECT_EQ(Found(same + Pushes(0x8FFF4, 4, {0x1234, 0x202}), false), "same level");
  // A return EIP that could be a V86 frame's DS: open until the V86 frame is ruled out, by a
  // later store or by the next acknowledge.
  const std::vector<FrameStore> low = Pushes(0x90000, 4, {0x202, 0x08, 0x1000});
  EXPECT_EQ(Found(low, false), "open");
  EXPECT_EQ(Found(low, true), "same level");
  EXPECT_EQ(Found(low + Pushes(0x8FFF4, 4, {0x12345}), false), "same level");  // no ES
  // EFLAGS with bit 16 up and a CS of 10000h and more: no V86 frame's selectors.
  EXPECT_EQ(Found(Pushes(0x90000, 4, {0x10202, 0x08, 0xFFFF00CA}), false), "same level");
  // Ring 3 to ring 0: SS, ESP, EFLAGS, CS, EIP.
  const std::vector<FrameStore> ring3 = Pushes(0x90000, 4, {0x23, 0x80000, 0x3202, 0x1B, 0x4242});
  EXPECT_EQ(Found(std::vector(ring3.begin(), ring3.begin() + 3), false), "open");
  EXPECT_EQ(Found(ring3, false), "outer ring");
  EXPECT_EQ(Found(ring3 + Pushes(0x8FFEC, 4, {0x202, 0x1B}), false), "outer ring");
  // V86 to ring 0: GS, FS, DS, ES, SS, ESP, EFLAGS (VM), CS, EIP.
  const std::vector<FrameStore> v86 =
      Pushes(0x90000, 4, {0, 0, 0, 0, 0x7000, 0xFFF0, 0x23202, 0xF000, 0x1234});
  EXPECT_EQ(Found(std::vector(v86.begin(), v86.begin() + 8), false), "open");
  EXPECT_EQ(Found(v86, false), "v86");
  // Words: real mode (FLAGS, CS, IP) and a 16-bit gate from ring 3 (SS, SP, FLAGS, CS, IP).
  EXPECT_EQ(Found(Pushes(0x7C00, 2, {0x202, 0xF000, 0x1234}), true), "same level");
  EXPECT_EQ(Found(Pushes(0x7C00, 2, {0x202, 0xF000, 0x1234, 0x55}), false), "same level");
  EXPECT_EQ(Found(Pushes(0x9000, 2, {0x23, 0x8000, 0x3202, 0x1B, 0x4242}), false), "outer ring");
}

TEST(I486FrameRule, WhatFitsNoFrameOrSeveralIsRefused) {
  // No frame: a first store that is no EFLAGS and no selector; stores of mixed sizes; stores not
  // to descending addresses (a task switch saving the old task in its TSS).
  EXPECT_THAT(Found(Pushes(0x90000, 4, {0xFFFF00FD, 0x202, 0x8}), true),
              HasSubstr("are no interrupt frame's pushes"));
  EXPECT_THAT(Found(Pushes(0x90000, 4, {0x202}) + Pushes(0x8FFFC, 2, {0x8, 0x1234}), true),
              HasSubstr("are no interrupt frame's pushes"));
  EXPECT_THAT(Found({{0x6020, 0xFFFF00FD, 4}, {0x6024, 0x202, 4}, {0x6028, 0, 4}}, false),
              HasSubstr("are no interrupt frame's pushes"));
  // The trace ends (or the next acknowledge comes) before the frame is whole.
  EXPECT_THAT(Found(Pushes(0x90000, 4, {0x23, 0x80000}), true),
              HasSubstr("are no interrupt frame's pushes"));
  // A same-level frame whose EIP looks like an EFLAGS, followed by two pushes that look like the
  // rest of an outer ring's frame (CS 0Bh with the RPL of "SS" 203h): both fit, with different
  // return EIPs (the next acknowledge comes after them). The CAT alone cannot tell them apart:
  // refused, not guessed.
  const std::vector<FrameStore> both = Pushes(0x90000, 4, {0x203, 0x08, 0x4202, 0x0B, 0x5555});
  EXPECT_THAT(Found(both, true),
              HasSubstr("fit both the frame of an interrupt taken at the handler's privilege "
                        "level or in real mode ((E)FLAGS, CS, EIP), returning to 0x4202, and the "
                        "frame of one taken from an outer ring (SS, ESP, EFLAGS, CS, EIP), "
                        "returning to 0x5555: the CAT alone cannot tell which"));
  // The same, where both frames return to the same EIP: one key, so it is placed.
  EXPECT_EQ(Found(Pushes(0x90000, 4, {0x203, 0x08, 0x4202, 0x0B, 0x4202}), true), "same level");
  // An outer ring's CS with another RPL than its SS, or RPL 0: no outer ring's frame.
  EXPECT_EQ(Found(Pushes(0x90000, 4, {0x203, 0x08, 0x4202, 0x08, 0x5555}), true), "same level");
  EXPECT_EQ(Found(Pushes(0x90000, 4, {0x203, 0x08, 0x4202, 0x0A, 0x5555}), true), "same level");
  // A V86 frame whose EFLAGS lacks VM, a word frame from V86 (it hides VM): not V86.
  EXPECT_THAT(
      Found(Pushes(0x90000, 4, {0, 0, 0, 0, 0x7000, 0xFFF0, 0x3202, 0xF000, 0x1234}), false),
      HasSubstr("are no interrupt frame's pushes"));
  EXPECT_THAT(Found(Pushes(0x9000, 2, {0, 0, 0, 0, 0x7000, 0xFFF0, 0x3202, 0xF000, 0x1234}), false),
              HasSubstr("are no interrupt frame's pushes"));
}

// The contract over a stream of records: each acknowledge is keyed once its stores decide, at the
// next acknowledge, or at the end; locked stores (page tables' bits) are no pushes.
TEST(I486FrameRule, TheContractKeysEachAcknowledgeByItsFrame) {
  cat::CatHeader h = Header();
  h.from_reset = true;
  I486Contract c;
  ASSERT_TRUE(c.Start(h).ok());
  aes::EventSchedule aes;
  uint64_t index = 0;
  const auto feed = [&](const OwnedRecord& r) {
    const cat::BusRecord b = r.view();
    absl::Status s = c.ResetTraceRecord(index, b, aes);
    if (s.ok() && r.kind == RecordKind::kInterruptAck) s = c.InterruptAck(index, b, aes);
    ++index;
    return s;
  };
  const auto pushes = [&](uint64_t top, std::vector<uint32_t> values) {
    for (const FrameStore& p : Pushes(top, 4, values)) {
      ASSERT_TRUE(feed(Rec(RecordKind::kWriteThrough, p.address, 1, Dword(p.value))).ok());
    }
  };
  // Ring 3, with a locked store (a page table's dirty bit) inside the frame.
  ASSERT_TRUE(feed(Rec(RecordKind::kInterruptAck, 0, 10, {0x20})).ok());
  pushes(0x90000, {0x23, 0x80000});
  OwnedRecord locked = Rec(RecordKind::kWriteThrough, 0x3000, 10, Dword(0x90067));
  locked.flags = cat::kFlagLocked;
  ASSERT_TRUE(feed(locked).ok());
  pushes(0x8FFF8, {0x3202, 0x1B});
  EXPECT_EQ(aes.interrupts_size(), 0);
  pushes(0x8FFF0, {0x4242});
  ASSERT_EQ(aes.interrupts_size(), 1);
  EXPECT_EQ(aes.interrupts(0).pc(), 0x4242u);
  EXPECT_EQ(aes.interrupts(0).branch_count(), 10u);
  EXPECT_EQ(aes.interrupts(0).cat_record(), 0u);
  // Same level, then no store until the next acknowledge: keyed there.
  ASSERT_TRUE(feed(Rec(RecordKind::kInterruptAck, 0, 20, {0x20})).ok());
  pushes(0x90000, {0x202, 0x08, 0x1000});
  EXPECT_EQ(aes.interrupts_size(), 1);
  ASSERT_TRUE(feed(Rec(RecordKind::kInterruptAck, 0, 30, {0x21})).ok());
  ASSERT_EQ(aes.interrupts_size(), 2);
  EXPECT_EQ(aes.interrupts(1).pc(), 0x1000u);
  // V86, keyed at its ninth store; a same-level frame keyed at the end of the trace.
  pushes(0x90000, {0, 0, 0, 0, 0x7000, 0xFFF0, 0x23202, 0xF000, 0x1234});
  ASSERT_EQ(aes.interrupts_size(), 3);
  EXPECT_EQ(aes.interrupts(2).pc(), 0x1234u);
  EXPECT_EQ(aes.interrupts(2).vector(), 0x21u);
  ASSERT_TRUE(feed(Rec(RecordKind::kInterruptAck, 0, 40, {0x20})).ok());
  pushes(0x90000, {0x202, 0x08, 0x2000});
  ASSERT_TRUE(c.Finish(aes).ok());
  ASSERT_EQ(aes.interrupts_size(), 4);
  EXPECT_EQ(aes.interrupts(3).pc(), 0x2000u);
  // An acknowledge before its frame's third store, and a frame that fits none: one line each.
  ASSERT_TRUE(feed(Rec(RecordKind::kInterruptAck, 0, 50, {0x20})).ok());
  pushes(0x90000, {0x202});
  absl::Status s = feed(Rec(RecordKind::kInterruptAck, 0, 60, {0x20}));
  EXPECT_THAT(s.message(), HasSubstr("still waits for the store of its return EIP"));
  I486Contract d;
  ASSERT_TRUE(d.Start(h).ok());
  c = std::move(d);
  index = 100;
  ASSERT_TRUE(feed(Rec(RecordKind::kInterruptAck, 0, 70, {0x20})).ok());
  pushes(0x90000, {0x202, 0x08});
  s = feed(Rec(RecordKind::kWriteThrough, 0x6020, 70, Dword(0x1234)));
  EXPECT_THAT(s.message(), HasSubstr("the interrupt acknowledged at record 100: the CPU stores "
                                     "after it (0x202@0x8fffc 0x8@0x8fff8 0x1234@0x6020) are no "
                                     "interrupt frame's pushes"));
}

}  // namespace
}  // namespace citcat::extract
