// libFuzzer target for replay's input: an IMS and an AES as `citcat extract` writes them, framed
// as one input (the IMS's length as 4 bytes little-endian, the IMS, then the AES) so that
// mutations reach the fields of both uncompressed. Replay must end with a summary or an error,
// never crash, hang or take memory the input does not justify. It is bounded as an archive's
// manifest bounds it, by an instruction count. The input's length picks a trace format, or none,
// so that the recorders and writers see what a mutated state makes the cores run.
#include <google/protobuf/stubs/logging.h>

#include <cstddef>
#include <cstdint>

#include "aes/aes.pb.h"
#include "aes/schedule.h"
#include "ims/ims.pb.h"
#include "replay/replay.h"
#include "systems/system.h"
#include "traces/output.h"
#include "traces/writers.h"

namespace {

class Discard final : public citcat::traces::ByteOutput {
 public:
  absl::Status Write(absl::string_view) override { return absl::OkStatus(); }
  absl::Status Close() override { return absl::OkStatus(); }
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);  // a log line for every string that is not UTF-8
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace citcat;  // NOLINT
  if (size < 4) return 0;
  const size_t ims_size = data[0] | data[1] << 8 | data[2] << 16 | uint32_t{data[3]} << 24;
  if (ims_size > size - 4) return 0;
  ims::InitialMachineState ims;
  aes::EventSchedule aes;
  if (!ims.ParseFromArray(data + 4, static_cast<int>(ims_size)) ||
      !aes.ParseFromArray(data + 4 + ims_size, static_cast<int>(size - 4 - ims_size))) {
    return 0;
  }
  replay::ReplayOptions options;
  options.max_instructions = 100'000;
  constexpr int kFormats = static_cast<int>(traces::Format::kIdtraceExec) + 1;
  std::unique_ptr<traces::TraceSink> sink;
  if (const int f = static_cast<int>(size % (kFormats + 1)); f < kFormats) {
    sink = traces::NewWriter(static_cast<traces::Format>(f), std::make_unique<Discard>());
    options.sink = sink.get();
  }
  if (systems::Replay(ims, aes::Schedule(aes), options).ok() && sink) (void)sink->Finish();
  return 0;
}
