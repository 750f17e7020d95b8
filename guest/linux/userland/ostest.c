/* ostest: the operating system under a workload: fork, exec and waitpid (of /bin/true and of
   /bin/sh -c with an exit code), a pipe between a parent and two children, a file on /tmp
   (open, write, lseek, read, fstat, rename, unlink), and printf of doubles (the x87 in both
   processes). Each step folds what it saw into a checksum that does not depend on pids, times
   or addresses, so every run on every kernel prints the same "ostest: checksum 0x... ok". */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define OSTEST_EXPECTED 0x45cd42f9u /* the checksum of a correct run (ostest's own known answer) */

static uint32_t sum = 0x811C9DC5u;
static int failures;

static void mix(uint32_t v) {
  sum ^= v;
  sum *= 0x01000193u;
  sum ^= sum >> 15;
}
static void mix_bytes(const char *p, size_t n) {
  for (size_t i = 0; i < n; ++i) mix((uint8_t)p[i]);
}
static void check(int ok, const char *what) {
  if (!ok) {
    printf("ostest: %s failed (errno %d)\n", what, errno);
    ++failures;
  }
  mix((uint32_t)ok);
}

/* fork + exec + waitpid: the child's exit status comes back through the kernel. */
static void run(const char *path, char *const argv[], int expect) {
  pid_t pid = fork();
  if (pid == 0) {
    execv(path, argv);
    _exit(127);
  }
  check(pid > 0, "fork");
  int status = 0;
  check(waitpid(pid, &status, 0) == pid, "waitpid");
  check(WIFEXITED(status) && WEXITSTATUS(status) == expect, path);
  mix((uint32_t)WEXITSTATUS(status));
}

/* Two children write into one pipe, the parent reads until both have closed it. */
static void pipes(void) {
  int fd[2];
  check(pipe(fd) == 0, "pipe");
  for (int c = 0; c < 2; ++c) {
    if (fork() == 0) {
      close(fd[0]);
      char line[64];
      for (int i = 0; i < 200; ++i) {
        int n = snprintf(line, sizeof line, "child %d line %03d %g\n", c, i, i / 8.0);
        if (write(fd[1], line, (size_t)n) != n) _exit(1);
      }
      _exit(0);
    }
  }
  close(fd[1]);
  char buf[512];
  size_t total = 0;
  uint32_t lines = 0;
  ssize_t n;
  while ((n = read(fd[0], buf, sizeof buf)) > 0) {
    total += (size_t)n;
    for (ssize_t i = 0; i < n; ++i) lines += buf[i] == '\n';
  }
  close(fd[0]);
  for (int c = 0; c < 2; ++c) {
    int status;
    check(wait(&status) > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0, "wait");
  }
  check(lines == 400, "pipe lines");
  mix((uint32_t)total);
}

/* A file on /tmp: write, seek back, read, overwrite in the middle, stat, rename, unlink. */
static void files(void) {
  const char *path = "/tmp/ostest.dat", *moved = "/tmp/ostest.moved";
  int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
  check(fd >= 0, "open");
  char block[1024];
  for (int i = 0; i < 64; ++i) {
    for (size_t k = 0; k < sizeof block; ++k) block[k] = (char)('a' + (i + k) % 26);
    check(write(fd, block, sizeof block) == (ssize_t)sizeof block, "write");
  }
  check(lseek(fd, 30000, SEEK_SET) == 30000, "lseek");
  check(write(fd, "CITCAT", 6) == 6, "write in the middle");
  check(lseek(fd, 29990, SEEK_SET) == 29990, "lseek back");
  char got[32];
  check(read(fd, got, sizeof got) == (ssize_t)sizeof got, "read");
  mix_bytes(got, sizeof got);
  struct stat st;
  check(fstat(fd, &st) == 0 && st.st_size == 64 * 1024, "fstat");
  close(fd);
  check(rename(path, moved) == 0, "rename");
  check(access(path, F_OK) != 0 && access(moved, R_OK) == 0, "access");
  FILE *f = fopen(moved, "r");
  check(f != NULL, "fopen");
  uint32_t letters = 0;
  for (int c; f && (c = getc(f)) != EOF;) letters += c == 'q';
  if (f) fclose(f);
  mix(letters);
  check(unlink(moved) == 0, "unlink");
  check(access(moved, F_OK) != 0, "gone");
}

int main(void) {
  char *true_argv[] = {"true", NULL};
  char *sh_argv[] = {"sh", "-c", "exit 42", NULL};
  for (int i = 0; i < 4; ++i) run("/bin/true", true_argv, 0);
  run("/bin/sh", sh_argv, 42);
  pipes();
  files();
  /* printf of doubles in the parent and in a child: the x87 state of two processes. */
  char text[128];
  double x = 1.0;
  for (int i = 0; i < 20; ++i) x = x * 1.5 + 0.25;
  int n = snprintf(text, sizeof text, "%.6f %e %g", x, x / 3.0, 1.0 / 7.0);
  mix_bytes(text, (size_t)n);
  pid_t pid = fork();
  if (pid == 0) {
    double y = 2.0;
    for (int i = 0; i < 10; ++i) y = y * 1.25 + 0.5;
    printf("ostest: child %.4f\n", y);
    fflush(stdout);
    _exit(0);
  }
  int status;
  check(waitpid(pid, &status, 0) == pid && WIFEXITED(status), "printf child");
  printf("ostest: parent %s\n", text);
  if (failures || sum != OSTEST_EXPECTED) {
    printf("ostest: checksum 0x%08x BAD, expected 0x%08x (%d failed)\n", sum, OSTEST_EXPECTED,
           failures);
    return 1;
  }
  printf("ostest: checksum 0x%08x ok\n", sum);
  return 0;
}
