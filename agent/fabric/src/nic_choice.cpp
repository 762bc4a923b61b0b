#include "accel/fabric/nic_choice.h"

#include <algorithm>
#include <optional>

namespace accel::fabric {
namespace {

bool listed(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// A NIC the job may use; `nic` is null for a configured name hwloc did not
// report (its locality is unknown).
struct Candidate {
  std::string netdev;
  const topology::Nic* nic = nullptr;
  std::optional<topology::Distance> best;  // set once chosen for some accelerator
};

std::vector<Candidate> candidates(const topology::NodeTopology& topology,
                                  const std::vector<std::string>& configured,
                                  const std::vector<std::string>& avoid) {
  std::vector<Candidate> out;
  for (const auto& nic : topology.nics) {
    if (nic.netdev.empty() || listed(avoid, nic.netdev)) continue;
    if (!configured.empty() && !listed(configured, nic.netdev)) continue;
    out.push_back({nic.netdev, &nic, std::nullopt});
  }
  for (const auto& name : configured) {
    bool known =
        std::any_of(out.begin(), out.end(), [&](const Candidate& c) { return c.netdev == name; });
    if (!known) out.push_back({name, nullptr, std::nullopt});
  }
  return out;
}

topology::Distance distanceTo(const topology::Accelerator& accelerator,
                              const Candidate& candidate) {
  return candidate.nic ? topology::distance(accelerator, *candidate.nic)
                       : topology::Distance::kOtherSocket;
}

void chooseFor(const topology::Accelerator& accelerator, std::vector<Candidate>& all) {
  std::optional<topology::Distance> best;
  for (const auto& c : all) {
    auto d = distanceTo(accelerator, c);
    if (!best || topology::distanceRank(d) < topology::distanceRank(*best)) best = d;
  }
  for (auto& c : all) {
    if (distanceTo(accelerator, c) != *best) continue;
    if (!c.best || topology::distanceRank(*best) < topology::distanceRank(*c.best)) c.best = best;
  }
}

}  // namespace

Result<std::vector<FabricNic>> chooseFabricNics(const topology::NodeTopology& topology,
                                                const std::vector<unsigned>& accelerators,
                                                const std::vector<std::string>& configured,
                                                const std::vector<std::string>& avoid) {
  for (const auto& name : configured) {
    if (listed(avoid, name)) {
      return Error(ErrorCode::kInvalidArgument,
                   "fabric: " + name +
                       " is configured as a fabric interface but is the "
                       "management interface");
    }
  }
  auto all = candidates(topology, configured, avoid);
  for (unsigned index : accelerators) {
    if (index >= topology.accelerators.size()) {
      return Error(ErrorCode::kInvalidArgument,
                   "fabric: accelerator " + std::to_string(index) + " is not on this node (" +
                       std::to_string(topology.accelerators.size()) + " accelerators)");
    }
    if (!all.empty()) chooseFor(topology.accelerators[index], all);
  }
  std::vector<FabricNic> chosen;
  for (const auto& c : all) {
    if (c.best) {
      chosen.push_back({c.netdev, *c.best});
    } else if (accelerators.empty() && !configured.empty()) {
      chosen.push_back({c.netdev, topology::Distance::kOtherSocket});
    }
  }
  return chosen;
}

std::vector<std::string> nicNames(const std::vector<FabricNic>& nics) {
  std::vector<std::string> names;
  names.reserve(nics.size());
  for (const auto& nic : nics) names.push_back(nic.netdev);
  return names;
}

}  // namespace accel::fabric
