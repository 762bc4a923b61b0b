#include "accel/appliance/appliance.h"

namespace accel::appliance {

const char* stateName(ApplianceState s) {
  switch (s) {
    case ApplianceState::kQueued:
      return "queued";
    case ApplianceState::kRunning:
      return "running";
    case ApplianceState::kSucceeded:
      return "succeeded";
    case ApplianceState::kFailed:
      return "failed";
    case ApplianceState::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

bool isFinal(ApplianceState s) {
  return s == ApplianceState::kSucceeded || s == ApplianceState::kFailed ||
         s == ApplianceState::kCancelled;
}

bool ownedBy(const ApplianceJob& job, uint32_t uid, std::string_view user) {
  if (job.uid >= 0) return job.uid == static_cast<int64_t>(uid);
  return !job.user.empty() && job.user == user;
}

bool isValidJobId(std::string_view id) {
  if (id.empty() || id.size() > 63 || id[0] < 'a' || id[0] > 'z') return false;
  for (char c : id)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return true;
}

}  // namespace accel::appliance
