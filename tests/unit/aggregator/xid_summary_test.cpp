// A job's Xids in its summary: over the wire and back (bounded text), merged
// per node, GPU and code in any order, in the state and in the comment, and
// as an event line.
#include "accel/aggregator/xid_summary.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "accel/aggregator/event_json.h"
#include "accel/aggregator/summary.h"
#include "accel/events/codec.h"

namespace accel::aggregator {
namespace {

event::GpuXid xid(uint32_t code, int32_t gpu, const std::string& cls = "application") {
  return event::GpuXid{.job_id = 42,
                       .code = code,
                       .gpu_class = cls,
                       .pci_bus_id = "0000:3b:00.0",
                       .gpu = gpu,
                       .pid = 77,
                       .text = "Graphics SM Warp Exception",
                       .drained = cls == "hardware"};
}

TEST(XidEvent, TravelsTheWireWithItsTextBounded) {
  event::GpuXid e = xid(79, 0, "hardware");
  auto bytes = event::encode(event::Header{"sbn1", 1, 1, 5, 1}, e);
  auto back = event::decode(bytes);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->event, event::Event(e));
  EXPECT_EQ(event::kindName(*back->event), std::string("gpu_xid"));
  EXPECT_EQ(event::jobIdOf(*back->event), 42u);
  e.text = std::string(5000, 'x');
  back = event::decode(event::encode(event::Header{"sbn1", 1, 2, 5, 1}, e));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(std::get<event::GpuXid>(*back->event).text.size(), event::GpuXid::kMaxText);
}

TEST(XidEvent, ReadsAsALineForPeople) {
  StoredEvent s;
  const event::Event e = xid(13, 1);
  s.header = {"sbn1", 3, 9, 1'764'225'878'097'000'000, 1};
  s.kind = event::kindName(e);
  s.job_id = 42;
  s.envelope = event::encode(s.header, e);
  const std::string line = eventLine(s);
  EXPECT_NE(line.find("gpu_xid job=42 "), std::string::npos) << line;
  EXPECT_NE(line.find("\"code\":13"), std::string::npos) << line;
  EXPECT_NE(line.find("\"class\":\"application\""), std::string::npos) << line;
}

TEST(XidSummary, EachNodeGpuAndCodeOnceInAnyOrder) {
  JobSummary a, b;
  a.job_id = b.job_id = 42;
  const std::vector<std::pair<std::string, event::GpuXid>> seen = {
      {"sbn2", xid(13, 0)}, {"sbn1", xid(79, 1, "hardware")}, {"sbn2", xid(13, 0)}};
  for (const auto& [n, e] : seen) mergeEvent(a, n, e);
  for (auto it = seen.rbegin(); it != seen.rend(); ++it) mergeEvent(b, it->first, it->second);
  EXPECT_EQ(a.xid, b.xid);
  EXPECT_EQ(a.xid.size(), 2u);
  EXPECT_FALSE(mergeEvent(a, "sbn2", xid(13, 0))) << "a resend changes nothing";
  auto comment = nlohmann::json::parse(toCommentJson(a));
  EXPECT_EQ(comment["xid"], nlohmann::json::parse(R"([[79,"sbn1",1],[13,"sbn2",0]])"));
}

TEST(XidSummary, IsBoundedTheSameWhateverTheOrder) {
  JobXids up, down;
  for (uint32_t c = 0; c < 3 * kMaxXids; ++c) mergeXid(up, "sbn1", xid(c, 0));
  for (uint32_t c = 3 * kMaxXids; c-- > 0;) mergeXid(down, "sbn1", xid(c, 0));
  EXPECT_EQ(up.size(), kMaxXids);
  EXPECT_EQ(up, down);
}

TEST(XidSummary, RoundTripsTheStateAndAnOlderStateHasNone) {
  JobSummary s;
  s.job_id = 42;
  mergeEvent(s, "sbn1", xid(79, 0, "hardware"));
  auto back = fromStateJson(toStateJson(s));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->xid, s.xid);
  EXPECT_TRUE(back->xid.begin()->hardware);
  // A state written before Xids were kept (no "xid") reads with none, and
  // its comment has no "xid".
  std::ifstream in(ACCEL_SOURCE_DIR "/tests/unit/aggregator/data/job_states/09-gpu.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(text.empty());
  auto old = fromStateJson(text);
  ASSERT_TRUE(old.ok()) << old.error().message();
  EXPECT_TRUE(old->xid.empty());
  EXPECT_FALSE(nlohmann::json::parse(toCommentJson(*old)).contains("xid"));
  auto bad = nlohmann::json::parse(text);
  bad["xid"] = nlohmann::json::parse(R"([["sbn1",0]])");
  EXPECT_FALSE(fromStateJson(bad.dump()).ok()) << "a wrong shape is refused";
  bad["xid"] = nlohmann::json::parse(R"([["sbn1",0,79,true]])");
  EXPECT_TRUE(fromStateJson(bad.dump()).ok());
}

}  // namespace
}  // namespace accel::aggregator
