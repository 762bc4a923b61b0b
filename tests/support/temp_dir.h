#pragma once
// A scratch directory for one test (or one benchmark run), removed with
// everything in it when the object goes. Header only: unit tests, process
// tests, fuzz targets and bench/ include it.
//
// The directory is made with mkdtemp(3), mode 0700, as
// `<parent>/<prefix>-XXXXXX`; the parent is $TMPDIR, else /tmp, unless the
// caller names one (a test whose tree other users must reach keeps /tmp).
// Removal first gives the owner rwx on every directory of the tree, so a
// tree the test left read-only (to provoke EACCES) still goes; symlinks are
// never followed. The destructor never throws; a test that wants to know
// that the tree went calls remove() itself (`ASSERT_TRUE(dir_.remove())`).
#include <stdlib.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

namespace accel::support {

class TempDir {
 public:
  // Throws std::runtime_error when the directory cannot be made: nothing a
  // test does afterwards would mean anything.
  explicit TempDir(std::string_view prefix = "accel-test", std::string parent = defaultParent()) {
    std::string tmpl = std::move(parent) + "/" + std::string(prefix) + "-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr)
      throw std::runtime_error("mkdtemp " + tmpl + ": " + std::strerror(errno));
    path_ = std::move(tmpl);
  }
  ~TempDir() { (void)remove(); }

  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  TempDir(TempDir&& other) noexcept : path_(std::exchange(other.path_, {})) {}
  TempDir& operator=(TempDir&& other) noexcept {
    if (this != &other) {
      (void)remove();
      path_ = std::exchange(other.path_, {});
    }
    return *this;
  }

  // Absolute, without a trailing slash; empty once removed or moved from.
  const std::string& path() const { return path_; }
  // `name` (may hold slashes) under the directory; nothing is created.
  std::string file(std::string_view name) const { return path_ + "/" + std::string(name); }

  // Removes the tree now. True when nothing of it is left (also when it was
  // already gone); false leaves path() set, so the destructor tries again.
  bool remove() noexcept {
    if (path_.empty()) return true;
    std::error_code ec;
    openUp(path_, ec);
    std::filesystem::remove_all(path_, ec);
    if (ec) return false;
    path_.clear();
    return true;
  }

  static std::string defaultParent() {
    const char* env = std::getenv("TMPDIR");
    return env != nullptr && env[0] == '/' ? std::string(env) : std::string("/tmp");
  }

 private:
  // Owner rwx on `dir` and every directory below it, so that their entries
  // can be listed and unlinked. Best effort: remove_all reports what is left.
  static void openUp(const std::filesystem::path& dir, std::error_code& ec) noexcept {
    namespace fs = std::filesystem;
    if (!fs::is_directory(fs::symlink_status(dir, ec))) return;
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add, ec);
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      openUp(it->path(), ec);
    ec.clear();
  }

  std::string path_;
};

}  // namespace accel::support
