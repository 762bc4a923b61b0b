// `accelctl report JOB` for people: the aggregator's report (literal JSON, as
// the aggregator composes it) as a terminal table; --json passes it on as
// it came; the answer to an unknown job (or another user's: the same) exits
// 5; bad arguments exit 2 with an accelctl: line. The agent's part is
// played by a thread answering the one request over a real control socket.
#include "accel/ctl/report_view.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <thread>

#include "accel/common/safe_file.h"
#include "accel/ctl/cli.h"
#include "accel/ipc/control_socket.h"
#include "accel/schemas/control_generated.h"
#include "temp_dir.h"

namespace accel::ctl {
namespace {

namespace fb = accel::control;

// A finished job of two nodes with 2 GPUs each, one never used; g2 is also
// the docs' example (docs/user-guide.md).
const char* kFinished =
    R"({"v":1,"job_id":4242,"state":"finished","line":"held 4 GPUs, used 2 of them, mean 31%",)"
    R"("result":"ok","accel":"gpu","count":4,"partition":"",)"
    R"("gpus":{"held":4,"with_figures":4,"used":2,"util_mean_pct":31.3,"energy_j":61234},)"
    R"("idle_s":0,"limit":{"appliance_limit_s":7200,"appliance_s":1800},)"
    R"("errors":{"prolog":{},"cleanup_failed":[],"limit_unmeasured":[]},"missing_nodes":[],)"
    R"("nodes_left_out":0,"nodes":[)"
    R"({"name":"g1","figures":"epilog","epilog":true,"updated":null,"idle_s":0},)"
    R"({"name":"g2","figures":"epilog","epilog":true,"updated":null,"idle_s":0}],)"
    R"("devices_left_out":0,"devices":[)"
    R"({"node":"g1","index":0,"util_mean_pct":62.5,"util_max_pct":100,"memory_max_mib":40960,"energy_j":30000,"samples":180,"used":true},)"
    R"({"node":"g1","index":1,"util_mean_pct":0.0,"util_max_pct":0,"memory_max_mib":0,"energy_j":1234,"samples":180,"used":false},)"
    R"({"node":"g2","index":0,"util_mean_pct":62.5,"util_max_pct":98,"memory_max_mib":512,"energy_j":29000,"samples":180,"used":true},)"
    R"({"node":"g2","index":1,"util_mean_pct":0.0,"util_max_pct":0,"memory_max_mib":null,"energy_j":null,"samples":0,"used":false}]})";

TEST(ReportView, AFinishedJobReadsAsATable) {
  auto text = reportTable(kFinished);
  ASSERT_TRUE(text.ok()) << text.error().message();
  EXPECT_EQ(*text,
            "job 4242: held 4 GPUs, used 2 of them, mean 31%\n"
            "  state    finished, result ok\n"
            "  nodes    g1 (final figures), g2 (final figures)\n"
            "  idle     0 s with every GPU at 0%, up to the latest figures\n"
            "  energy   61.2 kJ in all\n"
            "  limit    appliance time 30 min 0 s used of 2 h 0 min\n"
            "  errors   none\n"
            "\n"
            "  NODE  GPU  UTIL MEAN  UTIL MAX  MEMORY MAX   ENERGY  SAMPLES\n"
            "  g1      0      62.5%      100%    40.0 GiB  30.0 kJ      180\n"
            "  g1      1       0.0%        0%       0 MiB   1234 J      180  never used\n"
            "  g2      0      62.5%       98%     512 MiB  29.0 kJ      180\n"
            "  g2      1       0.0%        0%           -        -        0  never used\n");
}

TEST(ReportView, ARunningJobSaysHowFreshItsFiguresAre) {
  const std::string running =
      R"({"v":1,"job_id":7,"state":"running","line":"holds 1 GPU, uses 1 of them, mean 12% so far",)"
      R"("result":"ok","accel":"gpu","count":1,"partition":"",)"
      R"("gpus":{"held":1,"with_figures":1,"used":1,"util_mean_pct":12.0,"energy_j":null},)"
      R"("idle_s":null,"limit":null,"errors":{"prolog":{"g1":"no GPU"},"cleanup_failed":[],)"
      R"("limit_unmeasured":[],"xid":[[79,"g1",3],[13,"g1",-1]]},"missing_nodes":["g1"],"nodes_left_out":0,)"
      R"("nodes":[{"name":"g1","figures":"live","epilog":false,"updated":"2026-11-28T15:00:00.000Z","idle_s":0}],)"
      R"("devices_left_out":0,"devices":[{"node":"g1","index":3,"util_mean_pct":12.0,)"
      R"("util_max_pct":40,"memory_max_mib":100,"energy_j":null,"samples":1,"used":true}]})";
  auto text = reportTable(running);
  ASSERT_TRUE(text.ok()) << text.error().message();
  EXPECT_NE(text->find("job 7: holds 1 GPU, uses 1 of them, mean 12% so far\n"), std::string::npos)
      << *text;
  EXPECT_NE(text->find("  state    running, result ok\n"), std::string::npos) << *text;
  EXPECT_NE(text->find("g1 (live figures of 2026-11-28T15:00:00.000Z)"), std::string::npos);
  EXPECT_NE(text->find("  waiting  for the epilog of g1\n"), std::string::npos) << *text;
  EXPECT_NE(text->find("prolog failed on g1: no GPU; Xid 79 on g1 GPU 3; Xid 13 on g1 GPU -1\n"),
            std::string::npos)
      << *text;
  EXPECT_EQ(text->find("  idle "), std::string::npos) << "no idle figure: no line";
}

// A job the agent cancelled for idle GPUs: the idle note of its node and why
// it ended each get a line (absent keys, as from an older aggregator, none:
// AFinishedJobReadsAsATable).
TEST(ReportView, AnIdleCancelledJobSaysSo) {
  std::string doc = kFinished;
  const std::string at = R"("missing_nodes":[],)";
  doc.insert(doc.find(at), R"("idle":{"g2":{"idle_s":1800,"gpus":[0,1],"action":"cancel"}},)"
                           R"("ended":"idle accelerators",)");
  auto text = reportTable(doc);
  ASSERT_TRUE(text.ok()) << text.error().message();
  EXPECT_NE(text->find("  idle     flagged on g2 after 30 min 0 s with every GPU at 0% (IdleAction "
                       "cancel)\n"),
            std::string::npos)
      << *text;
  EXPECT_NE(text->find("  ended    by the agent: idle accelerators\n"), std::string::npos) << *text;
}

TEST(ReportView, WhatIsNotAReportIsSaidSo) {
  EXPECT_FALSE(reportTable("not json").ok());
  EXPECT_FALSE(reportTable(R"({"v":2})").ok());
  EXPECT_FALSE(reportTable(R"({"v":1,"job_id":1})").ok()) << "incomplete";
}

struct Output {
  int code = -1;
  std::string out, err;
};

class ReportVerbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(
        writeFileAtomic(root_ + "/accel.conf", "ControlSocket=" + root_ + "/control.sock\n", 0644)
            .ok());
  }
  void TearDown() override { ASSERT_TRUE(tmp_.remove()); }

  // Runs `accelctl ARGS`; a thread plays the agent and answers `reply` to
  // one request, keeping what was asked.
  Output accelctl(std::vector<std::string> args, const std::vector<uint8_t>& reply) {
    Output r;
    auto listener = ipc::listenControl(root_ + "/control.sock", 0600);
    EXPECT_TRUE(listener.ok());
    if (!listener.ok()) return r;
    std::thread agent([&] {
      pollfd p{listener->fd(), POLLIN, 0};
      if (poll(&p, 1, 5000) != 1) return;
      auto conn = ipc::acceptControl(*listener);
      if (!conn.ok()) return;
      auto req = ipc::recvMessage(*conn, std::chrono::seconds(5));
      if (!req.ok()) return;
      asked_ = *req;
      (void)ipc::sendMessage(*conn, reply.data(), reply.size(), std::chrono::seconds(5));
    });
    args.insert(args.begin(), {"--config", root_ + "/accel.conf"});
    CliIo io{[](const char*) -> const char* { return nullptr; },
             [&r](const std::string& s) { r.out += s; },
             [&r](const std::string& s) { r.err += s + "\n"; }};
    r.code = runCli(args, io);
    if (r.code == kUsage) {  // accelctl never connected: let the thread go
      auto c = ipc::connectControl(root_ + "/control.sock");
      if (c.ok()) (void)ipc::sendMessage(*c, reply.data(), reply.size(), std::chrono::seconds(1));
    }
    agent.join();
    return r;
  }

  static std::vector<uint8_t> reportReply(const std::string& json) {
    flatbuffers::FlatBufferBuilder fbb;
    auto body = fb::CreateJobReportDirect(fbb, json.c_str());
    fbb.Finish(fb::CreateReply(fbb, fb::Outcome::Ok, 0, fb::ReplyBody::JobReport, body.Union()));
    return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
  }

  static std::vector<uint8_t> refusal(fb::Outcome o, const std::string& message) {
    flatbuffers::FlatBufferBuilder fbb;
    fbb.Finish(fb::CreateReplyDirect(fbb, o, message.c_str()));
    return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
  }

  support::TempDir tmp_{"accel-report-verb"};
  std::string root_ = tmp_.path();
  std::vector<uint8_t> asked_;
};

TEST_F(ReportVerbTest, JsonIsTheAggregatorsReportAsItCame) {
  auto r = accelctl({"report", "4242", "--json"}, reportReply(kFinished));
  ASSERT_EQ(r.code, kOk) << r.err;
  EXPECT_EQ(r.out, std::string(kFinished) + "\n");
  const auto* req = flatbuffers::GetRoot<fb::Request>(asked_.data());
  ASSERT_NE(req->body_as_ReportRequest(), nullptr);
  EXPECT_EQ(req->body_as_ReportRequest()->job_id(), 4242u);
}

TEST_F(ReportVerbTest, TheTableByDefault) {
  auto r = accelctl({"report", "4242"}, reportReply(kFinished));
  ASSERT_EQ(r.code, kOk) << r.err;
  EXPECT_EQ(r.out, *reportTable(kFinished));
}

TEST_F(ReportVerbTest, AnUnknownJobExitsFive) {
  auto r = accelctl({"report", "99"},
                    refusal(fb::Outcome::NotFound,
                            "no report of job 99 of yours: the aggregator has no record of it"));
  EXPECT_EQ(r.code, kNotFound);
  EXPECT_EQ(r.err,
            "accelctl: report: no report of job 99 of yours: the aggregator has no record of it\n");
  EXPECT_EQ(r.out, "");
}

TEST_F(ReportVerbTest, BadArgumentsExitTwo) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"report"}, "accelctl: report needs a job id, e.g. accelctl report 42\n"},
      {{"report", "abc"},
       "accelctl: report: 'abc' is not a job id (a number from 1 up, e.g. accelctl report 42)\n"},
      {{"report", "0"},
       "accelctl: report: '0' is not a job id (a number from 1 up, e.g. accelctl report 42)\n"},
      {{"report", "42x"},
       "accelctl: report: '42x' is not a job id (a number from 1 up, e.g. accelctl report 42)\n"},
      {{"report", "42", "43"},
       "accelctl: report takes one job id, not 2 arguments; usage: accelctl report ID [--json]\n"},
  };
  for (const auto& [args, err] : cases) {
    auto r = accelctl(args, refusal(fb::Outcome::Ok, ""));
    EXPECT_EQ(r.code, kUsage) << args.back();
    EXPECT_EQ(r.err, err);
    EXPECT_TRUE(asked_.empty() ||
                flatbuffers::GetRoot<fb::Request>(asked_.data())->body_as_ReportRequest() ==
                    nullptr)
        << "nothing asked of the agent";
    asked_.clear();
  }
}

}  // namespace
}  // namespace accel::ctl
