#include "accel/aggregator/summary.h"

#include <algorithm>
#include <climits>
#include <iterator>
#include <nlohmann/json.hpp>

namespace accel::aggregator {
namespace {

using Json = nlohmann::json;
using event::JobResult;

// Worse results win: a job that failed anywhere failed.
int severity(JobResult r) {
  switch (r) {
    case JobResult::kOk:
      return 0;
    case JobResult::kCancelled:
      return 1;
    case JobResult::kTimeLimit:
      return 2;
    case JobResult::kFailed:
      return 3;
  }
  return 3;
}

void worsen(JobSummary& s, JobResult r) {
  if (severity(r) > severity(s.result)) s.result = r;
}

void addKind(JobSummary& s, const std::string& kind) {
  if (kind.empty() || s.accel_kind == kind) return;
  s.accel_kind = s.accel_kind.empty() ? kind : "mixed";
}

void keepMax(uint64_t& value, uint64_t seen) { value = std::max(value, seen); }

// The appliance seconds `node` reported for run `run` of the job.
uint64_t& runSecondsOf(JobSummary& s, const std::string& node, uint32_t run) {
  run = std::min(run, JobSummary::kMaxRun);
  return run == 0 ? s.appliance_s[node] : s.run_appliance_s[run][node];
}

// A run the job's events name: the latest seen, and the one `node` is in.
bool noteRun(JobSummary& s, const std::string& node, uint32_t run) {
  run = std::min(run, JobSummary::kMaxRun);
  bool changed = run > s.restarts;
  s.restarts = std::max(s.restarts, run);
  uint32_t& at = s.node_run[node];
  changed = changed || run > at;
  at = std::max(at, run);
  return changed;
}

void listNodes(JobSummary& s) { s.listed_nodes = *usableNodeList(s.node_list, s.node_count); }

// The accelerators the job was given: its partition's IPUs, and the devices
// of each node in the job's latest run. A requeued job that ran on other
// nodes before had its earlier nodes' devices then, not on top of these.
void recount(JobSummary& s) {
  uint64_t count = s.partition_devices.size();
  for (const auto& [n, devices] : s.local_devices) {
    auto run = s.node_run.find(n);
    if ((run == s.node_run.end() ? 0 : run->second) == s.restarts) count += devices;
  }
  s.accel_count = static_cast<uint32_t>(std::min<uint64_t>(count, UINT32_MAX));
}

// IPUs sit in a partition that every node of the job reports whole
// ("p42:0".."p42:N-1"), so they count once; any other device is the node's
// own and counts for that node. Maxima and a set: a repeated prolog result
// changes nothing.
void addDevices(JobSummary& s, const std::string& node, const event::PrologFinished& e) {
  std::string prefix = e.partition.empty() ? std::string() : e.partition + ":";
  uint32_t local = 0;
  for (const auto& d : e.devices) {
    if (!prefix.empty() && d.starts_with(prefix))
      s.partition_devices.insert(d);
    else
      ++local;
  }
  if (local > 0) {
    auto& mine = s.local_devices[node];
    mine = std::max(mine, local);
  }
  recount(s);
}

// At most `max` bytes of `text`, cut before a UTF-8 sequence rather than in
// it, with "..." when something was cut.
std::string bounded(const std::string& text, size_t max) {
  if (text.size() <= max) return text;
  size_t n = max - 3;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return text.substr(0, n) + "...";
}

// A node's prolog failure, kept for the comment. The set is bounded by
// name, not by arrival, so the same failures give the same summary in any
// order: the kMaxErrorNodes first names stay.
void noteError(JobSummary& s, const std::string& node, const std::string& message) {
  if (message.empty()) return;
  s.errors[node] = bounded(message, JobSummary::kMaxErrorBytes);
  while (s.errors.size() > JobSummary::kMaxErrorNodes) s.errors.erase(std::prev(s.errors.end()));
}

// Each handler returns whether it may have changed the summary.
struct Merger {
  JobSummary& s;
  const std::string& node;
  int64_t received_ns;
  // Every node sends the same count and list; the first list given is kept.
  bool operator()(const event::PrologStarted& e) {
    const bool new_run = noteRun(s, node, e.restart_count);
    if (new_run) recount(s);
    if (!s.listed_nodes.empty()) {  // a later run's list, let in by admit()
      size_t before = s.later_nodes.size();
      for (const auto& n : *usableNodeList(e.node_list, e.node_count))
        if (!s.listed_nodes.contains(n)) s.later_nodes.insert(n);
      return s.later_nodes.size() != before || new_run;
    }
    bool changed = e.node_count > s.node_count || (s.node_list.empty() && !e.node_list.empty());
    if (!changed) return new_run;
    s.node_count = std::max(s.node_count, e.node_count);
    if (s.node_list.empty()) s.node_list = e.node_list;
    listNodes(s);
    return true;
  }
  bool operator()(const event::PrologFinished& e) {
    worsen(s, e.result);
    if (e.result == JobResult::kFailed) noteError(s, node, e.message);
    addKind(s, e.accel_kind);
    addDevices(s, node, e);
    if (!e.partition.empty()) s.partition = e.partition;
    keepMax(s.appliance_limit_s, e.appliance_limit_s);
    if (e.limit_unmeasured) s.limit_unmeasured.insert(node);
    return true;
  }
  bool operator()(const event::EpilogFinished& e) {
    worsen(s, e.result);
    s.epilog_nodes.insert(node);
    if (!e.cleanup_ok) s.cleanup_failed.insert(node);
    bool first = s.first_epilog_ns == 0 || received_ns < s.first_epilog_ns;
    if (received_ns > 0 && first) s.first_epilog_ns = received_ns;
    s.last_epilog_ns = std::max(s.last_epilog_ns, received_ns);
    if (noteRun(s, node, e.restart_count)) recount(s);
    uint32_t& ended = s.epilog_run[node];
    ended = std::max(ended, std::min(e.restart_count, JobSummary::kMaxRun));
    keepMax(runSecondsOf(s, node, e.restart_count), e.appliance_seconds);
    if (e.gpu) mergeGpu(s.gpu, node, *e.gpu);
    return true;
  }
  // A node's figures so far; none once that node's epilog of its current run is in.
  bool operator()(const event::GpuProgress& e) {
    if (auto ended = s.epilog_run.find(node); ended != s.epilog_run.end() &&
                                              s.epilog_nodes.contains(node) &&
                                              ended->second >= s.node_run[node])
      return false;
    return mergeProgress(s.live_gpu, node, e, received_ns);
  }
  bool operator()(const event::GpuXid& e) { return mergeXid(s.xid, node, e); }
  // A job a node cancelled for idle accelerators ended cancelled.
  bool operator()(const event::JobIdle& e) {
    if (e.action == event::IdleAction::kCancel) worsen(s, JobResult::kCancelled);
    return mergeIdle(s.idle, node, e);
  }
  bool operator()(const event::StepStarted& e) {
    return e.surrogate && s.surrogate_steps.insert(e.step_id).second;
  }
  bool operator()(const event::ApplianceJobChanged& e) {
    keepMax(runSecondsOf(s, node, s.node_run[node]), e.seconds_used);
    return true;
  }
  bool operator()(const event::TimeLimitWarning& e) {
    keepMax(s.appliance_limit_s, e.limit_s);
    return true;
  }
  bool operator()(const event::TimeLimitEnforced& e) {
    worsen(s, JobResult::kTimeLimit);
    keepMax(s.appliance_limit_s, e.limit_s);
    keepMax(runSecondsOf(s, node, s.node_run[node]), e.used_s);
    return true;
  }
  template <typename Other>
  bool operator()(const Other&) {
    return false;
  }  // tasks, steps' ends, node-wide events
};

// Held envelopes in the state: lowercase hex, two digits a byte.
std::string toHex(const std::vector<uint8_t>& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) out += {kDigits[b >> 4], kDigits[b & 0xf]};
  return out;
}

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

Json heldJson(const std::vector<HeldEvent>& held) {
  Json out = Json::array();
  for (const auto& h : held)
    out.push_back(
        {{"node", h.node}, {"received_ns", h.received_ns}, {"envelope", toHex(h.envelope)}});
  return out;
}

// Throws Json::exception (as the other fields' readers do) on a wrong shape.
std::vector<HeldEvent> heldFrom(const Json& j) {
  std::vector<HeldEvent> out;
  for (const auto& e : j.get_ref<const Json::array_t&>()) {
    HeldEvent h{e.at("node").get<std::string>(), e.at("received_ns").get<int64_t>(), {}};
    const auto& hex = e.at("envelope").get_ref<const std::string&>();
    if (hex.size() % 2 != 0) throw Json::other_error::create(501, "held envelope: odd hex", &e);
    for (size_t i = 0; i < hex.size(); i += 2) {
      int hi = hexDigit(hex[i]), lo = hexDigit(hex[i + 1]);
      if (hi < 0 || lo < 0) throw Json::other_error::create(501, "held envelope: not hex", &e);
      h.envelope.push_back(static_cast<uint8_t>(hi << 4 | lo));
    }
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace

std::vector<uint64_t> JobSummary::runSeconds() const {
  const uint32_t last = std::min(restarts, kMaxRun);
  std::vector<uint64_t> out(static_cast<size_t>(last) + 1, 0);
  for (const auto& [node, s] : appliance_s) out[0] = std::max(out[0], s);
  for (const auto& [run, by_node] : run_appliance_s)
    for (const auto& [node, s] : by_node)
      if (run <= last) out[run] = std::max(out[run], s);
  return out;
}

uint64_t JobSummary::applianceSeconds() const {
  uint64_t total = 0;
  for (uint64_t s : runSeconds()) total += s;
  return total;
}

bool JobSummary::complete() const {
  if (node_count == 0) return !epilog_nodes.empty();
  if (!listed_nodes.empty())
    return std::includes(epilog_nodes.begin(), epilog_nodes.end(), listed_nodes.begin(),
                         listed_nodes.end());
  return epilog_nodes.size() >= node_count;
}

std::set<std::string> JobSummary::allNodes() const {
  std::set<std::string> all = nodes;
  all.insert(listed_nodes.begin(), listed_nodes.end());
  return all;
}

std::set<std::string> JobSummary::missingNodes() const {
  std::set<std::string> missing;
  if (complete()) return missing;
  const auto& expected = listed_nodes.empty() ? nodes : listed_nodes;
  std::set_difference(expected.begin(), expected.end(), epilog_nodes.begin(), epilog_nodes.end(),
                      std::inserter(missing, missing.end()));
  return missing;
}

bool JobSummary::mayReport(const std::string& node) const {
  if (listed_nodes.contains(node) || later_nodes.contains(node)) return true;
  if (!listed_nodes.empty()) return false;
  // No usable list: the nodes that reported the job's run so far (its
  // prolog, epilog, appliance use), once there are any.
  if (!node_run.empty()) return node_run.contains(node);
  // A state stored before node_run was kept: the nodes it names, once a
  // prolog gave the job's nodes (unusably). Before any prolog, anyone.
  if (!node_list.empty() || node_count > 0) return nodes.empty() || nodes.contains(node);
  return true;
}

bool JobSummary::holdsFrom(const std::string& node) const {
  return std::any_of(held.begin(), held.end(), [&](const HeldEvent& h) { return h.node == node; });
}

bool JobSummary::endedFor(const std::string& node, uint32_t run) const {
  run = std::min(run, kMaxRun);
  if (nodes.empty() || run > restarts) return false;
  if (auto ended = epilog_run.find(node); ended != epilog_run.end() && ended->second >= run)
    return true;
  return complete() && !mayReport(node);
}

bool mergeEvent(JobSummary& summary, const std::string& node, const event::Event& ev,
                int64_t received_ns) {
  if (event::jobIdOf(ev) == 0) return false;
  bool new_node = summary.nodes.insert(node).second;
  return std::visit(Merger{summary, node, received_ns}, ev) || new_node;
}

std::optional<int64_t> commentDueNs(const JobSummary& s, int64_t wait_ns) {
  if (s.epilog_nodes.empty()) return std::nullopt;
  if (s.complete() || s.first_epilog_ns == 0) return 0;
  return s.first_epilog_ns + wait_ns;
}

std::string toStateJson(const JobSummary& s) {
  Json j{{"job_id", s.job_id},
         {"result", static_cast<int>(s.result)},
         {"accel_kind", s.accel_kind},
         {"accel_count", s.accel_count},
         {"partition", s.partition},
         {"nodes", s.nodes},
         {"epilog_nodes", s.epilog_nodes},
         {"cleanup_failed", s.cleanup_failed},
         {"node_count", s.node_count},
         {"appliance_s", s.appliance_s},
         {"appliance_limit_s", s.appliance_limit_s},
         {"surrogate_steps", s.surrogate_steps},
         {"local_devices", s.local_devices},
         {"partition_devices", s.partition_devices},
         {"node_list", s.node_list},
         {"first_epilog_ns", s.first_epilog_ns},
         {"last_epilog_ns", s.last_epilog_ns},
         {"instance", s.instance},
         {"errors", s.errors},
         {"later_nodes", s.later_nodes},
         {"limit_unmeasured", s.limit_unmeasured},
         {"restarts", s.restarts},
         {"run_appliance_s", s.run_appliance_s},
         {"node_run", s.node_run},
         {"epilog_run", s.epilog_run}};
  // Added later than node_run, and written only while events are held: a
  // state that holds none is what the releases before wrote.
  if (!s.held.empty()) j["held"] = heldJson(s.held);
  // Likewise written only for a job with GPU figures.
  if (!s.gpu.empty()) j["gpu"] = gpuToState(s.gpu);
  if (!s.live_gpu.empty()) j["live_gpu"] = liveToState(s.live_gpu);
  if (!s.xid.empty()) j["xid"] = xidsToState(s.xid);
  if (!s.idle.empty()) j["idle"] = idleToState(s.idle);
  // Names come from the wire and need not be UTF-8; invalid bytes become U+FFFD.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result<JobSummary> fromStateJson(const std::string& text) {
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return Error(ErrorCode::kParse, "job summary: not a JSON object");
  try {
    JobSummary s;
    s.job_id = j.at("job_id").get<uint32_t>();
    int r = j.at("result").get<int>();
    if (r < 0 || r > 3) return Error(ErrorCode::kParse, "job summary: bad result");
    s.result = static_cast<JobResult>(r);
    s.accel_kind = j.at("accel_kind").get<std::string>();
    s.accel_count = j.at("accel_count").get<uint32_t>();
    s.partition = j.at("partition").get<std::string>();
    s.nodes = j.at("nodes").get<std::set<std::string>>();
    s.epilog_nodes = j.at("epilog_nodes").get<std::set<std::string>>();
    s.cleanup_failed = j.at("cleanup_failed").get<std::set<std::string>>();
    s.node_count = j.at("node_count").get<uint32_t>();
    s.appliance_s = j.at("appliance_s").get<std::map<std::string, uint64_t>>();
    s.appliance_limit_s = j.at("appliance_limit_s").get<uint64_t>();
    s.surrogate_steps = j.at("surrogate_steps").get<std::set<uint32_t>>();
    // Added since the first release: absent from older states.
    s.local_devices = j.value("local_devices", std::map<std::string, uint32_t>{});
    s.partition_devices = j.value("partition_devices", std::set<std::string>{});
    s.node_list = j.value("node_list", std::string());
    s.first_epilog_ns = j.value("first_epilog_ns", int64_t{0});
    s.last_epilog_ns = j.value("last_epilog_ns", s.first_epilog_ns);
    s.instance = j.value("instance", uint32_t{0});
    s.errors = j.value("errors", std::map<std::string, std::string>{});
    s.later_nodes = j.value("later_nodes", std::set<std::string>{});
    s.limit_unmeasured = j.value("limit_unmeasured", std::set<std::string>{});
    s.restarts = std::min(j.value("restarts", uint32_t{0}), JobSummary::kMaxRun);
    s.run_appliance_s =
        j.value("run_appliance_s", std::map<uint32_t, std::map<std::string, uint64_t>>{});
    s.node_run = j.value("node_run", std::map<std::string, uint32_t>{});
    if (auto ended = j.find("epilog_run"); ended != j.end()) {
      s.epilog_run = ended->get<std::map<std::string, uint32_t>>();
    } else {
      for (const auto& n : s.epilog_nodes)
        if (auto ran = s.node_run.find(n); ran != s.node_run.end()) s.epilog_run[n] = ran->second;
    }
    if (auto held = j.find("held"); held != j.end()) s.held = heldFrom(*held);
    if (auto gpu = j.find("gpu"); gpu != j.end()) s.gpu = gpuFromState(*gpu);
    if (auto live = j.find("live_gpu"); live != j.end()) s.live_gpu = liveFromState(*live);
    if (auto xid = j.find("xid"); xid != j.end()) s.xid = xidsFromState(*xid);
    if (auto idle = j.find("idle"); idle != j.end()) s.idle = idleFromState(*idle);
    listNodes(s);
    return s;
  } catch (const Json::exception& e) {
    return Error(ErrorCode::kParse, std::string("job summary: ") + e.what());
  }
}

std::string toCommentJson(const JobSummary& s) {
  // Keys in a fixed order (ordered_json) so the comment is stable byte for byte.
  nlohmann::ordered_json j;
  j["v"] = 1;
  j["result"] = event::jobResultName(s.result);
  j["accel"] = s.accel_kind;
  j["count"] = s.accel_count;
  j["partition"] = s.partition;
  j["nodes"] = s.allNodes();
  j["appliance_s"] = s.applianceSeconds();
  j["appliance_limit_s"] = s.appliance_limit_s;
  j["surrogate_steps"] = s.surrogate_steps.size();
  if (s.restarts > 0) {
    j["restarts"] = s.restarts;
    j["run_appliance_s"] = s.runSeconds();
  }
  if (!s.gpu.empty()) j["gpu"] = gpuToComment(s.gpu);
  if (!s.xid.empty()) j["xid"] = xidsToComment(s.xid);
  if (!s.idle.empty()) j["idle"] = idleToComment(s.idle);
  if (endedIdle(s.idle)) j["ended"] = kEndedIdle;
  if (!s.cleanup_failed.empty()) j["cleanup_failed"] = s.cleanup_failed;
  if (!s.limit_unmeasured.empty()) j["limit_unmeasured"] = s.limit_unmeasured;
  if (!s.errors.empty()) j["errors"] = s.errors;
  if (auto missing = s.missingNodes(); !missing.empty()) j["missing_nodes"] = missing;
  std::string out = j.dump(-1, ' ', false, Json::error_handler_t::replace);
  // '|' can only occur inside strings here; the escape keeps sacct -P intact.
  std::string safe;
  for (char c : out) safe += c == '|' ? std::string("\\u007c") : std::string(1, c);
  return safe;
}

}  // namespace accel::aggregator
