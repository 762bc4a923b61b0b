// accelctl wait-appliance JOB ID: the program inside a surrogate step. It
// reports its step to the daemon once, then waits until the appliance job
// is over: exit 0 when it succeeded, 1 when it failed or was cancelled, so
// that sacct shows the step COMPLETED or FAILED. Run as the job's user; the
// daemon answers a user about its own jobs only.
//
// SIGTERM (also SIGINT, SIGHUP) does not end it at once. It comes when the
// job ends (slurmd terminates every step, KillWait before SIGKILL) or when
// the appliance limit is enforced, and often just as the appliance job ends
// too: a launcher that sees its job end lets the batch script exit, while
// the daemon learns of the end only at its next poll. A step killed by a
// signal reads CANCELLED in sacct, whatever became of the appliance job. So
// the waiter keeps looking for a while (two poll intervals and some, well
// inside KillWait) and exits with the appliance job's outcome; if it still
// runs then, it exits 1 (FAILED), and the daemon, seeing the step's srun
// end, cancels the appliance job.
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <optional>

#include "accel/ctl/client.h"
#include "accel/ipc/control_requests.h"
#include "accel/schemas/control_generated.h"

namespace accel::ctl {
namespace {

namespace fb = accel::control;
using namespace std::chrono_literals;

std::optional<uint32_t> number(const char* text) {
  if (text == nullptr) return std::nullopt;
  std::string_view s(text);
  uint32_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

enum class Seen { kUnknown, kRunning, kSucceeded, kFailed, kJobGone };

// One look at the appliance job through the daemon. kUnknown: ask again.
Seen look(const AccelConfig& config, uint32_t job, const std::string& id) {
  auto reply = callDaemon(config, ipc::encodeJobRequest(job), 2s);
  if (!reply.ok()) return Seen::kUnknown;  // the daemon may be restarting
  const auto* r = flatbuffers::GetRoot<fb::Reply>(reply->data());
  if (r->outcome() == fb::Outcome::NotFound) return Seen::kJobGone;
  const auto* info = r->body_as_JobInfo();
  if (r->outcome() != fb::Outcome::Ok || info == nullptr || info->appliance_jobs() == nullptr)
    return Seen::kUnknown;
  for (const auto* a : *info->appliance_jobs()) {
    if (a->id() == nullptr || a->id()->str() != id || a->state() == nullptr) continue;
    std::string state = a->state()->str();
    if (state == "succeeded") return Seen::kSucceeded;
    if (state == "failed" || state == "cancelled") return Seen::kFailed;
    return Seen::kRunning;
  }
  return Seen::kUnknown;
}

// True once the daemon has the report (or refused it for good).
bool reportStep(const AccelConfig& config, uint32_t job, uint32_t step, const std::string& id) {
  auto reply = callDaemon(config, ipc::encodeSurrogateRequest(job, step, id), 2s);
  return reply.ok() &&
         flatbuffers::GetRoot<fb::Reply>(reply->data())->outcome() != fb::Outcome::Busy;
}

volatile sig_atomic_t g_told_to_stop = 0;

void onStopSignal(int) { g_told_to_stop = 1; }

void catchStopSignals() {
  struct sigaction sa {};
  sa.sa_handler = onStopSignal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaction(sig, &sa, nullptr);
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
}

// How long a waiter told to stop still looks for the appliance job's end:
// the daemon sees it at its next poll at the latest. Bounded well below
// Slurm's default KillWait (30 s), after which slurmd sends SIGKILL.
std::chrono::milliseconds lingerFor(const AccelConfig& config) {
  auto poll = std::chrono::duration_cast<std::chrono::milliseconds>(config.appliance_poll_interval);
  return std::clamp<std::chrono::milliseconds>(2 * poll + 1s, 3s, 20s);
}

// A pause a stop signal cuts short (std::this_thread::sleep_for resumes).
void pause250ms() {
  timespec ts{0, 250'000'000};
  (void)nanosleep(&ts, nullptr);
}

}  // namespace

int verbWaitAppliance(const std::vector<std::string>& args, const GlobalOptions& g,
                      const CliIo& io) {
  auto job = args.size() == 2 ? number(args[0].c_str()) : std::nullopt;
  if (!job || args[1].empty()) {
    io.err("accelctl: usage: accelctl wait-appliance JOB APPLIANCE_JOB_ID");
    return kUsage;
  }
  auto config = loadConfig(g, io);
  if (!config.ok()) {
    io.err("accelctl: " + config.error().message());
    return kUsage;
  }
  // Inside the step, Slurm says which step this is.
  auto step = number(io.getenv("SLURM_STEP_ID"));
  bool reported = !step || number(io.getenv("SLURM_JOB_ID")) != job;
  catchStopSignals();
  std::optional<std::chrono::steady_clock::time_point> give_up;
  for (;;) {
    if (!reported) reported = reportStep(*config, *job, *step, args[1]);
    switch (look(*config, *job, args[1])) {
      case Seen::kSucceeded:
        io.out(args[1] + " succeeded\n");
        return kOk;
      case Seen::kFailed:
        io.out(args[1] + " failed or was cancelled\n");
        return kNodeFault;
      case Seen::kJobGone:
        io.err("accelctl: job " + std::to_string(*job) + " has nothing on this node");
        return kNotFound;
      case Seen::kRunning:
      case Seen::kUnknown:
        break;
    }
    if (g_told_to_stop != 0) {
      const auto now = std::chrono::steady_clock::now();
      if (!give_up) give_up = now + lingerFor(*config);
      if (now >= *give_up) {
        io.out(args[1] + " still running as its step ends\n");
        return kNodeFault;
      }
    }
    pause250ms();
  }
}

}  // namespace accel::ctl
