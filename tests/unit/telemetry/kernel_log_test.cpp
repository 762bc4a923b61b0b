// The kernel log reader: /dev/kmsg's records (the first line of each, the
// prefix kept), EPIPE when records were overwritten, a followed file from its
// end, a FIFO, and lines longer than the bound.
#include "accel/agent/kernel_log.h"

#include <errno.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <fstream>
#include <mutex>

#include "temp_dir.h"

namespace accel::agent {
namespace {

// Records as /dev/kmsg hands them out, one per read, with scripted errors.
class ScriptedKmsg : public LogSource {
 public:
  struct Step {
    std::string record;
    int err = 0;
  };
  explicit ScriptedKmsg(std::deque<Step> steps) : steps_(std::move(steps)) {}
  ReadOutcome read(char* buf, size_t size) override {
    if (steps_.empty()) return {-1, EAGAIN};
    Step s = std::move(steps_.front());
    steps_.pop_front();
    if (s.err != 0) return {-1, s.err};
    if (s.record.size() > size) return {-1, EINVAL};
    std::memcpy(buf, s.record.data(), s.record.size());
    return {static_cast<long>(s.record.size()), 0};
  }
  bool records() const override { return true; }

 private:
  std::deque<Step> steps_;
};

std::vector<std::string> collect(KernelLogReader& r, std::vector<std::string>& got) {
  r.pump();
  return got;
}

TEST(KernelLog, KmsgRecordsGiveTheirFirstLineWithThePrefix) {
  std::vector<std::string> got;
  KernelLogReader r(std::make_unique<ScriptedKmsg>(std::deque<ScriptedKmsg::Step>{
                        {"4,1187,52231187,-;NVRM: Xid (PCI:0000:3b:00): 79, GPU gone\n"
                         " SUBSYSTEM=pci\n DEVICE=+pci:0000:3b:00.0\n"},
                        {"6,1188,52231190,-;eth0: link up\n"}}),
                    [&](std::string_view l) { got.emplace_back(l); });
  EXPECT_EQ(collect(r, got),
            (std::vector<std::string>{"4,1187,52231187,-;NVRM: Xid (PCI:0000:3b:00): 79, GPU gone",
                                      "6,1188,52231190,-;eth0: link up"}));
  EXPECT_EQ(r.state().lines, 2u);
}

// What a process wrote into /dev/kmsg (facility user, 1: PRIO 8-15; or any
// other facility) is not the kernel's word, even when it reads like an Xid.
TEST(KernelLog, KmsgRecordsOfOtherFacilitiesThanTheKernelAreSkipped) {
  std::vector<std::string> got;
  KernelLogReader r(std::make_unique<ScriptedKmsg>(std::deque<ScriptedKmsg::Step>{
                        {"12,1190,52231200,-;NVRM: Xid (PCI:0000:3b:00): 79, forged\n"},
                        {"30,1191,52231201,-;NVRM: Xid (PCI:0000:3b:00): 79, systemd\n"},
                        {"x;NVRM: Xid (PCI:0000:3b:00): 79\n"},
                        {"3,1192,52231202,-;NVRM: Xid (PCI:0000:3b:00): 79, real\n"}}),
                    [&](std::string_view l) { got.emplace_back(l); });
  EXPECT_EQ(collect(r, got),
            (std::vector<std::string>{"3,1192,52231202,-;NVRM: Xid (PCI:0000:3b:00): 79, real"}));
  EXPECT_EQ(r.state().not_kernel, 3u);
  EXPECT_TRUE(kmsgFromKernel("0,1,2,-;x"));
  EXPECT_FALSE(kmsgFromKernel("8,1,2,-;x"));
  EXPECT_FALSE(kmsgFromKernel(""));
}

TEST(KernelLog, EpipeMeansRecordsWereOverwrittenAndReadingGoesOn) {
  std::vector<std::string> got;
  KernelLogReader r(std::make_unique<ScriptedKmsg>(std::deque<ScriptedKmsg::Step>{
                        {"6,1,1,-;before\n"}, {"", EPIPE}, {"6,90,9,-;after\n"}}),
                    [&](std::string_view l) { got.emplace_back(l); });
  EXPECT_EQ(collect(r, got), (std::vector<std::string>{"6,1,1,-;before", "6,90,9,-;after"}));
  EXPECT_EQ(r.state().overwritten, 1u);
  EXPECT_EQ(r.state().errors, 0u);
}

TEST(KernelLog, AnotherReadErrorStopsThisRoundAndIsCounted) {
  std::vector<std::string> got;
  KernelLogReader r(std::make_unique<ScriptedKmsg>(
                        std::deque<ScriptedKmsg::Step>{{"", EIO}, {"6,2,2,-;next round\n"}}),
                    [&](std::string_view l) { got.emplace_back(l); });
  EXPECT_EQ(r.pump(), 0u);
  EXPECT_EQ(r.state().errors, 1u);
  EXPECT_NE(r.state().last_error.find("read"), std::string::npos);
  EXPECT_EQ(r.pump(), 1u);
}

TEST(KernelLog, ALongKmsgRecordIsCutAtTheBound) {
  std::vector<std::string> got;
  const std::string record = "6,3,3,-;" + std::string(KernelLogReader::kMaxLine + 100, 'x') + "\n";
  KernelLogReader r(std::make_unique<ScriptedKmsg>(std::deque<ScriptedKmsg::Step>{{record}}),
                    [&](std::string_view l) { got.emplace_back(l); });
  r.pump();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].size(), KernelLogReader::kMaxLine);
}

TEST(LineSplitter, LinesSplitAcrossReadsAreJoined) {
  LineSplitter s(64);
  EXPECT_TRUE(s.feed("NVRM: Xid (PCI:00").empty());
  EXPECT_EQ(s.feed("00:3b:00): 13\nsecond\nthi"),
            (std::vector<std::string>{"NVRM: Xid (PCI:0000:3b:00): 13", "second"}));
  EXPECT_EQ(s.feed("rd\n"), (std::vector<std::string>{"third"}));
}

TEST(LineSplitter, TheTailOfAnOverLongLineIsDroppedNotTakenForALine) {
  LineSplitter s(8);
  // The tail "NVRM: Xid ..." of the long line must not become a line of its own.
  EXPECT_TRUE(s.feed("aaaaaaaaaaNVRM: Xid (PCI:0000:3b:00): 79").empty());
  EXPECT_EQ(s.feed(", more\nok\n"), (std::vector<std::string>{"aaaaaaaa", "ok"}));
  EXPECT_EQ(s.truncated(), 1u);
}

void append(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::app) << text;
}

TEST(KernelLog, AFileIsFollowedFromItsEnd) {
  support::TempDir dir("accel-kmsg");
  const std::string path = dir.file("kmsg");
  append(path, "NVRM: Xid (PCI:0000:3b:00): 79, old line from before the start\n");
  auto source = KernelLogReader::open(path);
  ASSERT_TRUE(source.ok()) << source.error().message();
  std::vector<std::string> got;
  KernelLogReader r(std::move(*source), [&](std::string_view l) { got.emplace_back(l); });
  EXPECT_EQ(r.pump(), 0u) << "old lines are not reported again";
  append(path, "first new\nsecond ");
  EXPECT_EQ(collect(r, got), (std::vector<std::string>{"first new"}));
  append(path, "half\n");
  EXPECT_EQ(collect(r, got), (std::vector<std::string>{"first new", "second half"}));
  // Rewritten shorter: read again from its start.
  std::ofstream(path, std::ios::trunc) << "new\n";
  r.pump();
  EXPECT_EQ(got.back(), "new");
}

TEST(KernelLog, AFifoGivesEveryLineAndOutlivesItsWriters) {
  support::TempDir dir("accel-kmsg");
  const std::string path = dir.file("fifo");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  auto source = KernelLogReader::open(path);
  ASSERT_TRUE(source.ok()) << source.error().message();
  std::vector<std::string> got;
  KernelLogReader r(std::move(*source), [&](std::string_view l) { got.emplace_back(l); });
  append(path, "one\n");
  append(path, "two\n");  // the first writer closed: the stream goes on
  EXPECT_EQ(collect(r, got), (std::vector<std::string>{"one", "two"}));
}

TEST(KernelLog, APathThatIsNoneOfTheKindsIsRefused) {
  support::TempDir dir("accel-kmsg");
  EXPECT_FALSE(KernelLogReader::open(dir.path()).ok());
  EXPECT_FALSE(KernelLogReader::open(dir.file("absent")).ok());
}

TEST(KernelLog, TheThreadHandsOnLinesAndStops) {
  support::TempDir dir("accel-kmsg");
  const std::string path = dir.file("kmsg");
  append(path, "");
  auto source = KernelLogReader::open(path);
  ASSERT_TRUE(source.ok());
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> got;
  KernelLogReader r(std::move(*source), [&](std::string_view l) {
    std::lock_guard<std::mutex> g(mu);
    got.emplace_back(l);
    cv.notify_all();
  });
  r.start();
  append(path, "seen by the thread\n");
  std::unique_lock<std::mutex> g(mu);
  EXPECT_TRUE(cv.wait_for(g, std::chrono::seconds(10), [&] { return !got.empty(); }));
  g.unlock();
  r.stop();
  EXPECT_EQ(got.at(0), "seen by the thread");
}

}  // namespace
}  // namespace accel::agent
