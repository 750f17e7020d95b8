// A tiny MIPS instruction encoder for hand-written test programs.
#ifndef CITCAT_TESTS_SIMCORE_MIPS_ASM_H_
#define CITCAT_TESTS_SIMCORE_MIPS_ASM_H_

#include <cstdint>

namespace citcat::mips::as {

constexpr uint32_t R(uint32_t funct, uint32_t rs, uint32_t rt, uint32_t rd, uint32_t sa = 0) {
  return (rs << 21) | (rt << 16) | (rd << 11) | (sa << 6) | funct;
}
constexpr uint32_t I(uint32_t op, uint32_t rs, uint32_t rt, int32_t imm) {
  return (op << 26) | (rs << 21) | (rt << 16) | (static_cast<uint32_t>(imm) & 0xFFFF);
}

// SPECIAL
constexpr uint32_t Sll(int rd, int rt, int sa) { return R(0x00, 0, rt, rd, sa); }
constexpr uint32_t Nop() { return 0; }
constexpr uint32_t Srl(int rd, int rt, int sa) { return R(0x02, 0, rt, rd, sa); }
constexpr uint32_t Sra(int rd, int rt, int sa) { return R(0x03, 0, rt, rd, sa); }
constexpr uint32_t Jr(int rs) { return R(0x08, rs, 0, 0); }
constexpr uint32_t Jalr(int rd, int rs) { return R(0x09, rs, 0, rd); }
constexpr uint32_t Syscall() { return 0x0C; }
constexpr uint32_t Break() { return 0x0D; }
constexpr uint32_t Sync() { return 0x0F; }
constexpr uint32_t Mfhi(int rd) { return R(0x10, 0, 0, rd); }
constexpr uint32_t Mflo(int rd) { return R(0x12, 0, 0, rd); }
constexpr uint32_t Mult(int rs, int rt) { return R(0x18, rs, rt, 0); }
constexpr uint32_t Multu(int rs, int rt) { return R(0x19, rs, rt, 0); }
constexpr uint32_t Div(int rs, int rt) { return R(0x1A, rs, rt, 0); }
constexpr uint32_t Divu(int rs, int rt) { return R(0x1B, rs, rt, 0); }
constexpr uint32_t Dmult(int rs, int rt) { return R(0x1C, rs, rt, 0); }
constexpr uint32_t Dmultu(int rs, int rt) { return R(0x1D, rs, rt, 0); }
constexpr uint32_t Ddiv(int rs, int rt) { return R(0x1E, rs, rt, 0); }
constexpr uint32_t Ddivu(int rs, int rt) { return R(0x1F, rs, rt, 0); }
constexpr uint32_t Add(int rd, int rs, int rt) { return R(0x20, rs, rt, rd); }
constexpr uint32_t Addu(int rd, int rs, int rt) { return R(0x21, rs, rt, rd); }
constexpr uint32_t Sub(int rd, int rs, int rt) { return R(0x22, rs, rt, rd); }
constexpr uint32_t Subu(int rd, int rs, int rt) { return R(0x23, rs, rt, rd); }
constexpr uint32_t And(int rd, int rs, int rt) { return R(0x24, rs, rt, rd); }
constexpr uint32_t Or(int rd, int rs, int rt) { return R(0x25, rs, rt, rd); }
constexpr uint32_t Nor(int rd, int rs, int rt) { return R(0x27, rs, rt, rd); }
constexpr uint32_t Sltu(int rd, int rs, int rt) { return R(0x2B, rs, rt, rd); }
constexpr uint32_t Xor(int rd, int rs, int rt) { return R(0x26, rs, rt, rd); }
constexpr uint32_t Dadd(int rd, int rs, int rt) { return R(0x2C, rs, rt, rd); }
constexpr uint32_t Daddu(int rd, int rs, int rt) { return R(0x2D, rs, rt, rd); }
constexpr uint32_t Dsub(int rd, int rs, int rt) { return R(0x2E, rs, rt, rd); }
constexpr uint32_t Dsubu(int rd, int rs, int rt) { return R(0x2F, rs, rt, rd); }
constexpr uint32_t Tge(int rs, int rt) { return R(0x30, rs, rt, 0); }
constexpr uint32_t Tgeu(int rs, int rt) { return R(0x31, rs, rt, 0); }
constexpr uint32_t Tlt(int rs, int rt) { return R(0x32, rs, rt, 0); }
constexpr uint32_t Tltu(int rs, int rt) { return R(0x33, rs, rt, 0); }
constexpr uint32_t Teq(int rs, int rt) { return R(0x34, rs, rt, 0); }
constexpr uint32_t Tne(int rs, int rt) { return R(0x36, rs, rt, 0); }
constexpr uint32_t Dsll(int rd, int rt, int sa) { return R(0x38, 0, rt, rd, sa); }
constexpr uint32_t Dsrl(int rd, int rt, int sa) { return R(0x3A, 0, rt, rd, sa); }
constexpr uint32_t Dsra(int rd, int rt, int sa) { return R(0x3B, 0, rt, rd, sa); }
constexpr uint32_t Dsll32(int rd, int rt, int sa) { return R(0x3C, 0, rt, rd, sa); }
constexpr uint32_t Dsrl32(int rd, int rt, int sa) { return R(0x3E, 0, rt, rd, sa); }
constexpr uint32_t Dsra32(int rd, int rt, int sa) { return R(0x3F, 0, rt, rd, sa); }
// REGIMM
constexpr uint32_t Bltz(int rs, int off) { return I(0x01, rs, 0x00, off); }
constexpr uint32_t Bgez(int rs, int off) { return I(0x01, rs, 0x01, off); }
constexpr uint32_t Bltzl(int rs, int off) { return I(0x01, rs, 0x02, off); }
constexpr uint32_t Bgezal(int rs, int off) { return I(0x01, rs, 0x11, off); }
constexpr uint32_t Bgezl(int rs, int off) { return I(0x01, rs, 0x03, off); }
constexpr uint32_t Tgei(int rs, int imm) { return I(0x01, rs, 0x08, imm); }
constexpr uint32_t Tlti(int rs, int imm) { return I(0x01, rs, 0x0A, imm); }
constexpr uint32_t Teqi(int rs, int imm) { return I(0x01, rs, 0x0C, imm); }
constexpr uint32_t Tnei(int rs, int imm) { return I(0x01, rs, 0x0E, imm); }
// Others
constexpr uint32_t J(uint32_t target) { return (0x02u << 26) | ((target >> 2) & 0x03FFFFFF); }
constexpr uint32_t Jal(uint32_t target) { return (0x03u << 26) | ((target >> 2) & 0x03FFFFFF); }
constexpr uint32_t Beq(int rs, int rt, int off) { return I(0x04, rs, rt, off); }
constexpr uint32_t Bne(int rs, int rt, int off) { return I(0x05, rs, rt, off); }
constexpr uint32_t Blez(int rs, int off) { return I(0x06, rs, 0, off); }
constexpr uint32_t Addi(int rt, int rs, int imm) { return I(0x08, rs, rt, imm); }
constexpr uint32_t Addiu(int rt, int rs, int imm) { return I(0x09, rs, rt, imm); }
constexpr uint32_t Slti(int rt, int rs, int imm) { return I(0x0A, rs, rt, imm); }
constexpr uint32_t Sltiu(int rt, int rs, int imm) { return I(0x0B, rs, rt, imm); }
constexpr uint32_t Andi(int rt, int rs, int imm) { return I(0x0C, rs, rt, imm); }
constexpr uint32_t Ori(int rt, int rs, int imm) { return I(0x0D, rs, rt, imm); }
constexpr uint32_t Lui(int rt, int imm) { return I(0x0F, 0, rt, imm); }
constexpr uint32_t Mfc0(int rt, int rd) {
  return (0x10u << 26) | (0u << 21) | (rt << 16) | (rd << 11);
}
constexpr uint32_t Dmfc0(int rt, int rd) {
  return (0x10u << 26) | (1u << 21) | (rt << 16) | (rd << 11);
}
constexpr uint32_t Mtc0(int rt, int rd) {
  return (0x10u << 26) | (4u << 21) | (rt << 16) | (rd << 11);
}
constexpr uint32_t Dmtc0(int rt, int rd) {
  return (0x10u << 26) | (5u << 21) | (rt << 16) | (rd << 11);
}
constexpr uint32_t Tlbr() { return 0x42000001; }
constexpr uint32_t Tlbwi() { return 0x42000002; }
constexpr uint32_t Tlbwr() { return 0x42000006; }
constexpr uint32_t Tlbp() { return 0x42000008; }
constexpr uint32_t Eret() { return 0x42000018; }
constexpr uint32_t Mfc1(int rt, int fs) {
  return (0x11u << 26) | (0u << 21) | (rt << 16) | (fs << 11);
}
constexpr uint32_t Mtc1(int rt, int fs) {
  return (0x11u << 26) | (4u << 21) | (rt << 16) | (fs << 11);
}
constexpr uint32_t Beql(int rs, int rt, int off) { return I(0x14, rs, rt, off); }
constexpr uint32_t Bnel(int rs, int rt, int off) { return I(0x15, rs, rt, off); }
constexpr uint32_t Daddi(int rt, int rs, int imm) { return I(0x18, rs, rt, imm); }
constexpr uint32_t Daddiu(int rt, int rs, int imm) { return I(0x19, rs, rt, imm); }
constexpr uint32_t Ldl(int rt, int off, int base) { return I(0x1A, base, rt, off); }
constexpr uint32_t Ldr(int rt, int off, int base) { return I(0x1B, base, rt, off); }
constexpr uint32_t Lb(int rt, int off, int base) { return I(0x20, base, rt, off); }
constexpr uint32_t Lh(int rt, int off, int base) { return I(0x21, base, rt, off); }
constexpr uint32_t Lwl(int rt, int off, int base) { return I(0x22, base, rt, off); }
constexpr uint32_t Lw(int rt, int off, int base) { return I(0x23, base, rt, off); }
constexpr uint32_t Lbu(int rt, int off, int base) { return I(0x24, base, rt, off); }
constexpr uint32_t Lhu(int rt, int off, int base) { return I(0x25, base, rt, off); }
constexpr uint32_t Lwr(int rt, int off, int base) { return I(0x26, base, rt, off); }
constexpr uint32_t Lwu(int rt, int off, int base) { return I(0x27, base, rt, off); }
constexpr uint32_t Sb(int rt, int off, int base) { return I(0x28, base, rt, off); }
constexpr uint32_t Sh(int rt, int off, int base) { return I(0x29, base, rt, off); }
constexpr uint32_t Swl(int rt, int off, int base) { return I(0x2A, base, rt, off); }
constexpr uint32_t Sw(int rt, int off, int base) { return I(0x2B, base, rt, off); }
constexpr uint32_t Sdl(int rt, int off, int base) { return I(0x2C, base, rt, off); }
constexpr uint32_t Sdr(int rt, int off, int base) { return I(0x2D, base, rt, off); }
constexpr uint32_t Swr(int rt, int off, int base) { return I(0x2E, base, rt, off); }
constexpr uint32_t Cache(int op, int off, int base) { return I(0x2F, base, op, off); }
constexpr uint32_t Ll(int rt, int off, int base) { return I(0x30, base, rt, off); }
constexpr uint32_t Ld(int rt, int off, int base) { return I(0x37, base, rt, off); }
constexpr uint32_t Sc(int rt, int off, int base) { return I(0x38, base, rt, off); }
constexpr uint32_t Sd(int rt, int off, int base) { return I(0x3F, base, rt, off); }

}  // namespace citcat::mips::as

#endif  // CITCAT_TESTS_SIMCORE_MIPS_ASM_H_
