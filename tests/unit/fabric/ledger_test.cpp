// The ledger's text form: a round trip, and refusal of anything that is not
// exactly a ledger (garbage, truncation, unknown keys, inconsistencies).
#include "accel/fabric/ledger.h"

#include <gtest/gtest.h>

namespace accel::fabric {
namespace {

Ledger sample() {
  Ledger ledger;
  ledger.nics = {{"hsi0", 4, 1500, false, false, {*parseCidr("10.10.0.0/16")}},
                 {"ibs2f1", 5, 9000, true, true, {}}};
  ledger.jobs = {{42, {{"hsi0", *parseCidr("10.9.0.43/24")}, {"ibs2f1", std::nullopt}}},
                 {43, {{"hsi0", *parseCidr("10.9.0.44/24")}}}};
  return ledger;
}

void expectRefused(const std::string& text, const std::string& why) {
  auto decoded = decodeLedger(text);
  ASSERT_FALSE(decoded.ok()) << text;
  EXPECT_EQ(decoded.error().code(), ErrorCode::kParse);
  EXPECT_NE(decoded.error().message().find(why), std::string::npos) << decoded.error().message();
}

TEST(FabricLedger, RoundTrip) {
  const Ledger ledger = sample();
  const std::string text = encodeLedger(ledger);
  auto decoded = decodeLedger(text);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message();
  EXPECT_EQ(*decoded, ledger);
  EXPECT_EQ(encodeLedger(*decoded), text);
  auto empty = decodeLedger(encodeLedger(Ledger{}));
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, Ledger{});
}

TEST(FabricLedger, Queries) {
  const Ledger ledger = sample();
  EXPECT_EQ(ledger.users("hsi0"), 2u);
  EXPECT_EQ(ledger.users("hsi0", 42), 1u);
  EXPECT_EQ(ledger.users("ibs2f1", 42), 0u);
  EXPECT_EQ(ledger.users("eth9"), 0u);
  EXPECT_EQ(ledger.addresses(), (std::vector<uint32_t>{0x0a09002b, 0x0a09002c}));
  EXPECT_EQ(ledger.job(7), nullptr);
  ASSERT_NE(ledger.nic("ibs2f1"), nullptr);
  EXPECT_EQ(ledger.nic("ibs2f1")->original_mtu, 9000u);
}

TEST(FabricLedger, GarbageAndTruncationAreRefused) {
  expectRefused("", "not JSON");
  expectRefused(
      "\x7f"
      "ELF\x02\x01",
      "not JSON");
  expectRefused("[1,2,3]", "ledger is not an object");
  const std::string text = encodeLedger(sample());
  // Every proper prefix; the last byte is a newline, so stop before the
  // complete object.
  for (size_t n = 0; n + 1 < text.size(); ++n) {
    EXPECT_FALSE(decodeLedger(text.substr(0, n)).ok()) << n;
  }
}

TEST(FabricLedger, ShapeIsExact) {
  expectRefused(R"({"version":2,"nics":[],"jobs":[]})", "version is not 1");
  expectRefused(R"({"version":1,"nics":[]})", "lacks \"jobs\"");
  expectRefused(R"({"version":1,"nics":[],"jobs":[],"extra":0})", "unknown key");
  expectRefused(R"({"version":1,"nics":{},"jobs":[]})", "must be lists");
  const std::string nic =
      R"("name":"eth3","ifindex":7,"mtu":1500,"up":false,"promote_secondaries":false,"routes":[])";
  const std::string job = R"({"job":1,"nics":[{"nic":"eth3","address":"10.9.0.2/24"}]})";
  auto with = [&](const std::string& n, const std::string& j) {
    return R"({"version":1,"nics":[{)" + n + R"(}],"jobs":[)" + j + "]}";
  };
  ASSERT_TRUE(decodeLedger(with(nic, job)).ok()) << decodeLedger(with(nic, job)).error().message();
  expectRefused(with(nic + R"(,"owner":"x")", job), "unknown key");
  expectRefused(
      with(
          R"("name":"eth3","ifindex":-7,"mtu":1500,"up":false,"promote_secondaries":false,"routes":[])",
          job),
      "\"ifindex\" is not an integer");
  expectRefused(
      with(
          R"("name":"eth3","ifindex":0,"mtu":1500,"up":false,"promote_secondaries":false,"routes":[])",
          job),
      "ifindex 0");
  expectRefused(
      with(
          R"("name":"eth3","ifindex":7,"mtu":1.5,"up":false,"promote_secondaries":false,"routes":[])",
          job),
      "\"mtu\" is not an integer");
  expectRefused(
      with(
          R"("name":"eth3","ifindex":7,"mtu":1500,"up":"no","promote_secondaries":false,"routes":[])",
          job),
      "\"up\" is not true or false");
  expectRefused(
      with(
          R"("name":"../x","ifindex":7,"mtu":1500,"up":false,"promote_secondaries":false,"routes":[])",
          job),
      "is not an interface name");
  expectRefused(
      with(
          R"("name":"eth3","ifindex":7,"mtu":1500,"up":false,"promote_secondaries":false,"routes":["10.10.0.1/16"])",
          job),
      "host bits");
  expectRefused(with(nic, R"({"job":1,"nics":[{"nic":"eth3","address":"10.9.0.2"}]})"),
                "not an IPv4 prefix");
  expectRefused(with(nic, R"({"job":4294967296,"nics":[]})"), "\"job\" is not an integer");
}

TEST(FabricLedger, RecordsMustAgree) {
  const std::string eth3 =
      R"({"name":"eth3","ifindex":7,"mtu":1500,"up":false,"promote_secondaries":false,"routes":[]})";
  auto doc = [](const std::string& nics, const std::string& jobs) {
    return R"({"version":1,"nics":[)" + nics + R"(],"jobs":[)" + jobs + "]}";
  };
  const std::string job1 = R"({"job":1,"nics":[{"nic":"eth3","address":"10.9.0.2/24"}]})";
  const std::string job2 = R"({"job":2,"nics":[{"nic":"eth3","address":null}]})";
  ASSERT_TRUE(decodeLedger(doc(eth3, job1 + "," + job2)).ok());
  expectRefused(doc(eth3 + "," + eth3, job1), "nic eth3 appears twice");
  expectRefused(doc(eth3, job1 + "," + job1), "job 1 appears twice");
  expectRefused(doc(eth3, ""), "nic eth3 is held by no job");
  expectRefused(
      doc(eth3,
          R"({"job":1,"nics":[{"nic":"eth3","address":null},{"nic":"eth4","address":null}]})"),
      "job 1: nic eth4 is not held");
  expectRefused(
      doc(eth3,
          R"({"job":1,"nics":[{"nic":"eth3","address":null},{"nic":"eth3","address":null}]})"),
      "job 1: nic eth3 appears twice");
  expectRefused(doc(eth3, job1 + R"(,{"job":2,"nics":[{"nic":"eth3","address":"10.9.0.2/24"}]})"),
                "address 10.9.0.2/24 is held twice");
}

}  // namespace
}  // namespace accel::fabric
