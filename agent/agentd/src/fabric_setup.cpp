#include "accel/agentd/fabric_setup.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <thread>

#include "accel/fabric/ipv4.h"
#include "accel/fabric/netlink_links.h"
#include "accel/fabric/nic_choice.h"

namespace accel::agentd {

std::vector<std::string> splitList(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string_view item =
        text.substr(start, comma == std::string_view::npos ? text.npos : comma - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string defaultRouteInterface(std::string_view table) {
  std::istringstream in{std::string(table)};
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string iface, dest, gateway, flags, refcnt, use, metric, mask;
    if (!(fields >> iface >> dest >> gateway >> flags >> refcnt >> use >> metric >> mask)) continue;
    if (dest == "00000000" && mask == "00000000") return iface;
  }
  return "";
}

namespace {

struct OpenedLinks {
  Result<std::unique_ptr<fabric::NetlinkLinks>> links = Error(ErrorCode::kInternal, "not opened");
  std::string default_route_if;
};

std::string readDefaultRouteIf() {
  // thread-self: the routes of the namespace this thread is in.
  std::ifstream route("/proc/thread-self/net/route");
  std::stringstream text;
  text << route.rdbuf();
  return defaultRouteInterface(text.str());
}

// Opens the netlink socket in `netns` (empty: ours). A socket stays bound to
// the namespace it was opened in, so only a short-lived thread enters it; the
// daemon's other threads never change namespace.
OpenedLinks openLinks(const std::string& netns) {
  OpenedLinks out;
  if (netns.empty()) {
    out.links = fabric::NetlinkLinks::open();
    out.default_route_if = readDefaultRouteIf();
    return out;
  }
  if (netns.find('/') != std::string::npos || netns == "." || netns == "..")
    return {
        Error(ErrorCode::kInvalidArgument, "FabricNetns: '" + netns + "' is not a namespace name"),
        ""};
  std::thread([&] {
    std::string path = "/run/netns/" + netns;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      out.links = sysError("FabricNetns " + path, errno);
      return;
    }
    if (::setns(fd, CLONE_NEWNET) != 0) {
      out.links = sysError("FabricNetns: entering " + path, errno);
      ::close(fd);
      return;
    }
    ::close(fd);
    out.links = fabric::NetlinkLinks::open();
    out.default_route_if = readDefaultRouteIf();
  }).join();
  return out;
}

}  // namespace

Result<std::unique_ptr<agent::FabricStep>> makeFabricStep(const AccelConfig& c,
                                                          topology::NodeTopology topology) {
  fabric::FabricConfig fc;
  fc.interfaces = splitList(c.fabric_interfaces);
  fc.mtu = static_cast<uint32_t>(c.fabric_mtu);
  fc.address_range = c.fabric_address_range;
  fc.address_prefix = static_cast<uint8_t>(c.fabric_address_prefix);
  fc.routes = splitList(c.fabric_routes);
  fc.state_dir = c.run_dir + "/fabric";
  for (const auto& r : fc.routes)
    if (auto n = fabric::parseNetwork(r); !n.ok()) return n.error().context("FabricRoutes: " + r);
  auto opened = openLinks(c.fabric_netns);
  ACCEL_TRY(opened.links);
  auto manager = fabric::FabricManager::open(fc, std::move(*opened.links));
  ACCEL_TRY(manager);
  std::vector<std::string> avoid;
  if (!c.fabric_management_interface.empty()) {
    avoid.push_back(c.fabric_management_interface);
  } else if (!opened.default_route_if.empty()) {
    avoid.push_back(opened.default_route_if);
  }
  auto configured = fc.interfaces;
  auto choose = [topology = std::move(topology), configured,
                 avoid](const agent::JobRecord& job) -> Result<std::vector<std::string>> {
    // Jobs without accelerators get no fabric.
    if (job.devices.empty() && job.spec.ipus == 0) return std::vector<std::string>{};
    std::vector<unsigned> accels(job.devices.begin(), job.devices.end());
    auto nics = fabric::chooseFabricNics(topology, accels, configured, avoid);
    ACCEL_TRY(nics);
    return fabric::nicNames(*nics);
  };
  return std::make_unique<agent::FabricStep>(std::move(*manager), std::move(choose));
}

}  // namespace accel::agentd
