// FabricManager::setUp: read the NICs, plan, persist the plan, apply it,
// read it back; on any failure undo through the teardown path, which works
// from the ledger and tolerates whatever part was never applied.
#include <algorithm>
#include <set>

#include "accel/fabric/diff.h"
#include "accel/fabric/manager.h"

namespace accel::fabric {
namespace {

Status checkNicNames(const std::vector<std::string>& nics) {
  std::set<std::string> seen;
  for (const auto& name : nics) {
    if (name.empty() || name.size() > 15 || name.find_first_of("/ \t\n:") != std::string::npos) {
      return Error(ErrorCode::kInvalidArgument, "fabric: '" + name + "' is not an interface name");
    }
    if (!seen.insert(name).second) {
      return Error(ErrorCode::kInvalidArgument, "fabric: " + name + " is listed twice");
    }
  }
  return okStatus();
}

bool routedThrough(const std::vector<RouteEntry>& routes, int ifindex, const Ipv4Cidr& dst) {
  return std::any_of(routes.begin(), routes.end(), [&](const RouteEntry& r) {
    return r.ifindex == ifindex && r.destination == dst;
  });
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

}  // namespace

Result<JobFabric> FabricManager::setUp(uint32_t job_id, const std::vector<std::string>& nics) {
  ACCEL_TRY(checkNicNames(nics));
  std::lock_guard lock(mu_);
  if (ledger_.job(job_id) != nullptr) {
    ACCEL_TRY(tearDownLocked(job_id).context("fabric: job " + std::to_string(job_id) +
                                             ": undoing an earlier set-up"));
  }
  if (nics.empty()) return JobFabric{job_id, {}, std::nullopt, {}};
  return setUpLocked(job_id, nics);
}

Result<JobFabric> FabricManager::setUpLocked(uint32_t job_id,
                                             const std::vector<std::string>& nics) {
  auto links = readLinks(nics);
  if (!links.ok()) return links.error();
  auto next = plan(job_id, *links);
  if (!next.ok()) return next.error();
  // Written before the first change: from here on a crash leaves a ledger
  // that names everything this call may have done.
  ACCEL_TRY(persist(std::move(*next)));
  const LedgerJob job = *ledger_.job(job_id);
  Status done = apply(job, *links);
  if (done.ok()) done = verify(job, *links);
  if (done.ok()) return describe(job);
  Status undone = tearDownLocked(job_id);
  if (undone.ok()) return done.error();
  return Error(done.error().code(),
               done.error().message() + "; undo incomplete: " + undone.error().message());
}

Result<std::vector<LinkInfo>> FabricManager::readLinks(const std::vector<std::string>& nics) {
  std::vector<LinkInfo> out;
  for (const auto& name : nics) {
    auto link = links_->findLink(name);
    if (!link.ok()) return link.error().context("fabric: " + name);
    if (!*link) return Error(ErrorCode::kNotFound, "fabric: " + name + ": no such interface");
    const LedgerNic* held = ledger_.nic(name);
    if (held != nullptr && held->ifindex != (*link)->ifindex) {
      return Error(ErrorCode::kConflict,
                   "fabric: " + name + ": interface was replaced (index " +
                       std::to_string((*link)->ifindex) + ", " + std::to_string(held->ifindex) +
                       " when its jobs set it up); tear those jobs down first");
    }
    out.push_back(**link);
  }
  return out;
}

// The ledger with the job added: its addresses, the NICs it is first on
// (with their current state as the original), and the routes it will add.
Result<Ledger> FabricManager::plan(uint32_t job_id, const std::vector<LinkInfo>& links) {
  auto kernel_addresses = links_->addresses();
  if (!kernel_addresses.ok()) return kernel_addresses.error().context("fabric");
  auto kernel_routes = links_->routes();
  if (!kernel_routes.ok()) return kernel_routes.error().context("fabric");
  std::vector<Ipv4Cidr> addresses;
  if (pool_) {
    std::vector<uint32_t> in_use = ledger_.addresses();
    for (const auto& a : *kernel_addresses) in_use.push_back(a.address.address);
    auto planned = planAddresses(*pool_, job_id, links.size(), in_use);
    if (!planned.ok()) return planned.error().context("fabric");
    addresses = std::move(*planned);
  }
  Ledger next = ledger_;
  LedgerJob job{job_id, {}};
  for (size_t i = 0; i < links.size(); ++i) {
    const LinkInfo& link = links[i];
    std::optional<Ipv4Cidr> address;
    if (pool_) address = addresses[i];
    job.nics.push_back({link.name, address});
    LedgerNic* held = next.nic(link.name);
    if (held == nullptr) {
      next.nics.push_back(
          {link.name, link.ifindex, link.mtu, link.up, link.promote_secondaries, {}});
      held = &next.nics.back();
    }
    // Routes already there (someone else's, or ours) are not ours to add.
    for (const auto& route : routes_) {
      if (routedThrough(*kernel_routes, link.ifindex, route)) continue;
      if (std::find(held->routes.begin(), held->routes.end(), route) != held->routes.end())
        continue;
      held->routes.push_back(route);
    }
  }
  next.jobs.push_back(std::move(job));
  return next;
}

Status FabricManager::apply(const LedgerJob& job, const std::vector<LinkInfo>& links) {
  auto kernel_routes = links_->routes();
  if (!kernel_routes.ok()) return kernel_routes.error().context("fabric");
  for (size_t i = 0; i < links.size(); ++i) {
    const LinkInfo& link = links[i];
    NicTarget target;
    if (config_.mtu != 0) target.mtu = config_.mtu;
    // Up before routes: the kernel refuses a route through a down link.
    ACCEL_TRY(links_->changeLink(link.ifindex, changeToward(target, link))
                  .context("fabric: " + link.name + ": set link"));
    if (job.nics[i].address) ACCEL_TRY(addJobAddress(job.nics[i], link.ifindex));
    for (const auto& route : ledger_.nic(link.name)->routes) {
      if (routedThrough(*kernel_routes, link.ifindex, route)) continue;
      ACCEL_TRY(addNicRoute(link, route));
    }
  }
  return okStatus();
}

Status FabricManager::addJobAddress(const LedgerJobNic& nic, int ifindex) {
  Status added = links_->addAddress(ifindex, *nic.address);
  if (added.ok()) return added;
  if (added.error().code() == ErrorCode::kConflict) {
    // Someone else put it there since we looked: it is not ours to remove,
    // so the undo that follows must not see it in the ledger.
    Ledger next = ledger_;
    for (auto& job : next.jobs) {
      for (auto& n : job.nics) {
        if (n.nic == nic.nic && n.address == nic.address) n.address.reset();
      }
    }
    ACCEL_TRY(persist(std::move(next)));
    return Error(ErrorCode::kConflict, "fabric: " + nic.nic + ": address " +
                                           formatCidr(*nic.address) +
                                           " already present (not ours)");
  }
  return added.context("fabric: " + nic.nic);
}

Status FabricManager::addNicRoute(const LinkInfo& link, const Ipv4Cidr& route) {
  Status added = links_->addRoute(link.ifindex, route);
  if (added.ok() || added.error().code() != ErrorCode::kConflict) {
    return added.context("fabric: " + link.name);
  }
  // As for addresses: present since we looked, so someone else's.
  Ledger next = ledger_;
  std::erase(next.nic(link.name)->routes, route);
  ACCEL_TRY(persist(std::move(next)));
  return Error(ErrorCode::kConflict, "fabric: " + link.name + ": route " + formatCidr(route) +
                                         " already present (not ours)");
}

Status FabricManager::verify(const LedgerJob& job, const std::vector<LinkInfo>& links) {
  auto kernel_addresses = links_->addresses();
  if (!kernel_addresses.ok()) return kernel_addresses.error().context("fabric: verify");
  auto kernel_routes = links_->routes();
  if (!kernel_routes.ok()) return kernel_routes.error().context("fabric: verify");
  for (size_t i = 0; i < links.size(); ++i) {
    auto now = links_->findLink(links[i].name);
    if (!now.ok()) return now.error().context("fabric: " + links[i].name + ": verify");
    if (!*now || (*now)->ifindex != links[i].ifindex) {
      return Error(ErrorCode::kIo, "fabric: " + links[i].name + ": verify: interface vanished");
    }
    NicTarget target;
    if (config_.mtu != 0) target.mtu = config_.mtu;
    if (job.nics[i].address) target.addresses.push_back(*job.nics[i].address);
    target.routes = routes_;
    auto diff = diffNic(target, **now, *kernel_addresses, *kernel_routes);
    if (!diff.empty()) {
      return Error(ErrorCode::kIo, "fabric: " + links[i].name + ": verify: " + join(diff));
    }
  }
  return okStatus();
}

}  // namespace accel::fabric
