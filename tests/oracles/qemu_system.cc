#include "tests/oracles/qemu_system.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"

extern char** environ;

namespace citcat::oracle {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void Nap() {
  const timespec ts{0, 2'000'000};
  nanosleep(&ts, nullptr);
}

}  // namespace

std::string FindQemuSystemMips() { return FindOnPath("qemu-system-mips64"); }

absl::StatusOr<QemuSystemRun> RunQemuSystem(const QemuSystemOptions& options,
                                            const QemuLogParser::Sink& sink) {
  const std::string qemu = FindQemuSystemMips();
  if (qemu.empty()) return absl::NotFoundError("qemu-system-mips64 not found on PATH");
  if (options.rom.empty() || options.rom.size() > kMipssimRomBytes) {
    return absl::InvalidArgumentError("the ROM must be 1 byte .. 4 MB");
  }
  const std::string rom = options.work_dir + "/rom.bin";
  const std::string fifo = options.work_dir + "/qemu.log";
  const std::string err = options.work_dir + "/qemu.err";
  {
    std::ofstream out(rom, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(options.rom.data()),
              static_cast<std::streamsize>(options.rom.size()));
    if (!out) return absl::InternalError(absl::StrCat("cannot write ", rom));
  }
  unlink(fifo.c_str());
  if (mkfifo(fifo.c_str(), 0600) != 0) {
    return absl::InternalError(absl::StrCat("cannot create the pipe ", fifo));
  }
  // Open our end first, without blocking: QEMU's open for writing then succeeds at once.
  const int fd = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  if (fd < 0) return absl::InternalError(absl::StrCat("cannot open ", fifo));

  std::vector<std::string> argv = {qemu,           "-M",      "mipssim",
                                   "-cpu",         "R4000",   "-m",
                                   "64",           "-bios",   rom,
                                   "-display",     "none",    "-monitor",
                                   "none",         "-serial", "null",
                                   "-semihosting", "-icount", "shift=0,sleep=off",
                                   "-singlestep",  "-d",      "cpu,exec,int,nochain",
                                   "-D",           fifo};
  std::vector<char*> cargv;
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid;
  const int rc = posix_spawn(&pid, qemu.c_str(), &actions, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    close(fd);
    return absl::InternalError(absl::StrCat("cannot start ", qemu, ": error ", rc));
  }

  QemuSystemRun run;
  QemuLogParser parser([&](const QemuState& s) {
    ++run.states;
    return sink(s);
  });
  absl::Status status;
  std::string buffer;
  std::vector<char> chunk(1 << 20);
  bool exited = false;
  int wait_status = 0;
  size_t scan = 0;
  while (status.ok()) {
    const ssize_t n = read(fd, chunk.data(), chunk.size());
    if (n > 0) {
      buffer.append(chunk.data(), static_cast<size_t>(n));
      size_t start = 0;
      for (size_t nl; status.ok() && (nl = buffer.find('\n', scan)) != std::string::npos;) {
        status = parser.Line(std::string_view(buffer).substr(start, nl - start));
        start = scan = nl + 1;
      }
      buffer.erase(0, start);
      scan = buffer.size();
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) {
      status = absl::InternalError("reading the QEMU log failed");
      break;
    }
    // Nothing to read: either QEMU is still starting or running, or it has ended.
    if (exited) break;
    if (waitpid(pid, &wait_status, WNOHANG) == pid) {
      exited = true;  // one more pass drains what it wrote last
      continue;
    }
    Nap();
  }
  if (status.ok() && !buffer.empty()) status = parser.Line(buffer);
  if (status.ok()) status = parser.Finish();
  if (!exited) {
    if (absl::IsCancelled(status)) run.stopped = true;
    kill(pid, SIGKILL);  // the sink has seen enough, or the log was bad
    while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
    }
  }
  close(fd);
  unlink(fifo.c_str());
  run.errors = ReadFile(err);
  if (WIFEXITED(wait_status)) run.exit_code = WEXITSTATUS(wait_status);
  if (absl::IsCancelled(status)) {
    run.stopped = true;
    return run;
  }
  if (!status.ok()) {
    return absl::Status(status.code(),
                        absl::StrCat(status.message(), " (qemu stderr: ", run.errors, ")"));
  }
  return run;
}

}  // namespace citcat::oracle
