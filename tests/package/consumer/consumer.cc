// A trace consumer of its own (traces/sink.h) fed by a replay of an archive (archive/archive.h):
// counts trace records by privilege mode and checks the total against the archive's manifest
// (its trace entries: an instruction that raises an exception is listed again after the handler).
#include <cstdio>

#include "archive/archive.h"
#include "systems/system.h"
#include "traces/sink.h"

namespace {

class ModeCounter : public citcat::traces::TraceSink {
 public:
  absl::Status Consume(const citcat::traces::Record& record) override {
    ++(record.mode == citcat::traces::Mode::kUser ? user : kernel);
    return absl::OkStatus();
  }
  unsigned long long user = 0, kernel = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer TRACE.citcat\n");
    return 2;
  }
  absl::StatusOr<citcat::archive::Archive> archive = citcat::archive::Read(argv[1]);
  citcat::ims::InitialMachineState ims;
  citcat::aes::EventSchedule aes;
  absl::Status status =
      archive.ok() ? citcat::archive::Unpack(*archive, ims, aes) : archive.status();
  ModeCounter counter;
  citcat::replay::ReplayOptions options;
  options.sink = &counter;
  absl::StatusOr<citcat::replay::ReplaySummary> summary =
      status.ok() ? citcat::systems::Replay(ims, aes, options) : status;
  if (!summary.ok()) {
    std::fprintf(stderr, "consumer: %s\n", std::string(summary.status().message()).c_str());
    return 1;
  }
  const unsigned long long total = counter.user + counter.kernel;
  const bool agrees = total == archive->manifest.trace_entries &&
                      summary->instructions == archive->manifest.instructions;
  std::printf("%llu instructions (%llu user, %llu kernel), manifest %s\n", total, counter.user,
              counter.kernel, agrees ? "agrees" : "DISAGREES");
  return agrees ? 0 : 1;
}
