// The main() of every test binary: each test process gets a private directory for its files
// (::testing::TempDir() and $TMPDIR, so the citcat, compiler and QEMU processes a test starts
// write there too), removed when the process ends, so a test run leaves nothing behind. Set
// CITCAT_KEEP_TEST_FILES=1 to keep the directory for a look after a failure.
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "gtest/gtest.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const char* parent = getenv("TMPDIR");
  std::string dir =
      std::string(parent != nullptr && *parent ? parent : "/tmp") + "/citcat-test-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) {
    std::fprintf(stderr, "cannot make a test directory %s\n", dir.c_str());
    return 2;
  }
  setenv("TEST_TMPDIR", dir.c_str(), 1);
  setenv("TMPDIR", dir.c_str(), 1);
  const int result = RUN_ALL_TESTS();
  const char* keep = getenv("CITCAT_KEEP_TEST_FILES");
  if (keep != nullptr && *keep && std::string(keep) != "0") {
    std::fprintf(stderr, "test files kept in %s\n", dir.c_str());
  } else {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  return result;
}
