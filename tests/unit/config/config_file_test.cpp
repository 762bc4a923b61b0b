// Locating and reading the files, loading from disk, and checkConfig, in a
// private temporary directory.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "accel/common/config.h"
#include "accel/common/vipu_config.h"
#include "temp_dir.h"

namespace accel {
namespace {

namespace fs = std::filesystem;

class ConfigFileTest : public ::testing::Test {
 protected:
  std::string write(const std::string& name, std::string_view content) {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  support::TempDir tmp_{"accel-config"};
  fs::path dir_ = tmp_.path();
};

constexpr std::string_view kVipu = "ApiHost=ctrl\nIpuofDir=/srv/ipuof\n";

TEST_F(ConfigFileTest, ReadsAFile) {
  std::string path = write("accel.conf", "LogLevel=debug\n");
  Result<std::string> text = readConfigFile(path);
  ASSERT_TRUE(text.ok()) << text.error().message();
  EXPECT_EQ(*text, "LogLevel=debug\n");
}

TEST_F(ConfigFileTest, FollowsSymlinks) {
  std::string target = write("real.conf", "A=1\n");
  fs::create_symlink(target, dir_ / "accel.conf");
  Result<std::string> text = readConfigFile((dir_ / "accel.conf").string());
  ASSERT_TRUE(text.ok()) << text.error().message();
  EXPECT_EQ(*text, "A=1\n");
}

TEST_F(ConfigFileTest, MissingFileNamesThePath) {
  std::string path = (dir_ / "nope.conf").string();
  Result<std::string> text = readConfigFile(path);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(text.error().message(),
            "cannot open config file '" + path + "': No such file or directory");
}

TEST_F(ConfigFileTest, DirectoryIsRefused) {
  Result<std::string> text = readConfigFile(dir_.string());
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(text.error().message(),
            "config file '" + dir_.string() + "' is a directory, not a file");
}

TEST_F(ConfigFileTest, FifoIsRefusedWithoutBlocking) {
  std::string path = (dir_ / "fifo.conf").string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  Result<std::string> text = readConfigFile(path);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().message(), "config file '" + path + "' is not a regular file");
}

TEST_F(ConfigFileTest, UnreadableFile) {
  std::string path = write("accel.conf", "A=1\n");
  ASSERT_EQ(::chmod(path.c_str(), 0), 0);
  // Root reads any file whatever its mode, so as root the read is done by a
  // child that has dropped to nobody; the directory stays traversable so only
  // the file's own mode stands in the way.
  auto check = [&path]() -> bool {
    Result<std::string> text = readConfigFile(path);
    return !text.ok() && text.error().code() == ErrorCode::kPermissionDenied &&
           text.error().message().find(path) != std::string::npos;
  };
  if (::geteuid() != 0) {
    EXPECT_TRUE(check());
    return;
  }
  std::string dir = path.substr(0, path.rfind('/'));
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
    ::_exit(check() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "2: could not drop to nobody; 1: the read was not refused as it should be";
}

TEST_F(ConfigFileTest, OversizedFileIsRefused) {
  std::string path = write("big.conf", "");
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(kMaxConfigFileBytes + 1)), 0);
  Result<std::string> text = readConfigFile(path);
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message().find("the limit is"), std::string::npos);
}

TEST_F(ConfigFileTest, LoadersNameTheFileByItsPath) {
  std::string accel = write("accel.conf", "\nHookTimeout=abc\n");
  Result<AccelConfig> config = loadAccelConfig(accel);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().message(),
            accel + ":2: key 'HookTimeout': 'abc' is not a whole number of seconds");

  std::string vipu = write("vipu.conf", kVipu);
  Result<VipuConfig> vipu_config = loadVipuConfig(vipu);
  ASSERT_TRUE(vipu_config.ok()) << vipu_config.error().message();
  EXPECT_EQ(vipu_config->api_host, "ctrl");

  Result<VipuConfig> missing = loadVipuConfig((dir_ / "none.conf").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
}

TEST(ConfigFilePath, DefaultsBesideSlurmConf) {
  EXPECT_EQ(*defaultConfigPath(nullptr, "accel.conf"), "/etc/slurm/accel.conf");
  EXPECT_EQ(*defaultConfigPath("", "vipu.conf"), "/etc/slurm/vipu.conf");
  EXPECT_EQ(*defaultConfigPath("/opt/slurm/etc/slurm.conf", "accel.conf"),
            "/opt/slurm/etc/accel.conf");
  EXPECT_EQ(*defaultConfigPath("/slurm.conf", "vipu.conf"), "/vipu.conf");
  // SLURM_CONF may name the file anything; only its directory matters.
  EXPECT_EQ(*defaultConfigPath("/etc/slurm-test/cluster.conf", "accel.conf"),
            "/etc/slurm-test/accel.conf");
}

TEST(ConfigFilePath, BadSlurmConfOrFileName) {
  Result<std::string> relative = defaultConfigPath("etc/slurm.conf", "accel.conf");
  ASSERT_FALSE(relative.ok());
  EXPECT_EQ(relative.error().message(), "SLURM_CONF='etc/slurm.conf' is not an absolute path");

  Result<std::string> directory = defaultConfigPath("/etc/slurm/", "accel.conf");
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.error().message(),
            "SLURM_CONF='/etc/slurm/' names a directory, not slurm.conf");

  EXPECT_FALSE(defaultConfigPath(nullptr, "../accel.conf").ok());
  EXPECT_FALSE(defaultConfigPath(nullptr, "").ok());
}

TEST(ConfigFilePath, Beside) {
  EXPECT_EQ(configPathBeside("/a/b/accel.conf", "vipu.conf"), "/a/b/vipu.conf");
  EXPECT_EQ(configPathBeside("accel.conf", "vipu.conf"), "vipu.conf");
  EXPECT_EQ(configPathBeside("./conf/accel.conf", "vipu.conf"), "./conf/vipu.conf");
}

TEST_F(ConfigFileTest, CheckConfigWithoutVipuConf) {
  std::string accel = write("accel.conf", "LogLevel=info\n");
  EXPECT_TRUE(checkConfig(accel).ok());
}

TEST_F(ConfigFileTest, CheckConfigWithGoodVipuConf) {
  std::string accel = write("accel.conf", "");
  write("vipu.conf", kVipu);
  Status status = checkConfig(accel);
  EXPECT_TRUE(status.ok()) << status.error().message();
}

TEST_F(ConfigFileTest, CheckConfigReportsBothFiles) {
  std::string accel = write("accel.conf", "LogLevel=loud\n");
  std::string vipu = write("vipu.conf",
                           "ApiHost=ctrl\nIpuofDir=/x\nIsSecure=yes\nApiUser=u\n"
                           "ApiAccessKey=k\nClientCertFile=/c\nClientKeyFile=/k\n");
  Status status = checkConfig(accel);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message(),
            accel + ":1: key 'LogLevel': 'loud' is not one of error, warning, info, debug\n" +
                vipu +
                ": key 'ServerCertFile': required when IsSecure is enabled (it is set at "
                "line 3)");
}

TEST_F(ConfigFileTest, CheckConfigOnlyVipuBroken) {
  std::string accel = write("accel.conf", "");
  std::string vipu = write("vipu.conf", "ApiHost=ctrl\n");
  Status status = checkConfig(accel);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message(), vipu + ": key 'IpuofDir': required but not set");
}

TEST_F(ConfigFileTest, CheckConfigMissingAccelConf) {
  std::string accel = (dir_ / "accel.conf").string();
  Status status = checkConfig(accel);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(status.error().message().find(accel), std::string::npos);
}

TEST_F(ConfigFileTest, CheckConfigVipuConfThatIsADirectory) {
  std::string accel = write("accel.conf", "");
  fs::create_directory(dir_ / "vipu.conf");
  Status status = checkConfig(accel);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message().find("is a directory"), std::string::npos);
}

}  // namespace
}  // namespace accel
