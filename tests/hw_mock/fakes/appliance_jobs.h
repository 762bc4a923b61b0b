#pragma once
// The fake appliance's jobs. A job is a record file; its state is never
// stored but computed from the clock when read, so a job advances from
// QUEUED to RUNNING to SUCCEEDED/FAILED with no process driving it.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accel/common/result.h"

namespace accel::hw_mock {

struct ApplianceJob {
  std::string id;                             // wsjob-<22 of [a-z0-9]>
  std::map<std::string, std::string> labels;  // at least slurm-job-id
  int systems = 0;                            // CS-X systems; 0 means a compile job
  std::string user;                           // the submitter's name
  long long uid = -1;                         // the submitter's uid; -1: not recorded
  double create_time = 0;                     // epoch seconds, CLOCK_REALTIME
  double queue_seconds = 0;
  double run_seconds = 0;
  bool will_fail = false;
  std::optional<double> cancel_time;

  std::string type() const { return systems == 0 ? "compile" : "execute"; }
};

enum class JobPhase { kQueued, kRunning, kSucceeded, kFailed, kCancelled };
const char* phaseName(JobPhase phase);
bool phaseEnded(JobPhase phase);

struct JobView {
  JobPhase phase = JobPhase::kQueued;
  std::optional<double> start_time;  // set once it has run
  std::optional<double> end_time;    // set once it has ended
};

// The job as seen at `now`. A cancelled job is CANCELLED from its cancel time
// on; it started only if the cancel came after its queue time.
JobView viewAt(const ApplianceJob& job, double now);

// The record file format and the csctl `-o json` item.
nlohmann::json recordToJson(const ApplianceJob& job);
Result<ApplianceJob> recordFromJson(std::string_view text);
nlohmann::json jobToApi(const ApplianceJob& job, double now);
std::string jobsTable(const std::vector<ApplianceJob>& jobs, double now);

std::string newJobId();
bool isJobId(std::string_view id);

// Files under <appliance dir>/jobs (created 1777 on demand). A record's
// owner is who submitted it, as a real appliance knows its submitter: for a
// file owned by anyone but root, user and uid are the file owner's, whatever
// the record says (a user writing a record by hand cannot name another);
// root's files (the appliance's own, or a test's) keep what they hold.
// loadJobs skips
// anything that is not a finished record (temp files of a writer in flight)
// and returns jobs ordered by create time. loadJob: kNotFound if absent.
Result<std::string> jobsDir(const std::string& appliance_dir);
Result<std::vector<ApplianceJob>> loadJobs(const std::string& jobs_dir);
Result<ApplianceJob> loadJob(const std::string& jobs_dir, const std::string& id);
Status saveJob(const std::string& jobs_dir, const ApplianceJob& job);

// Cancels under the appliance lock. Returns the phase the job was in before;
// a job that has already ended is left unchanged.
Result<JobPhase> cancelJob(const std::string& appliance_dir, const std::string& id, double now);

}  // namespace accel::hw_mock
