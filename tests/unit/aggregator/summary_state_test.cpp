// A job summary's stored state (jobs.state) across releases: every earlier
// shape is read with its values and makes a comment, and the newest shape is
// what this version writes.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "accel/aggregator/summary.h"
#include "accel/events/codec.h"

namespace accel::aggregator {
namespace {

using namespace accel::event;

constexpr int64_t kSec = 1'000'000'000;

// A state stored by the release before this one, as it wrote it.
TEST(Summary, StateWithoutTheNewerFieldsIsRead) {
  auto old = fromStateJson(
      R"({"accel_count":4,"accel_kind":"ipu","appliance_limit_s":3600,"appliance_s":{"n1":50},)"
      R"("cleanup_failed":[],"epilog_nodes":["n1"],"job_id":42,"node_count":2,"nodes":["n1","n2"],)"
      R"("partition":"p42","result":0,"surrogate_steps":[3]})");
  ASSERT_TRUE(old.ok()) << old.error().message();
  EXPECT_EQ(old->accel_count, 4u);
  EXPECT_TRUE(old->node_list.empty());
  EXPECT_TRUE(old->listed_nodes.empty());
  EXPECT_EQ(old->first_epilog_ns, 0);
  EXPECT_TRUE(old->errors.empty());
  EXPECT_FALSE(old->complete());
  EXPECT_EQ(commentDueNs(*old, 300 * kSec), 0) << "its wait began before anyone timed it: due";
  mergeEvent(*old, "n2", EpilogFinished{42});
  EXPECT_TRUE(old->complete());
}

// States exactly as earlier aggregators stored them in jobs.state
// (data/job_states/, whose README.md names the commit of each writer). File
// N holds the fields of files 1..N-1 and those its commit added, with the
// same values throughout; its job id is 5300 + N.
constexpr const char* kStateDir = ACCEL_SOURCE_DIR "/tests/unit/aggregator/data/job_states/";
constexpr const char* kStateFiles[] = {"01-e9fe10f.json", "02-1973ecd.json",  "03-84d6b70.json",
                                       "04-87a19fe.json", "05-533f778.json",  "06-fdd853d.json",
                                       "07-held.json",    "08-instance.json", "09-gpu.json",
                                       "10-idle.json",    "11-xid.json"};

std::string stateFile(const std::string& name) {
  std::ifstream in(std::string(kStateDir) + name, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

using Nodes = std::set<std::string>;

// What a state of shape `n` must read as: the stored value of every field it
// has, the default of every later one.
void expectStateOfShape(const JobSummary& s, int n) {
  SCOPED_TRACE("shape " + std::to_string(n));
  EXPECT_EQ(s.job_id, static_cast<uint32_t>(5300 + n));
  EXPECT_EQ(s.result, JobResult::kFailed);
  EXPECT_EQ(s.accel_kind, "ipu");
  EXPECT_EQ(s.accel_count, 4u);
  EXPECT_EQ(s.partition, "pod");
  EXPECT_EQ(s.nodes, (Nodes{"sbn1", "sbn2"}));
  EXPECT_EQ(s.epilog_nodes, (Nodes{"sbn1", "sbn2"}));
  EXPECT_EQ(s.cleanup_failed, (Nodes{"sbn2"}));
  EXPECT_EQ(s.node_count, 2u);
  EXPECT_EQ(s.appliance_s, (std::map<std::string, uint64_t>{{"sbn1", 50}}));
  EXPECT_EQ(s.appliance_limit_s, 3600u);
  EXPECT_EQ(s.surrogate_steps, (std::set<uint32_t>{3, 4}));
  // 1973ecd: devices, the node list, the first epilog.
  using Counts = std::map<std::string, uint32_t>;
  using Texts = std::map<std::string, std::string>;
  using Runs = std::map<uint32_t, std::map<std::string, uint64_t>>;
  EXPECT_EQ(s.local_devices, (n >= 2 ? Counts{{"sbn1", 0}} : Counts{}));
  EXPECT_EQ(s.partition_devices, (n >= 2 ? Nodes{"p42:0", "p42:1", "p42:2", "p42:3"} : Nodes{}));
  EXPECT_EQ(s.node_list, n >= 2 ? "sbn[1-2]" : "");
  EXPECT_EQ(s.listed_nodes, (n >= 2 ? Nodes{"sbn1", "sbn2"} : Nodes{}));
  EXPECT_EQ(s.first_epilog_ns, n >= 2 ? 1763800100000000000 : 0);
  // 84d6b70, 87a19fe, 533f778.
  EXPECT_EQ(s.errors, (n >= 3 ? Texts{{"sbn2", "vipu: partition p42 busy"}} : Texts{}));
  EXPECT_EQ(s.later_nodes, (n >= 4 ? Nodes{"sbn3"} : Nodes{}));
  EXPECT_EQ(s.limit_unmeasured, (n >= 5 ? Nodes{"sbn2"} : Nodes{}));
  // fdd853d: requeued runs.
  EXPECT_EQ(s.restarts, n >= 6 ? 1u : 0u);
  EXPECT_EQ(s.run_appliance_s, (n >= 6 ? Runs{{0, {{"sbn1", 20}}}, {1, {{"sbn1", 50}}}} : Runs{}));
  EXPECT_EQ(s.node_run, (n >= 6 ? Counts{{"sbn1", 1}, {"sbn2", 1}} : Counts{}));
  // held: events of an unconfirmed run (sbn3's prolog of run 2).
  ASSERT_EQ(s.held.size(), n >= 7 ? 1u : 0u);
  if (n >= 7) {
    EXPECT_EQ(s.held[0].node, "sbn3");
    EXPECT_EQ(s.held[0].received_ns, 1763800200100000000);
    auto held = event::decode(s.held[0].envelope);
    ASSERT_TRUE(held.ok()) << held.error().message();
    EXPECT_EQ(held->header.node, "sbn3");
    EXPECT_EQ(held->event, Event(PrologStarted{5307, 1000, "alice", "sbn3", 1, 2}));
  }
  // instance: a reused id told apart (an older state's last epilog is its first).
  EXPECT_EQ(s.last_epilog_ns, n >= 8 ? 1763800150000000000 : (n >= 2 ? 1763800100000000000 : 0));
  EXPECT_EQ(s.instance, n >= 8 ? 1u : 0u);
  EXPECT_EQ(s.epilog_run, (n >= 8   ? Counts{{"sbn1", 1}, {"sbn2", 0}}
                           : n >= 6 ? Counts{{"sbn1", 1}, {"sbn2", 1}}
                                    : Counts{}));
  // gpu: each node's devices.
  ASSERT_EQ(s.gpu.size(), n >= 9 ? 1u : 0u);
  if (n >= 9) {
    const auto& devices = s.gpu.at("sbn1");
    ASSERT_EQ(devices.size(), 2u);
    EXPECT_EQ(devices[0].util_mean_pct, 31.5F);
    EXPECT_EQ(devices[0].util_max_pct, 87u);
    EXPECT_EQ(devices[0].memory_used_max_mib, std::optional<uint64_t>(40960));
    EXPECT_EQ(devices[0].energy_j, std::optional<double>(12345.5));
    EXPECT_EQ(devices[0].pci_bus_id, "0000:18:00.0");
    EXPECT_EQ(devices[1].memory_used_max_mib, std::nullopt);
    EXPECT_EQ(devices[1].energy_j, std::nullopt);
  }
  // idle: each node's job_idle event.
  ASSERT_EQ(s.idle.size(), n >= 10 ? 1u : 0u);
  if (n >= 10) {
    EXPECT_EQ(s.idle.at("sbn1"),
              (event::JobIdle{0, 1800, {0, 1}, event::IdleAction::kCancel, true}));
  }
  // xid: each node's Xids by GPU and code.
  EXPECT_EQ(s.xid, (n >= 11 ? JobXids{{"sbn1", 0, 79, true}, {"sbn1", 1, 13, false}} : JobXids{}));
  EXPECT_TRUE(s.complete());
}

TEST(SummaryState, EveryEarlierShapeIsReadWithItsValues) {
  int n = 0;
  for (const char* file : kStateFiles) {
    ++n;
    const std::string text = stateFile(file);
    ASSERT_FALSE(text.empty()) << file;
    auto s = fromStateJson(text);
    ASSERT_TRUE(s.ok()) << file << ": " << s.error().message();
    expectStateOfShape(*s, n);
    auto again = fromStateJson(toStateJson(*s));
    ASSERT_TRUE(again.ok()) << file;
    EXPECT_EQ(*again, *s) << file;
  }
}

// Every shape gives a comment of format 1; the GPU rows only where figures are.
TEST(SummaryState, EveryShapeMakesAComment) {
  int n = 0;
  for (const char* file : kStateFiles) {
    ++n;
    auto s = fromStateJson(stateFile(file));
    ASSERT_TRUE(s.ok()) << file;
    auto j = nlohmann::json::parse(toCommentJson(*s));
    EXPECT_EQ(j["v"], 1) << file;
    EXPECT_EQ(j["result"], "failed") << file;
    EXPECT_EQ(j.count("gpu"), n >= 9 ? 1u : 0u) << file;
    if (n >= 9) {
      EXPECT_EQ(j["gpu"]["sbn1"][0], nlohmann::json::parse("[0,32,87,40960,12346,12]"));
      EXPECT_EQ(j["gpu"]["sbn1"][1], nlohmann::json::parse("[1,0,0,-1,-1,0]"));
    }
    EXPECT_EQ(j.count("idle"), n >= 10 ? 1u : 0u) << file;
    EXPECT_EQ(j.count("ended"), n >= 10 ? 1u : 0u) << file;
    if (n >= 10) {
      EXPECT_EQ(j["idle"], nlohmann::json::parse(
                               R"({"sbn1":{"idle_s":1800,"gpus":[0,1],"action":"cancel"}})"));
      EXPECT_EQ(j["ended"], "idle accelerators");
    }
    EXPECT_EQ(j.count("xid"), n >= 11 ? 1u : 0u) << file;
    if (n >= 11) {
      EXPECT_EQ(j["xid"], nlohmann::json::parse(R"([[79,"sbn1",0],[13,"sbn1",1]])"));
    }
  }
}

// The newest file is what this version stores, byte for byte. When the
// writer changes, add a file of the new shape (and keep the old ones).
TEST(SummaryState, TheNewestFileIsWhatThisVersionWrites) {
  const std::string text = stateFile(std::end(kStateFiles)[-1]);
  auto s = fromStateJson(text);
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(toStateJson(*s), text);
}

// A key this version does not know (a later aggregator's) is ignored; a
// known key of the wrong type is an error.
TEST(SummaryState, UnknownKeysAreIgnoredWrongTypesRefused) {
  const std::string text = stateFile(std::end(kStateFiles)[-1]);
  ASSERT_EQ(text.front(), '{');
  auto later = fromStateJson(R"({"a_later_field":{"x":[1,null]},"zz_later":"y",)" + text.substr(1));
  ASSERT_TRUE(later.ok()) << later.error().message();
  expectStateOfShape(*later, static_cast<int>(std::size(kStateFiles)));
  EXPECT_EQ(toStateJson(*later), text) << "unknown keys are not kept";
  // Placed last: of a repeated key, the last is read.
  const std::string head = text.substr(0, text.size() - 1);
  EXPECT_FALSE(fromStateJson(head + R"(,"node_list":7})").ok());
  EXPECT_FALSE(fromStateJson(head + R"(,"errors":["x"]})").ok());
  EXPECT_FALSE(fromStateJson(head + R"(,"nodes":"sbn1"})").ok());
}

}  // namespace
}  // namespace accel::aggregator
