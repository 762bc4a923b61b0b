#pragma once
// Entry points of accel-aggregatord's verbs; main() only dispatches.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "accel/aggregator/accounting.h"
#include "accel/aggregator/config.h"
#include "accel/aggregator/job_runs.h"
#include "accel/aggregator/store.h"

namespace accel::aggregator {

// Makes the accounting the comment writer uses; called once, on the comment
// writer's thread. The entry point passes slurmdbd's (slurm/accounting/),
// so this library never links libslurm.
using AccountingFactory = std::function<std::unique_ptr<Accounting>(const AggregatorConfig&)>;

// Makes slurmctld's JobRuns, which confirm new runs of requeued jobs
// (job_admission.h); called once, on the run checker's thread, at its first
// lookup. The entry point passes libslurm's (slurm/accounting/).
using JobRunsFactory = std::function<std::unique_ptr<JobRuns>(const AggregatorConfig&)>;

// The daemon: returns the process exit status.
int runDaemon(const AggregatorConfig& config, const AccountingFactory& make_accounting,
              const JobRunsFactory& make_job_runs);

struct EventsQuery {
  std::string database;
  std::optional<uint32_t> job_id;
  std::optional<std::string> node;
  bool follow = false;
  bool json = false;
};

// `events`: prints the stored record read-only, oldest first; with follow,
// keeps printing new events until interrupted. Returns the exit status.
int runEvents(const EventsQuery& query);

struct NodesQuery {
  std::string database;
  bool json = false;
};

// `nodes`: every node the aggregator has heard from, with its state, read-only.
int runNodes(const NodesQuery& query);

}  // namespace accel::aggregator
