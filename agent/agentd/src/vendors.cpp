#include "accel/agentd/vendors.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "accel/appliance/csctl_cli.h"
#include "accel/common/config_file.h"
#include "accel/common/safe_file.h"
#include "accel/exec/client_process.h"
#include "accel/ipu/vipu_cli.h"

namespace accel::agentd {
namespace {

using std::chrono::milliseconds;

Status needExecutable(const std::string& path, const std::string& what) {
  if (::access(path.c_str(), X_OK) != 0) return sysError(what + " " + path, errno);
  return okStatus();
}

// One prolog makes up to three controller calls (remove leftover, create,
// fetch configs) within HookTimeout, so each gets at most a third of it,
// and never more than vipu.conf's ApiTimeout.
exec::RetryPolicy vipuRetry(const AccelConfig& config, const VipuConfig& vipu) {
  auto hook = std::chrono::duration_cast<milliseconds>(config.hook_timeout);
  auto api = std::chrono::duration_cast<milliseconds>(vipu.api_timeout);
  return exec::RetryPolicy{.attempts = 3,
                           .budget = std::max(milliseconds(500), std::min(api, hook / 3)),
                           .backoff = milliseconds(200),
                           .max_backoff = milliseconds(2000)};
}

Status setUpVipu(const AccelConfig& config, const std::string& accel_conf_path, Vendors& v) {
  const std::string path = configPathBeside(accel_conf_path, kVipuConfName);
  if (::access(path.c_str(), F_OK) != 0) return okStatus();
  auto vipu = loadVipuConfig(path);
  ACCEL_TRY(vipu);
  ACCEL_TRY(ipu::VipuCli::checkSecureFiles(*vipu).context(path));
  if (::access(vipu->ipuof_dir.c_str(), F_OK) != 0)
    ACCEL_TRY(makeDirectory(vipu->ipuof_dir, 0755).context("IpuofDir of " + path));
  // Job directories are made, and moved aside, in it as root: a user who
  // could change it could steer that onto other users' files.
  ACCEL_TRY(checkRootOnlyDirectory(vipu->ipuof_dir)
                .context("IpuofDir of " + path + " must be root's and writable by root only"));
  std::string program = v.hw_mock_dir.empty() ? config.vipu_command : v.hw_mock_dir + "/bin/vipu";
  if (!v.hw_mock_dir.empty()) ACCEL_TRY(needExecutable(program, "fake V-IPU client"));
  v.ipu = std::make_shared<ipu::VipuCli>(*vipu, program, vipuRetry(config, *vipu));
  v.vipu = std::move(*vipu);
  return okStatus();
}

// VendorEnvironment's names, each a plain variable name; with a hardware mock
// also the mock's own state variable, which its fake clients read.
Result<std::vector<std::string>> passedNames(const AccelConfig& config, bool hw_mock) {
  std::vector<std::string> names;
  const std::string& list = config.vendor_environment;
  for (size_t start = 0; start <= list.size();) {
    size_t comma = std::min(list.find(',', start), list.size());
    std::string name = list.substr(start, comma - start);
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    start = comma + 1;
    if (name.empty()) continue;
    bool ok = !(name[0] >= '0' && name[0] <= '9');
    for (char c : name)
      ok = ok &&
           (c == '_' || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'));
    if (!ok)
      return Error(ErrorCode::kInvalidArgument,
                   "VendorEnvironment: '" + name + "' is not a variable name");
    names.push_back(name);
  }
  if (hw_mock) names.emplace_back("ACCEL_HW_MOCK_STATE");
  return names;
}

}  // namespace

Result<Vendors> setUpVendors(const AccelConfig& config, const std::string& accel_conf_path,
                             const std::optional<std::string>& hw_mock_override) {
  Vendors v;
  v.hw_mock_dir = hw_mock_override.value_or(config.hw_mock_dir.value_or(""));
  if (!v.hw_mock_dir.empty()) {
    if (::access(v.hw_mock_dir.c_str(), F_OK) != 0)
      return sysError("hardware-mock directory " + v.hw_mock_dir, errno);
    std::string xml = v.hw_mock_dir + "/topology.xml";
    if (::access(xml.c_str(), R_OK) == 0) v.topology_xml = xml;
  }
  auto passed = passedNames(config, !v.hw_mock_dir.empty());
  ACCEL_TRY(passed);
  exec::setPassedEnvironment(std::move(*passed));
  ACCEL_TRY(setUpVipu(config, accel_conf_path, v));
  std::optional<std::string> csctl = config.appliance_command;
  if (!v.hw_mock_dir.empty()) {
    // The mock stands in for the node's hardware: a V-IPU controller where a
    // vipu.conf says so, and an appliance unless its directory lacks the
    // appliance client (a node that reads no appliance).
    csctl = v.hw_mock_dir + "/bin/csctl";
    if (::access(csctl->c_str(), F_OK) != 0 && errno == ENOENT)
      csctl.reset();
    else
      ACCEL_TRY(needExecutable(*csctl, "fake appliance client"));
  }
  if (csctl) {
    v.appliance = std::make_shared<appliance::CsctlCli>(
        *csctl, std::chrono::duration_cast<milliseconds>(config.appliance_timeout));
  }
  return v;
}

}  // namespace accel::agentd
