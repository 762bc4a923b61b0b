#include <gtest/gtest.h>
#include <sys/stat.h>

#include "accel/ipu/vipu_cli.h"
#include "accel/ipu/vipu_outcome.h"
#include "script_client.h"

namespace accel::ipu {
namespace {

using namespace std::chrono_literals;
using test::ScriptDir;

exec::ClientResult result(int code, std::string err, bool timed_out = false) {
  exec::ClientResult r;
  r.exit_code = code;
  r.err = std::move(err);
  r.timed_out = timed_out;
  return r;
}

TEST(VipuOutcome, ClassifiesTheClientsAnswers) {
  EXPECT_EQ(classifyVipu(result(0, "")), VipuOutcome::kOk);
  EXPECT_EQ(classifyVipu(result(1, "Error: partition p4 already exists")), VipuOutcome::kExists);
  EXPECT_EQ(classifyVipu(result(1, "Error: partition p4 not found")), VipuOutcome::kNotFound);
  EXPECT_EQ(classifyVipu(result(1, "Error: dial tcp 10.0.0.1:8090: connection refused")),
            VipuOutcome::kTransient);
  EXPECT_EQ(classifyVipu(result(-1, "", true)), VipuOutcome::kTransient);
  EXPECT_EQ(classifyVipu(result(1, "Error: size must be a power of two")),
            VipuOutcome::kBadRequest);
  EXPECT_EQ(classifyVipu(result(1, "Error: number of replicas 4 does not divide 2 IPUs per GCD")),
            VipuOutcome::kBadRequest);
  EXPECT_EQ(classifyVipu(result(1, "Error: not enough free IPUs")), VipuOutcome::kRefused);
  auto killed = result(-1, "");
  killed.term_signal = 9;
  EXPECT_EQ(classifyVipu(killed), VipuOutcome::kTransient);
}

TEST(IpuofParse, ReadsOneConfigPerGcdInOrder) {
  auto r = parseIpuConfigs(R"({"partition":"p7","gcds":[
      {"gcd":1,"config":{"ipus":[2,3]}},{"gcd":0,"config":{"ipus":[0,1]}}]})",
                           "p7");
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].gcd, 0u);
  EXPECT_NE((*r)[0].config.find("\"ipus\""), std::string::npos);
  EXPECT_NE((*r)[1].config.find("3"), std::string::npos);
}

TEST(IpuofParse, RefusesWrongOrBrokenAnswers) {
  const char* bad[] = {
      "",
      "garbage",
      R"({"partition":"p7","gcds":[{"gcd":0,"config":{}}]})",  // wrong partition (asked p8)
      R"({"partition":"p8","gcds":[]})",
      R"({"partition":"p8","gcds":[{"gcd":0,"config":{}},{"gcd":0,"config":{}}]})",
      R"({"partition":"p8","gcds":[{"gcd":1,"config":{}}]})",
      R"({"partition":"p8","gcds":[{"gcd":-1,"config":{}}]})",
      R"({"partition":"p8","gcds":[{"gcd":0,"config":"text"}]})",
      R"({"partition":"p8","gcds":[{"gcd":0,"config":{"a":1}}]})" + 10,  // truncated at the front
      R"({"partition":"p8","gcds":[{"gcd":0,"conf)",
  };
  for (const char* text : bad) EXPECT_FALSE(parseIpuConfigs(text, "p8").ok()) << text;
}

VipuConfig config() {
  VipuConfig c;
  c.api_host = "vipu.example";
  c.api_port = 8090;
  c.ipuof_dir = "/tmp";
  c.max_ipus_per_job = 64;
  c.api_timeout = 5s;
  return c;
}

exec::RetryPolicy fast(std::chrono::milliseconds budget = 5000ms) {
  return exec::RetryPolicy{.attempts = 3, .budget = budget, .backoff = 10ms, .max_backoff = 40ms};
}

TEST(VipuCli, PassesTheControllerAndTheRequest) {
  ScriptDir d;
  auto vipu = d.script("vipu", "echo \"$@\" >> \"$DIR/calls\"");
  VipuCli cli(config(), vipu, fast());
  ASSERT_TRUE(cli.create({.name = "p12", .ipus = 4, .gcds = 2, .replicas = 2}).ok());
  EXPECT_EQ(d.read("calls"),
            "--api-host vipu.example --api-port 8090 create partition p12 --size 4 --num-gcds 2 "
            "--num-replicas 2\n");
  EXPECT_EQ(cli.describe(), "vipu controller vipu.example:8090");
}

TEST(VipuCli, RetriesWhileTheControllerIsUnreachable) {
  ScriptDir d;
  auto vipu = d.script("vipu",
                       "echo x >> \"$DIR/calls\"\n"
                       "[ $(wc -l < \"$DIR/calls\") -ge 3 ] && exit 0\n"
                       "echo 'Error: connection refused' >&2; exit 1");
  VipuCli cli(config(), vipu, fast());
  EXPECT_TRUE(cli.remove("p3").ok());
  EXPECT_EQ(d.read("calls"), "x\nx\nx\n");
}

TEST(VipuCli, GivesUpAfterTheAttemptsAndNamesTheError) {
  ScriptDir d;
  auto vipu =
      d.script("vipu", "echo x >> \"$DIR/calls\"; echo 'Error: connection refused' >&2; exit 1");
  VipuCli cli(config(), vipu, fast());
  auto s = cli.create({.name = "p3", .ipus = 2});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), ErrorCode::kUnavailable);
  EXPECT_NE(s.error().message().find("after 3 attempts"), std::string::npos) << s.error().message();
  EXPECT_NE(s.error().message().find("connection refused"), std::string::npos);
  EXPECT_EQ(d.read("calls"), "x\nx\nx\n");
}

TEST(VipuCli, HangingClientIsBoundedByTheBudget) {
  ScriptDir d;
  auto vipu = d.script("vipu", "exec sleep 60");
  VipuCli cli(config(), vipu, fast(400ms));
  auto start = std::chrono::steady_clock::now();
  auto s = cli.create({.name = "p3", .ipus = 2});
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), ErrorCode::kTimeout);
}

TEST(VipuCli, RefusalsAreNotRetried) {
  ScriptDir d;
  auto vipu = d.script(
      "vipu", "echo x >> \"$DIR/calls\"; echo 'Error: partition p3 already exists' >&2; exit 1");
  VipuCli cli(config(), vipu, fast());
  auto s = cli.create({.name = "p3", .ipus = 2});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), ErrorCode::kConflict);
  EXPECT_EQ(d.read("calls"), "x\n");
}

TEST(VipuCli, RemovingAPartitionThatIsGoneSucceeds) {
  ScriptDir d;
  auto vipu = d.script("vipu", "echo 'Error: partition p3 not found' >&2; exit 1");
  VipuCli cli(config(), vipu, fast());
  EXPECT_TRUE(cli.remove("p3").ok());
  auto configs = cli.ipuofConfigs("p3");
  ASSERT_FALSE(configs.ok());
  EXPECT_EQ(configs.error().code(), ErrorCode::kNotFound);
}

TEST(VipuCli, MalformedConfigsAreRetriedThenReported) {
  ScriptDir d;
  auto vipu = d.script("vipu", "echo x >> \"$DIR/calls\"; echo '{\"partition\": '");
  VipuCli cli(config(), vipu, fast());
  auto r = cli.ipuofConfigs("p3");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::kParse);
  EXPECT_NE(r.error().message().find("malformed output"), std::string::npos);
  EXPECT_EQ(d.read("calls"), "x\nx\nx\n");
}

TEST(VipuCli, SecureModePassesFilesAndKeepsTheKeyOffTheCommandLine) {
  ScriptDir d;
  auto vipu = d.script(
      "vipu", "echo \"$@\" > \"$DIR/args\"; echo \"$VIPU_CLI_API_ACCESS_KEY\" > \"$DIR/key\"");
  auto c = config();
  c.is_secure = true;
  c.api_user = "slurm";
  c.api_access_key = "s3cret";
  c.client_cert_file = "/c.pem";
  c.client_key_file = "/k.pem";
  c.server_cert_file = "/s.pem";
  VipuCli cli(c, vipu, fast());
  ASSERT_TRUE(cli.remove("p1").ok());
  std::string args = d.read("args");
  EXPECT_NE(args.find("--api-user slurm --api-client-cert /c.pem --api-client-key /k.pem "
                      "--api-server-cert /s.pem"),
            std::string::npos)
      << args;
  EXPECT_EQ(args.find("s3cret"), std::string::npos);
  EXPECT_EQ(d.read("key"), "s3cret\n");
}

TEST(VipuCli, SecureConfigNeedsPrivateKeyFile) {
  ScriptDir d;
  d.write("cert.pem", "cert");
  d.write("key.pem", "key");
  auto c = config();
  c.is_secure = true;
  c.api_user = "slurm";
  c.api_access_key = "k";
  c.client_cert_file = d.path("cert.pem");
  c.server_cert_file = d.path("cert.pem");
  c.client_key_file = d.path("key.pem");
  ::chmod(d.path("key.pem").c_str(), 0644);
  auto s = VipuCli::checkSecureFiles(c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("ClientKeyFile " + d.path("key.pem") +
                                     " can be read by other users (mode 0644)"),
            std::string::npos)
      << s.error().message();
  ::chmod(d.path("key.pem").c_str(), 0600);
  EXPECT_TRUE(VipuCli::checkSecureFiles(c).ok());
  c.server_cert_file = d.path("missing.pem");
  s = VipuCli::checkSecureFiles(c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("ServerCertFile"), std::string::npos);
  c.is_secure = false;
  EXPECT_TRUE(VipuCli::checkSecureFiles(c).ok());
}

}  // namespace
}  // namespace accel::ipu
