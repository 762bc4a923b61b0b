#include "xml_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <string>

namespace accel::topology::detail {
namespace {

constexpr off_t kMaxXmlBytes = off_t{256} << 20;

// Closes a descriptor on every return path.
class FdGuard {
 public:
  explicit FdGuard(int fd) : fd_(fd) {}
  ~FdGuard() { ::close(fd_); }
  FdGuard(const FdGuard&) = delete;
  FdGuard& operator=(const FdGuard&) = delete;

 private:
  int fd_;
};

bool isBlank(std::string_view text) {
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// The major number of the version attribute of the <topology ...> start tag
// that begins at `tag`; 1 when the tag has no version (format 1 exports).
unsigned formatMajor(std::string_view text, std::size_t tag) {
  std::size_t end = text.find('>', tag);
  std::string_view start_tag = text.substr(tag, end == std::string_view::npos ? end : end - tag);
  std::size_t attr = start_tag.find("version=");
  if (attr == std::string_view::npos || attr + 9 >= start_tag.size()) return 1;
  unsigned major = 0;
  for (std::size_t i = attr + 9; i < start_tag.size(); ++i) {
    char c = start_tag[i];
    if (!std::isdigit(static_cast<unsigned char>(c))) break;
    major = major * 10 + static_cast<unsigned>(c - '0');
  }
  return major;
}

std::string unsupportedMessage(std::string_view origin, unsigned format, HwlocVersion reader) {
  std::string readable =
      reader.major >= 3 ? "1.x to " + std::to_string(reader.major) + ".x" : "1.x and 2.x";
  return std::string(origin) + ": hwloc XML format " + std::to_string(format) +
         ".0 is not supported by this hwloc (" + std::to_string(reader.major) + "." +
         std::to_string(reader.minor) + "), which reads formats " + readable +
         "; export the topology with hwloc 2.x (`lstopo --of xml topo.xml`), or have hwloc " +
         std::to_string(format) +
         " write format 2 (`lstopo --export-xml-flags 2 --of xml topo.xml`)";
}

}  // namespace

Status checkTopologyXmlHeader(std::string_view text, std::string_view origin, HwlocVersion reader) {
  if (isBlank(text)) {
    return Error(ErrorCode::kParse,
                 std::string(origin) + ": empty, expected an hwloc topology XML");
  }
  std::size_t tag = text.find("<topology");
  if (tag == std::string_view::npos) {
    return Error(ErrorCode::kParse,
                 std::string(origin) + ": not an hwloc topology XML (no <topology> element)");
  }
  unsigned format = formatMajor(text, tag);
  if (format > reader.major) {
    return Error(ErrorCode::kUnsupported, unsupportedMessage(origin, format, reader));
  }
  return okStatus();
}

Result<std::string> readTopologyXmlFile(const std::filesystem::path& path,
                                        std::string_view origin) {
  const std::string what(origin);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return sysError(what, errno);
  FdGuard guard(fd);
  struct stat info {};
  if (::fstat(fd, &info) != 0) return sysError(what, errno);
  if (S_ISDIR(info.st_mode)) {
    return Error(ErrorCode::kInvalidArgument, what + ": is a directory, expected an XML file");
  }
  if (info.st_size > kMaxXmlBytes) {
    return Error(ErrorCode::kInvalidArgument, what + ": larger than 256 MiB, not a topology");
  }
  std::string text;
  char chunk[1 << 16];
  for (;;) {
    ssize_t got = ::read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return sysError(what, errno);
    if (got == 0) return text;
    text.append(chunk, static_cast<std::size_t>(got));
    if (static_cast<off_t>(text.size()) > kMaxXmlBytes) {
      return Error(ErrorCode::kInvalidArgument, what + ": larger than 256 MiB, not a topology");
    }
  }
}

}  // namespace accel::topology::detail
