// A capture of a machine's guest through the systems registry, extracted: what tests of the
// whole pipeline start from. The CAT stays at `cat_path` for tests that verify against it.
#ifndef CITCAT_TESTS_SUPPORT_GUEST_CAPTURE_H_
#define CITCAT_TESTS_SUPPORT_GUEST_CAPTURE_H_

#include <unistd.h>

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cat_parser/reader.h"
#include "gtest/gtest.h"
#include "systems/system.h"

namespace citcat::testing {

struct GuestCapture {
  std::string cat_path;
  systems::CaptureReport report;
  extract::Extraction x;
};

inline GuestCapture CaptureGuest(const std::string& machine, const std::string& workloads,
                                 uint64_t seed, uint64_t max_traced = 0) {
  GuestCapture c;
  auto system = systems::ByName(machine);
  EXPECT_TRUE(system.ok()) << system.status();
  if (!system.ok()) return c;
  systems::CaptureRequest request;
  request.workloads = workloads;
  request.seed = seed;
  request.max_traced = max_traced;
  c.cat_path = absl::StrCat(::testing::TempDir(), "/", machine, "-", workloads, "-", seed, "-",
                            max_traced, "-", getpid(), ".cat");
  auto report = (*system)->capture(request, c.cat_path);
  EXPECT_TRUE(report.ok()) << report.status();
  if (!report.ok()) return c;
  c.report = *report;
  auto reader = cat::CatReader::Open(c.cat_path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return c;
  auto x = systems::Extract(**reader);
  EXPECT_TRUE(x.ok()) << x.status();
  if (x.ok()) c.x = *std::move(x);
  return c;
}

}  // namespace citcat::testing

#endif  // CITCAT_TESTS_SUPPORT_GUEST_CAPTURE_H_
