// Test helper standing in for accel-agentd's use of the outbox:
//   event_emitter SPOOL_DIR ENDPOINT SERVER_PUB NODE_KEY NODE COUNT WAIT PROGRESS_FILE
// publishes COUNT TaskStarted events (task_id = 1..COUNT); with WAIT=1 it then
// waits until the backlog is empty. While running it keeps "EPOCH ACKED" in
// PROGRESS_FILE (ACKED = events released by acknowledgements this run).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "accel/common/safe_file.h"
#include "accel/events/outbox.h"

using namespace accel;

int main(int argc, char** argv) {
  if (argc != 9) return std::fprintf(stderr, "usage: see source\n"), 2;
  event::OutboxOptions o;
  o.spool_dir = argv[1];
  o.endpoint = argv[2];
  auto server = event::loadPublicKey(argv[3]);
  auto mine = event::loadSecretKey(argv[4]);
  if (!server.ok() || !mine.ok()) return std::fprintf(stderr, "emitter: keys\n"), 1;
  o.server_public_key = *server;
  o.client_keys = *mine;
  o.node = argv[5];
  o.ack_timeout = std::chrono::milliseconds(2000);
  o.reconnect_max = std::chrono::milliseconds(500);
  long count = std::atol(argv[6]);
  bool wait = std::string(argv[7]) == "1";
  std::string progress = argv[8];
  auto box = event::Outbox::start(o);
  if (!box.ok()) return std::fprintf(stderr, "emitter: %s\n", box.error().message().c_str()), 1;
  uint64_t last = ~0ull;
  auto report = [&] {
    auto s = (*box)->stats();
    if (s.acked == last) return s;
    last = s.acked;
    (void)writeFileAtomic(progress, std::to_string(s.epoch) + " " + std::to_string(s.acked) + "\n",
                          0644, {}, Durability::kProcessCrash);
    return s;
  };
  for (long i = 1; i <= count; ++i) {
    Status st = (*box)->publish(
        event::TaskStarted{.job_id = 1, .step_id = 0, .task_id = uint32_t(i), .pid = 1});
    if (!st.ok()) return std::fprintf(stderr, "emitter: %s\n", st.error().message().c_str()), 1;
    if (i % 1000 == 0) report();
  }
  while (wait && report().backlog > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto s = report();
  std::printf("epoch=%llu published=%llu acked=%llu backlog=%llu\n", (unsigned long long)s.epoch,
              (unsigned long long)s.published, (unsigned long long)s.acked,
              (unsigned long long)s.backlog);
  return 0;
}
