// forge_events: what a node whose root is taken could send the aggregator
// with that node's own CURVE key about a job it never ran. It publishes
// through the agent's own outbox (a spool of its own, in a fresh epoch above
// any the node's agent used), so the frames are exactly an agent's:
//
//   forge_events CONF SPOOL_DIR JOB UID RESTART_COUNT NODE_LIST NODE_COUNT
//
// CONF is the node's accel.conf, read for NodeName (else the host name),
// AggregatorAddress, AggregatorPublicKeyFile and NodeKeyFile. The events, in
// order, all about JOB (owner UID): the prolog of a run RESTART_COUNT on
// NODE_LIST (NODE_COUNT nodes), a failed prolog result with a message, an
// appliance job of 86400 s, the appliance limit enforced, and a failed epilog
// of that run that used 86400 s. Then it waits (at most 30 s) until every
// event is acknowledged or refused, printing each refusal and a last line
// `published=N acked=N refused=N backlog=N`. Exit 0 once all are answered,
// 1 if not, 2 on bad usage.
//
//   forge_events --lists N SECONDS CONF SPOOL_DIR FIRST_JOB UID
//
// A flood of large node lists instead: the prologs of N jobs from FIRST_JOB
// on, each naming the node and 65,535 other names of its own (65,536 in all,
// the most a list may hold), so that none is like another. It sends them for
// SECONDS, then prints the same last line and exits 0, answered or not.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "accel/events/outbox.h"

using namespace accel;

namespace {

// KEY=VALUE lines of accel.conf, as written by the sandbox (no sections).
std::map<std::string, std::string> readConf(const std::string& path) {
  std::map<std::string, std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    auto eq = line.find('=');
    if (line.empty() || line[0] == '#' || eq == std::string::npos) continue;
    out[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return out;
}

std::string hostName() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? name : "";
}

int fail(const std::string& what) {
  std::fprintf(stderr, "forge_events: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  uint32_t lists = 0;
  int wait_s = 30;
  if (argc == 8 && std::string(argv[1]) == "--lists") {
    lists = static_cast<uint32_t>(std::stoul(argv[2]));
    wait_s = std::stoi(argv[3]);
    // The usual arguments after them; restart count, list and count are unused.
    static char zero[] = "0", none[] = "-";
    static char* rest[8];
    rest[0] = argv[0];
    for (int i = 1; i <= 4; ++i) rest[i] = argv[i + 3];
    rest[5] = zero, rest[6] = none, rest[7] = zero;
    argv = rest;
    argc = 8;
  }
  if (argc != 8)
    return std::fprintf(stderr,
                        "usage: forge_events CONF SPOOL_DIR JOB UID RESTART_COUNT NODE_LIST "
                        "NODE_COUNT\n"),
           2;
  auto conf = readConf(argv[1]);
  const std::string spool = argv[2];
  const auto job = static_cast<uint32_t>(std::stoul(argv[3]));
  const auto uid = static_cast<uint32_t>(std::stoul(argv[4]));
  const auto restart = static_cast<uint32_t>(std::stoul(argv[5]));
  const std::string list = argv[6];
  const auto count = static_cast<uint32_t>(std::stoul(argv[7]));

  event::OutboxOptions o;
  o.node = conf.contains("NodeName") ? conf["NodeName"] : hostName();
  o.spool_dir = spool;
  o.endpoint = conf["AggregatorAddress"];
  auto server = event::loadPublicKey(conf["AggregatorPublicKeyFile"]);
  if (!server.ok()) return fail("aggregator key: " + server.error().message());
  auto mine = event::loadSecretKey(conf["NodeKeyFile"]);
  if (!mine.ok()) return fail("node key: " + mine.error().message());
  o.server_public_key = *server;
  o.client_keys = *mine;
  o.ack_timeout = std::chrono::milliseconds(2000);
  o.reconnect_max = std::chrono::milliseconds(500);
  std::mutex print_mu;
  std::atomic<uint64_t> refused{0};
  o.on_refused = [&](const event::Nack& n) {
    ++refused;
    std::lock_guard lock(print_mu);
    std::printf("refused: seq %llu: %s: %s\n", static_cast<unsigned long long>(n.seq),
                event::nackReasonName(n.reason), n.message.c_str());
    std::fflush(stdout);
  };
  // An epoch above any the node's agent used: its streams' numbers would
  // make these frames look like duplicates.
  std::error_code made;
  std::filesystem::create_directories(spool, made);
  if (made) return fail("spool " + spool + ": " + made.message());
  {
    std::ofstream epoch(spool + "/epoch");
    epoch << std::chrono::duration_cast<std::chrono::seconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count()
          << "\n";
    if (!epoch) return fail("cannot write " + spool + "/epoch");
  }
  auto box = event::Outbox::start(o);
  if (!box.ok()) return fail(box.error().message());

  const uint64_t huge = 86400;
  const event::Event events[] = {
      event::PrologStarted{job, uid, "forged", list, count, restart},
      event::PrologFinished{
          job, event::JobResult::kFailed, {}, "", 1, "forged by " + o.node, "ipu", huge},
      event::ApplianceJobChanged{job, "forged-wsjob", event::ApplianceState::kRunning, 1, huge},
      event::TimeLimitEnforced{job, huge, huge},
      event::EpilogFinished{job, event::JobResult::kFailed, 1, "", false, huge, restart},
  };
  if (lists == 0) {
    for (const auto& ev : events)
      if (Status s = (*box)->publish(ev); !s.ok()) return fail(s.error().message());
  }
  for (uint32_t i = 0; i < lists; ++i) {
    const uint32_t id = job + i;
    const event::Event prolog = event::PrologStarted{
        id, uid, "forged", o.node + ",forged" + std::to_string(id) + "n[1-65535]", 65536, 0};
    if (Status s = (*box)->publish(prolog); !s.ok()) return fail(s.error().message());
  }

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(wait_s);
  auto stats = (*box)->stats();
  while (stats.backlog > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    stats = (*box)->stats();
  }
  std::printf("node=%s epoch=%llu published=%llu acked=%llu refused=%llu backlog=%llu\n",
              o.node.c_str(), static_cast<unsigned long long>(stats.epoch),
              static_cast<unsigned long long>(stats.published),
              static_cast<unsigned long long>(stats.acked),
              static_cast<unsigned long long>(refused.load()),
              static_cast<unsigned long long>(stats.backlog));
  return stats.backlog == 0 || lists > 0 ? 0 : 1;
}
