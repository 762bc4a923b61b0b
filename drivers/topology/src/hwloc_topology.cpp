// The hwloc adapter: the only file that includes hwloc. It loads a topology
// (live or XML), copies what the agent needs into an Inventory of plain
// values, and hands that to classify().
#include <fcntl.h>
#include <hwloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>

#include "accel/topology/loader.h"
#include "inventory.h"
#include "xml_source.h"

static_assert(HWLOC_API_VERSION >= 0x00020000, "accel_topology needs the hwloc 2 API");

namespace accel::topology {
namespace {

using detail::Inventory;
using detail::OsDeviceRecord;
using detail::OsDeviceType;
using detail::PciRecord;

// hwloc reads HWLOC_HIDE_ERRORS once, at its first diagnostic; 2 hides even
// the "critical" reports (BIOS/OS inconsistencies) that would otherwise
// land on the stderr of every prolog. HWLOC_LIBXML_IMPORT=0 selects hwloc's
// built-in XML reader over the libxml2 plugin: one reader on every node
// whatever plugins are installed, and the plugin leaks memory on malformed
// files (found by tests/fuzz/fuzz_topology_xml). An operator's own settings win.
void quietHwloc() {
  static std::once_flag once;
  std::call_once(once, [] {
    ::setenv("HWLOC_HIDE_ERRORS", "2", /*overwrite=*/0);
    ::setenv("HWLOC_LIBXML_IMPORT", "0", /*overwrite=*/0);
  });
}

// The library version, which decides the XML formats it reads. hwloc has
// it only at compile time (Debian ships headers and library together); the
// runtime API version differs (2.9 reports API 2.8).
detail::HwlocVersion libraryVersion() {
#if defined(HWLOC_VERSION_MAJOR) && defined(HWLOC_VERSION_MINOR)
  return {HWLOC_VERSION_MAJOR, HWLOC_VERSION_MINOR};
#else
  unsigned api = hwloc_get_api_version();
  return {api >> 16, (api >> 8) & 0xffu};
#endif
}

// Owns one hwloc topology for the duration of a load.
class HwlocTopology {
 public:
  HwlocTopology() = default;
  ~HwlocTopology() {
    if (handle_ != nullptr) hwloc_topology_destroy(handle_);
  }
  HwlocTopology(const HwlocTopology&) = delete;
  HwlocTopology& operator=(const HwlocTopology&) = delete;

  Status init();
  hwloc_topology_t get() const { return handle_; }

 private:
  hwloc_topology_t handle_ = nullptr;
};

Status HwlocTopology::init() {
  quietHwloc();
  if (hwloc_topology_init(&handle_) != 0) return sysError("hwloc: topology init", errno);
  // The node's view, not this process's cgroup: CPUs outside our cpuset are
  // still the node's.
  unsigned long flags = HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED;
#if HWLOC_API_VERSION >= 0x00020800
  // Distance matrices, memory attributes and CPU kinds are not used here;
  // skipping them makes loading cheaper.
  flags |= HWLOC_TOPOLOGY_FLAG_NO_DISTANCES | HWLOC_TOPOLOGY_FLAG_NO_MEMATTRS |
           HWLOC_TOPOLOGY_FLAG_NO_CPUKINDS;
#endif
  hwloc_topology_set_flags(handle_, flags);
  // KEEP_ALL, not KEEP_IMPORTANT: the latter drops OS devices that are not
  // directly on PCI (integrated GPUs), and every bridge must stay for
  // distances. I/O objects are off by default, for XML import too.
  hwloc_topology_set_io_types_filter(handle_, HWLOC_TYPE_FILTER_KEEP_ALL);
  return okStatus();
}

std::string formatBusId(unsigned domain, unsigned bus, unsigned dev, unsigned func) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%01x", domain, bus, dev, func);
  return buf;
}

std::string hostBridgeId(hwloc_obj_t bridge) {
  const auto& down = bridge->attr->bridge.downstream.pci;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:[%02x-%02x]", static_cast<unsigned>(down.domain),
                static_cast<unsigned>(down.secondary_bus),
                static_cast<unsigned>(down.subordinate_bus));
  return buf;
}

std::vector<unsigned> bitmapIndexes(hwloc_const_bitmap_t set) {
  std::vector<unsigned> indexes;
  if (set == nullptr || hwloc_bitmap_weight(set) < 0) return indexes;  // empty or infinite
  for (int i = hwloc_bitmap_first(set); i != -1; i = hwloc_bitmap_next(set, i)) {
    indexes.push_back(static_cast<unsigned>(i));
  }
  return indexes;
}

std::string cpuList(hwloc_const_bitmap_t set) {
  char* text = nullptr;
  if (set == nullptr || hwloc_bitmap_list_asprintf(&text, set) < 0 || text == nullptr) return "";
  std::string list(text);
  std::free(text);
  return list;
}

unsigned countOf(hwloc_topology_t topology, hwloc_obj_type_t type) {
  int count = hwloc_get_nbobjs_by_type(topology, type);
  return count > 0 ? static_cast<unsigned>(count) : 0;
}

// hwloc copies enum attributes from XML without checking their range, and
// reading an enum object that holds no enumerator is undefined behaviour
// (found by tests/fuzz/fuzz_topology_xml). Read such fields as their
// underlying integer and compare numbers.
template <typename E>
long rawEnum(const E& field) {
  std::underlying_type_t<E> raw{};
  std::memcpy(&raw, &field, sizeof raw);
  return static_cast<long>(raw);
}

// Host bridge and PCI-to-PCI bridges above `obj`, walking up the I/O tree.
void fillPciPath(hwloc_obj_t obj, Locality& locality) {
  std::vector<std::string> bridges;
  for (hwloc_obj_t p = obj->parent; p != nullptr && hwloc_obj_type_is_io(p->type); p = p->parent) {
    if (p->type != HWLOC_OBJ_BRIDGE) continue;
    const long upstream = rawEnum(p->attr->bridge.upstream_type);
    if (upstream == HWLOC_OBJ_BRIDGE_HOST) {
      locality.pci_host_bridge = hostBridgeId(p);
    } else if (upstream == HWLOC_OBJ_BRIDGE_PCI) {
      const auto& up = p->attr->bridge.upstream.pci;
      bridges.push_back(formatBusId(up.domain, up.bus, up.dev, up.func));
    }
  }
  locality.pci_bridges.assign(bridges.rbegin(), bridges.rend());
}

// NUMA nodes and packages of the normal object hwloc attached `obj` to.
void fillPlacement(hwloc_topology_t topology, hwloc_obj_t obj, Locality& locality) {
  hwloc_obj_t anchor = hwloc_get_non_io_ancestor_obj(topology, obj);
  if (anchor == nullptr) return;
  locality.numa_nodes = bitmapIndexes(anchor->nodeset);
  for (unsigned i = 0; i < countOf(topology, HWLOC_OBJ_PACKAGE); ++i) {
    hwloc_obj_t package = hwloc_get_obj_by_type(topology, HWLOC_OBJ_PACKAGE, i);
    if (anchor->cpuset != nullptr && hwloc_bitmap_intersects(anchor->cpuset, package->cpuset)) {
      locality.packages.push_back(package->os_index);
    }
  }
  std::sort(locality.packages.begin(), locality.packages.end());
  locality.machine_wide = anchor->parent == nullptr && countOf(topology, HWLOC_OBJ_NUMANODE) > 1;
}

OsDeviceType osDeviceType(long type) {
  switch (type) {
    case HWLOC_OBJ_OSDEV_BLOCK:
      return OsDeviceType::kBlock;
    case HWLOC_OBJ_OSDEV_GPU:
      return OsDeviceType::kGpu;
    case HWLOC_OBJ_OSDEV_NETWORK:
      return OsDeviceType::kNetwork;
    case HWLOC_OBJ_OSDEV_OPENFABRICS:
      return OsDeviceType::kOpenFabrics;
    case HWLOC_OBJ_OSDEV_DMA:
      return OsDeviceType::kDma;
    case HWLOC_OBJ_OSDEV_COPROC:
      return OsDeviceType::kCoproc;
  }
  return OsDeviceType::kOther;
}

OsDeviceRecord osDeviceRecord(hwloc_obj_t obj) {
  OsDeviceRecord record;
  record.name = obj->name != nullptr ? obj->name : "";
  record.type = osDeviceType(rawEnum(obj->attr->osdev.type));
  record.subtype = obj->subtype != nullptr ? obj->subtype : "";
  for (unsigned i = 0; i < obj->infos_count; ++i) {
    const hwloc_info_s& info = obj->infos[i];
    record.infos.emplace_back(info.name != nullptr ? info.name : "",
                              info.value != nullptr ? info.value : "");
  }
  return record;
}

PciRecord pciRecord(hwloc_topology_t topology, hwloc_obj_t obj) {
  const auto& attr = obj->attr->pcidev;
  PciRecord record;
  record.bus_id = formatBusId(attr.domain, attr.bus, attr.dev, attr.func);
  record.vendor_id = attr.vendor_id;
  record.device_id = attr.device_id;
  record.class_id = attr.class_id;
  if (const char* name = hwloc_obj_get_info_by_name(obj, "PCIDevice")) record.device_name = name;
  fillPciPath(obj, record.locality);
  fillPlacement(topology, obj, record.locality);
  return record;
}

// The PCI function an OS device belongs to, or nullptr when the device
// hangs from a normal object.
hwloc_obj_t pciParent(hwloc_obj_t osdev) {
  for (hwloc_obj_t p = osdev->parent; p != nullptr && hwloc_obj_type_is_io(p->type);
       p = p->parent) {
    if (p->type == HWLOC_OBJ_PCI_DEVICE) return p;
  }
  return nullptr;
}

detail::LooseOsDevice looseDevice(hwloc_topology_t topology, hwloc_obj_t obj) {
  detail::LooseOsDevice loose;
  loose.device = osDeviceRecord(obj);
  hwloc_obj_t anchor = hwloc_get_non_io_ancestor_obj(topology, obj);
  loose.parent_key = anchor != nullptr ? std::to_string(anchor->gp_index) : "";
  fillPlacement(topology, obj, loose.locality);
  return loose;
}

void readMachine(hwloc_topology_t topology, Inventory& inventory) {
  hwloc_obj_t root = hwloc_get_root_obj(topology);
  if (const char* host = hwloc_obj_get_info_by_name(root, "HostName")) inventory.hostname = host;
  inventory.packages = countOf(topology, HWLOC_OBJ_PACKAGE);
  inventory.cores = countOf(topology, HWLOC_OBJ_CORE);
  inventory.pus = countOf(topology, HWLOC_OBJ_PU);
  for (unsigned i = 0; i < countOf(topology, HWLOC_OBJ_NUMANODE); ++i) {
    hwloc_obj_t node = hwloc_get_obj_by_type(topology, HWLOC_OBJ_NUMANODE, i);
    inventory.numa_nodes.push_back(
        {node->os_index, node->attr->numanode.local_memory, cpuList(node->cpuset)});
  }
  std::sort(inventory.numa_nodes.begin(), inventory.numa_nodes.end(),
            [](const NumaNode& a, const NumaNode& b) { return a.os_index < b.os_index; });
}

void readDevices(hwloc_topology_t topology, Inventory& inventory) {
  std::unordered_map<hwloc_obj_t, std::size_t> pci_position;
  for (hwloc_obj_t obj = hwloc_get_next_pcidev(topology, nullptr); obj != nullptr;
       obj = hwloc_get_next_pcidev(topology, obj)) {
    pci_position[obj] = inventory.pci.size();
    inventory.pci.push_back(pciRecord(topology, obj));
  }
  for (hwloc_obj_t obj = hwloc_get_next_osdev(topology, nullptr); obj != nullptr;
       obj = hwloc_get_next_osdev(topology, obj)) {
    // Sub-devices (ze0.1 inside ze0) are parts of a device already listed.
    if (obj->parent != nullptr && obj->parent->type == HWLOC_OBJ_OS_DEVICE) continue;
    if (hwloc_obj_t pci = pciParent(obj)) {
      inventory.pci[pci_position.at(pci)].os_devices.push_back(osDeviceRecord(obj));
    } else {
      inventory.loose.push_back(looseDevice(topology, obj));
    }
  }
}

Result<NodeTopology> classifyLoaded(const HwlocTopology& topology) {
  Inventory inventory;
  readMachine(topology.get(), inventory);
  readDevices(topology.get(), inventory);
  return detail::classify(std::move(inventory));
}

Result<NodeTopology> loadLive(const LoadOptions& options) {
  HwlocTopology topology;
  ACCEL_TRY(topology.init());
  // GL probes X displays (it can hang on headless nodes) and adds only
  // display names; OpenCL initialises vendor runtimes. The "pci" component
  // (libpciaccess) adds only PCI vendor/device names over what hwloc reads
  // from sysfs on Linux, and leaks about 1 KiB per load (LeakSanitizer).
  // Blacklisting a component that is not installed is harmless.
  hwloc_topology_t handle = topology.get();
  hwloc_topology_set_components(handle, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "gl");
  hwloc_topology_set_components(handle, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "pci");
  if (!options.opencl) {
    hwloc_topology_set_components(handle, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "opencl");
  }
  if (hwloc_topology_load(topology.get()) != 0) {
    return Error(ErrorCode::kIo,
                 std::string("hwloc: discovering this node failed: ") + std::strerror(errno));
  }
  return classifyLoaded(topology);
}

// hwloc 2.9 trusts XML it is given: some malformed files (found by
// tests/fuzz/fuzz_topology_xml) make hwloc_topology_load dereference null.
// XML comes from files people name, so it is first loaded by a child
// process; a crash there becomes an error here instead of taking down
// accelctl or the daemon. Topology loads are rare (start, reload, a verb),
// so the extra load costs nothing that matters.
constexpr int kPreflightLoaded = 0;
constexpr int kPreflightLoadFailed = 3;

Status preflightInChild(const std::string& buffer, const std::string& where) {
  pid_t pid = ::fork();
  if (pid < 0) return Error(ErrorCode::kIo, where + ": fork: " + std::strerror(errno));
  if (pid == 0) {
    // Die of the signal itself, whatever handlers the process installed
    // (sanitizers turn a SEGV into exit(1)), so the parent can tell.
    for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL}) ::signal(sig, SIG_DFL);
    int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (devnull >= 0) ::dup2(devnull, STDERR_FILENO);
    hwloc_topology_t t = nullptr;
    if (hwloc_topology_init(&t) != 0) ::_exit(kPreflightLoadFailed);
    if (hwloc_topology_set_xmlbuffer(t, buffer.c_str(), static_cast<int>(buffer.size() + 1)) != 0)
      ::_exit(kPreflightLoadFailed);
    ::_exit(hwloc_topology_load(t) == 0 ? kPreflightLoaded : kPreflightLoadFailed);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return Error(ErrorCode::kIo, where + ": waitpid: " + std::strerror(errno));
  }
  const bool clean_exit = WIFEXITED(status) && (WEXITSTATUS(status) == kPreflightLoaded ||
                                                WEXITSTATUS(status) == kPreflightLoadFailed);
  if (!clean_exit) {
    std::string how = WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                          : "exit status " + std::to_string(WEXITSTATUS(status));
    return Error(ErrorCode::kParse, where + ": hwloc crashed reading it (" + how +
                                        "); the file is malformed or inconsistent");
  }
  return okStatus();  // a plain load failure is reported by the real load below
}

}  // namespace

Result<NodeTopology> loadTopologyFromXmlText(std::string_view xml, std::string_view origin) {
  const std::string where(origin);
  ACCEL_TRY(detail::checkTopologyXmlHeader(xml, origin, libraryVersion()));
  if (xml.size() >= static_cast<std::size_t>(INT_MAX)) {
    return Error(ErrorCode::kInvalidArgument, where + ": too large for hwloc");
  }
  HwlocTopology topology;
  ACCEL_TRY(topology.init());
  // hwloc wants the terminating NUL inside the buffer it is given.
  const std::string buffer(xml);
  ACCEL_TRY(preflightInChild(buffer, where));
  if (hwloc_topology_set_xmlbuffer(topology.get(), buffer.c_str(),
                                   static_cast<int>(buffer.size() + 1)) != 0) {
    return Error(ErrorCode::kParse,
                 where +
                     ": hwloc cannot parse it (malformed or truncated XML; "
                     "`HWLOC_XML_VERBOSE=1 lstopo-no-graphics -i FILE` shows where)");
  }
  // Without libxml2, hwloc's own parser finds truncation only here.
  errno = 0;
  if (hwloc_topology_load(topology.get()) != 0) {
    std::string why = errno != 0 ? std::string(": ") + std::strerror(errno) : "";
    return Error(ErrorCode::kParse,
                 where +
                     ": hwloc cannot load it (malformed, truncated or inconsistent topology; "
                     "`HWLOC_XML_VERBOSE=1 lstopo-no-graphics -i FILE` shows where)" +
                     why);
  }
  return classifyLoaded(topology);
}

Result<NodeTopology> loadTopology(const LoadOptions& options) {
  if (!options.xml_path) return loadLive(options);
  const std::string origin = "topology XML '" + options.xml_path->string() + "'";
  auto text = detail::readTopologyXmlFile(*options.xml_path, origin);
  if (!text.ok()) return text.error();
  return loadTopologyFromXmlText(*text, origin);
}

}  // namespace accel::topology
