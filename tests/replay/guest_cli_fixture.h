// A test suite that runs the citcat binary on one extracted capture of the hand-assembled guest
// (r4400_guest.h): the suite's own directory holds capture.cat and its extraction in x/.
#ifndef CITCAT_TESTS_REPLAY_GUEST_CLI_FIXTURE_H_
#define CITCAT_TESTS_REPLAY_GUEST_CLI_FIXTURE_H_

#include <cstdint>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/replay/r4400_guest.h"
#include "tests/support/run_citcat.h"

namespace citcat::replay_test {

// `Suite` names the derived fixture, so that each suite has a directory of its own.
template <typename Suite>
class GuestCliTest : public ::testing::Test {
 protected:
  // Captures the guest with the outside world's `seed` into `name`'s directory and extracts it.
  static void CaptureAndExtract(const std::string& name, uint64_t seed) {
    dir_ = new std::filesystem::path(testing::FreshTestDir(name));
    CaptureGuest(seed, {}, Path("capture.cat"));
    ASSERT_EQ(
        Run(absl::StrCat("extract ", Path("capture.cat"), " -o ", Path("x"), " --quiet")).exit_code,
        0);
  }
  static testing::CommandResult Run(const std::string& args) {
    return testing::RunCitcat(*dir_, args);
  }
  static std::string Path(const std::string& name) { return (*dir_ / name).string(); }
  // `replay` of the extraction in x/.
  static std::string ReplayArgs() {
    return absl::StrCat("replay --ims ", Path("x/ims.pb"), " --aes ", Path("x/aes.pb"));
  }

  static inline std::filesystem::path* dir_ = nullptr;
};

}  // namespace citcat::replay_test

#endif  // CITCAT_TESTS_REPLAY_GUEST_CLI_FIXTURE_H_
