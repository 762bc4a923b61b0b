// The key table of accel-aggregator.conf, one row per key.
#include "accel/aggregator/config.h"

#include "accel/common/config_file.h"

namespace accel::aggregator {
namespace {

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

ConfigSchema makeSchema() {
  using C = AggregatorConfig;
  return ConfigSchema{
      .file_name = kAggregatorConfName,
      .summary =
          "Settings of accel-aggregatord, the central service that receives every node's job "
          "events and writes job summaries into Slurm accounting.",
      .config_type = &typeid(C),
      .keys = {
          {.name = "Listen",
           .type = ValueType::kString,
           .default_value = "tcp://*:7450",
           .help = "ZeroMQ endpoint on which node agents connect (CURVE encrypted).",
           .store = storeIn<&C::listen>},
          {.name = "QueryAddress",
           .type = ValueType::kString,
           .help = "ZeroMQ endpoint, e.g. tcp://*:7451, on which node agents ask for a job's "
                   "recorded events on behalf of `accelctl events --job` on their node (CURVE "
                   "encrypted, the same keys and allow list as Listen). Unset: events can be read "
                   "only on this host.",
           .store = storeIn<&C::query_address>},
          {.name = "SecretKeyFile",
           .type = ValueType::kPath,
           .default_value = "/etc/accel-agent/aggregator.key",
           .help =
               "The aggregator's CURVE secret key (accel-keygen). Refused if group or others can "
               "read it. Nodes need the matching .pub file.",
           .store = storeIn<&C::secret_key_file>},
          {.name = "AllowListDir",
           .type = ValueType::kPath,
           .default_value = "/etc/accel-agent/nodes",
           .help = "Directory of node public keys, one NODE.pub per node. Only these keys may "
                   "connect, and each may send events only under its own node name. Read at start "
                   "and again on SIGHUP (`systemctl reload accel-aggregatord`), so adding a node "
                   "needs no restart.",
           .store = storeIn<&C::allow_list_dir>},
          {.name = "Database",
           .type = ValueType::kPath,
           .default_value = "/var/lib/accel-aggregator/events.db",
           .help = "SQLite database of events, job summaries and pending accounting writes.",
           .store = storeIn<&C::database>},
          {.name = "MetricsAddress",
           .type = ValueType::kString,
           .help = "HOST:PORT (a numeric IPv4 host, e.g. 127.0.0.1:9466) on which the aggregator "
                   "serves its metrics to Prometheus at /metrics (operator guide, Metrics). Unset: "
                   "no endpoint.",
           .store = storeIn<&C::metrics_address>},
          {.name = "CommentWritesPerSecond",
           .type = ValueType::kUint,
           .default_value = "200",
           .min = 1,
           .max = 100000,
           .help =
               "Most jobs per second whose AdminComment is written to slurmdbd (attempts, "
               "successful "
               "or not). Summaries that come faster wait in the database's queue, in order, across "
               "restarts.",
           .store = storeIn<&C::comment_writes_per_second>},
          {.name = "CommentBatchSize",
           .type = ValueType::kUint,
           .default_value = "50",
           .min = 1,
           .max = 1000,
           .help =
               "Most jobs written over one connection to slurmdbd: their comments are read in one "
               "query, written one request each, and committed once.",
           .store = storeIn<&C::comment_batch_size>},
          {.name = "CommentConnections",
           .type = ValueType::kUint,
           .default_value = "8",
           .min = 1,
           .max = 64,
           .help = "Connections to slurmdbd a batch of AdminComment writes is spread over, side by "
                   "side. "
                   "Each write is one request and answer; its time is mostly the network's, so "
                   "writes on "
                   "several connections go faster without more work for slurmdbd per write.",
           .store = storeIn<&C::comment_connections>},
          {.name = "WriteComments",
           .type = ValueType::kBool,
           .default_value = "yes",
           .help = "Write job summaries into AdminComment. With no, they are only queued.",
           .store = storeIn<&C::write_comments>},
          {.name = "SummaryWaitSeconds",
           .type = ValueType::kSeconds,
           .default_value = "300",
           .min = 0,
           .max = 86400,
           .help =
               "How long to wait for the epilogs of a job's other nodes, counted from the first "
               "epilog of the job that arrives. A job's summary is written into AdminComment once "
               "every node of the job has finished its epilog; when some node has not reported by "
               "then (it died, or its agent was lost), the summary is written anyway and names the "
               "nodes it lacks (missing_nodes), and is written again if their epilogs come later. "
               "The wait is kept in the database, so it runs on across restarts. 0: write at the "
               "first epilog and again at every later one.",
           .store = storeIn<&C::summary_wait>},
          {.name = "ClusterName",
           .type = ValueType::kString,
           .help = "ClusterName of slurm.conf. Unset: asked from slurmctld.",
           .store = storeIn<&C::cluster_name>},
          {.name = "SlurmConf",
           .type = ValueType::kPath,
           .help = "slurm.conf for libslurm. Unset: Slurm's default.",
           .store = storeIn<&C::slurm_conf>},
          {.name = "MaxFrameSize",
           .type = ValueType::kSize,
           .default_value = "64K",
           .min = 1024,
           .max = 65536,
           .help = "Largest event frame accepted; larger ones are refused and counted.",
           .store = storeIn<&C::max_frame_bytes>},
          {.name = "BatchSize",
           .type = ValueType::kUint,
           .default_value = "8192",
           .min = 1,
           .max = 100000,
           .help = "Most events committed in one transaction (and acknowledged together).",
           .store = storeIn<&C::batch_size>},
          {.name = "BatchWaitMs",
           .type = ValueType::kUint,
           .default_value = "5",
           .min = 0,
           .max = 1000,
           .help =
               "Milliseconds a batch stays open for more events after its first one, unless "
               "BatchSize is reached first. Larger: fewer commits; every event's acknowledgement "
               "waits up to this long.",
           .store = storeIn<&C::batch_wait_ms>},
          {.name = "PingInterval",
           .type = ValueType::kSeconds,
           .default_value = "0",
           .min = 0,
           .max = 3600,
           .help = "How often the aggregator pings each node's link (ZeroMQ's ZMTP heartbeat), so "
                   "that links of nodes that hang without closing them are noticed and their "
                   "descriptors freed. 0 (the default): no pings; the nodes' own pings are still "
                   "answered, and TcpKeepAlive finds the links of nodes that vanished. Pings cost "
                   "the aggregator a timer per node, and libzmq cancels a timer by walking all of "
                   "them: with thousands of nodes that takes most of its I/O thread.",
           .store = storeIn<&C::ping_interval>},
          {.name = "PingTimeout",
           .type = ValueType::kSeconds,
           .default_value = "90",
           .min = 1,
           .max = 3600,
           .help = "A node's link on which nothing has come for this long after a ping is closed; "
                   "the node makes a new one when it can.",
           .store = storeIn<&C::ping_timeout>},
          {.name = "TcpKeepAlive",
           .type = ValueType::kSeconds,
           .default_value = "60",
           .min = 0,
           .max = 7200,
           .help = "On a tcp:// Listen address, the idle time after which the kernel starts TCP "
                   "keepalive probes on a node's link (then one every 10 seconds, or this value if "
                   "smaller; three unanswered close it). 0: the system's default.",
           .store = storeIn<&C::tcp_keepalive>},
          {.name = "HandshakeTimeout",
           .type = ValueType::kSeconds,
           .default_value = "3",
           .min = 1,
           .max = 60,
           .help = "A connection on Listen whose CURVE handshake is not done within this time is "
                   "closed, so that a peer that opens connections and never finishes the handshake "
                   "holds no descriptor for long.",
           .store = storeIn<&C::handshake_timeout>},
          {.name = "IoThreads",
           .type = ValueType::kUint,
           .default_value = "2",
           .min = 1,
           .max = 16,
           .help = "ZeroMQ I/O threads serving the nodes' links on Listen (CURVE encryption and "
                   "handshakes). The events questions on QueryAddress have one thread of their "
                   "own.",
           .store = storeIn<&C::io_threads>},
          {.name = "ConnectionsPerAddress",
           .type = ValueType::kUint,
           .default_value = "16",
           .min = 0,
           .max = 100000,
           .help = "Most connections one source address may hold open on Listen, and open within "
                   "one second; a connection over either is closed as soon as it is accepted. An "
                   "address that opens more per second, or whose keys are refused three times "
                   "within 10 s, has all its connections closed on accept for 30 s, so a stranger "
                   "cannot make the aggregator do handshake after handshake. Nodes behind one "
                   "address (NAT) need a larger value. 0: no bound.",
           .store = storeIn<&C::connections_per_address>},
          {.name = "Synchronous",
           .type = ValueType::kEnum,
           .default_value = "full",
           .choices = {"full", "normal"},
           .help =
               "full: each batch is fsynced before its events are acknowledged, so nothing "
               "acknowledged is lost on power loss. normal: not fsynced (only checkpoints are); "
               "acknowledged events survive a crash of the daemon but the last moments may be lost "
               "on power loss or a kernel crash. Faster where fsync is slow.",
           .store = storeIn<&C::synchronous>},
          {.name = "LogLevel",
           .type = ValueType::kEnum,
           .default_value = "info",
           .choices = {"error", "warning", "info", "debug"},
           .help = "The least severe kind of message that is logged.",
           .store = storeIn<&C::log_level>},
      }};
}

#pragma GCC diagnostic pop

}  // namespace

const ConfigSchema& aggregatorConfigSchema() {
  static const ConfigSchema schema = makeSchema();
  return schema;
}

Result<AggregatorConfig> parseAggregatorConfig(std::string_view text, std::string_view file_name) {
  return parseWithSchema<AggregatorConfig>(aggregatorConfigSchema(), text, file_name);
}

Result<AggregatorConfig> loadAggregatorConfig(const std::string& path) {
  Result<std::string> text = readConfigFile(path);
  if (!text.ok()) return text.error();
  return parseAggregatorConfig(*text, path);
}

}  // namespace accel::aggregator
