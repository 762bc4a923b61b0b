// The schema engine on a table of its own that uses every value type, so each
// type's literal forms and each error class are tested independently of the
// real keys (which other tests cover).
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>

#include "accel/common/config_schema.h"

namespace accel {
namespace {

struct AllTypes {
  enum class Color { kRed, kGreen, kBlue };
  std::string name;
  std::optional<std::string> dir;
  bool flag = false;
  std::uint32_t count = 0;
  std::chrono::seconds wait{0};
  SlurmDuration limit;
  Color color = Color::kRed;
  std::uint64_t size = 0;
  std::optional<std::uint16_t> port;
  std::optional<std::string> token;
  std::optional<std::string> needs_flag;
};

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
const ConfigSchema& testSchema() {
  using C = AllTypes;
  static const ConfigSchema schema{
      .file_name = "test.conf",
      .summary = "A table for tests.",
      .config_type = &typeid(C),
      .keys = {
          {.name = "Name",
           .type = ValueType::kString,
           .required = true,
           .help = "h",
           .store = storeIn<&C::name>},
          {.name = "Dir", .type = ValueType::kPath, .help = "h", .store = storeIn<&C::dir>},
          {.name = "Flag",
           .type = ValueType::kBool,
           .default_value = "no",
           .help = "h",
           .store = storeIn<&C::flag>},
          {.name = "Count",
           .type = ValueType::kUint,
           .default_value = "5",
           .min = 1,
           .max = 10,
           .help = "h",
           .store = storeIn<&C::count>},
          {.name = "Wait",
           .type = ValueType::kSeconds,
           .default_value = "20",
           .min = 1,
           .max = 300,
           .help = "h",
           .store = storeIn<&C::wait>},
          {.name = "Limit",
           .type = ValueType::kSlurmTime,
           .default_value = "UNLIMITED",
           .min = 60,
           .max = 86400,
           .help = "h",
           .store = storeIn<&C::limit>},
          {.name = "Color",
           .type = ValueType::kEnum,
           .default_value = "red",
           .choices = {"red", "green", "blue"},
           .help = "h",
           .store = storeIn<&C::color>},
          {.name = "Size",
           .type = ValueType::kSize,
           .default_value = "1M",
           .min = 1024,
           .help = "h",
           .store = storeIn<&C::size>},
          {.name = "Port",
           .type = ValueType::kUint,
           .min = 1,
           .max = 65535,
           .help = "h",
           .store = storeIn<&C::port>},
          {.name = "Token",
           .type = ValueType::kString,
           .secret = true,
           .help = "h",
           .store = storeIn<&C::token>},
          {.name = "NeedsFlag",
           .type = ValueType::kString,
           .required_if = "Flag",
           .help = "h",
           .store = storeIn<&C::needs_flag>},
      }};
  return schema;
}
#pragma GCC diagnostic pop

Result<AllTypes> parse(std::string_view text) {
  return parseWithSchema<AllTypes>(testSchema(), text, "test.conf");
}

AllTypes parseOk(const std::string& text) {
  Result<AllTypes> config = parse("Name=n\n" + text);
  EXPECT_TRUE(config.ok()) << config.error().message();
  return config.ok() ? *config : AllTypes{};
}

// The message for one bad line; the file's line 2 holds `line`.
std::string errorFor(const std::string& line) {
  Result<AllTypes> config = parse("Name=n\n" + line + "\n");
  EXPECT_FALSE(config.ok()) << line;
  return config.ok() ? std::string() : config.error().message();
}

TEST(ConfigValues, DefaultsApplyWhenKeysAreAbsent) {
  AllTypes c = parseOk("");
  EXPECT_EQ(c.name, "n");
  EXPECT_FALSE(c.dir.has_value());
  EXPECT_FALSE(c.flag);
  EXPECT_EQ(c.count, 5u);
  EXPECT_EQ(c.wait, std::chrono::seconds(20));
  EXPECT_TRUE(c.limit.isUnlimited());
  EXPECT_EQ(c.color, AllTypes::Color::kRed);
  EXPECT_EQ(c.size, 1u << 20);
  EXPECT_FALSE(c.port.has_value());
  EXPECT_FALSE(c.token.has_value());
}

TEST(ConfigValues, StringKeepsQuotedBlanks) {
  EXPECT_EQ(parseOk("Token=\"a b  c\"").token, "a b  c");
}

TEST(ConfigValues, Path) {
  EXPECT_EQ(parseOk("Dir=/var/lib/x").dir, "/var/lib/x");
  EXPECT_EQ(parseOk("Dir=\"/with space/x\"").dir, "/with space/x");
  EXPECT_EQ(errorFor("Dir=relative/x"),
            "test.conf:2: key 'Dir': 'relative/x' is not an absolute path");
  EXPECT_EQ(errorFor("Dir=/" + std::string(5000, 'p')),
            "test.conf:2: key 'Dir': value is 5001 bytes long; the limit is 4096");
  EXPECT_EQ(parseOk("Dir=/" + std::string(4094, 'p')).dir->size(), 4095u);
  EXPECT_EQ(errorFor("Dir=/" + std::string(4095, 'p')),
            "test.conf:2: key 'Dir': path is 4096 bytes long; the limit is 4095");
}

TEST(ConfigValues, Bool) {
  for (std::string word : {"yes", "YES", "true", "True", "1"}) {
    EXPECT_TRUE(parseOk("Flag=" + word + " NeedsFlag=x").flag) << word;
  }
  for (std::string word : {"no", "No", "false", "FALSE", "0"}) {
    EXPECT_FALSE(parseOk("Flag=" + word).flag) << word;
  }
  EXPECT_EQ(errorFor("Flag=maybe"),
            "test.conf:2: key 'Flag': 'maybe' is not a boolean (use yes, no, true, false, 1 or 0)");
  EXPECT_EQ(errorFor("Flag=on"),
            "test.conf:2: key 'Flag': 'on' is not a boolean (use yes, no, true, false, 1 or 0)");
}

TEST(ConfigValues, UnsignedWithRange) {
  EXPECT_EQ(parseOk("Count=1").count, 1u);
  EXPECT_EQ(parseOk("Count=010").count, 10u);
  EXPECT_EQ(errorFor("Count=abc"), "test.conf:2: key 'Count': 'abc' is not a whole number");
  EXPECT_EQ(errorFor("Count=-1"), "test.conf:2: key 'Count': '-1' is not a whole number");
  EXPECT_EQ(errorFor("Count=+3"), "test.conf:2: key 'Count': '+3' is not a whole number");
  EXPECT_EQ(errorFor("Count=3.5"), "test.conf:2: key 'Count': '3.5' is not a whole number");
  EXPECT_EQ(errorFor("Count=0"), "test.conf:2: key 'Count': '0' is below the minimum 1");
  EXPECT_EQ(errorFor("Count=11"), "test.conf:2: key 'Count': '11' is above the maximum 10");
  EXPECT_EQ(errorFor("Count=18446744073709551616"),
            "test.conf:2: key 'Count': '18446744073709551616' is too large");
  EXPECT_EQ(errorFor("Count=18446744073709551615"),
            "test.conf:2: key 'Count': '18446744073709551615' is above the maximum 10");
}

TEST(ConfigValues, OptionalNarrowUnsigned) {
  EXPECT_EQ(parseOk("Port=65535").port, 65535);
  EXPECT_EQ(errorFor("Port=65536"), "test.conf:2: key 'Port': '65536' is above the maximum 65535");
}

TEST(ConfigValues, Seconds) {
  EXPECT_EQ(parseOk("Wait=300").wait, std::chrono::seconds(300));
  EXPECT_EQ(errorFor("Wait=5s"), "test.conf:2: key 'Wait': '5s' is not a whole number of seconds");
  EXPECT_EQ(errorFor("Wait=1:00"),
            "test.conf:2: key 'Wait': '1:00' is not a whole number of seconds");
  EXPECT_EQ(errorFor("Wait=0"), "test.conf:2: key 'Wait': '0' is below the minimum 1");
  EXPECT_EQ(errorFor("Wait=301"), "test.conf:2: key 'Wait': '301' is above the maximum 300");
  EXPECT_EQ(errorFor("Wait=99999999999"),
            "test.conf:2: key 'Wait': '99999999999' is too large; the largest is 2147483647");
}

TEST(ConfigValues, SlurmTime) {
  EXPECT_EQ(parseOk("Limit=90").limit, SlurmDuration::fromSeconds(5400));
  EXPECT_EQ(parseOk("Limit=1-00:00:00").limit, SlurmDuration::fromSeconds(86400));
  EXPECT_TRUE(parseOk("Limit=infinite").limit.isUnlimited());
  EXPECT_EQ(errorFor("Limit=0:30"),
            "test.conf:2: key 'Limit': '0:30' is below the minimum 00:01:00");
  EXPECT_EQ(errorFor("Limit=1-00:00:01"),
            "test.conf:2: key 'Limit': '1-00:00:01' is above the maximum 1-00:00:00");
  EXPECT_EQ(errorFor("Limit=1:2:3:4"),
            "test.conf:2: key 'Limit': '1:2:3:4' is not a Slurm time (too many fields); use MM, "
            "MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED");
}

TEST(ConfigValues, Enum) {
  EXPECT_EQ(parseOk("Color=blue").color, AllTypes::Color::kBlue);
  EXPECT_EQ(parseOk("Color=GREEN").color, AllTypes::Color::kGreen);
  EXPECT_EQ(errorFor("Color=purple"),
            "test.conf:2: key 'Color': 'purple' is not one of red, green, blue");
}

TEST(ConfigValues, Size) {
  EXPECT_EQ(parseOk("Size=2048").size, 2048u);
  EXPECT_EQ(parseOk("Size=4K").size, 4096u);
  EXPECT_EQ(parseOk("Size=4k").size, 4096u);
  EXPECT_EQ(parseOk("Size=3M").size, 3u << 20);
  EXPECT_EQ(parseOk("Size=2G").size, 2ull << 30);
  EXPECT_EQ(parseOk("Size=5T").size, 5ull << 40);
  EXPECT_EQ(parseOk("Size=1K").size, 1024u);  // the minimum itself
  EXPECT_EQ(errorFor("Size=1000"), "test.conf:2: key 'Size': '1000' is below the minimum 1024");
  EXPECT_EQ(errorFor("Size=12Q"),
            "test.conf:2: key 'Size': '12Q' is not a size (a whole number of bytes, optionally "
            "followed by K, M, G or T)");
  EXPECT_EQ(errorFor("Size=K"),
            "test.conf:2: key 'Size': 'K' is not a size (a whole number of bytes, optionally "
            "followed by K, M, G or T)");
  EXPECT_EQ(errorFor("Size=16777216T"), "test.conf:2: key 'Size': '16777216T' is too large");
}

TEST(ConfigValues, EmptyValueIsAnErrorForEveryType) {
  for (std::string key : {"Dir", "Flag", "Count", "Wait", "Limit", "Color", "Size", "Token"}) {
    EXPECT_EQ(errorFor(key + "=\"\""),
              "test.conf:2: key '" + key + "': empty value (to leave the key unset, leave it out)");
  }
}

TEST(ConfigValues, SecretValuesAreNotEchoed) {
  std::string secret = "s3cr3t-" + std::string(5000, 'k');
  std::string message = errorFor("Token=" + secret);
  EXPECT_EQ(message.find("s3cr3t"), std::string::npos) << message;
  EXPECT_EQ(message, "test.conf:2: key 'Token': value is 5007 bytes long; the limit is 4096");
}

TEST(ConfigValues, RequiredAndRequiredIf) {
  Result<AllTypes> missing = parse("Count=3\n");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message(), "test.conf: key 'Name': required but not set");

  EXPECT_EQ(errorFor("Flag=yes"),
            "test.conf: key 'NeedsFlag': required when Flag is enabled (it is set at line 2)");
  EXPECT_EQ(parseOk("Flag=yes\nNeedsFlag=ok").needs_flag, "ok");
  EXPECT_EQ(parseOk("NeedsFlag=set-anyway").needs_flag, "set-anyway");
}

TEST(ConfigValues, UnknownKeySuggestsTheClosestName) {
  EXPECT_EQ(errorFor("Cuont=3"), "test.conf:2: key 'Cuont': unknown key (did you mean 'Count'?)");
  EXPECT_EQ(errorFor("colour=red"),
            "test.conf:2: key 'colour': unknown key (did you mean 'Color'?)");
  EXPECT_EQ(errorFor("Zebra=1"), "test.conf:2: key 'Zebra': unknown key");
  EXPECT_EQ(errorFor(std::string(100, 'C') + "=1"),
            "test.conf:2: key '" + std::string(60, 'C') + "...': unknown key");
}

TEST(ConfigValues, DuplicateNamesBothLines) {
  EXPECT_EQ(errorFor("Count=3\n\ncount=4"),
            "test.conf:4: key 'count': set more than once (first at line 2)");
  // Also when the earlier one had a bad value: the key was still set twice.
  EXPECT_EQ(errorFor("Count=x\nCount=4"),
            "test.conf:2: key 'Count': 'x' is not a whole number\n"
            "test.conf:3: key 'Count': set more than once (first at line 2)");
}

TEST(ConfigValues, AllErrorsTogetherInLineOrder) {
  Result<AllTypes> config = parse(
      "# broken on purpose\n"
      "Count=99 Flag=perhaps\n"
      "garbage\n"
      "Colr=red\n"
      "Name=a\n"
      "Name=b\n");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(config.error().message(),
            "test.conf:2: key 'Count': '99' is above the maximum 10\n"
            "test.conf:2: key 'Flag': 'perhaps' is not a boolean (use yes, no, true, false, 1 "
            "or 0)\n"
            "test.conf:3: expected Key=Value, found 'garbage'\n"
            "test.conf:4: key 'Colr': unknown key (did you mean 'Color'?)\n"
            "test.conf:6: key 'Name': set more than once (first at line 5)");
}

TEST(ConfigValues, DecodeValueDirectly) {
  const KeySpec* count = testSchema().find("COUNT");
  ASSERT_NE(count, nullptr);
  Result<ConfigValue> value = decodeValue(*count, "7");
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(std::get<std::uint64_t>(*value), 7u);
  EXPECT_EQ(testSchema().find("nosuchkey"), nullptr);
}

}  // namespace
}  // namespace accel
