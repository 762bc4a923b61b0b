// The loading point's failures: each is an Error value naming its source,
// and hwloc prints nothing of its own.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "accel/topology/loader.h"
#include "accel/topology/render.h"
#include "temp_dir.h"
#include "topology_test_util.h"

namespace accel::topology {
namespace {

namespace fs = std::filesystem;

// A scratch directory removed after each test.
class TopologyLoaderErrors : public ::testing::Test {
 protected:
  fs::path write(const std::string& name, const std::string& text) {
    fs::path path = dir_ / name;
    std::ofstream(path) << text;
    return path;
  }

  static Result<NodeTopology> loadFile(const fs::path& path) {
    LoadOptions options;
    options.xml_path = path;
    return loadTopology(options);
  }

  support::TempDir tmp_{"accel-topology-test"};
  fs::path dir_ = tmp_.path();
};

void expectError(const Result<NodeTopology>& loaded, ErrorCode code, const std::string& names,
                 const std::string& says) {
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().code(), code) << loaded.error().message();
  EXPECT_NE(loaded.error().message().find(names), std::string::npos) << loaded.error().message();
  EXPECT_NE(loaded.error().message().find(says), std::string::npos) << loaded.error().message();
}

TEST_F(TopologyLoaderErrors, MissingFile) {
  fs::path path = dir_ / "absent.xml";
  expectError(loadFile(path), ErrorCode::kNotFound, path.string(), "No such file");
}

TEST_F(TopologyLoaderErrors, DirectoryInsteadOfFile) {
  expectError(loadFile(dir_), ErrorCode::kInvalidArgument, dir_.string(), "is a directory");
}

TEST_F(TopologyLoaderErrors, UnreadableFile) {
  fs::path path = write("secret.xml", testing::machineXml(""));
  ASSERT_EQ(::chmod(path.c_str(), 0), 0);
  if (::geteuid() != 0) {
    expectError(loadFile(path), ErrorCode::kPermissionDenied, path.string(), "Permission denied");
    return;
  }
  // Root reads any file: check from a child that dropped to nobody.
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
    auto loaded = loadFile(path);
    bool right = !loaded.ok() && loaded.error().code() == ErrorCode::kPermissionDenied &&
                 loaded.error().message().find(path.string()) != std::string::npos;
    ::_exit(right ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: wrong error, 2: could not drop privileges";
}

TEST_F(TopologyLoaderErrors, EmptyAndBlankFiles) {
  fs::path empty = write("empty.xml", "");
  expectError(loadFile(empty), ErrorCode::kParse, empty.string(), "empty");
  fs::path blank = write("blank.xml", " \n\t\n");
  expectError(loadFile(blank), ErrorCode::kParse, blank.string(), "empty");
}

TEST_F(TopologyLoaderErrors, GarbageFile) {
  fs::path path = write("garbage.xml",
                        "\x7f"
                        "ELF\x02\x01 not xml at all");
  expectError(loadFile(path), ErrorCode::kParse, path.string(), "not an hwloc topology XML");
}

TEST_F(TopologyLoaderErrors, TruncatedFile) {
  std::string whole = testing::machineXml("");
  fs::path path = write("truncated.xml", whole.substr(0, whole.size() / 2));
  expectError(loadFile(path), ErrorCode::kParse, path.string(), "malformed");
}

TEST_F(TopologyLoaderErrors, ValidXmlThatIsNotATopology) {
  fs::path path = write("other.xml", "<?xml version=\"1.0\"?>\n<html><body/></html>\n");
  expectError(loadFile(path), ErrorCode::kParse, path.string(), "no <topology> element");
}

TEST(TopologyLoaderText, TruncatedGarbageAndEmptyText) {
  std::string whole = testing::machineXml("");
  expectError(loadTopologyFromXmlText(whole.substr(0, 300), "node42 export"), ErrorCode::kParse,
              "node42 export", "malformed");
  expectError(loadTopologyFromXmlText("{\"json\": true}"), ErrorCode::kParse, "topology XML text",
              "not an hwloc topology XML");
  expectError(loadTopologyFromXmlText(""), ErrorCode::kParse, "topology XML text", "empty");
}

TEST(TopologyLoaderText, Format3HeaderIsUnsupported) {
  std::string v3 = testing::machineXml("");
  v3.replace(v3.find("version=\"2.0\""), 13, "version=\"3.0\"");
  expectError(loadTopologyFromXmlText(v3, "v3 export"), ErrorCode::kUnsupported, "v3 export",
              "hwloc XML format 3.0 is not supported");
}

TEST(TopologyLoaderText, Format1WithoutVersionStillLoads) {
  // hwloc 1.x exports have no version attribute; hwloc 2 reads them.
  std::string v1 = R"(<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc.dtd">
<topology>
  <object type="Machine" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" online_cpuset="0x00000001" allowed_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" allowed_nodeset="0x00000001">
    <object type="NUMANode" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" online_cpuset="0x00000001" allowed_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" allowed_nodeset="0x00000001" local_memory="1073741824">
      <object type="Core" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" online_cpuset="0x00000001" allowed_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" allowed_nodeset="0x00000001">
        <object type="PU" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" online_cpuset="0x00000001" allowed_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" allowed_nodeset="0x00000001"/>
      </object>
    </object>
  </object>
</topology>
)";
  auto loaded = loadTopologyFromXmlText(v1);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  EXPECT_EQ(loaded->pus, 1u);
  ASSERT_EQ(loaded->numa_nodes.size(), 1u);
  EXPECT_EQ(loaded->numa_nodes[0].memory_bytes, 1073741824u);
}

TEST(TopologyLoaderText, HwlocStaysQuietOnBadInput) {
  ::testing::internal::CaptureStderr();
  std::string whole = testing::machineXml("");
  (void)loadTopologyFromXmlText(whole.substr(0, whole.size() - 40));
  (void)loadTopologyFromXmlText("<topology version=\"2.0\"><object type=\"Nonsense\"/></topology>");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace accel::topology

namespace accel::topology {
namespace {

// Found by tests/fuzz/fuzz_topology_xml: hwloc 2.9 itself dereferences null
// loading this file. The loader must say the file is bad, not crash.
TEST(TopologyLoaderText, FileThatCrashesHwlocIsAnError) {
  const std::string path =
      ACCEL_SOURCE_DIR "/tests/fuzz/regressions/topology_xml/hwloc-null-deref.xml";
  LoadOptions opts;
  opts.xml_path = path;
  auto t = loadTopology(opts);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code(), ErrorCode::kParse);
  EXPECT_NE(t.error().message().find("hwloc crashed reading it"), std::string::npos)
      << t.error().message();
  EXPECT_NE(t.error().message().find(path), std::string::npos);
}

}  // namespace
}  // namespace accel::topology

namespace accel::topology {
namespace {

// Every input that once crashed or leaked in tests/fuzz/fuzz_topology_xml
// must load or fail cleanly, and render when it loads.
TEST(TopologyLoaderText, FuzzRegressionsLoadOrFailCleanly) {
  const std::filesystem::path dir = ACCEL_SOURCE_DIR "/tests/fuzz/regressions/topology_xml";
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    ++seen;
    LoadOptions opts;
    opts.xml_path = entry.path();
    auto t = loadTopology(opts);
    if (t.ok()) {
      EXPECT_FALSE(renderJson(*t).empty());
      EXPECT_FALSE(renderTable(*t).empty());
    } else {
      EXPECT_NE(t.error().message().find(entry.path().string()), std::string::npos)
          << t.error().message();
    }
  }
  EXPECT_GE(seen, 4);
}

}  // namespace
}  // namespace accel::topology
