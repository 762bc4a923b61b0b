// FabricManager: opening the state directory, the ledger on disk, and the
// read-only views. Set-up is in manager_setup.cpp, teardown in
// manager_teardown.cpp.
#include "accel/fabric/manager.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "accel/common/safe_file.h"

namespace accel::fabric {
namespace {

constexpr const char* kLedgerFile = "fabric.json";
constexpr const char* kLockFile = "fabric.lock";

Error badConfig(const std::string& what) {
  return Error(ErrorCode::kInvalidArgument, "fabric: configuration: " + what);
}

Status checkConfig(const FabricConfig& config) {
  if (config.state_dir.empty() || config.state_dir[0] != '/') {
    return badConfig("state directory '" + config.state_dir + "' is not an absolute path");
  }
  if (config.mtu != 0 && (config.mtu < 68 || config.mtu > 65535)) {
    return badConfig("mtu " + std::to_string(config.mtu) + " is not in 68..65535");
  }
  if (config.address_range.empty() && config.address_prefix != 0) {
    return badConfig("an address prefix without an address range");
  }
  return okStatus();
}

Status ensureDirectory(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return okStatus();
    return Error(ErrorCode::kConflict, "fabric: state directory " + path + " is not a directory");
  }
  if (errno != ENOENT) return sysError("fabric: state directory " + path, errno);
  return makeDirectory(path, 0700).context("fabric: state directory");
}

Result<int> lockDirectory(const std::string& dir) {
  const std::string path = dir + "/" + kLockFile;
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return sysError("fabric: " + path, errno);
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) {
      return Error(ErrorCode::kConflict, "fabric: " + dir + " is in use by another fabric manager");
    }
    return sysError("fabric: lock " + path, err);
  }
  return fd;
}

Result<Ledger> loadLedger(const std::string& path) {
  auto text = readFileNoFollow(path, 4 << 20);
  if (!text.ok() && text.error().code() == ErrorCode::kNotFound) return Ledger{};
  if (!text.ok()) return text.error().context("fabric");
  auto ledger = decodeLedger(*text);
  if (!ledger.ok()) return ledger.error().context("fabric: " + path);
  return ledger;
}

}  // namespace

Result<std::unique_ptr<FabricManager>> FabricManager::open(FabricConfig config,
                                                           std::unique_ptr<Links> links) {
  ACCEL_CHECK(links != nullptr);
  ACCEL_TRY(checkConfig(config));
  std::optional<AddressPool> pool;
  if (!config.address_range.empty()) {
    auto made = makeAddressPool(config.address_range, config.address_prefix);
    if (!made.ok()) return made.error().context("fabric: configuration");
    pool = *made;
  }
  std::vector<Ipv4Cidr> routes;
  for (const auto& text : config.routes) {
    auto route = parseNetwork(text);
    if (!route.ok()) return route.error().context("fabric: configuration: route");
    routes.push_back(*route);
  }
  ACCEL_TRY(ensureDirectory(config.state_dir));
  auto fd = lockDirectory(config.state_dir);
  if (!fd.ok()) return fd.error();
  std::unique_ptr<FabricManager> manager(
      new FabricManager(std::move(config), std::move(links), *fd));
  manager->pool_ = pool;
  manager->routes_ = std::move(routes);
  auto ledger = loadLedger(manager->ledger_path_);
  if (!ledger.ok()) return ledger.error();
  manager->ledger_ = std::move(*ledger);
  return manager;
}

FabricManager::FabricManager(FabricConfig config, std::unique_ptr<Links> links, int lock_fd)
    : config_(std::move(config)),
      ledger_path_(config_.state_dir + "/" + kLedgerFile),
      lock_fd_(lock_fd),
      links_(std::move(links)) {}

FabricManager::~FabricManager() { ::close(lock_fd_); }

Status FabricManager::persist(Ledger next) {
  next.sort();
  ACCEL_TRY(writeFileAtomic(ledger_path_, encodeLedger(next), 0600, {},
                            // The ledger describes kernel state, which a reboot
                            // resets anyway; surviving a process crash is enough.
                            Durability::kProcessCrash)
                .context("fabric: ledger"));
  ledger_ = std::move(next);
  return okStatus();
}

JobFabric FabricManager::describe(const LedgerJob& job) const {
  JobFabric out;
  out.job_id = job.job_id;
  for (const auto& n : job.nics) out.nics.push_back({n.nic, n.address});
  if (config_.mtu != 0) out.mtu = config_.mtu;
  out.routes = routes_;
  return out;
}

std::vector<uint32_t> FabricManager::jobs() const {
  std::lock_guard lock(mu_);
  std::vector<uint32_t> out;
  for (const auto& j : ledger_.jobs) out.push_back(j.job_id);
  return out;
}

std::optional<JobFabric> FabricManager::job(uint32_t job_id) const {
  std::lock_guard lock(mu_);
  const LedgerJob* job = ledger_.job(job_id);
  if (job == nullptr) return std::nullopt;
  return describe(*job);
}

std::vector<NicUsage> FabricManager::usage() const {
  std::lock_guard lock(mu_);
  std::vector<NicUsage> out;
  for (const auto& nic : ledger_.nics) {
    NicUsage u{nic.name, nic.ifindex, {}, nic.original_mtu, nic.original_up};
    for (const auto& j : ledger_.jobs) {
      for (const auto& n : j.nics) {
        if (n.nic == nic.name) u.jobs.push_back(j.job_id);
      }
    }
    out.push_back(std::move(u));
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> fabricEnvironment(const JobFabric& fabric) {
  std::vector<std::pair<std::string, std::string>> env;
  if (fabric.nics.empty()) return env;
  std::string nics;
  std::string addresses;
  std::optional<uint8_t> prefix;
  for (const auto& n : fabric.nics) {
    nics += (nics.empty() ? "" : ",") + n.nic;
    if (!n.address) continue;
    addresses += (addresses.empty() ? "" : ",") + formatIpv4(n.address->address);
    prefix = n.address->length;
  }
  env.emplace_back("ACCEL_FABRIC_NICS", nics);
  if (!addresses.empty()) env.emplace_back("ACCEL_FABRIC_ADDRESSES", addresses);
  if (prefix) env.emplace_back("ACCEL_FABRIC_PREFIX", std::to_string(*prefix));
  if (fabric.mtu) env.emplace_back("ACCEL_FABRIC_MTU", std::to_string(*fabric.mtu));
  return env;
}

}  // namespace accel::fabric
