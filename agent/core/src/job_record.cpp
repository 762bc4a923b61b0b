#include "accel/agent/job_record.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

namespace accel::agent {

using nlohmann::json;

namespace {
// The record's "format". Fields are only ever added (a missing one reads as
// its default, an unknown one is ignored); a change an older reader would
// misread needs a new format, which this reader refuses.
constexpr uint32_t kRecordFormat = 1;
}  // namespace

std::string encodeRecord(const JobRecord& r) {
  const auto& s = r.spec;
  json env = json::array();
  for (const auto& [k, v] : r.env) env.push_back({k, v});
  json j = {
      {"format", kRecordFormat},
      {"job_id", s.job_id},
      {"uid", s.uid},
      {"gid", s.gid},
      {"user", s.user},
      {"partition", s.partition},
      {"gpus", s.gpus},
      {"ipus", s.ipus},
      {"num_replicas", s.num_replicas},
      {"ntasks", s.ntasks},
      {"appliance_time_sec", s.appliance_time_sec},
      {"appliance_signal", s.appliance_signal},
      {"appliance_signal_lead_sec", s.appliance_signal_lead_sec},
      {"appliance_signal_batch", s.appliance_signal_batch},
      {"node", s.node},
      {"node_list", s.node_list},
      {"node_count", s.node_count},
      {"restart_count", s.restart_count},
      {"phase", std::string(phaseName(r.phase))},
      {"devices", r.devices},
      {"job_dir", r.job_dir},
      {"ipu_partition", r.ipu_partition},
      {"env", env},
      {"prolog_started_ns", r.prolog_started_ns},
      {"ready_ns", r.ready_ns},
      {"last_error", r.last_error},
      {"steps", r.steps},
  };
  json tasks = json::array();
  for (const auto& t : r.tasks) tasks.push_back({t.step_id, t.pid, t.start_ticks});
  j["tasks"] = tasks;
  json runs = json::array();
  for (const auto& run : r.budget.runs) runs.push_back({run.key, run.start_ns, run.end_ns});
  j["appliance_runs"] = runs;
  j["limit_warned_ns"] = r.budget.warned_ns;
  j["limit_enforced_ns"] = r.budget.enforced_ns;
  j["limit_killed_ns"] = r.budget.killed_ns;
  j["limit_carried_ns"] = r.budget.carried_ns;
  j["carry_note"] = s.carry_note;
  j["surrogates"] = r.surrogates;
  j["surrogate_steps"] = r.surrogate_steps;
  // Text was checked where it entered; replacing rather than throwing keeps
  // one bad byte from ever costing the record.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

namespace {

// Strict readers: a field of the wrong type or out of range is an error,
// never a silent cast (nlohmann's get<int>() on 1e79 is undefined).
struct Reader {
  const json& j;

  template <typename T>
  T integer(const char* key, std::optional<T> fallback = std::nullopt) const {
    auto it = j.find(key);
    if (it == j.end()) {
      if (fallback) return *fallback;
      throw std::invalid_argument(std::string("missing ") + key);
    }
    return checked<T>(*it, key);
  }

  template <typename T>
  static T checked(const json& v, const char* what) {
    if (v.is_number_unsigned()) {
      auto u = v.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<T>::max()))
        throw std::invalid_argument(std::string(what) + " out of range");
      return static_cast<T>(u);
    }
    if (v.is_number_integer()) {
      auto i = v.get<int64_t>();
      if (i < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
          (i > 0 &&
           static_cast<uint64_t>(i) > static_cast<uint64_t>(std::numeric_limits<T>::max())))
        throw std::invalid_argument(std::string(what) + " out of range");
      return static_cast<T>(i);
    }
    throw std::invalid_argument(std::string(what) + " is not an integer");
  }

  bool flag(const char* key, bool fallback) const {
    auto it = j.find(key);
    if (it == j.end()) return fallback;
    if (!it->is_boolean()) throw std::invalid_argument(std::string(key) + " is not true or false");
    return it->get<bool>();
  }

  std::string text(const char* key) const {
    auto it = j.find(key);
    if (it == j.end()) return "";
    if (!it->is_string()) throw std::invalid_argument(std::string(key) + " is not a string");
    return it->get<std::string>();
  }

  template <typename T>
  std::vector<T> integers(const char* key) const {
    std::vector<T> out;
    auto it = j.find(key);
    if (it == j.end()) return out;
    if (!it->is_array()) throw std::invalid_argument(std::string(key) + " is not a list");
    for (const auto& v : *it) out.push_back(checked<T>(v, key));
    return out;
  }

  const json& list(const char* key) const {
    static const json kEmpty = json::array();
    auto it = j.find(key);
    if (it == j.end()) return kEmpty;
    if (!it->is_array()) throw std::invalid_argument(std::string(key) + " is not a list");
    return *it;
  }
};

std::string pairText(const json& v, size_t i) {
  if (!v.is_array() || v.size() <= i || !v[i].is_string())
    throw std::invalid_argument("env entry malformed");
  return v[i].get<std::string>();
}

}  // namespace

Result<JobRecord> decodeRecord(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return Error(ErrorCode::kParse, "job record is not a JSON object");
  JobRecord r;
  try {
    Reader in{j};
    // Every record written so far is format 1; none lacks the key, but a
    // record without it is read as format 1.
    if (in.integer<uint32_t>("format", kRecordFormat) != kRecordFormat)
      throw std::invalid_argument("format is not " + std::to_string(kRecordFormat));
    auto& s = r.spec;
    s.job_id = in.integer<uint32_t>("job_id");
    s.uid = in.integer<uid_t>("uid");
    s.gid = in.integer<gid_t>("gid");
    s.user = in.text("user");
    s.partition = in.text("partition");
    s.gpus = in.text("gpus");
    s.ipus = in.integer<uint32_t>("ipus", 0u);
    s.num_replicas = in.integer<uint32_t>("num_replicas", 0u);
    s.ntasks = in.integer<uint32_t>("ntasks", 0u);
    s.appliance_time_sec = in.integer<int64_t>("appliance_time_sec", int64_t{-1});
    s.appliance_signal = in.integer<int32_t>("appliance_signal", 0);
    s.appliance_signal_lead_sec = in.integer<uint32_t>("appliance_signal_lead_sec", 0u);
    s.appliance_signal_batch = in.flag("appliance_signal_batch", false);
    // Absent from records written before jobs spanned nodes: unknown, so the
    // job is led here, as every job was then.
    s.node = in.text("node");
    s.node_list = in.text("node_list");
    s.node_count = in.integer<uint32_t>("node_count", 0u);
    s.restart_count = in.integer<uint32_t>("restart_count", 0u);
    auto phase = parsePhase(in.text("phase"));
    if (!phase) return Error(ErrorCode::kParse, "job record has an unknown phase");
    r.phase = *phase;
    r.devices = in.integers<uint32_t>("devices");
    r.job_dir = in.text("job_dir");
    r.ipu_partition = in.text("ipu_partition");
    for (const auto& kv : in.list("env")) r.env.emplace_back(pairText(kv, 0), pairText(kv, 1));
    r.prolog_started_ns = in.integer<int64_t>("prolog_started_ns", int64_t{0});
    r.ready_ns = in.integer<int64_t>("ready_ns", int64_t{0});
    r.last_error = in.text("last_error");
    r.steps = in.integers<uint32_t>("steps");
    for (const auto& t : in.list("tasks")) {
      if (!t.is_array() || t.size() != 3) throw std::invalid_argument("task entry malformed");
      r.tasks.push_back(TaskRef{Reader::checked<uint32_t>(t[0], "task step"),
                                Reader::checked<int32_t>(t[1], "task pid"),
                                Reader::checked<uint64_t>(t[2], "task start")});
    }
    for (const auto& run : in.list("appliance_runs")) {
      if (!run.is_array() || run.size() != 3 || !run[0].is_string())
        throw std::invalid_argument("appliance run malformed");
      r.budget.runs.push_back(ActiveInterval{run[0].get<std::string>(),
                                             Reader::checked<int64_t>(run[1], "run start"),
                                             Reader::checked<int64_t>(run[2], "run end")});
    }
    r.budget.warned_ns = in.integer<int64_t>("limit_warned_ns", int64_t{0});
    r.budget.enforced_ns = in.integer<int64_t>("limit_enforced_ns", int64_t{0});
    r.budget.killed_ns = in.integer<int64_t>("limit_killed_ns", int64_t{0});
    r.budget.carried_ns = in.integer<int64_t>("limit_carried_ns", int64_t{0});
    if (r.budget.carried_ns < 0) throw std::invalid_argument("limit_carried_ns is negative");
    s.carry_note = in.text("carry_note");
    for (const auto& id : in.list("surrogates")) {
      if (!id.is_string()) throw std::invalid_argument("surrogate entry is not a string");
      r.surrogates.push_back(id.get<std::string>());
    }
    r.surrogate_steps = in.integers<uint32_t>("surrogate_steps");
  } catch (const std::exception& e) {
    return Error(ErrorCode::kParse, std::string("job record: ") + e.what());
  }
  return r;
}

bool limitMeasurable(const JobRequestSpec& spec, const std::vector<uint32_t>& devices,
                     bool node_has_appliance) {
  if (spec.appliance_time_sec <= 0) return true;
  return node_has_appliance || spec.ipus > 0 || !devices.empty();
}

std::vector<uint32_t> sparedSteps(const JobRecord& r) {
  const size_t n = std::min(r.surrogate_steps.size(), kMaxSurrogateStepsPerJob);
  return {r.surrogate_steps.begin(), r.surrogate_steps.begin() + static_cast<std::ptrdiff_t>(n)};
}

}  // namespace accel::agent
