#include "accel/aggregator/summary.h"

#include <nlohmann/json.hpp>
#include <type_traits>

namespace accel::aggregator {
namespace {

using Json = nlohmann::json;
using event::JobResult;

// Worse results win: a job that failed anywhere failed.
int severity(JobResult r) {
  switch (r) {
    case JobResult::kOk: return 0;
    case JobResult::kCancelled: return 1;
    case JobResult::kTimeLimit: return 2;
    case JobResult::kFailed: return 3;
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

// Each handler returns whether it may have changed the summary.
struct Merger {
  JobSummary& s;
  const std::string& node;
  bool operator()(const event::PrologStarted& e) {
    if (e.node_count > s.node_count) s.node_count = e.node_count;
    return true;
  }
  bool operator()(const event::PrologFinished& e) {
    worsen(s, e.result);
    addKind(s, e.accel_kind);
    s.accel_count += static_cast<uint32_t>(e.devices.size());
    if (!e.partition.empty()) s.partition = e.partition;
    s.appliance_limit_s = std::max(s.appliance_limit_s, e.appliance_limit_s);
    return true;
  }
  bool operator()(const event::EpilogFinished& e) {
    worsen(s, e.result);
    s.epilog_nodes.insert(node);
    if (!e.cleanup_ok) s.cleanup_failed.insert(node);
    auto& used = s.appliance_s[node];
    used = std::max(used, e.appliance_seconds);
    return true;
  }
  bool operator()(const event::StepStarted& e) {
    return e.surrogate && s.surrogate_steps.insert(e.step_id).second;
  }
  bool operator()(const event::ApplianceJobChanged& e) {
    auto& used = s.appliance_s[node];
    used = std::max(used, e.seconds_used);
    return true;
  }
  bool operator()(const event::TimeLimitWarning& e) {
    s.appliance_limit_s = std::max(s.appliance_limit_s, e.limit_s);
    return true;
  }
  bool operator()(const event::TimeLimitEnforced& e) {
    worsen(s, JobResult::kTimeLimit);
    s.appliance_limit_s = std::max(s.appliance_limit_s, e.limit_s);
    auto& used = s.appliance_s[node];
    used = std::max(used, e.used_s);
    return true;
  }
  template <typename Other>
  bool operator()(const Other&) { return false; }  // tasks, steps' ends, node-wide events
};

}  // namespace

uint64_t JobSummary::applianceSeconds() const {
  uint64_t total = 0;
  for (const auto& [node, s] : appliance_s) total += s;
  return total;
}

bool JobSummary::complete() const {
  if (node_count == 0) return !epilog_nodes.empty();
  return epilog_nodes.size() >= node_count;
}

bool mergeEvent(JobSummary& summary, const std::string& node, const event::Event& ev) {
  if (event::jobIdOf(ev) == 0) return false;
  bool new_node = summary.nodes.insert(node).second;
  return std::visit(Merger{summary, node}, ev) || new_node;
}

std::string toStateJson(const JobSummary& s) {
  Json j{{"job_id", s.job_id},        {"result", static_cast<int>(s.result)},
         {"accel_kind", s.accel_kind}, {"accel_count", s.accel_count},
         {"partition", s.partition},  {"nodes", s.nodes},
         {"epilog_nodes", s.epilog_nodes}, {"cleanup_failed", s.cleanup_failed},
         {"node_count", s.node_count}, {"appliance_s", s.appliance_s},
         {"appliance_limit_s", s.appliance_limit_s}, {"surrogate_steps", s.surrogate_steps}};
  // Names come from the wire and need not be UTF-8; invalid bytes become U+FFFD.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result<JobSummary> fromStateJson(const std::string& text) {
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Error(ErrorCode::kParse, "job summary: not a JSON object");
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
  j["nodes"] = s.nodes;
  j["appliance_s"] = s.applianceSeconds();
  j["appliance_limit_s"] = s.appliance_limit_s;
  j["surrogate_steps"] = s.surrogate_steps.size();
  if (!s.cleanup_failed.empty()) j["cleanup_failed"] = s.cleanup_failed;
  std::string out = j.dump(-1, ' ', false, Json::error_handler_t::replace);
  // '|' can only occur inside strings here; the escape keeps sacct -P intact.
  std::string safe;
  for (char c : out) safe += c == '|' ? std::string("\\u007c") : std::string(1, c);
  return safe;
}

}  // namespace accel::aggregator
