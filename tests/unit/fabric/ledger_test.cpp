// The ledger's text form: a round trip, and refusal of anything that is not
// exactly a ledger (garbage, truncation, unknown keys, inconsistencies).
#include "accel/fabric/ledger.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

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

// Ledgers exactly as earlier versions wrote them (data/ledger/, whose
// README.md names the commit of the writer). Version 1 is the only shape so
// far; the newest file is also what this version writes, byte for byte.
std::string ledgerFile(const std::string& name) {
  std::ifstream in(ACCEL_SOURCE_DIR "/tests/unit/fabric/data/ledger/" + name, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(FabricLedger, EarlierVersionsAreRead) {
  const std::string text = ledgerFile("01-68dcc1d.json");
  ASSERT_FALSE(text.empty());
  auto ledger = decodeLedger(text);
  ASSERT_TRUE(ledger.ok()) << ledger.error().message();
  ASSERT_EQ(ledger->nics.size(), 2u);
  const LedgerNic& hsn0 = ledger->nics[0];
  EXPECT_EQ(hsn0.name, "hsn0");
  EXPECT_EQ(hsn0.ifindex, 7);
  EXPECT_EQ(hsn0.original_mtu, 1500u);
  EXPECT_TRUE(hsn0.original_up);
  EXPECT_FALSE(hsn0.original_promote_secondaries);
  EXPECT_EQ(hsn0.routes, (std::vector<Ipv4Cidr>{*parseCidr("10.20.0.0/16")}));
  const LedgerNic& ib = ledger->nics[1];
  EXPECT_EQ(ib.name, "ibp65s0");
  EXPECT_EQ(ib.ifindex, 9);
  EXPECT_EQ(ib.original_mtu, 4092u);
  EXPECT_FALSE(ib.original_up);
  EXPECT_TRUE(ib.original_promote_secondaries);
  EXPECT_TRUE(ib.routes.empty());
  ASSERT_EQ(ledger->jobs.size(), 2u);
  EXPECT_EQ(ledger->jobs[0],
            (LedgerJob{4201, {{"hsn0", *parseCidr("10.9.0.105/24")}, {"ibp65s0", std::nullopt}}}));
  EXPECT_EQ(ledger->jobs[1], (LedgerJob{4202, {{"hsn0", *parseCidr("10.9.0.106/24")}}}));
  EXPECT_EQ(ledger->users("hsn0"), 2u);
  EXPECT_EQ(encodeLedger(*ledger), text);

  const std::string empty_text = ledgerFile("02-68dcc1d-empty.json");
  auto empty = decodeLedger(empty_text);
  ASSERT_TRUE(empty.ok()) << empty.error().message();
  EXPECT_EQ(*empty, Ledger{});
  EXPECT_EQ(encodeLedger(*empty), empty_text);
}

// A key this version does not know, or a later version number, is refused:
// teardown must not undo what it half understands.
TEST(FabricLedger, ALaterVersionsLedgerIsRefused) {
  const std::string text = ledgerFile("01-68dcc1d.json");
  ASSERT_EQ(text.substr(0, 2), "{\n");
  expectRefused("{\n \"owner\": \"later\",\n" + text.substr(2), "unknown key");
  std::string nic_key = text;
  const auto at = nic_key.find("\"ifindex\": 9,");
  ASSERT_NE(at, std::string::npos);
  nic_key.insert(at, "\"queues\": 8, ");
  expectRefused(nic_key, "nic has an unknown key");
  std::string version2 = text;
  const auto v = version2.find("\"version\": 1");
  ASSERT_NE(v, std::string::npos);
  version2.replace(v, 12, "\"version\": 2");
  expectRefused(version2, "version is not 1");
}

}  // namespace
}  // namespace accel::fabric
