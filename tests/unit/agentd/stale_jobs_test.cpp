#include "accel/agentd/stale_jobs.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <map>

#include "accel/agent/job_dir_step.h"
#include "accel/common/safe_file.h"
#include "accel/schemas/control_generated.h"
#include "fake_clock.h"
#include "recording_events.h"
#include "temp_dir.h"
#include "test_inventory.h"

namespace accel::agentd {
namespace {

namespace fb = accel::control;

class StaleJobsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(makeDirectory(root_ + "/jobs", 0755).ok());
    agent::Inventory inv = accel::agentd::testing::twoGpuInventory();
    std::vector<std::unique_ptr<agent::JobStep>> steps;
    steps.push_back(std::make_unique<agent::JobDirStep>(root_ + "/jobs"));
    manager_ = std::make_unique<agent::JobManager>(agent::JobStore(root_ + "/state"), inv,
                                                   std::move(steps), clock_);
    ASSERT_TRUE(manager_->recover().ok());
    ctx_.manager = manager_.get();
    ctx_.node_name = "n1";
    ctx_.version = "test";
    ctx_.events = &sink_;
  }
  void TearDown() override { ASSERT_TRUE(tmp_.remove()); }

  void prolog(uint32_t job, const char* gpus) {
    flatbuffers::FlatBufferBuilder fbb;
    auto spec = fb::CreateJobSpecDirect(fbb, job, 1000, 1000, "alice", "n1", "debug", gpus);
    fbb.Finish(fb::CreateRequest(fbb, 1, fb::RequestBody::PrologRequest,
                                 fb::CreatePrologRequest(fbb, spec).Union()),
               fb::RequestIdentifier());
    auto reply = handleRequest(ctx_, Caller{0, 1}, {fbb.GetBufferPointer(), fbb.GetSize()});
    ASSERT_EQ(flatbuffers::GetRoot<fb::Reply>(reply.data())->outcome(), fb::Outcome::Ok);
  }
  bool jobDirExists(uint32_t job) const {
    struct stat st {};
    return ::stat((root_ + "/jobs/" + std::to_string(job)).c_str(), &st) == 0;
  }
  std::vector<uint32_t> epilogEvents() const {
    std::vector<uint32_t> ids;
    for (const auto& e : events_)
      if (const auto* f = std::get_if<event::EpilogFinished>(&e)) ids.push_back(f->job_id);
    return ids;
  }

  support::TempDir tmp_{"accel-stale"};
  std::string root_ = tmp_.path();
  support::FakeClock clock_{5};  // the job manager's, which never moves
  std::unique_ptr<agent::JobManager> manager_;
  HandlerContext ctx_;
  std::vector<event::Event> events_;
  support::RecordingEvents sink_{&events_};
};

TEST_F(StaleJobsTest, AJobSlurmHasEndedIsCleanedAndALiveOneIsKept) {
  prolog(80, "0");
  prolog(81, "1");
  ASSERT_TRUE(jobDirExists(80));
  events_.clear();
  std::vector<uint32_t> asked;
  auto sweep = sweepStaleJobs(ctx_, [&](uint32_t id) -> Result<JobPresence> {
    asked.push_back(id);
    return id == 80 ? JobPresence::kGone : JobPresence::kAlive;
  });
  EXPECT_EQ(sweep.asked, 2u);
  EXPECT_EQ(sweep.cleaned, 1u);
  EXPECT_EQ(sweep.failed, 0u);
  EXPECT_FALSE(sweep.slurmctld_unavailable);
  EXPECT_EQ(asked, (std::vector<uint32_t>{80, 81}));
  EXPECT_FALSE(manager_->job(80).has_value());
  EXPECT_FALSE(jobDirExists(80));
  EXPECT_TRUE(manager_->job(81).has_value());
  EXPECT_TRUE(jobDirExists(81));
  // The cleaned job's epilog is streamed like any other, so its summary completes.
  EXPECT_EQ(epilogEvents(), (std::vector<uint32_t>{80}));
  // Its GPU is free again: a new job may have it.
  prolog(82, "0");
}

TEST_F(StaleJobsTest, OnlyAnEpilogThatCleanedSomethingIsStreamed) {
  prolog(85, "0");
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(fb::CreateRequest(fbb, 1, fb::RequestBody::EpilogRequest,
                               fb::CreateEpilogRequest(fbb, 85, 1000).Union()),
             fb::RequestIdentifier());
  std::vector<uint8_t> epilog(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  events_.clear();
  for (int i = 0; i < 2; ++i) {
    auto reply = handleRequest(ctx_, Caller{0, 1}, epilog);
    EXPECT_EQ(flatbuffers::GetRoot<fb::Reply>(reply.data())->outcome(), fb::Outcome::Ok);
  }
  // The second epilog (slurmd's after the agent ended the job itself, or a
  // repeat) finds nothing and tells nothing: one end per job.
  EXPECT_EQ(epilogEvents(), (std::vector<uint32_t>{85}));
}

TEST_F(StaleJobsTest, NoAnswerFromSlurmctldKeepsEveryJobAndStopsAsking) {
  prolog(90, "0");
  prolog(91, "1");
  events_.clear();
  size_t calls = 0;
  auto sweep = sweepStaleJobs(ctx_, [&](uint32_t id) -> Result<JobPresence> {
    ++calls;
    return Error(ErrorCode::kUnavailable,
                 "slurmctld: job " + std::to_string(id) + ": connection refused");
  });
  EXPECT_EQ(calls, 1u);
  EXPECT_TRUE(sweep.slurmctld_unavailable);
  EXPECT_EQ(sweep.cleaned, 0u);
  EXPECT_TRUE(manager_->job(90).has_value());
  EXPECT_TRUE(manager_->job(91).has_value());
  EXPECT_TRUE(epilogEvents().empty());
}

TEST_F(StaleJobsTest, AStopRequestEndsTheSweepBetweenJobs) {
  prolog(95, "0");
  bool stop = true;
  size_t calls = 0;
  auto sweep = sweepStaleJobs(
      ctx_,
      [&](uint32_t) -> Result<JobPresence> {
        ++calls;
        return JobPresence::kGone;
      },
      [&] { return stop; });
  EXPECT_EQ(calls, 0u);
  EXPECT_EQ(sweep.asked, 0u);
  EXPECT_TRUE(manager_->job(95).has_value());
}

TEST_F(StaleJobsTest, InvalidJobIdAloneEndsNoJob) {
  prolog(100, "0");
  prolog(101, "1");
  events_.clear();
  // slurmctld does not know either job; asked again, it knows 100 (it was
  // confused), and 101 is still unknown: only 101 is cleaned.
  std::map<uint32_t, int> asked;
  std::vector<std::chrono::milliseconds> slept;
  auto sweep = sweepStaleJobs(
      ctx_,
      [&](uint32_t id) -> Result<JobPresence> {
        int n = ++asked[id];
        return id == 100 && n == 2 ? JobPresence::kAlive : JobPresence::kUnknown;
      },
      {}, std::chrono::milliseconds(30000),
      [&](std::chrono::milliseconds d) {
        EXPECT_TRUE(manager_->job(100).has_value());  // nothing cleaned on the first answer
        EXPECT_TRUE(manager_->job(101).has_value());
        slept.push_back(d);
        return true;
      });
  EXPECT_EQ(slept, (std::vector<std::chrono::milliseconds>{std::chrono::milliseconds(30000)}));
  EXPECT_EQ(asked, (std::map<uint32_t, int>{{100, 2}, {101, 2}}));
  EXPECT_EQ(sweep.cleaned, 1u);
  EXPECT_EQ(sweep.unconfirmed, 1u);
  EXPECT_TRUE(manager_->job(100).has_value());
  EXPECT_FALSE(manager_->job(101).has_value());
  EXPECT_EQ(epilogEvents(), (std::vector<uint32_t>{101}));
}

TEST_F(StaleJobsTest, AStopDuringTheSecondLookKeepsUnknownJobs) {
  prolog(102, "0");
  auto sweep = sweepStaleJobs(
      ctx_, [&](uint32_t) -> Result<JobPresence> { return JobPresence::kUnknown; }, {},
      std::chrono::milliseconds(30000), [](std::chrono::milliseconds) { return false; });
  EXPECT_EQ(sweep.cleaned, 0u);
  EXPECT_TRUE(manager_->job(102).has_value());
}

}  // namespace
}  // namespace accel::agentd
