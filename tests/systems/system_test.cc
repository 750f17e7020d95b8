// The registry of traced systems: lookups by name, CAT machine and IMS, and the one-line errors
// of the pipeline's entry points for a machine the build does not support.
#include "systems/system.h"

#include <cstdio>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "systems/guest_support.h"
#include "tests/cat_parser/cat_test_util.h"

namespace citcat::systems {
namespace {

using ::testing::HasSubstr;

TEST(Systems, EveryEntryIsFoundByItsNameItsCatMachineAndItsImsMachine) {
  ASSERT_FALSE(All().empty());
  for (const System& s : All()) {
    SCOPED_TRACE(s.name);
    EXPECT_EQ(*ByName(s.name), &s);
    EXPECT_EQ(*ForCat(s.cat_machine), &s);
    ims::InitialMachineState ims;
    ims.mutable_description()->set_machine(s.ims_machine);
    EXPECT_EQ(*ForIms(ims), &s);
    EXPECT_EQ(s.replay.machine, s.ims_machine);
    EXPECT_EQ(s.make_contract()->machine(), s.ims_machine);
    EXPECT_THAT(Names(), HasSubstr(s.name));
    EXPECT_TRUE(s.capture && s.replay.make_core && s.replay.header && s.replay.starts_after &&
                s.replay.state_dump && s.kernel_address && s.hook_instructions);
  }
}

TEST(Systems, AnUnknownNameListsTheMachines) {
  absl::StatusOr<const System*> s = ByName("vax");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(), "unknown machine 'vax' (machines: " + Names() + ")");
}

TEST(Systems, AnImsOfNoSupportedMachineIsRefusedByReplay) {
  ims::InitialMachineState ims;
  absl::StatusOr<replay::ReplaySummary> r = Replay(ims, aes::EventSchedule(), {});
  EXPECT_TRUE(absl::IsInvalidArgument(r.status()));
  EXPECT_THAT(r.status().message(), HasSubstr("names no machine this build supports"));
  EXPECT_FALSE(CatHeaderFor(ims).ok());
}

}  // namespace
}  // namespace citcat::systems

namespace citcat::systems {
namespace {

TEST(SplitWords, SplitsAsAShellWouldButExpandsNothing) {
  using ::testing::ElementsAre;
  EXPECT_THAT(*SplitWords("  -O1\t-DX=1 \n"), ElementsAre("-O1", "-DX=1"));
  EXPECT_THAT(*SplitWords("-DS='a b' \"-DT=\\\"c\\\\\\$\\\"\" -DU=d\\ e"),
              ElementsAre("-DS=a b", "-DT=\"c\\\\$\"", "-DU=d e"));
  EXPECT_THAT(*SplitWords("$(id) `id` ; | & > * ~ $HOME"),
              ElementsAre("$(id)", "`id`", ";", "|", "&", ">", "*", "~", "$HOME"));
  EXPECT_THAT(*SplitWords("''"), ElementsAre(""));
  EXPECT_THAT(*SplitWords(""), ElementsAre());
  EXPECT_FALSE(SplitWords("-DX='a").ok());
  EXPECT_FALSE(SplitWords("-DX=\"a").ok());
  EXPECT_FALSE(SplitWords("-DX=\\").ok());
}

}  // namespace
}  // namespace citcat::systems
