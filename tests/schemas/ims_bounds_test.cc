// ims::CheckSizes: the sizes an IMS declares, checked on its serialized bytes before it is
// decoded, in one pass when the description comes first (as every writer puts it) and with the
// same answers whatever the order of its fields.
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "gtest/gtest.h"
#include "ims/bounds.h"

namespace citcat::ims {
namespace {

using ::testing::HasSubstr;

// A machine of 1 MiB of memory and no ROM.
MachineDescription Small() {
  MachineDescription d;
  d.set_machine(MACHINE_R4400);
  d.set_memory_bytes(1 << 20);
  return d;
}

std::string Extent(uint64_t address, size_t bytes) {
  InitialMachineState s;
  MemoryExtent& e = *s.add_memory();
  e.set_address(address);
  e.set_data(std::string(bytes, '\x5a'));
  return s.SerializeAsString();
}

std::string Description(const MachineDescription& d) {
  InitialMachineState s;
  *s.mutable_description() = d;
  return s.SerializeAsString();
}

// CheckSizes over `bytes`, counting the passes it made.
struct Checked {
  absl::Status status;
  int passes = 0;
};
Checked Check(const std::string& bytes, uint64_t max_image_bytes = ~uint64_t{0}) {
  Checked c;
  const OpenStream open =
      [&]() -> absl::StatusOr<std::unique_ptr<google::protobuf::io::ZeroCopyInputStream>> {
    ++c.passes;
    // Small blocks, so that fields straddle the stream's buffers as they do in a section.
    return std::make_unique<google::protobuf::io::ArrayInputStream>(
        bytes.data(), static_cast<int>(bytes.size()), 7);
  };
  c.status = CheckSizes(open, max_image_bytes);
  return c;
}

TEST(CheckSizes, ReadsAWritersImsInOnePass) {
  InitialMachineState s;
  *s.mutable_description() = Small();
  for (int i = 0; i < 3; ++i) {
    MemoryExtent& e = *s.add_memory();
    e.set_address(i * 4096);
    e.set_data(std::string(4096, '\1'));
  }
  const Checked c = Check(s.SerializeAsString());
  EXPECT_TRUE(c.status.ok()) << c.status;
  EXPECT_EQ(c.passes, 1);
}

TEST(CheckSizes, RefusesAnExtentBeyondTheMemoryMapNamingIt) {
  const Checked c = Check(Description(Small()) + Extent(0, 4096) + Extent(0, (1 << 20) + 65537));
  EXPECT_THAT(c.status.message(), HasSubstr("memory extent 2 holds 1114113 bytes, more than the"));
}

TEST(CheckSizes, RefusesAnImageBeyondWhatTheTraceCanHaveRead) {
  const Checked c = Check(Description(Small()) + Extent(0, 3000) + Extent(8192, 3000), 5000);
  EXPECT_THAT(c.status.message(),
              HasSubstr("memory extent 2 brings the image to 6000 bytes, more than the 5000 the "
                        "trace can have read"));
}

TEST(CheckSizes, RefusesAnEmptyExtent) {
  const Checked c = Check(Description(Small()) + Extent(0, 0));
  EXPECT_THAT(c.status.message(), HasSubstr("memory extent 1 holds no byte"));
}

// A parser merges every occurrence of the description, wherever it lies: the extents are checked
// against the whole of it, not against what came before them.
TEST(CheckSizes, ChecksExtentsAgainstADescriptionThatComesAfterThem) {
  MachineDescription large = Small();
  large.set_memory_bytes(8 << 20);
  const std::string extents = Extent(0, 2 << 20);
  EXPECT_TRUE(Check(Description(large) + extents).status.ok());
  EXPECT_TRUE(Check(extents + Description(large)).status.ok());
  EXPECT_TRUE(Check(Description(Small()) + extents + Description(large)).status.ok());
  // ... and a later occurrence can shrink the memory as well.
  const Checked shrunk = Check(Description(large) + extents + Description(Small()));
  EXPECT_THAT(shrunk.status.message(), HasSubstr("memory extent 1 holds 2097152 bytes"));
}

TEST(CheckSizes, RefusesBytesThatAreNoIms) {
  const Checked c = Check(std::string("\x00\x01\x02", 3));
  EXPECT_THAT(c.status.message(), HasSubstr("not a citcat.ims.InitialMachineState message"));
}

}  // namespace
}  // namespace citcat::ims
