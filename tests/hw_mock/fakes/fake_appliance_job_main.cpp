// fake-appliance-job: stands in for a user's launcher (run.py) inside a job
// script. It submits one appliance job record, follows it to the end and
// exits with its outcome. See ../README.md.
#include <pwd.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "appliance_jobs.h"
#include "fake_state.h"
#include "faults.h"

namespace accel::hw_mock {
namespace {

constexpr const char* kUsage =
    "usage: fake-appliance-job --csx N --queue-seconds Q --run-seconds R [--fail] [--detach]"
    " [--label KEY=VALUE]...\n";
constexpr double kPollSeconds = 0.05;

volatile sig_atomic_t g_stop = 0;

void onSignal(int) { g_stop = 1; }

bool toDouble(const std::string& s, double& out) {
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size() && out >= 0;
}

Status parseOption(const std::string& name, const std::string& value, ApplianceJob& job) {
  double d = 0;
  if (name == "--label") {
    auto eq = value.find('=');
    if (eq == std::string::npos || eq == 0)
      return Error(ErrorCode::kInvalidArgument, "--label needs KEY=VALUE");
    job.labels[value.substr(0, eq)] = value.substr(eq + 1);
  } else if (!toDouble(value, d)) {
    return Error(ErrorCode::kInvalidArgument, name + " needs a number >= 0, got '" + value + "'");
  } else if (name == "--csx") {
    job.systems = static_cast<int>(d);
    if (static_cast<double>(job.systems) != d)
      return Error(ErrorCode::kInvalidArgument, "--csx needs a whole number");
  } else if (name == "--queue-seconds") {
    job.queue_seconds = d;
  } else {
    job.run_seconds = d;
  }
  return okStatus();
}

// `detach`: set by --detach, a launcher that submits and leaves (the
// appliance job runs on; nothing of the Slurm job follows or cancels it).
Result<ApplianceJob> parseArgs(const std::vector<std::string>& argv, bool& detach) {
  ApplianceJob job;
  bool seen_csx = false, seen_queue = false, seen_run = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& name = argv[i];
    if (name == "--fail") {
      job.will_fail = true;
      continue;
    }
    if (name == "--detach") {
      detach = true;
      continue;
    }
    if (name != "--csx" && name != "--queue-seconds" && name != "--run-seconds" &&
        name != "--label")
      return Error(ErrorCode::kInvalidArgument, "unknown argument '" + name + "'");
    if (i + 1 >= argv.size()) return Error(ErrorCode::kInvalidArgument, name + " needs a value");
    ACCEL_TRY(parseOption(name, argv[++i], job));
    seen_csx |= name == "--csx";
    seen_queue |= name == "--queue-seconds";
    seen_run |= name == "--run-seconds";
  }
  if (!seen_csx || !seen_queue || !seen_run)
    return Error(ErrorCode::kInvalidArgument,
                 "--csx, --queue-seconds and --run-seconds are required");
  if (job.labels.count("slurm-job-id") == 0) {
    const char* slurm_job = std::getenv("SLURM_JOB_ID");
    if (slurm_job == nullptr || *slurm_job == '\0')
      return Error(ErrorCode::kInvalidArgument,
                   "SLURM_JOB_ID is not set (run inside a Slurm job or pass "
                   "--label slurm-job-id=ID)");
    job.labels["slurm-job-id"] = slurm_job;
  }
  return job;
}

std::string userName() {
  if (const passwd* pw = ::getpwuid(::getuid())) return pw->pw_name;
  return std::to_string(::getuid());
}

int finish(const ApplianceJob& job, JobPhase phase) {
  std::printf("%s %s\n", job.id.c_str(), phaseName(phase));
  std::fflush(stdout);
  if (phase == JobPhase::kSucceeded) return 0;
  return phase == JobPhase::kCancelled ? 2 : 1;
}

// Polls the record until it ends; a signal cancels it first.
int follow(const std::string& appliance_dir, const std::string& jobs_dir, const ApplianceJob& job) {
  for (;;) {
    if (g_stop != 0) {
      auto before = cancelJob(appliance_dir, job.id, nowSeconds());
      if (!before.ok()) return fail("cancel " + job.id + ": " + before.error().message(), 2);
      return finish(job, phaseEnded(*before) ? *before : JobPhase::kCancelled);
    }
    auto current = loadJob(jobs_dir, job.id);
    if (!current.ok()) return fail("lost job " + job.id + ": " + current.error().message());
    JobPhase phase = viewAt(*current, nowSeconds()).phase;
    if (phaseEnded(phase)) return finish(*current, phase);
    sleepSeconds(kPollSeconds, &g_stop);
  }
}

void installHandlers() {
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
}

int run(int argc, char** argv) {
  auto dir = stateDir("appliance");
  if (!dir.ok()) return fail("hw_mock: " + dir.error().message());
  logCall(*dir, argc, argv);
  int fault = injectFault({*dir, "submit", "cannot reach the appliance: connection refused",
                           [] { std::fputs("\x01 <<garbled job id>>\n", stdout); }});
  if (fault >= 0) return fault;
  installHandlers();  // after the faults, so a `hang` still dies on SIGTERM
  bool detach = false;
  auto job = parseArgs(argList(argc, argv), detach);
  if (!job.ok()) return fail(job.error().message() + "\n" + kUsage, 2);
  auto jobs_dir = jobsDir(*dir);
  if (!jobs_dir.ok()) return fail(jobs_dir.error().message());
  job->id = newJobId();
  job->user = userName();
  job->uid = ::getuid();
  job->create_time = nowSeconds();
  if (auto s = saveJob(*jobs_dir, *job); !s.ok()) return fail(s.error().message());
  std::printf("%s\n", job->id.c_str());
  std::fflush(stdout);
  if (detach) return 0;
  return follow(*dir, *jobs_dir, *job);
}

}  // namespace
}  // namespace accel::hw_mock

int main(int argc, char** argv) { return accel::hw_mock::run(argc, argv); }
