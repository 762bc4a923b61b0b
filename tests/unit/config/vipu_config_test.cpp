// vipu.conf, read unchanged with V-IPU's own keys and defaults (seed 001):
// ApiHost, ApiPort (8090), IpuofDir, MaxIpusPerJob (256), ApiTimeout (50),
// IsSecure and the mTLS keys it requires.
#include "accel/common/vipu_config.h"

#include <gtest/gtest.h>

#include <string>

namespace accel {
namespace {

// A vipu.conf as the V-IPU documentation describes it, written by hand.
constexpr std::string_view kSeedExample =
    "# V-IPU options for the Slurm integration; lives beside slurm.conf\n"
    "ApiHost=vipu-controller.pod64.example.org\n"
    "ApiPort=8090\n"
    "IpuofDir=/home/ipuof\n"
    "MaxIpusPerJob=64\n"
    "ApiTimeout=50\n";

constexpr std::string_view kSecureKeys =
    "ApiUser=slurm-vipu\n"
    "ApiAccessKey=0123456789abcdef\n"
    "ClientCertFile=/etc/vipu/client.crt\n"
    "ClientKeyFile=/etc/vipu/client.key\n"
    "ServerCertFile=/etc/vipu/server.crt\n";

std::string errorOf(std::string_view text) {
  Result<VipuConfig> config = parseVipuConfig(text);
  EXPECT_FALSE(config.ok()) << text;
  return config.ok() ? std::string() : config.error().message();
}

TEST(VipuConfig, SeedExample) {
  Result<VipuConfig> config = parseVipuConfig(kSeedExample);
  ASSERT_TRUE(config.ok()) << config.error().message();
  EXPECT_EQ(config->api_host, "vipu-controller.pod64.example.org");
  EXPECT_EQ(config->api_port, 8090);
  EXPECT_EQ(config->ipuof_dir, "/home/ipuof");
  EXPECT_EQ(config->max_ipus_per_job, 64u);
  EXPECT_EQ(config->api_timeout, std::chrono::seconds(50));
  EXPECT_FALSE(config->is_secure);
  EXPECT_FALSE(config->api_user.has_value());
  EXPECT_FALSE(config->api_access_key.has_value());
}

TEST(VipuConfig, DefaultsOfTheVipuDocumentation) {
  Result<VipuConfig> config = parseVipuConfig("ApiHost=10.1.2.3\nIpuofDir=/srv/ipuof\n");
  ASSERT_TRUE(config.ok()) << config.error().message();
  EXPECT_EQ(config->api_port, 8090);
  EXPECT_EQ(config->max_ipus_per_job, 256u);
  EXPECT_EQ(config->api_timeout, std::chrono::seconds(50));
  EXPECT_FALSE(config->is_secure);
}

TEST(VipuConfig, SpacesAroundEqualsAsInTheSeedsSlurmConf) {
  Result<VipuConfig> config = parseVipuConfig("ApiHost = ctrl\nIpuofDir = /x\nApiPort = 9000\n");
  ASSERT_TRUE(config.ok()) << config.error().message();
  EXPECT_EQ(config->api_port, 9000);
}

TEST(VipuConfig, RequiredKeysMissing) {
  EXPECT_EQ(errorOf(""),
            "vipu.conf: key 'ApiHost': required but not set\n"
            "vipu.conf: key 'IpuofDir': required but not set");
  EXPECT_EQ(errorOf("ApiHost=ctrl\n"), "vipu.conf: key 'IpuofDir': required but not set");
}

TEST(VipuConfig, PortRange) {
  EXPECT_EQ(errorOf("ApiHost=c\nIpuofDir=/x\nApiPort=0\n"),
            "vipu.conf:3: key 'ApiPort': '0' is below the minimum 1");
  EXPECT_EQ(errorOf("ApiHost=c\nIpuofDir=/x\nApiPort=65536\n"),
            "vipu.conf:3: key 'ApiPort': '65536' is above the maximum 65535");
  EXPECT_EQ(errorOf("ApiHost=c\nIpuofDir=/x\nApiPort=http\n"),
            "vipu.conf:3: key 'ApiPort': 'http' is not a whole number");
  Result<VipuConfig> top = parseVipuConfig("ApiHost=c\nIpuofDir=/x\nApiPort=65535\n");
  ASSERT_TRUE(top.ok());
  EXPECT_EQ(top->api_port, 65535);
}

TEST(VipuConfig, MaxIpusPerJobRange) {
  EXPECT_EQ(errorOf("ApiHost=c\nIpuofDir=/x\nMaxIpusPerJob=0\n"),
            "vipu.conf:3: key 'MaxIpusPerJob': '0' is below the minimum 1");
  EXPECT_EQ(errorOf("ApiHost=c\nIpuofDir=/x\nMaxIpusPerJob=4294967296\n"),
            "vipu.conf:3: key 'MaxIpusPerJob': '4294967296' is above the maximum 4294967295");
  Result<VipuConfig> top = parseVipuConfig("ApiHost=c\nIpuofDir=/x\nMaxIpusPerJob=4294967295\n");
  ASSERT_TRUE(top.ok());
  EXPECT_EQ(top->max_ipus_per_job, 4294967295u);
}

TEST(VipuConfig, IpuofDirMustBeAbsolute) {
  EXPECT_EQ(errorOf("ApiHost=c\nIpuofDir=ipuof\n"),
            "vipu.conf:2: key 'IpuofDir': 'ipuof' is not an absolute path");
}

TEST(VipuConfig, SecureModeRequiresUserKeyAndThreeFiles) {
  EXPECT_EQ(errorOf(std::string(kSeedExample) + "IsSecure=yes\n"),
            "vipu.conf: key 'ApiUser': required when IsSecure is enabled (it is set at line 7)\n"
            "vipu.conf: key 'ApiAccessKey': required when IsSecure is enabled (it is set at line "
            "7)\n"
            "vipu.conf: key 'ClientCertFile': required when IsSecure is enabled (it is set at "
            "line 7)\n"
            "vipu.conf: key 'ClientKeyFile': required when IsSecure is enabled (it is set at line "
            "7)\n"
            "vipu.conf: key 'ServerCertFile': required when IsSecure is enabled (it is set at "
            "line 7)");
  // One missing of five.
  std::string four(kSecureKeys);
  four.erase(four.find("ClientKeyFile"), four.find("ServerCertFile") - four.find("ClientKeyFile"));
  EXPECT_EQ(errorOf(std::string(kSeedExample) + "IsSecure=true\n" + four),
            "vipu.conf: key 'ClientKeyFile': required when IsSecure is enabled (it is set at line "
            "7)");
}

TEST(VipuConfig, SecureModeComplete) {
  Result<VipuConfig> config =
      parseVipuConfig(std::string(kSeedExample) + "IsSecure=yes\n" + std::string(kSecureKeys));
  ASSERT_TRUE(config.ok()) << config.error().message();
  EXPECT_TRUE(config->is_secure);
  EXPECT_EQ(config->api_user, "slurm-vipu");
  EXPECT_EQ(config->api_access_key, "0123456789abcdef");
  EXPECT_EQ(config->client_cert_file, "/etc/vipu/client.crt");
  EXPECT_EQ(config->client_key_file, "/etc/vipu/client.key");
  EXPECT_EQ(config->server_cert_file, "/etc/vipu/server.crt");
}

TEST(VipuConfig, SecureKeysWithoutSecureModeAreKept) {
  Result<VipuConfig> config =
      parseVipuConfig(std::string(kSeedExample) + "IsSecure=no\n" + std::string(kSecureKeys));
  ASSERT_TRUE(config.ok()) << config.error().message();
  EXPECT_FALSE(config->is_secure);
  EXPECT_EQ(config->api_user, "slurm-vipu");
}

TEST(VipuConfig, CertificatePathsMustBeAbsolute) {
  EXPECT_EQ(errorOf(std::string(kSeedExample) + "ClientCertFile=client.crt\n"),
            "vipu.conf:7: key 'ClientCertFile': 'client.crt' is not an absolute path");
}

TEST(VipuConfig, AccessKeyIsNeverEchoed) {
  std::string key(5000, 'z');
  std::string message = errorOf(std::string(kSeedExample) + "ApiAccessKey=" + key + "\n");
  EXPECT_EQ(message.find("zzz"), std::string::npos) << message;
  EXPECT_EQ(message,
            "vipu.conf:7: key 'ApiAccessKey': value is 5000 bytes long; the limit is 4096");
}

TEST(VipuConfig, AgentKeysAreUnknownHere) {
  EXPECT_EQ(errorOf(std::string(kSeedExample) + "LogLevel=debug\n"),
            "vipu.conf:7: key 'LogLevel': unknown key");
}

}  // namespace
}  // namespace accel
