#pragma once
// The fake V-IPU controller's model: a pool of IPUs and the partitions that
// hold them. Pure functions of values; vipu_main.cpp does the file I/O.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "accel/common/result.h"

namespace accel::hw_mock {

constexpr int kDefaultPoolSize = 64;

struct Partition {
  std::string name;
  int size = 0;  // IPUs
  int gcds = 1;
  int replicas = 1;
  std::vector<int> ipus;  // global IPU ids, ascending
};

struct Pool {
  int capacity = kDefaultPoolSize;
  std::vector<Partition> partitions;  // in creation order
};

// partitions.json content (empty text: no partitions) into a pool.
Result<Pool> parsePool(std::string_view json_text, int capacity);
std::string poolToJson(const Pool& pool);

// The size rules: size a power of two >= 1, gcds >= 1 dividing size,
// replicas >= 1 dividing size / gcds. kInvalidArgument names the broken rule.
Status checkShape(int size, int gcds, int replicas);

// Adds a partition on the lowest free IPU ids. Errors: kConflict "already
// exists", kUnavailable "not enough free IPUs", kInvalidArgument bad shape.
Status addPartition(Pool& pool, const std::string& name, int size, int gcds, int replicas);

// False if there is no such partition.
bool removePartition(Pool& pool, const std::string& name);
const Partition* findPartition(const Pool& pool, const std::string& name);

// `vipu list partitions`: an aligned table, or a JSON array.
std::string partitionTable(const Pool& pool);
nlohmann::json partitionList(const Pool& pool);

// `vipu get partition NAME --ipu-configs`: {"partition", "gcds": [{gcd, config}]}.
nlohmann::json ipuofConfigs(const Partition& p, const std::string& host, int port);

}  // namespace accel::hw_mock
