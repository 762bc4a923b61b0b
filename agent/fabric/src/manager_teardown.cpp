// FabricManager::tearDown: undo a job from its ledger entry. Used for the
// epilog, for a retried prolog, and as the rollback of a failed set-up, so
// every step treats "already gone" as done.
#include "accel/fabric/diff.h"
#include "accel/fabric/manager.h"

namespace accel::fabric {

Status FabricManager::tearDown(uint32_t job_id) {
  std::lock_guard lock(mu_);
  return tearDownLocked(job_id);
}

// The NIC the ledger recorded, if it still exists as the same device. A NIC
// that vanished took its addresses, routes and settings with it; one of the
// same name but another index is a different device that is not ours.
Result<std::optional<LinkInfo>> FabricManager::sameLink(const LedgerNic& nic) {
  auto link = links_->findLink(nic.name);
  if (!link.ok()) return link.error().context("fabric: " + nic.name);
  if (*link && (*link)->ifindex != nic.ifindex) return std::optional<LinkInfo>();
  return link;
}

Status FabricManager::tearDownLocked(uint32_t job_id) {
  const LedgerJob* found = ledger_.job(job_id);
  if (found == nullptr) return okStatus();
  const LedgerJob job = *found;
  std::vector<std::string> failures;
  for (const auto& n : job.nics) {
    if (!n.address) continue;
    auto link = sameLink(*ledger_.nic(n.nic));
    if (!link.ok()) {
      failures.push_back(link.error().message());
      continue;
    }
    if (!*link) continue;
    Status removed = links_->removeAddress((*link)->ifindex, *n.address);
    if (!removed.ok()) failures.push_back(removed.context("fabric: " + n.nic).error().message());
  }
  // Shared state goes back only once the last job has left the NIC.
  std::vector<std::string> released;
  for (const auto& n : job.nics) {
    if (ledger_.users(n.nic, job_id) != 0) continue;
    Status restored = restoreNic(*ledger_.nic(n.nic));
    if (!restored.ok()) failures.push_back(restored.error().message());
    released.push_back(n.nic);
  }
  if (!failures.empty()) {
    std::string message;
    for (const auto& f : failures) message += (message.empty() ? "" : "; ") + f;
    return Error(ErrorCode::kIo, message);
  }
  Ledger next = ledger_;
  next.removeJob(job_id);
  for (const auto& name : released) next.removeNic(name);
  return persist(std::move(next));
}

Status FabricManager::restoreNic(const LedgerNic& nic) {
  auto link = sameLink(nic);
  if (!link.ok()) return link.error();
  if (!*link) return okStatus();
  for (const auto& route : nic.routes) {
    ACCEL_TRY(links_->removeRoute((*link)->ifindex, route).context("fabric: " + nic.name));
  }
  return links_->changeLink((*link)->ifindex, changeToRestore(nic, **link))
      .context("fabric: " + nic.name + ": restore link");
}

}  // namespace accel::fabric
