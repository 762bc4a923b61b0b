// Places on the control socket, counted per uid and stage, with a chosen clock.
#include "accel/ipc/admission.h"

#include <gtest/gtest.h>

namespace accel::ipc {
namespace {

using namespace std::chrono_literals;
using Clock = Admission::Clock;

constexpr uid_t kRoot = 0;
constexpr uid_t kFlooder = 1001;
constexpr uid_t kOther = 1002;
constexpr Stage kWaiting = Stage::kWaiting;
constexpr Stage kAnswered = Stage::kAnswered;

AdmissionLimits small() {
  AdmissionLimits l;
  l.admin_connections = 4;
  l.users_connections = 6;
  l.user_connections = 3;
  l.user_requests = 2;
  l.user_rate = 10;
  l.user_burst = 20;
  return l;
}

// Admits and releases `n` requests of `uid` at `t`; how many were admitted.
int requests(Admission& a, uid_t uid, int n, Clock::time_point t) {
  int admitted = 0;
  for (int i = 0; i < n; ++i) {
    if (a.admit(uid, false, kAnswered, t) == Refusal::kNone) {
      ++admitted;
      a.release(uid, false, kAnswered);
    }
  }
  return admitted;
}

TEST(AdmissionTest, RootIsServedWhileAUserHoldsEveryPlaceItCanTake) {
  Admission a(small());
  const auto t = Clock::now();
  int held = 0;
  for (int i = 0; i < 1000; ++i) held += a.admit(kFlooder, false, kWaiting, t) == Refusal::kNone;
  for (int i = 0; i < 1000; ++i) held += a.admit(kFlooder, false, kAnswered, t) == Refusal::kNone;
  EXPECT_EQ(held, 5) << "one uid holds its share of waiting and answered places, no more";
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(a.admit(kRoot, true, kWaiting, t), Refusal::kNone) << "admin place " << i;
  EXPECT_EQ(a.adminConnections(), 4);
  EXPECT_EQ(a.admit(kRoot, true, kAnswered, t), Refusal::kAdminsFull)
      << "admins are bounded by their own places";
  a.release(kRoot, true, kWaiting);
  EXPECT_EQ(a.admit(kRoot, true, kAnswered, t), Refusal::kNone);
  EXPECT_EQ(a.requestCame(kRoot, true, t), Refusal::kNone)
      << "admins are never refused for their requests";
}

TEST(AdmissionTest, EachUidHoldsAtMostItsWaitingConnectionsAndUsersTogetherTheirPlaces) {
  Admission a(small());
  const auto t = Clock::now();
  for (int i = 0; i < 3; ++i) ASSERT_EQ(a.admit(kFlooder, false, kWaiting, t), Refusal::kNone);
  EXPECT_EQ(a.admit(kFlooder, false, kWaiting, t), Refusal::kUserConnections);
  EXPECT_EQ(a.waitingOf(kFlooder), 3);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(a.admit(kOther, false, kWaiting, t), Refusal::kNone);
  EXPECT_EQ(a.admit(2000, false, kWaiting, t), Refusal::kUsersFull)
      << "users together have 6 places";
  EXPECT_EQ(a.admit(2000, false, kAnswered, t), Refusal::kUsersFull);
  EXPECT_EQ(a.userConnections(), 6);
  a.release(kFlooder, false, kWaiting);
  EXPECT_EQ(a.waitingOf(kFlooder), 2);
  EXPECT_EQ(a.admit(2000, false, kWaiting, t), Refusal::kNone)
      << "a place given back is free again";
}

// The same user's real request is not held up by its own silent connections.
TEST(AdmissionTest, ARequestThatCameTakesNoWaitingPlace) {
  Admission a(small());
  const auto t = Clock::now();
  for (int i = 0; i < 3; ++i) ASSERT_EQ(a.admit(kFlooder, false, kWaiting, t), Refusal::kNone);
  EXPECT_EQ(a.admit(kFlooder, false, kAnswered, t), Refusal::kNone);
  EXPECT_EQ(a.answeredOf(kFlooder), 1);
  EXPECT_EQ(a.waitingOf(kFlooder), 3);
}

TEST(AdmissionTest, EachUidHasAtMostItsRequestsBeingAnswered) {
  Admission a(small());
  const auto t = Clock::now();
  for (int i = 0; i < 3; ++i) ASSERT_EQ(a.admit(kFlooder, false, kWaiting, t), Refusal::kNone);
  EXPECT_EQ(a.requestCame(kFlooder, false, t), Refusal::kNone);
  EXPECT_EQ(a.requestCame(kFlooder, false, t), Refusal::kNone);
  EXPECT_EQ(a.requestCame(kFlooder, false, t), Refusal::kUserRequests);
  EXPECT_EQ(a.admit(kFlooder, false, kAnswered, t), Refusal::kUserRequests);
  EXPECT_EQ(a.answeredOf(kFlooder), 2);
  EXPECT_EQ(a.waitingOf(kFlooder), 1) << "the refused one is still waiting, and released as such";
  a.release(kFlooder, false, kWaiting);
  EXPECT_EQ(a.waitingOf(kFlooder), 0);
  ASSERT_EQ(a.admit(kOther, false, kAnswered, t), Refusal::kNone)
      << "another uid has its own share";
  a.release(kFlooder, false, kAnswered);
  EXPECT_EQ(a.admit(kFlooder, false, kAnswered, t), Refusal::kNone);
}

TEST(AdmissionTest, RequestsBeyondTheRateAreRefusedUntilTheBucketRefills) {
  Admission a(small());  // 10 a second, bursts of 20
  auto t = Clock::now();
  EXPECT_EQ(requests(a, kFlooder, 100, t), 20) << "a burst, then nothing";
  EXPECT_EQ(a.admit(kFlooder, false, kAnswered, t), Refusal::kUserRate);
  ASSERT_EQ(a.admit(kFlooder, false, kWaiting, t), Refusal::kNone) << "waiting costs no token";
  EXPECT_EQ(a.requestCame(kFlooder, false, t), Refusal::kUserRate) << "its request does";
  a.release(kFlooder, false, kWaiting);
  EXPECT_EQ(requests(a, kOther, 1, t), 1) << "the rate is per uid";
  t += 100ms;  // one token
  EXPECT_EQ(requests(a, kFlooder, 100, t), 1);
  t += 1s;  // ten tokens
  EXPECT_EQ(requests(a, kFlooder, 100, t), 10);
  t += 1h;  // the bucket holds no more than the burst
  EXPECT_EQ(requests(a, kFlooder, 100, t), 20);
}

TEST(AdmissionTest, RefusedAndSilentConnectionsCostNoRateToken) {
  Admission a(small());
  const auto t = Clock::now();
  for (int i = 0; i < 3; ++i) ASSERT_EQ(a.admit(kFlooder, false, kWaiting, t), Refusal::kNone);
  for (int i = 0; i < 1000; ++i)
    ASSERT_EQ(a.admit(kFlooder, false, kWaiting, t), Refusal::kUserConnections);
  for (int i = 0; i < 3; ++i) a.release(kFlooder, false, kWaiting);
  EXPECT_EQ(requests(a, kFlooder, 100, t), 20);
}

TEST(AdmissionTest, AdminsNeverSpendUserPlacesOrTokens) {
  Admission a(small());
  const auto t = Clock::now();
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(a.admit(kRoot, true, kAnswered, t), Refusal::kNone);
    a.release(kRoot, true, kAnswered);
  }
  EXPECT_EQ(a.userConnections(), 0);
  EXPECT_EQ(requests(a, kFlooder, 100, t), 20);
}

TEST(AdmissionTest, ManyUidsAreRememberedBoundedly) {
  Admission a(small());
  auto t = Clock::now();
  for (uid_t u = 10000; u < 20000; ++u) {
    ASSERT_EQ(requests(a, u, 1, t), 1);
    t += 1s;  // each bucket full again by the next
  }
  EXPECT_EQ(a.userConnections(), 0);
  EXPECT_LE(a.rememberedUids(), 256u) << "uids that hold nothing and owe no rate are forgotten";
  // One that is still limited is remembered however many others come.
  EXPECT_EQ(requests(a, kFlooder, 20, t), 20);
  for (uid_t u = 30000; u < 31000; ++u) ASSERT_EQ(requests(a, u, 1, t), 1);
  EXPECT_EQ(a.admit(kFlooder, false, kAnswered, t), Refusal::kUserRate);
}

TEST(AdmissionTest, NewLimitsApplyToTheNextAdmission) {
  Admission a(small());
  const auto t = Clock::now();
  for (int i = 0; i < 3; ++i) ASSERT_EQ(a.admit(kFlooder, false, kWaiting, t), Refusal::kNone);
  auto more = small();
  more.user_connections = 5;
  a.setLimits(more);
  EXPECT_EQ(a.admit(kFlooder, false, kWaiting, t), Refusal::kNone);
  EXPECT_EQ(a.limits().user_connections, 5);
}

TEST(AdmissionTest, RefusalsSayWhyAndNameTheSetting) {
  const auto l = small();
  EXPECT_EQ(refusalMessage(Refusal::kNone, l), "");
  EXPECT_NE(refusalMessage(Refusal::kUserConnections, l).find("3 connections"), std::string::npos);
  EXPECT_NE(refusalMessage(Refusal::kUserConnections, l).find("ControlUserConnections"),
            std::string::npos);
  EXPECT_NE(refusalMessage(Refusal::kUserRequests, l).find("ControlUserRequests"),
            std::string::npos);
  EXPECT_NE(refusalMessage(Refusal::kUserRate, l).find("10 times a second"), std::string::npos);
  EXPECT_NE(refusalMessage(Refusal::kUsersFull, l).find("busy"), std::string::npos);
}

}  // namespace
}  // namespace accel::ipc
