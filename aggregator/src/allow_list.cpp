#include "accel/aggregator/allow_list.h"

#include <dirent.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <memory>

namespace accel::aggregator {
namespace {

std::string octal(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// `path` is owned by root or `owner` and only its owner may write it.
Status checkWritableByOwnerOnly(const std::string& path, const struct stat& st, uid_t owner,
                                const char* what) {
  if (st.st_uid != 0 && st.st_uid != owner)
    return Error(ErrorCode::kPermissionDenied,
                 path + ": " + what + " is owned by uid " + std::to_string(st.st_uid) +
                     "; it must belong to root or to uid " + std::to_string(owner) +
                     " (the aggregator's user)");
  if ((st.st_mode & 022) != 0)
    return Error(ErrorCode::kPermissionDenied,
                 path + ": " + what + " has mode " + octal(st.st_mode) +
                     "; group and others must not write it (chmod go-w)");
  return okStatus();
}

bool isPubName(const std::string& name) { return name.size() > 4 && name.ends_with(".pub"); }

}  // namespace

bool AllowList::admits(std::string_view key, std::string_view node) const {
  auto it = node_by_key.find(key);
  return it != node_by_key.end() && it->second == node;
}

Result<AllowList> loadAllowList(const std::string& dir, uid_t owner) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return sysError("allow list " + dir, errno);
  if (!S_ISDIR(st.st_mode))
    return Error(ErrorCode::kInvalidArgument, dir + ": the allow list is not a directory");
  ACCEL_TRY(checkWritableByOwnerOnly(dir, st, owner, "the allow list directory"));
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) return sysError("allow list " + dir, errno);
  AllowList list;
  while (dirent* e = ::readdir(d.get())) {
    std::string name = e->d_name;
    if (!isPubName(name)) continue;
    std::string path = dir + "/" + name;
    if (::lstat(path.c_str(), &st) != 0) return sysError(path, errno);
    if (!S_ISREG(st.st_mode))
      return Error(ErrorCode::kPermissionDenied,
                   path + ": not a regular file (links are not followed)");
    ACCEL_TRY(checkWritableByOwnerOnly(path, st, owner, "node key"));
    auto key = event::loadPublicKey(path);
    if (!key.ok()) return key.error();
    std::string node = name.substr(0, name.size() - 4);
    auto [it, fresh] = list.node_by_key.emplace(*key, node);
    if (!fresh)
      return Error(ErrorCode::kParse,
                   path + ": the same key as " + dir + "/" + it->second + ".pub; one key per node");
    list.key_by_node[node] = *key;
  }
  return list;
}

Result<event::CurveKeyPair> loadServerKey(const std::string& path, uid_t owner) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return sysError(path, errno);
  if (!S_ISREG(st.st_mode))
    return Error(ErrorCode::kPermissionDenied,
                 path + ": the secret key is not a regular file (links are not followed)");
  if (st.st_uid != owner)
    return Error(ErrorCode::kPermissionDenied, path + ": the secret key is owned by uid " +
                                                   std::to_string(st.st_uid) + ", not by uid " +
                                                   std::to_string(owner) +
                                                   " that the aggregator runs as (chown it)");
  return event::loadSecretKey(path);  // refuses any access for group and others
}

}  // namespace accel::aggregator
