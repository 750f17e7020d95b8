#include "tests/oracles/qemu_trace.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

extern char** environ;

namespace citcat::oracle {
namespace {

bool ParseHex(std::string_view s, uint64_t* out) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  if (s.empty() || s.size() > 16) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, 16);
  return ec == std::errc() && ptr == s.data() + s.size();
}

bool ParseDec(std::string_view s, uint64_t* out) {
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, 10);
  return ec == std::errc() && ptr == s.data() + s.size() && !s.empty();
}

// Whitespace-separated tokens of one line (at most `max`, the rest ignored).
int Tokenize(std::string_view line, std::string_view* tok, int max) {
  int n = 0;
  size_t i = 0;
  while (n < max) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    if (i >= line.size()) break;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    tok[n++] = line.substr(start, i - start);
  }
  return n;
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

}  // namespace

class QemuLogParser::Impl {
 public:
  explicit Impl(Sink sink) : sink_(std::move(sink)) {}

  absl::Status Error(std::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("QEMU log line ", line_no_, ": ", std::string(what)));
  }

  absl::Status Line(std::string_view line) {
    ++line_no_;
    std::string_view t[12];
    if (StartsWith(line, "pc=")) {
      if (absl::Status s = Finish(); !s.ok()) return s;
      in_block_ = true;
      dropped_ = false;
      block_line_ = line_no_;
      cur_ = QemuState();
      if (pending_exception_) {
        cur_.exception_before = true;
        cur_.exception = exception_;
        pending_exception_ = false;
      }
      gpr_rows_ = 0;
      cp0_ = false;
      fpr_seen_ = 0;
      // pc=0x... HI=0x... LO=0x... ds HFLAGS BTARGET BCOND
      const int n = Tokenize(line, t, 12);
      if (n < 4 || !StartsWith(t[1], "HI=") || !StartsWith(t[2], "LO=") ||
          !ParseHex(t[0].substr(3), &cur_.pc) || !ParseHex(t[1].substr(3), &cur_.hi) ||
          !ParseHex(t[2].substr(3), &cur_.lo)) {
        return Error("malformed pc line");
      }
      if (n >= 5 && t[3] == "ds") {
        uint64_t hf;
        if (!ParseHex(t[4], &hf)) return Error("malformed hflags");
        cur_.hflags = static_cast<uint32_t>(hf);
        uint64_t bcond;
        if (n < 7 || !ParseHex(t[5], &cur_.btarget) || !ParseDec(t[6], &bcond)) {
          return Error("malformed branch state");
        }
        cur_.bcond = static_cast<uint32_t>(bcond);
      }
      return absl::OkStatus();
    }
    if (StartsWith(line, "mips_cpu_do_interrupt: PC")) {
      // mips_cpu_do_interrupt: PC <vector> EPC <epc> cause <n>
      const int n = Tokenize(line, t, 12);
      uint64_t code;
      exception_ = QemuException();
      if (n != 7 || t[3] != "EPC" || t[5] != "cause" || !ParseHex(t[2], &exception_.vector) ||
          !ParseHex(t[4], &exception_.epc) || !ParseDec(t[6], &code)) {
        return Error("malformed exception line");
      }
      exception_.qemu_code = static_cast<int>(code);
      awaiting_exception_state_ = true;
      return absl::OkStatus();
    }
    if (awaiting_exception_state_ && StartsWith(line, "    S ")) {
      // S <status> C <cause> A <badvaddr> D <depc>
      const int n = Tokenize(line, t, 12);
      uint64_t status, cause;
      if (n != 8 || t[2] != "C" || t[4] != "A" || !ParseHex(t[1], &status) ||
          !ParseHex(t[3], &cause) || !ParseHex(t[5], &exception_.bad_vaddr)) {
        return Error("malformed exception state line");
      }
      exception_.status = static_cast<uint32_t>(status);
      exception_.cause = static_cast<uint32_t>(cause);
      awaiting_exception_state_ = false;
      pending_exception_ = true;
      return absl::OkStatus();
    }
    if (StartsWith(line, "Stopped execution of TB chain before")) {
      dropped_ = in_block_;  // logged, but icount ended the slice before it ran
      return absl::OkStatus();
    }
    if (!in_block_) return absl::OkStatus();  // QEMU chatter outside state blocks
    if (StartsWith(line, "GPR")) {
      // GPRnn: name val name val name val name val
      const int n = Tokenize(line, t, 12);
      uint64_t first;
      if (n != 9 || t[0].size() != 6 || !ParseDec(t[0].substr(3, 2), &first) || first % 4 != 0 ||
          first > 28) {
        return Error("malformed GPR line");
      }
      for (int k = 0; k < 4; ++k) {
        if (!ParseHex(t[2 + 2 * k], &cur_.gpr[first + k])) return Error("malformed GPR value");
      }
      cur_.gpr64 = t[2].size() > 8;
      gpr_rows_ |= 1u << (first / 4);
      return absl::OkStatus();
    }
    if (StartsWith(line, "CP0 Status")) {
      const int n = Tokenize(line, t, 12);
      if (n < 7 || t[3] != "Cause" || t[5] != "EPC" || !ParseHex(t[2], &cur_.cp0_status) ||
          !ParseHex(t[4], &cur_.cp0_cause) || !ParseHex(t[6], &cur_.cp0_epc)) {
        return Error("malformed CP0 line");
      }
      cp0_ = true;
      return absl::OkStatus();
    }
    if (StartsWith(line, "CP1 FCR0")) {
      // CP1 FCR0 0x... FCR31 0x... SR.FR d fp_status 0x..
      const int n = Tokenize(line, t, 12);
      uint64_t fcr0, fcr31, fr;
      if (n < 7 || t[3] != "FCR31" || t[5] != "SR.FR" || !ParseHex(t[2], &fcr0) ||
          !ParseHex(t[4], &fcr31) || !ParseDec(t[6], &fr) || fr > 1) {
        return Error("malformed CP1 line");
      }
      cur_.has_fpu = true;
      cur_.fcr0 = static_cast<uint32_t>(fcr0);
      cur_.fcr31 = static_cast<uint32_t>(fcr31);
      cur_.fr = fr == 1;
      return absl::OkStatus();
    }
    if (cur_.has_fpu) {
      // " f0: w:XXXXXXXX d:XXXXXXXXXXXXXXXX fd: ..."
      const int n = Tokenize(line, t, 3);
      if (n == 3 && t[0].size() >= 3 && t[0][0] == 'f' && t[0].back() == ':' &&
          StartsWith(t[2], "d:")) {
        uint64_t reg, d;
        if (!ParseDec(t[0].substr(1, t[0].size() - 2), &reg) || reg > 31 ||
            !ParseHex(t[2].substr(2), &d)) {
          return Error("malformed FPU register line");
        }
        if (cur_.fr) {
          cur_.fgr[reg] = d;
        } else {
          if (reg % 2 != 0) return Error("odd FPU register printed with FR=0");
          cur_.fgr[reg] = d & 0xFFFFFFFFull;
          cur_.fgr[reg + 1] = d >> 32;
        }
        fpr_seen_ |= 1u << reg;
        return absl::OkStatus();
      }
    }
    return absl::OkStatus();  // Config, LLAddr and other lines we do not use
  }

  absl::Status Finish() {
    if (!in_block_) return absl::OkStatus();
    in_block_ = false;
    const auto incomplete = [&](std::string_view what) {
      return absl::InvalidArgumentError(absl::StrCat("QEMU log: state block starting at line ",
                                                     block_line_, " lacks ", std::string(what)));
    };
    if (gpr_rows_ != 0xFF) return incomplete("GPR rows");
    if (!cp0_) return incomplete("the CP0 line");
    if (cur_.has_fpu) {
      const uint32_t want = cur_.fr ? 0xFFFFFFFFu : 0x55555555u;
      if (fpr_seen_ != want) return incomplete("FPU registers");
    }
    if (dropped_) {
      // It runs again later: so does the exception entry that led to it.
      if (cur_.exception_before && !pending_exception_) {
        exception_ = cur_.exception;
        pending_exception_ = true;
      }
      return absl::OkStatus();
    }
    if (!sink_(cur_)) return absl::CancelledError("stopped by the consumer");
    return absl::OkStatus();
  }

 private:
  Sink sink_;
  QemuException exception_;
  bool awaiting_exception_state_ = false;
  bool pending_exception_ = false;
  bool dropped_ = false;
  QemuState cur_;
  bool in_block_ = false;
  bool cp0_ = false;
  uint32_t gpr_rows_ = 0;
  uint32_t fpr_seen_ = 0;
  size_t line_no_ = 0;
  size_t block_line_ = 0;
};

QemuLogParser::QemuLogParser(Sink sink) : impl_(std::make_unique<Impl>(std::move(sink))) {}
QemuLogParser::~QemuLogParser() = default;
absl::Status QemuLogParser::Line(std::string_view line) { return impl_->Line(line); }
absl::Status QemuLogParser::Finish() { return impl_->Finish(); }

namespace {

std::string ReadWholeFile(const std::string& path, bool* ok) {
  std::ifstream in(path, std::ios::binary);
  *ok = static_cast<bool>(in);
  if (!in) return {};
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string TempPath(std::string_view stem) {
  const char* dir = std::getenv("TMPDIR");
  std::string tmpl =
      absl::StrCat(dir != nullptr && *dir ? dir : "/tmp", "/citcat-", std::string(stem), "-XXXXXX");
  const int fd = mkstemp(tmpl.data());
  if (fd < 0) return {};
  close(fd);
  return tmpl;
}

}  // namespace

absl::StatusOr<QemuTrace> QemuTrace::Parse(std::string_view log) {
  QemuTrace trace;
  QemuLogParser parser([&](const QemuState& s) {
    trace.states_.push_back(s);
    return true;
  });
  size_t pos = 0;
  while (pos < log.size()) {
    size_t end = log.find('\n', pos);
    if (end == std::string_view::npos) end = log.size();
    if (absl::Status s = parser.Line(log.substr(pos, end - pos)); !s.ok()) return s;
    pos = end + 1;
  }
  if (absl::Status s = parser.Finish(); !s.ok()) return s;
  return trace;
}

absl::StatusOr<QemuTrace> QemuTrace::ParseFile(const std::string& path) {
  bool ok;
  const std::string text = ReadWholeFile(path, &ok);
  if (!ok) return absl::NotFoundError(absl::StrCat("cannot read QEMU log ", path));
  return Parse(text);
}

const char* QemuBinaryName(QemuTarget target) {
  switch (target) {
    case QemuTarget::kMipsN32:
      return "qemu-mipsn32";
    case QemuTarget::kMips64:
      return "qemu-mips64";
    case QemuTarget::kMips:
      return "qemu-mips";
  }
  return "qemu-mips";
}

std::string FindQemu(QemuTarget target) { return FindOnPath(QemuBinaryName(target)); }

std::string FindOnPath(std::string_view name) {
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path != nullptr ? path : "/usr/bin", ':')) {
    if (dir.empty()) continue;
    const std::string full = absl::StrCat(std::string(dir), "/", std::string(name));
    struct stat st;
    if (stat(full.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(full.c_str(), X_OK) == 0) {
      return full;
    }
  }
  return {};
}

absl::StatusOr<QemuRun> RunQemu(const QemuRunOptions& options) {
  const std::string qemu = FindQemu(options.target);
  if (qemu.empty()) {
    return absl::NotFoundError(absl::StrCat(QemuBinaryName(options.target), " not found on PATH"));
  }
  const bool temp_log = options.log_path.empty();
  const std::string log = temp_log ? TempPath("qemu-log") : options.log_path;
  const std::string out = TempPath("qemu-out");
  const std::string err = TempPath("qemu-err");
  if (log.empty() || out.empty() || err.empty()) {
    return absl::InternalError("cannot create temporary files");
  }
  std::vector<std::string> argv = {
      qemu, "-cpu", options.cpu, "-singlestep", "-d", "cpu,fpu,nochain", "-D", log, options.binary};
  argv.insert(argv.end(), options.args.begin(), options.args.end());
  std::vector<char*> cargv;
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_TRUNC, 0600);
  pid_t pid;
  const int rc = posix_spawn(&pid, qemu.c_str(), &actions, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  auto cleanup = [&] {
    if (temp_log) unlink(log.c_str());
    unlink(out.c_str());
    unlink(err.c_str());
  };
  if (rc != 0) {
    cleanup();
    return absl::InternalError(absl::StrCat("cannot start ", qemu, ": error ", rc));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      cleanup();
      return absl::InternalError("waitpid failed");
    }
  }
  QemuRun run;
  bool ok;
  run.guest_stdout = ReadWholeFile(out, &ok);
  const std::string errors = ReadWholeFile(err, &ok);
  if (WIFEXITED(status)) {
    run.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    run.signal = WTERMSIG(status);
  }
  auto trace = QemuTrace::ParseFile(log);
  cleanup();
  if (!trace.ok()) {
    return absl::Status(trace.status().code(),
                        absl::StrCat(trace.status().message(), " (qemu stderr: ", errors, ")"));
  }
  if (trace->empty()) {
    return absl::InternalError(absl::StrCat("QEMU logged no state; stderr: ", errors));
  }
  run.trace = std::move(*trace);
  return run;
}

}  // namespace citcat::oracle
