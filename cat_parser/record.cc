#include "cat_parser/record.h"

#include <array>
#include <utility>

namespace citcat::cat {
namespace {

constexpr std::array<std::pair<RecordKind, absl::string_view>, 10> kKindNames = {{
    {RecordKind::kFill, "fill"},
    {RecordKind::kWriteBack, "write-back"},
    {RecordKind::kWriteThrough, "write-through"},
    {RecordKind::kUncachedRead, "uncached-read"},
    {RecordKind::kUncachedWrite, "uncached-write"},
    {RecordKind::kPortRead, "port-read"},
    {RecordKind::kPortWrite, "port-write"},
    {RecordKind::kDmaRead, "dma-read"},
    {RecordKind::kDmaWrite, "dma-write"},
    {RecordKind::kInterruptAck, "interrupt-ack"},
}};

}  // namespace

absl::string_view KindName(RecordKind kind) {
  for (const auto& [k, name] : kKindNames) {
    if (k == kind) return name;
  }
  return "unknown";
}

std::optional<RecordKind> KindFromName(absl::string_view name) {
  for (const auto& [k, n] : kKindNames) {
    if (n == name) return k;
  }
  return std::nullopt;
}

absl::string_view MachineName(Machine machine) {
  switch (machine) {
    case Machine::kR4400:
      return "r4400";
    case Machine::kI486:
      return "i486";
  }
  return "unknown";
}

}  // namespace citcat::cat
