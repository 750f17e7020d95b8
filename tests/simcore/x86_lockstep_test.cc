// The i486 core against Unicorn (QEMU's x86 model) in lock step, on seeded random streams of the
// integer instructions the interpreter's first stretch runs, in flat 32-bit code: after every
// instruction EIP, the eight general registers, the flags the instruction defines (its
// undefined flags, from the decoder's table, are left out) and the data memory must agree. A
// division that faults (#DE) must fault on both; the stream then goes on after it.
#include <unicorn/unicorn.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "simcore/ram_bus.h"
#include "simcore/x86/cpu.h"

namespace citcat::x86 {
namespace {

constexpr uint32_t kRam = 0x40000;
constexpr uint32_t kCode = 0x1000;
constexpr uint32_t kData = 0x20000;  // EDI points here; memory operands are [EDI + disp8]
constexpr uint32_t kDataBytes = 0x100;
constexpr uint32_t kStackTop = 0x30000;
constexpr uint32_t kCompared = flag::kOSZAPC | flag::kDF;
constexpr int kDoubleFault = 8;

// Registers a random operand may name: never ESP (the stack) or EDI (the data pointer).
constexpr uint8_t kFree[] = {kEax, kEcx, kEdx, kEbx, kEbp, kEsi};

// Random instruction streams for 32-bit flat code or 16-bit real-mode code. Memory operands are
// [EDI + disp8] ([DI + disp8] in 16-bit code) into the data; the stack and the data are where
// `Layout` puts them.
class Generator {
 public:
  Generator(uint32_t seed, bool code16) : rng_(seed), code16_(code16) {}

  std::vector<uint8_t> Stream(int instructions) {
    code_.clear();
    for (int i = 0; i < instructions; ++i) One();
    return code_;
  }

 private:
  uint32_t Next() { return rng_(); }
  int Pick(int n) { return static_cast<int>(Next() % n); }
  uint8_t Free() { return kFree[Pick(6)]; }
  void Byte(uint32_t b) { code_.push_back(static_cast<uint8_t>(b)); }
  // An immediate of the code's default operand size.
  void ImmDefault(uint32_t v) {
    for (int i = 0; i < (code16_ ? 2 : 4); ++i) Byte(v >> (8 * i));
  }
  // An address in the data, or on the stack, as an offset in the code's terms.
  uint32_t Data(uint32_t offset) const { return code16_ ? offset : kData + offset; }
  uint32_t Stack(uint32_t below_top) const {
    return code16_ ? 0x10000 - below_top : kStackTop - below_top;
  }
  void Imm(int size) {
    const uint32_t v = Next();
    for (int i = 0; i < size; ++i) Byte(v >> (8 * i));
  }
  // A ModRM with `reg` in its reg field: a free register, or [EDI + disp8].
  void Modrm(uint8_t reg, bool byte_rm, bool memory_only = false) {
    if (memory_only || Pick(2)) {
      Byte(0x40 | reg << 3 | (code16_ ? 5 : kEdi));  // [DI + disp8] or [EDI + disp8]
      Byte(Pick(kDataBytes - 4));
    } else {
      Byte(0xC0 | reg << 3 | (byte_rm ? Pick(8) : Free()));
    }
  }
  // A register in a reg field: any byte register, or a free word register.
  uint8_t RegField(bool byte) { return byte ? static_cast<uint8_t>(Pick(8)) : Free(); }

  void One() {
    const bool prefixed = Pick(4) == 0;  // an operand-size prefix: the other size
    if (prefixed) Byte(0x66);
    const int opsize = code16_ != prefixed ? 2 : 4;
    switch (Pick(31)) {
      case 0: {  // ALU r/m, r and r, r/m
        const int alu = Pick(8), dir = Pick(2), byte = Pick(2);
        Byte(alu << 3 | dir << 1 | (byte ? 0 : 1));
        Modrm(RegField(byte), byte);
        break;
      }
      case 1: {  // ALU acc, imm
        const int alu = Pick(8), byte = Pick(2);
        Byte(alu << 3 | 4 | (byte ? 0 : 1));
        Imm(byte ? 1 : opsize);
        break;
      }
      case 2: {  // group 1: r/m, imm
        const int form = Pick(3);
        const bool byte = form == 0;
        Byte(form == 0 ? 0x80 : form == 1 ? 0x81 : 0x83);
        Modrm(static_cast<uint8_t>(Pick(8)), byte);
        Imm(form == 1 ? opsize : 1);
        break;
      }
      case 3:  // INC/DEC r
        Byte((Pick(2) ? 0x40 : 0x48) | Free());
        break;
      case 4: {  // group 3: TEST imm, NOT, NEG, MUL, IMUL, DIV, IDIV
        const int byte = Pick(2);
        int op = Pick(8);
        // Random DIV and IDIV mostly overflow, and a fault ends the stream: keep them rare.
        if (op >= 6 && Pick(8) != 0) op = Pick(6);
        Byte(byte ? 0xF6 : 0xF7);
        Modrm(static_cast<uint8_t>(op == 1 ? 0 : op), byte);
        if (op <= 1) Imm(byte ? 1 : opsize);
        break;
      }
      case 5: {  // shifts and rotates by 1, CL or imm8
        const int form = Pick(3), byte = Pick(2);
        Byte((form == 0 ? 0xD0 : form == 1 ? 0xD2 : 0xC0) | (byte ? 0 : 1));
        Modrm(static_cast<uint8_t>(Pick(8)), byte);
        if (form == 2) Byte(Pick(40));
        break;
      }
      case 6: {  // MOV r/m, r and r, r/m
        const int dir = Pick(2), byte = Pick(2);
        Byte(0x88 | dir << 1 | (byte ? 0 : 1));
        Modrm(RegField(byte), byte);
        break;
      }
      case 7: {  // MOV r, imm and r/m, imm
        const int byte = Pick(2);
        if (Pick(2)) {
          Byte((byte ? 0xB0 : 0xB8) | (byte ? Pick(8) : Free()));
        } else {
          Byte(byte ? 0xC6 : 0xC7);
          Modrm(0, byte);
        }
        Imm(byte ? 1 : opsize);
        break;
      }
      case 8: {  // MOVZX, MOVSX
        Byte(0x0F);
        const int from_word = Pick(2);
        Byte((Pick(2) ? 0xB6 : 0xBE) | from_word);
        Modrm(Free(), !from_word);
        break;
      }
      case 9:  // LEA
        Byte(0x8D);
        Modrm(Free(), false, true);
        break;
      case 10: {  // XCHG
        if (Pick(2)) {
          Byte(0x90 | Free());
        } else {
          const int byte = Pick(2);
          Byte(byte ? 0x86 : 0x87);
          Modrm(RegField(byte), byte);
        }
        break;
      }
      case 11:  // SETcc
        Byte(0x0F);
        Byte(0x90 | Pick(16));
        Modrm(0, true);
        break;
      case 12: {  // IMUL r, r/m [, imm]
        const int form = Pick(3);
        if (form == 0) {
          Byte(0x0F);
          Byte(0xAF);
          Modrm(Free(), false);
        } else {
          Byte(form == 1 ? 0x69 : 0x6B);
          Modrm(Free(), false);
          Imm(form == 1 ? opsize : 1);
        }
        break;
      }
      case 13:  // CBW/CWDE, CWD/CDQ, CLC, STC, CMC, LAHF, SAHF
        Byte(std::vector<uint8_t>{0x98, 0x99, 0xF8, 0xF9, 0xF5, 0x9F, 0x9E}[Pick(7)]);
        break;
      case 14:  // PUSH r; POP r
        Byte(0x50 | Free());
        if (prefixed) Byte(0x66);
        Byte(0x58 | Free());
        break;
      case 15:  // BSWAP (32-bit only)
        if (opsize == 4) {
          Byte(0x0F);
          Byte(0xC8 | Free());
        } else {
          Byte(0x90);
        }
        break;
      case 16: {  // XADD, CMPXCHG
        const int byte = Pick(2);
        Byte(0x0F);
        Byte((Pick(2) ? 0xC0 : 0xB0) | (byte ? 0 : 1));
        Modrm(RegField(byte), byte);
        break;
      }
      case 17:  // Jcc over a two-byte XOR (taken or not), in 32-bit form
        if (prefixed) code_.pop_back();
        Byte(0x70 | Pick(16));
        Byte(2);
        Byte(0x31);
        Byte(0xC0 | Free() << 3 | Free());
        break;
      case 18: {  // INC/DEC/PUSH-POP through group 5 and 4 on memory
        const int byte = Pick(2);
        Byte(byte ? 0xFE : 0xFF);
        Modrm(static_cast<uint8_t>(Pick(2)), byte, true);
        break;
      }
      case 20: {  // BT, BTS, BTR, BTC: register offsets on registers, immediates anywhere
        Byte(0x0F);
        if (Pick(2)) {
          Byte(0xA3 | Pick(4) << 3);
          Byte(0xC0 | Free() << 3 | Free());
        } else {
          Byte(0xBA);
          Modrm(static_cast<uint8_t>(4 + Pick(4)), false);
          Byte(Pick(256));
        }
        break;
      }
      case 21:  // BSF, BSR
        Byte(0x0F);
        Byte(0xBC | Pick(2));
        Modrm(Free(), false);
        break;
      case 22: {  // SHLD, SHRD by imm8 or CL
        const int by_cl = Pick(2);
        Byte(0x0F);
        Byte((Pick(2) ? 0xA4 : 0xAC) | by_cl);
        Modrm(Free(), false);
        if (!by_cl) Byte(Pick(32));
        break;
      }
      case 23: {  // DAA, DAS, AAA, AAS, AAM, AAD, SALC
        if (prefixed) code_.pop_back();
        const int op = Pick(7);
        if (op < 4) {
          Byte(std::vector<uint8_t>{0x27, 0x2F, 0x37, 0x3F}[op]);
        } else if (op < 6) {
          Byte(op == 4 ? 0xD4 : 0xD5);
          Byte(Pick(8) ? 10 : Pick(256));
        } else {
          Byte(0xD6);
        }
        break;
      }
      case 24:  // MOV EBX, data; XLAT
        if (prefixed) code_.pop_back();
        Byte(0xBB);
        ImmDefault(Data(0));
        Byte(0xD7);
        break;
      case 25:  // PUSHA; POPA, PUSHF; POPF, PUSH imm; POPF
        switch (Pick(3)) {
          case 0:
            Byte(0x60);
            if (prefixed) Byte(0x66);
            Byte(0x61);
            break;
          case 1:
            Byte(0x9C);
            if (prefixed) Byte(0x66);
            Byte(0x9D);
            break;
          default:
            if (prefixed) code_.pop_back();
            Byte(0x68);
            ImmDefault((Next() & (flag::kOSZAPC | flag::kDF)) | 2);
            Byte(0x9D);
            break;
        }
        break;
      case 26: {  // MOV EBP, stack; ENTER frame, level; LEAVE
        if (prefixed) code_.pop_back();
        Byte(0xBD);
        ImmDefault(Stack(0x100));
        Byte(0xC8);
        Byte(Pick(64));
        Byte(0);
        Byte(Pick(4));
        Byte(0xC9);
        break;
      }
      case 27: {  // a string instruction, REP/REPE/REPNE or not, over the data
        if (prefixed) code_.pop_back();
        Byte(0xBE);
        ImmDefault(Data(0x40 + Pick(0x40)));
        Byte(0xBF);
        ImmDefault(Data(0x40 + Pick(0x40)));
        Byte(0xB9);
        ImmDefault(Pick(9));
        Byte(Pick(2) ? 0xFC : 0xFD);  // CLD or STD
        const int rep = Pick(3);
        if (rep) Byte(rep == 1 ? 0xF3 : 0xF2);
        if (Pick(4) == 0) Byte(0x66);
        Byte(std::vector<uint8_t>{0xA4, 0xA5, 0xA6, 0xA7, 0xAA, 0xAB, 0xAC, 0xAD, 0xAE,
                                  0xAF}[Pick(10)]);
        Byte(0xBF);  // EDI back to the data
        ImmDefault(Data(0));
        break;
      }
      case 29:  // segment registers, real mode only: ES from DS and back, LES then ES back
        if (!code16_) {
          Byte(0x90);
          break;
        }
        if (prefixed) code_.pop_back();
        switch (Pick(3)) {
          case 0:
            Byte(0x1E);  // PUSH DS
            Byte(0x07);  // POP ES
            break;
          case 1: {
            const uint8_t r = Free();
            Byte(0x8C);
            Byte(0xC0 | r);  // MOV r, ES
            Byte(0x8E);
            Byte(0xC0 | r);  // MOV ES, r
            break;
          }
          default:
            Byte(0xC4);  // LES r, [DI + disp8]
            Modrm(Free(), false, true);
            Byte(0x1E);
            Byte(0x07);
            break;
        }
        break;
      case 28:  // INTO (a trap when OF is set: it ends the stream)
        if (prefixed) code_.pop_back();
        Byte(0xCE);
        break;
      case 30:
      default: {  // TEST r/m, r
        const int byte = Pick(2);
        Byte(byte ? 0x84 : 0x85);
        Modrm(RegField(byte), byte);
        break;
      }
    }
  }

  std::mt19937 rng_;
  const bool code16_;
  std::vector<uint8_t> code_;
};

constexpr uc_x86_reg kUcGpr[8] = {UC_X86_REG_EAX, UC_X86_REG_ECX, UC_X86_REG_EDX, UC_X86_REG_EBX,
                                  UC_X86_REG_ESP, UC_X86_REG_EBP, UC_X86_REG_ESI, UC_X86_REG_EDI};

struct Unicorn {
  explicit Unicorn(bool code16 = false) {
    EXPECT_EQ(uc_open(UC_ARCH_X86, code16 ? UC_MODE_16 : UC_MODE_32, &uc), UC_ERR_OK);
    EXPECT_EQ(uc_mem_map(uc, 0, kRam, UC_PROT_ALL), UC_ERR_OK);
    uc_hook hook;
    uc_hook_add(uc, &hook, UC_HOOK_INTR, reinterpret_cast<void*>(&OnInterrupt), this, 1, 0);
  }
  ~Unicorn() { uc_close(uc); }
  static void OnInterrupt(uc_engine* engine, uint32_t number, void* self) {
    static_cast<Unicorn*>(self)->interrupt = static_cast<int>(number);
    uc_emu_stop(engine);
  }
  uint32_t Reg(uc_x86_reg r) const {
    uint32_t v = 0;
    uc_reg_read(uc, r, &v);
    return v;
  }
  void SetReg(uc_x86_reg r, uint32_t v) { uc_reg_write(uc, r, &v); }

  uc_engine* uc = nullptr;
  int interrupt = -1;
};

// Runs one stream on both; returns the first difference ("" if none) and counts instructions.
// Real-mode layout: code at CS = 0, the data at DS = ES = FS = GS = kData / 16 with DI = 0, the
// stack at SS = kStackTop / 16 - 0x1000, SP = 0xFFF0.
constexpr uint16_t kRealDs = kData >> 4, kRealSs = (kStackTop >> 4) - 0x1000;

std::string RunStream(uint32_t seed, int length, bool code16, uint64_t* compared) {
  Generator gen(seed, code16);
  const std::vector<uint8_t> code = gen.Stream(length);
  std::mt19937 rng(seed * 7919 + 1);

  simcore::RamBus bus(kRam);
  Cpu cpu(bus);
  Unicorn u(code16);
  if (code16) {
    cpu.SetReal(0, kRealDs, kRealSs);
    for (uc_x86_reg r : {UC_X86_REG_DS, UC_X86_REG_ES, UC_X86_REG_FS, UC_X86_REG_GS}) {
      u.SetReg(r, kRealDs);
    }
    u.SetReg(UC_X86_REG_SS, kRealSs);
    u.SetReg(UC_X86_REG_CS, 0);
  } else {
    cpu.SetFlat32();
  }
  std::vector<uint8_t> data(kDataBytes);
  for (uint8_t& b : data) b = static_cast<uint8_t>(rng());
  bus.Poke(kCode, code);
  bus.Poke(kData, data);
  uc_mem_write(u.uc, kCode, code.data(), code.size());
  uc_mem_write(u.uc, kData, data.data(), data.size());
  for (int r = 0; r < 8; ++r) {
    const uint32_t stack = code16 ? 0xFFF0 : kStackTop, data_base = code16 ? 0 : kData;
    const uint32_t v = r == kEsp ? stack : r == kEdi ? data_base : static_cast<uint32_t>(rng());
    cpu.set_reg(r, v);
    u.SetReg(kUcGpr[r], v);
  }
  const uint32_t flags = (rng() & flag::kOSZAPC) | 2;
  cpu.set_eflags(flags);
  u.SetReg(UC_X86_REG_EFLAGS, flags);
  cpu.set_eip(kCode);
  const uint32_t end = kCode + static_cast<uint32_t>(code.size());

  std::vector<uint8_t> theirs(kDataBytes);
  while (cpu.eip() != end) {
    const uint32_t eip = cpu.eip();
    uint8_t bytes[kMaxInstructionLength] = {};
    std::memcpy(bytes, &bus.ram()[eip], std::min<size_t>(sizeof bytes, end - eip));
    const Instruction in = Decode(bytes, sizeof bytes, !code16);
    const uint32_t mask = kCompared & ~FlagsUndefined(in);
    const std::string where =
        absl::StrFormat("seed %d, EIP %#x, %s (%s)", seed, eip, Mnemonic(in.op),
                        absl::StrFormat("%d bytes", in.length));
    u.interrupt = -1;
    const uint64_t retired = cpu.retired();
    if (Facts(in.op).attrs & attr::kString) {
      // A REP string instruction runs one iteration per step, on both (an `until` address would
      // make Unicorn flush its translations every time).
      for (int i = 0; i < 100 && u.interrupt < 0 && (i == 0 || u.Reg(UC_X86_REG_EIP) == eip); ++i) {
        uc_emu_start(u.uc, eip, 0xFFFFFFFF, 0, 1);
      }
      while (cpu.retired() == retired && !cpu.exception().pending) cpu.Run(1);
    } else {
      uc_emu_start(u.uc, eip, 0xFFFFFFFF, 0, 1);
      cpu.Run(1);
    }
    bool faulted = false;
    if (cpu.exception().pending) {
      if (cpu.exception().unmodelled) return where + ": not modelled";
      if (cpu.exception().trap && u.interrupt < 0) return where + ": Unicorn took no trap";
      if (u.interrupt != cpu.exception().vector) {
        return absl::StrFormat("%s: the core raised vector %d, Unicorn %d", where,
                               cpu.exception().vector, u.interrupt);
      }
      // Both faulted. Unicorn reports every later fault as a double fault (see
      // UnicornReportsTheSecondFaultAsADoubleFault), so the stream ends here once the state is
      // compared.
      faulted = true;
    } else if (u.interrupt >= 0) {
      return absl::StrFormat("%s: Unicorn raised vector %d, the core none", where, u.interrupt);
    }
    ++*compared;
    if (!faulted && cpu.eip() != u.Reg(UC_X86_REG_EIP)) {
      return absl::StrFormat("%s: EIP %#x, Unicorn %#x", where, cpu.eip(), u.Reg(UC_X86_REG_EIP));
    }
    for (int r = 0; r < 8; ++r) {
      if (cpu.reg(r) != u.Reg(kUcGpr[r])) {
        return absl::StrFormat("%s: register %d is %#x, Unicorn %#x", where, r, cpu.reg(r),
                               u.Reg(kUcGpr[r]));
      }
    }
    const uint32_t ours = cpu.eflags() & mask, their = u.Reg(UC_X86_REG_EFLAGS) & mask;
    if (ours != their) {
      return absl::StrFormat("%s: EFLAGS %#x, Unicorn %#x (compared bits %#x)", where, ours, their,
                             mask);
    }
    uc_mem_read(u.uc, kData, theirs.data(), theirs.size());
    if (std::memcmp(theirs.data(), &bus.ram()[kData], kDataBytes) != 0) {
      return where + ": data memory differs";
    }
    if (faulted) break;
    // The core's own undefined flags become Unicorn's, so later instructions start equal.
    u.SetReg(UC_X86_REG_EFLAGS, cpu.eflags());
  }
  return "";
}

// The Unicorn defect the lock step works around, shown on its own: it never delivers a fault, so
// after one, every later fault comes back to the interrupt hook as a double fault.
TEST(X86Lockstep, UnicornReportsTheSecondFaultAsADoubleFault) {
  Unicorn u;
  const uint8_t div_ecx[] = {0xF7, 0xF1};  // DIV ECX with ECX = 0
  uc_mem_write(u.uc, kCode, div_ecx, sizeof div_ecx);
  u.SetReg(UC_X86_REG_ECX, 0);
  u.SetReg(UC_X86_REG_ESP, kStackTop);
  uc_emu_start(u.uc, kCode, 0xFFFFFFFF, 0, 1);
  EXPECT_EQ(u.interrupt, kVecDivide);
  u.interrupt = -1;
  uc_emu_start(u.uc, kCode, 0xFFFFFFFF, 0, 1);
  EXPECT_EQ(u.interrupt, kDoubleFault);

  simcore::RamBus bus(kRam);
  Cpu cpu(bus);
  cpu.SetFlat32();
  bus.Poke(kCode, div_ecx);
  cpu.set_eip(kCode);
  cpu.Run(1);
  EXPECT_TRUE(cpu.exception().pending);
  EXPECT_EQ(cpu.exception().vector, kVecDivide);
  EXPECT_EQ(cpu.eip(), kCode);  // the fault is restartable: nothing retired
  EXPECT_EQ(cpu.retired(), 0u);
}

TEST(X86Lockstep, RandomIntegerStreamsAgreeWithUnicorn) {
  uint64_t compared = 0;
  for (uint32_t seed = 1; seed <= 1000; ++seed) {
    const std::string diff = RunStream(seed, 300, /*code16=*/false, &compared);
    ASSERT_EQ(diff, "");
  }
  EXPECT_GT(compared, 200000u);
  RecordProperty("instructions_compared", static_cast<int>(compared));
  std::printf("%llu instructions compared\n", static_cast<unsigned long long>(compared));
}

TEST(X86Lockstep, RandomRealModeStreamsAgreeWithUnicorn) {
  uint64_t compared = 0;
  for (uint32_t seed = 1; seed <= 500; ++seed) {
    const std::string diff = RunStream(seed, 300, /*code16=*/true, &compared);
    ASSERT_EQ(diff, "");
  }
  EXPECT_GT(compared, 100000u);
  std::printf("%llu instructions compared\n", static_cast<unsigned long long>(compared));
}

}  // namespace
}  // namespace citcat::x86
