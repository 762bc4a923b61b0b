// A job's node list is expanded once while it is in use, its cost is known
// before it is paid, and one node's lists cannot take a batch's ingest time:
// past its budget a prolog waits for a later batch, and nothing is lost.
#include "accel/aggregator/node_lists.h"

#include <gtest/gtest.h>

#include "accel/aggregator/ingest.h"
#include "accel/events/codec.h"
#include "temp_dir.h"

namespace accel::aggregator {
namespace {

using namespace accel::event;

TEST(NodeLists, AListIsExpandedOnceWhileItIsInUse) {
  const std::string list = "once[0001-4096]";
  EXPECT_EQ(nodeListCost(list, 4096), 4096u);
  NodeSet first = usableNodeList(list, 4096);
  ASSERT_EQ(first->size(), 4096u);
  EXPECT_TRUE(first->contains("once0001") && first->contains("once4096"));
  EXPECT_EQ(nodeListCost(list, 4096), 0u);
  EXPECT_EQ(usableNodeList(list, 4096).get(), first.get());  // the same names, not read again
}

TEST(NodeLists, AListTheCountRefusesIsNeverExpanded) {
  // Unusable by their size alone: nothing to pay, nothing read.
  EXPECT_EQ(nodeListCost("big[0-65535]", 3), 0u);
  EXPECT_TRUE(usableNodeList("big[0-65535]", 3)->empty());
  EXPECT_EQ(nodeListCost("big[0-99999]", 100000), 0u);  // past kMaxHostlistNames
  EXPECT_EQ(nodeListCost("a[1-2]b[1-2]", 4), 0u);       // two groups in one name
  EXPECT_EQ(nodeListCost("n1", 0), 0u);
  // A list of the right size whose names repeat is read once, and refused.
  EXPECT_EQ(nodeListCost("dup1,dup1", 2), 2u);
  EXPECT_TRUE(usableNodeList("dup1,dup1", 2)->empty());
  EXPECT_EQ(nodeListCost("dup1,dup1", 2), 0u);
}

TEST(NodeLists, TheCacheIsBoundedByNames) {
  const uint32_t n = 65536;
  std::vector<std::string> lists;
  for (int i = 0; i < 5; ++i) lists.push_back("bound" + std::to_string(i) + "x[0-65535]");
  for (const auto& l : lists) ASSERT_EQ(usableNodeList(l, n)->size(), n);
  // Five of the largest lists are more than kMaxCachedListNames: the first
  // one read has left, the latest four stay.
  static_assert(kMaxCachedListNames / 65536 == 4);
  EXPECT_EQ(nodeListCost(lists[0], n), n);
  for (int i = 1; i < 5; ++i) EXPECT_EQ(nodeListCost(lists[i], n), 0u) << i;
}

class IngestNodeLists : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = Store::open(tmp_.path() + "/events.db", Store::Mode::kReadWrite);
    ASSERT_TRUE(s.ok()) << s.error().message();
    store_ = std::move(*s);
    ingestor_ = std::make_unique<Ingestor>(*store_, metrics_, 1024 * 1024);
    ASSERT_TRUE(ingestor_->load().ok());
  }
  Offer offer(const std::string& node, uint64_t seq, const Event& ev) {
    return ingestor_->offer(node, encode({node, 1, seq, 1, 1}, ev), 2);
  }
  // Job `id`'s prolog from k1: a list of the largest size, its own for each
  // job, that names k1.
  static PrologStarted large(uint32_t id) {
    return {id, 1000, "u", "k1,y" + std::to_string(id) + "n[1-65535]", 65536};
  }

  support::TempDir tmp_{"accel-node-lists-test"};
  Metrics metrics_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Ingestor> ingestor_;
};

TEST_F(IngestNodeLists, OneNodesLargeListsWaitForLaterBatchesAndNothingIsLost) {
  static_assert(kMaxListNamesPerNode == 2 * 65536);
  // One batch: k1's first two lists are read, its third waits (its frame is
  // not taken, so the two after it are a gap), and another node's prolog in
  // the same batch is taken.
  for (uint32_t seq = 1; seq <= 5; ++seq) {
    Offer o = offer("k1", seq, large(seq));
    EXPECT_FALSE(o.nack) << seq;
  }
  ASSERT_FALSE(offer("m1", 1, PrologStarted{100, 1001, "v", "m[1-4],m1x", 5}).nack);
  ASSERT_TRUE(ingestor_->commit(3).ok());
  EXPECT_EQ(ingestor_->acked({"k1", 1}), 2u);
  EXPECT_EQ(ingestor_->acked({"m1", 1}), 1u);
  EXPECT_EQ(metrics_.rejected[size_t(Reject::kDeferred)], 1u);
  EXPECT_EQ(metrics_.rejected[size_t(Reject::kOutOfOrder)], 2u);

  // k1 sends again from its first frame not acknowledged: two more, then the last.
  for (uint32_t seq = 3; seq <= 5; ++seq) (void)offer("k1", seq, large(seq));
  ASSERT_TRUE(ingestor_->commit(4).ok());
  EXPECT_EQ(ingestor_->acked({"k1", 1}), 4u);
  (void)offer("k1", 5, large(5));
  ASSERT_TRUE(ingestor_->commit(5).ok());
  EXPECT_EQ(ingestor_->acked({"k1", 1}), 5u);

  for (uint32_t id = 1; id <= 5; ++id) {
    auto job = store_->loadJob(id);
    ASSERT_TRUE(job.ok() && job->has_value()) << id;
    EXPECT_EQ((*job)->listed_nodes.size(), 65536u) << id;
  }
  auto other = store_->loadJob(100);
  ASSERT_TRUE(other.ok() && other->has_value());
  EXPECT_EQ((*other)->listed_nodes.size(), 5u);
}

// A list read before costs nothing: every node of a large job sends it, and
// all of them are taken in one batch.
TEST_F(IngestNodeLists, AListReadOnceIsFreeForTheJobsOtherNodes) {
  const std::string list = "w[00001-65536]";
  for (uint32_t i = 1; i <= 8; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "w%05u", i);
    ASSERT_FALSE(offer(name, 1, PrologStarted{7, 1000, "u", list, 65536}).nack) << name;
  }
  ASSERT_TRUE(ingestor_->commit(3).ok());
  EXPECT_EQ(metrics_.rejected[size_t(Reject::kDeferred)], 0u);
  for (uint32_t i = 1; i <= 8; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "w%05u", i);
    EXPECT_EQ(ingestor_->acked({name, 1}), 1u) << name;
  }
}

// Summaries naming many nodes leave memory once they hold about two million
// names in all; they are read from the store again when needed.
TEST_F(IngestNodeLists, SummariesOfLargeJobsDoNotStayInMemoryWithoutBound) {
  size_t most = 0;
  for (uint32_t id = 1; id <= 40; ++id) {
    const std::string node = "k" + std::to_string(id);
    ASSERT_FALSE(
        ingestor_
            ->offer(node,
                    encode({node, 1, 1, 1, 1},
                           PrologStarted{id, 1000, "u",
                                         node + ",z" + std::to_string(id) + "n[1-65535]", 65536}),
                    2)
            .nack);
    ASSERT_TRUE(ingestor_->commit(3).ok());
    most = std::max(most, ingestor_->cachedJobs());
  }
  // 40 such summaries are 2.6 million names: the cache was emptied on the way.
  EXPECT_LT(most, 40u);
  EXPECT_LT(ingestor_->cachedJobs(), 40u);
  auto job = store_->loadJob(1);
  ASSERT_TRUE(job.ok() && job->has_value());
  EXPECT_EQ((*job)->listed_nodes.size(), 65536u);
}

}  // namespace
}  // namespace accel::aggregator
