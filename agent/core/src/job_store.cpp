#include "accel/agent/job_store.h"

#include <dirent.h>
#include <unistd.h>

#include <cerrno>

#include "accel/common/safe_file.h"

namespace accel::agent {

std::string JobStore::pathOf(uint32_t job_id) const {
  return dir_ + "/" + std::to_string(job_id) + ".json";
}

Status JobStore::open() { return makeDirectory(dir_, 0700); }

Status JobStore::save(const JobRecord& record) {
  return writeFileAtomic(pathOf(record.spec.job_id), encodeRecord(record), 0600, {},
                         Durability::kProcessCrash);
}

Status JobStore::remove(uint32_t job_id) {
  if (::unlink(pathOf(job_id).c_str()) != 0 && errno != ENOENT)
    return sysError("remove job record " + pathOf(job_id), errno);
  return okStatus();
}

Result<JobStore::Loaded> JobStore::loadAll() const {
  DIR* d = ::opendir(dir_.c_str());
  if (d == nullptr) return sysError("open job store " + dir_, errno);
  Loaded out;
  while (auto* ent = ::readdir(d)) {
    std::string name = ent->d_name;
    if (name.size() < 6 || name.compare(name.size() - 5, 5, ".json") != 0) continue;
    const std::string path = dir_ + "/" + name;
    auto text = readFileNoFollow(path, 1 << 20);
    if (!text.ok()) {
      out.problems.push_back(text.error().message());
      continue;
    }
    auto rec = decodeRecord(*text);
    if (!rec.ok()) {
      out.problems.push_back(path + ": " + rec.error().message());
      continue;
    }
    if (pathOf(rec->spec.job_id) != path) {
      out.problems.push_back(path + ": names job " + std::to_string(rec->spec.job_id));
      continue;
    }
    out.records.push_back(std::move(*rec));
  }
  ::closedir(d);
  return out;
}

}  // namespace accel::agent
