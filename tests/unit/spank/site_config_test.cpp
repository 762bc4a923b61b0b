#include "accel/spank/site_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace accel::spank {
namespace {

namespace fs = std::filesystem;

class SiteConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("spank-site-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name) << text;
  }
  std::string slurmConf() const { return path("slurm.conf"); }

  fs::path dir_;
};

TEST_F(SiteConfig, BesideSlurmConfByDefault) {
  auto p = locateConfig(PluginArgs{}, slurmConf().c_str());
  ASSERT_TRUE(p.ok()) << p.error().message();
  EXPECT_EQ(p->accel_conf, path("accel.conf"));
  EXPECT_EQ(p->vipu_conf, path("vipu.conf"));
  EXPECT_FALSE(p->accel_conf_given);
  p = locateConfig(PluginArgs{}, nullptr);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->accel_conf, "/etc/slurm/accel.conf");
  EXPECT_EQ(p->vipu_conf, "/etc/slurm/vipu.conf");
}

TEST_F(SiteConfig, ArgumentsWin) {
  PluginArgs a;
  a.accel_conf = "/opt/accel/accel.conf";
  auto p = locateConfig(a, slurmConf().c_str());
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->accel_conf, "/opt/accel/accel.conf");
  EXPECT_EQ(p->vipu_conf, "/opt/accel/vipu.conf");  // beside the accel.conf in use
  EXPECT_TRUE(p->accel_conf_given);
  a.vipu_conf = "/opt/vipu/vipu.conf";
  p = locateConfig(a, slurmConf().c_str());
  EXPECT_EQ(p->vipu_conf, "/opt/vipu/vipu.conf");
}

TEST_F(SiteConfig, RelativeSlurmConfIsRefused) {
  auto p = locateConfig(PluginArgs{}, "etc/slurm.conf");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message().find("SLURM_CONF"), std::string::npos);
}

TEST_F(SiteConfig, MissingFilesGiveDefaultsAndNoIpus) {
  auto p = locateConfig(PluginArgs{}, slurmConf().c_str());
  auto l = readSiteLimits(*p, true);
  ASSERT_TRUE(l.ok()) << l.error().message();
  EXPECT_TRUE(l->appliance_time_max.isUnlimited());
  EXPECT_FALSE(l->appliance_time_default);
  EXPECT_FALSE(l->max_ipus);
  EXPECT_FALSE(l->vipu_problem);
  EXPECT_EQ(l->vipu_conf_path, path("vipu.conf"));
  EXPECT_EQ(l->accel_conf_path, path("accel.conf"));
}

TEST_F(SiteConfig, LimitsFromBothFiles) {
  write("accel.conf", "ApplianceTimeMax=2:00:00\nApplianceTimeDefault=30\n");
  write("vipu.conf", "ApiHost=vipu.example\nIpuofDir=/var/ipuof\nMaxIpusPerJob=64\n");
  auto p = locateConfig(PluginArgs{}, slurmConf().c_str());
  auto l = readSiteLimits(*p, true);
  ASSERT_TRUE(l.ok()) << l.error().message();
  EXPECT_EQ(l->appliance_time_max.seconds(), 7200);
  ASSERT_TRUE(l->appliance_time_default);
  EXPECT_EQ(l->appliance_time_default->seconds(), 1800);
  EXPECT_EQ(l->max_ipus, 64u);
}

TEST_F(SiteConfig, VipuDefaultMaxIs256) {
  write("vipu.conf", "ApiHost=vipu.example\nIpuofDir=/var/ipuof\n");
  auto l = readSiteLimits(*locateConfig(PluginArgs{}, slurmConf().c_str()), true);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->max_ipus, 256u);
}

TEST_F(SiteConfig, BrokenVipuConfMattersOnlyForIpus) {
  write("vipu.conf", "ApiHost=vipu.example\nMaxIpusPerJob=lots\nBogus=1\n");
  auto p = *locateConfig(PluginArgs{}, slurmConf().c_str());
  auto without = readSiteLimits(p, false);
  ASSERT_TRUE(without.ok());
  EXPECT_FALSE(without->vipu_problem);
  auto with = readSiteLimits(p, true);
  ASSERT_TRUE(with.ok());
  ASSERT_TRUE(with->vipu_problem);
  EXPECT_FALSE(with->max_ipus);
  EXPECT_EQ(with->vipu_problem->find('\n'), std::string::npos) << *with->vipu_problem;
  EXPECT_NE(with->vipu_problem->find(path("vipu.conf")), std::string::npos) << *with->vipu_problem;
}

TEST_F(SiteConfig, BrokenAccelConfIsAnError) {
  write("accel.conf", "ApplianceTimeMax=soon\n");
  auto l = readSiteLimits(*locateConfig(PluginArgs{}, slurmConf().c_str()), false);
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.error().message().find("ApplianceTimeMax"), std::string::npos);
}

TEST_F(SiteConfig, NamedAccelConfMustExist) {
  PluginArgs a;
  a.accel_conf = path("missing.conf");
  auto p = locateConfig(a, slurmConf().c_str());
  auto l = readSiteLimits(*p, false);
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.error().code(), ErrorCode::kNotFound);
  auto s = controlSocketPath(a, *p);
  ASSERT_FALSE(s.ok());
}

TEST_F(SiteConfig, ControlSocket) {
  auto p = *locateConfig(PluginArgs{}, slurmConf().c_str());
  auto s = controlSocketPath(PluginArgs{}, p);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, "/run/accel-agent/control.sock");  // accel.conf's default
  write("accel.conf", "ControlSocket=/tmp/x/control.sock\n");
  EXPECT_EQ(*controlSocketPath(PluginArgs{}, p), "/tmp/x/control.sock");
  PluginArgs a;
  a.socket = "/run/override.sock";
  EXPECT_EQ(*controlSocketPath(a, p), "/run/override.sock");
  // The argument needs no accel.conf at all, not even a valid one.
  write("accel.conf", "Garbage\n");
  EXPECT_EQ(*controlSocketPath(a, p), "/run/override.sock");
  EXPECT_FALSE(controlSocketPath(PluginArgs{}, p).ok());
}

}  // namespace
}  // namespace accel::spank
