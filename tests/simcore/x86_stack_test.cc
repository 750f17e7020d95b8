// Every stack corner of the i486 core against the manual's pseudo-code: each row of the table
// below is one case (an instruction or an event, an operand size, a stack size SS.B, a mode), and
// what it expects is worked out by hand from the Intel486 Programmer's Reference Manual (the
// instruction pages, whose pseudo-code is the 80386 manual's, and "Interrupt and Exception
// Handling"), never from the core's output or from an emulator (Unicorn and QEMU share bugs here:
// docs/machines/i486-core.md, "Where the oracles are wrong").
//
// The machine: code at 10000h (CS base; EIP 100h), every stack segment at base 20000h (a cell's
// offset below is an SS offset), the ring 0 stack of the TSS at 28h:9000h (32-bit), handlers at
// CS offset 8000h. A row that expects a fault runs with delivery off: the fault is left pending and
// the state must be the one before the instruction (the i486's faults are restartable: a stack
// operation that faults leaves ESP as it was).
#include <cctype>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "simcore/x86/cpu.h"
#include "tests/simcore/pc_bus.h"

namespace citcat::x86 {
namespace {

using testing::PcBus;

constexpr uint32_t kGdt = 0x1000, kIdt = 0x2000, kTss = 0x3000, kTss2 = 0x3100, kTss16 = 0x3200,
                   kCodeBase = 0x10000, kStackBase = 0x20000, kEip = 0x100, kHandler = 0x8000,
                   kEsp0 = 0x9000, kTss2Esp = 0xA000, kTss16Sp = 0xB000, kPageDirectory = 0x4000,
                   kPageTable = 0x5000;
// The GDT's selectors.
constexpr uint16_t kCode32 = 0x08, kData0 = 0x10, kCode16 = 0x18, kStack16 = 0x20, kStack32 = 0x28,
                   kCode32R3 = 0x33, kCode16R3 = 0x3B, kStack16R3 = 0x43, kStack32R3 = 0x4B,
                   kTssSel = 0x50, kData3 = 0x5B, kCallGate = 0x63, kTss2Sel = 0x68,
                   kTss16Sel = 0x70;

enum class Mode { kReal, kRing0, kRing3, kV86 };

struct Cell {
  uint32_t offset;  // in the stack segment (base 20000h)
  int size;
  uint32_t value;
};

// A location outside the stack segment (a TSS's field, a descriptor), by its linear address.
struct Word {
  uint32_t address;
  int size;
  uint32_t value;
};

struct Reg {
  int r;
  uint32_t value;
};

constexpr uint32_t kSame = 0xFFFFFFFFu;  // ESP (or EBP) as before the instruction
constexpr uint32_t kDefaultRegs[8] = {0xAAAA0001, 0xCCCC0002, 0xDDDD0003, 0xBBBB0004,
                                      0,          0xB0B00005, 0x51510006, 0xD1D10007};

class Machine;

struct Row {
  const char* name;  // the case
  const char* rule;  // the manual's rule it checks
  Mode mode;
  int code;   // CS.D: 16 or 32 (real and V86 mode: 16)
  int stack;  // SS.B: 16 or 32
  uint32_t esp;
  std::vector<uint8_t> bytes;  // at CS:100h
  std::vector<Cell> before = {};
  std::vector<Reg> regs = {};  // registers other than the defaults
  uint32_t eflags = 2;
  std::function<void(Machine&)> setup = nullptr;
  bool deliver = false;
  // Expected:
  int fault = -1;  // the vector left pending, with `error`
  uint32_t error = 0;
  uint32_t esp_after = kSame;
  uint32_t esp_mask = 0xFFFFFFFFu;  // the bits of ESP the manual decides
  std::vector<Cell> after = {};
  std::vector<Reg> regs_after = {};
  uint32_t eip_after = 0;  // 0: not checked (with a fault: the instruction's own)
  int cpl_after = -1;
  uint32_t eflags_after = 0;  // 0: not checked
  std::vector<Word> memory_after = {};
  int tr_after = -1;       // the task register's selector
  bool shutdown = false;   // the processor stopped: a fault while delivering a double fault
  uint32_t cr2_after = 0;  // 0: not checked
};

class Machine {
 public:
  explicit Machine(const Row& row) : cpu(bus) {
    // GDT.
    Descriptor(kCode32, kCodeBase, 0xFFFFF, 0x9B, true);
    Descriptor(kData0, 0, 0xFFFFF, 0x93, true);
    Descriptor(kCode16, kCodeBase, 0xFFFF, 0x9B, false);
    Descriptor(kStack16, kStackBase, 0xFFFF, 0x93, false);
    Descriptor(kStack32, kStackBase, 0xFFFFF, 0x93, true);
    Descriptor(kCode32R3, kCodeBase, 0xFFFFF, 0xFB, true);
    Descriptor(kCode16R3, kCodeBase, 0xFFFF, 0xFB, false);
    Descriptor(kStack16R3, kStackBase, 0xFFFF, 0xF3, false);
    Descriptor(kStack32R3, kStackBase, 0xFFFFF, 0xF3, true);
    Descriptor(kTssSel, kTss, 0x67, 0x8B, false);
    Descriptor(kData3, 0, 0xFFFFF, 0xF3, true);
    Descriptor(kTss2Sel, kTss2, 0x67, 0x89, false);
    Descriptor(kTss16Sel, kTss16, 0x2B, 0x81, false);
    // A 32-bit call gate, DPL 3, to ring 0 with two parameters.
    Long(kGdt + (kCallGate & ~7u), uint32_t{kCode32} << 16 | kHandler);
    Long(kGdt + (kCallGate & ~7u) + 4, 0xEC00 | 2);
    // IDT: every vector a 32-bit interrupt gate with DPL 3 to ring 0's 32-bit code.
    for (int v = 0; v < 256; ++v) Gate(v, kCode32, 0xEE);
    // The TSS's ring 0 stack; the real-mode vector table (every vector to 1000h:8000h).
    Long(kTss + 4, kEsp0);
    Long(kTss + 8, kStack32);
    for (uint32_t v = 0; v < 256; ++v) Long(4 * v, 0x1000u << 16 | kHandler);
    // The two tasks to switch to: EIP, EFLAGS, ESP and the selectors ES, CS, SS, DS.
    Long(kTss2 + 0x20, kHandler);
    Long(kTss2 + 0x24, 2);
    Long(kTss2 + 0x38, kTss2Esp);
    for (int s = 0; s < 6; ++s)
      Long(kTss2 + 0x48 + 4 * s, s == 1 ? kCode32 : s == 2 ? kStack32 : 0);
    Word16(kTss16 + 0x0E, kHandler);
    Word16(kTss16 + 0x10, 2);
    Word16(kTss16 + 0x1A, kTss16Sp);
    for (int s = 0; s < 4; ++s)
      Word16(kTss16 + 0x22 + 2 * s, s == 1 ? kCode16 : s == 2 ? kStack16 : 0);
    bus.Poke(kCodeBase + kHandler, {0xF4});
    bus.Poke(kCodeBase + kEip, row.bytes);
    for (const Cell& c : row.before) Put(c);

    for (int r = 0; r < 8; ++r) cpu.set_reg(r, kDefaultRegs[r]);
    for (const Reg& r : row.regs) cpu.set_reg(r.r, r.value);
    cpu.set_reg(kEsp, row.esp);
    cpu.set_eip(kEip);
    switch (row.mode) {
      case Mode::kReal:
        cpu.SetReal(0x1000, 0x0900, 0x2000);
        cpu.set_idtr({0, 0x3FF, 0});
        if (row.stack == 32) cpu.set_segment(kSs, {0x2000, kStackBase, 0xFFFFF, true, 0x93});
        break;
      case Mode::kV86:
        ProtectedMode();
        cpu.set_cpl(3);
        cpu.set_segment(kCs, {0x1000, kCodeBase, 0xFFFF, false, 0xF3});
        cpu.set_segment(kSs, {0x2000, kStackBase, 0xFFFF, false, 0xF3});
        for (int s : {kDs, kEs}) cpu.set_segment(s, {0x0900, 0x9000, 0xFFFF, false, 0xF3});
        for (int s : {kFs, kGs}) cpu.set_segment(s, {0, 0, 0xFFFF, false, 0xF3});
        break;
      case Mode::kRing0:
      case Mode::kRing3: {
        const bool r3 = row.mode == Mode::kRing3;
        ProtectedMode();
        cpu.set_cpl(r3 ? 3 : 0);
        const uint16_t cs =
            row.code == 32 ? (r3 ? kCode32R3 : kCode32) : (r3 ? kCode16R3 : kCode16);
        const uint16_t ss =
            row.stack == 32 ? (r3 ? kStack32R3 : kStack32) : (r3 ? kStack16R3 : kStack16);
        cpu.set_segment(kCs, SegmentFor(cs));
        cpu.set_segment(kSs, SegmentFor(ss));
        for (int s : {kDs, kEs, kFs, kGs}) cpu.set_segment(s, SegmentFor(r3 ? kData3 : kData0));
        break;
      }
    }
    cpu.set_eflags(row.eflags | (row.mode == Mode::kV86 ? flag::kVM : 0));
    cpu.set_deliver_interrupts(row.deliver);
    if (row.setup) row.setup(*this);
  }

  void Long(uint32_t a, uint32_t v) {
    bus.Poke(a, {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8),
                 static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 24)});
  }
  void Word16(uint32_t a, uint32_t v) {
    bus.Poke(a, {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8)});
  }
  uint32_t At(uint32_t address, int size) {
    uint32_t v = 0;
    for (int i = 0; i < size; ++i) v |= uint32_t{bus.ByteAt(address + i)} << (8 * i);
    return v;
  }
  void Put(const Cell& c) {
    for (int i = 0; i < c.size; ++i) {
      bus.Poke(kStackBase + c.offset + i, {static_cast<uint8_t>(c.value >> (8 * i))});
    }
  }
  uint32_t Get(uint32_t offset, int size) { return At(kStackBase + offset, size); }
  // IDT entry `vector`: a gate of `access` (8Eh/EEh 32-bit interrupt gate, 86h/E6h 16-bit, 85h
  // task gate) to `selector`:8000h.
  void Gate(int vector, uint16_t selector, uint8_t access) {
    Long(kIdt + 8 * vector, uint32_t{selector} << 16 | kHandler);
    Long(kIdt + 8 * vector + 4, uint32_t{access} << 8);
  }

  // Paging on: the first 4 MiB mapped to themselves, user and writable, but for the page at
  // `supervisor_page`.
  void Paging(uint32_t supervisor_page) {
    Long(kPageDirectory, kPageTable | 7);
    for (uint32_t page = 0; page < 1024; ++page) {
      Long(kPageTable + 4 * page, page << 12 | (page << 12 == supervisor_page ? 3 : 7));
    }
    cpu.set_cr3(kPageDirectory);
    cpu.set_cr0(cpu.cr0() | kCr0Pg);
  }

  PcBus bus;
  Cpu cpu;

 private:
  struct Entry {
    uint32_t base, limit;
    uint8_t access;
    bool big;
  };
  void Descriptor(uint16_t selector, uint32_t base, uint32_t limit, uint8_t access, bool big) {
    const uint32_t a = kGdt + (selector & ~7u);
    Long(a, base << 16 | (limit & 0xFFFF));
    Long(a + 4, (base & 0xFF000000u) | (big ? 4u : 0u) << 20 | (limit & 0xF0000u) | access << 8 |
                    ((base >> 16) & 0xFF));
    entries_[selector >> 3] = {base, limit, access, big};
  }
  Segment SegmentFor(uint16_t selector) const {
    const Entry& e = entries_[selector >> 3];
    return {selector, e.base, e.limit, e.big, e.access};
  }
  void ProtectedMode() {
    cpu.set_cr0(kCr0Pe | kCr0Et);
    cpu.set_gdtr({kGdt, 15 * 8 - 1, 0});
    cpu.set_idtr({kIdt, 256 * 8 - 1, 0});
    cpu.set_tr({kTss, 0x67, kTssSel}, true);
  }
  Entry entries_[16] = {};
};

// A 16-bit interrupt gate for `vector` to ring 0's 16-bit code.
std::function<void(Machine&)> Gate16(int vector) {
  return [vector](Machine& m) { m.Gate(vector, kCode16, 0xE6); };
}

constexpr uint32_t kIF = flag::kIF, kCF = flag::kCF;

// The ring 0 frame of an event taken at ring 3 (SS.B of the outer stack either), through a
// 32-bit gate: SS, ESP, EFLAGS, CS, EIP, from 9000h down.
std::vector<Cell> InnerFrame32(uint16_t ss, uint32_t esp, uint32_t eflags, uint16_t cs,
                               uint32_t eip) {
  return {{kEsp0 - 4, 4, ss},
          {kEsp0 - 8, 4, esp},
          {kEsp0 - 12, 4, eflags},
          {kEsp0 - 16, 4, cs},
          {kEsp0 - 20, 4, eip}};
}
std::vector<Cell> With(std::vector<Cell> cells, const std::vector<Cell>& more) {
  cells.insert(cells.end(), more.begin(), more.end());
  return cells;
}

const std::vector<Row>& Rows() {
  static const std::vector<Row> rows = {
      // ---- PUSH ----
      {.name = "PUSH EAX, o32, SS.B=0, ESP=00020000h",
       .rule = "PUSH: StackAddrSize 16: SP := SP - 4; (SS:SP) := SOURCE (only SP changes: it wraps "
               "to FFFCh, ESP's upper half stays)",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 16,
       .esp = 0x00020000,
       .bytes = {0x50},
       .esp_after = 0x0002FFFC,
       .after = {{0xFFFC, 4, 0xAAAA0001}}},
      {.name = "PUSH AX, o16, SS.B=0, SP=0",
       .rule = "PUSH: SP := SP - 2; (SS:SP) := SOURCE",
       .mode = Mode::kRing0,
       .code = 16,
       .stack = 16,
       .esp = 0x00030000,
       .bytes = {0x50},
       .esp_after = 0x0003FFFE,
       .after = {{0xFFFE, 2, 0x0001}}},
      {.name = "PUSH AX, o16, SS.B=0, SP=1: the word at FFFFh crosses the limit",
       .rule = "PUSH: #SS(0) if the new SP is outside the stack segment limit; a fault leaves ESP "
               "as it was",
       .mode = Mode::kRing0,
       .code = 16,
       .stack = 16,
       .esp = 0x00030001,
       .bytes = {0x50},
       .fault = kVecStackFault,
       .after = {{0xFFFF, 1, 0}}},
      {.name = "PUSH ESP, o32, SS.B=0, ESP=00020000h",
       .rule = "PUSH: PUSH ESP pushes ESP as it was before the instruction, all 32 bits",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 16,
       .esp = 0x00020000,
       .bytes = {0x54},
       .esp_after = 0x0002FFFC,
       .after = {{0xFFFC, 4, 0x00020000}}},
      {.name = "PUSH SP, o16, SS.B=1, ESP=00012346h",
       .rule = "PUSH: PUSH SP pushes SP as it was before the instruction",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = 0x00012346,
       .bytes = {0x66, 0x54},
       .esp_after = 0x00012344,
       .after = {{0x12344, 2, 0x2346}}},
      {.name = "PUSH imm8, o16, SS.B=1",
       .rule = "PUSH imm8: the byte sign-extended to the operand size; ESP := ESP - 2",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = 0x1000,
       .bytes = {0x66, 0x6A, 0x80},
       .esp_after = 0x0FFE,
       .after = {{0x0FFE, 2, 0xFF80}}},
      {.name = "PUSH imm8, o32, SS.B=0, SP=4",
       .rule = "PUSH imm8: sign-extended to 32 bits; SP := SP - 4",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 16,
       .esp = 0x00040004,
       .bytes = {0x6A, 0xFE},
       .esp_after = 0x00040000,
       .after = {{0, 4, 0xFFFFFFFE}}},
      {.name = "PUSH DWORD [ESP], SS.B=1",
       .rule = "PUSH m32: the operand's address is computed with ESP before the push",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = 0x1000,
       .bytes = {0xFF, 0x34, 0x24},
       .before = {{0x1000, 4, 0xCAFEF00D}},
       .esp_after = 0x0FFC,
       .after = {{0x0FFC, 4, 0xCAFEF00D}}},
      {.name = "PUSH DS, o32, SS.B=0, SP=0",
       .rule = "PUSH Sreg: SP := SP - 4 with a 32-bit operand size; the selector written by a "
               "16-bit move, the slot's upper word left as it was (the 80386 and i486 chips)",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 16,
       .esp = 0x00050000,
       .bytes = {0x1E},
       .before = {{0xFFFC, 4, 0xDEADBEEF}},
       .esp_after = 0x0005FFFC,
       .after = {{0xFFFC, 4, 0xDEAD0000u | kData0}}},
      {.name = "real mode: PUSH AX, SP=0, ESP=00070000h",
       .rule = "PUSH: real mode has SS.B=0: SP := SP - 2 wraps to FFFEh, ESP's upper half stays",
       .mode = Mode::kReal,
       .code = 16,
       .stack = 16,
       .esp = 0x00070000,
       .bytes = {0x50},
       .esp_after = 0x0007FFFE,
       .after = {{0xFFFE, 2, 0x0001}}},
      {.name = "real mode: PUSH EAX (o32), SP=2: the doubleword at FFFEh crosses the limit",
       .rule = "PUSH: a stack operand beyond the stack segment's limit faults, ESP as it was",
       .mode = Mode::kReal,
       .code = 16,
       .stack = 16,
       .esp = 0x00070002,
       .bytes = {0x66, 0x50},
       .fault = kVecStackFault},
      {.name = "V86 mode: PUSH AX, SP=0",
       .rule = "PUSH: V86 stacks are 16-bit: SP wraps to FFFEh",
       .mode = Mode::kV86,
       .code = 16,
       .stack = 16,
       .esp = 0x00000000,
       .bytes = {0x50},
       .eflags = flag::kIOPL,
       .esp_after = 0x0000FFFE,
       .after = {{0xFFFE, 2, 0x0001}}},
      // ---- POP ----
      {.name = "POP EAX, o32, SS.B=0, SP=FFFCh",
       .rule = "POP: DEST := (SS:SP); SP := SP + 4 (SP wraps to 0, no carry into ESP's upper half)",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 16,
       .esp = 0x0001FFFC,
       .bytes = {0x58},
       .before = {{0xFFFC, 4, 0x12345678}},
       .esp_after = 0x00010000,
       .regs_after = {{kEax, 0x12345678}}},
      {.name = "POP EAX, o32, SS.B=0, SP=FFFEh: the doubleword crosses the limit",
       .rule = "POP: #SS(0) if the top of stack is not within the stack segment; ESP as it was",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 16,
       .esp = 0x0001FFFE,
       .bytes = {0x58},
       .fault = kVecStackFault,
       .regs_after = {{kEax, 0xAAAA0001}}},
      {.name = "POP AX, o16, SS.B=0, SP=FFFEh",
       .rule = "POP: SP := SP + 2 wraps to 0; AX only",
       .mode = Mode::kRing0,
       .code = 16,
       .stack = 16,
       .esp = 0x0005FFFE,
       .bytes = {0x58},
       .before = {{0xFFFE, 2, 0xBEEF}},
       .esp_after = 0x00050000,
       .regs_after = {{kEax, 0xAAAABEEF}}},
      {.name = "POP ESP, SS.B=1",
       .rule = "POP: POP ESP increments ESP before the popped value is written: ESP = the value",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = 0x1000,
       .bytes = {0x5C},
       .before = {{0x1000, 4, 0x4444}},
       .esp_after = 0x4444},
      {.name = "POP SP, o16, SS.B=0",
       .rule = "POP: POP SP: SP = the value popped; ESP's upper half stays",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 16,
       .esp = 0x0006FFFE,
       .bytes = {0x66, 0x5C},
       .before = {{0xFFFE, 2, 0x1234}},
       .esp_after = 0x00061234},
      {.name = "POP DWORD [ESP], SS.B=1",
       .rule = "POP m32: with ESP as the base, the address is computed after ESP is incremented",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = 0x1000,
       .bytes = {0x8F, 0x04, 0x24},
       .before = {{0x1000, 4, 0x77}},
       .esp_after = 0x1004,
       .after = {{0x1004, 4, 0x77}}},
      {.name = "POP DS of a selector past the GDT limit",
       .rule = "POP Sreg: #GP(selector) if the selector's index is outside the table; ESP as it "
               "was",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = 0x1000,
       .bytes = {0x1F},
       .before = {{0x1000, 4, 0xFFF8}},
       .fault = kVecGeneralProtection,
       .error = 0xFFF8},
      {.name = "real mode: POP AX, SP=FFFEh, ESP=00070000h + FFFEh",
       .rule = "POP: SP := SP + 2 wraps to 0",
       .mode = Mode::kReal,
       .code = 16,
       .stack = 16,
       .esp = 0x0007FFFE,
       .bytes = {0x58},
       .before = {{0xFFFE, 2, 0x1357}},
       .esp_after = 0x00070000,
       .regs_after = {{kEax, 0xAAAA1357}}},
      // ---- PUSHA / POPA ----
      {.name = "PUSHAD, SS.B=0, ESP=00020000h",
       .rule = "PUSHAD: Temp := (ESP); ... Push(Temp): the original ESP, all 32 bits (00020000h); "
               "SP wraps",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 16,
       .esp = 0x00020000,
       .bytes = {0x60},
       .esp_after = 0x0002FFE0,
       .after = {{0xFFFC, 4, 0xAAAA0001},
                 {0xFFF8, 4, 0xCCCC0002},
                 {0xFFF4, 4, 0xDDDD0003},
                 {0xFFF0, 4, 0xBBBB0004},
                 {0xFFEC, 4, 0x00020000},
                 {0xFFE8, 4, 0xB0B00005},
                 {0xFFE4, 4, 0x51510006},
                 {0xFFE0, 4, 0xD1D10007}}},
      {.name = "PUSHAD in 16-bit code (o32), SS.B=0, ESP=00090010h: SP wraps in the middle",
       .rule = "PUSHAD: Temp := (ESP) = 00090010h; each Push wraps SP in 16 bits",
       .mode = Mode::kRing0,
       .code = 16,
       .stack = 16,
       .esp = 0x00090010,
       .bytes = {0x66, 0x60},
       .esp_after = 0x0009FFF0,
       .after = {{0x000C, 4, 0xAAAA0001},
                 {0x0008, 4, 0xCCCC0002},
                 {0x0004, 4, 0xDDDD0003},
                 {0x0000, 4, 0xBBBB0004},
                 {0xFFFC, 4, 0x00090010},
                 {0xFFF8, 4, 0xB0B00005},
                 {0xFFF4, 4, 0x51510006},
                 {0xFFF0, 4, 0xD1D10007}}},
      {.name = "PUSHA, o16, SS.B=1, ESP=00012346h",
       .rule = "PUSHA: Temp := (SP) = 2346h",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = 0x00012346,
       .bytes = {0x66, 0x60},
       .esp_after = 0x00012336,
       .after = {{0x12344, 2, 0x0001},
                 {0x12342, 2, 0x0002},
                 {0x12340, 2, 0x0003},
                 {0x1233E, 2, 0x0004},
                 {0x1233C, 2, 0x2346},
                 {0x1233A, 2, 0x0005},
                 {0x12338, 2, 0x0006},
                 {0x12336, 2, 0x0007}}},
      {.name = "PUSHA, o16, SS.B=0, SP=000Ah: SP wraps after SP's own push",
       .rule = "PUSHA: Temp := (SP) = 000Ah; each Push wraps SP; start and end within the limit",
       .mode = Mode::kRing0,
       .code = 16,
       .stack = 16,
       .esp = 0x0004000A,
       .bytes = {0x60},
       .esp_after = 0x0004FFFA,
       .after = {{0x0008, 2, 0x0001},
                 {0x0006, 2, 0x0002},
                 {0x0004, 2, 0x0003},
                 {0x0002, 2, 0x0004},
                 {0x0000, 2, 0x000A},
                 {0xFFFE, 2, 0x0005},
                 {0xFFFC, 2, 0x0006},
                 {0xFFFA, 2, 0x0007}}},
      {.name = "real mode: PUSHA, SP=0, ESP=00070000h",
       .rule = "PUSHA: Temp := (SP) = 0",
       .mode = Mode::kReal,
       .code = 16,
       .stack = 16,
       .esp = 0x00070000,
       .bytes = {0x60},
       .esp_after = 0x0007FFF0,
       .after = {{0xFFFE, 2, 0x0001}, {0xFFF6, 2, 0x0000}, {0xFFF0, 2, 0x0007}}},
      {.name = "PUSHAD, SS.B=1, ESP=0Ch: the last pushes go below 0, outside the limit",
       .rule = "PUSHAD: #SS(0) if the starting or ending stack address is outside the limit; ESP "
               "as it was",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = 0x0000000C,
       .bytes = {0x60},
       .fault = kVecStackFault},
      {.name = "POPAD, SS.B=0, SP=FFE0h",
       .rule = "POPAD: EDI, ESI, EBP := Pop(); throwaway := Pop(); EBX, EDX, ECX, EAX := Pop(); "
               "SP ends at 0 with no carry into ESP's upper half",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 16,
       .esp = 0x0003FFE0,
       .bytes = {0x61},
       .before = {{0xFFE0, 4, 0x70707070},
                  {0xFFE4, 4, 0x60606060},
                  {0xFFE8, 4, 0x50505050},
                  {0xFFEC, 4, 0x40404040},
                  {0xFFF0, 4, 0x30303030},
                  {0xFFF4, 4, 0x20202020},
                  {0xFFF8, 4, 0x10101010},
                  {0xFFFC, 4, 0x01010101}},
       .esp_after = 0x00030000,
       .regs_after = {{kEdi, 0x70707070},
                      {kEsi, 0x60606060},
                      {kEbp, 0x50505050},
                      {kEbx, 0x30303030},
                      {kEdx, 0x20202020},
                      {kEcx, 0x10101010},
                      {kEax, 0x01010101}}},
      {.name = "POPAD, SS.B=0, SP=FFF0h: SP wraps in the middle",
       .rule = "POPAD: each Pop wraps SP in 16 bits; start and end within the limit",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 16,
       .esp = 0x0003FFF0,
       .bytes = {0x61},
       .before = {{0xFFF0, 4, 0x70707070},
                  {0xFFF4, 4, 0x60606060},
                  {0xFFF8, 4, 0x50505050},
                  {0xFFFC, 4, 0x40404040},
                  {0x0000, 4, 0x30303030},
                  {0x0004, 4, 0x20202020},
                  {0x0008, 4, 0x10101010},
                  {0x000C, 4, 0x01010101}},
       .esp_after = 0x00030010,
       .regs_after = {{kEdi, 0x70707070}, {kEbx, 0x30303030}, {kEax, 0x01010101}}},
      {.name = "POPAD, SS.B=0, SP=FFF2h: the fourth doubleword crosses the limit",
       .rule = "POPAD: #SS(0) if the stack is not within the limit; no register changes, ESP as it "
               "was",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 16,
       .esp = 0x0003FFF2,
       .bytes = {0x61},
       .fault = kVecStackFault,
       .regs_after = {{kEdi, 0xD1D10007}, {kEsi, 0x51510006}, {kEbp, 0xB0B00005}}},
      {.name = "POPA, o16, SS.B=1",
       .rule = "POPA: the word registers only (upper halves stay); SP's image is thrown away",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = 0x2000,
       .bytes = {0x66, 0x61},
       .before = {{0x2000, 2, 0x0707},
                  {0x2002, 2, 0x0606},
                  {0x2004, 2, 0x0505},
                  {0x2006, 2, 0x0404},
                  {0x2008, 2, 0x0303},
                  {0x200A, 2, 0x0202},
                  {0x200C, 2, 0x0101},
                  {0x200E, 2, 0x0F0F}},
       .esp_after = 0x2010,
       .regs_after = {{kEax, 0xAAAA0F0F},
                      {kEcx, 0xCCCC0101},
                      {kEdx, 0xDDDD0202},
                      {kEbx, 0xBBBB0303},
                      {kEbp, 0xB0B00505},
                      {kEsi, 0x51510606},
                      {kEdi, 0xD1D10707}}},
      // ---- PUSHF / POPF ----
      {.name = "PUSHFD, SS.B=1, RF set",
       .rule = "PUSHFD: EFLAGS is pushed with VM and RF as 0",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = 0x1000,
       .bytes = {0x9C},
       .eflags = flag::kRF | kCF | 2,
       .esp_after = 0x0FFC,
       .after = {{0x0FFC, 4, kCF | 2}}},
      {.name = "PUSHF, o16, SS.B=0, SP=0",
       .rule = "PUSHF: SP := SP - 2 wraps; FLAGS (the low 16 bits)",
       .mode = Mode::kRing0,
       .code = 16,
       .stack = 16,
       .esp = 0x00080000,
       .bytes = {0x9C},
       .eflags = flag::kZF | kCF | 2,
       .esp_after = 0x0008FFFE,
       .after = {{0xFFFE, 2, flag::kZF | kCF | 2}}},
      {.name = "POPFD at CPL 3 with IOPL 0",
       .rule = "POPF: IOPL changes only at CPL 0, IF only where CPL <= IOPL; no fault",
       .mode = Mode::kRing3,
       .code = 32,
       .stack = 32,
       .esp = 0x1000,
       .bytes = {0x9D},
       .before = {{0x1000, 4, flag::kIOPL | kIF | flag::kOF | kCF}},
       .esp_after = 0x1004,
       .eflags_after = flag::kOF | kCF | 2},
      {.name = "POPFD at CPL 0 with VM and RF in the image",
       .rule = "POPF: VM and RF are not affected by POPF or POPFD",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = 0x1000,
       .bytes = {0x9D},
       .before = {{0x1000, 4, flag::kVM | flag::kRF | flag::kIOPL | kIF | kCF}},
       .esp_after = 0x1004,
       .eflags_after = flag::kIOPL | kIF | kCF | 2},
      {.name = "POPF, o16, SS.B=0, SP=FFFEh",
       .rule = "POPF: SP := SP + 2 wraps to 0",
       .mode = Mode::kRing0,
       .code = 16,
       .stack = 16,
       .esp = 0x0008FFFE,
       .bytes = {0x9D},
       .before = {{0xFFFE, 2, kCF}},
       .esp_after = 0x00080000,
       .eflags_after = kCF | 2},
      // ---- near CALL / RET ----
      {.name = "CALL rel16, SS.B=0, SP=0",
       .rule = "CALL: Push(IP): SP wraps to FFFEh, ESP's upper half stays",
       .mode = Mode::kRing0,
       .code = 16,
       .stack = 16,
       .esp = 0x00030000,
       .bytes = {0xE8, 0x10, 0x00},
       .esp_after = 0x0003FFFE,
       .after = {{0xFFFE, 2, 0x0103}},
       .eip_after = 0x113},
      {.name = "CALL rel32, SS.B=0, SP=2: the return address crosses the limit",
       .rule = "CALL: #SS(0) if pushing the return address exceeds the stack limit; EIP and ESP "
               "as they were",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 16,
       .esp = 0x00030002,
       .bytes = {0xE8, 0, 0, 0, 0},
       .fault = kVecStackFault},
      {.name = "CALL DWORD [ESP], SS.B=1",
       .rule = "CALL r/m32: the target is read (with ESP before the push) before the push",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = 0x1000,
       .bytes = {0xFF, 0x14, 0x24},
       .before = {{0x1000, 4, 0x200}},
       .esp_after = 0x0FFC,
       .after = {{0x0FFC, 4, 0x103}},
       .eip_after = 0x200},
      {.name = "RET imm16, o16, SS.B=0, SP=FFFEh",
       .rule = "RET: IP := Pop() (SP wraps to 0); SP := SP + imm16",
       .mode = Mode::kRing0,
       .code = 16,
       .stack = 16,
       .esp = 0x0003FFFE,
       .bytes = {0xC2, 0x08, 0x00},
       .before = {{0xFFFE, 2, 0x0200}},
       .esp_after = 0x00030008,
       .eip_after = 0x200},
      {.name = "RET, o32, SS.B=0, SP=FFFEh: the doubleword crosses the limit",
       .rule = "RET: #SS(0) if the return address is not within the stack limit",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 16,
       .esp = 0x0003FFFE,
       .bytes = {0xC3},
       .fault = kVecStackFault},
      {.name = "RET imm16, o32, SS.B=1",
       .rule = "RET: EIP := Pop(); ESP := ESP + imm16",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = 0x1000,
       .bytes = {0xC2, 0x10, 0x00},
       .before = {{0x1000, 4, 0x200}},
       .esp_after = 0x1014,
       .eip_after = 0x200},
      {.name = "RET, o32 in 16-bit code, to 10000h past the CS limit",
       .rule = "RET: #GP(0) if the return address is beyond the code segment limit; ESP as it was",
       .mode = Mode::kRing0,
       .code = 16,
       .stack = 16,
       .esp = 0x0003F000,
       .bytes = {0x66, 0xC3},
       .before = {{0xF000, 4, 0x00010000}},
       .fault = kVecGeneralProtection},
      // ---- far CALL / RET ----
      {.name = "real mode: CALL FAR ptr16:16, SP=0",
       .rule = "CALL far: Push(CS); Push(IP): CS at FFFEh, IP at FFFCh",
       .mode = Mode::kReal,
       .code = 16,
       .stack = 16,
       .esp = 0x00070000,
       .bytes = {0x9A, 0x00, 0x02, 0x00, 0x10},
       .esp_after = 0x0007FFFC,
       .after = {{0xFFFE, 2, 0x1000}, {0xFFFC, 2, 0x0105}},
       .eip_after = 0x200},
      {.name = "real mode: CALL FAR ptr16:32 (o32)",
       .rule = "CALL far, OperandSize 32: Push(CS) padded to a doubleword; Push(EIP)",
       .mode = Mode::kReal,
       .code = 16,
       .stack = 16,
       .esp = 0x0100,
       .bytes = {0x66, 0x9A, 0x00, 0x02, 0x00, 0x00, 0x00, 0x10},
       .esp_after = 0x00F8,
       .after = {{0x00FC, 2, 0x1000}, {0x00F8, 4, 0x0108}},
       .eip_after = 0x200},
      {.name = "real mode: RETF imm16, SP=FFFCh",
       .rule = "RET far: IP := Pop(); CS := Pop() (SP wraps to 0); SP := SP + imm16",
       .mode = Mode::kReal,
       .code = 16,
       .stack = 16,
       .esp = 0x0007FFFC,
       .bytes = {0xCA, 0x04, 0x00},
       .before = {{0xFFFC, 2, 0x0200}, {0xFFFE, 2, 0x1000}},
       .esp_after = 0x00070004,
       .eip_after = 0x200},
      {.name = "CALL FAR to the same level, o32, SS.B=0, SP=0",
       .rule = "CALL far: Push(CS) (a doubleword); Push(EIP): SP wraps, ESP's upper half stays",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 16,
       .esp = 0x00020000,
       .bytes = {0x9A, 0x00, 0x02, 0x00, 0x00, kCode32, 0x00},
       .esp_after = 0x0002FFF8,
       .after = {{0xFFFC, 2, kCode32}, {0xFFF8, 4, 0x107}},
       .eip_after = 0x200},
      {.name = "CALL FAR, o32, SS.B=0, SP=6: EIP's doubleword crosses the limit",
       .rule = "CALL far: #SS(0) if the return address does not fit within the stack limit; CS, "
               "EIP and ESP as they were",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 16,
       .esp = 0x00020006,
       .bytes = {0x9A, 0x00, 0x02, 0x00, 0x00, kCode32, 0x00},
       .fault = kVecStackFault},
      {.name = "RETF imm16 to the same level, o16, SS.B=0, SP=FFFCh",
       .rule = "RET far: IP := Pop(); CS := Pop() (SP wraps to 0); SP := SP + imm16",
       .mode = Mode::kRing0,
       .code = 16,
       .stack = 16,
       .esp = 0x0002FFFC,
       .bytes = {0xCA, 0x06, 0x00},
       .before = {{0xFFFC, 2, 0x0200}, {0xFFFE, 2, kCode16}},
       .esp_after = 0x00020006,
       .eip_after = 0x200},
      {.name = "CALL FAR through a 32-bit call gate from ring 3 (SS.B=0, ESP=00020000h), two "
               "parameters",
       .rule = "CALL to a more privileged level: the TSS's stack; Push(old SS:ESP) (ESP whole); "
               "the parameters copied in their order; Push(CS:EIP)",
       .mode = Mode::kRing3,
       .code = 32,
       .stack = 16,
       .esp = 0x00020000,
       .bytes = {0x9A, 0, 0, 0, 0, kCallGate, 0x00},
       .before = {{0x0000, 4, 0x11111111}, {0x0004, 4, 0x22222222}},
       .esp_after = kEsp0 - 24,
       .after = {{kEsp0 - 4, 4, kStack16R3},
                 {kEsp0 - 8, 4, 0x00020000},
                 {kEsp0 - 12, 4, 0x22222222},
                 {kEsp0 - 16, 4, 0x11111111},
                 {kEsp0 - 20, 4, kCode32R3},
                 {kEsp0 - 24, 4, 0x107}},
       .eip_after = kHandler,
       .cpl_after = 0},
      {.name = "RETF 8 from ring 0 to ring 3 with a 16-bit outer stack",
       .rule = "RET far to an outer level: EIP, CS popped, ESP + 8, then ESP and SS popped and "
               "SP + 8 on the outer stack (the low 16 bits: see the note on ESP's upper half)",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = kEsp0 - 24,
       .bytes = {0xCA, 0x08, 0x00},
       .before = {{kEsp0 - 24, 4, 0x300},
                  {kEsp0 - 20, 4, kCode32R3},
                  {kEsp0 - 8, 4, 0x0002FFF0},
                  {kEsp0 - 4, 4, kStack16R3}},
       .esp_after = 0xFFF8,
       .esp_mask = 0xFFFF,
       .eip_after = 0x300,
       .cpl_after = 3},
      // ---- ENTER / LEAVE ----
      {.name = "ENTER 8,0, o32, SS.B=1",
       .rule = "ENTER: Push(EBP); frame-ptr := ESP; EBP := frame-ptr; ESP := ESP - 8",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = 0x1000,
       .bytes = {0xC8, 0x08, 0x00, 0x00},
       .regs = {{kEbp, 0x5555}},
       .esp_after = 0x0FF4,
       .after = {{0x0FFC, 4, 0x5555}},
       .regs_after = {{kEbp, 0x0FFC}}},
      {.name = "ENTER 4,1, o16, SS.B=0, SP=4",
       .rule = "ENTER: Push(BP); frame-ptr := SP; level 1: Push(frame-ptr); BP := frame-ptr; "
               "SP := SP - 4 (wraps)",
       .mode = Mode::kRing0,
       .code = 16,
       .stack = 16,
       .esp = 0x00050004,
       .bytes = {0xC8, 0x04, 0x00, 0x01},
       .regs = {{kEbp, 0x1234ABCD}},
       .esp_after = 0x0005FFFC,
       .after = {{0x0002, 2, 0xABCD}, {0x0000, 2, 0x0002}},
       .regs_after = {{kEbp, 0x12340002}}},
      {.name = "ENTER 0,3, o16, SS.B=0",
       .rule = "ENTER: level 3: BP := BP - 2; Push([BP]) twice, then Push(frame-ptr)",
       .mode = Mode::kRing0,
       .code = 16,
       .stack = 16,
       .esp = 0x00050080,
       .bytes = {0xC8, 0x00, 0x00, 0x03},
       .before = {{0x00FE, 2, 0xAAAA}, {0x00FC, 2, 0xBBBB}},
       .regs = {{kEbp, 0x00000100}},
       .esp_after = 0x00050078,
       .after = {{0x007E, 2, 0x0100}, {0x007C, 2, 0xAAAA}, {0x007A, 2, 0xBBBB}, {0x0078, 2, 0x7E}},
       .regs_after = {{kEbp, 0x0000007E}}},
      {.name = "ENTER 0,2, o16, SS.B=0, BP=0: the copy's address wraps to FFFEh",
       .rule = "ENTER: BP := BP - 2 in 16 bits; Push([BP])",
       .mode = Mode::kRing0,
       .code = 16,
       .stack = 16,
       .esp = 0x00050080,
       .bytes = {0xC8, 0x00, 0x00, 0x02},
       .before = {{0xFFFE, 2, 0x9999}},
       .regs = {{kEbp, 0x00000000}},
       .esp_after = 0x0005007A,
       .after = {{0x007E, 2, 0x0000}, {0x007C, 2, 0x9999}, {0x007A, 2, 0x007E}},
       .regs_after = {{kEbp, 0x0000007E}}},
      {.name = "ENTER 0,2, o32, SS.B=1",
       .rule = "ENTER: EBP := EBP - 4; Push([EBP]); Push(frame-ptr)",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = 0x2000,
       .bytes = {0xC8, 0x00, 0x00, 0x02},
       .before = {{0x2FFC, 4, 0xCCCCCCCC}},
       .regs = {{kEbp, 0x3000}},
       .esp_after = 0x1FF4,
       .after = {{0x1FFC, 4, 0x3000}, {0x1FF8, 4, 0xCCCCCCCC}, {0x1FF4, 4, 0x1FFC}},
       .regs_after = {{kEbp, 0x1FFC}}},
      {.name = "ENTER 0,33: the level is taken modulo 32",
       .rule = "ENTER: level := level MOD 32 (1)",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = 0x2000,
       .bytes = {0xC8, 0x00, 0x00, 33},
       .regs = {{kEbp, 0x3000}},
       .esp_after = 0x1FF8,
       .after = {{0x1FFC, 4, 0x3000}, {0x1FF8, 4, 0x1FFC}},
       .regs_after = {{kEbp, 0x1FFC}}},
      {.name = "ENTER 16,1, o32, SS.B=0, ESP=00020000h",
       .rule = "ENTER: with a 32-bit operand FrameTemp := ESP, all of it, on a 16-bit stack too "
               "(the later Intel manuals; test386 on the 80386 and i486 chips, where the i486 "
               "manual's pseudo-code takes SP): EBP := 0002FFFCh; SP := SP - 16",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 16,
       .esp = 0x00020000,
       .bytes = {0xC8, 0x10, 0x00, 0x01},
       .regs = {{kEbp, 0x77777777}},
       .esp_after = 0x0002FFE8,
       .after = {{0xFFFC, 4, 0x77777777}, {0xFFF8, 4, 0x0002FFFC}},
       .regs_after = {{kEbp, 0x0002FFFC}}},
      {.name = "ENTER 0,2, o32, SS.B=0, EBP=00030010h",
       .rule = "ENTER: StackSize 16: BP := BP - 4; Push32([BP]) (the copy's address in 16 bits); "
               "Push32(FrameTemp), FrameTemp the whole ESP",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 16,
       .esp = 0x00020100,
       .bytes = {0xC8, 0x00, 0x00, 0x02},
       .before = {{0x000C, 4, 0x0C0C0C0C}},
       .regs = {{kEbp, 0x00030010}},
       .esp_after = 0x000200F4,
       .after = {{0x00FC, 4, 0x00030010}, {0x00F8, 4, 0x0C0C0C0C}, {0x00F4, 4, 0x000200FC}},
       .regs_after = {{kEbp, 0x000200FC}}},
      {.name = "ENTER 32,0, o32, SS.B=1, ESP=10h: the final ESP lies past the limit",
       .rule = "ENTER: #SS(0) if the new ESP is outside the stack segment limit; found before "
               "anything is written (EBP is not pushed)",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = 0x10,
       .bytes = {0xC8, 0x20, 0x00, 0x00},
       .before = {{0x0C, 4, 0x11111111}},
       .fault = kVecStackFault,
       .after = {{0x0C, 4, 0x11111111}},
       .regs_after = {{kEbp, kDefaultRegs[kEbp]}}},
      {.name = "ENTER 1,0 at ring 3: a write at the final ESP would page-fault",
       .rule = "ENTER: #PF(fault-code) if a write using the final value of the stack pointer "
               "would cause one (the later Intel manuals; test386 on the chips): here the byte "
               "at 20FFFh, on a supervisor page, where the pushed EBP lands on a user page",
       .mode = Mode::kRing3,
       .code = 32,
       .stack = 32,
       .esp = 0x1004,
       .bytes = {0xC8, 0x01, 0x00, 0x00},
       .before = {{0x1000, 4, 0x12121212}},
       .setup = [](Machine& m) { m.Paging(kStackBase); },
       .fault = kVecPageFault,
       .error = 7,
       .after = {{0x1000, 4, 0x12121212}},
       .cr2_after = kStackBase + 0xFFF},
      {.name = "ENTER 0,2, o32, SS.B=1: the frame pointer to copy lies past the limit",
       .rule = "ENTER: #SS(0) if the stack goes out of the limit at any point; ESP and EBP as they "
               "were",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = 0x2000,
       .bytes = {0xC8, 0x00, 0x00, 0x02},
       .regs = {{kEbp, 0x00200000}},
       .fault = kVecStackFault,
       .regs_after = {{kEbp, 0x00200000}}},
      {.name = "LEAVE, o32, SS.B=0",
       .rule = "LEAVE: SP := BP (ESP's upper half stays); EBP := Pop()",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 16,
       .esp = 0x00021234,
       .bytes = {0xC9},
       .before = {{0xFFF0, 4, 0x13572468}},
       .regs = {{kEbp, 0x0000FFF0}},
       .esp_after = 0x0002FFF4,
       .regs_after = {{kEbp, 0x13572468}}},
      {.name = "LEAVE, o16, SS.B=1",
       .rule = "LEAVE: ESP := EBP; BP := Pop() (EBP's upper half stays)",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = 0x0500,
       .bytes = {0x66, 0xC9},
       .before = {{0x11000, 2, 0x7777}},
       .regs = {{kEbp, 0x00011000}},
       .esp_after = 0x11002,
       .regs_after = {{kEbp, 0x00017777}}},
      {.name = "LEAVE, o32, SS.B=0, BP=FFFEh: the pop crosses the limit",
       .rule = "LEAVE: #SS(0) if BP is outside the stack limit; ESP and EBP as they were",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 16,
       .esp = 0x00021234,
       .bytes = {0xC9},
       .regs = {{kEbp, 0x0000FFFE}},
       .fault = kVecStackFault,
       .regs_after = {{kEbp, 0x0000FFFE}}},
      // ---- INT n, INTO, INT3, IRET ----
      {.name = "real mode: INT 21h, SP=0, ESP=00070000h",
       .rule = "INT (real mode): Push(FLAGS); IF := 0; TF := 0; Push(CS); Push(IP); SP wraps",
       .mode = Mode::kReal,
       .code = 16,
       .stack = 16,
       .esp = 0x00070000,
       .bytes = {0xCD, 0x21},
       .eflags = kIF | kCF | 2,
       .deliver = true,
       .esp_after = 0x0007FFFA,
       .after = {{0xFFFE, 2, 0x203}, {0xFFFC, 2, 0x1000}, {0xFFFA, 2, 0x102}},
       .eip_after = kHandler,
       .eflags_after = kCF | 2},
      {.name = "real mode: INT 21h, SP=2: the wrap comes after FLAGS",
       .rule = "INT (real mode): FLAGS at 0000h, CS at FFFEh, IP at FFFCh",
       .mode = Mode::kReal,
       .code = 16,
       .stack = 16,
       .esp = 0x00070002,
       .bytes = {0xCD, 0x21},
       .eflags = kIF | 2,
       .deliver = true,
       .esp_after = 0x0007FFFC,
       .after = {{0x0000, 2, 0x202}, {0xFFFE, 2, 0x1000}, {0xFFFC, 2, 0x102}},
       .eip_after = kHandler},
      {.name = "real mode: IRET, SP=FFFAh",
       .rule = "IRET (real mode): IP, CS, FLAGS := Pop(); SP wraps to 0",
       .mode = Mode::kReal,
       .code = 16,
       .stack = 16,
       .esp = 0x0007FFFA,
       .bytes = {0xCF},
       .before = {{0xFFFA, 2, 0x0300}, {0xFFFC, 2, 0x1000}, {0xFFFE, 2, kCF}},
       .esp_after = 0x00070000,
       .eip_after = 0x300,
       .eflags_after = kCF | 2},
      {.name = "INT 40h through a 32-bit gate at the same level, SS.B=0, ESP=00020000h",
       .rule = "INT to the same level: Push(EFLAGS); Push(CS); Push(EIP) as doublewords on the "
               "current stack; SP wraps, ESP's upper half stays",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 16,
       .esp = 0x00020000,
       .bytes = {0xCD, 0x40},
       .eflags = kIF | kCF | 2,
       .deliver = true,
       .esp_after = 0x0002FFF4,
       .after = {{0xFFFC, 4, 0x203}, {0xFFF8, 4, kCode32}, {0xFFF4, 4, 0x102}},
       .eip_after = kHandler,
       .eflags_after = kCF | 2},
      {.name = "INT 40h through a 16-bit gate at the same level, SS.B=1",
       .rule = "INT through a 16-bit gate: FLAGS, CS, IP pushed as words",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = 0x1000,
       .bytes = {0xCD, 0x40},
       .eflags = kIF | 2,
       .setup = Gate16(0x40),
       .deliver = true,
       .esp_after = 0x0FFA,
       .after = {{0x0FFE, 2, 0x202}, {0x0FFC, 2, kCode32}, {0x0FFA, 2, 0x102}},
       .eip_after = kHandler},
      {.name = "INT 40h from ring 3 (SS.B=0, ESP=00020000h) through a 32-bit gate",
       .rule = "INT to an inner level: the TSS's SS0:ESP0; Push(SS); Push(ESP) (whole); "
               "Push(EFLAGS); Push(CS); Push(EIP)",
       .mode = Mode::kRing3,
       .code = 32,
       .stack = 16,
       .esp = 0x00020000,
       .bytes = {0xCD, 0x40},
       .eflags = kIF | 2,
       .deliver = true,
       .esp_after = kEsp0 - 20,
       .after = InnerFrame32(kStack16R3, 0x00020000, 0x202, kCode32R3, 0x102),
       .eip_after = kHandler,
       .cpl_after = 0},
      {.name = "INT 40h from ring 3 (SS.B=0) through a 16-bit gate",
       .rule = "INT to an inner level through a 16-bit gate: SS, SP, FLAGS, CS, IP as words",
       .mode = Mode::kRing3,
       .code = 32,
       .stack = 16,
       .esp = 0x00021234,
       .bytes = {0xCD, 0x40},
       .eflags = kIF | 2,
       .setup = Gate16(0x40),
       .deliver = true,
       .esp_after = kEsp0 - 10,
       .after = {{kEsp0 - 2, 2, kStack16R3},
                 {kEsp0 - 4, 2, 0x1234},
                 {kEsp0 - 6, 2, 0x202},
                 {kEsp0 - 8, 2, kCode32R3},
                 {kEsp0 - 10, 2, 0x102}},
       .eip_after = kHandler,
       .cpl_after = 0},
      {.name = "INT3 from ring 3 in 16-bit code (SS.B=1) through a 32-bit gate",
       .rule = "INT3: a trap; the EIP after it on the ring 0 stack with SS:ESP",
       .mode = Mode::kRing3,
       .code = 16,
       .stack = 32,
       .esp = 0x1000,
       .bytes = {0xCC},
       .eflags = kIF | 2,
       .deliver = true,
       .esp_after = kEsp0 - 20,
       .after = InnerFrame32(kStack32R3, 0x1000, 0x202, kCode16R3, 0x101),
       .eip_after = kHandler,
       .cpl_after = 0},
      {.name = "INTO with OF set, SS.B=0, ESP=00020000h",
       .rule = "INTO: INT 4 if OF: a trap, the next EIP pushed",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 16,
       .esp = 0x00020000,
       .bytes = {0xCE},
       .eflags = flag::kOF | 2,
       .deliver = true,
       .esp_after = 0x0002FFF4,
       .after = {{0xFFFC, 4, flag::kOF | 2}, {0xFFF8, 4, kCode32}, {0xFFF4, 4, 0x101}},
       .eip_after = kHandler},
      {.name = "#GP(0) from ring 3 (CLI, IOPL 0), SS.B=0: the error code below the frame",
       .rule = "Interrupt and Exception Handling: a fault with an error code pushes SS, ESP, "
               "EFLAGS (RF set, as for every fault), CS, EIP of the faulting instruction, then the "
               "error code",
       .mode = Mode::kRing3,
       .code = 32,
       .stack = 16,
       .esp = 0x00020000,
       .bytes = {0xFA},
       .eflags = kIF | 2,
       .deliver = true,
       .esp_after = kEsp0 - 24,
       .after = With(InnerFrame32(kStack16R3, 0x00020000, flag::kRF | 0x202, kCode32R3, 0x100),
                     {{kEsp0 - 24, 4, 0}}),
       .eip_after = kHandler,
       .cpl_after = 0},
      {.name = "#SS(0) of PUSH AX at SP=1 at ring 3: the frame holds ESP before the PUSH",
       .rule = "#SS is a fault: ESP is restored before the handler's frame records it",
       .mode = Mode::kRing3,
       .code = 16,
       .stack = 16,
       .esp = 0x00030001,
       .bytes = {0x50},
       .eflags = 2,
       .deliver = true,
       .esp_after = kEsp0 - 24,
       .after = With(InnerFrame32(kStack16R3, 0x00030001, flag::kRF | 2, kCode16R3, 0x100),
                     {{kEsp0 - 24, 4, 0}}),
       .eip_after = kHandler,
       .cpl_after = 0},
      {.name = "#SS(0) in the middle of PUSHAD at ring 3 (SS.B=1, ESP=0Ch)",
       .rule = "PUSHAD's #SS is a fault: the frame holds ESP before the PUSHAD",
       .mode = Mode::kRing3,
       .code = 32,
       .stack = 32,
       .esp = 0x0000000C,
       .bytes = {0x60},
       .eflags = 2,
       .deliver = true,
       .esp_after = kEsp0 - 24,
       .after = With(InnerFrame32(kStack32R3, 0x0000000C, flag::kRF | 2, kCode32R3, 0x100),
                     {{kEsp0 - 24, 4, 0}}),
       .eip_after = kHandler,
       .cpl_after = 0},
      {.name = "POP DS fault through a 16-bit gate at the same level: the error code as a word",
       .rule = "Interrupt and Exception Handling: through a 16-bit gate FLAGS, CS, IP and the "
               "error code are words",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = 0x1000,
       .bytes = {0x1F},
       .before = {{0x1000, 4, 0xFFF8}},
       .eflags = 2,
       .setup = Gate16(kVecGeneralProtection),
       .deliver = true,
       .esp_after = 0x0FF8,
       .after = {{0x0FFE, 2, 2}, {0x0FFC, 2, kCode32}, {0x0FFA, 2, 0x100}, {0x0FF8, 2, 0xFFF8}},
       .eip_after = kHandler},
      {.name = "external interrupt at ring 3, SS.B=0, ESP=00020000h",
       .rule = "an external interrupt: no error code; the EIP of the instruction not yet run",
       .mode = Mode::kRing3,
       .code = 32,
       .stack = 16,
       .esp = 0x00020000,
       .bytes = {0x90},
       .eflags = kIF | 2,
       .setup =
           [](Machine& m) {
             m.bus.vector = 0x41;
             m.cpu.SetIntr(true);
           },
       .deliver = true,
       .esp_after = kEsp0 - 20,
       .after = InnerFrame32(kStack16R3, 0x00020000, 0x202, kCode32R3, 0x100),
       .eip_after = kHandler,
       .cpl_after = 0},
      {.name = "V86 mode: INT 21h (IOPL 3), SP=0",
       .rule = "INT from V86 mode: on the ring 0 stack GS, FS, DS, ES, SS, ESP, EFLAGS (VM set), "
               "CS, EIP as doublewords",
       .mode = Mode::kV86,
       .code = 16,
       .stack = 16,
       .esp = 0,
       .bytes = {0xCD, 0x21},
       .eflags = flag::kIOPL | kIF | 2,
       .deliver = true,
       .esp_after = kEsp0 - 36,
       .after = {{kEsp0 - 4, 4, 0},
                 {kEsp0 - 8, 4, 0},
                 {kEsp0 - 12, 4, 0x0900},
                 {kEsp0 - 16, 4, 0x0900},
                 {kEsp0 - 20, 4, 0x2000},
                 {kEsp0 - 24, 4, 0},
                 {kEsp0 - 28, 4, flag::kVM | flag::kIOPL | kIF | 2},
                 {kEsp0 - 32, 4, 0x1000},
                 {kEsp0 - 36, 4, 0x102}},
       .eip_after = kHandler,
       .cpl_after = 0},
      {.name = "IRET, o32, same level, SS.B=0, SP=FFF4h",
       .rule = "IRET: EIP, CS, EFLAGS := Pop(); SP wraps to 0, ESP's upper half stays",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 16,
       .esp = 0x0002FFF4,
       .bytes = {0xCF},
       .before = {{0xFFF4, 4, 0x300}, {0xFFF8, 4, kCode32}, {0xFFFC, 4, kCF | 2}},
       .esp_after = 0x00020000,
       .eip_after = 0x300,
       .eflags_after = kCF | 2},
      {.name = "IRET, o32, SS.B=0, SP=FFFAh: CS's doubleword crosses the limit",
       .rule = "IRET: #SS(0) if the frame is not within the stack limit; nothing changes",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 16,
       .esp = 0x0002FFFA,
       .bytes = {0xCF},
       .fault = kVecStackFault},
      {.name = "IRET to ring 3 with a 32-bit outer stack",
       .rule = "IRET to an outer level: EIP, CS, EFLAGS, ESP, SS := Pop()",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = kEsp0 - 20,
       .bytes = {0xCF},
       .before = InnerFrame32(kStack32R3, 0x00021234, 0x202, kCode32R3, 0x300),
       .esp_after = 0x00021234,
       .eip_after = 0x300,
       .cpl_after = 3},
      {.name = "IRET to ring 3 with a 16-bit outer stack",
       .rule = "IRET to an outer level: SP from the image (the low 16 bits: see the note on ESP's "
               "upper half)",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = kEsp0 - 20,
       .bytes = {0xCF},
       .before = InnerFrame32(kStack16R3, 0x00021234, 0x202, kCode32R3, 0x300),
       .esp_after = 0x1234,
       .esp_mask = 0xFFFF,
       .eip_after = 0x300,
       .cpl_after = 3},

      // ---- a frame that does not fit ----
      {.name = "real mode: PUSH AX at SP=1, delivered",
       .rule = "PUSH, real-address mode: the processor shuts down if SP = 1 (the word at FFFFh "
               "raises #SS, whose FLAGS at FFFFh again cross the limit: #DF, whose FLAGS do too)",
       .mode = Mode::kReal,
       .code = 16,
       .stack = 16,
       .esp = 0x00070001,
       .bytes = {0x50},
       .deliver = true,
       .shutdown = true},
      {.name = "INT 40h at the same level with no room for the frame (SS.B=1, ESP=8)",
       .rule = "INTRA-PRIVILEGE-LEVEL-INTERRUPT: #SS(0) unless the stack has room for the whole "
               "frame (12 bytes through a 32-bit gate): nothing is written. The #SS goes through a "
               "task gate, whose error code lands on the new task's stack",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = 8,
       .bytes = {0xCD, 0x40},
       .before = {{0, 4, 0x5A5A5A5A}, {4, 4, 0x5A5A5A5A}},
       .setup = [](Machine& m) { m.Gate(kVecStackFault, kTss2Sel, 0x85); },
       .deliver = true,
       .esp_after = kTss2Esp - 4,
       .after = {{0, 4, 0x5A5A5A5A}, {4, 4, 0x5A5A5A5A}, {kTss2Esp - 4, 4, 0}},
       .eip_after = kHandler,
       .memory_after = {{kTss + 0x38, 4, 8}, {kTss + 0x20, 4, kEip}},
       .tr_after = kTss2Sel},
      {.name = "INT 40h from ring 3 with no room on the ring 0 stack (ESP0=0Ch)",
       .rule =
           "INTER-PRIVILEGE-LEVEL-INTERRUPT: #SS(new SS selector) unless the new stack has room "
           "for 20 bytes: nothing is written, and the old task's TSS holds the ring 3 ESP",
       .mode = Mode::kRing3,
       .code = 32,
       .stack = 32,
       .esp = 0x1000,
       .bytes = {0xCD, 0x40},
       .before = {{0, 4, 0x5A5A5A5A}, {4, 4, 0x5A5A5A5A}, {8, 4, 0x5A5A5A5A}},
       .setup =
           [](Machine& m) {
             m.Long(kTss + 4, 0x0C);
             m.Gate(kVecStackFault, kTss2Sel, 0x85);
           },
       .deliver = true,
       .esp_after = kTss2Esp - 4,
       .after = {{0, 4, 0x5A5A5A5A},
                 {4, 4, 0x5A5A5A5A},
                 {8, 4, 0x5A5A5A5A},
                 {kTss2Esp - 4, 4, kStack32}},
       .eip_after = kHandler,
       .cpl_after = 0,
       .memory_after = {{kTss + 0x38, 4, 0x1000}, {kTss + 0x20, 4, kEip}},
       .tr_after = kTss2Sel},
      {.name = "INT 40h to a handler past its code segment's limit",
       .rule = "INT: #GP(0) if the gate's offset is outside the code segment's limit, checked "
               "before anything is pushed",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = 0x1000,
       .bytes = {0xCD, 0x40},
       .before = {{0x0FFC, 4, 0x5A5A5A5A}},
       .setup =
           [](Machine& m) {
             m.Long(kIdt + 8 * 0x40, uint32_t{kCode16} << 16 | kHandler);
             m.Long(kIdt + 8 * 0x40 + 4, 0x00010000 | 0x8E00);
             m.Gate(kVecGeneralProtection, kTss2Sel, 0x85);
           },
       .deliver = true,
       .esp_after = kTss2Esp - 4,
       .after = {{0x0FFC, 4, 0x5A5A5A5A}, {kTss2Esp - 4, 4, 0}},
       .eip_after = kHandler,
       .memory_after = {{kTss + 0x38, 4, 0x1000}, {kTss + 0x20, 4, kEip}},
       .tr_after = kTss2Sel},
      {.name = "CALL FAR to the same level, to an offset past the target's limit",
       .rule = "CALL: #GP(0) if the instruction pointer is not within the new code segment's "
               "limit, checked before the return address is pushed",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = 0x1000,
       .bytes = {0x9A, 0x00, 0x00, 0x01, 0x00, kCode16, 0},
       .before = {{0x0FFC, 4, 0x5A5A5A5A}, {0x0FF8, 4, 0x5A5A5A5A}},
       .fault = kVecGeneralProtection,
       .after = {{0x0FFC, 4, 0x5A5A5A5A}, {0x0FF8, 4, 0x5A5A5A5A}}},
      {.name = "external interrupt at ring 0 with no room for the frame (SS.B=1, ESP=8)",
       .rule = "an exception raised while an external event is delivered sets EXT in its error "
               "code: #SS(1), here through a task gate, a doubleword on the new task's stack",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = 8,
       .bytes = {0x90},
       .before = {{0, 4, 0x5A5A5A5A}, {4, 4, 0x5A5A5A5A}},
       .eflags = kIF | 2,
       .setup =
           [](Machine& m) {
             m.bus.vector = 0x41;
             m.cpu.SetIntr(true);
             m.Gate(kVecStackFault, kTss2Sel, 0x85);
           },
       .deliver = true,
       .esp_after = kTss2Esp - 4,
       .after = {{0, 4, 0x5A5A5A5A}, {4, 4, 0x5A5A5A5A}, {kTss2Esp - 4, 4, 1}},
       .eip_after = kHandler,
       .memory_after = {{kTss + 0x38, 4, 8}, {kTss + 0x20, 4, kEip}, {kTss2, 2, kTssSel}},
       .tr_after = kTss2Sel},
      {.name = "external interrupt at ring 3 with no room on the ring 0 stack (ESP0=0Ch)",
       .rule = "#SS(new SS selector + EXT), here through a task gate: the old task's TSS holds the "
               "ring 3 ESP and the EIP of the instruction not yet run",
       .mode = Mode::kRing3,
       .code = 32,
       .stack = 16,
       .esp = 0x00020000,
       .bytes = {0x90},
       .before = {{0, 4, 0x5A5A5A5A}, {4, 4, 0x5A5A5A5A}, {8, 4, 0x5A5A5A5A}},
       .eflags = kIF | 2,
       .setup =
           [](Machine& m) {
             m.bus.vector = 0x41;
             m.cpu.SetIntr(true);
             m.Long(kTss + 4, 0x0C);
             m.Gate(kVecStackFault, kTss2Sel, 0x85);
           },
       .deliver = true,
       .esp_after = kTss2Esp - 4,
       .after = {{0, 4, 0x5A5A5A5A},
                 {4, 4, 0x5A5A5A5A},
                 {8, 4, 0x5A5A5A5A},
                 {kTss2Esp - 4, 4, kStack32 | 1u}},
       .eip_after = kHandler,
       .cpl_after = 0,
       .memory_after = {{kTss + 0x38, 4, 0x00020000}, {kTss + 0x20, 4, kEip}},
       .tr_after = kTss2Sel},

      // ---- task switches ----
      {.name = "#GP(0) from ring 3 through a task gate to a 16-bit TSS",
       .rule = "a task gate to a 16-bit TSS: the error code is pushed as a word on the new task's "
               "stack; a 16-bit TSS loads SP, ESP's upper half stays",
       .mode = Mode::kRing3,
       .code = 32,
       .stack = 32,
       .esp = 0x1000,
       .bytes = {0xFA},
       .before = {{kTss16Sp - 4, 4, 0x5A5A5A5A}},
       .eflags = 2,
       .setup = [](Machine& m) { m.Gate(kVecGeneralProtection, kTss16Sel, 0x85); },
       .deliver = true,
       .esp_after = kTss16Sp - 2,
       .after = {{kTss16Sp - 2, 2, 0}, {kTss16Sp - 4, 2, 0x5A5A}},
       .eip_after = kHandler,
       .cpl_after = 0,
       .memory_after = {{kTss + 0x38, 4, 0x1000}, {kTss + 0x20, 4, kEip}, {kTss16, 2, kTssSel}},
       .tr_after = kTss16Sel},
      {.name = "#GP through a task gate to a 32-bit TSS with a 16-bit stack at SP=0",
       .rule = "the error code is a doubleword (32-bit TSS) pushed with the new stack's SP: it "
               "wraps to FFFCh, ESP's upper half stays",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = 0x1000,
       .bytes = {0x1F},
       .before = {{0x1000, 4, 0xFFF8}},
       .setup =
           [](Machine& m) {
             m.Gate(kVecGeneralProtection, kTss2Sel, 0x85);
             m.Long(kTss2 + 0x38, 0x00030000);
             m.Long(kTss2 + 0x50, kStack16);
           },
       .deliver = true,
       .esp_after = 0x0003FFFC,
       .after = {{0xFFFC, 4, 0xFFF8}},
       .eip_after = kHandler,
       .memory_after = {{kTss + 0x38, 4, 0x1000}},
       .tr_after = kTss2Sel},
      {.name = "CALL FAR to a 32-bit TSS",
       .rule = "a task switch pushes nothing: ESP and the return EIP go to the old TSS, the back "
               "link to the new one, NT is set",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = 0x1000,
       .bytes = {0x9A, 0, 0, 0, 0, kTss2Sel, 0},
       .before = {{0x0FFC, 4, 0x5A5A5A5A}, {0x0FF8, 4, 0x5A5A5A5A}},
       .esp_after = kTss2Esp,
       .after = {{0x0FFC, 4, 0x5A5A5A5A}, {0x0FF8, 4, 0x5A5A5A5A}},
       .eip_after = kHandler,
       .eflags_after = flag::kNT | 2,
       .memory_after = {{kTss + 0x38, 4, 0x1000}, {kTss + 0x20, 4, kEip + 7}, {kTss2, 2, kTssSel}},
       .tr_after = kTss2Sel},
      {.name = "IRET with NT set: back to the task in the back link",
       .rule = "IRET with NT pops nothing: ESP goes to the old TSS, which is no longer busy",
       .mode = Mode::kRing0,
       .code = 32,
       .stack = 32,
       .esp = 0x1000,
       .bytes = {0xCF},
       .eflags = flag::kNT | 2,
       .setup =
           [](Machine& m) {
             m.Long(kTss, kTss2Sel);
             m.bus.Poke(kGdt + kTss2Sel + 5, {0x8B});
           },
       .esp_after = kTss2Esp,
       .eip_after = kHandler,
       .memory_after = {{kTss + 0x38, 4, 0x1000},
                        {kTss + 0x20, 4, kEip + 1},
                        {kTss + 0x24, 4, 2},
                        {kGdt + kTssSel + 5, 1, 0x89}},
       .tr_after = kTss2Sel},
  };
  return rows;
}

class X86Stack : public ::testing::TestWithParam<size_t> {};

TEST_P(X86Stack, AsTheManualSays) {
  const Row& row = Rows()[GetParam()];
  SCOPED_TRACE(std::string(row.name) + " -- " + row.rule);
  Machine m(row);
  const uint32_t esp_before = m.cpu.reg(kEsp);
  m.cpu.Run(1);
  const Exception& e = m.cpu.exception();
  if (row.shutdown) {
    EXPECT_TRUE(e.shutdown) << "no shutdown";
    return;
  }
  EXPECT_FALSE(e.shutdown) << "shutdown";
  if (row.fault >= 0) {
    ASSERT_TRUE(e.pending) << "no fault";
    EXPECT_EQ(e.vector, row.fault);
    EXPECT_EQ(e.error_code, row.error);
    EXPECT_EQ(m.cpu.eip(), kEip);
  } else {
    ASSERT_FALSE(e.pending) << "fault " << int{e.vector} << " (" << e.error_code << ")";
  }
  const uint32_t esp = row.esp_after == kSame ? esp_before : row.esp_after;
  EXPECT_EQ(m.cpu.reg(kEsp) & row.esp_mask, esp & row.esp_mask)
      << std::hex << "ESP " << m.cpu.reg(kEsp);
  for (const Cell& c : row.after) {
    EXPECT_EQ(m.Get(c.offset, c.size), c.value) << std::hex << "at SS:" << c.offset;
  }
  for (const Reg& r : row.regs_after) {
    EXPECT_EQ(m.cpu.reg(r.r), r.value) << "register " << r.r;
  }
  if (row.eip_after != 0) {
    EXPECT_EQ(m.cpu.eip(), row.eip_after);
  }
  if (row.cpl_after >= 0) {
    EXPECT_EQ(m.cpu.cpl(), row.cpl_after);
  }
  if (row.eflags_after != 0) {
    EXPECT_EQ(m.cpu.eflags(), row.eflags_after);
  }
  for (const Word& w : row.memory_after) {
    EXPECT_EQ(m.At(w.address, w.size), w.value) << std::hex << "at " << w.address;
  }
  if (row.tr_after >= 0) {
    EXPECT_EQ(m.cpu.tr().selector, row.tr_after);
  }
  if (row.cr2_after != 0) {
    EXPECT_EQ(m.cpu.cr2(), row.cr2_after);
  }
}

INSTANTIATE_TEST_SUITE_P(Rows, X86Stack, ::testing::Range<size_t>(0, Rows().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           std::string name;
                           for (const char* p = Rows()[info.param].name; *p != '\0'; ++p) {
                             if (std::isalnum(static_cast<unsigned char>(*p))) name += *p;
                           }
                           return std::to_string(info.param) + "_" + name.substr(0, 48);
                         });

}  // namespace
}  // namespace citcat::x86
