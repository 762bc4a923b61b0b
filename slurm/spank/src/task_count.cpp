#include "accel/spank/task_count.h"

#include "accel/spank/job_env.h"
#include "accel/spank/option_values.h"

namespace accel::spank {
namespace {

// A count of 1 to kMaxTasksOnNode, or nullopt.
std::optional<std::uint32_t> count(std::string_view text) {
  ParsedNumber n = parseWholeNumber(text, kMaxTasksOnNode);
  if (n.problem != NumberProblem::kNone || n.value == 0) return std::nullopt;
  return static_cast<std::uint32_t>(n.value);
}

}  // namespace

std::optional<std::uint32_t> tasksPerNode(std::optional<std::string_view> ntasks,
                                          std::optional<std::string_view> ntasks_per_node,
                                          std::optional<std::string_view> nodes) {
  if (ntasks_per_node) return count(*ntasks_per_node);
  if (!ntasks) return std::nullopt;
  auto total = count(*ntasks);
  if (!total) return std::nullopt;
  // "N" or "MIN-MAX": the tasks are spread over at least MIN nodes.
  std::uint32_t min_nodes = 1;
  if (nodes) {
    auto n = count(nodes->substr(0, nodes->find('-')));
    if (!n) return std::nullopt;
    min_nodes = *n;
  }
  return (*total + min_nodes - 1) / min_nodes;
}

}  // namespace accel::spank
