// accel-agentd and accelctl as slurmd runs them: whole processes, real socket.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "accel/common/safe_file.h"
#include "accel/ipc/control_socket.h"
#include "accel/schemas/control_generated.h"
#include "process_harness.h"
#include "process_util.h"

namespace accel::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

class DaemonProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(geteuid(), 0u) << "these tests play slurmd and ordinary users: run them as root";
  }
  void startOrFail() { ASSERT_TRUE(h_.start()) << h_.startError(); }
  bool exists(const std::string& p) {
    struct stat st {};
    return lstat(p.c_str(), &st) == 0;
  }
  json jobs() {
    auto r = h_.ctl({"jobs", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out.empty() ? "[]" : r.out);
  }
  AgentHarness h_{
      HarnessPaths{ACCEL_AGENTD, ACCEL_ACCELCTL, ACCEL_HW_MOCK_DIR "/topologies/ipa20.xml"}};
};

TEST_F(DaemonProcessTest, ReadyStatusAndCleanStop) {
  startOrFail();
  auto st = h_.ctl({"status", "--json"});
  ASSERT_EQ(st.exit_code, 0) << st.err;
  auto j = json::parse(st.out);
  EXPECT_EQ(j["devices_total"], 4);  // ipa20 has four GPUs
  EXPECT_EQ(j["jobs"], 0);
  EXPECT_EQ(h_.terminate(), 0);
}

TEST_F(DaemonProcessTest, PrologMakesTheJobReadyAndEpilogRemovesEverything) {
  startOrFail();
  auto p = h_.ctl({"prolog"}, AgentHarness::jobEnv(1001, 4242, "1,2"));
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const std::string dir = h_.runDir() + "/jobs/1001";
  struct stat st {};
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 4242u);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  auto list = jobs();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["job_id"], 1001);
  EXPECT_EQ(list[0]["state"], "Ready");
  EXPECT_EQ(list[0]["env"]["ACCEL_JOB_DIR"], dir);
  EXPECT_FALSE(list[0]["env"]["ACCEL_DEVICES"].get<std::string>().empty());
  auto e = h_.ctl({"epilog"}, AgentHarness::jobEnv(1001, 4242));
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_FALSE(exists(dir));
  EXPECT_TRUE(jobs().empty());
}

TEST_F(DaemonProcessTest, KillNineBetweenPrologAndEpilogLosesNothing) {
  startOrFail();
  ASSERT_EQ(h_.ctl({"prolog"}, AgentHarness::jobEnv(2001, 4242, "0")).exit_code, 0);
  h_.kill9();
  EXPECT_EQ(h_.ctl({"status"}).exit_code, 3);  // down: said so, with its own exit code
  startOrFail();
  auto list = jobs();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["state"], "Ready");
  // The re-adopted job still holds its GPU.
  auto clash = h_.ctl({"prolog"}, AgentHarness::jobEnv(2002, 4242, "0"));
  EXPECT_EQ(clash.exit_code, 1) << clash.err;
  // slurmd runs the refused job's epilog too: it removes the failed record
  // that job left (holding nothing).
  ASSERT_EQ(h_.ctl({"epilog"}, AgentHarness::jobEnv(2002, 4242)).exit_code, 0);
  ASSERT_EQ(h_.ctl({"epilog"}, AgentHarness::jobEnv(2001, 4242)).exit_code, 0);
  EXPECT_FALSE(exists(h_.runDir() + "/jobs/2001"));
  EXPECT_TRUE(jobs().empty());
}

TEST_F(DaemonProcessTest, EightPrologsAtOnceAllSucceed) {
  startOrFail();
  std::vector<std::future<RunResult>> runs;
  for (uint32_t i = 0; i < 8; ++i)
    runs.push_back(std::async(std::launch::async, [this, i] {
      return h_.ctl({"prolog"},
                    AgentHarness::jobEnv(3000 + i, 4242, i < 4 ? std::to_string(i) : ""));
    }));
  for (auto& r : runs) {
    auto res = r.get();
    EXPECT_EQ(res.exit_code, 0) << res.err;
  }
  EXPECT_EQ(jobs().size(), 8u);
}

TEST_F(DaemonProcessTest, EpilogOfUnknownJobAndEpilogTwiceSucceed) {
  startOrFail();
  EXPECT_EQ(h_.ctl({"epilog"}, AgentHarness::jobEnv(4001, 4242)).exit_code, 0);
  ASSERT_EQ(h_.ctl({"prolog"}, AgentHarness::jobEnv(4002, 4242)).exit_code, 0);
  EXPECT_EQ(h_.ctl({"epilog"}, AgentHarness::jobEnv(4002, 4242)).exit_code, 0);
  EXPECT_EQ(h_.ctl({"epilog"}, AgentHarness::jobEnv(4002, 4242)).exit_code, 0);
}

TEST_F(DaemonProcessTest, OrdinaryUserIsRefusedAndChangesNothing) {
  startOrFail();
  ASSERT_EQ(h_.ctl({"prolog"}, AgentHarness::jobEnv(5001, 4242)).exit_code, 0);
  auto p = h_.ctl({"prolog"}, AgentHarness::jobEnv(5002, 65534), 65534);
  EXPECT_EQ(p.exit_code, 4) << p.err;
  auto e = h_.ctl({"epilog"}, AgentHarness::jobEnv(5001, 65534), 65534);
  EXPECT_EQ(e.exit_code, 4) << e.err;
  auto list = jobs();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["job_id"], 5001);
  // A user sees only its own jobs.
  auto theirs = h_.ctl({"jobs", "--json"}, {}, 65534);
  ASSERT_EQ(theirs.exit_code, 0) << theirs.err;
  EXPECT_TRUE(json::parse(theirs.out).empty());
  EXPECT_EQ(h_.ctl({"job", "5001"}, {}, 65534).exit_code, 5);
  EXPECT_EQ(h_.ctl({"job", "5001"}, {}, 4242).exit_code, 0);
}

TEST_F(DaemonProcessTest, HostileBytesOnTheSocketAreRefusedAndTheDaemonStaysUp) {
  startOrFail();
  std::mt19937 rng(99);
  for (int i = 0; i < 50; ++i) {
    std::vector<uint8_t> junk(1 + rng() % 300);
    for (auto& c : junk) c = static_cast<uint8_t>(rng());
    auto reply = ipc::call(h_.socketPath(), junk.data(), junk.size(), 2s);
    ASSERT_TRUE(reply.ok()) << "message " << i << " (" << junk.size()
                            << " bytes): " << reply.error().message() << "; the daemon "
                            << (h_.running() ? "runs" : "is gone") << "; its log:\n"
                            << h_.daemonLog();
    EXPECT_EQ(flatbuffers::GetRoot<control::Reply>(reply->data())->outcome(),
              control::Outcome::BadRequest);
  }
  // Oversize: sent raw, past the cap.
  auto conn = ipc::connectControl(h_.socketPath());
  ASSERT_TRUE(conn.ok());
  int size = 1 << 20;
  setsockopt(conn->fd(), SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  std::vector<uint8_t> big(ipc::kMaxMessageBytes * 2, 0x41);
  ASSERT_EQ(send(conn->fd(), big.data(), big.size(), 0), static_cast<ssize_t>(big.size()));
  auto over = ipc::recvMessage(*conn, 2s);
  ASSERT_TRUE(over.ok());
  EXPECT_EQ(flatbuffers::GetRoot<control::Reply>(over->data())->outcome(),
            control::Outcome::BadRequest);
  // A client that connects and says nothing is dropped without harm.
  auto silent = ipc::connectControl(h_.socketPath());
  ASSERT_TRUE(silent.ok());
  // A truncated valid request.
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(control::CreateRequest(fbb, 1, control::RequestBody::StatusRequest,
                                    control::CreateStatusRequest(fbb).Union()),
             control::RequestIdentifier());
  auto cut = ipc::call(h_.socketPath(), fbb.GetBufferPointer(), fbb.GetSize() / 2, 2s);
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(flatbuffers::GetRoot<control::Reply>(cut->data())->outcome(),
            control::Outcome::BadRequest);
  EXPECT_TRUE(h_.running());
  EXPECT_EQ(h_.ctl({"status"}).exit_code, 0);
}

TEST_F(DaemonProcessTest, SymlinkAtSocketPathIsRefusedStaleSocketIsReplaced) {
  const std::string victim = h_.dir() + "/victim";
  ASSERT_TRUE(writeFileAtomic(victim, "keep", 0600).ok());
  ASSERT_EQ(symlink(victim.c_str(), h_.socketPath().c_str()), 0);
  EXPECT_FALSE(h_.start(3s));
  EXPECT_NE(h_.startError().find("not a socket"), std::string::npos) << h_.startError();
  EXPECT_EQ(*readFileNoFollow(victim), "keep");
  ASSERT_EQ(unlink(h_.socketPath().c_str()), 0);
  startOrFail();
  h_.kill9();  // leaves a stale socket file behind
  startOrFail();
  EXPECT_EQ(h_.ctl({"status"}).exit_code, 0);
}

TEST_F(DaemonProcessTest, BadConfigStopsTheStartAndNamesFileLineKey) {
  h_.writeConfig("LogLevel=loud\n");  // the harness writes 8 lines before this one
  EXPECT_FALSE(h_.start(3s));
  EXPECT_NE(h_.startError().find("accel.conf:9: key 'LogLevel'"), std::string::npos)
      << h_.startError();
  EXPECT_FALSE(exists(h_.socketPath()));
}

TEST_F(DaemonProcessTest, DaemonDownFailsOnlyJobsThatNeedIt) {
  auto plain = h_.ctl({"prolog"}, AgentHarness::jobEnv(6001, 4242));
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.err.find("continuing"), std::string::npos);
  auto gpu = h_.ctl({"prolog"}, AgentHarness::jobEnv(6002, 4242, "0"));
  EXPECT_EQ(gpu.exit_code, 1);
  EXPECT_NE(gpu.err.find("not running"), std::string::npos) << gpu.err;
  EXPECT_EQ(h_.ctl({"epilog"}, AgentHarness::jobEnv(6001, 4242)).exit_code, 0);
  // A limit the site applied by default is not the job asking; one the user gave is.
  auto defaulted = AgentHarness::jobEnv(6003, 4242);
  defaulted["SPANK_ACCEL_APPLIANCE_TIME"] = "1800";
  defaulted["SPANK_ACCEL_APPLIANCE_TIME_SOURCE"] = "default";
  EXPECT_EQ(h_.ctl({"prolog"}, defaulted).exit_code, 0);
  defaulted["SPANK_ACCEL_APPLIANCE_TIME_SOURCE"] = "option";
  EXPECT_EQ(h_.ctl({"prolog"}, defaulted).exit_code, 1);
}

TEST_F(DaemonProcessTest, EpilogWithDaemonDownFailsOnlyWhenSomethingIsLeftToClean) {
  startOrFail();
  ASSERT_EQ(h_.ctl({"prolog"}, AgentHarness::jobEnv(6101, 4242)).exit_code, 0);
  h_.kill9();
  auto held = h_.ctl({"epilog"}, AgentHarness::jobEnv(6101, 4242));
  EXPECT_EQ(held.exit_code, 1) << held.err;  // its directory and record would leak
  auto unknown = h_.ctl({"epilog"}, AgentHarness::jobEnv(6102, 4242));
  EXPECT_EQ(unknown.exit_code, 0) << unknown.err;
  startOrFail();
  EXPECT_EQ(h_.ctl({"epilog"}, AgentHarness::jobEnv(6101, 4242)).exit_code, 0);
  EXPECT_FALSE(exists(h_.runDir() + "/jobs/6101"));
}

TEST_F(DaemonProcessTest, ReloadKeepsJobsAndBadReloadKeepsOldConfig) {
  startOrFail();
  ASSERT_EQ(h_.ctl({"prolog"}, AgentHarness::jobEnv(7001, 4242, "3")).exit_code, 0);
  h_.writeConfig("LogLevel=debug\n");
  h_.signal(SIGHUP);
  ASSERT_TRUE(h_.waitNotify("READY=1", 5s));
  EXPECT_EQ(jobs().size(), 1u);
  h_.writeConfig("LogLevel=shouting\n");
  h_.signal(SIGHUP);
  ASSERT_TRUE(h_.waitNotify("READY=1", 5s));
  EXPECT_TRUE(h_.running());
  // accelctl reads the same file to find the socket, so it refuses it too.
  EXPECT_EQ(h_.ctl({"jobs"}).exit_code, 2);
  h_.writeConfig("");
  EXPECT_EQ(jobs().size(), 1u);
}

TEST_F(DaemonProcessTest, HookWithoutSlurmEnvironmentIsAUsageError) {
  startOrFail();
  auto r = h_.ctl({"prolog"}, {});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("SLURM_JOB_ID"), std::string::npos);
  auto bad = h_.ctl({"prolog"}, {{"SLURM_JOB_ID", "12x"}, {"SLURM_JOB_UID", "0"}});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(jobs().empty());
}

}  // namespace
}  // namespace accel::testing

namespace accel::testing {
namespace {

// systemd may read its notify socket slowly; here nobody reads it at all. A
// STATUS= update per request would fill the socket's queue and block the
// daemon's workers until it answered Busy; updates are coalesced instead.
// More clients than the daemon serves at once: the ones over the limit are
// answered Busy at once (never left hanging until their own time-out), and the
// daemon serves normally again once the crowd is gone. The held connections
// send nothing, so each keeps a worker waiting for its request.
TEST_F(DaemonProcessTest, ClientsOverTheLimitAreToldBusyAndServiceResumes) {
  startOrFail();
  constexpr int kLimit = 64;  // root's places (ipc::AdmissionLimits::admin_connections)
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(control::CreateRequest(fbb, 1, control::RequestBody::StatusRequest,
                                    control::CreateStatusRequest(fbb).Union()),
             control::RequestIdentifier());
  std::string last_error;
  auto outcome = [&] {
    auto reply = ipc::call(h_.socketPath(), fbb.GetBufferPointer(), fbb.GetSize(), 5s);
    if (!reply.ok()) last_error = reply.error().message();
    return reply.ok() ? flatbuffers::GetRoot<control::Reply>(reply->data())->outcome()
                      : control::Outcome::NodeFault;
  };
  ASSERT_EQ(outcome(), control::Outcome::Ok);
  std::vector<ipc::Socket> held;
  for (int i = 0; i < kLimit; ++i) {
    auto c = ipc::connectControl(h_.socketPath());
    ASSERT_TRUE(c.ok()) << c.error().message();
    held.push_back(std::move(*c));
  }
  // Until every held connection has a worker, a request may still be taken
  // by one; give the pool a moment, then every further client is told Busy.
  control::Outcome crowded = control::Outcome::Ok;
  for (int i = 0; i < 250 && crowded != control::Outcome::Busy; ++i) {
    std::this_thread::sleep_for(20ms);
    auto t0 = std::chrono::steady_clock::now();
    crowded = outcome();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s)
        << "a client over the limit waited for an answer";
  }
  EXPECT_EQ(crowded, control::Outcome::Busy) << "last call error: " << last_error;
  held.clear();
  control::Outcome after = control::Outcome::Busy;
  for (int i = 0; i < 100 && after != control::Outcome::Ok; ++i) {
    std::this_thread::sleep_for(20ms);
    after = outcome();
  }
  EXPECT_EQ(after, control::Outcome::Ok)
      << "the daemon did not serve again after the crowd left; last call error: " << last_error;
  EXPECT_TRUE(h_.running());
  EXPECT_EQ(h_.terminate(), 0) << "a clean stop after the crowd";
}

// The daemon out of file descriptors: a connection it cannot accept stays
// pending without the workers spinning on it, and is served once a
// descriptor is free again.
TEST_F(DaemonProcessTest, OutOfFileDescriptorsNeitherSpinsNorLosesTheClient) {
  startOrFail();
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(control::CreateRequest(fbb, 1, control::RequestBody::StatusRequest,
                                    control::CreateStatusRequest(fbb).Union()),
             control::RequestIdentifier());
  auto reply = ipc::call(h_.socketPath(), fbb.GetBufferPointer(), fbb.GetSize(), 5s);
  ASSERT_TRUE(reply.ok()) << reply.error().message();
  std::this_thread::sleep_for(200ms);  // the worker that served it is idle again
  const std::string fd_dir = "/proc/" + std::to_string(h_.pid()) + "/fd";
  // RLIMIT_NOFILE bounds descriptor numbers, and a new descriptor takes the
  // lowest free number: the limit that leaves room for exactly one more is
  // one past the first free number.
  auto limit_for_one_more = [&] {
    std::set<long> used;
    for (const auto& e : std::filesystem::directory_iterator(fd_dir))
      used.insert(std::stol(e.path().filename()));
    long first_free = 0;
    while (used.count(first_free) != 0) ++first_free;
    long second_free = first_free + 1;
    while (used.count(second_free) != 0) ++second_free;
    return static_cast<rlim_t>(second_free);
  };
  auto cpu_ticks = [&] {
    std::ifstream f("/proc/" + std::to_string(h_.pid()) + "/stat");
    std::string text((std::istreambuf_iterator<char>(f)), {});
    std::istringstream rest(text.substr(text.rfind(')') + 2));
    std::string field;
    long utime = 0, stime = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i) {
      if (i == 14) utime = std::stol(field);
      if (i == 15) stime = std::stol(field);
    }
    return utime + stime;
  };
  rlimit old{};
  ASSERT_EQ(prlimit(h_.pid(), RLIMIT_NOFILE, nullptr, &old), 0);
  rlimit tight = old;
  tight.rlim_cur = limit_for_one_more();
  ASSERT_EQ(prlimit(h_.pid(), RLIMIT_NOFILE, &tight, nullptr), 0);
  auto held = ipc::connectControl(h_.socketPath());  // takes the last descriptor, sends nothing
  ASSERT_TRUE(held.ok()) << held.error().message();
  std::this_thread::sleep_for(200ms);
  auto waiting = ipc::connectControl(h_.socketPath());
  ASSERT_TRUE(waiting.ok()) << waiting.error().message();
  ASSERT_TRUE(ipc::sendMessage(*waiting, fbb.GetBufferPointer(), fbb.GetSize(), 1s).ok());
  const long before = cpu_ticks();
  std::this_thread::sleep_for(1500ms);
  const long used = cpu_ticks() - before;
  EXPECT_LT(used, sysconf(_SC_CLK_TCK) / 2)
      << "the daemon spun on a connection it could not accept";
  const std::string log = h_.daemonLog();
  size_t said = 0;
  for (size_t at = log.find("Too many open files"); at != std::string::npos;
       at = log.find("Too many open files", at + 1))
    ++said;
  EXPECT_EQ(said, 1u) << "the failure is said once, not on every retry:\n" << log;
  held = ipc::Socket();  // its worker sees the close and frees the descriptor
  auto answer = ipc::recvMessage(*waiting, 5s);
  ASSERT_TRUE(answer.ok()) << answer.error().message();
  EXPECT_EQ(flatbuffers::GetRoot<control::Reply>(answer->data())->outcome(), control::Outcome::Ok);
  ASSERT_EQ(prlimit(h_.pid(), RLIMIT_NOFILE, &old, nullptr), 0);
  EXPECT_TRUE(h_.running());
}

TEST_F(DaemonProcessTest, AnUnreadNotifySocketNeverStallsRequests) {
  startOrFail();
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(control::CreateRequest(fbb, 1, control::RequestBody::StatusRequest,
                                    control::CreateStatusRequest(fbb).Union()),
             control::RequestIdentifier());
  int ok = 0;
  for (int i = 0; i < 300; ++i) {
    auto reply = ipc::call(h_.socketPath(), fbb.GetBufferPointer(), fbb.GetSize(), 2s);
    if (reply.ok() &&
        flatbuffers::GetRoot<control::Reply>(reply->data())->outcome() == control::Outcome::Ok)
      ++ok;
  }
  EXPECT_EQ(ok, 300);
}

}  // namespace
}  // namespace accel::testing

namespace accel::testing {
namespace {

TEST_F(DaemonProcessTest, PingsTheWatchdogWhenAskedAndNeverOtherwise) {
  h_.setWatchdogUsec(200'000);  // WatchdogSec=0.2s: pings every 0.1 s
  startOrFail();
  EXPECT_TRUE(h_.waitNotify("WATCHDOG=1", 2s));
  EXPECT_TRUE(h_.waitNotify("WATCHDOG=1", 2s));
  EXPECT_EQ(h_.terminate(), 0);
  AgentHarness quiet{
      HarnessPaths{ACCEL_AGENTD, ACCEL_ACCELCTL, ACCEL_HW_MOCK_DIR "/topologies/ipa20.xml"}};
  ASSERT_TRUE(quiet.start()) << quiet.startError();
  EXPECT_FALSE(quiet.waitNotify("WATCHDOG=1", 500ms));
}

}  // namespace
}  // namespace accel::testing

namespace accel::testing {
namespace {

void writeFile(const std::string& path, const std::string& text) {
  ASSERT_TRUE(writeFileAtomic(path, text, 0644).ok());
}

TEST_F(DaemonProcessTest, BadVipuConfStopsTheStartAndIsNamed) {
  writeFile(h_.dir() + "/vipu.conf", "ApiHost=vipu.invalid\n");  // IpuofDir is required
  EXPECT_FALSE(h_.start(3s));
  EXPECT_NE(h_.startError().find("vipu.conf"), std::string::npos) << h_.startError();
  EXPECT_NE(h_.startError().find("IpuofDir"), std::string::npos) << h_.startError();
}

// Job directories are made and moved aside in IpuofDir as root: one that a
// user could change stops the start, named with its fault; the daemon does
// not change it.
TEST_F(DaemonProcessTest, IpuofDirWritableByOthersStopsTheStart) {
  const std::string ipuof = h_.dir() + "/ipuof";
  ASSERT_EQ(mkdir(ipuof.c_str(), 0755), 0);
  ASSERT_EQ(chmod(ipuof.c_str(), 0777), 0);
  writeFile(h_.dir() + "/vipu.conf", "ApiHost=127.0.0.1\nIpuofDir=" + ipuof + "\n");
  EXPECT_FALSE(h_.start(3s));
  EXPECT_NE(h_.startError().find("IpuofDir of " + h_.dir() + "/vipu.conf must be root's"),
            std::string::npos)
      << h_.startError();
  EXPECT_NE(h_.startError().find(ipuof + ": writable by others (mode 0777)"), std::string::npos)
      << h_.startError();
  struct stat st {};
  ASSERT_EQ(stat(ipuof.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0777u);
}

// Without an aggregator every job event waits in the spool, and a killed
// daemon finds them all again: nothing is lost before it is acknowledged.
TEST_F(DaemonProcessTest, JobEventsAreSpooledAndSurviveAKill) {
  startOrFail();
  ASSERT_EQ(h_.ctl({"prolog"}, AgentHarness::jobEnv(1201, 4242, "0")).exit_code, 0);
  ASSERT_EQ(h_.ctl({"epilog"}, AgentHarness::jobEnv(1201, 4242, "0")).exit_code, 0);
  auto events = [&] {
    auto st = h_.ctl({"status", "--json"});
    EXPECT_EQ(st.exit_code, 0) << st.err;
    return json::parse(st.out)["events"].get<std::string>();
  };
  // Agent started, its first heartbeat (sent before READY), prolog started
  // and finished, epilog finished.
  EXPECT_NE(events().find("link down, backlog 5 "), std::string::npos) << events();
  h_.kill9();
  startOrFail();
  EXPECT_NE(events().find("link down, backlog 7 "), std::string::npos)
      << "5 kept, a new start and its heartbeat: " << events();
}

// A GPU job learns the RDMA devices nearest its GPUs in the variables NCCL and
// UCX read, and `accelctl status` says which job holds which GPU.
TEST_F(DaemonProcessTest, GpuJobGetsItsNearestNicsAndStatusNamesTheHolder) {
  startOrFail();
  ASSERT_EQ(h_.ctl({"prolog"}, AgentHarness::jobEnv(1301, 4242, "0,1")).exit_code, 0);
  auto job = h_.ctl({"job", "1301", "--json"});
  ASSERT_EQ(job.exit_code, 0) << job.err;
  auto env = json::parse(job.out)["env"];
  // ipa20: GPU 0 shares a PCI switch with both ports of mlx5_0/mlx5_1, GPU 1 with mlx5_2.
  EXPECT_EQ(env["NCCL_IB_HCA"], "mlx5_0,mlx5_1,mlx5_2");
  EXPECT_EQ(env["ACCEL_NCCL_IB_HCA"], "mlx5_0,mlx5_1,mlx5_2");
  EXPECT_EQ(env["UCX_NET_DEVICES"], "mlx5_0:1,mlx5_1:1,mlx5_2:1");
  auto st = h_.ctl({"status", "--json"});
  ASSERT_EQ(st.exit_code, 0) << st.err;
  auto use = json::parse(st.out)["device_use"];
  ASSERT_EQ(use.size(), 4u);
  EXPECT_EQ(use[0]["name"], "cuda0");
  EXPECT_EQ(use[0]["job_id"], 1301);
  EXPECT_EQ(use[1]["job_id"], 1301);
  EXPECT_EQ(use[2]["job_id"], 0);
  auto table = h_.ctl({"status"});
  EXPECT_NE(table.out.find("cuda1     gpu   job 1301"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("cuda3     gpu   free"), std::string::npos) << table.out;
  ASSERT_EQ(h_.ctl({"epilog"}, AgentHarness::jobEnv(1301, 4242, "0,1")).exit_code, 0);
}

// The metric's value in a /metrics answer: the number after "NAME " on its
// own line; -1 when the line is missing.
double metricValue(const std::string& text, const std::string& name) {
  size_t at = text.find("\n" + name + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + name.size() + 2));
}

// MetricsAddress: the hooks, the jobs and the spool as Prometheus reads them.
TEST_F(DaemonProcessTest, MetricsShowHooksJobsAndTheSpool) {
  const uint16_t port = support::freePort();
  h_.writeConfig("MetricsAddress=127.0.0.1:" + std::to_string(port) + "\n");
  startOrFail();
  auto scrape = [&] { return support::httpExchange(port, "GET /metrics HTTP/1.0\r\n\r\n"); };
  std::string idle = scrape();
  ASSERT_EQ(idle.rfind("HTTP/1.1 200", 0), 0u) << idle;
  EXPECT_EQ(metricValue(idle, "accel_jobs_active"), 0) << idle;
  EXPECT_EQ(metricValue(idle, "accel_limit_enforcements_total"), 0) << idle;
  ASSERT_EQ(h_.ctl({"prolog"}, AgentHarness::jobEnv(1401, 4242, "0")).exit_code, 0);
  std::string running = scrape();
  EXPECT_EQ(metricValue(running, "accel_jobs_active"), 1) << running;
  EXPECT_EQ(metricValue(running, "accel_hook_duration_seconds_count{hook=\"prolog\"}"), 1)
      << running;
  EXPECT_GT(metricValue(running, "accel_hook_duration_seconds_sum{hook=\"prolog\"}"), 0) << running;
  ASSERT_EQ(h_.ctl({"epilog"}, AgentHarness::jobEnv(1401, 4242, "0")).exit_code, 0);
  std::string done = scrape();
  EXPECT_EQ(metricValue(done, "accel_jobs_active"), 0) << done;
  EXPECT_EQ(metricValue(done, "accel_hook_duration_seconds_count{hook=\"epilog\"}"), 1) << done;
  // No aggregator here: agent start, heartbeat, prolog started and finished,
  // epilog finished wait in the spool.
  EXPECT_EQ(metricValue(done, "accel_events_spooled"), 5) << done;
  EXPECT_GT(metricValue(done, "accel_spool_bytes"), 0) << done;
  EXPECT_EQ(h_.terminate(), 0) << h_.daemonLog();
  EXPECT_TRUE(support::httpExchange(port, "GET /metrics HTTP/1.0\r\n\r\n").empty())
      << "still served after the stop";
}

TEST_F(DaemonProcessTest, BadMetricsAddressStopsTheStartAndIsNamed) {
  h_.writeConfig("MetricsAddress=localhost:9464\n");
  EXPECT_FALSE(h_.start(3s));
  EXPECT_NE(h_.startError().find("MetricsAddress in " + h_.configPath()), std::string::npos)
      << h_.startError();
  EXPECT_NE(h_.startError().find("not a numeric IPv4 address"), std::string::npos)
      << h_.startError();
}

// An idle daemon sleeps: no thread wakes up periodically (the watchdog is
// off here), so its threads' context switches do not grow while nothing
// happens. Its kernel log is a quiet file of its own: /dev/kmsg wakes the
// reader for every record, and on a machine running network namespaces
// beside the test (the sandboxes' fabric bridges) records come and go.
TEST_F(DaemonProcessTest, IdleDaemonDoesNotWakeUp) {
  const std::string kmsg = h_.dir() + "/quiet-kmsg";
  std::ofstream(kmsg).flush();
  h_.writeConfig("KernelLog=" + kmsg + "\n");
  startOrFail();
  ASSERT_EQ(h_.ctl({"status"}).exit_code, 0);
  auto switches = [&] {
    long total = 0;
    std::string tasks = "/proc/" + std::to_string(h_.pid()) + "/task";
    for (const auto& t : std::filesystem::directory_iterator(tasks)) {
      std::ifstream in(t.path() / "status");
      std::string line;
      while (std::getline(in, line))
        if (line.rfind("voluntary_ctxt_switches:", 0) == 0 ||
            line.rfind("nonvoluntary_ctxt_switches:", 0) == 0)
          total += std::stol(line.substr(line.find(':') + 1));
    }
    return total;
  };
  std::this_thread::sleep_for(1500ms);  // the status update after the request settles
  long before = switches();
  std::this_thread::sleep_for(3s);
  long woke = switches() - before;
  EXPECT_LE(woke, 2) << "threads of an idle daemon woke up " << woke << " times in 3 s";
}

}  // namespace
}  // namespace accel::testing
