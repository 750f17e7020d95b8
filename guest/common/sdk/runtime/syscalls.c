/* The system calls newlib is built to call (write read open close lseek fstat isatty sbrk kill
   getpid _exit gettimeofday times unlink link), mapped onto the CITCAT guest kernels (R4400,
   i486):
   fds 0..2 are the console (reads see end of file), files on the disk image open read-only
   through its directory (SYS_FILE) and are read block by block (SYS_READ, disk DMA), the heap is
   a bss array (heap.c), exit codes go to SYS_EXIT. Errors set errno as POSIX says. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/times.h>
#include <unistd.h>

#include "citcat_sdk.h"

#include "../syscall_stubs.inc"

int main(int argc, char **argv);
void __citcat_start(void) __attribute__((noreturn));
void __citcat_start(void) {
  static char name[] = "program";
  static char *argv[] = {name, 0};
  exit(main(1, argv));
}

void _exit(int code) {
  syscall4(SYS_EXIT, code, 0, 0, 0);
  for (;;) {
  }
}

/* ---- files: the console and the disk image's directory ---- */
enum { kConsoleFds = 3, kMaxFiles = 8 };
struct open_file {
  int used;
  uint32_t first_block, size, pos;
};
static struct open_file files[kMaxFiles];
/* The last block read, for reads smaller than a block (stdio's are BUFSIZ bytes). */
static uint8_t block[DISK_BLOCK_BYTES] __attribute__((aligned(8)));
static uint32_t block_number = UINT32_MAX;

static struct open_file *file_of(int fd) {
  if (fd < kConsoleFds || fd >= kConsoleFds + kMaxFiles || !files[fd - kConsoleFds].used) {
    return 0;
  }
  return &files[fd - kConsoleFds];
}

int open(const char *path, int flags, ...) {
  if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC))) {
    errno = EROFS;
    return -1;
  }
  while (*path == '/') ++path; /* the directory is flat */
  struct file_info fi;
  if (strlen(path) >= 24 || file_info(path, &fi) != 0) {
    errno = ENOENT;
    return -1;
  }
  for (int i = 0; i < kMaxFiles; ++i) {
    if (!files[i].used) {
      files[i] = (struct open_file){1, fi.first_block, fi.size, 0};
      return kConsoleFds + i;
    }
  }
  errno = EMFILE;
  return -1;
}

int close(int fd) {
  struct open_file *f = file_of(fd);
  if (f) {
    f->used = 0;
    return 0;
  }
  if (fd >= 0 && fd < kConsoleFds) return 0;
  errno = EBADF;
  return -1;
}

_READ_WRITE_RETURN_TYPE read(int fd, void *buf, size_t len) {
  if (fd >= 0 && fd < kConsoleFds) return 0; /* no console input */
  struct open_file *f = file_of(fd);
  if (!f) {
    errno = EBADF;
    return -1;
  }
  uint8_t *out = buf;
  size_t done = 0;
  if (len > f->size - f->pos) len = f->size - f->pos;
  while (done < len) {
    uint32_t b = f->pos / DISK_BLOCK_BYTES, offset = f->pos % DISK_BLOCK_BYTES;
    size_t left = len - done;
    if (offset == 0 && left >= DISK_BLOCK_BYTES) {
      /* whole blocks straight into the caller's buffer */
      uint32_t n = left / DISK_BLOCK_BYTES;
      if (n > DISK_MAX_BLOCKS) n = DISK_MAX_BLOCKS;
      if (read_blocks(f->first_block + b, n, out + done) != (long)n) break;
      done += n * DISK_BLOCK_BYTES;
      f->pos += n * DISK_BLOCK_BYTES;
      continue;
    }
    if (block_number != f->first_block + b) {
      block_number = UINT32_MAX;
      if (read_blocks(f->first_block + b, 1, block) != 1) break;
      block_number = f->first_block + b;
    }
    size_t n = DISK_BLOCK_BYTES - offset;
    if (n > left) n = left;
    memcpy(out + done, block + offset, n);
    done += n;
    f->pos += n;
  }
  if (done == 0 && len != 0) {
    errno = EIO;
    return -1;
  }
  return (_READ_WRITE_RETURN_TYPE)done;
}

_READ_WRITE_RETURN_TYPE write(int fd, const void *buf, size_t len) {
  if (fd != 1 && fd != 2) {
    errno = fd >= 0 && fd < kConsoleFds + kMaxFiles ? EROFS : EBADF;
    return -1;
  }
  const char *p = buf;
  size_t done = 0;
  while (done < len) { /* the kernel takes at most 64 KiB a call */
    size_t n = len - done < 65536 ? len - done : 65536;
    if (syscall4(SYS_WRITE, (long)(p + done), (long)n, 0, 0) != (long)n) {
      errno = EFAULT;
      return -1;
    }
    done += n;
  }
  return (_READ_WRITE_RETURN_TYPE)len;
}

off_t lseek(int fd, off_t offset, int whence) {
  struct open_file *f = file_of(fd);
  if (!f) {
    errno = fd >= 0 && fd < kConsoleFds ? ESPIPE : EBADF;
    return -1;
  }
  off_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? (off_t)f->pos : (off_t)f->size;
  if ((whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END) || base + offset < 0) {
    errno = EINVAL;
    return -1;
  }
  f->pos = (uint32_t)(base + offset);
  return base + offset;
}

int fstat(int fd, struct stat *st) {
  memset(st, 0, sizeof *st);
  if (fd >= 0 && fd < kConsoleFds) {
    st->st_mode = S_IFCHR;
    return 0;
  }
  struct open_file *f = file_of(fd);
  if (!f) {
    errno = EBADF;
    return -1;
  }
  st->st_mode = S_IFREG | 0444;
  st->st_size = (off_t)f->size;
  st->st_blksize = DISK_BLOCK_BYTES;
  return 0;
}

int stat(const char *path, struct stat *st) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return -1;
  int r = fstat(fd, st);
  close(fd);
  return r;
}

/* The console is a terminal: stdout is line-buffered, so output appears as it is printed. */
int isatty(int fd) {
  if (fd >= 0 && fd < kConsoleFds) return 1;
  errno = file_of(fd) ? ENOTTY : EBADF;
  return 0;
}

int unlink(const char *path) {
  (void)path;
  errno = EROFS;
  return -1;
}

int link(const char *from, const char *to) {
  (void)from;
  (void)to;
  errno = EROFS;
  return -1;
}

/* ---- memory ---- */
extern char __citcat_heap[];
extern const unsigned long __citcat_heap_bytes;

void *sbrk(ptrdiff_t increment) {
  static unsigned long used;
  if (increment < 0 ? (unsigned long)-increment > used
                    : (unsigned long)increment > __citcat_heap_bytes - used) {
    errno = ENOMEM;
    return (void *)-1;
  }
  void *old = __citcat_heap + used;
  used += increment;
  return old;
}

/* ---- processes and time ---- */
int getpid(void) { return 1; }

/* abort() and raise() end here: the task exits as a shell reports a signal (128 + number). */
int kill(int pid, int sig) {
  if (pid != 1) {
    errno = ESRCH;
    return -1;
  }
  _exit(128 + sig);
}

int gettimeofday(struct timeval *tv, void *tz) {
  (void)tz;
  uint32_t us = clock_us();
  tv->tv_sec = us / 1000000u;
  tv->tv_usec = us % 1000000u;
  return 0;
}

clock_t times(struct tms *t) {
  clock_t now = (clock_t)ticks();
  if (t) *t = (struct tms){now, 0, 0, 0};
  return now;
}
