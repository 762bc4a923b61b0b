// The key tables themselves, and the reference generated from them: the
// committed docs/config-reference.md must equal the generator's output.
#include "accel/common/config_doc.h"

#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>

#include "accel/common/config.h"
#include "accel/common/config_keys.h"
#include "accel/common/vipu_config.h"

namespace accel {
namespace {

std::string lowered(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

TEST(ConfigDoc, CommittedReferenceMatchesTheTables) {
  std::string path = std::string(ACCEL_SOURCE_DIR) + "/docs/config-reference.md";
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "cannot read " << path;
  std::stringstream committed;
  committed << in.rdbuf();
  EXPECT_TRUE(committed.str() == renderConfigReference())
      << path << " is out of date; regenerate it: accel-config-doc " << path;
}

TEST(ConfigDoc, EveryKeyIsDocumented) {
  std::string doc = renderConfigReference();
  for (const ConfigSchema* schema : allConfigSchemas()) {
    EXPECT_NE(doc.find("## " + std::string(schema->file_name) + "\n"), std::string::npos);
    for (const KeySpec& spec : schema->keys) {
      EXPECT_NE(doc.find("### " + std::string(spec.name) + "\n"), std::string::npos) << spec.name;
    }
  }
}

TEST(ConfigDoc, RenderingIsDeterministic) {
  EXPECT_EQ(renderConfigReference(), renderConfigReference());
}

TEST(ConfigKeyTables, RowsAreWellFormed) {
  for (const ConfigSchema* schema : allConfigSchemas()) {
    std::set<std::string> seen;
    for (const KeySpec& spec : schema->keys) {
      SCOPED_TRACE(std::string(schema->file_name) + " " + std::string(spec.name));
      EXPECT_TRUE(seen.insert(lowered(spec.name)).second) << "duplicate key name";
      EXPECT_FALSE(spec.help.empty());
      EXPECT_NE(spec.store, nullptr);
      EXPECT_EQ(spec.type == ValueType::kEnum, !spec.choices.empty());
      EXPECT_LE(spec.min, spec.max);
      EXPECT_FALSE(spec.required && !spec.default_value.empty()) << "required with a default";
      if (!spec.default_value.empty()) {
        Result<ConfigValue> value = decodeValue(spec, spec.default_value);
        EXPECT_TRUE(value.ok()) << value.error().message();
      }
      if (!spec.required_if.empty()) {
        const KeySpec* condition = schema->find(spec.required_if);
        ASSERT_NE(condition, nullptr);
        EXPECT_EQ(condition->type, ValueType::kBool);
      }
    }
  }
}

// A value every key accepts, for building complete files.
std::string sampleValue(const KeySpec& spec) {
  switch (spec.type) {
    case ValueType::kPath:
      return "/sample";
    case ValueType::kBool:
      return "no";
    case ValueType::kEnum:
      return std::string(spec.choices.front());
    case ValueType::kSlurmTime:
      return "UNLIMITED";
    case ValueType::kUint:
    case ValueType::kSeconds:
    case ValueType::kSize:
      return std::to_string(spec.min);
    case ValueType::kString:
      break;
  }
  return "sample";
}

// Binds every key to a field that can hold its whole range: a file setting
// every key, and setting each ranged key to its maximum, must load (a table
// row bound to a too-narrow field would abort here).
void checkEveryKeyLoads(const ConfigSchema& schema,
                        const std::function<Status(const std::string&)>& parse) {
  std::string all;
  for (const KeySpec& spec : schema.keys)
    all += std::string(spec.name) + "=" + sampleValue(spec) + "\n";
  Status status = parse(all);
  EXPECT_TRUE(status.ok()) << status.error().message();
  for (const KeySpec& spec : schema.keys) {
    if (spec.max == kNoMaximum) continue;
    std::string text;
    for (const KeySpec& other : schema.keys) {
      std::string value = &other == &spec ? std::to_string(spec.max) : sampleValue(other);
      text += std::string(other.name) + "=" + value + "\n";
    }
    Status at_max = parse(text);
    EXPECT_TRUE(at_max.ok()) << spec.name << ": " << at_max.error().message();
  }
}

TEST(ConfigKeyTables, EveryKeyLoadsIncludingItsMaximum) {
  checkEveryKeyLoads(accelConfigSchema(), [](const std::string& text) -> Status {
    Result<AccelConfig> config = parseAccelConfig(text);
    return config.ok() ? okStatus() : Status(config.error());
  });
  checkEveryKeyLoads(vipuConfigSchema(), [](const std::string& text) -> Status {
    Result<VipuConfig> config = parseVipuConfig(text);
    return config.ok() ? okStatus() : Status(config.error());
  });
}

TEST(ConfigKeyTables, AccelConfKeys) {
  std::vector<std::string> names;
  for (const KeySpec& spec : accelConfigSchema().keys) names.emplace_back(spec.name);
  EXPECT_EQ(names, (std::vector<std::string>{"ControlSocket",
                                             "AdminSocket",
                                             "ControlUserConnections",
                                             "ControlUserRequests",
                                             "ControlUserRate",
                                             "ControlUserIdleMs",
                                             "StateDir",
                                             "RunDir",
                                             "JobDirSize",
                                             "JobDirInodes",
                                             "ReserveSpace",
                                             "SlurmUser",
                                             "LogLevel",
                                             "TopologyFile",
                                             "HookTimeout",
                                             "VendorEnvironment",
                                             "HwMockDir",
                                             "ApplianceTimeDefault",
                                             "ApplianceTimeMax",
                                             "VipuCommand",
                                             "ApplianceCommand",
                                             "AppliancePollInterval",
                                             "ApplianceTimeout",
                                             "Fabric",
                                             "FabricInterfaces",
                                             "FabricManagementInterface",
                                             "FabricMtu",
                                             "FabricAddressRange",
                                             "FabricAddressPrefix",
                                             "FabricNetns",
                                             "FabricRoutes",
                                             "AggregatorAddress",
                                             "AggregatorQueryAddress",
                                             "AggregatorPublicKeyFile",
                                             "NodeKeyFile",
                                             "AggregatorReconnectMinMs",
                                             "AggregatorReconnectMaxMs",
                                             "AggregatorPingInterval",
                                             "AggregatorPingTimeout",
                                             "AggregatorTcpKeepAlive",
                                             "EventSpoolDir",
                                             "EventSpoolMaxSize",
                                             "HeartbeatInterval",
                                             "MetricsAddress",
                                             "TelemetryInterval",
                                             "NvmlLibrary",
                                             "IdleAfter",
                                             "IdleAction",
                                             "KernelLog",
                                             "ApplianceKillGrace",
                                             "SurrogateSteps",
                                             "ApplianceTimeOnRequeue"}));
}

TEST(ConfigKeyTables, VipuConfKeysAsInTheVipuDocumentation) {
  std::vector<std::string> names;
  for (const KeySpec& spec : vipuConfigSchema().keys) names.emplace_back(spec.name);
  EXPECT_EQ(names, (std::vector<std::string>{"ApiHost", "ApiPort", "IpuofDir", "MaxIpusPerJob",
                                             "ApiTimeout", "IsSecure", "ApiUser", "ApiAccessKey",
                                             "ClientCertFile", "ClientKeyFile", "ServerCertFile"}));
}

}  // namespace
}  // namespace accel
