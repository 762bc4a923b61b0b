#include "accel/agent/job_record.h"

#include <nlohmann/json.hpp>

namespace accel::agent {

using nlohmann::json;

std::string encodeRecord(const JobRecord& r) {
  const auto& s = r.spec;
  json env = json::array();
  for (const auto& [k, v] : r.env) env.push_back({k, v});
  json j = {
      {"format", 1},
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
      {"phase", std::string(phaseName(r.phase))},
      {"devices", r.devices},
      {"job_dir", r.job_dir},
      {"env", env},
      {"prolog_started_ns", r.prolog_started_ns},
      {"ready_ns", r.ready_ns},
      {"last_error", r.last_error},
      {"steps", r.steps},
  };
  json tasks = json::array();
  for (const auto& t : r.tasks) tasks.push_back({t.step_id, t.pid, t.start_ticks});
  j["tasks"] = tasks;
  return j.dump();
}

Result<JobRecord> decodeRecord(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Error(ErrorCode::kParse, "job record is not a JSON object");
  JobRecord r;
  try {
    auto& s = r.spec;
    s.job_id = j.at("job_id").get<uint32_t>();
    s.uid = j.at("uid").get<uid_t>();
    s.gid = j.at("gid").get<gid_t>();
    s.user = j.value("user", "");
    s.partition = j.value("partition", "");
    s.gpus = j.value("gpus", "");
    s.ipus = j.value("ipus", 0u);
    s.num_replicas = j.value("num_replicas", 0u);
    s.ntasks = j.value("ntasks", 0u);
    s.appliance_time_sec = j.value("appliance_time_sec", int64_t{-1});
    s.appliance_signal = j.value("appliance_signal", 0);
    s.appliance_signal_lead_sec = j.value("appliance_signal_lead_sec", 0u);
    auto phase = parsePhase(j.at("phase").get<std::string>());
    if (!phase) return Error(ErrorCode::kParse, "job record has an unknown phase");
    r.phase = *phase;
    r.devices = j.value("devices", std::vector<uint32_t>{});
    r.job_dir = j.value("job_dir", "");
    for (const auto& kv : j.value("env", json::array())) r.env.emplace_back(kv.at(0), kv.at(1));
    r.prolog_started_ns = j.value("prolog_started_ns", int64_t{0});
    r.ready_ns = j.value("ready_ns", int64_t{0});
    r.last_error = j.value("last_error", "");
    r.steps = j.value("steps", std::vector<uint32_t>{});
    for (const auto& t : j.value("tasks", json::array()))
      r.tasks.push_back(TaskRef{t.at(0).get<uint32_t>(), t.at(1).get<int32_t>(), t.at(2).get<uint64_t>()});
  } catch (const json::exception& e) {
    return Error(ErrorCode::kParse, std::string("job record: ") + e.what());
  }
  return r;
}

}  // namespace accel::agent
