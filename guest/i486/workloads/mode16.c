/* mode16: 16-bit protected-mode code at ring 3. The kernel's GDT has a 16-bit code segment for
   every task (selector 33h: base 40000000h, where programs are linked, limit FFFFh, DPL 3); the
   task far-calls a routine of its own text (section .text16, assembled with .code16) through it
   and the routine comes back with a 32-bit far return. The routine runs with 16-bit operands and
   addresses by default: 16-bit arithmetic, MUL and rotates, 16-bit near CALL/RET and PUSH/POP on
   the 32-bit stack, and operand- and address-size prefixes for its 32-bit registers and for the
   data it reads through ESI. Timer interrupts land inside it and return to it.

   The host cannot run 16-bit code: the known answer comes from a C model of the routine
   (`model`), written from the instructions' definitions. */
#include "workload.h"

#ifndef CITCAT_HOST
#include "expected_i486.h"
#endif

#define WORDS 1200
#define CALLS 80

static uint16_t data[WORDS + CALLS];

struct result {
  uint32_t eax, ebx, edi;
};

#ifdef CITCAT_HOST
static uint16_t rol16(uint16_t v, int n) { return (uint16_t)(v << n | v >> (16 - n)); }
static uint32_t rol32(uint32_t v, int n) { return v << n | v >> (32 - n); }

/* What the 16-bit routine below computes. */
static struct result run16(const uint16_t* p, uint32_t n) {
  uint16_t ax = 0, bx = 0x1234;
  uint32_t edi = 0;
  for (uint32_t i = 0; i < n; ++i) {
    ax = rol16((uint16_t)(ax + p[i]), 3);
    bx ^= ax;
    const uint32_t product = (uint32_t)ax * 0x9E37u;
    ax = (uint16_t)(product ^ product >> 16);
    edi = rol32(edi + ax, 5);
  }
  return (struct result){ax, bx, edi};
}
#else
/* In: ESI = the words (a flat address), ECX = their number (1 .. FFFFh). Out: EAX (AX, upper
   half zero), EBX (BX, upper half zero), EDI. BP and DX kept; ECX and ESI changed. */
__asm__(
    ".pushsection .text16, \"ax\", @progbits\n"
    ".code16\n"
    "mode16_entry:\n"
    "  pushw %bp\n"
    "  movw  %cx, %bp\n"
    "  xorl  %eax, %eax\n"
    "  movl  $0x1234, %ebx\n"
    "  xorl  %edi, %edi\n"
    "1:\n"
    "  movw  (%esi), %dx\n" /* 67h: a 32-bit address */
    "  addw  %dx, %ax\n"
    "  rolw  $3, %ax\n"
    "  xorw  %ax, %bx\n"
    "  call  mode16_mix\n" /* pushes a 16-bit IP */
    "  addl  $2, %esi\n"   /* 66h: a 32-bit operand */
    "  decw  %bp\n"
    "  jnz   1b\n"
    "  popw  %bp\n"
    "  lretl\n" /* 66h CBh: EIP and CS, 32 bits each, as the 32-bit LCALL pushed them */
    "mode16_mix:\n"
    "  pushw %dx\n"
    "  movw  $0x9E37, %dx\n"
    "  mulw  %dx\n" /* DX:AX = AX * 9E37h */
    "  xorw  %dx, %ax\n"
    "  addl  %eax, %edi\n"
    "  roll  $5, %edi\n"
    "  popw  %dx\n"
    "  ret\n"
    ".code32\n"
    ".popsection\n");
extern const char mode16_entry[];

#define CODE16_SELECTOR 0x33 /* GDT entry 6, RPL 3 */
#define CODE16_BASE 0x40000000u

static struct result run16(const uint16_t* p, uint32_t n) {
  const struct {
    uint32_t offset;
    uint16_t selector;
  } __attribute__((packed)) target = {(uint32_t)mode16_entry - CODE16_BASE, CODE16_SELECTOR};
  struct result r;
  __asm__ volatile("lcall *%[target]"
                   : "=a"(r.eax), "=b"(r.ebx), "=D"(r.edi), "+S"(p), "+c"(n)
                   : [target] "m"(target)
                   : "edx", "cc", "memory");
  return r;
}
#endif

uint32_t mode16_compute(void) {
  uint32_t s = 0x16160001u, h = 0x811C9DC5u;
  for (int i = 0; i < WORDS + CALLS; ++i) data[i] = (uint16_t)wl_next(&s);
  for (uint32_t call = 0; call < CALLS; ++call) {
    const struct result r = run16(data + call, WORDS - call * 7);
    h = wl_mix(wl_mix(wl_mix(h, r.eax), r.ebx), r.edi);
  }
  return h;
}

#ifndef CITCAT_HOST
int main(void) {
  if ((uint32_t)mode16_entry - CODE16_BASE > 0xFF00u) {
    printf("mode16: the 16-bit code is not in the first 64 KB of the text\n");
    return 2;
  }
  return wl_report("mode16", mode16_compute(), EXPECT_MODE16);
}
#endif
