// accel-aggregatord [--config FILE]
// accel-aggregatord [--config FILE] events [--database PATH] [--job ID] [--node NAME] [--follow]
// [--json] accel-aggregatord [--config FILE] nodes [--database PATH] [--json] accel-aggregatord
// --check-config [--config FILE]
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "accel/aggregator/cli.h"
#include "accel/common/log.h"
#include "accel/slurm/slurmctld_job_runs.h"
#include "accel/slurm/slurmdb_accounting.h"

namespace {

using accel::aggregator::AggregatorConfig;

constexpr const char* kDefaultConfig = "/etc/slurm/accel-aggregator.conf";

constexpr const char* kUsage =
    "usage: accel-aggregatord [--config FILE] [--check-config]\n"
    "       accel-aggregatord [--config FILE] events [--database PATH] [--job ID] [--node NAME] "
    "[--follow] [--json]\n"
    "       accel-aggregatord [--config FILE] nodes [--database PATH] [--json]\n";

int usage() {
  std::fputs(kUsage, stderr);
  std::fputs("see 'accel-aggregatord --help'\n", stderr);
  return 2;
}

int help() {
  std::fputs(kUsage, stdout);
  std::fputs(
      "\nThe central store of every node's job events; writes each job's summary into its "
      "AdminComment.\n"
      "  --config FILE    accel-aggregator.conf (default /etc/slurm/accel-aggregator.conf)\n"
      "  --check-config   check the config file and exit (0: ok, 1: the problems are printed)\n"
      "  --help           this text; 'accel-aggregatord events --help' and 'nodes --help' for the "
      "verbs\n",
      stdout);
  return 0;
}

int eventsHelp() {
  std::fputs(
      "usage: accel-aggregatord [--config FILE] events [--database PATH] [--job ID] [--node NAME] "
      "[--follow] "
      "[--json]\n\n"
      "Prints the job events the aggregator stored, oldest first.\n"
      "  --database PATH   the database to read (default: Database in the config file)\n"
      "  --job ID          events of one job\n"
      "  --node NAME       events from one node\n"
      "  --follow          keep printing new events as they arrive\n"
      "  --json            one JSON object per event\n",
      stdout);
  return 0;
}

int events(const AggregatorConfig* config, const std::vector<std::string>& args) {
  accel::aggregator::EventsQuery q;
  if (config) q.database = config->database;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    bool has_value = i + 1 < args.size();
    if (a == "--help" || a == "-h") return eventsHelp();
    if (a == "--follow")
      q.follow = true;
    else if (a == "--json")
      q.json = true;
    else if (a == "--job" && has_value)
      q.job_id = static_cast<uint32_t>(std::strtoul(args[++i].c_str(), nullptr, 10));
    else if (a == "--node" && has_value)
      q.node = args[++i];
    else if (a == "--database" && has_value)
      q.database = args[++i];
    else
      return usage();
  }
  return accel::aggregator::runEvents(q);
}

int nodesHelp() {
  std::fputs(
      "usage: accel-aggregatord [--config FILE] nodes [--database PATH] [--json]\n\n"
      "Prints every node the aggregator has heard from: alive while its latest event is at most "
      "three\n"
      "of its heartbeat intervals old, late after that, no-heartbeat if it never sent one.\n"
      "  --database PATH   the database to read (default: Database in the config file)\n"
      "  --json            one JSON object per node\n",
      stdout);
  return 0;
}

int nodes(const AggregatorConfig* config, const std::vector<std::string>& args) {
  accel::aggregator::NodesQuery q;
  if (config) q.database = config->database;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") return nodesHelp();
    if (a == "--json")
      q.json = true;
    else if (a == "--database" && i + 1 < args.size())
      q.database = args[++i];
    else
      return usage();
  }
  return accel::aggregator::runNodes(q);
}

int run(int argc, char** argv) {
  std::string config_path = kDefaultConfig;
  bool check = false, explicit_config = false;
  int i = 1;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--config" && i + 1 < argc)
      config_path = argv[++i], explicit_config = true;
    else if (a == "--check-config")
      check = true;
    else if (a == "--help" || a == "-h")
      return help();
    else if (a == "events" || a == "nodes")
      break;
    else
      return usage();
  }
  auto config = accel::aggregator::loadAggregatorConfig(config_path);
  if (i < argc) {
    std::vector<std::string> rest(argv + i + 1, argv + argc);
    // The verbs work without a config when --database is given.
    bool usable = config.ok() || !explicit_config;
    if (!usable)
      return std::fprintf(stderr, "accel-aggregatord: %s\n", config.error().message().c_str()), 1;
    const AggregatorConfig* c = config.ok() ? &*config : nullptr;
    return std::string(argv[i]) == "nodes" ? nodes(c, rest) : events(c, rest);
  }
  if (!config.ok())
    return std::fprintf(stderr, "accel-aggregatord: %s\n", config.error().message().c_str()), 1;
  if (check) return 0;
  static constexpr accel::log::Level kLevels[] = {
      accel::log::Level::kError, accel::log::Level::kWarning, accel::log::Level::kInfo,
      accel::log::Level::kDebug};
  accel::log::init("accel-aggregatord", kLevels[static_cast<int>(config->log_level)]);
  // The one place the real Slurm adapters (libslurmdb, libslurm) are wired in.
  return accel::aggregator::runDaemon(
      *config,
      [](const AggregatorConfig& c) {
        return std::make_unique<accel::slurm::SlurmdbAccounting>(
            c.cluster_name, c.slurm_conf.value_or(""), int(c.comment_connections));
      },
      [](const AggregatorConfig& c) {
        return std::make_unique<accel::slurm::SlurmctldJobRuns>(c.slurm_conf.value_or(""));
      });
}

}  // namespace

int main(int argc, char** argv) {
  // What escapes (memory exhausted, a library's exception) is said, not an abort.
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "accel-aggregatord: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "accel-aggregatord: an unknown exception\n");
  }
  return 1;
}
