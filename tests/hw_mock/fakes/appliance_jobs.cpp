#include "appliance_jobs.h"

#include <dirent.h>
#include <pwd.h>

#include <algorithm>
#include <cstdio>
#include <random>

#include "fake_state.h"

namespace accel::hw_mock {

using nlohmann::json;

const char* phaseName(JobPhase phase) {
  switch (phase) {
    case JobPhase::kQueued:
      return "QUEUED";
    case JobPhase::kRunning:
      return "RUNNING";
    case JobPhase::kSucceeded:
      return "SUCCEEDED";
    case JobPhase::kFailed:
      return "FAILED";
    case JobPhase::kCancelled:
      return "CANCELLED";
  }
  return "UNKNOWN";
}

bool phaseEnded(JobPhase phase) {
  return phase != JobPhase::kQueued && phase != JobPhase::kRunning;
}

JobView viewAt(const ApplianceJob& job, double now) {
  const double start = job.create_time + job.queue_seconds;
  const double end = start + job.run_seconds;
  JobView v;
  if (job.cancel_time && *job.cancel_time <= now) {
    v.phase = JobPhase::kCancelled;
    if (*job.cancel_time > start) v.start_time = start;
    v.end_time = *job.cancel_time;
    return v;
  }
  if (now < start) return v;
  v.start_time = start;
  if (now < end) {
    v.phase = JobPhase::kRunning;
    return v;
  }
  v.phase = job.will_fail ? JobPhase::kFailed : JobPhase::kSucceeded;
  v.end_time = end;
  return v;
}

json recordToJson(const ApplianceJob& job) {
  json j = {{"id", job.id},
            {"labels", job.labels},
            {"type", job.type()},
            {"systems", job.systems},
            {"user", job.user},
            {"uid", job.uid},
            {"createTime", job.create_time},
            {"queueSeconds", job.queue_seconds},
            {"runSeconds", job.run_seconds},
            {"willFail", job.will_fail},
            {"cancelTime", nullptr}};
  if (job.cancel_time) j["cancelTime"] = *job.cancel_time;
  return j;
}

Result<ApplianceJob> recordFromJson(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("id") || !j["id"].is_string() || !j.contains("createTime"))
    return Error(ErrorCode::kParse, "malformed job record");
  try {
    ApplianceJob job;
    job.id = j.at("id").get<std::string>();
    job.labels = j.value("labels", std::map<std::string, std::string>{});
    job.systems = j.value("systems", 0);
    job.user = j.value("user", "");
    job.uid = j.value("uid", -1LL);
    job.create_time = j.at("createTime").get<double>();
    job.queue_seconds = j.value("queueSeconds", 0.0);
    job.run_seconds = j.value("runSeconds", 0.0);
    job.will_fail = j.value("willFail", false);
    if (j.contains("cancelTime") && j["cancelTime"].is_number())
      job.cancel_time = j["cancelTime"].get<double>();
    return job;
  } catch (const json::exception& e) {
    return Error(ErrorCode::kParse, std::string("malformed job record: ") + e.what());
  }
}

json jobToApi(const ApplianceJob& job, double now) {
  const JobView v = viewAt(job, now);
  auto time = [](const std::optional<double>& t) { return t ? json(rfc3339(*t)) : json(nullptr); };
  json item = {{"name", job.id},
               {"labels", job.labels},
               {"type", job.type()},
               {"state", phaseName(v.phase)},
               {"systems", job.systems},
               {"user", job.user},
               {"createTime", rfc3339(job.create_time)},
               {"startTime", time(v.start_time)},
               {"endTime", time(v.end_time)}};
  if (job.uid >= 0) item["uid"] = job.uid;
  return item;
}

namespace {

std::string age(double seconds) {
  auto s = static_cast<long>(seconds < 0 ? 0 : seconds);
  if (s < 120) return std::to_string(s) + "s";
  if (s < 7200) return std::to_string(s / 60) + "m" + std::to_string(s % 60) + "s";
  return std::to_string(s / 3600) + "h" + std::to_string(s / 60 % 60) + "m";
}

std::string tableRow(const std::vector<std::string>& cells) {
  static const int kWidths[] = {30, 9, 11, 8, 12, 8};
  std::string out;
  for (size_t i = 0; i < cells.size(); ++i) {
    out += cells[i];
    if (i + 1 == cells.size()) break;
    int pad = kWidths[i] - static_cast<int>(cells[i].size());
    out += std::string(static_cast<size_t>(std::max(pad, 1)), ' ');
  }
  return out + "\n";
}

}  // namespace

std::string jobsTable(const std::vector<ApplianceJob>& jobs, double now) {
  std::string out = tableRow({"NAME", "TYPE", "STATE", "SYSTEMS", "USER", "AGE", "LABELS"});
  for (const auto& job : jobs) {
    std::string labels;
    for (const auto& [k, val] : job.labels) labels += (labels.empty() ? "" : ",") + k + "=" + val;
    out += tableRow({job.id, job.type(), phaseName(viewAt(job, now).phase),
                     std::to_string(job.systems), job.user, age(now - job.create_time),
                     labels.empty() ? "<none>" : labels});
  }
  return out;
}

std::string newJobId() {
  static const char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device rd;
  std::uniform_int_distribution<int> pick(0, 35);
  std::string id = "wsjob-";
  for (int i = 0; i < 22; ++i) id += kChars[pick(rd)];
  return id;
}

bool isJobId(std::string_view id) {
  if (id.size() != 28 || !id.starts_with("wsjob-")) return false;
  return std::all_of(id.begin() + 6, id.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); });
}

Result<std::string> jobsDir(const std::string& appliance_dir) {
  std::string dir = appliance_dir + "/jobs";
  // Sticky and world-writable, like /tmp: any user's job script adds records.
  ACCEL_TRY(ensureDirectory(dir, 01777));
  return dir;
}

Result<std::vector<ApplianceJob>> loadJobs(const std::string& jobs_dir) {
  DIR* d = ::opendir(jobs_dir.c_str());
  if (d == nullptr) return sysError("open " + jobs_dir, errno);
  std::vector<std::string> ids;
  while (dirent* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (name.ends_with(".json") && isJobId(name.substr(0, name.size() - 5)))
      ids.emplace_back(name.substr(0, name.size() - 5));
  }
  ::closedir(d);
  std::vector<ApplianceJob> jobs;
  for (const auto& id : ids) {
    auto job = loadJob(jobs_dir, id);
    if (job.ok())
      jobs.push_back(std::move(job.value()));
    else if (job.error().code() != ErrorCode::kNotFound)
      return job.error();
  }
  std::sort(jobs.begin(), jobs.end(), [](const ApplianceJob& a, const ApplianceJob& b) {
    return a.create_time < b.create_time;
  });
  return jobs;
}

Result<ApplianceJob> loadJob(const std::string& jobs_dir, const std::string& id) {
  if (!isJobId(id)) return Error(ErrorCode::kNotFound, "job '" + id + "' not found");
  auto file = readText(jobs_dir + "/" + id + ".json");
  if (!file.ok()) return file.error();
  if (!file->exists) return Error(ErrorCode::kNotFound, "job '" + id + "' not found");
  auto job = recordFromJson(file->text);
  if (!job.ok()) return job.error().context(jobs_dir + "/" + id + ".json");
  if (file->owner != 0) {
    job->uid = file->owner;
    const passwd* pw = ::getpwuid(file->owner);
    job->user = pw != nullptr ? pw->pw_name : std::to_string(file->owner);
  }
  return job;
}

Status saveJob(const std::string& jobs_dir, const ApplianceJob& job) {
  return writeText(jobs_dir + "/" + job.id + ".json", recordToJson(job).dump(1) + "\n", 0644);
}

Result<JobPhase> cancelJob(const std::string& appliance_dir, const std::string& id, double now) {
  auto dir = jobsDir(appliance_dir);
  if (!dir.ok()) return dir.error();
  auto lock = StateLock::acquire(appliance_dir);
  if (!lock.ok()) return lock.error();
  auto job = loadJob(*dir, id);
  if (!job.ok()) return job.error();
  const JobPhase before = viewAt(*job, now).phase;
  if (phaseEnded(before)) return before;
  job->cancel_time = now;
  ACCEL_TRY(saveJob(*dir, *job));
  return before;
}

}  // namespace accel::hw_mock
