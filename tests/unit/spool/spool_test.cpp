// The spool on disk: append, sync, read back, acknowledge, recover after a
// torn tail or garbage, and the full-spool policy (telemetry first).
#include "accel/events/spool.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "accel/common/safe_file.h"
#include "accel/events/curve_keys.h"
#include "accel/events/outbox.h"
#include "temp_dir.h"

namespace accel::event {
namespace {

namespace fs = std::filesystem;

class SpoolTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = root_ + "/spool"; }
  void TearDown() override { (void)tmp_.remove(); }

  std::unique_ptr<Spool> open(uint64_t max = 1 << 20, uint64_t segment = 0) {
    auto s = Spool::open({dir_, max, segment});
    EXPECT_TRUE(s.ok()) << s.error().message();
    return s.ok() ? std::move(*s) : nullptr;
  }
  static std::vector<uint8_t> payload(uint64_t seq, size_t n = 100) {
    return std::vector<uint8_t>(n, static_cast<uint8_t>(seq));
  }
  static void fill(Spool& s, uint64_t epoch, uint64_t from, uint64_t to, size_t n = 100) {
    for (uint64_t q = from; q <= to; ++q) {
      auto r = s.append({epoch, q, Priority::kLifecycle}, payload(q, n));
      ASSERT_TRUE(r.ok() && *r == Appended::kStored) << q;
    }
  }
  static std::vector<uint64_t> readAll(Spool& s) {
    std::vector<uint64_t> seqs;
    SpoolPos pos = s.head();
    while (true) {
      auto r = s.next(pos);
      EXPECT_TRUE(r.ok());
      if (!r.ok() || !*r) break;
      EXPECT_EQ((*r)->payload, payload((*r)->meta.seq, (*r)->payload.size()));
      seqs.push_back((*r)->meta.seq);
    }
    return seqs;
  }
  std::vector<fs::path> segments() const {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(dir_))
      if (e.path().extension() == ".seg") out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
  }

  support::TempDir tmp_{"accel-spool-test"};
  std::string root_ = tmp_.path(), dir_;
};

TEST_F(SpoolTest, NothingIsReadableBeforeSync) {
  auto s = open();
  fill(*s, 1, 1, 3);
  EXPECT_TRUE(readAll(*s).empty());
  ASSERT_TRUE(s->sync().ok());
  EXPECT_EQ(readAll(*s), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(s->backlog(), 3u);
}

TEST_F(SpoolTest, AcknowledgeReleasesInOrderAndDeletesSegments) {
  auto s = open(1 << 20, 64 * 1024);
  fill(*s, 1, 1, 2000);  // ~264 KB: several segments
  ASSERT_TRUE(s->sync().ok());
  ASSERT_GT(segments().size(), 3u);
  ASSERT_TRUE(s->acknowledge(1, 1500).ok());
  EXPECT_EQ(s->backlog(), 500u);
  EXPECT_LE(segments().size(), 3u);
  auto rest = readAll(*s);
  ASSERT_EQ(rest.size(), 500u);
  EXPECT_EQ(rest.front(), 1501u);
  ASSERT_TRUE(s->acknowledge(1, 2000).ok());
  EXPECT_EQ(s->backlog(), 0u);
  EXPECT_EQ(s->usedBytes(), 0u);
}

TEST_F(SpoolTest, AckOfANewerEpochWaitsForTheOlderOne) {
  auto s = open();
  fill(*s, 1, 1, 3);
  fill(*s, 2, 1, 3);
  ASSERT_TRUE(s->sync().ok());
  ASSERT_TRUE(s->acknowledge(2, 3).ok());
  EXPECT_EQ(s->backlog(), 6u);  // epoch 1 is still at the head
  ASSERT_TRUE(s->acknowledge(1, 3).ok());
  EXPECT_EQ(s->backlog(), 0u);
}

TEST_F(SpoolTest, RecoveryReplaysEverythingUnacknowledged) {
  {
    auto s = open();
    fill(*s, 4, 1, 10);
    ASSERT_TRUE(s->sync().ok());
  }
  auto s = open();
  EXPECT_EQ(s->recovery().records, 10u);
  EXPECT_EQ(s->recovery().max_epoch, 4u);
  EXPECT_EQ(readAll(*s).size(), 10u);
}

TEST_F(SpoolTest, TornTailIsTruncatedAndAppendingContinues) {
  {
    auto s = open();
    fill(*s, 1, 1, 5);
  }
  auto seg = segments().back();
  fs::resize_file(seg, fs::file_size(seg) - 7);
  auto s = open();
  EXPECT_EQ(s->recovery().records, 4u);
  EXPECT_GT(s->recovery().dropped_bytes, 0u);
  fill(*s, 2, 1, 2);
  ASSERT_TRUE(s->sync().ok());
  EXPECT_EQ(readAll(*s), (std::vector<uint64_t>{1, 2, 3, 4, 1, 2}));
}

TEST_F(SpoolTest, GarbageMidSpoolDropsEverythingAfterIt) {
  {
    auto s = open(1 << 20, 64 * 1024);
    fill(*s, 1, 1, 1500);
  }
  auto segs = segments();
  ASSERT_GT(segs.size(), 2u);
  {
    std::fstream f(segs[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(500);
    f.write("garbage!", 8);
  }
  auto s = open(1 << 20, 64 * 1024);
  EXPECT_EQ(s->recovery().segments_removed, segs.size() - 1);
  auto seqs = readAll(*s);
  ASSERT_FALSE(seqs.empty());
  for (size_t i = 0; i < seqs.size(); ++i) EXPECT_EQ(seqs[i], i + 1);  // a gap-free prefix
  EXPECT_LT(seqs.size(), 5u);
}

TEST_F(SpoolTest, ForeignFilesAndEmptySegmentsAreHarmless) {
  ASSERT_TRUE(makeDirectory(dir_, 0700).ok());
  std::ofstream(dir_ + "/notes.txt") << "not a segment";
  std::ofstream(dir_ + "/00000000000000000003.seg");  // empty
  auto s = open();
  EXPECT_EQ(s->recovery().records, 0u);
  fill(*s, 1, 1, 1);
  ASSERT_TRUE(s->sync().ok());
  EXPECT_EQ(readAll(*s).size(), 1u);
}

TEST_F(SpoolTest, FullSpoolDropsTelemetryFirstAndLifecycleLast) {
  const uint64_t max = 256 * 1024;
  auto s = open(max);
  uint64_t seq = 0, telemetry_stored = 0;
  while (true) {
    ++seq;
    auto r = s->append({1, seq, Priority::kTelemetry}, payload(seq, 1000));
    ASSERT_TRUE(r.ok());
    if (*r == Appended::kFull) break;
    ++telemetry_stored;
  }
  EXPECT_LE(s->usedBytes(), max / 8 * 7);
  EXPECT_GT(s->usedBytes(), max / 8 * 7 - 2000);
  uint64_t lifecycle_stored = 0;
  while (true) {
    auto r = s->append({1, seq, Priority::kLifecycle}, payload(seq, 1000));
    ASSERT_TRUE(r.ok());
    if (*r == Appended::kFull) break;
    ++lifecycle_stored, ++seq;
  }
  EXPECT_GT(lifecycle_stored, 20u);  // the reserved eighth
  EXPECT_LE(s->usedBytes(), max);
  EXPECT_EQ(s->backlog(), telemetry_stored + lifecycle_stored);
}

TEST_F(SpoolTest, EpochRisesOnEveryStartAndAboveTheSpool) {
  ASSERT_TRUE(makeDirectory(dir_, 0700).ok());
  EXPECT_EQ(*raiseEpoch(dir_, 0), 1u);
  EXPECT_EQ(*raiseEpoch(dir_, 0), 2u);
  EXPECT_EQ(*raiseEpoch(dir_, 10), 11u);
  std::ofstream(dir_ + "/epoch") << "bogus";
  EXPECT_FALSE(raiseEpoch(dir_, 0).ok());
}

TEST_F(SpoolTest, OutboxDropsTelemetryQuietlyAndHoldsLifecycleWhenFull) {
  OutboxOptions o;
  o.node = "n1";
  o.spool_dir = dir_;
  o.spool_max_bytes = 128 * 1024;
  auto box = Outbox::start(o);
  ASSERT_TRUE(box.ok()) << box.error().message();
  EXPECT_EQ((*box)->epoch(), 1u);
  NodeHeartbeat hb{8, 1, std::string(900, 'x'), 0, 0};
  for (int i = 0; i < 200; ++i) ASSERT_TRUE((*box)->publish(hb).ok());
  auto st = (*box)->stats();
  EXPECT_GT(st.dropped_telemetry, 0u);
  EXPECT_EQ(st.dropped_lifecycle, 0u);
  EXPECT_EQ(st.held, 0u);  // telemetry is never held
  for (int i = 0; i < 200; ++i)
    ASSERT_TRUE(
        (*box)
            ->publish(PrologFinished{uint32_t(i), JobResult::kOk, {}, std::string(900, 'p')})
            .ok());
  st = (*box)->stats();
  EXPECT_GT(st.published - (200 - st.dropped_telemetry), 10u);  // the reserved eighth took some
  EXPECT_GT(st.held, 0u);
  EXPECT_EQ(st.dropped_lifecycle, 0u);
  EXPECT_EQ(st.backlog, st.published);
}

TEST_F(SpoolTest, OutboxEpochRisesAcrossRestarts) {
  OutboxOptions o;
  o.node = "n1";
  o.spool_dir = dir_;
  uint64_t first = 0;
  {
    auto box = Outbox::start(o);
    ASSERT_TRUE(box.ok());
    first = (*box)->epoch();
    ASSERT_TRUE((*box)->publish(AgentStarted{"x", 0}).ok());
  }
  auto box = Outbox::start(o);
  ASSERT_TRUE(box.ok());
  EXPECT_EQ((*box)->epoch(), first + 1);
  EXPECT_EQ((*box)->stats().recovered, 1u);
  EXPECT_EQ((*box)->stats().backlog, 1u);
}

// Group commit: appends made while a sync is due wait for it together, and
// stopping the outbox cuts the wait short with a final sync.
TEST_F(SpoolTest, OutboxAppendsWaitTogetherForOneSyncAndStopSyncsThem) {
  OutboxOptions o;
  o.node = "n1";
  o.spool_dir = dir_;
  o.sync_delay = std::chrono::hours(1);
  {
    auto box = Outbox::start(o);
    ASSERT_TRUE(box.ok()) << box.error().message();
    for (uint32_t i = 1; i <= 20; ++i) ASSERT_TRUE((*box)->publish(TaskStarted{i, 0, i, 1}).ok());
    EXPECT_EQ((*box)->stats().syncs, 0u);  // the one sync they wait for is an hour away
    EXPECT_EQ((*box)->stats().backlog, 20u);
  }  // returns at once (a test that hangs here fails by its timeout)
  auto box = Outbox::start(o);
  ASSERT_TRUE(box.ok());
  EXPECT_EQ((*box)->stats().recovered, 20u);
}

TEST_F(SpoolTest, OutboxSyncsAppendsWithoutBeingAsked) {
  OutboxOptions o;
  o.node = "n1";
  o.spool_dir = dir_;
  o.sync_delay = std::chrono::microseconds(0);
  auto box = Outbox::start(o);
  ASSERT_TRUE(box.ok()) << box.error().message();
  EXPECT_EQ((*box)->stats().syncs, 0u);  // nothing appended: the syncer sleeps
  ASSERT_TRUE((*box)->publish(AgentStarted{"x", 0}).ok());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while ((*box)->stats().syncs == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_GE((*box)->stats().syncs, 1u);
  EXPECT_EQ((*box)->stats().io_errors, 0u);
  EXPECT_EQ((*box)->stats().backlog, 1u);  // synced, and kept until acknowledged
}

TEST_F(SpoolTest, SecretKeyReadableByOthersIsRefusedByName) {
  ASSERT_TRUE(makeDirectory(dir_, 0700).ok());
  auto keys = generateCurveKeyPair();
  ASSERT_TRUE(keys.ok());
  ASSERT_TRUE(writeKeyPair(dir_ + "/node1", *keys).ok());
  EXPECT_EQ(fs::status(dir_ + "/node1.key").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  auto loaded = loadSecretKey(dir_ + "/node1.key");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  EXPECT_EQ(loaded->public_key, keys->public_key);
  EXPECT_EQ(*loadPublicKey(dir_ + "/node1.pub"), keys->public_key);
  ASSERT_EQ(chmod((dir_ + "/node1.key").c_str(), 0640), 0);
  auto refused = loadSecretKey(dir_ + "/node1.key");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_NE(refused.error().message().find(dir_ + "/node1.key"), std::string::npos);
  EXPECT_FALSE(writeKeyPair(dir_ + "/node1", *keys).ok());  // never overwritten
}

}  // namespace
}  // namespace accel::event
