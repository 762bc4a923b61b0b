// accel-aggregatord and real outboxes (event_emitter, or outboxes in this
// process) over ZeroMQ ipc:// in a temp dir, or TCP loopback for the link
// tests: delivery exactly once across restarts and kill -9 of either side;
// hostile peers are refused and counted; a job on two nodes waits for both
// epilogs, across a restart; pings find a hung aggregator; attempts back off.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <zmq.hpp>

#include "accel/common/safe_file.h"
#include "accel/events/codec.h"
#include "accel/events/curve_keys.h"
#include "accel/events/outbox.h"
#include "process_util.h"

namespace {

using namespace std::chrono_literals;
using accel::event::CurveKeyPair;

int waitExit(pid_t pid, std::chrono::seconds limit) {
  auto end = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > end) {
      kill(pid, SIGKILL), waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(10ms);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

using accel::support::freePort;
using accel::support::spawn;

class AggregatorProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/accel-agg-proc-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_TRUE(accel::makeDirectory(dir_ + "/nodes", 0755).ok());
    server_ = *accel::event::generateCurveKeyPair();
    ASSERT_TRUE(accel::event::writeKeyPair(dir_ + "/aggregator", server_).ok());
    node_ = *accel::event::generateCurveKeyPair();
    ASSERT_TRUE(accel::event::writeKeyPair(dir_ + "/node1", node_).ok());
    std::ofstream(dir_ + "/nodes/node1.pub")
        << node_.public_key << "\n";  // the allow list: public keys only
    port_ = freePort();
    std::ofstream(dir_ + "/agg.conf")
        << "Listen=" << endpoint() << "\nSecretKeyFile=" << dir_
        << "/aggregator.key\nAllowListDir=" << dir_ << "/nodes\nDatabase=" << dir_
        << "/events.db\nMetricsAddress=127.0.0.1:" << port_
        << "\nWriteComments=no\nSummaryWaitSeconds=3600\nLogLevel=debug\n";
    notify_fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::snprintf(sa.sun_path, sizeof sa.sun_path, "%s/notify", dir_.c_str());
    ASSERT_EQ(bind(notify_fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
    // Read every notification as systemd does: an unread socket fills after
    // max_dgram_qlen (10) datagrams and then blocks the aggregator's main loop
    // in sd_notify (STATUS= once a second), which froze slow runs after ~11 s.
    notify_reader_ = std::thread([this] {
      char buf[512];
      while (!stop_reader_) {
        pollfd p{notify_fd_, POLLIN, 0};
        if (poll(&p, 1, 50) <= 0) continue;
        ssize_t n = recv(notify_fd_, buf, sizeof buf - 1, MSG_DONTWAIT);
        if (n > 0 && std::string(buf, size_t(n)).find("READY=1") != std::string::npos) ++readies_;
      }
    });
  }
  void TearDown() override {
    if (agg_ > 0) kill(agg_, SIGKILL), waitpid(agg_, nullptr, 0);
    stop_reader_ = true;
    if (notify_reader_.joinable()) notify_reader_.join();
    close(notify_fd_);
    if (!HasFailure())
      (void)accel::removeTree(dir_);
    else
      std::fprintf(stderr, "kept %s for inspection\n", dir_.c_str());
  }
  std::string endpoint() const { return tcp_.empty() ? "ipc://" + dir_ + "/agg.sock" : tcp_; }
  // The aggregator listens on TCP loopback instead, as it does for real nodes.
  void listenOnTcp() {
    tcp_ = "tcp://127.0.0.1:" + std::to_string(freePort());
    std::ifstream in(dir_ + "/agg.conf");
    std::string text, line;
    while (std::getline(in, line))
      text += (line.rfind("Listen=", 0) == 0 ? "Listen=" + tcp_ : line) + "\n";
    std::ofstream(dir_ + "/agg.conf") << text;
  }
  // A second node on the allow list, with its keys.
  CurveKeyPair addNode(const std::string& name) {
    CurveKeyPair keys = *accel::event::generateCurveKeyPair();
    std::ofstream(dir_ + "/nodes/" + name + ".pub") << keys.public_key << "\n";
    return keys;
  }
  // An outbox of this process for `node`, its spool in the test directory.
  std::unique_ptr<accel::event::Outbox> outbox(const std::string& node, const CurveKeyPair& keys,
                                               std::chrono::milliseconds ping) {
    accel::event::OutboxOptions o;
    o.node = node;
    o.spool_dir = dir_ + "/spool-" + node;
    o.endpoint = endpoint();
    o.server_public_key = server_.public_key;
    o.client_keys = keys;
    o.reconnect_min = 100ms;
    o.reconnect_max = 800ms;
    o.attempt_timeout = 2s;
    o.ack_timeout = 2s;
    o.ping_interval = ping;
    o.ping_timeout = 3 * ping;
    auto box = accel::event::Outbox::start(o);
    EXPECT_TRUE(box.ok()) << box.error().message();
    return box.ok() ? std::move(*box) : nullptr;
  }

  void startAggregator() {
    int before = readies_;
    agg_ = spawn({ACCEL_AGGREGATORD, "--config", dir_ + "/agg.conf"}, dir_ + "/agg.log",
                 dir_ + "/notify");
    auto end = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < end) {
      if (readies_ > before) return;
      std::this_thread::sleep_for(10ms);
    }
    FAIL() << "aggregator not ready";
  }
  void killAggregator() {
    kill(agg_, SIGKILL), waitpid(agg_, nullptr, 0);
    agg_ = -1;
  }
  pid_t emitter(long count, bool wait) {
    return spawn(
        {ACCEL_EMITTER, dir_ + "/spool", endpoint(), dir_ + "/aggregator.pub", dir_ + "/node1.key",
         "node1", std::to_string(count), wait ? "1" : "0", dir_ + "/progress"},
        dir_ + "/emitter.log");
  }
  uint64_t ackedSoFar() {
    std::ifstream f(dir_ + "/progress");
    uint64_t epoch = 0, acked = 0;
    f >> epoch >> acked;
    return acked;
  }
  // count, distinct seqs, min, max of one stream
  std::array<int64_t, 4> stream(uint64_t epoch) {
    sqlite3* db = nullptr;
    std::array<int64_t, 4> out{-1, -1, -1, -1};
    if (sqlite3_open_v2((dir_ + "/events.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr) !=
        SQLITE_OK)
      return out;
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(db,
                       "SELECT count(*), count(DISTINCT seq), min(seq), max(seq) FROM events WHERE "
                       "node='node1' AND epoch=?",
                       -1, &s, nullptr);
    sqlite3_bind_int64(s, 1, int64_t(epoch));
    if (sqlite3_step(s) == SQLITE_ROW)
      for (int i = 0; i < 4; ++i) out[size_t(i)] = sqlite3_column_int64(s, i);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return out;
  }
  // The first column of the first row of `sql` over the database, as text;
  // empty when there is no row.
  std::string query(const std::string& sql) {
    sqlite3* db = nullptr;
    std::string out;
    if (sqlite3_open_v2((dir_ + "/events.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr) !=
        SQLITE_OK)
      return out;
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr);
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
      out = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    sqlite3_close(db);
    return out;
  }
  // Sends `events` as stream (node, 1) with a fresh DEALER, the node's
  // keys, and waits until the last one is acknowledged.
  bool sendAsNode(const std::string& node, const CurveKeyPair& keys,
                  const std::vector<accel::event::Event>& events) {
    zmq::context_t ctx;
    zmq::socket_t s(ctx, zmq::socket_type::dealer);
    s.set(zmq::sockopt::linger, 0);
    s.set(zmq::sockopt::curve_serverkey, server_.public_key);
    s.set(zmq::sockopt::curve_publickey, keys.public_key);
    s.set(zmq::sockopt::curve_secretkey, keys.secret_key);
    s.set(zmq::sockopt::rcvtimeo, 10000);
    s.connect(endpoint());
    uint64_t seq = 0;
    for (const auto& ev : events)
      s.send(zmq::buffer(accel::event::encode({node, 1, ++seq, 1, 1}, ev)));
    for (zmq::message_t ack; s.recv(ack);) {
      auto a = accel::event::decodeAck({static_cast<const uint8_t*>(ack.data()), ack.size()});
      if (a.ok() && *a == accel::event::Ack{1, seq}) return true;
    }
    return false;
  }
  std::string metrics() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port_);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval limit{10, 0};  // a peer that never answers fails the test instead of hanging it
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) return close(fd), "";
    std::string req = "GET /metrics HTTP/1.0\r\n\r\n";
    (void)!write(fd, req.data(), req.size());
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, size_t(n));
    close(fd);
    return out;
  }
  int64_t metric(const std::string& line_start) {
    std::istringstream in(metrics());
    for (std::string line; std::getline(in, line);)
      if (line.rfind(line_start + " ", 0) == 0)
        return std::stoll(line.substr(line_start.size() + 1));
    return -1;
  }

  std::string dir_;
  CurveKeyPair server_, node_;
  uint16_t port_ = 0;
  int notify_fd_ = -1;
  std::thread notify_reader_;
  std::atomic<bool> stop_reader_{false};
  std::atomic<int> readies_{0};
  pid_t agg_ = -1;
  std::string tcp_;  // set: the aggregator listens here
};

template <typename Pred>
bool waitFor(Pred pred, std::chrono::seconds limit) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

accel::event::TaskStarted task(uint32_t id) {
  return {.job_id = 7, .step_id = 0, .task_id = id, .pid = 1};
}

// An aggregator that hangs (SIGSTOP: the kernel still holds its TCP
// connections open, so nothing at the TCP level notices) is found out by the
// link's pings: the node drops the link and keeps trying. A node without
// pings keeps its dead link all along. Both deliver everything, once, when
// the aggregator runs again.
TEST_F(AggregatorProcessTest, PingsFindAHungAggregatorOverTcpAndNothingIsLostWhenItWakes) {
  listenOnTcp();
  CurveKeyPair quiet_keys = addNode("node2");
  startAggregator();
  auto pinging = outbox("node1", node_, 300ms);
  auto quiet = outbox("node2", quiet_keys, 0ms);
  ASSERT_TRUE(pinging && quiet);
  ASSERT_TRUE(pinging->publish(task(1)).ok());
  ASSERT_TRUE(quiet->publish(task(1)).ok());
  ASSERT_TRUE(
      waitFor([&] { return pinging->stats().backlog == 0 && quiet->stats().backlog == 0; }, 20s));
  ASSERT_TRUE(pinging->stats().link_up && quiet->stats().link_up);

  ASSERT_EQ(kill(agg_, SIGSTOP), 0);
  for (uint32_t i = 2; i <= 5; ++i)
    ASSERT_TRUE(pinging->publish(task(i)).ok() && quiet->publish(task(i)).ok());
  EXPECT_TRUE(waitFor([&] { return !pinging->stats().link_up; }, 10s))
      << "pings every 0.3 s, timeout 0.9 s";
  EXPECT_GE(pinging->stats().reconnects, 1u);
  EXPECT_TRUE(quiet->stats().link_up) << "without pings nothing should notice the hung peer";
  EXPECT_EQ(quiet->stats().reconnects, 0u);
  // Attempts go on against the hung aggregator, spaced by the back-off
  // (each ends at the 2 s attempt timeout or at a ping).
  EXPECT_TRUE(waitFor([&] { return pinging->stats().attempts >= 2; }, 10s));

  ASSERT_EQ(kill(agg_, SIGCONT), 0);
  EXPECT_TRUE(
      waitFor([&] { return pinging->stats().backlog == 0 && quiet->stats().backlog == 0; }, 30s))
      << describe(pinging->stats()) << " / " << describe(quiet->stats());
  EXPECT_TRUE(pinging->stats().link_up);
  for (const char* node : {"node1", "node2"})
    EXPECT_EQ(query(std::string(
                        "SELECT count(*) || ' ' || count(DISTINCT seq) FROM events WHERE node='") +
                    node + "' AND kind='task_started'"),
              "5 5")
        << node;
}

// With nobody listening the node retries, spaced out by the back-off (waits
// of 50-100, 100-200, 200-400, then 400-800 ms at most: 5 to 11 attempts in
// 3 s), not in a tight loop; once the aggregator listens, the link comes up
// and the spooled events arrive.
TEST_F(AggregatorProcessTest, ANodeBacksOffWhileNobodyListensAndDeliversOnceTheAggregatorComes) {
  listenOnTcp();
  auto box = outbox("node1", node_, 1000ms);
  ASSERT_TRUE(box);
  for (uint32_t i = 1; i <= 3; ++i) ASSERT_TRUE(box->publish(task(i)).ok());
  std::this_thread::sleep_for(3s);
  auto s = box->stats();
  EXPECT_FALSE(s.link_up);
  EXPECT_GE(s.attempts, 3u) << "the node should keep trying";
  EXPECT_LE(s.attempts, 12u) << "attempts not spaced by the back-off";
  startAggregator();
  EXPECT_TRUE(waitFor([&] { return box->stats().backlog == 0; }, 20s)) << describe(box->stats());
  EXPECT_EQ(query("SELECT count(*) FROM events WHERE node='node1' AND kind='task_started'"), "3");
}

TEST_F(AggregatorProcessTest, EventsSpooledWhileAggregatorIsDownArriveExactlyOnce) {
  ASSERT_EQ(waitExit(emitter(100000, false), 120s), 0);  // epoch 1, nobody listening
  startAggregator();
  ASSERT_EQ(waitExit(emitter(0, true), 120s), 0);  // epoch 2 replays epoch 1's spool
  EXPECT_EQ(stream(1), (std::array<int64_t, 4>{100000, 100000, 1, 100000}));
  EXPECT_EQ(metric("accel_aggregator_events_total"), 100000);
}

TEST_F(AggregatorProcessTest, KilledEmitterLosesAndDoublesNothingAcknowledged) {
  startAggregator();
  pid_t e = emitter(60000, true);
  auto end = std::chrono::steady_clock::now() + 60s;
  while (ackedSoFar() < 5000 && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(5ms);
  kill(e, SIGKILL);
  waitpid(e, nullptr, 0);
  uint64_t acked = ackedSoFar();
  ASSERT_GE(acked, 5000u);
  ASSERT_EQ(waitExit(emitter(0, true), 120s), 0);
  auto s = stream(1);
  EXPECT_EQ(s[0], s[1]) << "duplicates stored";
  EXPECT_EQ(s[2], 1);
  EXPECT_EQ(s[3], s[0]) << "gap in the stored sequence";
  EXPECT_GE(uint64_t(s[0]), acked);
}

TEST_F(AggregatorProcessTest, KilledAggregatorLosesNothingAfterRestart) {
  startAggregator();
  pid_t e = emitter(60000, true);
  auto end = std::chrono::steady_clock::now() + 60s;
  while (ackedSoFar() < 5000 && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(5ms);
  killAggregator();
  std::this_thread::sleep_for(300ms);
  startAggregator();
  ASSERT_EQ(waitExit(e, 180s), 0);
  EXPECT_EQ(stream(1), (std::array<int64_t, 4>{60000, 60000, 1, 60000}));
}

TEST_F(AggregatorProcessTest, HostilePeersAreRefusedAndCounted) {
  startAggregator();
  zmq::context_t ctx;
  auto dealer = [&](const CurveKeyPair& keys) {
    zmq::socket_t s(ctx, zmq::socket_type::dealer);
    s.set(zmq::sockopt::linger, 0);
    s.set(zmq::sockopt::curve_serverkey, server_.public_key);
    s.set(zmq::sockopt::curve_publickey, keys.public_key);
    s.set(zmq::sockopt::curve_secretkey, keys.secret_key);
    // Bounded: a DEALER whose only connection was refused has no pipe left, and a blocking
    // send would then wait forever.
    s.set(zmq::sockopt::sndtimeo, 10000);
    s.connect(endpoint());
    return s;
  };
  auto stranger = dealer(*accel::event::generateCurveKeyPair());
  // The handshake is what gets refused (and counted); whether the message still finds a pipe
  // depends on how soon that happens, so the send may not go through.
  (void)stranger.send(
      zmq::buffer(accel::event::encode({"node1", 1, 1, 1, 1}, accel::event::AgentStarted{})),
      zmq::send_flags::dontwait);
  auto known = dealer(node_);
  std::vector<uint8_t> garbage(300, 0xab), oversized(100 * 1024, 1);
  auto good = accel::event::encode({"node1", 9, 1, 1, 1}, accel::event::AgentStarted{"t", 0});
  auto forged = accel::event::encode({"node2", 9, 1, 1, 1}, accel::event::AgentStarted{"t", 0});
  known.send(zmq::buffer(garbage));
  known.send(zmq::buffer(oversized));
  known.send(zmq::buffer(good.data(), good.size() / 2));
  known.send(zmq::buffer(forged));
  known.send(zmq::buffer(good), zmq::send_flags::sndmore);
  known.send(zmq::buffer(good));  // two parts: refused
  known.send(zmq::buffer(good));
  zmq::message_t ack;
  known.set(zmq::sockopt::rcvtimeo, 10000);
  // Each refused single-part frame is answered with a Nack, before the Ack.
  std::vector<accel::event::NackReason> nacks;
  accel::Result<accel::event::Ack> decoded = accel::Error(accel::ErrorCode::kParse, "no ack");
  while (!decoded.ok()) {
    ASSERT_TRUE(known.recv(ack));
    std::span<const uint8_t> bytes{static_cast<const uint8_t*>(ack.data()), ack.size()};
    if (auto nack = accel::event::decodeNack(bytes); nack.ok())
      nacks.push_back(nack->reason);
    else
      decoded = accel::event::decodeAck(bytes);
  }
  EXPECT_EQ(*decoded, (accel::event::Ack{9, 1}));
  using R = accel::event::NackReason;
  EXPECT_EQ(nacks,
            (std::vector<R>{R::kUnreadable, R::kUnreadable, R::kUnreadable, R::kNodeMismatch}));
  std::this_thread::sleep_for(300ms);
  EXPECT_GE(metric("accel_aggregator_rejected_total{reason=\"unknown_key\"}"), 1);
  EXPECT_EQ(metric("accel_aggregator_rejected_total{reason=\"invalid\"}"), 2);
  EXPECT_EQ(metric("accel_aggregator_rejected_total{reason=\"oversized\"}"), 1);
  EXPECT_EQ(metric("accel_aggregator_rejected_total{reason=\"node_mismatch\"}"), 1);
  EXPECT_EQ(metric("accel_aggregator_rejected_total{reason=\"frames\"}"), 1);
  EXPECT_EQ(metric("accel_aggregator_events_total"), 1);
  EXPECT_EQ(waitpid(agg_, nullptr, WNOHANG), 0) << "aggregator died";
}

TEST_F(AggregatorProcessTest, EventsVerbPrintsTheRecordReadOnly) {
  startAggregator();
  ASSERT_EQ(waitExit(emitter(3, true), 60s), 0);
  std::string out = dir_ + "/events.out";
  ASSERT_EQ(waitExit(spawn({ACCEL_AGGREGATORD, "--config", dir_ + "/agg.conf", "events", "--node",
                            "node1", "--json"},
                           out),
                     30s),
            0);
  std::ifstream f(out);
  int lines = 0;
  for (std::string line; std::getline(f, line);) {
    EXPECT_NE(line.find("\"kind\":\"task_started\""), std::string::npos) << line;
    ++lines;
  }
  EXPECT_EQ(lines, 3);
}

// Job 7 runs on node1 and node2. node1's epilog alone leaves the summary
// waiting (until an hour after it, SummaryWaitSeconds), not queued; the wait
// is still there after kill -9 and a restart; node2's epilog queues it, and
// the job has the partition's 2 IPUs, not 2 per node.
TEST_F(AggregatorProcessTest, TwoNodeJobWaitsForBothEpilogsAcrossARestart) {
  using namespace accel::event;
  CurveKeyPair node2 = *generateCurveKeyPair();
  std::ofstream(dir_ + "/nodes/node2.pub") << node2.public_key << "\n";
  // What each node sends: both report the whole partition.
  const std::vector<Event> job{
      PrologStarted{7, 1000, "alice", "node[1-2]", 2},
      PrologFinished{7, JobResult::kOk, {"p7:0", "p7:1"}, "p7", 1, "", "ipu"}, EpilogFinished{7}};
  startAggregator();
  auto epoch_s = [] {
    using namespace std::chrono;
    return duration_cast<seconds>(system_clock::now().time_since_epoch()).count();
  };
  int64_t before = epoch_s();
  ASSERT_TRUE(sendAsNode("node1", node_, job));
  std::string due = query("SELECT due_ns / 1000000000 FROM summary_waits WHERE job_id = 7");
  ASSERT_FALSE(due.empty()) << "no wait for node2";
  EXPECT_GE(std::stoll(due), before + 3600);
  EXPECT_LE(std::stoll(due), epoch_s() + 3600);
  EXPECT_EQ(query("SELECT count(*) FROM pending_comments"), "0");
  killAggregator();
  startAggregator();
  EXPECT_EQ(query("SELECT due_ns / 1000000000 FROM summary_waits WHERE job_id = 7"), due);
  ASSERT_TRUE(sendAsNode("node2", node2, job));
  EXPECT_EQ(query("SELECT count(*) FROM summary_waits"), "0");
  EXPECT_EQ(query("SELECT count(*) FROM pending_comments WHERE job_id = 7"), "1");
  auto state =
      nlohmann::json::parse(query("SELECT state FROM jobs WHERE job_id = 7"), nullptr, false);
  ASSERT_TRUE(state.is_object());
  EXPECT_EQ(state["accel_count"], 2);
  EXPECT_EQ(state["epilog_nodes"], nlohmann::json::array({"node1", "node2"}));
}

}  // namespace

namespace {

// On a healthy link each event is sent once: the first one, although zmq
// may take it before the sender has read that the link is up (it used to go
// back to the oldest event then, and send it again), and one published after
// a quiet spell longer than the acknowledgement timeout (which counts from
// the event, not from the sender's last wake-up before the spell).
TEST_F(AggregatorProcessTest, OnAHealthyLinkEachEventIsSentOnceEvenAfterAQuietSpell) {
  startAggregator();
  auto box = outbox("node1", node_, 0ms);  // ack timeout 2 s
  ASSERT_TRUE(box);
  ASSERT_TRUE(box->publish(task(1)).ok());
  ASSERT_TRUE(waitFor([&] { return box->stats().backlog == 0; }, 20s));
  std::this_thread::sleep_for(2500ms);
  ASSERT_TRUE(box->publish(task(2)).ok());
  ASSERT_TRUE(waitFor([&] { return box->stats().backlog == 0; }, 20s));
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(box->stats().sent, 2u) << describe(box->stats());
}

}  // namespace
