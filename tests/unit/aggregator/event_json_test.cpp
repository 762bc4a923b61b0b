// One stored event as a line for people and as JSON: Slurm's special steps
// read as Slurm names them in the line, and keep their number in the JSON.
#include "accel/aggregator/event_json.h"

#include <gtest/gtest.h>

#include "accel/events/codec.h"

namespace accel::aggregator {
namespace {

StoredEvent stored(const event::Event& e) {
  StoredEvent s;
  s.header = {"sbn1", 37, 5, 1'764'225'878'097'000'000, 1};
  s.kind = event::kindName(e);
  s.job_id = event::jobIdOf(e);
  s.envelope = event::encode(s.header, e);
  return s;
}

TEST(EventLineTest, SlurmsSpecialStepsAreNamedAsSlurmNamesThem) {
  EXPECT_EQ(eventLine(stored(event::StepStarted{42, 0xfffffffb, "", false})),
            "2025-11-27T06:44:38.097Z sbn1 37:5 step_started job=42 "
            "{\"job_id\":42,\"step_id\":\"batch\",\"name\":\"\",\"surrogate\":false}");
  EXPECT_EQ(eventLine(stored(event::StepEnded{42, 0xfffffffc, 0})),
            "2025-11-27T06:44:38.097Z sbn1 37:5 step_ended job=42 "
            "{\"job_id\":42,\"step_id\":\"extern\",\"exit_code\":0}");
  EXPECT_NE(eventLine(stored(event::TaskStarted{42, 0xfffffffa, 0, 31337}))
                .find("\"step_id\":\"interactive\""),
            std::string::npos);
  EXPECT_NE(eventLine(stored(event::TaskEnded{42, 0xfffffffd, 0, 0})).find("\"step_id\":\"TBD\""),
            std::string::npos);
  // An ordinary step is its number, as sacct shows 42.0.
  EXPECT_NE(eventLine(stored(event::TaskEnded{42, 3, 1, 0})).find("\"step_id\":3,"),
            std::string::npos);
}

TEST(EventLineTest, TheJsonKeepsTheNumber) {
  auto j = eventJson(stored(event::StepStarted{42, 0xfffffffb, "", false}));
  EXPECT_EQ(j["event"]["step_id"], 4294967291u);
}

TEST(EventLineTest, StepNames) {
  EXPECT_EQ(event::stepName(0), "0");
  EXPECT_EQ(event::stepName(0xfffffffa), "interactive");
  EXPECT_EQ(event::stepName(0xfffffffb), "batch");
  EXPECT_EQ(event::stepName(0xfffffffc), "extern");
  EXPECT_EQ(event::stepName(0xfffffffd), "TBD");
  EXPECT_EQ(event::stepName(0xfffffffe), "4294967294");  // NO_VAL is no step
}

}  // namespace
}  // namespace accel::aggregator
