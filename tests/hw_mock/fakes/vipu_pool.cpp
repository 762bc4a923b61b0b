#include "vipu_pool.h"

#include <algorithm>
#include <cstdio>

namespace accel::hw_mock {

using nlohmann::json;

namespace {

json partitionJson(const Partition& p) {
  return {{"id", p.name},           {"size", p.size},    {"gcds", p.gcds},
          {"replicas", p.replicas}, {"state", "ACTIVE"}, {"ipus", p.ipus}};
}

// Four IPUs per IPU-Machine; every machine has one address on the fabric.
std::string fabricAddress(int ipu) {
  int machine = ipu / 4;
  return "10.8." + std::to_string(machine / 200) + "." + std::to_string(machine % 200 + 1);
}

json gcdConfig(const Partition& p, int gcd, const std::string& host, int port) {
  const int per_gcd = p.size / p.gcds;
  json ipus = json::array();
  for (int i = 0; i < per_gcd; ++i) {
    int id = p.ipus[static_cast<size_t>(gcd * per_gcd + i)];
    ipus.push_back({{"id", i},
                    {"ipu_id", id},
                    {"ipum", id / 4},
                    {"ipu_index", id % 4},
                    {"fabric_address", fabricAddress(id)}});
  }
  return {{"ipuof_version", "2.0"},
          {"partition_id", p.name},
          {"gcd_index", gcd},
          {"num_gcds", p.gcds},
          {"num_replicas", p.replicas},
          {"num_ipus", per_gcd},
          {"ipus", ipus},
          {"vipu_controller", {{"host", host}, {"port", port}}}};
}

}  // namespace

Result<Pool> parsePool(std::string_view json_text, int capacity) {
  Pool pool;
  pool.capacity = capacity;
  if (json_text.empty()) return pool;
  json doc = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_array()) return Error(ErrorCode::kParse, "partitions file is not a JSON array");
  for (const auto& j : doc) {
    Partition p;
    p.name = j.value("id", "");
    p.size = j.value("size", 0);
    p.gcds = j.value("gcds", 1);
    p.replicas = j.value("replicas", 1);
    p.ipus = j.value("ipus", std::vector<int>{});
    if (p.name.empty() || static_cast<int>(p.ipus.size()) != p.size)
      return Error(ErrorCode::kParse, "partitions file holds a malformed partition");
    pool.partitions.push_back(std::move(p));
  }
  return pool;
}

std::string poolToJson(const Pool& pool) { return partitionList(pool).dump(1) + "\n"; }

Status checkShape(int size, int gcds, int replicas) {
  auto bad = [](const std::string& why) { return Error(ErrorCode::kInvalidArgument, why); };
  if (size < 1 || (size & (size - 1)) != 0)
    return bad("partition size " + std::to_string(size) + " is not a power of two");
  if (gcds < 1 || size % gcds != 0)
    return bad("number of GCDs " + std::to_string(gcds) + " does not divide size " +
               std::to_string(size));
  if (replicas < 1 || size % replicas != 0)
    return bad("number of replicas " + std::to_string(replicas) + " does not divide size " +
               std::to_string(size));
  return okStatus();
}

Status addPartition(Pool& pool, const std::string& name, int size, int gcds, int replicas) {
  if (findPartition(pool, name) != nullptr)
    return Error(ErrorCode::kConflict, "partition '" + name + "' already exists");
  ACCEL_TRY(checkShape(size, gcds, replicas));
  std::vector<bool> used(static_cast<size_t>(std::max(pool.capacity, 0)), false);
  for (const auto& p : pool.partitions)
    for (int id : p.ipus)
      if (id >= 0 && id < pool.capacity) used[static_cast<size_t>(id)] = true;
  Partition p{name, size, gcds, replicas, {}};
  for (int id = 0; id < pool.capacity && static_cast<int>(p.ipus.size()) < size; ++id)
    if (!used[static_cast<size_t>(id)]) p.ipus.push_back(id);
  if (static_cast<int>(p.ipus.size()) < size) {
    return Error(ErrorCode::kUnavailable, "not enough free IPUs for partition '" + name +
                                              "': requested " + std::to_string(size) + ", free " +
                                              std::to_string(p.ipus.size()));
  }
  pool.partitions.push_back(std::move(p));
  return okStatus();
}

bool removePartition(Pool& pool, const std::string& name) {
  auto it = std::find_if(pool.partitions.begin(), pool.partitions.end(),
                         [&](const Partition& p) { return p.name == name; });
  if (it == pool.partitions.end()) return false;
  pool.partitions.erase(it);
  return true;
}

const Partition* findPartition(const Pool& pool, const std::string& name) {
  for (const auto& p : pool.partitions)
    if (p.name == name) return &p;
  return nullptr;
}

std::string partitionTable(const Pool& pool) {
  size_t width = 2;
  for (const auto& p : pool.partitions) width = std::max(width, p.name.size());
  auto row = [width](const std::string& id, const std::string& size, const std::string& gcds,
                     const std::string& replicas, const std::string& state) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "%-*s  %-6s %-6s %-9s %s\n", static_cast<int>(width), id.c_str(),
                  size.c_str(), gcds.c_str(), replicas.c_str(), state.c_str());
    return std::string(buf);
  };
  std::string out = row("ID", "SIZE", "GCDS", "REPLICAS", "STATE");
  for (const auto& p : pool.partitions)
    out += row(p.name, std::to_string(p.size), std::to_string(p.gcds), std::to_string(p.replicas),
               "ACTIVE");
  return out;
}

json partitionList(const Pool& pool) {
  json out = json::array();
  for (const auto& p : pool.partitions) out.push_back(partitionJson(p));
  return out;
}

json ipuofConfigs(const Partition& p, const std::string& host, int port) {
  json gcds = json::array();
  for (int g = 0; g < p.gcds; ++g)
    gcds.push_back({{"gcd", g}, {"config", gcdConfig(p, g, host, port)}});
  return {{"partition", p.name}, {"gcds", gcds}};
}

}  // namespace accel::hw_mock
