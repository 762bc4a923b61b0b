#include "accel/ctl/report_view.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <vector>

namespace accel::ctl {
namespace {

using nlohmann::json;

std::string fixed(double v, const char* unit) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, unit);
  return buf;
}

std::string energy(const json& j) {
  if (j.is_null()) return "-";
  const double v = j.get<double>();
  if (v >= 1e7) return fixed(v / 1e6, "MJ");
  if (v >= 1e4) return fixed(v / 1e3, "kJ");
  return std::to_string(j.get<int64_t>()) + " J";
}

std::string memory(const json& j) {
  if (j.is_null()) return "-";
  const auto mib = j.get<int64_t>();
  if (mib >= 10240) return fixed(double(mib) / 1024, "GiB");
  return std::to_string(mib) + " MiB";
}

std::string percent(const json& j, bool tenths) {
  if (j.is_null()) return "-";
  if (!tenths) return std::to_string(j.get<int64_t>()) + "%";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", j.get<double>());
  return buf;
}

std::string seconds(uint64_t s) {
  if (s < 60) return std::to_string(s) + " s";
  if (s < 3600) return std::to_string(s / 60) + " min " + std::to_string(s % 60) + " s";
  return std::to_string(s / 3600) + " h " + std::to_string(s % 3600 / 60) + " min";
}

std::string joined(const json& list) {
  std::string out;
  for (const auto& v : list) out += (out.empty() ? "" : ", ") + v.get<std::string>();
  return out;
}

// Rows of cells, the first the heading; numbers right-aligned (every column
// but the first and the last), two spaces between columns.
std::string table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], r[i].size());
    }
  std::string out;
  for (const auto& r : rows) {
    std::string line = " ";
    for (size_t i = 0; i < r.size(); ++i) {
      const std::string pad(width[i] - r[i].size(), ' ');
      const bool left = i == 0 || i + 1 == r.size();
      line += " " + (left ? r[i] + pad : pad + r[i]) + (i + 1 < r.size() ? " " : "");
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string nodesLine(const json& r) {
  std::string out;
  for (const auto& n : r.at("nodes")) {
    std::string what = n.at("figures").get<std::string>();
    if (what == "epilog") what = "final figures";
    if (what == "live")
      what = n.at("updated").is_null() ? "live figures"
                                       : "live figures of " + n.at("updated").get<std::string>();
    if (what == "none") what = "no GPU figures";
    out += (out.empty() ? "" : ", ") + n.at("name").get<std::string>() + " (" + what + ")";
  }
  if (const auto left = r.at("nodes_left_out").get<uint64_t>(); left > 0)
    out += " and " + std::to_string(left) + " more";
  return out;
}

std::string errorsLine(const json& e) {
  std::vector<std::string> parts;
  for (const auto& [node, why] : e.at("prolog").items())
    parts.push_back("prolog failed on " + node + ": " + why.get<std::string>());
  if (!e.at("cleanup_failed").empty())
    parts.push_back("cleanup failed on " + joined(e.at("cleanup_failed")));
  if (!e.at("limit_unmeasured").empty())
    parts.push_back("appliance limit not measured on " + joined(e.at("limit_unmeasured")));
  // Xids as the summary has them: [code, "node", gpu] each (docs/accounting-format.md).
  if (e.contains("xid"))
    for (const auto& x : e.at("xid")) {
      if (x.is_array() && x.size() == 3 && x[0].is_number() && x[1].is_string() && x[2].is_number())
        parts.push_back("Xid " + x[0].dump() + " on " + x[1].get<std::string>() + " GPU " +
                        x[2].dump());
      else
        parts.push_back("Xid " + x.dump());
    }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out.empty() ? "none" : out;
}

std::string render(const json& r) {
  std::string out = "job " + std::to_string(r.at("job_id").get<uint64_t>()) + ": " +
                    r.at("line").get<std::string>() + "\n";
  std::vector<std::vector<std::string>> facts;
  facts.push_back({"state", r.at("state").get<std::string>() + ", result " +
                                r.at("result").get<std::string>()});
  facts.push_back({"nodes", nodesLine(r)});
  if (!r.at("missing_nodes").empty())
    facts.push_back({"waiting", "for the epilog of " + joined(r.at("missing_nodes"))});
  if (!r.at("idle_s").is_null())
    facts.push_back({"idle", seconds(r.at("idle_s").get<uint64_t>()) +
                                 " with every GPU at 0%, up to the latest figures"});
  // Absent from reports of aggregators older than the idle notes.
  if (r.contains("idle") && r.at("idle").is_object())
    for (const auto& [node, note] : r.at("idle").items())
      if (note.is_object() && note.value("idle_s", json()).is_number())
        facts.push_back({"idle", "flagged on " + node + " after " +
                                     seconds(note.at("idle_s").get<uint64_t>()) +
                                     " with every GPU at 0% (IdleAction " +
                                     note.value("action", std::string("?")) + ")"});
  if (r.contains("ended") && r.at("ended").is_string())
    facts.push_back({"ended", "by the agent: " + r.at("ended").get<std::string>()});
  if (const auto& g = r.at("gpus"); !g.at("energy_j").is_null())
    facts.push_back({"energy", energy(g.at("energy_j")) + " in all"});
  if (const auto& l = r.at("limit"); !l.is_null())
    facts.push_back({"limit", "appliance time " + seconds(l.at("appliance_s").get<uint64_t>()) +
                                  " used of " +
                                  seconds(l.at("appliance_limit_s").get<uint64_t>())});
  facts.push_back({"errors", errorsLine(r.at("errors"))});
  for (const auto& f : facts) {
    std::string label = f[0];
    label.resize(8, ' ');
    out += "  " + label + " " + f[1] + "\n";
  }
  if (r.at("devices").empty()) return out;
  std::vector<std::vector<std::string>> rows{
      {"NODE", "GPU", "UTIL MEAN", "UTIL MAX", "MEMORY MAX", "ENERGY", "SAMPLES", ""}};
  for (const auto& d : r.at("devices"))
    rows.push_back({d.at("node").get<std::string>(), std::to_string(d.at("index").get<uint64_t>()),
                    percent(d.at("util_mean_pct"), true), percent(d.at("util_max_pct"), false),
                    memory(d.at("memory_max_mib")), energy(d.at("energy_j")),
                    std::to_string(d.at("samples").get<uint64_t>()),
                    d.at("used").get<bool>() ? "" : "never used"});
  out += "\n" + table(rows);
  if (const auto left = r.at("devices_left_out").get<uint64_t>(); left > 0)
    out += "  (" + std::to_string(left) + " more GPUs not shown; --json has the first " +
           std::to_string(r.at("devices").size()) + ")\n";
  return out;
}

}  // namespace

Result<std::string> reportTable(const std::string& text) {
  const json r = json::parse(text, nullptr, false);
  if (!r.is_object() || r.value("v", 0) != 1)
    return Error(ErrorCode::kParse,
                 "the aggregator's report is not one this accelctl reads "
                 "(format 1); 'accelctl report --json' shows it as it is");
  try {
    return render(r);
  } catch (const json::exception& e) {
    return Error(ErrorCode::kParse,
                 std::string("the aggregator's report is incomplete: ") + e.what());
  }
}

}  // namespace accel::ctl
