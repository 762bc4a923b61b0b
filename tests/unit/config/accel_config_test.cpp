// accel.conf through its real key table: defaults, every key, and the exact
// shape of each class of error.
#include <gtest/gtest.h>

#include <string>

#include "accel/common/config.h"

namespace accel {
namespace {

using std::chrono::seconds;

std::string errorOf(std::string_view text) {
  Result<AccelConfig> config = parseAccelConfig(text);
  EXPECT_FALSE(config.ok()) << text;
  return config.ok() ? std::string() : config.error().message();
}

TEST(AccelConfig, EmptyFileGivesTheDefaults) {
  Result<AccelConfig> config = parseAccelConfig("");
  ASSERT_TRUE(config.ok()) << config.error().message();
  EXPECT_EQ(config->control_socket, "/run/accel-agent/control.sock");
  EXPECT_EQ(config->state_dir, "/var/lib/accel-agent");
  EXPECT_EQ(config->run_dir, "/run/accel-agent");
  EXPECT_EQ(config->slurm_user, "slurm");
  EXPECT_EQ(config->log_level, AccelConfig::LogLevel::kInfo);
  EXPECT_FALSE(config->topology_file.has_value());
  EXPECT_EQ(config->hook_timeout, seconds(20));
  EXPECT_FALSE(config->hw_mock_dir.has_value());
  EXPECT_FALSE(config->appliance_time_default.has_value());
  EXPECT_TRUE(config->appliance_time_max.isUnlimited());
}

TEST(AccelConfig, ControlSocketLimitsAndTheAdminSocketPath) {
  auto c = parseAccelConfig("");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->control_user_connections, 8u);
  EXPECT_EQ(c->control_user_requests, 4u);
  EXPECT_EQ(c->control_user_rate, 50u);
  EXPECT_EQ(c->control_user_idle_ms, 250u);
  EXPECT_EQ(adminSocketPath(*c), "/run/accel-agent/control-admin.sock");
  c = parseAccelConfig("ControlSocket=/tmp/t/agent\n");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(adminSocketPath(*c), "/tmp/t/agent-admin");
  c = parseAccelConfig("ControlSocket=/tmp/t/agent.sock\nAdminSocket=/tmp/t/root.sock\n");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(adminSocketPath(*c), "/tmp/t/root.sock");
  EXPECT_NE(errorOf("ControlUserConnections=0\n").find("ControlUserConnections"),
            std::string::npos);
  EXPECT_NE(errorOf("ControlUserIdleMs=5000\n").find("ControlUserIdleMs"), std::string::npos);
}

TEST(AccelConfig, ApplianceTimesUseSlurmNotation) {
  Result<AccelConfig> config =
      parseAccelConfig("ApplianceTimeDefault=30\nApplianceTimeMax=1-00:00:00\n");
  ASSERT_TRUE(config.ok()) << config.error().message();
  ASSERT_TRUE(config->appliance_time_default.has_value());
  EXPECT_EQ(config->appliance_time_default->seconds(), 30 * 60);  // a bare number is minutes
  EXPECT_EQ(config->appliance_time_max.seconds(), 86400);
  EXPECT_NE(errorOf("ApplianceTimeMax=soon\n").find("accel.conf:1: key 'ApplianceTimeMax'"),
            std::string::npos);
}

TEST(AccelConfig, EveryKeySet) {
  Result<AccelConfig> config = parseAccelConfig(
      "# accel.conf for a test node\n"
      "ControlSocket=/tmp/t/control.sock\n"
      "StateDir=/tmp/t/state\n"
      "RunDir=/tmp/t/run\n"
      "SlurmUser=slurmadm\n"
      "LogLevel=debug\n"
      "TopologyFile=/etc/accel/topo.xml   # captured on a POD64 head node\n"
      "HookTimeout=45\n"
      "HwMockDir=\"/opt/hw mock\"\n");
  ASSERT_TRUE(config.ok()) << config.error().message();
  EXPECT_EQ(config->control_socket, "/tmp/t/control.sock");
  EXPECT_EQ(config->state_dir, "/tmp/t/state");
  EXPECT_EQ(config->run_dir, "/tmp/t/run");
  EXPECT_EQ(config->slurm_user, "slurmadm");
  EXPECT_EQ(config->log_level, AccelConfig::LogLevel::kDebug);
  EXPECT_EQ(config->topology_file, "/etc/accel/topo.xml");
  EXPECT_EQ(config->hook_timeout, seconds(45));
  EXPECT_EQ(config->hw_mock_dir, "/opt/hw mock");
}

TEST(AccelConfig, KeysIgnoreCaseAndShareLines) {
  Result<AccelConfig> config =
      parseAccelConfig("loglevel=WARNING HOOKTIMEOUT = 1\nslurmuser=root\n");
  ASSERT_TRUE(config.ok()) << config.error().message();
  EXPECT_EQ(config->log_level, AccelConfig::LogLevel::kWarning);
  EXPECT_EQ(config->hook_timeout, seconds(1));
  EXPECT_EQ(config->slurm_user, "root");
}

TEST(AccelConfig, LogLevelNames) {
  EXPECT_EQ(logLevelName(AccelConfig::LogLevel::kError), "error");
  EXPECT_EQ(logLevelName(AccelConfig::LogLevel::kWarning), "warning");
  EXPECT_EQ(logLevelName(AccelConfig::LogLevel::kInfo), "info");
  EXPECT_EQ(logLevelName(AccelConfig::LogLevel::kDebug), "debug");
}

TEST(AccelConfig, BadValuesNameFileLineAndKey) {
  EXPECT_EQ(errorOf("\nHookTimeout=abc\n"),
            "accel.conf:2: key 'HookTimeout': 'abc' is not a whole number of seconds");
  EXPECT_EQ(errorOf("HookTimeout=0"),
            "accel.conf:1: key 'HookTimeout': '0' is below the minimum 1");
  EXPECT_EQ(errorOf("HookTimeout=301"),
            "accel.conf:1: key 'HookTimeout': '301' is above the maximum 300");
  EXPECT_EQ(errorOf("StateDir=var/lib/x"),
            "accel.conf:1: key 'StateDir': 'var/lib/x' is not an absolute path");
  EXPECT_EQ(errorOf("LogLevel=verbose"),
            "accel.conf:1: key 'LogLevel': 'verbose' is not one of error, warning, info, debug");
}

TEST(AccelConfig, UnknownKeyWithSuggestion) {
  EXPECT_EQ(errorOf("LogLevel=info\n\nHookTimout=5\n"),
            "accel.conf:3: key 'HookTimout': unknown key (did you mean 'HookTimeout'?)");
  EXPECT_EQ(errorOf("ControlSock=/x"),
            "accel.conf:1: key 'ControlSock': unknown key (did you mean 'ControlSocket'?)");
  // A vipu.conf key in accel.conf is unknown here.
  EXPECT_EQ(errorOf("ApiHost=ctrl"), "accel.conf:1: key 'ApiHost': unknown key");
}

TEST(AccelConfig, DuplicateNamesBothLines) {
  EXPECT_EQ(errorOf("LogLevel=info\nRunDir=/r\nloglevel=debug\n"),
            "accel.conf:3: key 'loglevel': set more than once (first at line 1)");
}

TEST(AccelConfig, FileNameInMessagesIsTheCallers) {
  Result<AccelConfig> config = parseAccelConfig("Bogus=1", "/etc/slurm/accel.conf");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().message(), "/etc/slurm/accel.conf:1: key 'Bogus': unknown key");
}

TEST(AccelConfig, AllErrorsAtOnceNothingPartial) {
  Result<AccelConfig> config = parseAccelConfig(
      "LogLevel=loud\n"
      "RunDir=/ok\n"
      "this line is wrong\n"
      "HookTimeout=0\n");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(config.error().message(),
            "accel.conf:1: key 'LogLevel': 'loud' is not one of error, warning, info, debug\n"
            "accel.conf:3: expected Key=Value, found 'this line is wrong'\n"
            "accel.conf:4: key 'HookTimeout': '0' is below the minimum 1");
}

TEST(AccelConfig, GarbageInput) {
  std::string nul_line = "RunDir=/r";
  nul_line += '\0';
  nul_line += "/x\n";
  EXPECT_EQ(errorOf(nul_line),
            "accel.conf:1: control byte \\x00 at column 10; is this a text file?");

  std::string binary =
      "\x7f"
      "ELF\x02\x01\x01";
  EXPECT_EQ(errorOf(binary), "accel.conf:1: control byte \\x7f at column 1; is this a text file?");

  std::string high_bytes = "\xff\xfe=1\n";
  EXPECT_EQ(errorOf(high_bytes), "accel.conf:1: key '\\xff\\xfe': unknown key");

  std::string long_line = "SlurmUser=" + std::string(1 << 20, 'u') + "\n";
  EXPECT_EQ(errorOf(long_line),
            "accel.conf:1: key 'SlurmUser': value is 1048576 bytes long; the limit is 4096");

  EXPECT_EQ(errorOf("ControlSocket=/run/acc"
                    "el\nStateD"),
            "accel.conf:2: expected Key=Value, found 'StateD'");
}

}  // namespace
}  // namespace accel
