#include "accel/agent/job_nodes.h"

#include "accel/common/hostlist.h"

namespace accel::agent {

std::string jobLeader(const JobRequestSpec& spec) {
  if (spec.node_list.empty()) return "";
  auto first = firstHost(spec.node_list);
  return first.ok() ? *first : "";
}

bool leadsJob(const JobRequestSpec& spec) {
  if (spec.node.empty() || spec.node_count == 1) return true;
  // One plain name: the job has this node only, whatever it is called here.
  if (spec.node_list.find_first_of(",[") == std::string::npos) return true;
  const std::string leader = jobLeader(spec);
  return leader.empty() || leader == spec.node;
}

}  // namespace accel::agent
