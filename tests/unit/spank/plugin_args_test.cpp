#include "accel/spank/plugin_args.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace accel::spank {
namespace {

Result<PluginArgs> parse(std::vector<std::string_view> args) { return parsePluginArgs(args); }

TEST(PluginArgs, NoneGivesDefaults) {
  auto a = parse({});
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a->accel_conf);
  EXPECT_FALSE(a->vipu_conf);
  EXPECT_FALSE(a->socket);
  EXPECT_EQ(a->timeout, std::chrono::seconds(5));
}

TEST(PluginArgs, EveryKey) {
  auto a = parse({"accel_conf=/etc/accel/accel.conf", "vipu_conf=/etc/accel/vipu.conf",
                  "socket=/run/a.sock", "timeout=30"});
  ASSERT_TRUE(a.ok()) << a.error().message();
  EXPECT_EQ(a->accel_conf, "/etc/accel/accel.conf");
  EXPECT_EQ(a->vipu_conf, "/etc/accel/vipu.conf");
  EXPECT_EQ(a->socket, "/run/a.sock");
  EXPECT_EQ(a->timeout, std::chrono::seconds(30));
  // '=' inside a value belongs to the value.
  a = parse({"socket=/run/a=b.sock"});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->socket, "/run/a=b.sock");
}

TEST(PluginArgs, RefusedTable) {
  const std::pair<std::vector<std::string_view>, std::string> cases[] = {
      {{"sockt=/run/a.sock"},
       "plugstack.conf argument 'sockt=/run/a.sock': unknown key 'sockt'; keys: accel_conf=PATH, "
       "vipu_conf=PATH, socket=PATH, timeout=SECONDS"},
      {{"Socket=/run/a.sock"}, "unknown key 'Socket'"},
      {{"socket"}, "plugstack.conf argument 'socket': expected KEY=VALUE"},
      {{"=x"}, "expected KEY=VALUE"},
      {{""}, "expected KEY=VALUE"},
      {{"socket="}, "empty value"},
      {{"socket=run/a.sock"}, "needs an absolute path"},
      {{"accel_conf=accel.conf"}, "needs an absolute path"},
      {{"vipu_conf=./vipu.conf"}, "needs an absolute path"},
      {{"timeout=0"}, "needs whole seconds from 1 to 300"},
      {{"timeout=301"}, "needs whole seconds from 1 to 300"},
      {{"timeout=5s"}, "needs whole seconds from 1 to 300"},
      {{"timeout=-1"}, "needs whole seconds from 1 to 300"},
      {{"timeout=99999999999999999999999"}, "needs whole seconds from 1 to 300"},
      {{"timeout=5", "timeout=6"}, "key 'timeout' given twice"},
      {{"socket=/a", "socket=/a"}, "key 'socket' given twice"},
      {{"socket=/a", "bogus"}, "argument 'bogus'"},
      {{"\x01\xff=1"}, "unknown key '\\x01\\xff'"},
  };
  for (const auto& [args, why] : cases) {
    auto a = parse(args);
    ASSERT_FALSE(a.ok()) << why;
    EXPECT_EQ(a.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(a.error().message().find(why), std::string::npos) << a.error().message();
  }
}

TEST(PluginArgs, UsageNamesEveryKey) {
  for (const char* key : {"accel_conf=", "vipu_conf=", "socket=", "timeout="})
    EXPECT_NE(pluginArgsUsage().find(key), std::string_view::npos) << key;
}

}  // namespace
}  // namespace accel::spank
