#include "accel/agentd/control_handler.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <optional>

#include "accel/agent/job_nodes.h"
#include "accel/agentd/job_clock.h"
#include "accel/agentd/relayed_requests.h"
#include "accel/agentd/surrogate_steps.h"
#include "accel/agentd/telemetry_hooks.h"
#include "accel/agentd/xid_handlers.h"
#include "accel/common/clock.h"
#include "accel/common/log.h"
#include "accel/common/text.h"
#include "accel/ipc/control_verify.h"
#include "accel/schemas/control_generated.h"

namespace accel::agentd {
namespace {

namespace fb = accel::control;
using agent::JobRecord;
using flatbuffers::FlatBufferBuilder;

bool isAdmin(const HandlerContext& ctx, const Caller& c) {
  return c.uid == 0 || c.uid == ctx.slurm_uid;
}

std::vector<uint8_t> finish(FlatBufferBuilder& fbb, flatbuffers::Offset<fb::Reply> reply) {
  fbb.Finish(reply);
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

std::vector<uint8_t> simple(fb::Outcome outcome, const std::string& message) {
  FlatBufferBuilder fbb(256);
  return finish(fbb, fb::CreateReplyDirect(fbb, outcome, message.c_str()));
}

// Which outcome an error from the job manager is. Only a request this node
// can never satisfy is the user's; everything else is the node's fault.
fb::Outcome outcomeOf(const Error& e) {
  return e.code() == ErrorCode::kInvalidArgument ? fb::Outcome::UserError : fb::Outcome::NodeFault;
}

fb::JobState stateOf(agent::JobPhase p) {
  switch (p) {
    case agent::JobPhase::kNone:
      return fb::JobState::None;
    case agent::JobPhase::kProlog:
      return fb::JobState::Prolog;
    case agent::JobPhase::kReady:
      return fb::JobState::Ready;
    case agent::JobPhase::kEpilog:
      return fb::JobState::Epilog;
    case agent::JobPhase::kCleaned:
      return fb::JobState::Cleaned;
    case agent::JobPhase::kFailed:
      return fb::JobState::Failed;
  }
  return fb::JobState::None;
}

// Whether this node can run the clock of the job's appliance limit (the
// node reads an appliance, or the job holds IPUs or devices here).
bool limitMeasurableHere(const HandlerContext& ctx, const JobRecord& r) {
  return agent::limitMeasurable(r.spec, r.devices, ctx.appliance != nullptr);
}

// What the job's output and the journal say of a limit nothing here measures.
std::string unmeasuredLimitLine(const JobRecord& r) {
  return "the appliance time limit of " + std::to_string(r.spec.appliance_time_sec) +
         " s cannot be measured on " +
         (r.spec.node.empty() ? std::string("this node") : r.spec.node) +
         " and is not enforced there: the job holds no IPUs or GPUs there and the node reads no "
         "appliance";
}

flatbuffers::Offset<fb::JobInfo> jobInfo(FlatBufferBuilder& fbb, const JobRecord& r,
                                         const HandlerContext* ctx = nullptr) {
  std::vector<flatbuffers::Offset<fb::ApplianceJobInfo>> appliance_jobs;
  double appliance_seconds = 0;
  if (ctx && ctx->appliance) {
    for (const auto& a : ctx->appliance->jobsOf(r.spec.job_id))
      appliance_jobs.push_back(
          fb::CreateApplianceJobInfoDirect(fbb, a.id.c_str(), appliance::stateName(a.state),
                                           a.systems, a.create_ns, a.start_ns, a.end_ns));
    appliance_seconds = ctx->appliance->secondsOf(r.spec.job_id);
  }
  std::vector<flatbuffers::Offset<fb::Device>> devices;
  for (uint32_t d : r.devices) devices.push_back(fb::CreateDevice(fbb, fb::DeviceKind::Other, d));
  std::vector<flatbuffers::Offset<fb::EnvVar>> env;
  for (const auto& [k, v] : r.env) env.push_back(fb::CreateEnvVarDirect(fbb, k.c_str(), v.c_str()));
  std::vector<flatbuffers::Offset<flatbuffers::String>> warnings;
  if (ctx && r.phase == agent::JobPhase::kReady && !limitMeasurableHere(*ctx, r))
    warnings.push_back(fbb.CreateString(unmeasuredLimitLine(r)));
  if (ctx && r.phase == agent::JobPhase::kReady && !r.spec.carry_note.empty())
    warnings.push_back(fbb.CreateString(r.spec.carry_note));
  const bool partition = !r.ipu_partition.empty();
  return fb::CreateJobInfoDirect(
      fbb, r.spec.job_id, r.spec.uid, r.spec.user.c_str(), stateOf(r.phase), &devices,
      r.job_dir.c_str(), &env, r.prolog_started_ns, r.ready_ns, r.last_error.c_str(),
      ctx ? &appliance_jobs : nullptr, appliance_seconds, warnings.empty() ? nullptr : &warnings,
      partition ? r.ipu_partition.c_str() : nullptr, partition ? r.spec.ipus : 0);
}

agent::JobRequestSpec specOf(const fb::JobSpec& j) {
  agent::JobRequestSpec s;
  s.job_id = j.job_id();
  s.uid = j.uid();
  s.gid = j.gid();
  if (j.user()) s.user = j.user()->str();
  if (j.partition()) s.partition = j.partition()->str();
  if (j.gpus()) s.gpus = j.gpus()->str();
  s.ipus = j.ipus();
  s.num_replicas = j.num_replicas();
  s.ntasks = j.ntasks();
  s.appliance_time_sec = j.appliance_time_sec();
  s.appliance_signal = j.appliance_signal();
  s.appliance_signal_lead_sec = j.appliance_signal_lead_sec();
  s.appliance_signal_batch = j.appliance_signal_batch();
  s.restart_count = j.restart_count();
  if (j.node()) s.node = j.node()->str();
  if (j.node_list()) s.node_list = j.node_list()->str();
  s.node_count = j.node_count();
  if (j.refusal()) s.refusal = j.refusal()->str();
  return s;
}

// Text from a request is stored, logged and written as JSON: it must be
// clean, and a GPU list may hold only what Slurm writes there.
std::string badText(const agent::JobRequestSpec& s) {
  if (!isCleanText(s.user) || !isCleanText(s.partition))
    return "user or partition is not clean text";
  if (!isCleanText(s.node)) return "node name is not clean text";
  // slurmd's, not the user's; but what leads a job must be sane text.
  if (!isCleanText(s.node_list, agent::kMaxNodeListBytes))
    return "node list is not clean text of at most " + std::to_string(agent::kMaxNodeListBytes) +
           " bytes";
  if (s.gpus.size() > 1024 || s.gpus.find_first_not_of("0123456789,-") != std::string::npos)
    return "GPU list may hold only digits, ',' and '-'";
  if (!isCleanText(s.refusal, agent::kMaxRefusalBytes))
    return "refusal is not clean text of at most " + std::to_string(agent::kMaxRefusalBytes) +
           " bytes";
  return "";
}

void emit(const HandlerContext& ctx, const event::Event& e) {
  if (ctx.events != nullptr) ctx.events->emit(e);
}

int64_t monoUs() { return monoNs() / 1000; }

// A job with a limit on a node that reads no appliance uses none there.
std::string accelKind(const HandlerContext& ctx, const agent::JobRecord& r) {
  if (r.spec.ipus > 0) return "ipu";
  if (!r.devices.empty()) return "gpu";
  if (r.spec.appliance_time_sec > 0 && ctx.appliance) return "appliance";
  return "";
}

void emitPrologFinished(const HandlerContext& ctx, const agent::JobRequestSpec& spec,
                        const Result<agent::JobRecord>& r, int64_t started_us) {
  event::PrologFinished e{.job_id = spec.job_id};
  e.duration_us = static_cast<uint64_t>(std::max<int64_t>(0, monoUs() - started_us));
  if (r.ok()) {
    for (uint32_t d : r->devices) e.devices.push_back(std::to_string(d));
    // IPUs sit behind the fabric, not in the topology: name them by their
    // place in the job's partition. Every node of the job names them alike
    // (the aggregator counts them once).
    if (!r->ipu_partition.empty())
      for (uint32_t i = 0; i < r->spec.ipus; ++i)
        e.devices.push_back(r->ipu_partition + ":" + std::to_string(i));
    e.partition = r->ipu_partition;
    e.accel_kind = accelKind(ctx, *r);
    e.appliance_limit_s =
        r->spec.appliance_time_sec > 0 ? static_cast<uint64_t>(r->spec.appliance_time_sec) : 0;
    e.limit_unmeasured = !limitMeasurableHere(ctx, *r);
    if (e.limit_unmeasured)
      log::warning("prolog: job " + std::to_string(spec.job_id) + ": " + unmeasuredLimitLine(*r));
  } else {
    e.result = event::JobResult::kFailed;
    e.message = r.error().message();
  }
  emit(ctx, e);
}

// A node fault answered to a hook, kept with its time for `accelctl status`.
void noteNodeFault(const HandlerContext& ctx, const std::string& message) {
  if (ctx.health) ctx.health->nodeFault(message);
}

// A job this node can never serve because of the cluster's configuration:
// the job fails as for a user's mistake (the hook exits 0, so Slurm neither
// drains nor requeues), and the agent drains this node alone, with a reason
// naming the fault, so that no further job of that kind is sent here.
std::vector<uint8_t> configFault(const HandlerContext& ctx, const agent::JobRequestSpec& spec,
                                 const agent::KindFault& fault) {
  const std::string job = "prolog: job " + std::to_string(spec.job_id) + ": ";
  const bool drains = ctx.drainer != nullptr;
  log::error(job + fault.message +
             (drains ? " (the job fails; this node is drained)" : " (the job fails)"));
  if (ctx.health) ctx.health->configFault(fault.fault + (drains ? "; this node is drained" : ""));
  if (drains) ctx.drainer->drainOnce(spec.job_id, spec.node, fault.drainReason());
  FlatBufferBuilder fbb(512);
  auto message = fbb.CreateString(fault.message);
  fb::ReplyBuilder b(fbb);
  b.add_outcome(fb::Outcome::UserError);
  b.add_message(message);
  b.add_drains_node(drains);
  return finish(fbb, b.Finish());
}

std::vector<uint8_t> onProlog(const HandlerContext& ctx, const fb::PrologRequest* req) {
  if (req->job() == nullptr || req->job()->job_id() == 0)
    return simple(fb::Outcome::BadRequest, "prolog: no job id");
  auto spec = specOf(*req->job());
  if (auto why = badText(spec); !why.empty())
    return simple(fb::Outcome::BadRequest, "prolog: " + why);
  // The node list names nodes as Slurm does (NodeName), and so does
  // SLURMD_NODENAME; the host name stands in only when the hook gave none.
  if (spec.node.empty()) spec.node = ctx.node_name;
  // Found before the prolog, which fails with the same message. An IPU job's
  // task count is the plugin's (SPANK_ACCEL_NTASKS); without it, one GCD.
  const auto kind_fault = ctx.manager->kindFault(spec);
  if (spec.restart_count > 0 && spec.appliance_time_sec > 0 && ctx.earlier_runs_used_ns) {
    auto used = ctx.earlier_runs_used_ns(spec.job_id);
    if (used.ok()) {
      spec.carried_ns = *used;
    } else {
      spec.carry_note = "the appliance time the job's earlier runs used could not be read (" +
                        used.error().message() + "); this run starts with the whole limit";
      log::warning("prolog: job " + std::to_string(spec.job_id) + ": " + spec.carry_note);
    }
  }
  int64_t started_us = monoUs();
  emit(ctx, event::PrologStarted{.job_id = spec.job_id,
                                 .uid = spec.uid,
                                 .user = spec.user,
                                 .node_list = spec.node_list,
                                 .node_count = spec.node_count,
                                 .restart_count = spec.restart_count});
  auto r = ctx.manager->prolog(spec);
  emitPrologFinished(ctx, spec, r, started_us);
  if (!r.ok() && kind_fault && r.error().message() == kind_fault->message)
    return configFault(ctx, spec, *kind_fault);
  // The journal gets the same line slurmd logs from the hook's stderr.
  if (!r.ok())
    log::error("prolog: job " + std::to_string(spec.job_id) + ": " + r.error().message() +
               (r.error().code() == ErrorCode::kInvalidArgument
                    ? " (the job fails; the node stays up)"
                    : ""));
  if (r.ok() && ctx.appliance) ctx.appliance->jobsChanged();
  if (r.ok()) telemetryAtProlog(ctx, *r);
  if (!r.ok() && outcomeOf(r.error()) == fb::Outcome::NodeFault)
    noteNodeFault(ctx, "prolog: job " + std::to_string(spec.job_id) + ": " + r.error().message());
  if (!r.ok()) return simple(outcomeOf(r.error()), r.error().message());
  FlatBufferBuilder fbb(1024);
  auto info = jobInfo(fbb, *r);
  return finish(
      fbb, fb::CreateReplyDirect(fbb, fb::Outcome::Ok, "", fb::ReplyBody::JobInfo, info.Union()));
}

std::vector<uint8_t> onEpilog(const HandlerContext& ctx, const fb::EpilogRequest* req) {
  if (req->job_id() == 0) return simple(fb::Outcome::BadRequest, "epilog: no job id");
  int64_t started_us = monoUs();
  auto before = ctx.manager->job(req->job_id());  // the budget, read before the record goes
  // Before the GPUs are released: their last sample still counts for the job.
  auto gpu = before ? telemetryAtEpilog(ctx, req->job_id()) : std::nullopt;
  auto s = ctx.manager->epilog(req->job_id());
  if (!before && s.ok()) {
    // Nothing of the job was here (an epilog again, a job the agent never
    // saw, or one already ended on restart): its end has been told, or there
    // is none to tell.
    if (ctx.appliance) ctx.appliance->jobsChanged();
    return simple(fb::Outcome::Ok, "");
  }
  event::EpilogFinished e{.job_id = req->job_id()};
  e.duration_us = static_cast<uint64_t>(std::max<int64_t>(0, monoUs() - started_us));
  if (before) {
    e.restart_count = before->spec.restart_count;
    e.appliance_seconds =
        static_cast<uint64_t>(agent::usedAtEndNs(before->budget, jobClockNs()) / 1'000'000'000);
    if (before->budget.enforced_ns != 0) e.result = event::JobResult::kTimeLimit;
    e.gpu = std::move(gpu);
  }
  if (!s.ok()) {
    e.result = event::JobResult::kFailed;
    e.cleanup_ok = false;
    e.message = s.error().message();
  }
  emit(ctx, std::move(e));
  if (ctx.appliance) ctx.appliance->jobsChanged();
  if (!s.ok()) {
    log::error("epilog: job " + std::to_string(req->job_id()) + ": " + s.error().message());
    noteNodeFault(ctx, "epilog: job " + std::to_string(req->job_id()) + ": " + s.error().message());
    return simple(fb::Outcome::NodeFault, s.error().message());
  }
  return simple(fb::Outcome::Ok, "");
}

flatbuffers::Offset<fb::EventsStatus> eventsStatus(FlatBufferBuilder& fbb,
                                                   const std::string& aggregator,
                                                   const event::OutboxStats& s) {
  return fb::CreateEventsStatusDirect(fbb, aggregator.c_str(), s.link_up, s.backlog,
                                      s.spooled_bytes, s.sent, s.acked, s.dropped_telemetry,
                                      s.dropped_lifecycle, s.reconnects, s.held, s.io_errors);
}

// The job a node fault names: the daemon writes them as "prolog: job 42: ...".
std::optional<uint32_t> jobNamedIn(const std::string& message) {
  const auto at = message.find(": job ");
  if (at == std::string::npos || at == 0 ||
      message.find_first_not_of("abcdefghijklmnopqrstuvwxyz") != at)
    return std::nullopt;
  uint32_t id = 0;
  const char* p = message.c_str() + at + 6;
  const char* end = message.c_str() + message.size();
  auto [ptr, ec] = std::from_chars(p, end, id);
  if (ec != std::errc() || ptr == p || ptr == end || *ptr != ':') return std::nullopt;
  return id;
}

// What a caller may read of a node fault: all of it, unless it names a job
// that is not the caller's (which may be gone by now: then it is no longer
// anyone's to read).
std::string faultFor(const HandlerContext& ctx, const Caller& caller, const std::string& message) {
  if (isAdmin(ctx, caller)) return message;
  auto job = jobNamedIn(message);
  if (!job) return message;
  auto r = ctx.manager->job(*job);
  if (r && r->spec.uid == caller.uid) return message;
  return message.substr(0, message.find(": job ")) +
         ": a job of another user (root sees which and why)";
}

// Everyone may ask how the node is; a user reads only its own jobs in it:
// the job count is the caller's, devices held by others' jobs are left out
// (the in-use count still counts them), and faults of others' jobs say no
// more than that they happened.
std::vector<uint8_t> onStatus(const HandlerContext& ctx, const Caller& caller) {
  auto st = ctx.manager->stats();
  const HealthSnapshot health = ctx.health ? ctx.health->snapshot() : HealthSnapshot{};
  const bool admin = isAdmin(ctx, caller);
  uint32_t jobs = static_cast<uint32_t>(st.jobs);
  if (!admin) {
    auto all = ctx.manager->jobs();
    jobs = static_cast<uint32_t>(std::count_if(
        all.begin(), all.end(), [&](const auto& r) { return r.spec.uid == caller.uid; }));
  }
  auto mine = [&](uint32_t job_id) {
    if (admin || job_id == 0) return true;
    auto r = ctx.manager->job(job_id);
    return r && r->spec.uid == caller.uid;
  };
  FlatBufferBuilder fbb(2048);
  std::vector<flatbuffers::Offset<fb::DeviceUse>> use;
  for (const auto& d : ctx.manager->deviceUse())
    if (mine(d.job_id))
      use.push_back(
          fb::CreateDeviceUseDirect(fbb, d.index, d.name.c_str(), d.kind.c_str(), d.job_id));
  std::vector<flatbuffers::Offset<flatbuffers::String>> errors;
  for (const auto& e : st.last_errors) errors.push_back(fbb.CreateString(faultFor(ctx, caller, e)));
  std::vector<flatbuffers::Offset<fb::ControllerStatus>> controllers;
  for (const auto& c : health.controllers)
    controllers.push_back(fb::CreateControllerStatusDirect(
        fbb, c.name.c_str(), c.client.c_str(), c.call.c_str(), c.at_ns, c.ok, c.error.c_str(),
        c.last_ok_ns, c.calls, c.failures));
  std::vector<flatbuffers::Offset<fb::TimedError>> timed;
  for (const auto& e : health.errors)
    timed.push_back(
        fb::CreateTimedErrorDirect(fbb, e.at_ns, faultFor(ctx, caller, e.message).c_str()));
  // One reading of the stream's counters, for both the figures and the line.
  const auto stream = ctx.events != nullptr ? ctx.events->stats() : std::nullopt;
  auto events = stream ? eventsStatus(fbb, ctx.events->aggregator(), *stream) : 0;
  const std::string events_line = stream ? event::describe(*stream) : "";
  auto telemetry = telemetryStatus(fbb, ctx);
  auto gpu_faults = gpuFaultsStatus(fbb, ctx);
  auto info = fb::CreateStatusInfoDirect(
      fbb, ctx.version.c_str(), ctx.node_name.c_str(), ctx.started_ns, jobs,
      static_cast<uint32_t>(st.devices_total), static_cast<uint32_t>(st.devices_in_use),
      ctx.manager->inventorySource().c_str(), ctx.config_path.c_str(), &errors,
      stream ? events_line.c_str() : nullptr, &use, health.config_loaded_ns,
      health.config_error.c_str(), &controllers, events, &timed,
      health.process_tracking.empty() ? nullptr : health.process_tracking.c_str(), telemetry,
      gpu_faults.empty() ? nullptr : &gpu_faults);
  return finish(fbb, fb::CreateReplyDirect(fbb, fb::Outcome::Ok, "", fb::ReplyBody::StatusInfo,
                                           info.Union()));
}

std::vector<uint8_t> onJobs(const HandlerContext& ctx, const Caller& caller) {
  FlatBufferBuilder fbb(4096);
  std::vector<flatbuffers::Offset<fb::JobInfo>> jobs;
  for (const auto& r : ctx.manager->jobs())
    if (isAdmin(ctx, caller) || r.spec.uid == caller.uid) jobs.push_back(jobInfo(fbb, r, &ctx));
  auto list = fb::CreateJobListDirect(fbb, &jobs);
  return finish(
      fbb, fb::CreateReplyDirect(fbb, fb::Outcome::Ok, "", fb::ReplyBody::JobList, list.Union()));
}

std::vector<uint8_t> onJob(const HandlerContext& ctx, const Caller& caller, uint32_t job_id) {
  auto r = ctx.manager->job(job_id);
  // Another user's job reads as absent: existence of others' jobs is not leaked.
  if (!r || (!isAdmin(ctx, caller) && r->spec.uid != caller.uid))
    return simple(fb::Outcome::NotFound,
                  "job " + std::to_string(job_id) + " has nothing on this node");
  FlatBufferBuilder fbb(1024);
  auto info = jobInfo(fbb, *r, &ctx);
  return finish(
      fbb, fb::CreateReplyDirect(fbb, fb::Outcome::Ok, "", fb::ReplyBody::JobInfo, info.Union()));
}

std::vector<uint8_t> statusReply(const Status& s) {
  if (s.ok()) return simple(fb::Outcome::Ok, "");
  return simple(
      s.error().code() == ErrorCode::kNotFound ? fb::Outcome::NotFound : fb::Outcome::NodeFault,
      s.error().message());
}

std::vector<uint8_t> onTask(const HandlerContext& ctx, const fb::TaskRequest* t) {
  if (t->job_id() == 0 || t->pid() <= 0)
    return simple(fb::Outcome::BadRequest, "task: no job id or pid");
  if (t->kind() == fb::TaskEventKind::Started) {
    auto s = ctx.manager->taskStarted(t->job_id(),
                                      agent::TaskRef{t->step_id(), t->pid(), t->start_ticks()});
    if (s.ok())
      emit(ctx,
           event::TaskStarted{.job_id = t->job_id(), .step_id = t->step_id(), .pid = t->pid()});
    return statusReply(s);
  }
  auto s = ctx.manager->taskExited(t->job_id(), t->pid());
  if (s.ok())
    emit(ctx, event::TaskEnded{
                  .job_id = t->job_id(), .step_id = t->step_id(), .exit_code = t->exit_status()});
  return statusReply(s);
}

std::vector<uint8_t> onStep(const HandlerContext& ctx, const fb::StepRequest* st) {
  if (st->job_id() == 0) return simple(fb::Outcome::BadRequest, "step: no job id");
  if (st->kind() == fb::StepEventKind::Started) {
    auto s = ctx.manager->stepStarted(st->job_id(), st->step_id());
    if (s.ok()) emit(ctx, event::StepStarted{.job_id = st->job_id(), .step_id = st->step_id()});
    return statusReply(s);
  }
  auto s = ctx.manager->stepEnded(st->job_id(), st->step_id());
  if (s.ok()) emit(ctx, event::StepEnded{.job_id = st->job_id(), .step_id = st->step_id()});
  return statusReply(s);
}

// The name of a surrogate step: the appliance job's id, and -csxN when it
// holds N CS-X systems (seed 000).
std::vector<uint8_t> onSurrogate(const HandlerContext& ctx, const Caller& caller,
                                 const fb::SurrogateRequest* sr) {
  auto r = ctx.manager->job(sr->job_id());
  if (!r || (!isAdmin(ctx, caller) && r->spec.uid != caller.uid))
    return simple(fb::Outcome::NotFound,
                  "job " + std::to_string(sr->job_id()) + " has nothing on this node");
  const std::string id = sr->appliance_job() ? sr->appliance_job()->str() : "";
  if (!appliance::isValidJobId(id))
    return simple(fb::Outcome::BadRequest, "surrogate: not an appliance job id");
  std::vector<appliance::ApplianceJob> jobs;
  if (ctx.appliance) jobs = ctx.appliance->jobsOf(sr->job_id());
  auto it = std::find_if(jobs.begin(), jobs.end(), [&](const auto& a) { return a.id == id; });
  if (it == jobs.end())
    return simple(fb::Outcome::NotFound,
                  "surrogate: " + id + " is not an appliance job of this job");
  (void)ctx.manager->surrogateStepStarted(sr->job_id(), sr->step_id());
  if (ctx.appliance) ctx.appliance->surrogateStarted(id);
  emit(ctx, event::StepStarted{.job_id = sr->job_id(),
                               .step_id = sr->step_id(),
                               .name = surrogateStepName(*it),
                               .surrogate = true});
  return simple(fb::Outcome::Ok, "");
}

}  // namespace

std::vector<uint8_t> errorReply(uint8_t outcome, const std::string& message) {
  return simple(static_cast<fb::Outcome>(outcome), message);
}

namespace {

// One row of the request table: who may ask, what answers, and for the
// hooks, where their duration is noted (accel_hook_duration_seconds).
struct Route {
  fb::RequestBody kind;
  bool admin_only;
  const char* refused;  // the reply to a user, when admin_only
  Dispatched (*handle)(const HandlerContext& ctx, const Caller& caller, const fb::Request& req);
  metrics::Histogram& (*timed)(AgentMetrics& m);  // null: not a hook
};

Dispatched replied(std::vector<uint8_t> reply) { return Dispatched{std::move(reply), {}}; }

constexpr Route kRoutes[] = {
    {fb::RequestBody::PrologRequest, true,
     "only root and SlurmUser may run the prolog (slurmd runs it as Prolog=); by hand, run it as "
     "root",
     [](const HandlerContext& ctx, const Caller&, const fb::Request& r) {
       return replied(onProlog(ctx, r.body_as_PrologRequest()));
     },
     [](AgentMetrics& m) -> metrics::Histogram& { return m.prolog_seconds; }},
    {fb::RequestBody::EpilogRequest, true,
     "only root and SlurmUser may run the epilog (slurmd runs it as Epilog=); by hand, run it as "
     "root",
     [](const HandlerContext& ctx, const Caller&, const fb::Request& r) {
       return replied(onEpilog(ctx, r.body_as_EpilogRequest()));
     },
     [](AgentMetrics& m) -> metrics::Histogram& { return m.epilog_seconds; }},
    {fb::RequestBody::StatusRequest, false, nullptr,
     [](const HandlerContext& ctx, const Caller& c, const fb::Request&) {
       return replied(onStatus(ctx, c));
     },
     nullptr},
    {fb::RequestBody::JobsRequest, false, nullptr,
     [](const HandlerContext& ctx, const Caller& c, const fb::Request&) {
       return replied(onJobs(ctx, c));
     },
     nullptr},
    {fb::RequestBody::JobRequest, false, nullptr,
     [](const HandlerContext& ctx, const Caller& c, const fb::Request& r) {
       return replied(onJob(ctx, c, r.body_as_JobRequest()->job_id()));
     },
     nullptr},
    {fb::RequestBody::TaskRequest, true, "task reports come from slurmstepd",
     [](const HandlerContext& ctx, const Caller&, const fb::Request& r) {
       return replied(onTask(ctx, r.body_as_TaskRequest()));
     },
     nullptr},
    {fb::RequestBody::StepRequest, true, "step reports come from slurmstepd",
     [](const HandlerContext& ctx, const Caller&, const fb::Request& r) {
       return replied(onStep(ctx, r.body_as_StepRequest()));
     },
     nullptr},
    {fb::RequestBody::SurrogateRequest, false, nullptr,
     [](const HandlerContext& ctx, const Caller& c, const fb::Request& r) {
       return replied(onSurrogate(ctx, c, r.body_as_SurrogateRequest()));
     },
     nullptr},
    {fb::RequestBody::EventsRequest, false, nullptr,
     [](const HandlerContext& ctx, const Caller&, const fb::Request& r) {
       return relayEvents(ctx, r.body_as_EventsRequest());
     },
     nullptr},
    {fb::RequestBody::ReportRequest, false, nullptr,
     [](const HandlerContext& ctx, const Caller&, const fb::Request& r) {
       return relayReport(ctx, r.body_as_ReportRequest());
     },
     nullptr},
    {fb::RequestBody::ClearFaultRequest, true,
     "only root and SlurmUser may clear the node's GPU faults",
     [](const HandlerContext& ctx, const Caller&, const fb::Request&) {
       return replied(clearFaultReply(ctx));
     },
     nullptr},
};

const Route* routeOf(fb::RequestBody kind) {
  for (const auto& r : kRoutes)
    if (r.kind == kind) return &r;
  return nullptr;
}

}  // namespace

Dispatched dispatchRequest(const HandlerContext& ctx, const Caller& caller,
                           std::span<const uint8_t> bytes) {
  auto verified = ipc::verifyRequest(bytes);
  if (!verified.ok()) return replied(simple(fb::Outcome::BadRequest, verified.error().message()));
  const fb::Request* req = *verified;
  const Route* route = routeOf(req->body_type());
  if (route == nullptr) return replied(simple(fb::Outcome::BadRequest, "unknown request kind"));
  if (route->admin_only && !isAdmin(ctx, caller))
    return replied(simple(fb::Outcome::PermissionDenied, route->refused));
  if (route->timed == nullptr || ctx.metrics == nullptr) return route->handle(ctx, caller, *req);
  const auto start = std::chrono::steady_clock::now();
  auto out = route->handle(ctx, caller, *req);
  route->timed(*ctx.metrics)
      .observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return out;
}

std::vector<uint8_t> handleRequest(const HandlerContext& ctx, const Caller& caller,
                                   std::span<const uint8_t> request) {
  auto out = dispatchRequest(ctx, caller, request);
  if (out.relay)  // only with ctx.relay_events, which the caller then serves
    return simple(fb::Outcome::BadRequest, "events are relayed, not answered here");
  return std::move(out.reply);
}

}  // namespace accel::agentd
