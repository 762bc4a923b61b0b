// accelctl prolog and the job's nodes: what it reads from slurmd's
// environment (SLURM_NODELIST or SLURM_JOB_NODELIST, SLURM_JOB_NUM_NODES),
// what it does with values it cannot use, and that they reach the daemon's
// job record and the PrologStarted event (the daemon's handler answers in
// this process, over a real control socket).
#include "accel/ctl/hook_env.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <map>
#include <thread>

#include "../agentd/test_inventory.h"
#include "accel/agentd/control_handler.h"
#include "accel/common/safe_file.h"
#include "accel/events/codec.h"
#include "accel/ipc/control_socket.h"
#include "accel/schemas/control_generated.h"
#include "answer_one_request.h"
#include "fake_clock.h"
#include "recording_events.h"
#include "temp_dir.h"

namespace accel::ctl {
namespace {

namespace fb = accel::control;
using Env = std::map<std::string, std::string>;

static_assert(kMaxNodeListBytes == agent::kMaxNodeListBytes,
              "accelctl and the daemon bound the node list alike");

CliIo ioOf(const Env& env, std::string* err = nullptr) {
  return CliIo{[&env](const char* n) -> const char* {
                 auto it = env.find(n);
                 return it == env.end() ? nullptr : it->second.c_str();
               },
               [](const std::string&) {},
               [err](const std::string& s) {
                 if (err) *err += s + "\n";
               }};
}

Env slurmd(Env extra = {}) {
  Env env{{"SLURM_JOB_ID", "42"},      {"SLURM_JOB_UID", "1000"},
          {"SLURM_JOB_GID", "1000"},   {"SLURM_JOB_USER", "alice"},
          {"SLURMD_NODENAME", "sbn2"}, {"SLURM_SCRIPT_CONTEXT", "prolog_slurmd"}};
  for (auto& [k, v] : extra) env[k] = v;
  return env;
}

const fb::JobSpec* specIn(const std::vector<uint8_t>& request) {
  flatbuffers::Verifier v(request.data(), request.size());
  EXPECT_TRUE(fb::VerifyRequestBuffer(v));
  return fb::GetRequest(request.data())->body_as_PrologRequest()->job();
}

TEST(HookEnvTest, TheJobsNodesAreReadAndSent) {
  Env env = slurmd({{"SLURM_NODELIST", "sbn[1-2]"}, {"SLURM_JOB_NUM_NODES", "2"}});
  auto e = readHookEnv(ioOf(env), true);
  ASSERT_TRUE(e.ok()) << e.error().message();
  EXPECT_EQ(e->node, "sbn2");
  EXPECT_EQ(e->node_list, "sbn[1-2]");
  EXPECT_EQ(e->node_count, 2u);
  EXPECT_TRUE(e->notes.empty());
  auto request = prologRequest(*e);
  const auto* spec = specIn(request);
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->node()->str(), "sbn2");
  EXPECT_EQ(spec->node_list()->str(), "sbn[1-2]");
  EXPECT_EQ(spec->node_count(), 2u);
}

TEST(HookEnvTest, NewerSlurmsJobNodelistIsTheFallback) {
  auto e = readHookEnv(ioOf(slurmd({{"SLURM_JOB_NODELIST", "a,b"}})), true);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->node_list, "a,b");
  e = readHookEnv(ioOf(slurmd({{"SLURM_NODELIST", ""}, {"SLURM_JOB_NODELIST", "a,b"}})), true);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->node_list, "a,b");
  e = readHookEnv(ioOf(slurmd({{"SLURM_NODELIST", "c"}, {"SLURM_JOB_NODELIST", "a,b"}})), true);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->node_list, "c") << "22.05's own variable wins";
  e = readHookEnv(ioOf(slurmd()), true);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->node_list, "");
  EXPECT_EQ(e->node_count, 0u);
  EXPECT_TRUE(e->notes.empty()) << "absent is unknown, nothing to say";
}

TEST(HookEnvTest, AnUnusableNodeCountIsUnknownAndTheHookGoesOn) {
  for (const char* bad : {"two", "-1", "2x", "99999999999", "70000", " 2"}) {
    SCOPED_TRACE(bad);
    auto e = readHookEnv(
        ioOf(slurmd({{"SLURM_NODELIST", "sbn[1-2]"}, {"SLURM_JOB_NUM_NODES", bad}})), true);
    ASSERT_TRUE(e.ok()) << e.error().message();
    EXPECT_EQ(e->node_count, 0u);
    EXPECT_EQ(e->node_list, "sbn[1-2]");
    ASSERT_EQ(e->notes.size(), 1u);
    EXPECT_EQ(e->notes[0], "SLURM_JOB_NUM_NODES='" + std::string(bad) +
                               "' is not a node count; taken as unknown");
  }
  auto e = readHookEnv(
      ioOf(slurmd({{"SLURM_JOB_NUM_NODES", "2\n\x1b[2J" + std::string(200, '9')}})), true);
  ASSERT_TRUE(e.ok());
  ASSERT_EQ(e->notes.size(), 1u);
  EXPECT_EQ(e->notes[0], "SLURM_JOB_NUM_NODES='2??[2J" + std::string(74, '9') +
                             "...' is not a node count; taken as unknown")
      << "what is quoted is short and printable";
}

// SLURM_JOB_RESTART_COUNT, set by slurmd for the prolog of a requeued job's
// next run, reaches the daemon; without it the run is the first, and a value
// that is no count is the first run too, with a note.
TEST(HookEnvTest, TheRunOfARequeuedJobIsSent) {
  auto e = readHookEnv(ioOf(slurmd({{"SLURM_JOB_RESTART_COUNT", "2"}})), true);
  ASSERT_TRUE(e.ok()) << e.error().message();
  EXPECT_EQ(e->restart_count, 2u);
  EXPECT_TRUE(e->notes.empty());
  auto request = prologRequest(*e);
  const auto* spec = specIn(request);
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->restart_count(), 2u);
  e = readHookEnv(ioOf(slurmd()), true);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->restart_count, 0u);
  e = readHookEnv(ioOf(slurmd({{"SLURM_JOB_RESTART_COUNT", "two"}})), true);
  ASSERT_TRUE(e.ok()) << "slurmd's odd value never fails the hook";
  EXPECT_EQ(e->restart_count, 0u);
  ASSERT_EQ(e->notes.size(), 1u);
  EXPECT_EQ(e->notes[0], "SLURM_JOB_RESTART_COUNT='two' is not a count; taken as the first run");
}

TEST(HookEnvTest, ANodeListTooLongOrNotCleanIsUnknown) {
  const std::string longest = "n" + std::string(kMaxNodeListBytes - 1, '1');
  auto e = readHookEnv(ioOf(slurmd({{"SLURM_NODELIST", longest}})), true);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->node_list, longest);
  EXPECT_TRUE(e->notes.empty());

  e = readHookEnv(ioOf(slurmd({{"SLURM_NODELIST", longest + "1"}, {"SLURM_JOB_NUM_NODES", "3"}})),
                  true);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->node_list, "");
  EXPECT_EQ(e->node_count, 3u);
  ASSERT_EQ(e->notes.size(), 1u);
  EXPECT_EQ(e->notes[0],
            "SLURM_NODELIST is longer than 61440 bytes; the job's nodes are taken as unknown");

  for (const char* unclean : {"sbn1\nsbn2", "sbn\x01", "\xff\xfe"}) {
    e = readHookEnv(ioOf(slurmd({{"SLURM_JOB_NODELIST", unclean}})), true);
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(e->node_list, "");
    ASSERT_EQ(e->notes.size(), 1u);
    EXPECT_EQ(e->notes[0],
              "SLURM_JOB_NODELIST is not clean text; the job's nodes are taken as unknown");
  }
}

TEST(HookEnvTest, TheLongestNodeListStillFitsARequestAndAnEvent) {
  HookEnv e;
  e.job_id = 4294967295u;
  e.user = std::string(256, 'u');
  e.node = std::string(256, 'n');
  e.partition = std::string(256, 'p');
  e.gpus = std::string(1024, '1');
  e.node_list = std::string(kMaxNodeListBytes, 'x');
  EXPECT_LE(prologRequest(e).size(), ipc::kMaxMessageBytes);
  event::Header h{.node = std::string(256, 'h'), .epoch = 1, .seq = 1, .time_ns = 1, .mono_ns = 1};
  auto bytes = event::encode(h, event::PrologStarted{.job_id = e.job_id,
                                                     .uid = 1,
                                                     .user = e.user,
                                                     .node_list = e.node_list,
                                                     .node_count = 65536});
  EXPECT_LE(bytes.size(), event::kMaxEnvelopeBytes);
}

spank::SiteLimits nodeLimits() {
  spank::SiteLimits l;
  l.max_ipus = 8;
  l.vipu_conf_path = "/etc/slurm/vipu.conf";
  l.accel_conf_path = "/etc/slurm/accel.conf";
  l.appliance_time_max = SlurmDuration::fromSeconds(3600);
  return l;
}

TEST(HookEnvTest, TheJobsOptionsAreReadByThePluginsRules) {
  auto e = readHookEnv(ioOf(slurmd()), true);
  ASSERT_TRUE(e.ok());
  Env env = slurmd({{"SPANK_ACCEL_IPUS", "4"},
                    {"SPANK_ACCEL_NUM_REPLICAS", "2"},
                    {"SPANK_ACCEL_NTASKS", "2"},
                    {"SPANK_ACCEL_APPLIANCE_TIME", "600"},
                    {"SPANK_ACCEL_APPLIANCE_TIME_SOURCE", "option"},
                    {"SPANK_ACCEL_APPLIANCE_SIGNAL", "10"},
                    {"SPANK_ACCEL_APPLIANCE_SIGNAL_LEAD", "30"}});
  readJobOptions(ioOf(env), nodeLimits(), *e);
  EXPECT_EQ(e->refusal, "");
  EXPECT_EQ(e->ipus, 4u);
  EXPECT_EQ(e->num_replicas, 2u);
  EXPECT_EQ(e->ntasks, 2u);
  EXPECT_EQ(e->appliance_time_sec, 600);
  EXPECT_FALSE(e->limit_from_default);
  EXPECT_EQ(e->appliance_signal, 10);
  EXPECT_EQ(e->appliance_signal_lead_sec, 30u);
  EXPECT_FALSE(e->appliance_signal_batch);
  EXPECT_TRUE(e->asksForAccelerators());
  auto request = prologRequest(*e);
  const auto* spec = specIn(request);
  ASSERT_NE(spec, nullptr);
  EXPECT_FALSE(spec->appliance_signal_batch());

  env["SPANK_ACCEL_APPLIANCE_SIGNAL_BATCH"] = "1";
  readJobOptions(ioOf(env), nodeLimits(), *e);
  EXPECT_EQ(e->refusal, "");
  EXPECT_TRUE(e->appliance_signal_batch);
  request = prologRequest(*e);
  spec = specIn(request);
  ASSERT_NE(spec, nullptr);
  EXPECT_TRUE(spec->appliance_signal_batch()) << "B: reaches the daemon";
}

TEST(HookEnvTest, ARefusedJobAsksForNothingAndSaysWhy) {
  const std::pair<Env, std::string> cases[] = {
      {{{"SPANK_ACCEL_IPUS", "abc"}}, "--ipus=abc: not a whole number; give 1 to 8 IPUs"},
      {{{"SPANK_ACCEL_IPUS", "16"}},
       "--ipus=16: at most 8 IPUs per job (MaxIpusPerJob in /etc/slurm/vipu.conf)"},
      {{{"SPANK_ACCEL_APPLIANCE_TIME", "99999999999999999999"}},
       "--job-time-sec=99999999999999999999: too large; Slurm times end at 2147483647 seconds"},
      {{{"SPANK_ACCEL_APPLIANCE_TIME", "3601"}},
       "--job-time-sec=3601: above the site maximum of 01:00:00"},
      {{{"SPANK_ACCEL_IPUS", "2"}, {"SPANK_ACCEL_NUM_REPLICAS", "4"}},
       "--num-replicas=4: does not divide --ipus=2"},
  };
  for (const auto& [extra, why] : cases) {
    auto e = readHookEnv(ioOf(slurmd(extra)), true);
    ASSERT_TRUE(e.ok()) << "the user's values never make the hook fail: " << e.error().message();
    readJobOptions(ioOf(slurmd(extra)), nodeLimits(), *e);
    EXPECT_NE(e->refusal.find(why), std::string::npos) << e->refusal;
    EXPECT_EQ(e->refusal.rfind("the job's accelerator options (SPANK_ACCEL_*", 0), 0u)
        << e->refusal;
    EXPECT_EQ(e->ipus, 0u);
    EXPECT_EQ(e->appliance_time_sec, -1);
    EXPECT_FALSE(e->asksForAccelerators());
    auto request = prologRequest(*e);
    const auto* spec = specIn(request);
    ASSERT_NE(spec, nullptr);
    ASSERT_NE(spec->refusal(), nullptr);
    EXPECT_EQ(spec->refusal()->str(), e->refusal);
    EXPECT_EQ(spec->ipus(), 0u);
  }
  auto e = readHookEnv(ioOf(slurmd()), true);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(specIn(prologRequest(*e))->refusal(), nullptr) << "no refusal, no field";
}

TEST(HookEnvTest, TheLongestRefusalIsPrintableAndBounded) {
  spank::SiteLimits l = nodeLimits();
  l.vipu_conf_path = "/" + std::string(3000, 'v') + "/\xc3\xa9t\xc3\xa9/vipu.conf";
  auto e = readHookEnv(ioOf(slurmd()), true);
  ASSERT_TRUE(e.ok());
  readJobOptions(ioOf(slurmd({{"SPANK_ACCEL_IPUS", "\x1b[2J" + std::string(5000, '9')}})), l, *e);
  ASSERT_FALSE(e->refusal.empty());
  EXPECT_LE(e->refusal.size(), kMaxRefusalBytes);
  for (char c : e->refusal) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << e->refusal;
  e->node_list = std::string(kMaxNodeListBytes, 'x');
  e->user = std::string(256, 'u');
  e->node = std::string(256, 'n');
  e->partition = std::string(256, 'p');
  e->gpus = std::string(1024, '1');
  EXPECT_LE(prologRequest(*e).size(), ipc::kMaxMessageBytes);
}

TEST(HookEnvTest, TheEpilogNeedsNoNodes) {
  auto e = readHookEnv(ioOf({{"SLURM_JOB_ID", "42"}, {"SLURM_JOB_NUM_NODES", "x"}}), false);
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(e->notes.empty());
}

// accelctl prolog against the daemon's handler over a real socket.
class PrologNodesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(makeDirectory(root_ + "/jobs", 0755).ok());
    ASSERT_TRUE(
        writeFileAtomic(root_ + "/accel.conf", "ControlSocket=" + root_ + "/control.sock\n", 0644)
            .ok());
    manager_ = std::make_unique<agent::JobManager>(
        agent::JobStore(root_ + "/state"), agentd::testing::twoGpuInventory(),
        std::vector<std::unique_ptr<agent::JobStep>>{}, clock_);
    ASSERT_TRUE(manager_->recover().ok());
    ctx_.manager = manager_.get();
    ctx_.node_name = "host-of-sbn2";
    ctx_.events = &sink_;
  }
  void TearDown() override { ASSERT_TRUE(tmp_.remove()); }

  // Runs `accelctl prolog` with `env` while this process answers as the daemon.
  int prolog(const Env& env, std::string* err) {
    auto listener = ipc::listenControl(root_ + "/control.sock", 0600);
    EXPECT_TRUE(listener.ok());
    if (!listener.ok()) return -1;
    std::thread daemon = test::answerOneRequest(*listener, ctx_);
    int code = runCli({"--config", root_ + "/accel.conf", "prolog"}, ioOf(env, err));
    daemon.join();
    return code;
  }

  support::TempDir tmp_{"accel-hook"};
  std::string root_ = tmp_.path();
  support::FakeClock clock_{5};  // the job manager's, which never moves
  std::unique_ptr<agent::JobManager> manager_;
  agentd::HandlerContext ctx_;
  std::vector<event::Event> events_;
  support::RecordingEvents sink_{&events_};
};

TEST_F(PrologNodesTest, TheNodesReachTheJobRecordAndThePrologStartedEvent) {
  std::string err;
  ASSERT_EQ(prolog(slurmd({{"SLURM_NODELIST", "sbn[1-3]"}, {"SLURM_JOB_NUM_NODES", "3"}}), &err),
            kOk)
      << err;
  EXPECT_EQ(err, "");
  auto rec = manager_->job(42);
  ASSERT_TRUE(rec.has_value());
  EXPECT_EQ(rec->spec.node, "sbn2");
  EXPECT_EQ(rec->spec.node_list, "sbn[1-3]");
  EXPECT_EQ(rec->spec.node_count, 3u);
  ASSERT_FALSE(events_.empty());
  auto* started = std::get_if<event::PrologStarted>(&events_.front());
  ASSERT_NE(started, nullptr);
  EXPECT_EQ(started->node_list, "sbn[1-3]");
  EXPECT_EQ(started->node_count, 3u);
}

TEST_F(PrologNodesTest, AnUnusableNodeCountIsNotedAndTheJobGoesOn) {
  std::string err;
  ASSERT_EQ(prolog(slurmd({{"SLURM_NODELIST", "sbn[1-3]"}, {"SLURM_JOB_NUM_NODES", "lots"}}), &err),
            kOk);
  EXPECT_EQ(
      err,
      "accel: prolog: job 42: SLURM_JOB_NUM_NODES='lots' is not a node count; taken as unknown\n");
  ASSERT_TRUE(manager_->job(42).has_value());
  EXPECT_EQ(manager_->job(42)->spec.node_count, 0u);
  EXPECT_EQ(manager_->job(42)->spec.node_list, "sbn[1-3]");
}

TEST_F(PrologNodesTest, WithoutSlurmdNodenameTheDaemonsHostNameStandsIn) {
  Env env = slurmd({{"SLURM_NODELIST", "sbn[1-3]"}});
  env.erase("SLURMD_NODENAME");
  std::string err;
  ASSERT_EQ(prolog(env, &err), kOk) << err;
  ASSERT_TRUE(manager_->job(42).has_value());
  EXPECT_EQ(manager_->job(42)->spec.node, "host-of-sbn2");
}

// A job whose SPANK_ACCEL_* the plugin would have refused (a user can
// submit through libslurm with any): the hook exits 0, the daemon keeps a
// failed record holding nothing that says why, and PrologFinished carries the
// reason into the job's summary.
TEST_F(PrologNodesTest, ARefusedJobFailsWithoutFailingTheHook) {
  ASSERT_TRUE(writeFileAtomic(root_ + "/vipu.conf",
                              "ApiHost=127.0.0.1\nIpuofDir=" + root_ + "\nMaxIpusPerJob=8\n", 0644)
                  .ok());
  const std::pair<Env, std::string> cases[] = {
      {{{"SPANK_ACCEL_IPUS", "abc"}},
       "--ipus=abc: not a whole number; give 1 to 8 IPUs (MaxIpusPerJob in " + root_ +
           "/vipu.conf)"},
      {{{"SPANK_ACCEL_IPUS", "1024"}}, "--ipus=1024: at most 8 IPUs per job"},
      {{{"SPANK_ACCEL_APPLIANCE_TIME", "99999999999999999999"}},
       "--job-time-sec=99999999999999999999: too large"},
      {{{"SPANK_ACCEL_APPLIANCE_TIME", " "}}, "--job-time-sec=' ': not a whole number"},
  };
  uint32_t job = 100;
  for (const auto& [extra, why] : cases) {
    SCOPED_TRACE(why);
    Env env = slurmd(extra);
    env["SLURM_JOB_ID"] = std::to_string(++job);
    events_.clear();
    std::string err;
    ASSERT_EQ(prolog(env, &err), kOk) << err;
    EXPECT_EQ(
        err.rfind("accel: prolog: job " + std::to_string(job) + ": the job's accelerator options",
                  0),
        0u)
        << err;
    EXPECT_NE(err.find(why), std::string::npos) << err;
    EXPECT_NE(err.find("(the job fails; the node stays in service)"), std::string::npos) << err;
    auto rec = manager_->job(job);
    ASSERT_TRUE(rec.has_value());
    EXPECT_EQ(rec->phase, agent::JobPhase::kFailed);
    EXPECT_NE(rec->last_error.find(why), std::string::npos) << rec->last_error;
    EXPECT_TRUE(rec->devices.empty());
    const event::PrologFinished* finished = nullptr;
    for (const auto& ev : events_)
      if (auto* f = std::get_if<event::PrologFinished>(&ev)) finished = f;
    ASSERT_NE(finished, nullptr);
    EXPECT_EQ(finished->result, event::JobResult::kFailed);
    EXPECT_NE(finished->message.find(why), std::string::npos) << finished->message;
  }
}

TEST_F(PrologNodesTest, TheDaemonRefusesARefusalThatIsNotCleanText) {
  flatbuffers::FlatBufferBuilder fbb;
  auto spec = fb::CreateJobSpecDirect(fbb, 44, 1000, 1000, "alice", "sbn2", "debug", "", 0, 0, 0,
                                      -1, 0, 0, "", 0, "bad\nrefusal");
  fbb.Finish(fb::CreateRequest(fbb, 1, fb::RequestBody::PrologRequest,
                               fb::CreatePrologRequest(fbb, spec).Union()),
             fb::RequestIdentifier());
  std::vector<uint8_t> req(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  auto reply = agentd::handleRequest(ctx_, agentd::Caller{0, 1}, req);
  const auto* r = flatbuffers::GetRoot<fb::Reply>(reply.data());
  EXPECT_EQ(r->outcome(), fb::Outcome::BadRequest);
  EXPECT_FALSE(manager_->job(44).has_value());
}

// What only a hand-made request can carry: the daemon refuses it.
TEST_F(PrologNodesTest, TheDaemonRefusesANodeListOverTheBoundOrUnclean) {
  for (const std::string& list : {std::string(kMaxNodeListBytes + 1, 'x'), std::string("a\nb")}) {
    flatbuffers::FlatBufferBuilder fbb;
    auto spec = fb::CreateJobSpecDirect(fbb, 43, 1000, 1000, "alice", "sbn2", "debug", "", 0, 0, 0,
                                        -1, 0, 0, list.c_str(), 2);
    fbb.Finish(fb::CreateRequest(fbb, 1, fb::RequestBody::PrologRequest,
                                 fb::CreatePrologRequest(fbb, spec).Union()),
               fb::RequestIdentifier());
    std::vector<uint8_t> req(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
    auto reply = agentd::handleRequest(ctx_, agentd::Caller{0, 1}, req);
    const auto* r = flatbuffers::GetRoot<fb::Reply>(reply.data());
    EXPECT_EQ(r->outcome(), fb::Outcome::BadRequest);
    EXPECT_NE(r->message()->str().find("node list"), std::string::npos) << r->message()->str();
  }
  EXPECT_FALSE(manager_->job(43).has_value());
}

}  // namespace
}  // namespace accel::ctl
