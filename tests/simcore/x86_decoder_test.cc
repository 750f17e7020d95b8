// The i486 decoder: tricky encodings from the Intel manuals, and lengths and mnemonics against
// Capstone 4 on seeded random bytes in 16- and 32-bit code.
#include <capstone/capstone.h>

#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "simcore/x86/decoder.h"

namespace citcat::x86 {
namespace {

Instruction D32(std::vector<uint8_t> b) { return Decode(b.data(), b.size(), true); }
Instruction D16(std::vector<uint8_t> b) { return Decode(b.data(), b.size(), false); }
constexpr uint8_t Bit(int r) { return static_cast<uint8_t>(1u << r); }

// ---- prefixes ----

TEST(X86Decoder, SegmentOverrideLastOneWins) {
  Instruction i = D32({0x26, 0x3E, 0x64, 0x8B, 0x00});  // mov eax, fs:[eax]
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(i.length, 5);
  EXPECT_EQ(i.seg, kFs);
  EXPECT_TRUE(i.prefixes & prefix::kSeg);
  EXPECT_EQ(i.seg_read, Bit(kFs));
  // An override replaces the SS default of EBP-based addresses.
  EXPECT_EQ(D32({0x8B, 0x45, 0x08}).seg, kSs);
  EXPECT_EQ(D32({0x2E, 0x8B, 0x45, 0x08}).seg, kCs);
  // The string destination stays ES:EDI; the source follows the override.
  i = D32({0x65, 0xA4});
  EXPECT_EQ(i.op, Op::kMovs);
  EXPECT_EQ(i.seg, kGs);
  EXPECT_EQ(i.seg_read, Bit(kGs) | Bit(kEs));
}

TEST(X86Decoder, RepeatedAndConflictingPrefixes) {
  Instruction i = D32({0x66, 0x66, 0x66, 0xB8, 0x34, 0x12});
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(i.opsize, 2);
  EXPECT_EQ(i.length, 6);
  EXPECT_EQ(i.imm, 0x1234u);
  // F2 then F3: the last repeat prefix decides.
  i = D32({0xF2, 0xF3, 0xA6});
  EXPECT_TRUE(i.prefixes & prefix::kRep);
  EXPECT_FALSE(i.prefixes & prefix::kRepne);
  i = D32({0xF3, 0xF2, 0xAE});
  EXPECT_TRUE(i.prefixes & prefix::kRepne);
  EXPECT_EQ(i.flow, Flow::kRep);
  // REP on a non-string instruction is ignored; so is 66 on a byte operation.
  i = D32({0xF3, 0x01, 0xC0});
  EXPECT_EQ(i.op, Op::kAdd);
  EXPECT_EQ(i.flow, Flow::kNone);
  EXPECT_EQ(D32({0x66, 0x00, 0xC0}).opsize, 1);
}

TEST(X86Decoder, FifteenByteLimitIsGeneralProtection) {
  std::vector<uint8_t> b(14, 0x66);
  b.push_back(0x90);
  Instruction i = D32(b);
  EXPECT_TRUE(i.ok());
  EXPECT_EQ(i.length, 15);
  b.insert(b.begin(), 0x3E);
  i = D32(b);
  EXPECT_EQ(i.fault, Fault::kGP);
  // Legal prefixes and opcode, but the immediate crosses byte 15.
  std::vector<uint8_t> c(11, 0x26);
  c.insert(c.end(), {0xB8, 1, 2, 3, 4});
  EXPECT_EQ(D32(c).fault, Fault::kGP);
}

TEST(X86Decoder, TruncatedInputAsksForMoreBytes) {
  const uint8_t b[] = {0x8B, 0x80, 0x10, 0x20, 0x30, 0x40};
  for (size_t n = 0; n < sizeof(b); ++n) EXPECT_EQ(Decode(b, n, true).fault, Fault::kTruncated);
  EXPECT_EQ(Decode(b, sizeof(b), true).length, 6);
}

TEST(X86Decoder, LockOnlyOnLockableMemoryDestinations) {
  EXPECT_TRUE(D32({0xF0, 0x01, 0x00}).ok());                   // lock add [eax], eax
  EXPECT_TRUE(D32({0xF0, 0x0F, 0xC1, 0x08}).ok());             // lock xadd [eax], ecx
  EXPECT_TRUE(D32({0xF0, 0x0F, 0xB1, 0x08}).ok());             // lock cmpxchg [eax], ecx
  EXPECT_TRUE(D32({0xF0, 0x0F, 0xBA, 0x28, 3}).ok());          // lock bts [eax], 3
  EXPECT_TRUE(D32({0xF0, 0x87, 0x08}).ok());                   // lock xchg [eax], ecx
  EXPECT_TRUE(D32({0xF0, 0xFE, 0x00}).ok());                   // lock inc byte [eax]
  EXPECT_EQ(D32({0xF0, 0x01, 0xC0}).fault, Fault::kUD);        // register destination
  EXPECT_EQ(D32({0xF0, 0x39, 0x00}).fault, Fault::kUD);        // CMP
  EXPECT_EQ(D32({0xF0, 0x0F, 0xA3, 0x00}).fault, Fault::kUD);  // BT
  EXPECT_EQ(D32({0xF0, 0x8B, 0x00}).fault, Fault::kUD);        // MOV
  EXPECT_EQ(D32({0xF0, 0x90}).fault, Fault::kUD);
  EXPECT_EQ(D32({0xF0, 0xD8, 0x00}).fault, Fault::kUD);  // x87
}

// ---- addressing ----

TEST(X86Decoder, SixteenBitModrmForms) {
  Instruction i = D16({0x8B, 0x00});  // mov ax, [bx+si]
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(i.opsize, 2);
  EXPECT_EQ(i.addrsize, 2);
  EXPECT_EQ(i.base, kEbx);
  EXPECT_EQ(i.index, kEsi);
  EXPECT_EQ(i.seg, kDs);
  EXPECT_EQ(i.gpr_read, Bit(kEbx) | Bit(kEsi));
  EXPECT_EQ(i.gpr_written, Bit(kEax));
  EXPECT_EQ(i.mem, mem::kRead);
  EXPECT_EQ(i.mem_size, 2);
  i = D16({0x8B, 0x43, 0xF0});  // mov ax, [bp+di-16]
  EXPECT_EQ(i.length, 3);
  EXPECT_EQ(i.base, kEbp);
  EXPECT_EQ(i.index, kEdi);
  EXPECT_EQ(i.disp, -16);
  EXPECT_EQ(i.seg, kSs);
  i = D16({0x8B, 0x06, 0x34, 0x12});  // mov ax, [0x1234]: mod 00 r/m 110 is disp16 alone
  EXPECT_EQ(i.length, 4);
  EXPECT_EQ(i.base, kNoReg);
  EXPECT_EQ(i.index, kNoReg);
  EXPECT_EQ(i.disp, 0x1234);
  EXPECT_EQ(i.seg, kDs);
  i = D16({0x8B, 0x86, 0x00, 0x80});  // mov ax, [bp-0x8000]
  EXPECT_EQ(i.base, kEbp);
  EXPECT_EQ(i.disp, -0x8000);
  EXPECT_EQ(i.seg, kSs);
  i = D16({0x88, 0x27});  // mov [bx], ah
  EXPECT_EQ(i.mem, mem::kWrite);
  EXPECT_EQ(i.mem_size, 1);
  EXPECT_EQ(i.gpr_read, Bit(kEbx) | Bit(kEax));
}

TEST(X86Decoder, ThirtyTwoBitModrmAndSib) {
  Instruction i = D32({0x8B, 0x05, 0x78, 0x56, 0x34, 0x12});  // mod 00 r/m 101: disp32
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(i.length, 6);
  EXPECT_EQ(i.base, kNoReg);
  EXPECT_EQ(i.disp, 0x12345678);
  i = D32({0x8B, 0x04, 0x8D, 0x00, 0x10, 0, 0});  // [ecx*4+0x1000]: SIB without a base
  EXPECT_EQ(i.length, 7);
  EXPECT_EQ(i.base, kNoReg);
  EXPECT_EQ(i.index, kEcx);
  EXPECT_EQ(i.scale, 2);
  EXPECT_EQ(i.disp, 0x1000);
  EXPECT_EQ(i.seg, kDs);
  i = D32({0x8B, 0x04, 0x24});  // [esp]: index 100 is none, ESP base means SS
  EXPECT_EQ(i.base, kEsp);
  EXPECT_EQ(i.index, kNoReg);
  EXPECT_EQ(i.seg, kSs);
  i = D32({0x8B, 0x44, 0x25, 0x10});  // [ebp+0x10] through SIB with mod 01
  EXPECT_EQ(i.base, kEbp);
  EXPECT_EQ(i.disp, 0x10);
  EXPECT_EQ(i.seg, kSs);
  i = D32({0x8B, 0x84, 0xD8, 1, 0, 0, 0x80});  // [eax+ebx*8+disp32]
  EXPECT_EQ(i.base, kEax);
  EXPECT_EQ(i.index, kEbx);
  EXPECT_EQ(i.scale, 3);
  EXPECT_EQ(i.disp, static_cast<int32_t>(0x80000001));
}

TEST(X86Decoder, OperandAndAddressSizeSwitches) {
  EXPECT_EQ(D32({0xB8, 1, 2, 3, 4}).length, 5);
  EXPECT_EQ(D32({0x66, 0xB8, 1, 2}).length, 4);
  EXPECT_EQ(D16({0xB8, 1, 2}).length, 3);
  Instruction i = D16({0x66, 0xB8, 1, 2, 3, 4});
  EXPECT_EQ(i.length, 6);
  EXPECT_EQ(i.opsize, 4);
  EXPECT_EQ(i.imm, 0x04030201u);
  i = D32({0x67, 0x8B, 0x00});  // 16-bit addressing in 32-bit code
  EXPECT_EQ(i.length, 3);
  EXPECT_EQ(i.addrsize, 2);
  EXPECT_EQ(i.index, kEsi);
  i = D16({0x67, 0x8B, 0x04, 0x24});  // SIB in 16-bit code
  EXPECT_EQ(i.length, 4);
  EXPECT_EQ(i.base, kEsp);
  EXPECT_EQ(D16({0x67, 0xA1, 1, 2, 3, 4}).length, 6);  // moffs follows the address size
  EXPECT_EQ(D32({0x66, 0xE8, 1, 2}).length, 4);        // rel16
  EXPECT_EQ(D32({0x66, 0x9A, 1, 2, 3, 4}).length, 6);  // ptr16:16
  i = D32({0x9A, 1, 2, 3, 4, 5, 6});
  EXPECT_EQ(i.imm, 0x04030201u);
  EXPECT_EQ(i.imm2, 0x0605);
  EXPECT_EQ(i.flow, Flow::kCallFar);
  i = D32({0x83, 0xC0, 0xFF});  // add eax, -1: imm8 sign-extended
  EXPECT_EQ(i.imm, 0xFFFFFFFFu);
  i = D32({0xC8, 0x10, 0x00, 0x03});  // enter 16, 3
  EXPECT_EQ(i.length, 4);
  EXPECT_EQ(i.imm, 16u);
  EXPECT_EQ(i.imm2, 3);
  i = D32({0x69, 0xC1, 1, 0, 0, 0});  // imul eax, ecx, 1
  EXPECT_EQ(i.length, 6);
  EXPECT_EQ(i.gpr_read, Bit(kEcx));
  EXPECT_EQ(i.gpr_written, Bit(kEax));
  i = D32({0x74, 0xFE});  // je $
  EXPECT_EQ(i.flow, Flow::kJcc);
  EXPECT_EQ(static_cast<int32_t>(i.imm), -2);
  EXPECT_EQ(FlagsRead(i), flag::kZF);
}

TEST(X86Decoder, TwoByteForms) {
  Instruction i = D32({0x0F, 0xB6, 0xC4});  // movzx eax, ah
  EXPECT_EQ(i.op, Op::kMovzx);
  EXPECT_EQ(i.src_size, 1);
  EXPECT_EQ(i.gpr_read, Bit(kEax));
  i = D32({0x0F, 0xBF, 0x01});  // movsx eax, word [ecx]
  EXPECT_EQ(i.op, Op::kMovsx);
  EXPECT_EQ(i.mem_size, 2);
  EXPECT_EQ(D32({0x0F, 0xCB}).op, Op::kBswap);
  EXPECT_EQ(D32({0x0F, 0xCB}).gpr_written, Bit(kEbx));
  i = D32({0x0F, 0xC1, 0x08});  // xadd [eax], ecx: both operands written
  EXPECT_EQ(i.op, Op::kXadd);
  EXPECT_EQ(i.mem, mem::kRead | mem::kWrite);
  EXPECT_EQ(i.gpr_written, Bit(kEcx));
  i = D32({0x0F, 0xB1, 0xCA});  // cmpxchg edx, ecx
  EXPECT_EQ(i.gpr_read, Bit(kEax) | Bit(kEdx) | Bit(kEcx));
  EXPECT_EQ(i.gpr_written, Bit(kEax) | Bit(kEdx));
  EXPECT_EQ(D32({0x0F, 0x08}).op, Op::kInvd);
  EXPECT_EQ(D32({0x0F, 0x09}).op, Op::kWbinvd);
  i = D32({0x0F, 0x01, 0x38});
  EXPECT_EQ(i.op, Op::kInvlpg);
  EXPECT_EQ(i.mem, 0);
  EXPECT_TRUE(i.has_memory());
  i = D32({0x0F, 0x22, 0x18});  // mov cr3, eax: mod is ignored
  EXPECT_EQ(i.op, Op::kMovCr);
  EXPECT_EQ(i.length, 3);
  EXPECT_EQ(i.reg, 3);
  EXPECT_EQ(i.rm, kEax);
  EXPECT_FALSE(i.has_memory());
  EXPECT_EQ(i.gpr_read, Bit(kEax));
  EXPECT_EQ(D32({0x66, 0x0F, 0x20, 0xC0}).opsize, 4);
  EXPECT_EQ(D32({0x0F, 0x21, 0xF8}).op, Op::kMovDr);
  EXPECT_EQ(D32({0x0F, 0x26, 0xD8}).op, Op::kMovTr);  // TR3
  i = D32({0x0F, 0xA4, 0xC8, 4});                     // shld eax, ecx, 4
  EXPECT_EQ(i.length, 4);
  EXPECT_EQ(i.imm, 4u);
  i = D32({0x0F, 0xAD, 0xC8});  // shrd eax, ecx, cl
  EXPECT_EQ(i.gpr_read, Bit(kEax) | Bit(kEcx));
  EXPECT_EQ(D32({0x0F, 0x84, 0, 0, 0, 0}).length, 6);
  EXPECT_EQ(D16({0x0F, 0x84, 0, 0}).length, 4);
  i = D32({0x0F, 0x9C, 0x00});  // setl [eax]
  EXPECT_EQ(i.op, Op::kSetcc);
  EXPECT_EQ(i.cond, 0xC);
  EXPECT_EQ(FlagsRead(i), flag::kSF | flag::kOF);
  EXPECT_EQ(i.mem, mem::kWrite);
  i = D32({0x0F, 0xA1});  // pop fs
  EXPECT_EQ(i.seg_written, Bit(kFs));
  EXPECT_EQ(i.reg, kFs);
  i = D32({0x0F, 0xB2, 0x00});  // lss eax, [eax]
  EXPECT_EQ(i.mem_size, 6);
  EXPECT_EQ(i.seg_written, Bit(kSs));
  i = D32({0x0F, 0x01, 0x10});  // lgdt [eax]
  EXPECT_EQ(i.op, Op::kLgdt);
  EXPECT_EQ(i.mem_size, 6);
  EXPECT_EQ(i.mem, mem::kRead);
  EXPECT_EQ(D32({0x0F, 0x01, 0xE0}).op, Op::kSmsw);  // register form allowed
  EXPECT_EQ(D32({0x0F, 0x00, 0xD8}).op, Op::kLtr);
  EXPECT_EQ(D32({0x0F, 0x06}).op, Op::kClts);
  EXPECT_EQ(D32({0x0F, 0x02, 0xC1}).op, Op::kLar);
}

TEST(X86Decoder, WhatTheI486LacksIsInvalid) {
  const std::vector<std::vector<uint8_t>> kUd = {
      {0x0F, 0xA2},           // CPUID
      {0x0F, 0x40, 0xC0},     // CMOVO
      {0x0F, 0x31},           // RDTSC
      {0x0F, 0x32},           // RDMSR
      {0x0F, 0x30},           // WRMSR
      {0x0F, 0xC7, 0x08},     // CMPXCHG8B
      {0x0F, 0x34},           // SYSENTER
      {0x0F, 0x6F, 0xC0},     // MOVQ (MMX)
      {0x0F, 0x0B},           // UD2
      {0x0F, 0x1F, 0x00},     // NOP r/m (P6)
      {0x0F, 0xA6, 0x00},     // early-stepping CMPXCHG
      {0x0F, 0x07},           // LOADALL (386)
      {0x0F, 0x10, 0x00},     // UMOV
      {0x0F, 0xAA},           // RSM
      {0x8D, 0xC0},           // LEA with a register operand
      {0xC4, 0xC0},           // LES with a register operand
      {0x62, 0xC0},           // BOUND with a register operand
      {0xFF, 0xD8},           // CALL FAR with a register operand
      {0x0F, 0x01, 0xF8},     // INVLPG with a register operand
      {0x0F, 0x01, 0x28},     // 0F 01 /5
      {0x8E, 0xC8},           // MOV CS, r/m
      {0x8C, 0xF0},           // MOV r/m, Sreg 6
      {0x0F, 0x22, 0xE0},     // MOV CR4
      {0x0F, 0x20, 0xC8},     // MOV from CR1
      {0x0F, 0x24, 0xC0},     // MOV from TR0
      {0xFE, 0x10},           // FE /2
      {0xFF, 0xF8},           // FF /7
      {0x8F, 0xC8},           // 8F /1
      {0xC6, 0xC8, 0},        // C6 /1
      {0x0F, 0xBA, 0xC0, 1},  // 0F BA /0
      {0x0F, 0x00, 0xF0},     // 0F 00 /6
      {0xDA, 0xC0},           // FCMOVB
      {0xDB, 0xE8},           // FUCOMI
      {0xDF, 0xE8},           // FUCOMIP
      {0xDF, 0x08},           // FISTTP
      {0xD9, 0xD1},           // reserved
      {0xDE, 0xD8},           // reserved (DE D9 is FCOMPP)
      {0xDF, 0xE1},           // reserved (DF E0 is FNSTSW AX)
  };
  for (const auto& b : kUd) {
    const Instruction i = D32(b);
    EXPECT_EQ(i.fault, Fault::kUD) << std::hex << int{b[0]} << " " << int{b[1]};
    EXPECT_EQ(i.op, Op::kInvalid);
  }
}

// ---- facts: implicit registers, flags, memory, control flow ----

TEST(X86Decoder, ImplicitRegisters) {
  Instruction i = D32({0xF7, 0xE3});  // mul ebx
  EXPECT_EQ(i.gpr_read, Bit(kEax) | Bit(kEbx));
  EXPECT_EQ(i.gpr_written, Bit(kEax) | Bit(kEdx));
  EXPECT_EQ(FlagsUndefined(i), flag::kSF | flag::kZF | flag::kAF | flag::kPF);
  i = D32({0xF6, 0xE3});  // mul bl: AX only
  EXPECT_EQ(i.gpr_written, Bit(kEax));
  i = D32({0xF7, 0xF9});  // idiv ecx
  EXPECT_EQ(i.gpr_read, Bit(kEax) | Bit(kEdx) | Bit(kEcx));
  i = D32({0x60});  // pushad
  EXPECT_EQ(i.gpr_read, 0xFF);
  EXPECT_EQ(i.gpr_written, Bit(kEsp));
  EXPECT_EQ(i.seg_read, Bit(kSs));
  EXPECT_EQ(D32({0x61}).gpr_written, 0xFF);
  i = D32({0xF3, 0xA5});  // rep movsd
  EXPECT_EQ(i.flow, Flow::kRep);
  EXPECT_EQ(i.gpr_read, Bit(kEsi) | Bit(kEdi) | Bit(kEcx));
  EXPECT_EQ(i.gpr_written, Bit(kEsi) | Bit(kEdi) | Bit(kEcx));
  EXPECT_EQ(FlagsRead(i), flag::kDF);
  i = D32({0xAE});  // scasb
  EXPECT_EQ(i.flow, Flow::kNone);
  EXPECT_EQ(i.gpr_read, Bit(kEax) | Bit(kEdi));
  EXPECT_EQ(FlagsWritten(i), flag::kOSZAPC);
  EXPECT_EQ(D32({0x99}).gpr_written, Bit(kEdx));  // cdq
  EXPECT_EQ(D32({0xD7}).gpr_read, Bit(kEax) | Bit(kEbx));
  i = D32({0xC9});  // leave
  EXPECT_EQ(i.gpr_written, Bit(kEsp) | Bit(kEbp));
  i = D32({0xEC});  // in al, dx
  EXPECT_EQ(i.gpr_read, Bit(kEdx));
  EXPECT_EQ(i.gpr_written, Bit(kEax));
  i = D32({0xDF, 0xE0});  // fnstsw ax
  EXPECT_EQ(i.op, Op::kFnstsw);
  EXPECT_EQ(i.gpr_written, Bit(kEax));
  i = D32({0x0F, 0xA3, 0xC8});  // bt eax, ecx: reads both, writes none
  EXPECT_EQ(i.gpr_read, Bit(kEax) | Bit(kEcx));
  EXPECT_EQ(i.gpr_written, 0);
  EXPECT_EQ(FlagsWritten(i) & flag::kZF, 0u);
  i = D32({0x87, 0xCA});  // xchg edx, ecx
  EXPECT_EQ(i.gpr_written, Bit(kEcx) | Bit(kEdx));
  i = D32({0x90});
  EXPECT_EQ(i.op, Op::kNop);
  EXPECT_EQ(i.gpr_written, 0);
}

TEST(X86Decoder, FlagsFacts) {
  EXPECT_EQ(FlagsWritten(D32({0x01, 0xC0})), flag::kOSZAPC);
  EXPECT_EQ(FlagsRead(D32({0x11, 0xC0})), flag::kCF);
  EXPECT_EQ(FlagsWritten(D32({0x40})), flag::kOSZAP);  // INC leaves CF
  EXPECT_EQ(FlagsUndefined(D32({0x21, 0xC0})), flag::kAF);
  EXPECT_EQ(FlagsUndefined(D32({0xD3, 0xE0})), flag::kOF | flag::kAF);  // shl eax, cl
  EXPECT_EQ(FlagsRead(D32({0x9C})), flag::kAll);
  EXPECT_EQ(FlagsWritten(D32({0x9D})), flag::kAll);
  EXPECT_EQ(FlagsRead(D32({0x0F, 0x87, 0, 0, 0, 0})), flag::kCF | flag::kZF);  // ja
  EXPECT_EQ(FlagsRead(D32({0xE1, 0})), flag::kZF);                             // loope
}

TEST(X86Decoder, MemoryOperands) {
  Instruction i = D32({0x01, 0x18});  // add [eax], ebx
  EXPECT_EQ(i.mem, mem::kRead | mem::kWrite);
  EXPECT_EQ(i.mem_size, 4);
  EXPECT_EQ(D32({0x39, 0x18}).mem, mem::kRead);  // cmp
  EXPECT_EQ(D32({0x8D, 0x18}).mem, 0);           // lea
  EXPECT_EQ(D32({0x62, 0x18}).mem_size, 8);      // bound
  EXPECT_EQ(D32({0x66, 0x62, 0x18}).mem_size, 4);
  EXPECT_EQ(D32({0xFF, 0x18}).mem_size, 6);  // call far m16:32
  EXPECT_EQ(D32({0x8C, 0x18}).mem_size, 2);  // mov [eax], ds
  EXPECT_EQ(D32({0x8C, 0x18}).mem, mem::kWrite);
  i = D32({0xDB, 0x38});  // fstp tbyte [eax]
  EXPECT_EQ(i.op, Op::kFstp);
  EXPECT_EQ(i.mem, mem::kWrite);
  EXPECT_EQ(i.mem_size, 10);
  i = D32({0xDC, 0x00});  // fadd qword [eax]
  EXPECT_EQ(i.op, Op::kFadd);
  EXPECT_EQ(i.mem, mem::kRead);
  EXPECT_EQ(i.mem_size, 8);
  EXPECT_EQ(D32({0xD9, 0x20}).mem_size, 28);  // fldenv
  EXPECT_EQ(D32({0x66, 0xD9, 0x20}).mem_size, 14);
  EXPECT_EQ(D32({0xDD, 0x30}).mem_size, 108);           // fnsave
  EXPECT_EQ(D32({0xDF, 0x28}).mem_size, 8);             // fild qword
  EXPECT_EQ(D32({0xA3, 1, 2, 3, 4}).mem, mem::kWrite);  // mov [moffs], eax
  EXPECT_EQ(D32({0xA3, 1, 2, 3, 4}).disp, 0x04030201);
}

TEST(X86Decoder, ControlFlowClasses) {
  EXPECT_EQ(D32({0xEB, 0}).flow, Flow::kJmp);
  EXPECT_EQ(D32({0xFF, 0xE0}).flow, Flow::kJmp);
  EXPECT_TRUE(D32({0xFF, 0xE0}).indirect());
  EXPECT_FALSE(D32({0xE9, 0, 0, 0, 0}).indirect());
  EXPECT_EQ(D32({0xFF, 0x10}).flow, Flow::kCall);
  EXPECT_EQ(D32({0xC3}).flow, Flow::kRet);
  EXPECT_EQ(D32({0xC2, 8, 0}).imm, 8u);
  EXPECT_EQ(D32({0xEA, 0, 0, 0, 0, 8, 0}).flow, Flow::kJmpFar);
  EXPECT_EQ(D32({0xFF, 0x28}).flow, Flow::kJmpFar);
  EXPECT_EQ(D32({0xCB}).flow, Flow::kRetFar);
  EXPECT_EQ(D32({0xCD, 0x80}).flow, Flow::kInt);
  EXPECT_EQ(D32({0xCD, 0x80}).imm, 0x80u);
  EXPECT_EQ(D32({0xCC}).flow, Flow::kInt);
  EXPECT_EQ(D32({0xCE}).flow, Flow::kInt);
  EXPECT_EQ(D32({0xCF}).flow, Flow::kIret);
  EXPECT_EQ(D32({0xE2, 0}).flow, Flow::kLoop);
  EXPECT_EQ(D32({0xE3, 0}).flow, Flow::kLoop);
  EXPECT_EQ(D32({0xE3, 0}).gpr_read, Bit(kEcx));
  EXPECT_EQ(D32({0x0F, 0x85, 0, 0, 0, 0}).flow, Flow::kJcc);
  EXPECT_EQ(D32({0xF3, 0xAB}).flow, Flow::kRep);
  EXPECT_EQ(D32({0xF4}).flow, Flow::kNone);
  EXPECT_EQ(D32({0xCF}).seg_written, Bit(kCs));
}

TEST(X86Decoder, X87RegisterForms) {
  EXPECT_EQ(D32({0xDC, 0xE1}).op, Op::kFsubr);  // fsubr st(1), st
  EXPECT_EQ(D32({0xDC, 0xE9}).op, Op::kFsub);
  EXPECT_EQ(D32({0xDE, 0xD9}).op, Op::kFcompp);
  EXPECT_EQ(D32({0xDA, 0xE9}).op, Op::kFucompp);
  EXPECT_EQ(D32({0xD9, 0xFE}).op, Op::kFsin);
  EXPECT_EQ(D32({0xD9, 0xD9}).op, Op::kFstp);  // undocumented FSTP1
  EXPECT_EQ(D32({0xDB, 0xE4}).op, Op::kFnop);  // FSETPM
  EXPECT_EQ(D32({0xDB, 0xE3}).op, Op::kFninit);
  Instruction i = D32({0xD8, 0xC3});  // fadd st, st(3)
  EXPECT_EQ(i.dst, Operand::kSt0);
  EXPECT_EQ(i.src, Operand::kSti);
  EXPECT_EQ(i.rm, 3);
  EXPECT_EQ(i.mem, 0);
  EXPECT_EQ(D32({0x9B}).op, Op::kWait);
}

// Decoding never depends on bytes past the instruction, and never reads past `size`.
TEST(X86Decoder, LengthIsStableUnderTruncation) {
  std::mt19937 rng(7);
  for (int n = 0; n < 200000; ++n) {
    uint8_t b[16];
    for (auto& x : b) x = static_cast<uint8_t>(rng());
    const bool d32 = n & 1;
    const Instruction full = Decode(b, 16, d32);
    if (full.fault == Fault::kGP) continue;
    ASSERT_NE(full.fault, Fault::kTruncated);
    if (!full.ok()) continue;
    std::vector<uint8_t> exact(b, b + full.length);  // heap copy: ASan would see an overrun
    const Instruction again = Decode(exact.data(), exact.size(), d32);
    ASSERT_TRUE(again.ok());
    ASSERT_EQ(std::memcmp(&again, &full, sizeof(full)), 0);
    ASSERT_EQ(Decode(exact.data(), exact.size() - 1, d32).fault, Fault::kTruncated);
  }
}

// ---- against Capstone 4.0.2 ----

// Capstone's mnemonic, without prefixes and operand-size suffixes, as our Mnemonic() spells it.
// Capstone names F2/F3 by their later meanings (MPX "bnd", TSX "xacquire"/"xrelease"), which an
// i486 ignores; the 0F map has no string instructions (0F 10 "movsd" is SSE2).
std::string Normalize(std::string m, bool two_byte) {
  for (bool again = true; again;) {
    again = false;
    for (const char* p : {"lock ", "rep ", "repe ", "repne ", "bnd ", "xacquire ", "xrelease "}) {
      const size_t n = std::strlen(p);
      if (m.compare(0, n, p) == 0) {
        m = m.substr(n);
        again = true;
      }
    }
  }
  static const std::map<std::string, std::string> kAliases = {
      {"pushal", "pusha"}, {"pushaw", "pusha"},      {"popal", "popa"},
      {"popaw", "popa"},   {"pushfd", "pushf"},      {"popfd", "popf"},
      {"iretd", "iret"},   {"jecxz", "jcxz"},        {"cwde", "cbw"},
      {"cdq", "cwd"},      {"sal", "shl"},           {"pause", "nop"},
      {"fstpnce", "fstp"}, {"feni8087_nop", "fnop"}, {"fdisi8087_nop", "fnop"},
      {"fsetpm", "fnop"},
  };
  if (auto it = kAliases.find(m); it != kAliases.end()) return it->second;
  if (two_byte) return m;
  for (const char* s : {"movs", "cmps", "stos", "lods", "scas", "ins", "outs"}) {
    const size_t n = std::strlen(s);
    if (m.size() == n + 1 && m.compare(0, n, s) == 0 && std::strchr("bwd", m[n])) return s;
  }
  return m;
}

std::string OurMnemonic(const Instruction& i) {
  if (i.op == Op::kJcc) return std::string("j") + ConditionName(i.cond);
  if (i.op == Op::kSetcc) return std::string("set") + ConditionName(i.cond);
  return std::string(Mnemonic(i.op));
}

struct CapstoneStats {
  int compared = 0;                                 // both accepted: lengths and mnemonics checked
  std::map<std::string, int> accepted_differences;  // by class
  std::vector<std::string> unexplained;
};

std::string Hex(const uint8_t* b, size_t n) {
  std::string s;
  char buf[4];
  for (size_t k = 0; k < n; ++k) {
    std::snprintf(buf, sizeof buf, "%02x ", b[k]);
    s += buf;
  }
  return s;
}

// Every mnemonic our decoder can produce, to tell "an instruction the i486 lacks" from "a 486
// instruction we reject".
const std::set<std::string>& OurMnemonics() {
  static const std::set<std::string> kAll = [] {
    std::set<std::string> s;
    for (int k = 0; k < static_cast<int>(Op::kCount); ++k) s.insert(std::string(Mnemonic(Op(k))));
    for (int c = 0; c < 16; ++c) {
      s.insert(std::string("j") + ConditionName(c));
      s.insert(std::string("set") + ConditionName(c));
    }
    return s;
  }();
  return kAll;
}

// Classes of disagreement we accept, each with its reason:
//  "not on the i486": Capstone decodes an instruction added after the i486 (CPUID, CMOVcc, RDTSC,
//    RDMSR, SYSENTER, CMPXCHG8B, UD2, FCMOVcc, FCOMI, FISTTP, MMX/SSE, the 0F 18-1F hint NOPs,
//    ...), which an i486DX answers with #UD.
//  "lock misuse": LOCK on an instruction that is not a lockable read-modify-write of memory is
//    #UD on the i486; Capstone decodes it.
//  "no such register": MOV to or from CR1/CR4-CR7, MOV to CS: #UD on the i486; Capstone prints
//  them. "x87 alias": the undocumented x87 aliases (FCOM2, FCOMP3/5, FXCH4/7, FSTP8/9) that
//  Capstone 4
//    does not know; the i486 executes them as what they alias.
//  "MOV TRn": Capstone 4 has no test registers; the i486 has TR3-TR7.
//  "Capstone moffs bug": Capstone 4 rejects MOV AL/AX/EAX <-> moffs (A0-A3) carrying both 66
//    and F2/F3 in 32-bit code (it accepts them with either prefix alone, and in 16-bit code).
//  "Capstone rel16 bug": with F2 or F3 beside 66, Capstone 4 decodes CALL rel in 32-bit code
//    with a rel32 (two bytes longer); the operand-size prefix makes it rel16 (Intel SDM, CALL).
//  "F3 redefined later": F3 0F BC/BD are TZCNT/LZCNT since BMI/ABM; the i486 ignores the REP
//    prefix and runs BSF/BSR.
std::string ClassifyDifference(const Instruction& ours, const uint8_t* b, bool d32,
                               const cs_insn* theirs) {
  if (theirs != nullptr) {  // we say #UD, Capstone decodes
    const std::string m = Normalize(theirs->mnemonic, ours.two_byte);
    if (!OurMnemonics().count(m)) return "not on the i486";
    if (m == "nop" && ours.two_byte) return "not on the i486";  // 0F 1F, 0F 18-1F hints
    if (ours.prefixes & prefix::kLock) {
      // Without its LOCK prefixes, would the instruction decode?
      std::vector<uint8_t> v;
      size_t k = 0;
      for (; k < ours.length || k < 15; ++k) {
        if (b[k] == 0xF0) continue;
        if (b[k] != 0x26 && b[k] != 0x2E && b[k] != 0x36 && b[k] != 0x3E && b[k] != 0x64 &&
            b[k] != 0x65 && b[k] != 0x66 && b[k] != 0x67 && b[k] != 0xF2 && b[k] != 0xF3)
          break;
        v.push_back(b[k]);
      }
      v.insert(v.end(), b + k, b + 15 + 1);
      if (Decode(v.data(), v.size(), d32).ok()) return "lock misuse";
    }
    if (m == "mov" && ours.two_byte && (ours.opcode == 0x20 || ours.opcode == 0x22)) {
      return "no such register";
    }
    if (m == "mov" && !ours.two_byte && ours.opcode == 0x8E) return "no such register";
    return "";
  }
  // We decode, Capstone does not.
  if (Facts(ours.op).attrs & attr::kFpu) {
    const uint8_t esc = ours.opcode, r = ours.modrm;
    if (ours.IsRegisterForm() &&
        ((esc == 0xDC && (r & 0xF0) == 0xD0) || (esc == 0xDD && (r & 0xF8) == 0xC8) ||
         (esc == 0xDE && (r & 0xF8) == 0xD0) || (esc == 0xDF && (r & 0xF0) == 0xD0) ||
         (esc == 0xDF && (r & 0xF8) == 0xC8))) {
      return "x87 alias";
    }
  }
  if (ours.op == Op::kMovTr) return "MOV TRn";
  if ((ours.src == Operand::kMoffs || ours.dst == Operand::kMoffs) &&
      (ours.prefixes & prefix::kOpSize) && (ours.prefixes & (prefix::kRep | prefix::kRepne))) {
    return "Capstone moffs bug";
  }
  return "";
}

CapstoneStats CompareWithCapstone(int count, uint32_t seed, bool d32) {
  CapstoneStats stats;
  csh h;
  EXPECT_EQ(cs_open(CS_ARCH_X86, d32 ? CS_MODE_32 : CS_MODE_16, &h), CS_ERR_OK);
  cs_insn* insn = cs_malloc(h);
  std::mt19937 rng(seed);
  constexpr uint8_t kPrefixes[] = {0x26, 0x2E, 0x36, 0x3E, 0x64, 0x65,
                                   0x66, 0x67, 0xF0, 0xF2, 0xF3};
  for (int n = 0; n < count; ++n) {
    // 15 bytes and padding: a few prefixes, then a one-byte or 0F opcode, then random bytes.
    uint8_t b[32];
    for (auto& x : b) x = static_cast<uint8_t>(rng());
    size_t k = 0;
    const uint32_t shape = rng();
    for (uint32_t p = shape % 4; p > 0 && (shape >> 8) % 3 == 0; --p) {
      b[k++] = kPrefixes[rng() % std::size(kPrefixes)];
    }
    if ((shape >> 4) % 3 == 0) b[k] = 0x0F;
    const Instruction ours = Decode(b, 15, d32);
    const uint8_t* code = b;
    size_t size = 15;
    uint64_t address = 0x1000;
    const bool theirs_ok = cs_disasm_iter(h, &code, &size, &address, insn);
    if (ours.fault == Fault::kGP) continue;
    if (ours.ok() && theirs_ok) {
      ++stats.compared;
      const std::string a = OurMnemonic(ours), t = Normalize(insn->mnemonic, ours.two_byte);
      if (insn->size == ours.length && a != t && (ours.prefixes & prefix::kRep) &&
          ((a == "bsf" && t == "tzcnt") || (a == "bsr" && t == "lzcnt"))) {
        ++stats.accepted_differences["F3 redefined later"];
      } else if (d32 && a == t && ours.dst == Operand::kRel && insn->size == ours.length + 2 &&
                 (ours.prefixes & prefix::kOpSize) &&
                 (ours.prefixes & (prefix::kRep | prefix::kRepne))) {
        ++stats.accepted_differences["Capstone rel16 bug"];
      } else if (insn->size != ours.length || a != t) {
        stats.unexplained.push_back(Hex(b, 15) + ": ours " + a + "/" + std::to_string(ours.length) +
                                    " capstone " + insn->mnemonic + "/" +
                                    std::to_string(insn->size));
      }
    } else if (ours.ok() != theirs_ok) {
      const std::string c = ClassifyDifference(ours, b, d32, theirs_ok ? insn : nullptr);
      if (c.empty()) {
        stats.unexplained.push_back(Hex(b, 15) + ": ours " +
                                    (ours.ok() ? OurMnemonic(ours) : std::string("#UD")) +
                                    " capstone " + (theirs_ok ? insn->mnemonic : "invalid"));
      } else {
        ++stats.accepted_differences[c];
      }
    }
  }
  cs_free(insn, 1);
  cs_close(&h);
  return stats;
}

void ExpectAgreement(const CapstoneStats& s, int min_compared) {
  EXPECT_GE(s.compared, min_compared);
  for (size_t k = 0; k < s.unexplained.size() && k < 40; ++k) ADD_FAILURE() << s.unexplained[k];
  EXPECT_EQ(s.unexplained.size(), 0u);
  for (const auto& [c, n] : s.accepted_differences)
    std::printf("  accepted: %s x%d\n", c.c_str(), n);
}

TEST(X86Decoder, AgreesWithCapstoneSample) {
  ExpectAgreement(CompareWithCapstone(40000, 1, true), 25000);
  ExpectAgreement(CompareWithCapstone(40000, 2, false), 25000);
}

TEST(X86DecoderDifferential, AgreesWithCapstoneOnAMillionInstructions) {
  ExpectAgreement(CompareWithCapstone(1000000, 11, true), 700000);
  ExpectAgreement(CompareWithCapstone(1000000, 12, false), 700000);
}

}  // namespace
}  // namespace citcat::x86
