/* The CITCAT i486 guest kernel: boot, program loading from the disk, ring-3 tasks in their own
   page directories, demand-zero pages, lazy x87 switching, preemptive round robin on the 8254,
   system calls by INT 0x80, disk DMA through the IDE bus master with IRQ 14, and the CITCAT hooks.
   docs/machines/i486-guest.md. */
#include <stddef.h>
#include <stdint.h>

#include "boot_info.h"
#include "citcat_sdk.h"
#include "layout.h"

#define MAX_TASKS 16
#define MAX_REGIONS 4
#define TICK_DIVISOR 720u /* 8254 input clocks per timer tick (about 19,900 instructions) */
#ifndef CITCAT_DEFAULT_MIX  /* from guest/i486/CMakeLists.txt */
#define CITCAT_DEFAULT_MIX "sort,hash,fp,chase,io"
#endif

/* ---------------------------------------------------------------- types */
struct frame {
  uint32_t gs, fs, es, ds;
  uint32_t edi, esi, ebp, esp_pushad, ebx, edx, ecx, eax;
  uint32_t vector, error;
  uint32_t eip, cs, eflags;
  uint32_t esp, ss; /* from ring 3 only */
};

_Static_assert(offsetof(struct frame, gs) == F_GS, "F_GS");
_Static_assert(offsetof(struct frame, ds) == F_DS, "F_DS");
_Static_assert(offsetof(struct frame, edi) == F_EDI, "F_EDI");
_Static_assert(offsetof(struct frame, eax) == F_EAX, "F_EAX");
_Static_assert(offsetof(struct frame, vector) == F_VECTOR, "F_VECTOR");
_Static_assert(offsetof(struct frame, error) == F_ERROR, "F_ERROR");
_Static_assert(offsetof(struct frame, eip) == F_EIP, "F_EIP");
_Static_assert(offsetof(struct frame, eflags) == F_EFLAGS, "F_EFLAGS");
_Static_assert(offsetof(struct frame, ss) == F_SS, "F_SS");
_Static_assert(sizeof(struct frame) == F_SIZE, "F_SIZE");

enum task_state { T_FREE, T_READY, T_SLEEPING, T_DISK, T_DEAD };

/* A range of the user space whose pages are made on first touch (bss, the stack). */
struct region {
  uint32_t start, end;
  int writable;
};

struct task {
  struct frame f; /* the save area: TSS.ESP0 points just past it while the task runs */
  uint8_t fpu[108] __attribute__((aligned(4))); /* FNSAVE image, valid when fpu_used */
  int fpu_used;
  int state;
  int index;
  uint32_t *pd; /* page directory */
  struct region regions[MAX_REGIONS];
  int nregions;
  uint32_t wake_tick;
  uint32_t io_block, io_count, io_ubuf; /* the pending disk read */
  struct task *io_next;
  int exit_code;
  uint32_t ticks_run; /* timer ticks that found this task running */
  uint32_t report_lo, report_hi;
  int reported;
  char name[24];
};

struct tss {
  uint32_t link, esp0, ss0, esp1, ss1, esp2, ss2, cr3, eip, eflags;
  uint32_t eax, ecx, edx, ebx, esp, ebp, esi, edi;
  uint32_t es, cs, ss, ds, fs, gs, ldt;
  uint16_t trap, iomap;
};
_Static_assert(sizeof(struct tss) == 104, "TSS");

/* ---------------------------------------------------------------- state */
#define TEXT(x) TEXT2(x)
#define TEXT2(x) #x
uint8_t kstack[KSTACK_SIZE] __attribute__((aligned(16)));
__asm__(".globl kstack_top\n.set kstack_top, kstack + " TEXT(KSTACK_SIZE) "\n");

/* The GDT: null, kernel code and data, user code and data (flat, 4 GB, accessed bits preset so
   that segment loads never write it), the TSS (base filled in at boot), and a 16-bit user code
   segment over the first 64 KB of every program's text (workloads/mode16.c far-calls it). */
uint64_t gdt[GDT_ENTRIES] __attribute__((aligned(8))) = {
    0,
    0x00CF9B000000FFFFull, /* 08h: code, DPL 0 */
    0x00CF93000000FFFFull, /* 10h: data, DPL 0 */
    0x00CFFB000000FFFFull, /* 18h: code, DPL 3 */
    0x00CFF3000000FFFFull, /* 20h: data, DPL 3 */
    0,                     /* 28h: TSS */
    0x4000FB000000FFFFull, /* 30h: 16-bit code, DPL 3, base 40000000h, limit FFFFh */
};
struct {
  uint16_t limit;
  uint32_t base;
} __attribute__((packed)) gdt_ptr = {sizeof gdt - 1, (uint32_t)gdt};

static uint64_t idt[256] __attribute__((aligned(8)));
static struct tss tss __attribute__((aligned(128)));

/* Page tables: the kernel's directory (the template of every task's), the tables that map RAM
   linear = physical, and the one that maps the reserved area; all supervisor-only. */
static uint32_t kernel_pd[1024] __attribute__((aligned(4096)));
static uint32_t ram_pt[MAX_RAM >> 22][1024] __attribute__((aligned(4096)));
static uint32_t reserved_pt[1024] __attribute__((aligned(4096)));
static uint32_t task_pd[MAX_TASKS][1024] __attribute__((aligned(4096)));

/* The disk's bounce buffer (one 64 KiB PRD region: it must not cross a 64 KiB boundary) and
   the PRD table. */
static uint8_t bounce[DISK_MAX_BLOCKS * DISK_BLOCK_BYTES] __attribute__((aligned(65536)));
static uint32_t prd[2] __attribute__((aligned(8)));

static struct task tasks[MAX_TASKS];
static struct task idle_task;
static struct frame idle_frame; /* the idle loop's save area (no ESP, SS) */
static struct task *cur_task;
static int ntasks;
static int last_index;
static struct task *fpu_owner;
static uint32_t *cur_pd;

static uint32_t ram_end;   /* end of the RAM the kernel uses */
static uint32_t load_area; /* program files at boot */
static uint32_t pool_next, pool_end;
static uint32_t ticks;
static uint32_t stat_syscalls, stat_disk_reads, stat_interrupts, stat_page_faults;
static uint32_t stat_fpu_switches;

/* the disk: one request in flight, the rest queued */
static struct task *disk_busy;
static struct task *disk_queue_head, *disk_queue_tail;

#define MAX_FILES 64
struct dir_entry {
  char name[24];
  uint32_t first_block;
  uint32_t size;
};
static struct dir_entry dir[MAX_FILES];
static uint32_t dir_count;

/* entry.S, driver.S */
extern const uint32_t trap_entries[48], syscall_entry[1];
extern char idle_loop[], citcat_idle_begin[], citcat_idle_end[];
extern char __kernel_end[];
void resume(struct frame *f) __attribute__((noreturn));
void citcat_driver(void);

/* ---------------------------------------------------------------- the processor */
static inline void outb(uint16_t port, uint8_t v) { __asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port)); }
static inline void outl(uint16_t port, uint32_t v) { __asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port)); }
static inline uint8_t inb(uint16_t port) {
  uint8_t v;
  __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
  return v;
}
static inline uint32_t inl(uint16_t port) {
  uint32_t v;
  __asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
  return v;
}
static inline uint32_t read_cr0(void) {
  uint32_t v;
  __asm__ volatile("movl %%cr0, %0" : "=r"(v));
  return v;
}
static inline void write_cr0(uint32_t v) { __asm__ volatile("movl %0, %%cr0" : : "r"(v) : "memory"); }
static inline uint32_t read_cr2(void) {
  uint32_t v;
  __asm__ volatile("movl %%cr2, %0" : "=r"(v));
  return v;
}
static inline void write_cr3(uint32_t v) { __asm__ volatile("movl %0, %%cr3" : : "r"(v) : "memory"); }

/* ---------------------------------------------------------------- console */
static void console_putc(char c) {
  while (!(inb(UART_LSR) & 0x20)) {
  }
  outb(UART, (uint8_t)c);
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
  outb(CLOCK_POWER_OFF, 1);
  for (;;) __asm__ volatile("cli; hlt");
}

static void panic(const char *what) __attribute__((noreturn));
static void panic(const char *what) {
  kprintf("kernel: panic: %s\n", what);
  power_off();
}

/* ---------------------------------------------------------------- devices */
static void uart_init(void) {
  outb(UART + 1, 0x00); /* IER: no interrupts */
  outb(UART + 3, 0x80); /* DLAB */
  outb(UART + 0, 0x01); /* 115200 baud */
  outb(UART + 1, 0x00);
  outb(UART + 3, 0x03); /* 8N1 */
  outb(UART + 2, 0x07); /* FIFOs on and cleared */
  outb(UART + 4, 0x03); /* DTR, RTS; OUT2 clear: IRQ 4 stays quiet */
}

/* Both 8259As: edge-triggered, vectors 20h-2Fh, cascade on IR2, everything masked until the
   timer is armed. OCW3 leaves register reads on IRR (read_count reads it). */
static void pic_init(void) {
  outb(PIC1, 0x11);
  outb(PIC1 + 1, VEC_IRQ0);
  outb(PIC1 + 1, 0x04);
  outb(PIC1 + 1, 0x01);
  outb(PIC2, 0x11);
  outb(PIC2 + 1, VEC_IRQ0 + 8);
  outb(PIC2 + 1, 0x02);
  outb(PIC2 + 1, 0x01);
  outb(PIC1 + 1, 0xFF);
  outb(PIC2 + 1, 0xFF);
}

/* Channel 0 in mode 2 (rate generator): IRQ 0 every TICK_DIVISOR input clocks. Then IRQ 0, the
   cascade and IRQ 14 (the disk) are unmasked. */
static void timer_arm(void) {
  outb(PIT_CONTROL, 0x34);
  outb(PIT_CH0, TICK_DIVISOR & 0xFF);
  outb(PIT_CH0, TICK_DIVISOR >> 8);
  outb(PIC1 + 1, (uint8_t)~((1 << 0) | (1 << 2)));
  outb(PIC2 + 1, (uint8_t)~(1 << (14 - 8)));
}

static uint8_t cmos_read(uint8_t index) {
  outb(CMOS_INDEX, index);
  return inb(CMOS_DATA);
}

/* The RAM size as the CMOS memory bytes give it (a PC BIOS's), at most MAX_RAM. */
static uint32_t ram_size(void) {
  uint32_t above16 = cmos_read(0x34) | (uint32_t)cmos_read(0x35) << 8; /* 64 KiB units */
  uint32_t extended = cmos_read(0x30) | (uint32_t)cmos_read(0x31) << 8; /* KiB above 1 MiB */
  uint32_t bytes = above16 ? 0x01000000u + above16 * 65536u : 0x00100000u + extended * 1024u;
  return bytes > MAX_RAM ? MAX_RAM : bytes;
}

/* The counter of SYS_COUNT: 8254 input clocks since the timer was armed. The counter counts
   TICK_DIVISOR .. 1 and reloads; a reload whose IRQ 0 is still pending in IRR (the kernel runs
   with interrupts off) is counted here. */
static uint32_t read_count(void) {
  outb(PIT_CONTROL, 0x00); /* latch channel 0 */
  uint32_t c = inb(PIT_CH0);
  c |= (uint32_t)inb(PIT_CH0) << 8;
  uint32_t tick = ticks;
  if ((inb(PIC1) & 1) && c > TICK_DIVISOR / 2) ++tick;
  return tick * TICK_DIVISOR + (TICK_DIVISOR - c);
}

/* ---------------------------------------------------------------- disk */
/* READ DMA of `count` blocks (1..128) into physical `phys` through one PRD entry. */
static void disk_command(uint32_t block, uint32_t count, uint32_t phys) {
  prd[0] = phys;
  prd[1] = ((count * DISK_BLOCK_BYTES) & 0xFFFF) | 0x80000000u; /* 64 KiB is 0; EOT */
  outl(BM_PRD, (uint32_t)prd);
  outb(BM_STATUS, 0x06); /* clear Interrupt and Error */
  outb(BM_COMMAND, 0x08); /* towards memory, stopped */
  outb(ATA + 6, 0xE0 | ((block >> 24) & 0x0F)); /* LBA, device 0 */
  outb(ATA + 2, (uint8_t)count);
  outb(ATA + 3, (uint8_t)block);
  outb(ATA + 4, (uint8_t)(block >> 8));
  outb(ATA + 5, (uint8_t)(block >> 16));
  outb(ATA + 7, 0xC8); /* READ DMA */
  outb(BM_COMMAND, 0x09); /* start */
}

/* After the drive's interrupt: stop the engine, read the status (which drops INTRQ), clear the
   engine's flags. 0 when the transfer went well. */
static int disk_finish(void) {
  uint8_t bm = inb(BM_STATUS);
  outb(BM_COMMAND, 0x00);
  uint8_t st = inb(ATA_STATUS);
  outb(BM_STATUS, 0x06);
  return (st & 0x01) || (bm & 0x02) ? -1 : 0;
}

/* Boot-time read, polling the engine's Interrupt flag (IRQ 14 is still masked). */
static void disk_read_sync(uint32_t block, uint32_t count, void *dst) {
  disk_command(block, count, (uint32_t)dst);
  while (!(inb(BM_STATUS) & 0x04)) {
  }
  if (disk_finish() != 0) panic("disk read failed");
}

static uint32_t be32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Block 0 onwards: "CTDK", version 1, file count, directory blocks; then 32-byte entries
   (name[24], first block, byte size), all big-endian (the R4400 guest's format). */
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
/* Page frames: bump allocation from the end of the load area to the end of RAM; the kernel
   reaches every frame linear = physical. */
static uint32_t alloc_frame(void) {
  if (pool_next + 4096 > pool_end) panic("out of memory");
  uint32_t f = pool_next;
  pool_next += 4096;
  memset((void *)f, 0, 4096);
  return f;
}

/* RAM (but page 0 and the hole) and the reserved area, supervisor-only; the reserved area with
   PCD. Accessed and dirty bits are preset: the walk never writes an entry. */
static void build_kernel_tables(void) {
  for (uint32_t a = 0x1000; a < ram_end; a += 4096) {
    if (a >= HOLE_BASE && a < HOLE_END) continue;
    ram_pt[a >> 22][(a >> 12) & 1023] = a | PTE_P | PTE_W | PTE_A | PTE_D;
  }
  for (uint32_t i = 0; i < (ram_end + 0x3FFFFF) >> 22; ++i) {
    kernel_pd[i] = (uint32_t)ram_pt[i] | PTE_P | PTE_W | PTE_A;
  }
  for (uint32_t off = 0; off < CITCAT_I486_RESERVED_SIZE; off += 4096) {
    uint32_t a = CITCAT_I486_RESERVED_BASE + off;
    reserved_pt[(a >> 12) & 1023] = a | PTE_P | PTE_W | PTE_PCD | PTE_A | PTE_D;
  }
  kernel_pd[CITCAT_I486_RESERVED_BASE >> 22] = (uint32_t)reserved_pt | PTE_P | PTE_W | PTE_A;
}

static void set_pd(uint32_t *pd) {
  if (pd != cur_pd) {
    write_cr3((uint32_t)pd);
    cur_pd = pd;
  }
}

static uint32_t *pte_of(struct task *t, uint32_t va, int create) {
  if (va < USER_BASE || va >= USER_TOP) return 0;
  uint32_t *pde = &t->pd[va >> 22];
  if (!(*pde & PTE_P)) {
    if (!create) return 0;
    *pde = alloc_frame() | PTE_P | PTE_W | PTE_U | PTE_A;
  }
  return &((uint32_t *)(*pde & ~0xFFFu))[(va >> 12) & 1023];
}

/* Maps the page at `va` (a new zeroed frame if it has none) and returns the frame. */
static uint8_t *map_page(struct task *t, uint32_t va, int writable) {
  uint32_t *pte = pte_of(t, va, 1);
  if (!pte) panic("map_page: address out of range");
  if (!(*pte & PTE_P)) *pte = alloc_frame() | PTE_P | PTE_U | PTE_A;
  if (writable) *pte |= PTE_W | PTE_D;
  return (uint8_t *)(*pte & ~0xFFFu);
}

static const struct region *region_of(struct task *t, uint32_t va) {
  for (int i = 0; i < t->nregions; ++i) {
    if (va >= t->regions[i].start && va < t->regions[i].end) return &t->regions[i];
  }
  return 0;
}

/* The kernel's view of user address `va` of task t (any task, whatever CR3 holds), after a
   software walk of its tables; a page of a demand-zero region is made on the spot. 0 when the
   address is not the task's (or not writable, for `write`). */
static uint8_t *user_ptr(struct task *t, uint32_t va, int write) {
  uint32_t *pte = pte_of(t, va, 0);
  if (!pte || !(*pte & PTE_P)) {
    const struct region *r = region_of(t, va);
    if (!r || (write && !r->writable)) return 0;
    map_page(t, va & ~0xFFFu, r->writable);
    pte = pte_of(t, va, 0);
  }
  if (write && !(*pte & PTE_W)) return 0;
  return (uint8_t *)((*pte & ~0xFFFu) + (va & 0xFFF));
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

static void add_region(struct task *t, uint32_t start, uint32_t end, int writable) {
  if (t->nregions == MAX_REGIONS) panic("too many regions");
  t->regions[t->nregions++] = (struct region){start, end, writable};
}

/* Maps one PT_LOAD segment: the pages that hold file bytes now, the rest (bss) on first touch. */
static void load_segment(struct task *t, const uint8_t *img, const struct elf32_phdr *ph) {
  uint32_t va = ph->vaddr, end = ph->vaddr + ph->memsz, file_end = ph->vaddr + ph->filesz;
  int writable = (ph->flags & 2) != 0;
  add_region(t, va & ~0xFFFu, (end + 0xFFF) & ~0xFFFu, writable);
  for (uint32_t p = va & ~0xFFFu; p < file_end; p += 4096) {
    uint8_t *frame = map_page(t, p, writable);
    uint32_t lo = p < va ? va : p, hi = p + 4096 < file_end ? p + 4096 : file_end;
    memcpy(frame + (lo - p), img + ph->offset + (lo - va), hi - lo);
  }
}

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
  uint8_t *img = (uint8_t *)load_area;
  uint32_t blocks = (f->size + DISK_BLOCK_BYTES - 1) / DISK_BLOCK_BYTES;
  for (uint32_t b = 0; b < blocks; b += DISK_MAX_BLOCKS) {
    uint32_t n = blocks - b < DISK_MAX_BLOCKS ? blocks - b : DISK_MAX_BLOCKS;
    disk_read_sync(f->first_block + b, n, img + b * DISK_BLOCK_BYTES);
  }
  const struct elf32_ehdr *eh = (const struct elf32_ehdr *)img;
  if (memcmp(eh->ident, "\177ELF\1\1", 6) != 0 || eh->machine != 3 || eh->type != 2 ||
      eh->phentsize != sizeof(struct elf32_phdr) ||
      eh->phoff + eh->phnum * sizeof(struct elf32_phdr) > f->size) {
    kprintf("kernel: '%s' is not an i386 ELF32 executable\n", name);
    return -1;
  }
  const struct elf32_phdr *ph = (const struct elf32_phdr *)(img + eh->phoff);
  int loads = 0;
  for (int i = 0; i < eh->phnum; ++i) {
    if (ph[i].type != 1 || ph[i].memsz == 0) continue; /* PT_LOAD */
    uint32_t va = ph[i].vaddr, end = ph[i].vaddr + ph[i].memsz;
    if (va < USER_BASE || end > USER_TOP - USER_STACK_SIZE || end < va ||
        ph[i].filesz > ph[i].memsz || ph[i].offset + ph[i].filesz > f->size) {
      kprintf("kernel: '%s' has a segment outside the user space\n", name);
      return -1;
    }
    if (++loads > MAX_REGIONS - 1) {
      kprintf("kernel: '%s' has more than %d segments\n", name, MAX_REGIONS - 1);
      return -1;
    }
  }
  struct task *t = &tasks[ntasks];
  memset(t, 0, sizeof *t);
  t->index = ntasks;
  t->pd = task_pd[ntasks];
  memcpy(t->pd, kernel_pd, 4096); /* the kernel's part is shared, supervisor-only */
  strncpy(t->name, name, sizeof t->name - 1);
  for (int i = 0; i < eh->phnum; ++i) {
    if (ph[i].type == 1 && ph[i].memsz != 0) load_segment(t, img, &ph[i]);
  }
  add_region(t, USER_TOP - USER_STACK_SIZE, USER_TOP, 1);
  t->f.gs = t->f.fs = t->f.es = t->f.ds = USER_DS;
  t->f.eax = (uint32_t)t->index;
  t->f.eip = eh->entry;
  t->f.cs = USER_CS;
  t->f.eflags = EFLAGS_IF | EFLAGS_RESERVED;
  t->f.esp = USER_TOP - 16;
  t->f.ss = USER_DS;
  t->state = T_READY;
  ++ntasks;
  return 0;
}

/* ---------------------------------------------------------------- the FPU */
/* The x87 belongs to one task at a time (fpu_owner); any other task runs with CR0.TS set and
   takes #NM at its first x87 instruction, which moves the FPU over. */
static void set_ts(int on) {
  uint32_t cr0 = read_cr0();
  uint32_t want = on ? cr0 | CR0_TS : cr0 & ~CR0_TS;
  if (want != cr0) write_cr0(want);
}

static void fpu_take(struct task *t) {
  __asm__ volatile("clts");
  if (fpu_owner == t) return;
  if (fpu_owner) __asm__ volatile("fnsave %0" : "=m"(fpu_owner->fpu));
  if (t->fpu_used) {
    __asm__ volatile("frstor %0" : : "m"(t->fpu));
  } else {
    uint16_t cw = TASK_FPU_CW;
    __asm__ volatile("fninit\n\tfldcw %0" : : "m"(cw));
    t->fpu_used = 1;
  }
  fpu_owner = t;
  ++stat_fpu_switches;
}

/* ---------------------------------------------------------------- scheduling */
static struct frame *switch_to(struct task *t) {
  cur_task = t;
  if (t == &idle_task) {
    memset(&idle_frame, 0, sizeof idle_frame);
    idle_frame.gs = idle_frame.fs = idle_frame.es = idle_frame.ds = KERNEL_DS;
    idle_frame.eip = (uint32_t)idle_loop;
    idle_frame.cs = KERNEL_CS;
    idle_frame.eflags = EFLAGS_IF | EFLAGS_RESERVED;
    return &idle_frame;
  }
  tss.esp0 = (uint32_t)(&t->f + 1);
  set_pd(t->pd);
  set_ts(fpu_owner != t);
  return &t->f;
}

static void shutdown(void) __attribute__((noreturn));
static void shutdown(void) {
  int failed = 0;
  for (int i = 0; i < ntasks; ++i) failed += tasks[i].exit_code != 0;
  for (int i = 0; i < ntasks; ++i) {
    const struct task *t = &tasks[i];
    kprintf("kernel: task %d (%s): exit %d, %u ticks", i, t->name, t->exit_code, t->ticks_run);
    if (t->reported) kprintf(", report 0x%08x%08x", t->report_hi, t->report_lo);
    kprintf("\n");
  }
  kprintf("kernel: idle: %u ticks\n", idle_task.ticks_run);
  kprintf("kernel: all %d tasks done (%d failed), %u ticks, %u interrupts, %u syscalls, "
          "%u disk reads, %u page faults, %u FPU switches; power off\n",
          ntasks, failed, ticks, stat_interrupts, stat_syscalls, stat_disk_reads,
          stat_page_faults, stat_fpu_switches);
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

static const char *exception_name(uint32_t vector) {
  switch (vector) {
    case 0: return "divide error";
    case 1: return "debug";
    case 3: return "breakpoint";
    case 4: return "overflow";
    case 5: return "bound range";
    case 6: return "invalid opcode";
    case 7: return "device not available";
    case 8: return "double fault";
    case 10: return "invalid TSS";
    case 11: return "segment not present";
    case 12: return "stack fault";
    case 13: return "general protection";
    case 14: return "page fault";
    case 16: return "floating-point error";
    case 17: return "alignment check";
    default: return "exception";
  }
}

/* ---------------------------------------------------------------- disk requests */
static void disk_start(struct task *t) {
  disk_busy = t;
  disk_command(t->io_block, t->io_count, (uint32_t)bounce);
}

static void disk_interrupt(void) {
  int ok = disk_finish() == 0;
  struct task *t = disk_busy;
  disk_busy = 0;
  if (t) {
    uint32_t len = t->io_count * DISK_BLOCK_BYTES;
    int32_t ret = ERR_IO;
    if (ok) ret = copy_to_user(t, t->io_ubuf, bounce, len) == 0 ? (int32_t)t->io_count : ERR_FAULT;
    t->f.eax = (uint32_t)ret;
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

/* ---------------------------------------------------------------- interrupts */
/* Whether IRQ 7 (or 15) was real: a spurious one sets no ISR bit. */
static int in_service(uint16_t pic, int level) {
  outb(pic, 0x0B); /* OCW3: read ISR */
  uint8_t isr = inb(pic);
  outb(pic, 0x0A); /* back to IRR */
  return (isr >> level) & 1;
}

/* Returns nonzero when the running task must give up the processor. */
static int irq(int n) {
  ++stat_interrupts;
  if ((n == 7 || n == 15) && !in_service(n == 7 ? PIC1 : PIC2, 7)) {
    if (n == 15) outb(PIC1, 0x20); /* the master did acknowledge the cascade */
    return 0;
  }
  int resched = 0;
  if (n == 0) {
    ++ticks;
    ++cur_task->ticks_run;
    for (int i = 0; i < ntasks; ++i) {
      if (tasks[i].state == T_SLEEPING && (int32_t)(ticks - tasks[i].wake_tick) >= 0) {
        tasks[i].state = T_READY;
      }
    }
    resched = 1; /* round robin */
  } else if (n == 14) {
    disk_interrupt();
  }
  if (n >= 8) outb(PIC2, 0x20);
  outb(PIC1, 0x20);
  return resched;
}

/* ---------------------------------------------------------------- system calls */
static int do_syscall(struct task *t) {
  uint32_t nr = t->f.eax, a0 = t->f.ebx, a1 = t->f.ecx, a2 = t->f.edx;
  int32_t ret = 0;
  int resched = 0;
  ++stat_syscalls;
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
      ret = done == a1 ? (int32_t)done : ERR_FAULT;
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
      return 1; /* EAX is set when the transfer completes */
    case SYS_YIELD:
      resched = 1;
      break;
    case SYS_SLEEP:
      t->wake_tick = ticks + (a0 ? a0 : 1);
      t->state = T_SLEEPING;
      resched = 1;
      break;
    case SYS_CLOCK:
      ret = (int32_t)inl(CLOCK_MICROS);
      break;
    case SYS_COUNT:
      ret = (int32_t)read_count();
      break;
    case SYS_RANDOM:
      ret = (int32_t)inl(CLOCK_ENTROPY);
      break;
    case SYS_TICKS:
      ret = (int32_t)ticks;
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
    case SYS_REPORT:
      /* The i486 contract has no reserved area for it: the kernel keeps the value for the
         summary it prints at the end. */
      t->report_lo = a0;
      t->report_hi = a1;
      t->reported = 1;
      break;
    default:
      ret = ERR_NOSYS;
      break;
  }
  t->f.eax = (uint32_t)ret;
  return resched;
}

/* ---------------------------------------------------------------- faults */
/* A page fault of a task: a page of a demand-zero region that is not there yet is made (zeroed)
   and the instruction runs again. Anything else ends the task. */
static int page_fault(struct task *t, uint32_t error) {
  uint32_t va = read_cr2();
  const struct region *r = region_of(t, va);
  if (!(error & 1) && r && (r->writable || !(error & 2))) {
    map_page(t, va & ~0xFFFu, r->writable);
    ++stat_page_faults;
    return 0;
  }
  kprintf("kernel: task %d (%s) killed: page fault (%s %s) at eip 0x%08x, address 0x%08x\n",
          t->index, t->name, error & 1 ? "protection," : "not present,",
          error & 2 ? "write" : "read", t->f.eip, va);
  task_end(t, 128 + 14);
  return 1;
}

static int fault(struct task *t, uint32_t vector) {
  if (vector == 7) {
    fpu_take(t);
    return 0;
  }
  if (vector == 14) return page_fault(t, t->f.error);
  kprintf("kernel: task %d (%s) killed: %s at eip 0x%08x, error code 0x%x\n", t->index, t->name,
          exception_name(vector), t->f.eip, t->f.error);
  task_end(t, 128 + (int)vector);
  return 1;
}

/* ---------------------------------------------------------------- the trap entry */
struct frame *kernel_trap(struct frame *f) {
  struct task *t = cur_task;
  uint32_t v = f->vector;
  int from_user = (f->cs & 3) == 3;
  int resched = 0;
  if (!from_user && f != &idle_frame) {
    kprintf("kernel: panic: %s (vector %u) in the kernel at eip 0x%08x, error code 0x%x, "
            "cr2 0x%08x\n",
            exception_name(v), v, f->eip, f->error, read_cr2());
    power_off();
  }
  if (v >= VEC_IRQ0 && v < VEC_IRQ0 + 16) {
    resched = irq((int)(v - VEC_IRQ0));
  } else if (v == VEC_SYSCALL && from_user) {
    resched = do_syscall(t);
  } else if (from_user) {
    resched = fault(t, v);
  } else {
    panic("exception in the idle loop");
  }
  if (t == &idle_task || t->state != T_READY) resched = 1;
  if (resched) t = schedule();
  return switch_to(t);
}

/* ---------------------------------------------------------------- boot */
static void set_gate(int vector, uint32_t handler, int dpl) {
  uint32_t lo = (handler & 0xFFFF) | (uint32_t)KERNEL_CS << 16;
  uint32_t hi = (handler & 0xFFFF0000u) | 0x8E00 | (uint32_t)dpl << 13; /* 32-bit interrupt gate */
  idt[vector] = (uint64_t)hi << 32 | lo;
}

static void init_tables(void) {
  for (int v = 0; v < 48; ++v) set_gate(v, trap_entries[v], 0);
  set_gate(VEC_SYSCALL, syscall_entry[0], 3);
  struct {
    uint16_t limit;
    uint32_t base;
  } __attribute__((packed)) idt_ptr = {sizeof idt - 1, (uint32_t)idt};
  __asm__ volatile("lidt %0" : : "m"(idt_ptr));

  tss.ss0 = KERNEL_DS;
  tss.esp0 = (uint32_t)kstack + KSTACK_SIZE;
  tss.iomap = sizeof tss; /* no I/O bitmap: IOPL 0 keeps ring 3 off the ports */
  uint32_t base = (uint32_t)&tss, limit = sizeof tss - 1;
  uint32_t lo = (limit & 0xFFFF) | (base & 0xFFFF) << 16;
  uint32_t hi = ((base >> 16) & 0xFF) | 0x8900 | (limit & 0xF0000) | (base & 0xFF000000u);
  gdt[TSS_SEL >> 3] = (uint64_t)hi << 32 | lo;
  __asm__ volatile("ltr %w0" : : "r"(TSS_SEL));
}

void kernel_main(void) {
  uart_init();
  pic_init();
  init_tables();
  ram_end = ram_size();
  load_area = ((uint32_t)__kernel_end + 0xFFF) & ~0xFFFu;
  pool_next = load_area + LOAD_AREA_SIZE;
  pool_end = ram_end;
  build_kernel_tables();
  set_pd(kernel_pd);
  write_cr0(KERNEL_CR0);

  char args[I486_BOOT_ARGS_SIZE + 1];
  memcpy(args, (const void *)(I486_BOOT_BLOCK + I486_BOOT_ARGS_OFFSET), I486_BOOT_ARGS_SIZE);
  args[I486_BOOT_ARGS_SIZE] = 0;
  const char *list = args[0] ? args : CITCAT_DEFAULT_MIX;
  kprintf("kernel: CITCAT i486 guest kernel, %u MiB, programs: %s\n", ram_end >> 20, list);
  if (pool_next + 0x100000 > pool_end) panic("not enough RAM");

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

  idle_task.index = -1;
  cur_task = &idle_task;
  last_index = ntasks - 1; /* the first program runs first */
  timer_arm();

  /* Begin of trace: the driver returns here, at the resume point, with paging and the cache on
     again and every register as it was. */
  citcat_driver();

  resume(switch_to(schedule()));
}
