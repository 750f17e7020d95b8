/* The SDK's tiny libc: string and memory functions, a small printf, an LCG, and the system call
   stubs. Freestanding: no malloc, no files, no locale. Also compiled into the kernel
   (-DCITCAT_KERNEL, without the console and system call parts). */
#include "citcat_sdk.h"

void *memcpy(void *dst, const void *src, size_t n) {
  unsigned char *d = dst;
  const unsigned char *s = src;
  if ((((uintptr_t)d | (uintptr_t)s) & 3) == 0) {
    while (n >= 16) {
      uint32_t a = ((const uint32_t *)s)[0], b = ((const uint32_t *)s)[1];
      uint32_t c = ((const uint32_t *)s)[2], e = ((const uint32_t *)s)[3];
      ((uint32_t *)d)[0] = a;
      ((uint32_t *)d)[1] = b;
      ((uint32_t *)d)[2] = c;
      ((uint32_t *)d)[3] = e;
      d += 16;
      s += 16;
      n -= 16;
    }
    while (n >= 4) {
      *(uint32_t *)d = *(const uint32_t *)s;
      d += 4;
      s += 4;
      n -= 4;
    }
  }
  while (n--) *d++ = *s++;
  return dst;
}

void *memmove(void *dst, const void *src, size_t n) {
  unsigned char *d = dst;
  const unsigned char *s = src;
  if (d == s || n == 0) return dst;
  if (d < s || d >= s + n) return memcpy(dst, src, n);
  d += n;
  s += n;
  while (n--) *--d = *--s;
  return dst;
}

void *memset(void *dst, int c, size_t n) {
  unsigned char *d = dst;
  unsigned char b = (unsigned char)c;
  while (n && ((uintptr_t)d & 3)) {
    *d++ = b;
    --n;
  }
  uint32_t w = b * 0x01010101u;
  while (n >= 4) {
    *(uint32_t *)d = w;
    d += 4;
    n -= 4;
  }
  while (n--) *d++ = b;
  return dst;
}

int memcmp(const void *a, const void *b, size_t n) {
  const unsigned char *x = a, *y = b;
  for (; n; --n, ++x, ++y) {
    if (*x != *y) return *x < *y ? -1 : 1;
  }
  return 0;
}

size_t strlen(const char *s) {
  const char *p = s;
  while (*p) ++p;
  return (size_t)(p - s);
}

int strcmp(const char *a, const char *b) {
  while (*a && *a == *b) {
    ++a;
    ++b;
  }
  return (unsigned char)*a - (unsigned char)*b;
}

int strncmp(const char *a, const char *b, size_t n) {
  for (; n; --n, ++a, ++b) {
    if (*a != *b) return (unsigned char)*a - (unsigned char)*b;
    if (!*a) return 0;
  }
  return 0;
}

char *strcpy(char *dst, const char *src) {
  char *d = dst;
  while ((*d++ = *src++)) {
  }
  return dst;
}

char *strncpy(char *dst, const char *src, size_t n) {
  size_t i = 0;
  for (; i < n && src[i]; ++i) dst[i] = src[i];
  for (; i < n; ++i) dst[i] = 0;
  return dst;
}

char *strcat(char *dst, const char *src) {
  strcpy(dst + strlen(dst), src);
  return dst;
}

char *strchr(const char *s, int c) {
  for (;; ++s) {
    if (*s == (char)c) return (char *)s;
    if (!*s) return 0;
  }
}

int atoi(const char *s) {
  int sign = 1, v = 0;
  while (*s == ' ') ++s;
  if (*s == '-') {
    sign = -1;
    ++s;
  }
  while (*s >= '0' && *s <= '9') v = v * 10 + (*s++ - '0');
  return sign * v;
}

#include "div64.inc"

static uint32_t rand_state = 1;
void srand(uint32_t seed) { rand_state = seed; }
uint32_t rand(void) {
  rand_state = rand_state * 1664525u + 1013904223u;
  return rand_state;
}

/* ---- vsnprintf ---- */
struct out {
  char *buf;
  size_t size, len;
};

static void out_char(struct out *o, char c) {
  if (o->len + 1 < o->size) o->buf[o->len] = c;
  ++o->len;
}

static void out_pad(struct out *o, char c, int n) {
  while (n-- > 0) out_char(o, c);
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap) {
  struct out o = {buf, size, 0};
  while (*fmt) {
    if (*fmt != '%') {
      out_char(&o, *fmt++);
      continue;
    }
    ++fmt;
    int left = 0, zero = 0, width = 0, prec = -1, lng = 0;
    for (;; ++fmt) {
      if (*fmt == '-') left = 1;
      else if (*fmt == '0') zero = 1;
      else break;
    }
    if (*fmt == '*') {
      width = va_arg(ap, int);
      ++fmt;
    }
    while (*fmt >= '0' && *fmt <= '9') width = width * 10 + (*fmt++ - '0');
    if (*fmt == '.') {
      ++fmt;
      prec = 0;
      while (*fmt >= '0' && *fmt <= '9') prec = prec * 10 + (*fmt++ - '0');
    }
    while (*fmt == 'l' || *fmt == 'z') {
      lng += *fmt == 'l' ? 1 : (sizeof(size_t) == 8 ? 2 : 1);
      ++fmt;
    }
    char c = *fmt ? *fmt++ : 0;
    char tmp[24];
    const char *s = tmp;
    int n = 0, neg = 0;
    switch (c) {
      case 'd':
      case 'i': {
        long long v = lng >= 2 ? va_arg(ap, long long) : lng == 1 ? va_arg(ap, long) : va_arg(ap, int);
        unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
        neg = v < 0;
        do {
          tmp[sizeof tmp - 1 - n++] = (char)('0' + u % 10);
          u /= 10;
        } while (u);
        s = tmp + sizeof tmp - n;
        break;
      }
      case 'u':
      case 'x':
      case 'X':
      case 'o':
      case 'p': {
        unsigned long long u;
        if (c == 'p') {
          u = (uintptr_t)va_arg(ap, void *);
        } else {
          u = lng >= 2 ? va_arg(ap, unsigned long long)
              : lng == 1 ? va_arg(ap, unsigned long) : va_arg(ap, unsigned int);
        }
        unsigned base = c == 'u' ? 10 : c == 'o' ? 8 : 16;
        const char *digits = c == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
        do {
          tmp[sizeof tmp - 1 - n++] = digits[u % base];
          u /= base;
        } while (u);
        if (c == 'p') {
          tmp[sizeof tmp - 1 - n++] = 'x';
          tmp[sizeof tmp - 1 - n++] = '0';
        }
        s = tmp + sizeof tmp - n;
        break;
      }
      case 'c':
        tmp[0] = (char)va_arg(ap, int);
        n = 1;
        break;
      case 's':
        s = va_arg(ap, const char *);
        if (!s) s = "(null)";
        while (s[n] && (prec < 0 || n < prec)) ++n;
        break;
      case '%':
        tmp[0] = '%';
        n = 1;
        break;
      default:
        tmp[0] = '?';
        n = 1;
        break;
    }
    int len = n + neg;
    if (!left && !zero) out_pad(&o, ' ', width - len);
    if (neg) out_char(&o, '-');
    if (!left && zero) out_pad(&o, '0', width - len);
    for (int i = 0; i < n; ++i) out_char(&o, s[i]);
    if (left) out_pad(&o, ' ', width - len);
  }
  if (o.size) o.buf[o.len < o.size ? o.len : o.size - 1] = 0;
  return (int)o.len;
}

int snprintf(char *buf, size_t size, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, size, fmt, ap);
  va_end(ap);
  return n;
}

#ifndef CITCAT_KERNEL
/* ---- system call stubs ---- */
#include "syscall_stubs.inc"

/* ---- console ---- */
int printf(const char *fmt, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  write(buf, n < (int)sizeof buf ? (size_t)n : sizeof buf - 1);
  return n;
}

int puts(const char *s) {
  write(s, strlen(s));
  write("\n", 1);
  return 0;
}

int putchar(int c) {
  char ch = (char)c;
  write(&ch, 1);
  return c;
}
#endif
