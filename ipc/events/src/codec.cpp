// Values <-> events.fbs. Encoding is a visitor over the Event variant;
// decoding switches on the union tag after the verifier has passed.
#include "accel/events/codec.h"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>

#include "accel/schemas/events_generated.h"

namespace accel::event {
namespace fb = ::accel::events;  // the generated schema code
namespace {

constexpr const char* kAckIdentifier = "ACAK";
constexpr const char* kNackIdentifier = "ACNK";
// Bounds for the verifier: events are flat, so a deep or wide buffer is hostile.
constexpr flatbuffers::uoffset_t kMaxDepth = 8;
constexpr flatbuffers::uoffset_t kMaxTables = 4096;

using Fbb = flatbuffers::FlatBufferBuilder;
using Union = flatbuffers::Offset<void>;

template <typename E, typename F>
E castEnum(F v) {
  return static_cast<E>(static_cast<uint8_t>(v));
}

flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>> strings(
    Fbb& b, const std::vector<std::string>& v) {
  return b.CreateVectorOfStrings(v);
}

int64_t orMinusOne(const std::optional<uint64_t>& v) {
  return v ? static_cast<int64_t>(std::min<uint64_t>(*v, INT64_MAX)) : -1;
}

// A job's GPU figures, within the schema's bounds (GpuFigures::kMax*): the
// processes past the bound are only counted.
flatbuffers::Offset<fb::GpuFigures> encodeGpu(Fbb& b, const GpuFigures& g) {
  std::vector<flatbuffers::Offset<fb::GpuDeviceFigures>> devices;
  for (const auto& d : g.devices) {
    if (devices.size() == GpuFigures::kMaxDevices) break;
    devices.push_back(fb::CreateGpuDeviceFigures(b, d.index, b.CreateString(d.pci_bus_id),
                                                 b.CreateString(d.uuid), d.samples, d.util_mean_pct,
                                                 d.util_max_pct, orMinusOne(d.memory_used_max_mib),
                                                 d.energy_j ? *d.energy_j : -1.0));
  }
  std::vector<flatbuffers::Offset<fb::GpuProcessFigures>> processes;
  for (const auto& p : g.processes) {
    if (processes.size() == GpuFigures::kMaxProcesses) break;
    processes.push_back(
        fb::CreateGpuProcessFigures(b, p.pid, p.device_index, orMinusOne(p.memory_max_mib)));
  }
  const size_t over = g.processes.size() - processes.size();
  return fb::CreateGpuFigures(b, g.samples, b.CreateVector(devices), b.CreateVector(processes),
                              g.processes_left_out + static_cast<uint32_t>(over));
}

std::optional<uint64_t> unlessNegative(int64_t v) {
  return v < 0 ? std::nullopt : std::optional<uint64_t>(static_cast<uint64_t>(v));
}

std::optional<GpuFigures> decodeGpu(const fb::GpuFigures* g) {
  if (g == nullptr) return std::nullopt;
  GpuFigures out;
  out.samples = g->samples();
  out.processes_left_out = g->processes_left_out();
  if (g->devices())
    for (const auto* d : *g->devices()) {
      GpuDeviceFigures f;
      f.index = d->index();
      if (d->pci_bus_id()) f.pci_bus_id = d->pci_bus_id()->str();
      if (d->uuid()) f.uuid = d->uuid()->str();
      f.samples = d->samples();
      f.util_mean_pct = d->util_mean_pct();
      f.util_max_pct = d->util_max_pct();
      f.memory_used_max_mib = unlessNegative(d->memory_used_max_mib());
      if (d->energy_j() >= 0) f.energy_j = d->energy_j();
      out.devices.push_back(std::move(f));
    }
  if (g->processes())
    for (const auto* p : *g->processes())
      out.processes.push_back(
          GpuProcessFigures{p->pid(), p->device_index(), unlessNegative(p->memory_max_mib())});
  return out;
}

struct Encoder {
  Fbb& b;
  Union operator()(const PrologStarted& e) {
    return fb::CreatePrologStarted(b, e.job_id, e.uid, b.CreateString(e.user),
                                   b.CreateString(e.node_list), e.node_count, e.restart_count)
        .Union();
  }
  Union operator()(const PrologFinished& e) {
    auto devices = strings(b, e.devices);
    return fb::CreatePrologFinished(b, e.job_id, castEnum<fb::JobResult>(e.result), devices,
                                    b.CreateString(e.partition), e.duration_us,
                                    b.CreateString(e.message), b.CreateString(e.accel_kind),
                                    e.appliance_limit_s, e.limit_unmeasured)
        .Union();
  }
  Union operator()(const EpilogFinished& e) {
    auto gpu = e.gpu ? encodeGpu(b, *e.gpu) : flatbuffers::Offset<fb::GpuFigures>();
    return fb::CreateEpilogFinished(b, e.job_id, castEnum<fb::JobResult>(e.result), e.duration_us,
                                    b.CreateString(e.message), e.cleanup_ok, e.appliance_seconds,
                                    e.restart_count, gpu)
        .Union();
  }
  Union operator()(const AgentStarted& e) {
    return fb::CreateAgentStarted(b, b.CreateString(e.version), e.jobs_recovered).Union();
  }
  Union operator()(const TaskStarted& e) {
    return fb::CreateTaskStarted(b, e.job_id, e.step_id, e.task_id, e.pid).Union();
  }
  Union operator()(const TaskEnded& e) {
    return fb::CreateTaskEnded(b, e.job_id, e.step_id, e.task_id, e.exit_code).Union();
  }
  Union operator()(const StepStarted& e) {
    return fb::CreateStepStarted(b, e.job_id, e.step_id, b.CreateString(e.name), e.surrogate)
        .Union();
  }
  Union operator()(const StepEnded& e) {
    return fb::CreateStepEnded(b, e.job_id, e.step_id, e.exit_code).Union();
  }
  Union operator()(const ApplianceJobChanged& e) {
    return fb::CreateApplianceJobChanged(b, e.job_id, b.CreateString(e.appliance_job),
                                         castEnum<fb::ApplianceState>(e.state), e.csx_count,
                                         e.seconds_used)
        .Union();
  }
  Union operator()(const TimeLimitWarning& e) {
    return fb::CreateTimeLimitWarning(b, e.job_id, e.limit_s, e.remaining_s).Union();
  }
  Union operator()(const TimeLimitEnforced& e) {
    return fb::CreateTimeLimitEnforced(b, e.job_id, e.limit_s, e.used_s).Union();
  }
  Union operator()(const NodeHeartbeat& e) {
    return fb::CreateNodeHeartbeat(b, e.accelerators, e.accelerators_busy,
                                   b.CreateString(e.accel_kind), e.jobs, e.backlog, e.interval_s)
        .Union();
  }
  Union operator()(const GpuProgress& e) {
    auto gpu = encodeGpu(b, e.gpu);
    return fb::CreateGpuProgress(b, e.job_id, e.idle_s, gpu).Union();
  }
  Union operator()(const GpuXid& e) {
    return fb::CreateGpuXid(b, e.job_id, e.code, b.CreateString(e.gpu_class),
                            b.CreateString(e.pci_bus_id), e.gpu, e.pid,
                            b.CreateString(e.text.substr(0, GpuXid::kMaxText)), e.drained)
        .Union();
  }
  Union operator()(const JobIdle& e) {
    std::vector<uint32_t> devices(
        e.devices.begin(), e.devices.begin() + std::min(e.devices.size(), JobIdle::kMaxDevices));
    return fb::CreateJobIdle(b, e.job_id, e.idle_s, b.CreateVector(devices),
                             castEnum<fb::IdleAction>(e.action), e.told_job)
        .Union();
  }
};

std::string str(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

std::vector<std::string> strs(
    const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* v) {
  std::vector<std::string> out;
  if (v)
    for (const auto* s : *v) out.push_back(str(s));
  return out;
}

// The verifier accepts a union whose tag is set but whose table is absent,
// so that case is checked first; past it, event_as_X for the tag is non-null.
std::optional<Event> decodeEvent(const fb::Envelope& env) {
  using T = fb::Event;
  if (env.event() == nullptr) return std::nullopt;
  switch (env.event_type()) {
    case T::PrologStarted: {
      auto* e = env.event_as_PrologStarted();
      return PrologStarted{e->job_id(),         e->uid(),        str(e->user()),
                           str(e->node_list()), e->node_count(), e->restart_count()};
    }
    case T::PrologFinished: {
      auto* e = env.event_as_PrologFinished();
      return PrologFinished{e->job_id(),          castEnum<JobResult>(e->result()),
                            strs(e->devices()),   str(e->partition()),
                            e->duration_us(),     str(e->message()),
                            str(e->accel_kind()), e->appliance_limit_s(),
                            e->limit_unmeasured()};
    }
    case T::EpilogFinished: {
      auto* e = env.event_as_EpilogFinished();
      return EpilogFinished{e->job_id(),        castEnum<JobResult>(e->result()),
                            e->duration_us(),   str(e->message()),
                            e->cleanup_ok(),    e->appliance_seconds(),
                            e->restart_count(), decodeGpu(e->gpu())};
    }
    case T::AgentStarted: {
      auto* e = env.event_as_AgentStarted();
      return AgentStarted{str(e->version()), e->jobs_recovered()};
    }
    case T::TaskStarted: {
      auto* e = env.event_as_TaskStarted();
      return TaskStarted{e->job_id(), e->step_id(), e->task_id(), e->pid()};
    }
    case T::TaskEnded: {
      auto* e = env.event_as_TaskEnded();
      return TaskEnded{e->job_id(), e->step_id(), e->task_id(), e->exit_code()};
    }
    case T::StepStarted: {
      auto* e = env.event_as_StepStarted();
      return StepStarted{e->job_id(), e->step_id(), str(e->name()), e->surrogate()};
    }
    case T::StepEnded: {
      auto* e = env.event_as_StepEnded();
      return StepEnded{e->job_id(), e->step_id(), e->exit_code()};
    }
    case T::ApplianceJobChanged: {
      auto* e = env.event_as_ApplianceJobChanged();
      return ApplianceJobChanged{e->job_id(), str(e->appliance_job()),
                                 castEnum<ApplianceState>(e->state()), e->csx_count(),
                                 e->seconds_used()};
    }
    case T::TimeLimitWarning: {
      auto* e = env.event_as_TimeLimitWarning();
      return TimeLimitWarning{e->job_id(), e->limit_s(), e->remaining_s()};
    }
    case T::TimeLimitEnforced: {
      auto* e = env.event_as_TimeLimitEnforced();
      return TimeLimitEnforced{e->job_id(), e->limit_s(), e->used_s()};
    }
    case T::NodeHeartbeat: {
      auto* e = env.event_as_NodeHeartbeat();
      return NodeHeartbeat{e->accelerators(), e->accelerators_busy(), str(e->accel_kind()),
                           e->jobs(),         e->backlog(),           e->interval_s()};
    }
    case T::GpuProgress: {
      auto* e = env.event_as_GpuProgress();
      return GpuProgress{e->job_id(), e->idle_s(), decodeGpu(e->gpu()).value_or(GpuFigures{})};
    }
    case T::GpuXid: {
      // A node's words, bounded here too: the text as the agent bounds it,
      // the class and bus id to what they can be.
      auto* e = env.event_as_GpuXid();
      return GpuXid{e->job_id(),
                    e->code(),
                    str(e->class_()).substr(0, 16),
                    str(e->pci_bus_id()).substr(0, 32),
                    e->gpu(),
                    e->pid(),
                    str(e->text()).substr(0, GpuXid::kMaxText),
                    e->drained()};
    }
    case T::JobIdle: {
      auto* e = env.event_as_JobIdle();
      JobIdle out{e->job_id(), e->idle_s(), {}, castEnum<IdleAction>(e->action()), e->told_job()};
      // An action a later agent added reads as none; the list as the agent bounds it.
      if (static_cast<uint8_t>(out.action) > static_cast<uint8_t>(IdleAction::kCancelFailed))
        out.action = IdleAction::kNone;
      if (e->devices() != nullptr)
        for (uint32_t d : *e->devices()) {
          if (out.devices.size() == JobIdle::kMaxDevices) break;
          out.devices.push_back(d);
        }
      return out;
    }
    default:
      return std::nullopt;  // NONE or a kind added after this build
  }
}

// FlatBuffers reads its offsets in place and wants them aligned; a ZeroMQ
// frame or a spool record may start anywhere, so such bytes are copied
// (only when misaligned, and never more than an envelope may hold).
std::span<const uint8_t> aligned(std::span<const uint8_t> input, std::vector<uint8_t>& store) {
  if (reinterpret_cast<uintptr_t>(input.data()) % alignof(std::max_align_t) == 0 ||
      input.size() > kMaxEnvelopeBytes)
    return input;
  store.assign(input.begin(), input.end());
  return store;
}

Result<const fb::Envelope*> verified(std::span<const uint8_t> bytes) {
  if (bytes.size() > kMaxEnvelopeBytes)
    return Error(ErrorCode::kParse,
                 "envelope of " + std::to_string(bytes.size()) + " bytes is over the limit");
  flatbuffers::Verifier v(bytes.data(), bytes.size(), kMaxDepth, kMaxTables);
  if (!fb::VerifyEnvelopeBuffer(v)) return Error(ErrorCode::kParse, "not a valid event envelope");
  const auto* env = fb::GetEnvelope(bytes.data());
  if (env->node() == nullptr || env->node()->size() == 0)
    return Error(ErrorCode::kParse, "envelope without a node name");
  if (env->seq() == 0) return Error(ErrorCode::kParse, "envelope with sequence number 0");
  return env;
}

// An Envelope read as far as its header: the verifier checks the table,
// node, epoch and seq, and nothing of the event.
struct EnvelopeHeader : private flatbuffers::Table {
  bool Verify(flatbuffers::Verifier& v) const {
    return VerifyTableStart(v) && VerifyOffset(v, fb::Envelope::VT_NODE) &&
           v.VerifyString(node()) && VerifyField<uint64_t>(v, fb::Envelope::VT_EPOCH, 8) &&
           VerifyField<uint64_t>(v, fb::Envelope::VT_SEQ, 8) && v.EndTable();
  }
  const flatbuffers::String* node() const {
    return GetPointer<const flatbuffers::String*>(fb::Envelope::VT_NODE);
  }
  uint64_t epoch() const { return GetField<uint64_t>(fb::Envelope::VT_EPOCH, 0); }
  uint64_t seq() const { return GetField<uint64_t>(fb::Envelope::VT_SEQ, 0); }
};

Header headerOf(const fb::Envelope& env) {
  return Header{env.node()->str(), env.epoch(), env.seq(), env.time_ns(), env.mono_ns()};
}

}  // namespace

std::vector<uint8_t> encode(const Header& header, const Event& event) {
  Fbb b(256);
  Union body = std::visit(Encoder{b}, event);
  auto node = b.CreateString(header.node);
  auto type = static_cast<fb::Event>(event.index() + 1);
  auto env = fb::CreateEnvelope(b, node, header.epoch, header.seq, header.time_ns, type, body,
                                castEnum<fb::Priority>(priorityOf(event)), header.mono_ns);
  b.Finish(env, fb::EnvelopeIdentifier());
  return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
}

Result<Envelope> decode(std::span<const uint8_t> input) {
  std::vector<uint8_t> store;
  auto bytes = aligned(input, store);
  auto env = verified(bytes);
  if (!env.ok()) return env.error();
  Envelope out;
  out.header = headerOf(**env);
  out.priority =
      (*env)->priority() == fb::Priority::Telemetry ? Priority::kTelemetry : Priority::kLifecycle;
  out.event = decodeEvent(**env);
  return out;
}

Result<Header> decodeHeader(std::span<const uint8_t> input) {
  std::vector<uint8_t> store;
  auto bytes = aligned(input, store);
  auto env = verified(bytes);
  if (!env.ok()) return env.error();
  return headerOf(**env);
}

std::vector<uint8_t> encodeAck(const Ack& ack) {
  Fbb b(64);
  b.Finish(fb::CreateAck(b, ack.epoch, ack.seq), kAckIdentifier);
  return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
}

Result<Ack> decodeAck(std::span<const uint8_t> input) {
  if (input.size() > 1024) return Error(ErrorCode::kParse, "ack too large");
  std::vector<uint8_t> store;
  auto bytes = aligned(input, store);
  flatbuffers::Verifier v(bytes.data(), bytes.size(), kMaxDepth, 16);
  if (!v.VerifyBuffer<fb::Ack>(kAckIdentifier)) return Error(ErrorCode::kParse, "not a valid ack");
  const auto* a = flatbuffers::GetRoot<fb::Ack>(bytes.data());
  return Ack{a->epoch(), a->seq()};
}

Result<Header> peekHeader(std::span<const uint8_t> input) {
  if (input.size() > kMaxEnvelopeBytes)
    input = input.first(kMaxEnvelopeBytes);  // a header sits near the start
  std::vector<uint8_t> store;
  auto bytes = aligned(input, store);
  flatbuffers::Verifier v(bytes.data(), bytes.size(), kMaxDepth, kMaxTables);
  if (!v.VerifyBuffer<EnvelopeHeader>(fb::EnvelopeIdentifier()))
    return Error(ErrorCode::kParse, "no readable envelope header");
  const auto* h = flatbuffers::GetRoot<EnvelopeHeader>(bytes.data());
  if (h->node() == nullptr || h->node()->size() == 0 || h->seq() == 0)
    return Error(ErrorCode::kParse, "envelope header without node or sequence number");
  return Header{h->node()->str(), h->epoch(), h->seq(), 0, 0};
}

const char* nackReasonName(NackReason reason) {
  switch (reason) {
    case NackReason::kUnreadable:
      return "unreadable";
    case NackReason::kOversized:
      return "oversized";
    case NackReason::kInvalid:
      return "invalid";
    case NackReason::kNodeMismatch:
      return "node mismatch";
    case NackReason::kNotOnJob:
      return "node not on the job";
    case NackReason::kKeyRevoked:
      return "key no longer allowed";
  }
  return "unknown";
}

std::vector<uint8_t> encodeNack(const Nack& nack) {
  Fbb b(128 + kMaxNackMessage);
  auto message = b.CreateString(nack.message.substr(0, kMaxNackMessage));
  b.Finish(fb::CreateNack(b, nack.epoch, nack.seq, castEnum<fb::NackReason>(nack.reason),
                          nack.skipped, message),
           kNackIdentifier);
  return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
}

Result<Nack> decodeNack(std::span<const uint8_t> input) {
  if (input.size() > 1024) return Error(ErrorCode::kParse, "nack too large");
  std::vector<uint8_t> store;
  auto bytes = aligned(input, store);
  flatbuffers::Verifier v(bytes.data(), bytes.size(), kMaxDepth, 16);
  if (!v.VerifyBuffer<fb::Nack>(kNackIdentifier))
    return Error(ErrorCode::kParse, "not a valid nack");
  const auto* n = flatbuffers::GetRoot<fb::Nack>(bytes.data());
  auto reason = static_cast<uint8_t>(n->reason());
  if (reason > static_cast<uint8_t>(NackReason::kKeyRevoked))
    reason = static_cast<uint8_t>(NackReason::kInvalid);
  return Nack{n->epoch(), n->seq(), static_cast<NackReason>(reason), n->skipped(),
              str(n->message())};
}

}  // namespace accel::event
