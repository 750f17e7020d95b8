// libFuzzer target for replay's input: an IMS and an AES as `citcat extract` writes them, framed
// as one input (the IMS's length as 4 bytes little-endian, the IMS, then the AES) so that
// mutations reach the fields of both uncompressed. Replay must end with a summary or an error,
// never crash, hang or take memory the input does not justify. It is bounded as an archive's
// manifest bounds it, by an instruction count.
#include <google/protobuf/stubs/logging.h>

#include <cstddef>
#include <cstdint>

#include "aes/aes.pb.h"
#include "aes/schedule.h"
#include "ims/ims.pb.h"
#include "replay/replay.h"
#include "systems/system.h"

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
  (void)systems::Replay(ims, aes::Schedule(aes), options);
  return 0;
}
