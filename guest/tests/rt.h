/* Freestanding runtime for the oracle guest programs: raw Linux syscalls, output helpers. */
#ifndef CITCAT_GUEST_TESTS_RT_H_
#define CITCAT_GUEST_TESTS_RT_H_

#if _MIPS_SIM == _ABIN32
#define SYS_WRITE 6001
#elif _MIPS_SIM == _ABI64
#define SYS_WRITE 5001
#else
#define SYS_WRITE 4004
#endif

typedef unsigned long long u64;
typedef long long s64;
typedef unsigned int u32;
typedef int s32;

static inline long rt_write(int fd, const void* buf, unsigned long len) {
  register long v0 __asm__("$2") = SYS_WRITE;
  register long a0 __asm__("$4") = fd;
  register long a1 __asm__("$5") = (long)buf;
  register long a2 __asm__("$6") = (long)len;
  register long a3 __asm__("$7");
  __asm__ volatile("syscall"
                   : "+r"(v0), "=r"(a3), "+r"(a0), "+r"(a1), "+r"(a2)
                   :
                   : "$1", "$3", "$8", "$9", "$10", "$11", "$12", "$13", "$14", "$15", "$24",
                     "$25", "hi", "lo", "memory");
  return a3 ? -v0 : v0;
}

static inline unsigned long rt_strlen(const char* s) {
  unsigned long n = 0;
  while (s[n]) ++n;
  return n;
}

static inline void rt_puts(const char* s) { rt_write(1, s, rt_strlen(s)); }

static inline void rt_put_hex(u64 v) {
  char buf[17];
  for (int i = 15; i >= 0; --i) {
    buf[i] = "0123456789abcdef"[v & 15];
    v >>= 4;
  }
  buf[16] = '\n';
  rt_write(1, buf, 17);
}

/* Keeps the compiler from folding a value into a constant. */
#define RT_OPAQUE(x) __asm__ volatile("" : "+r"(x))

#endif /* CITCAT_GUEST_TESTS_RT_H_ */
