#include "accel/ctl/hints.h"

namespace accel::ctl {

std::string callErrorHint(const Error& e, const std::string& socket,
                          const std::string& config_path) {
  const std::string& m = e.message();
  const std::string where = " (ControlSocket in " + config_path + ")";
  switch (e.code()) {
    case ErrorCode::kUnavailable:
      if (m.find("busy") != std::string::npos) return m + "; try again in a moment";
      return "accel-agentd is not running: nothing listens on " + socket + where +
             ". Start it with 'systemctl start accel-agentd'; 'journalctl -u accel-agentd' says "
             "why it stopped";
    case ErrorCode::kNotFound:
      return "accel-agentd is not running: " + socket + " does not exist" + where +
             ". Start it with 'systemctl start accel-agentd'";
    case ErrorCode::kTimeout:
      return "accel-agentd did not answer in time on " + socket +
             "; it may be stuck: see 'journalctl -u accel-agentd' and 'systemctl status "
             "accel-agentd'";
    case ErrorCode::kPermissionDenied:
      return m + ": the daemon makes its socket writable by anyone; check the permissions of " +
             socket + " and of its directory";
    default:
      return m + " (talking to accel-agentd on " + socket + ")";
  }
}

std::string configErrorHint(const Error& e) {
  return e.message() +
         "; accelctl reads accel.conf beside slurm.conf (the directory of SLURM_CONF, else "
         "/etc/slurm): "
         "set SLURM_CONF or give --config FILE";
}

std::string unknownJobHint(const std::string& message) {
  return message + "; 'accelctl jobs' lists the jobs you may see here (users see only their own)";
}

}  // namespace accel::ctl
