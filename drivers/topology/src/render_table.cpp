#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "accel/topology/distance.h"
#include "accel/topology/render.h"

namespace accel::topology {
namespace {

using Row = std::vector<std::string>;

// Left-aligned columns two spaces apart, indented under a section title.
std::string formatRows(const std::vector<Row>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::ostringstream out;
  for (const auto& row : rows) {
    std::string line = "  ";
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    out << line << '\n';
  }
  return out.str();
}

std::string gibibytes(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1ull << 30));
  return buf;
}

std::string plural(unsigned count, const char* noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

std::string numaColumn(const Locality& locality) {
  std::string list = formatIndexList(locality.numa_nodes);
  if (list.empty()) return "-";
  return locality.machine_wide ? list + " (machine-wide)" : list;
}

std::string nicLabel(const Nic& nic) {
  if (!nic.netdev.empty()) return nic.netdev;
  return nic.rdma_device.value_or("nic" + std::to_string(nic.index));
}

// The nearest NIC, "+N" when N more are as near, and how near.
std::string nearestColumn(const NodeTopology& topology, const Accelerator& accelerator) {
  auto choices = nearestNics(topology, accelerator);
  if (choices.empty()) return "-";
  auto ties = std::count_if(choices.begin(), choices.end(), [&](const NicChoice& c) {
    return c.distance == choices.front().distance;
  });
  std::string text = nicLabel(topology.nics.at(choices.front().nic));
  if (ties > 1) text += " +" + std::to_string(ties - 1);
  return text + " (" + distanceName(choices.front().distance) + ")";
}

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : ",") + item;
  return text.empty() ? "-" : text;
}

std::string numaSection(const NodeTopology& topology) {
  std::vector<Row> rows = {{"NODE", "MEMORY", "CPUS"}};
  for (const auto& node : topology.numa_nodes) {
    rows.push_back({std::to_string(node.os_index), gibibytes(node.memory_bytes),
                    node.cpus.empty() ? "-" : node.cpus});
  }
  return "NUMA nodes\n" + formatRows(rows);
}

std::string acceleratorSection(const NodeTopology& topology) {
  if (topology.accelerators.empty()) return "Accelerators\n  no accelerators found on this node\n";
  std::vector<Row> rows = {
      {"IDX", "KIND", "VENDOR", "MODEL", "PCI BUS ID", "NUMA", "OS DEVICES", "NEAREST NIC"}};
  for (const auto& a : topology.accelerators) {
    rows.push_back({std::to_string(a.index), acceleratorKindName(a.kind), a.vendor,
                    a.model.empty() ? "-" : a.model, a.pci_bus_id.value_or("-"),
                    numaColumn(a.locality), joined(a.os_devices), nearestColumn(topology, a)});
  }
  return "Accelerators\n" + formatRows(rows);
}

std::string nicSection(const NodeTopology& topology) {
  if (topology.nics.empty()) return "NICs\n  no NICs found on this node\n";
  std::vector<Row> rows = {{"IDX", "NETDEV", "RDMA", "LINK", "PCI BUS ID", "NUMA", "ADDRESS"}};
  for (const auto& n : topology.nics) {
    rows.push_back({std::to_string(n.index), n.netdev.empty() ? "-" : n.netdev,
                    n.rdma_device.value_or("-"), linkKindName(n.link), n.pci_bus_id.value_or("-"),
                    numaColumn(n.locality), n.address.empty() ? "-" : n.address});
  }
  return "NICs\n" + formatRows(rows);
}

}  // namespace

std::string formatIndexList(const std::vector<unsigned>& indexes) {
  std::string text;
  for (std::size_t i = 0; i < indexes.size();) {
    std::size_t j = i;
    while (j + 1 < indexes.size() && indexes[j + 1] == indexes[j] + 1) ++j;
    if (!text.empty()) text += ',';
    text += std::to_string(indexes[i]);
    if (j > i) text += '-' + std::to_string(indexes[j]);
    i = j + 1;
  }
  return text;
}

std::string renderTable(const NodeTopology& topology) {
  std::string host = topology.hostname.empty() ? "this node" : topology.hostname;
  std::string summary = host + ": " + plural(topology.packages, "package") + ", " +
                        plural(topology.cores, "core") + ", " + plural(topology.pus, "PU") + ", " +
                        plural(static_cast<unsigned>(topology.numa_nodes.size()), "NUMA node") +
                        "\n";
  return summary + "\n" + numaSection(topology) + "\n" + acceleratorSection(topology) + "\n" +
         nicSection(topology);
}

}  // namespace accel::topology
