#pragma once
// Which node of a job does the work that exists once per job (its V-IPU
// partition, surrogate steps, cancelling its appliance jobs at the limit):
// the job's leader, the first host of its node list. Every node of the job
// reads the same list from slurmd, so all agree without talking to each
// other; the others (followers) do only their own node's part.
//
// Derived from the request alone (node, node_list, node_count), which the
// job record persists, so a restarted daemon still knows. When the answer
// is uncertain this node leads, which is what a job on one node needs:
//   - the node list is empty or cannot be parsed,
//   - the job has one node (node_count 1, or a list naming one host),
//   - this node's name is unknown,
//   - or the list's first host is this node.
#include <string>

#include "accel/agent/job_record.h"

namespace accel::agent {

bool leadsJob(const JobRequestSpec& spec);

// The job's leader as its node list names it; empty when the list is empty
// or cannot be parsed (then every node leads, see above).
std::string jobLeader(const JobRequestSpec& spec);

}  // namespace accel::agent
