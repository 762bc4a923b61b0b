#include "accel/events/curve_keys.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <cerrno>
#include <cstdio>
#include <string_view>

#include "accel/common/safe_file.h"

namespace accel::event {
namespace {

constexpr std::string_view kZ85Chars =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

Result<std::string> readKeyText(const std::string& path) {
  auto text = readFileNoFollow(path, 256);
  if (!text.ok()) return text.error();
  std::string key = *text;
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r' || key.back() == ' '))
    key.pop_back();
  if (!isZ85Key(key))
    return Error(ErrorCode::kParse, path + ": not a CURVE key (40 Z85 characters)");
  return key;
}

Status createWith(const std::string& path, const std::string& content, mode_t mode) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) {
    if (errno == EEXIST)
      return Error(ErrorCode::kConflict, path + ": exists; remove it first to replace the key");
    return sysError("create " + path, errno);
  }
  // The umask may have narrowed the mode; the public file should be readable.
  bool ok = ::fchmod(fd, mode) == 0 &&
            ::write(fd, content.data(), content.size()) == ssize_t(content.size()) &&
            ::fsync(fd) == 0;
  int err = errno;
  ::close(fd);
  if (!ok) return sysError("write " + path, err);
  return okStatus();
}

}  // namespace

bool isZ85Key(const std::string& text) {
  return text.size() == 40 && text.find_first_not_of(kZ85Chars) == std::string::npos;
}

Result<CurveKeyPair> generateCurveKeyPair() {
  char pub[41] = {}, sec[41] = {};
  if (zmq_curve_keypair(pub, sec) != 0) return sysError("zmq_curve_keypair", zmq_errno());
  return CurveKeyPair{pub, sec};
}

Status writeKeyPair(const std::string& base, const CurveKeyPair& keys) {
  ACCEL_TRY(createWith(base + ".key", keys.secret_key + "\n", 0600));
  return createWith(base + ".pub", keys.public_key + "\n", 0644);
}

Result<std::string> loadPublicKey(const std::string& path) { return readKeyText(path); }

Result<CurveKeyPair> loadSecretKey(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return sysError(path, errno);
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return Error(ErrorCode::kPermissionDenied,
                 path + ": secret key file has mode " + mode +
                     "; group and others must have no access (chmod 600)");
  }
  auto secret = readKeyText(path);
  if (!secret.ok()) return secret.error();
  char pub[41] = {};
  if (zmq_curve_public(pub, secret->c_str()) != 0)
    return Error(ErrorCode::kParse, path + ": not a valid secret key");
  return CurveKeyPair{pub, *secret};
}

}  // namespace accel::event
