/* The CITCAT R4400 guest kernel: boot, program loading from the disk, tasks in their own TLB-
   mapped address spaces, preemptive round-robin scheduling on the Count/Compare timer, system
   calls, disk DMA with interrupts, and the CITCAT hooks. docs/machines/r4400-guest.md. */
#include <stddef.h>
#include <stdint.h>

#include "citcat_sdk.h"
#include "layout.h"

#define MAX_TASKS 16
#define TICK_COUNTS 10000u /* Count ticks per timer interrupt (about 20000 instructions) */
#ifndef CITCAT_DEFAULT_MIX /* from guest/r4400/CMakeLists.txt */
#define CITCAT_DEFAULT_MIX "sort,hash,fp,chase,io"
#endif

/* ---------------------------------------------------------------- types */
enum task_state { T_FREE, T_READY, T_SLEEPING, T_DISK, T_DEAD };

struct task {
  /* save area: layout.h offsets, written by entry.S */
  uint64_t gpr[32];
  uint64_t hi, lo, epc;
  uint32_t status, fcsr;
  uint64_t fpr[16];
  /* kernel bookkeeping */
  int state;
  int index;
  uint32_t asid;
  uint32_t *pgtab; /* 1024 x (EntryLo0, EntryLo1) */
  uint32_t wake_tick;
  uint32_t io_block, io_count, io_ubuf; /* the pending disk read */
  struct task *io_next;
  int exit_code;
  uint32_t counts; /* Count ticks spent running this task (kernel time included) */
  char name[24];
};

_Static_assert(offsetof(struct task, gpr) == T_GPR, "T_GPR");
_Static_assert(offsetof(struct task, hi) == T_HI, "T_HI");
_Static_assert(offsetof(struct task, lo) == T_LO, "T_LO");
_Static_assert(offsetof(struct task, epc) == T_EPC, "T_EPC");
_Static_assert(offsetof(struct task, status) == T_STATUS, "T_STATUS");
_Static_assert(offsetof(struct task, fcsr) == T_FCSR, "T_FCSR");
_Static_assert(offsetof(struct task, fpr) == T_FPR, "T_FPR");
_Static_assert(offsetof(struct task, state) == T_SAVE_END, "T_SAVE_END");

/* ---------------------------------------------------------------- state */
struct task *cur_task;   /* entry.S saves into it */
uint32_t *cur_pgtab;     /* the refill handlers read it */
uint8_t kstack[16384] __attribute__((aligned(16)));
__asm__(".globl kstack_top\n.set kstack_top, kstack + 16384\n");

static struct task tasks[MAX_TASKS];
static struct task idle_task;
static int ntasks;
static int last_index;
static struct task *fpu_owner;
static uint32_t page_tables[MAX_TASKS][PT_BYTES / 4] __attribute__((aligned(4096)));
static uint8_t bounce[DISK_MAX_BLOCKS * DISK_BLOCK_BYTES] __attribute__((aligned(4096)));
static uint32_t pool_next[4]; /* next free frame of each page colour */
static uint32_t dline = 16;   /* D-cache line size, from Config */
static uint32_t iline = 16;
static uint32_t sline;        /* secondary cache line size, 0 without a secondary cache */

static uint32_t ticks;
static uint32_t last_count; /* Count at the last kernel entry */
static uint32_t stat_syscalls, stat_disk_reads, stat_interrupts;

/* the disk: one request in flight, the rest queued */
static struct task *disk_busy;
static struct task *disk_queue_head, *disk_queue_tail;

/* the disk directory */
#define MAX_FILES 64
struct dir_entry {
  char name[24];
  uint32_t first_block;
  uint32_t size;
};
static struct dir_entry dir[MAX_FILES];
static uint32_t dir_count;

/* entry.S / driver.S */
extern char vec_refill_begin[], vec_refill_end[], vec_xrefill_begin[], vec_xrefill_end[];
extern char vec_general_begin[], vec_general_end[];
extern char idle_loop[];
void restore_task(struct task *t) __attribute__((noreturn));
void fpu_save(struct task *t);
void fpu_restore(struct task *t);
void citcat_driver(void);

/* ---------------------------------------------------------------- hardware access */
static inline uint32_t io_read(uint32_t addr) { return *(volatile uint32_t *)addr; }
static inline void io_write(uint32_t addr, uint32_t v) { *(volatile uint32_t *)addr = v; }

#define MFC0(reg)                                                           \
  ({                                                                        \
    uint32_t v_;                                                            \
    __asm__ volatile(".set push\n.set noreorder\nmfc0 %0, $" #reg "\n.set pop" : "=r"(v_)); \
    v_;                                                                     \
  })
#define MTC0(reg, val) \
  __asm__ volatile(".set push\n.set noreorder\nmtc0 %0, $" #reg "\n.set pop" : : "r"(val) : "memory")

/* A #define of the reserved area's layout as text, for inline assembler. */
#define CITCAT_TEXT(x) CITCAT_TEXT2(x)
#define CITCAT_TEXT2(x) #x

/* Every read of Count is echoed to the reserved `count` address: 2 extra instructions. */
static inline uint32_t read_count(void) {
  uint32_t v, base;
  __asm__ volatile(
      ".set push\n.set noreorder\n"
      "mfc0 %0, $9\n"
      "lui %1, " CITCAT_TEXT(CITCAT_R4400_RESERVED_LUI) "\n"   /* [citcat] */
      "sw %0, " CITCAT_TEXT(CITCAT_R4400_COUNT) "(%1)\n" /* [citcat] echo Count */
      ".set pop"
      : "=&r"(v), "=&r"(base)
      :
      : "memory");
  return v;
}

#define CACHE(op, addr) __asm__ volatile("cache %0, 0(%1)" : : "i"(op), "r"(addr) : "memory")
#define HIT_INVALIDATE_I 0x10
#define HIT_INVALIDATE_D 0x11
#define HIT_WRITEBACK_INV_D 0x15

#define HIT_INVALIDATE_SD 0x13
#define HIT_WRITEBACK_INV_SD 0x17

/* Write back and invalidate (to memory: the secondary cache too, when there is one). */
static void dcache_writeback_inv(uint32_t addr, uint32_t len) {
  for (uint32_t a = addr & ~(dline - 1); a < addr + len; a += dline) CACHE(HIT_WRITEBACK_INV_D, a);
  if (sline) {
    for (uint32_t a = addr & ~(sline - 1); a < addr + len; a += sline) {
      CACHE(HIT_WRITEBACK_INV_SD, a);
    }
  }
}
static void dcache_invalidate(uint32_t addr, uint32_t len) {
  for (uint32_t a = addr & ~(dline - 1); a < addr + len; a += dline) CACHE(HIT_INVALIDATE_D, a);
  if (sline) {
    for (uint32_t a = addr & ~(sline - 1); a < addr + len; a += sline) CACHE(HIT_INVALIDATE_SD, a);
  }
}
static void icache_invalidate(uint32_t addr, uint32_t len) {
  for (uint32_t a = addr & ~(iline - 1); a < addr + len; a += iline) CACHE(HIT_INVALIDATE_I, a);
}

/* ---------------------------------------------------------------- console */
static void console_putc(char c) {
  while (!(io_read(UART_STATUS) & 2)) {
  }
  io_write(UART_TX, (uint8_t)c);
}

static void kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void kprintf(const char *fmt, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  for (const char *p = buf; *p; ++p) console_putc(*p);
}

static void power_off(void) __attribute__((noreturn));
static void power_off(void) {
  io_write(CLOCK_POWER_OFF, 1);
  for (;;) {
  }
}

static void panic(const char *what) __attribute__((noreturn));
static void panic(const char *what) {
  kprintf("kernel: panic: %s\n", what);
  power_off();
}

/* ---------------------------------------------------------------- disk */
static uint32_t kseg0_to_phys(const void *p) { return (uint32_t)p - KSEG0; }

static void disk_command(uint32_t block, uint32_t count, uint32_t phys) {
  io_write(DISK_BLOCK, block);
  io_write(DISK_ADDR, phys);
  io_write(DISK_COUNT, count);
  io_write(DISK_COMMAND, 1);
}

/* Boot-time read with polling (interrupts are off). `dst` is a kseg0 buffer, 512-aligned. */
static void disk_read_sync(uint32_t block, uint32_t count, void *dst) {
  uint32_t len = count * DISK_BLOCK_BYTES;
  dcache_writeback_inv((uint32_t)dst, len);
  disk_command(block, count, kseg0_to_phys(dst));
  uint32_t st;
  while ((st = io_read(DISK_STATUS)) == 1) {
  }
  io_write(DISK_ACK, 1);
  if (st != 2) panic("disk read failed");
  dcache_invalidate((uint32_t)dst, len); /* DMA bypassed the caches */
}

static uint32_t be32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Block 0 onwards: "CTDK", version 1, file count, directory blocks; then 32-byte entries
   (name[24], first block, byte size), all big-endian. */
static void read_directory(void) {
  disk_read_sync(0, 1, bounce);
  if (be32(bounce) != 0x4354444B || be32(bounce + 4) != 1) panic("no CITCAT disk directory");
  uint32_t count = be32(bounce + 8), blocks = be32(bounce + 12);
  if (count > MAX_FILES || blocks == 0 || blocks > 8) panic("bad disk directory");
  disk_read_sync(0, blocks, bounce);
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t *e = bounce + 16 + 32 * i;
    memcpy(dir[i].name, e, 24);
    dir[i].name[23] = 0;
    dir[i].first_block = be32(e + 24);
    dir[i].size = be32(e + 28);
  }
  dir_count = count;
}

static const struct dir_entry *find_file(const char *name) {
  for (uint32_t i = 0; i < dir_count; ++i) {
    if (strcmp(dir[i].name, name) == 0) return &dir[i];
  }
  return 0;
}

/* ---------------------------------------------------------------- memory */
/* Page frames are coloured: a user page at VA gets a frame with PA[13:12] = VA[13:12], so its
   kseg0 alias indexes the 16 KB virtually-indexed caches like the user mapping (no aliases). */
static uint32_t pool_end = PAGE_POOL_END;

/* Finds the end of RAM (at most PAGE_POOL_END) with uncached stores and loads at each MB from
   PAGE_POOL on: beyond the RAM, stores vanish and loads read something else. */
static uint32_t probe_memory(void) {
  uint32_t end = PAGE_POOL;
  for (uint32_t a = PAGE_POOL; a < PAGE_POOL_END; a += 0x100000) {
    volatile uint32_t *p = (volatile uint32_t *)(a - KSEG0 + KSEG1);
    *p = 0xA5C3E10Fu ^ a;
    if (*p != (0xA5C3E10Fu ^ a)) break;
    *p = 0;
    end = a + 0x100000;
  }
  return end;
}

static uint32_t alloc_frame(uint32_t va) {
  uint32_t c = (va >> 12) & 3;
  uint32_t f = pool_next[c];
  if (f + 4096 > pool_end) panic("out of memory");
  pool_next[c] += 16384;
  memset((void *)f, 0, 4096);
  return f;
}

static uint32_t *pte_of(struct task *t, uint32_t va) {
  if (va >= USER_TOP) return 0;
  return &t->pgtab[va >> 12];
}

/* Maps the page at `va` (allocating it) and returns its kseg0 address. */
static uint8_t *map_page(struct task *t, uint32_t va, int writable) {
  uint32_t *pte = pte_of(t, va);
  if (!pte) panic("map_page: address out of range");
  if (!(*pte & 2)) {
    uint32_t f = alloc_frame(va);
    *pte = ((f - KSEG0) >> 12) << 6 | 3 << 3 | 2; /* C = 3 (cacheable), V */
  }
  if (writable) *pte |= 4; /* D */
  return (uint8_t *)(KSEG0 + ((*pte >> 6) << 12));
}

/* The kernel reaches user memory through kseg0 after a software walk of the task's table. */
static uint8_t *user_ptr(struct task *t, uint32_t va, int write) {
  uint32_t *pte = pte_of(t, va);
  if (!pte || !(*pte & 2) || (write && !(*pte & 4))) return 0;
  return (uint8_t *)(KSEG0 + ((*pte >> 6) << 12) + (va & 0xFFF));
}

static int copy_from_user(struct task *t, void *dst, uint32_t va, uint32_t len) {
  uint8_t *d = dst;
  while (len) {
    uint8_t *s = user_ptr(t, va, 0);
    if (!s) return -1;
    uint32_t n = 4096 - (va & 0xFFF);
    if (n > len) n = len;
    memcpy(d, s, n);
    d += n;
    va += n;
    len -= n;
  }
  return 0;
}

static int copy_to_user(struct task *t, uint32_t va, const void *src, uint32_t len) {
  const uint8_t *s = src;
  while (len) {
    uint8_t *d = user_ptr(t, va, 1);
    if (!d) return -1;
    uint32_t n = 4096 - (va & 0xFFF);
    if (n > len) n = len;
    memcpy(d, s, n);
    s += n;
    va += n;
    len -= n;
  }
  return 0;
}

static int user_range_ok(struct task *t, uint32_t va, uint32_t len, int write) {
  if (len == 0) return 1;
  if (va + len < va) return 0;
  for (uint32_t p = va & ~0xFFFu; p < va + len; p += 4096) {
    if (!user_ptr(t, p, write)) return 0;
  }
  return 1;
}

/* ---------------------------------------------------------------- program loading */
struct elf32_ehdr {
  uint8_t ident[16];
  uint16_t type, machine;
  uint32_t version, entry, phoff, shoff, flags;
  uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
};
struct elf32_phdr {
  uint32_t type, offset, vaddr, paddr, filesz, memsz, flags, align;
};

static int load_program(const char *name) {
  const struct dir_entry *f = find_file(name);
  if (!f) {
    kprintf("kernel: no program '%s' on the disk\n", name);
    return -1;
  }
  if (f->size > LOAD_AREA_SIZE || f->size < sizeof(struct elf32_ehdr)) {
    kprintf("kernel: program '%s' has a bad size\n", name);
    return -1;
  }
  if (ntasks == MAX_TASKS) {
    kprintf("kernel: too many tasks, '%s' not started\n", name);
    return -1;
  }
  uint8_t *img = (uint8_t *)LOAD_AREA;
  uint32_t blocks = (f->size + DISK_BLOCK_BYTES - 1) / DISK_BLOCK_BYTES;
  for (uint32_t b = 0; b < blocks; b += DISK_MAX_BLOCKS) {
    uint32_t n = blocks - b < DISK_MAX_BLOCKS ? blocks - b : DISK_MAX_BLOCKS;
    disk_read_sync(f->first_block + b, n, img + b * DISK_BLOCK_BYTES);
  }
  const struct elf32_ehdr *eh = (const struct elf32_ehdr *)img;
  if (memcmp(eh->ident, "\177ELF\1\2", 6) != 0 || eh->machine != 8 || eh->type != 2 ||
      eh->phentsize != sizeof(struct elf32_phdr) ||
      eh->phoff + eh->phnum * sizeof(struct elf32_phdr) > f->size) {
    kprintf("kernel: '%s' is not a big-endian MIPS ELF32 executable\n", name);
    return -1;
  }
  struct task *t = &tasks[ntasks];
  memset(t, 0, sizeof *t);
  t->index = ntasks;
  t->asid = (uint32_t)ntasks + 1;
  t->pgtab = page_tables[ntasks];
  memset(t->pgtab, 0, PT_BYTES);
  strncpy(t->name, name, sizeof t->name - 1);
  const struct elf32_phdr *ph = (const struct elf32_phdr *)(img + eh->phoff);
  for (int i = 0; i < eh->phnum; ++i) {
    if (ph[i].type != 1 || ph[i].memsz == 0) continue; /* PT_LOAD */
    uint32_t va = ph[i].vaddr, end = ph[i].vaddr + ph[i].memsz;
    if (va < 0x1000 || end > USER_TOP - USER_STACK_SIZE || end < va || ph[i].filesz > ph[i].memsz ||
        ph[i].offset + ph[i].filesz > f->size) {
      kprintf("kernel: '%s' has a segment outside the user space\n", name);
      return -1;
    }
    int writable = (ph[i].flags & 2) != 0;
    for (uint32_t p = va & ~0xFFFu; p < end; p += 4096) {
      uint8_t *frame = map_page(t, p, writable);
      /* the part of this page the segment's file bytes cover */
      uint32_t lo = p < va ? va : p, hi = p + 4096 < end ? p + 4096 : end;
      uint32_t file_end = va + ph[i].filesz;
      if (lo < file_end) {
        uint32_t n = (hi < file_end ? hi : file_end) - lo;
        memcpy(frame + (lo - p), img + ph[i].offset + (lo - va), n);
      }
      /* new code must reach memory and leave the I-cache */
      dcache_writeback_inv((uint32_t)frame, 4096);
      if (ph[i].flags & 1) icache_invalidate((uint32_t)frame, 4096);
    }
  }
  for (uint32_t p = USER_TOP - USER_STACK_SIZE; p < USER_TOP; p += 4096) map_page(t, p, 1);
  t->gpr[29] = USER_TOP - 32; /* o32: the callee may use 16 bytes of argument slots */
  t->gpr[4] = (uint64_t)(int64_t)(int32_t)t->index;
  t->epc = (uint64_t)(int64_t)(int32_t)eh->entry;
  t->status = USER_STATUS;
  t->state = T_READY;
  ++ntasks;
  return 0;
}

/* ---------------------------------------------------------------- scheduling */
static void switch_to(struct task *t) {
  cur_task = t;
  if (t == &idle_task) return;
  cur_pgtab = t->pgtab;
  MTC0(10, t->asid); /* EntryHi.ASID */
  if (fpu_owner != t) {
    if (fpu_owner) fpu_save(fpu_owner);
    fpu_restore(t);
    fpu_owner = t;
  }
}

static void shutdown(void) __attribute__((noreturn));
static void shutdown(void) {
  int failed = 0;
  for (int i = 0; i < ntasks; ++i) failed += tasks[i].exit_code != 0;
  for (int i = 0; i < ntasks; ++i) {
    kprintf("kernel: task %d (%s): exit %d, %u counts\n", i, tasks[i].name, tasks[i].exit_code,
            tasks[i].counts);
  }
  kprintf("kernel: idle: %u counts\n", idle_task.counts);
  kprintf("kernel: all %d tasks done (%d failed), %u ticks, %u interrupts, %u syscalls, "
          "%u disk reads; power off\n",
          ntasks, failed, ticks, stat_interrupts, stat_syscalls, stat_disk_reads);
  power_off();
}

static struct task *schedule(void) {
  int start = cur_task == &idle_task ? last_index : cur_task->index;
  int alive = 0;
  for (int i = 1; i <= ntasks; ++i) {
    struct task *t = &tasks[(start + i) % ntasks];
    if (t->state == T_READY) {
      last_index = t->index;
      return t;
    }
    alive += t->state != T_DEAD;
  }
  if (!alive) shutdown();
  return &idle_task;
}

static void task_end(struct task *t, int code) {
  t->state = T_DEAD;
  t->exit_code = code;
  if (fpu_owner == t) fpu_owner = 0;
  if (code != 0) kprintf("kernel: task %d (%s) exited with %d\n", t->index, t->name, code);
}

static const char *exc_name(uint32_t code) {
  switch (code) {
    case 1: return "TLB modified";
    case 2: return "TLB load";
    case 3: return "TLB store";
    case 4: return "address error (load)";
    case 5: return "address error (store)";
    case 9: return "breakpoint";
    case 10: return "reserved instruction";
    case 11: return "coprocessor unusable";
    case 12: return "overflow";
    case 8: return "system call in a delay slot";
    case 13: return "trap";
    case 15: return "floating point";
    default: return "exception";
  }
}

/* ---------------------------------------------------------------- disk requests */
static void disk_start(struct task *t) {
  uint32_t len = t->io_count * DISK_BLOCK_BYTES;
  dcache_writeback_inv((uint32_t)bounce, len); /* no dirty line may land on the DMA data */
  disk_busy = t;
  disk_command(t->io_block, t->io_count, kseg0_to_phys(bounce));
}

static void disk_interrupt(void) {
  uint32_t st = io_read(DISK_STATUS);
  io_write(DISK_ACK, 1);
  struct task *t = disk_busy;
  disk_busy = 0;
  if (t) {
    uint32_t len = t->io_count * DISK_BLOCK_BYTES;
    int64_t ret = ERR_IO;
    if (st == 2) {
      dcache_invalidate((uint32_t)bounce, len); /* DMA bypassed the caches */
      ret = copy_to_user(t, t->io_ubuf, bounce, len) == 0 ? (int64_t)t->io_count : ERR_FAULT;
    }
    t->gpr[2] = (uint64_t)ret;
    if (t->state == T_DISK) t->state = T_READY;
    ++stat_disk_reads;
  }
  if (disk_queue_head) {
    struct task *n = disk_queue_head;
    disk_queue_head = n->io_next;
    if (!disk_queue_head) disk_queue_tail = 0;
    disk_start(n);
  }
}

/* ---------------------------------------------------------------- timer */
static void timer_arm(void) { MTC0(11, read_count() + TICK_COUNTS); }

static void timer_interrupt(uint32_t now) {
  ++ticks;
  MTC0(11, now + TICK_COUNTS); /* Compare: the next tick; also clears IP7 */
  for (int i = 0; i < ntasks; ++i) {
    if (tasks[i].state == T_SLEEPING && (int32_t)(ticks - tasks[i].wake_tick) >= 0) {
      tasks[i].state = T_READY;
    }
  }
}

/* ---------------------------------------------------------------- system calls */
/* Returns nonzero when the caller must give up the processor. */
static int do_syscall(struct task *t) {
  uint32_t nr = (uint32_t)t->gpr[2];
  uint32_t a0 = (uint32_t)t->gpr[4], a1 = (uint32_t)t->gpr[5], a2 = (uint32_t)t->gpr[6];
  int64_t ret = 0;
  int resched = 0;
  ++stat_syscalls;
  t->epc += 4;
  switch (nr) {
    case SYS_EXIT:
      task_end(t, (int32_t)a0);
      return 1;
    case SYS_WRITE: {
      char buf[128];
      uint32_t done = 0;
      if (a1 > 65536) a1 = 65536;
      while (done < a1) {
        uint32_t n = a1 - done < sizeof buf ? a1 - done : sizeof buf;
        if (copy_from_user(t, buf, a0 + done, n) != 0) break;
        for (uint32_t i = 0; i < n; ++i) console_putc(buf[i]);
        done += n;
      }
      ret = done == a1 ? (int64_t)done : ERR_FAULT;
      break;
    }
    case SYS_READ:
      if (a1 == 0 || a1 > DISK_MAX_BLOCKS || !user_range_ok(t, a2, a1 * DISK_BLOCK_BYTES, 1)) {
        ret = ERR_INVAL;
        break;
      }
      t->io_block = a0;
      t->io_count = a1;
      t->io_ubuf = a2;
      t->io_next = 0;
      t->state = T_DISK;
      if (!disk_busy) {
        disk_start(t);
      } else if (disk_queue_tail) {
        disk_queue_tail->io_next = t;
        disk_queue_tail = t;
      } else {
        disk_queue_head = disk_queue_tail = t;
      }
      return 1; /* v0 is set when the transfer completes */
    case SYS_YIELD:
      resched = 1;
      break;
    case SYS_SLEEP:
      t->wake_tick = ticks + (a0 ? a0 : 1);
      t->state = T_SLEEPING;
      resched = 1;
      break;
    case SYS_CLOCK:
      ret = io_read(CLOCK_MICROS);
      break;
    case SYS_COUNT:
      ret = read_count();
      break;
    case SYS_RANDOM:
      ret = io_read(CLOCK_ENTROPY);
      break;
    case SYS_TICKS:
      ret = ticks;
      break;
    case SYS_FILE: {
      char name[24];
      uint32_t i = 0;
      for (; i < sizeof name; ++i) {
        if (copy_from_user(t, &name[i], a0 + i, 1) != 0) break;
        if (!name[i]) break;
      }
      if (i == sizeof name || name[i]) {
        ret = ERR_FAULT;
        break;
      }
      const struct dir_entry *f = find_file(name);
      if (!f) {
        ret = ERR_NOENT;
        break;
      }
      uint32_t info[2] = {f->first_block, f->size};
      ret = copy_to_user(t, a1, info, sizeof info) == 0 ? 0 : ERR_FAULT;
      break;
    }
    case SYS_REPORT: {
      uint32_t base;
      __asm__ volatile(
          ".set push\n.set noreorder\n.set mips3\n.set gp=64\n"
          "dsll32 $8, %2, 0\n"
          "dsll32 $9, %1, 0\n"
          "dsrl32 $9, $9, 0\n"
          "or $8, $8, $9\n"
          "lui %0, " CITCAT_TEXT(CITCAT_R4400_RESERVED_LUI) "\n"
          "sd $8, " CITCAT_TEXT(CITCAT_R4400_CONSOLE) "(%0)\n" /* the reserved `console` area */
          ".set pop"
          : "=&r"(base)
          : "r"(a0), "r"(a1)
          : "$8", "$9", "memory");
      break;
    }
    default:
      ret = ERR_NOSYS;
      break;
  }
  t->gpr[2] = (uint64_t)ret;
  return resched;
}

/* ---------------------------------------------------------------- the trap entry */
struct task *kernel_trap(uint32_t cause) {
  struct task *t = cur_task;
  uint32_t now = read_count(); /* CPU time accounting: one echoed Count read per kernel entry */
  t->counts += now - last_count;
  last_count = now;
  uint32_t code = (cause >> 2) & 31;
  int resched = 0;
  if (code == 0) {
    ++stat_interrupts;
    if (cause & CAUSE_IP3) disk_interrupt();
    if (cause & CAUSE_IP7) {
      timer_interrupt(now);
      resched = 1; /* round robin */
    }
  } else if (code == 8 && t != &idle_task && !(cause & 0x80000000u)) {
    resched = do_syscall(t);
  } else if (t != &idle_task) {
    uint32_t bad = MFC0(8);
    kprintf("kernel: task %d (%s) killed: %s at pc 0x%08x, address 0x%08x\n", t->index, t->name,
            exc_name(code), (uint32_t)t->epc, bad);
    task_end(t, 128 + (int)code);
    resched = 1;
  } else {
    panic("exception in the kernel");
  }
  if (t == &idle_task || t->state != T_READY) resched = 1;
  if (resched) t = schedule();
  switch_to(t);
  return t;
}

/* ---------------------------------------------------------------- boot */
static void install_vector(uint32_t at, const char *begin, const char *end) {
  uint32_t len = (uint32_t)(end - begin);
  if (len > 0x80) panic("exception vector too long");
  memcpy((void *)at, begin, len);
  dcache_writeback_inv(at, len);
  icache_invalidate(at, len);
}

static void init_tlb(void) {
  MTC0(5, 0);  /* PageMask: 4 KB */
  MTC0(6, 0);  /* Wired */
  MTC0(2, 0);
  MTC0(3, 0);
  for (uint32_t i = 0; i < 48; ++i) {
    MTC0(10, KSEG0 + i * 0x2000); /* unmatchable: kseg0 is never translated */
    MTC0(0, i);
    __asm__ volatile("tlbwi" ::: "memory");
  }
  MTC0(10, 0);
  MTC0(4, 0);  /* Context.PTEBase = 0 */
  __asm__ volatile(".set push\n.set mips3\ndmtc0 $0, $20\n.set pop"); /* XContext.PTEBase */
}

extern char __bss_start[], __bss_end[];

void kernel_main(void) {
  memset(__bss_start, 0, (size_t)(__bss_end - __bss_start));
  uint32_t config = MFC0(16);
  iline = (config & 0x20) ? 32 : 16;
  dline = (config & 0x10) ? 32 : 16;
  sline = (config & (1u << 17)) ? 0 : 16u << ((config >> 22) & 3);
  for (int c = 0; c < 4; ++c) pool_next[c] = PAGE_POOL + 4096 * (uint32_t)c;
  pool_end = probe_memory();

  install_vector(0x80000000, vec_refill_begin, vec_refill_end);
  install_vector(0x80000080, vec_xrefill_begin, vec_xrefill_end);
  install_vector(0x80000180, vec_general_begin, vec_general_end);
  init_tlb();

  char args[257];
  memcpy(args, (const void *)BOOT_ARGS, 256);
  args[256] = 0;
  const char *list = args[0] ? args : CITCAT_DEFAULT_MIX;
  kprintf("kernel: CITCAT R4400 guest kernel, programs: %s\n", list);
  if (pool_end < PAGE_POOL + 0x100000) panic("at least 5 MiB of RAM needed");

  read_directory();
  char name[64];
  for (const char *p = list; *p;) {
    uint32_t n = 0;
    while (*p && *p != ',') {
      if (*p != ' ' && n + 1 < sizeof name) name[n++] = *p;
      ++p;
    }
    name[n] = 0;
    if (*p == ',') ++p;
    if (n) load_program(name);
  }
  if (ntasks == 0) panic("nothing to run");

  idle_task.epc = (uint64_t)(int64_t)(int32_t)(uint32_t)idle_loop;
  idle_task.status = IDLE_STATUS;
  idle_task.index = -1;
  cur_task = &idle_task;
  last_index = ntasks - 1; /* the first program runs first */
  timer_arm();
  last_count = read_count();

  /* Begin of trace: the driver runs uncached from kseg1 and returns here (the resume point). */
  uint32_t driver = (uint32_t)citcat_driver + (KSEG1 - KSEG0);
  __asm__ volatile("" : "+r"(driver)); /* a JALR to kseg1, not a JAL (which stays in kseg0) */
  ((void (*)(void))driver)();

  struct task *t = schedule();
  switch_to(t);
  restore_task(t);
}
