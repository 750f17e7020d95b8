/* The CITCAT guest SDK, shared by the R4400 and the i486 guests: the kernel's own services
   (clock, entropy, raw disk blocks, known answers), and with -DCITCAT_SDK_NEWLIB the standard C
   library (newlib, runtime/); without it, the tiny freestanding libc (libc.c) the kernels and
   the workloads use.
   Returning from main exits the task with main's value. */
#ifndef CITCAT_GUEST_COMMON_SDK_CITCAT_SDK_H_
#define CITCAT_GUEST_COMMON_SDK_CITCAT_SDK_H_

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "syscall.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef CITCAT_SDK_NEWLIB
/* Built against newlib (runtime/): the standard headers declare the C library. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#else
/* ---- strings and memory ---- */
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strcpy(char *dst, const char *src);
char *strncpy(char *dst, const char *src, size_t n);
char *strcat(char *dst, const char *src);
char *strchr(const char *s, int c);

/* ---- formatting: %d %i %u %x %X %o %c %s %p %%, flags '-' '0', width, precision for %s,
   length l, ll, z ---- */
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- numbers ---- */
int atoi(const char *s);
void srand(uint32_t seed);
uint32_t rand(void); /* a 32-bit LCG: deterministic, not the entropy register */

#ifndef CITCAT_KERNEL
/* ---- console ---- */
int printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int puts(const char *s);
int putchar(int c);

void exit(int code) __attribute__((noreturn));
long write(const void *buf, size_t len); /* console output */
#endif
#endif /* CITCAT_SDK_NEWLIB */

#ifndef CITCAT_KERNEL
/* ---- system calls ---- */
struct file_info {
  uint32_t first_block; /* absolute disk block */
  uint32_t size;        /* bytes */
};
long read_blocks(uint32_t first_block, uint32_t count, void *buf);
void yield(void);
void sleep_ticks(uint32_t ticks);
uint32_t clock_us(void);
uint32_t count_read(void);
uint32_t entropy(void);
uint32_t ticks(void);
int file_info(const char *name, struct file_info *out);
void report_checksum(uint64_t value);
long syscall4(long nr, long a0, long a1, long a2, long a3);
#endif

#ifdef __cplusplus
}
#endif

#endif /* CITCAT_GUEST_COMMON_SDK_CITCAT_SDK_H_ */
