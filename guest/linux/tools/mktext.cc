// mktext OUT.txt BYTES: deterministic English-like text for the shell workloads of the Linux
// guest (sort, uniq, gzip, md5sum, grep): lines of 4 to 14 words drawn from a fixed vocabulary
// by a xorshift generator (Zipf-like: early words are more frequent), so that sort finds
// duplicates and gzip finds something to compress. The same BYTES give the same file.
#include <cstdint>
#include <cstdio>
#include <string>

#include "absl/strings/numbers.h"

namespace {

constexpr const char* kWords[] = {
    "the",       "of",        "and",      "to",          "in",       "a",       "is",     "that",
    "for",       "it",        "as",       "was",         "with",     "be",      "by",     "on",
    "not",       "he",        "this",     "are",         "or",       "his",     "from",   "at",
    "which",     "but",       "have",     "an",          "had",      "they",    "you",    "were",
    "their",     "one",       "all",      "we",          "can",      "her",     "has",    "there",
    "been",      "if",        "more",     "when",        "will",     "would",   "who",    "so",
    "no",        "cache",     "line",     "bus",         "trace",    "fill",    "write",  "back",
    "interrupt", "kernel",    "process",  "pipe",        "file",     "page",    "fault",  "timer",
    "disk",      "memory",    "register", "instruction", "branch",   "loop",    "replay", "capture",
    "machine",   "monitor",   "address",  "data",        "word",     "byte",    "block",  "sector",
    "table",     "entry",     "stack",    "frame",       "signal",   "thread",  "shell",  "busybox",
    "musl",      "linux",     "i486",     "pentium",     "floating", "point",   "unit",   "control",
    "status",    "vector",    "queue",    "buffer",      "device",   "driver",  "serial", "console",
    "clock",     "tick",      "schedule", "fork",        "exec",     "wait",    "exit",   "open",
    "read",      "close",     "seek",     "mount",       "tmpfs",    "proc",    "sysfs",  "root",
    "init",      "boot",      "loader",   "image",       "archive",  "segment", "split",  "join",
    "verify",    "extract",   "state",    "schedule",    "event",    "record",  "count",  "cycle",
    "latency",   "bandwidth", "miss",     "hit",         "tag",      "set",     "way",    "victim",
    "dirty",     "clean",     "snoop",
};
constexpr uint32_t kCount = sizeof(kWords) / sizeof(kWords[0]);

}  // namespace

int main(int argc, char** argv) {
  uint64_t bytes = 0;
  if (argc != 3 || !absl::SimpleAtoi(argv[2], &bytes)) {
    std::fprintf(stderr, "usage: mktext OUT.txt BYTES\n");
    return 2;
  }
  std::string text;
  uint32_t s = 0x1486CAFEu;
  auto next = [&s] {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return s;
  };
  while (text.size() < bytes) {
    const uint32_t words = 4 + next() % 11;
    std::string line;
    for (uint32_t i = 0; i < words; ++i) {
      // The smaller of two draws: low indexes (common words) come up more often.
      const uint32_t a = next() % kCount, b = next() % kCount;
      if (i) line += ' ';
      line += kWords[a < b ? a : b];
    }
    line += '\n';
    if (text.size() + line.size() > bytes) break;
    text += line;
  }
  FILE* f = std::fopen(argv[1], "wb");
  if (!f || std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fclose(f) != 0) {
    std::fprintf(stderr, "mktext: cannot write %s\n", argv[1]);
    return 1;
  }
  return 0;
}
