#include "tests/simcore/x86_random_stream.h"

namespace citcat::x86::testing {

void Generator::One() {
  const int kind = Pick(31);
  // A double shift by CL gets CL first, so counts above 16 for 16-bit operands come often
  // (undefined on the i486; the core shifts as QEMU does).
  shift_by_cl = kind == 22 && Pick(2);
  if (shift_by_cl) {
    Byte(0xB1);  // MOV CL, imm8
    Byte(Pick(256));
  }
  // Prefixes, in this order: a segment override one time in eight; an address-size prefix one
  // time in eight (a memory operand then takes the other addressing form); LOCK one time in
  // four on the kinds with lockable forms; last, an operand-size prefix one time in four (the
  // kinds that must not have it take it off again).
  // (Flat code takes no CS override: a write through CS raises #GP, which Unicorn does not
  // check; see docs/machines/i486-core.md, "Checks".)
  if (Pick(8) == 0) {
    Byte(std::vector<uint8_t>{0x26, 0x2E, 0x36, 0x3E, 0x64, 0x65}[Pick(code16_ ? 6 : 5)]);
    if (!code16_ && code_.back() == 0x2E) code_.back() = 0x65;
  }
  addr_flip_ = Pick(8) == 0;
  if (addr_flip_) Byte(0x67);
  lock_ = (kind == 0 || kind == 16 || kind == 18) && Pick(4) == 0;
  if (lock_) Byte(0xF0);
  const bool prefixed = Pick(4) == 0;  // an operand-size prefix: the other size
  if (prefixed) Byte(0x66);
  const int opsize = code16_ != prefixed ? 2 : 4;
  switch (kind) {
    case 0: {  // ALU r/m, r and r, r/m
      // LOCK needs a memory destination and not CMP (Unicorn accepts a register destination:
      // see UnicornAcceptsLockOnARegister).
      const int byte = Pick(2), alu = lock_ ? Pick(7) : Pick(8), dir = lock_ ? 0 : Pick(2);
      Byte(alu << 3 | dir << 1 | (byte ? 0 : 1));
      Modrm(RegField(byte), byte, lock_);
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
      Modrm(RegField(byte), byte, lock_);
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
    case 22: {  // SHLD, SHRD by imm8 or CL (set before the prefixes)
      Byte(0x0F);
      Byte((Pick(2) ? 0xA4 : 0xAC) | shift_by_cl);
      Modrm(Free(), false);
      if (!shift_by_cl) Byte(Pick(32));
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

std::vector<uint8_t> LoopedStream(uint32_t seed, int length, bool code16) {
  Generator gen(seed, code16);
  std::vector<uint8_t> code = gen.Stream(length);
  const uint32_t counter = code16 ? kCounter - kData : kCounter;
  code.insert(code.end(), {0xFF, static_cast<uint8_t>(code16 ? 0x0E : 0x0D)});
  for (int i = 0; i < (code16 ? 2 : 4); ++i) code.push_back(static_cast<uint8_t>(counter >> 8 * i));
  const int32_t back = -static_cast<int32_t>(code.size() + (code16 ? 4 : 6));
  code.insert(code.end(), {0x0F, 0x85});
  for (int i = 0; i < (code16 ? 2 : 4); ++i) code.push_back(static_cast<uint8_t>(back >> 8 * i));
  return code;
}

}  // namespace citcat::x86::testing
