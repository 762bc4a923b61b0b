// Every configuration key of accel-agent, one row each. To add a key: add a
// field to the struct (config.h or vipu_config.h), add a row here, and
// regenerate docs/config-reference.md (`accel-config-doc > docs/config-reference.md`).
// Rows are documented in the order written, so keep related keys together.
#include "accel/common/config_keys.h"

#include "accel/common/config.h"
#include "accel/common/vipu_config.h"

namespace accel {
namespace {

// Rows name only the fields they need; the rest keep KeySpec's member
// defaults, which is the point of designated initializers. g++ 12 still warns
// about the omitted fields, so the warning is off for the tables only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

ConfigSchema makeAccelSchema() {
  using C = AccelConfig;
  return ConfigSchema{
      .file_name = kAccelConfName,
      .summary =
          "Settings of accel-agentd and accelctl on each accelerator node. Every key has a "
          "default or may stay unset, so an empty file is valid.",
      .config_type = &typeid(C),
      .keys = {
          {.name = "ControlSocket",
           .type = ValueType::kPath,
           .default_value = "/run/accel-agent/control.sock",
           .help = "Unix socket on which accel-agentd serves accelctl and the SPANK plugin.",
           .store = storeIn<&C::control_socket>},
          {.name = "AdminSocket",
           .type = ValueType::kPath,
           .help = "Unix socket on which accel-agentd serves only root and SlurmUser (mode 0600, "
                   "owned by SlurmUser). The prolog and epilog call the agent here, so no other "
                   "user can reach its queue or delay them; root's accelctl uses it too. Unset: "
                   "ControlSocket's path with `-admin` before its `.sock` (or after it, when it "
                   "does not end in `.sock`).",
           .store = storeIn<&C::admin_socket>},
          {.name = "ControlUserConnections",
           .type = ValueType::kUint,
           .default_value = "8",
           .min = 1,
           .max = 32,
           .help = "Connections one user (uid) other than root and SlurmUser may hold open to "
                   "ControlSocket without having sent their request; further ones are answered "
                   "Busy and closed at once. A connection whose request has come counts under "
                   "ControlUserRequests instead, so silent connections never hold up the same "
                   "user's real requests. Users together hold at most 32 connections; root and "
                   "SlurmUser have 64 of their own that users never take.",
           .store = storeIn<&C::control_user_connections>},
          {.name = "ControlUserRequests",
           .type = ValueType::kUint,
           .default_value = "4",
           .min = 1,
           .max = 32,
           .help = "Requests of one user (uid) other than root and SlurmUser that the agent "
                   "answers at once; a further one is answered Busy.",
           .store = storeIn<&C::control_user_requests>},
          {.name = "ControlUserRate",
           .type = ValueType::kUint,
           .default_value = "50",
           .min = 1,
           .max = 100000,
           .help = "Requests a second that one user (uid) other than root and SlurmUser may "
                   "make on ControlSocket, in bursts of up to twice as many; faster ones are "
                   "answered Busy (connections that send nothing cost nothing here). One "
                   "`accelctl` command or one job step's start is one request.",
           .store = storeIn<&C::control_user_rate>},
          {.name = "ControlUserIdleMs",
           .type = ValueType::kUint,
           .default_value = "250",
           .min = 10,
           .max = 2000,
           .help = "Milliseconds a user's connection (not root's or SlurmUser's) may stay open "
                   "without sending its request; it is then closed. accelctl and the SPANK "
                   "plugin send theirs at once. Root and SlurmUser get 2 s.",
           .store = storeIn<&C::control_user_idle_ms>},
          {.name = "StateDir",
           .type = ValueType::kPath,
           .default_value = "/var/lib/accel-agent",
           .help = "Directory for state that must survive a reboot of the node, such as the "
                   "event spool of job events not yet acknowledged by the aggregator.",
           .store = storeIn<&C::state_dir>},
          {.name = "RunDir",
           .type = ValueType::kPath,
           .default_value = "/run/accel-agent",
           .help = "Directory for runtime files that need not survive a reboot: the control "
                   "socket's default home, the job table (state/, one record per job, which a "
                   "restarted agent re-adopts) and the per-job directories (jobs/) of jobs "
                   "that use no IPUs (IPU jobs use IpuofDir of vipu.conf), each a file system of "
                   "its own (JobDirSize). A reboot ends the "
                   "jobs these describe, so nothing here needs to outlive it. Keep it on a "
                   "tmpfs, as /run is under systemd: every prolog and epilog writes here, and "
                   "a disk file system costs each hook about 0.2 ms more.",
           .store = storeIn<&C::run_dir>},
          {.name = "JobDirSize",
           .type = ValueType::kSize,
           .default_value = "128M",
           .max = 1ULL << 40,
           .help = "Size of each job's own directory (ACCEL_JOB_DIR; for IPU jobs the one under "
                   "IpuofDir that holds its IPUoF files): a tmpfs mounted for the job by its "
                   "prolog and unmounted first thing by its epilog, as Slurm's "
                   "job_container/tmpfs does. A job that fills it fills its own space only: "
                   "never RunDir's file system, the job table or /run, and the next job's "
                   "directory is new. Its pages count against the memory of the job that "
                   "writes them. 0: no file system of its own, the directory is made on "
                   "RunDir's (or IpuofDir's) file system, where a job can fill what the agent "
                   "needs; only for nodes where the agent may not mount (it needs "
                   "CAP_SYS_ADMIN and the host's mount namespace).",
           .store = storeIn<&C::job_dir_size>},
          {.name = "JobDirInodes",
           .type = ValueType::kUint,
           .default_value = "131072",
           .min = 64,
           .max = 1ULL << 24,
           .help = "Most files and directories in each job's own directory (the tmpfs's "
                   "nr_inodes; see JobDirSize).",
           .store = storeIn<&C::job_dir_inodes>},
          {.name = "ReserveSpace",
           .type = ValueType::kSize,
           .default_value = "8M",
           .max = 1ULL << 32,
           .help = "Space held back, as a file of allocated blocks (.accel-space-reserve), on "
                   "each file system of the agent's own records: the job table (RunDir/state), "
                   "StateDir and the event spool. When another program fills one of them, the "
                   "write that fails there gives the reserve up and is tried again, so the jobs "
                   "that run are still recorded and accounted at their end; new jobs are then "
                   "refused (their prolog fails as a node fault naming the file system) until "
                   "it has room for the reserve twice over, and the agent holds it again. "
                   "0: no reserve.",
           .store = storeIn<&C::reserve_space>},
          {.name = "SlurmUser",
           .type = ValueType::kString,
           .default_value = "slurm",
           .help = "The user who, besides root, may call the prolog, epilog and "
                   "administrative verbs. Set it to SlurmUser of slurm.conf.",
           .store = storeIn<&C::slurm_user>},
          {.name = "LogLevel",
           .type = ValueType::kEnum,
           .default_value = "info",
           .choices = {"error", "warning", "info", "debug"},
           .help = "The least severe kind of message that is logged.",
           .store = storeIn<&C::log_level>},
          {.name = "TopologyFile",
           .type = ValueType::kPath,
           .help = "Read the node's topology from this hwloc XML file instead of the live "
                   "system. Unset: the live system.",
           .store = storeIn<&C::topology_file>},
          {.name = "HookTimeout",
           .type = ValueType::kSeconds,
           .default_value = "20",
           .min = 1,
           .max = 300,
           .help = "Hard bound on one `accelctl prolog` or `accelctl epilog` call, retries "
                   "included. Keep it well below PrologEpilogTimeout of slurm.conf, so that "
                   "the agent, not Slurm, decides what happens when time runs out.",
           .store = storeIn<&C::hook_timeout>},
          {.name = "VendorEnvironment",
           .type = ValueType::kString,
           .help = "Comma-separated names of variables of the daemon's environment that the "
                   "vendor clients (vipu, csctl) also get, such as https_proxy. They get "
                   "nothing else of it: a fixed PATH, LC_ALL=C, HOME, these, and what the "
                   "agent sets for the call.",
           .store = storeIn<&C::vendor_environment>},
          {.name = "HwMockDir",
           .type = ValueType::kPath,
           .help = "Directory of fake vendor clients to run instead of the real ones. For "
                   "testing only; leave unset on production nodes. Without the fake appliance "
                   "client (bin/csctl) in it, the node reads no appliance.",
           .store = storeIn<&C::hw_mock_dir>},
          {.name = "ApplianceTimeDefault",
           .type = ValueType::kSlurmTime,
           .help = "Appliance time limit of a job that does not give --appliance-time or "
                   "--job-time-sec, in Slurm's time notation. Unset: no limit unless the job "
                   "asks for one.",
           .store = storeIn<&C::appliance_time_default>},
          {.name = "ApplianceTimeMax",
           .type = ValueType::kSlurmTime,
           .default_value = "UNLIMITED",
           .help = "Largest appliance time limit a job may ask for; sbatch, salloc and srun "
                   "refuse a larger --appliance-time or --job-time-sec at submission.",
           .store = storeIn<&C::appliance_time_max>},
          {.name = "VipuCommand",
           .type = ValueType::kString,
           .default_value = "vipu",
           .help = "The V-IPU client program the agent runs to create and remove job partitions "
                   "(a path, or a name looked up in PATH). Used when vipu.conf exists.",
           .store = storeIn<&C::vipu_command>},
          {.name = "ApplianceCommand",
           .type = ValueType::kString,
           .help = "The appliance client program (csctl) the agent runs to follow and cancel the "
                   "appliance jobs of Slurm jobs (a path, or a name looked up in PATH). Unset: "
                   "the node has no appliance.",
           .store = storeIn<&C::appliance_command>},
          {.name = "AppliancePollInterval",
           .type = ValueType::kSeconds,
           .default_value = "2",
           .min = 1,
           .max = 3600,
           .help = "How often the agent reads the appliance's job list while a job of this node "
                   "has appliance work. Appliance time is counted from the start times the "
                   "appliance reports, so a longer interval delays what the agent sees, not what "
                   "it charges.",
           .store = storeIn<&C::appliance_poll_interval>},
          {.name = "ApplianceTimeout",
           .type = ValueType::kSeconds,
           .default_value = "10",
           .min = 1,
           .max = 300,
           .help = "Bound on one call of the appliance client.",
           .store = storeIn<&C::appliance_timeout>},
          {.name = "Fabric",
           .type = ValueType::kBool,
           .default_value = "no",
           .help = "Set up the accelerator fabric for each job: on the NICs nearest the job's "
                   "accelerators (or FabricInterfaces), link up, FabricMtu, one address per NIC "
                   "from FabricAddressRange and routes to FabricRoutes; all removed at the epilog.",
           .store = storeIn<&C::fabric>},
          {.name = "FabricInterfaces",
           .type = ValueType::kString,
           .help = "Comma-separated fabric NICs (e.g. the RoCE ports of an IPU host). Unset: the "
                   "NICs the topology places nearest each job's accelerators.",
           .store = storeIn<&C::fabric_interfaces>},
          {.name = "FabricManagementInterface",
           .type = ValueType::kString,
           .help = "A NIC never used for the fabric. Unset: the interface of the default route.",
           .store = storeIn<&C::fabric_management_interface>},
          {.name = "FabricMtu",
           .type = ValueType::kUint,
           .default_value = "0",
           .max = 65535,
           .help = "MTU of the fabric NICs while jobs use them (RoCE fabrics use 9000); the "
                   "original MTU is put back when the last job leaves. 0: leave it alone.",
           .store = storeIn<&C::fabric_mtu>},
          {.name = "FabricAddressRange",
           .type = ValueType::kString,
           .help = "This node's block of fabric addresses, e.g. 10.9.3.0/26; each job gets one "
                   "free address of it per fabric NIC. Unset: jobs get no addresses.",
           .store = storeIn<&C::fabric_address_range>},
          {.name = "FabricAddressPrefix",
           .type = ValueType::kUint,
           .default_value = "0",
           .max = 32,
           .help = "Prefix length of the job addresses (the whole fabric subnet). 0: the prefix "
                   "of FabricAddressRange.",
           .store = storeIn<&C::fabric_address_prefix>},
          {.name = "FabricNetns",
           .type = ValueType::kString,
           .help = "Manage the fabric NICs of this named network namespace (ip netns, under "
                   "/run/netns) instead of the daemon's own; the rest of the daemon stays where "
                   "it is. For nodes whose fabric NICs live in a namespace, and for testing.",
           .store = storeIn<&C::fabric_netns>},
          {.name = "FabricRoutes",
           .type = ValueType::kString,
           .help = "Comma-separated networks routed through the job's fabric NICs, e.g. the "
                   "accelerators' subnet 10.10.0.0/16.",
           .store = storeIn<&C::fabric_routes>},
          {.name = "AggregatorAddress",
           .type = ValueType::kString,
           .help = "ZeroMQ endpoint of accel-aggregatord, e.g. tcp://ctl1:7450. Job events are "
                   "spooled on the node and streamed there. Unset: events are only spooled.",
           .store = storeIn<&C::aggregator_address>},
          {.name = "AggregatorQueryAddress",
           .type = ValueType::kString,
           .help = "ZeroMQ endpoint of accel-aggregatord's QueryAddress, e.g. tcp://ctl1:7451. "
                   "`accelctl events --job ID` on this node then asks the aggregator through "
                   "the agent, which vouches for the caller: root and SlurmUser see every job, "
                   "others their own. Uses AggregatorPublicKeyFile and NodeKeyFile. Unset: "
                   "events can be read only where the aggregator's database is.",
           .store = storeIn<&C::aggregator_query_address>},
          {.name = "AggregatorPublicKeyFile",
           .type = ValueType::kPath,
           .default_value = "/etc/accel-agent/aggregator.pub",
           .help = "The aggregator's CURVE public key (made by accel-keygen).",
           .store = storeIn<&C::aggregator_public_key_file>},
          {.name = "NodeKeyFile",
           .type = ValueType::kPath,
           .default_value = "/etc/accel-agent/node.key",
           .help =
               "This node's CURVE secret key (accel-keygen). Refused if group or others can read "
               "it. Its .pub file goes into the aggregator's AllowListDir as NODE.pub.",
           .store = storeIn<&C::node_key_file>},
          {.name = "AggregatorReconnectMinMs",
           .type = ValueType::kUint,
           .default_value = "500",
           .min = 10,
           .max = 5000,
           .help =
               "Milliseconds: the first bound of the wait before the agent tries the aggregator "
               "again, after a lost link or a failed attempt. Each wait is drawn at random from "
               "the upper half of its bound (from 250 to 500 ms by default), and the bound "
               "doubles after every failed attempt up to AggregatorReconnectMaxMs, so that the "
               "nodes of a cluster whose aggregator restarts come back spread out, not at once.",
           .store = storeIn<&C::aggregator_reconnect_min_ms>},
          {.name = "AggregatorReconnectMaxMs",
           .type = ValueType::kUint,
           .default_value = "30000",
           .min = 5000,
           .max = 600000,
           .help = "Milliseconds: the largest bound of that wait. Its range starts where "
                   "AggregatorReconnectMinMs's ends, so the two never contradict each other.",
           .store = storeIn<&C::aggregator_reconnect_max_ms>},
          {.name = "AggregatorPingInterval",
           .type = ValueType::kSeconds,
           .default_value = "10",
           .min = 0,
           .max = 3600,
           .help =
               "How often the agent pings the aggregator on its link (ZeroMQ's ZMTP heartbeat), "
               "so that a link to an aggregator that hangs, or whose host vanished, is noticed "
               "and replaced. 0: no pings (the link then relies on TCP alone).",
           .store = storeIn<&C::aggregator_ping_interval>},
          {.name = "AggregatorPingTimeout",
           .type = ValueType::kSeconds,
           .default_value = "30",
           .min = 1,
           .max = 3600,
           .help =
               "A link on which nothing has come from the aggregator for this long after a ping "
               "is closed and made again (after the reconnect wait); unacknowledged events are "
               "sent again.",
           .store = storeIn<&C::aggregator_ping_timeout>},
          {.name = "AggregatorTcpKeepAlive",
           .type = ValueType::kSeconds,
           .default_value = "60",
           .min = 0,
           .max = 7200,
           .help = "On a tcp:// link, the idle time after which the kernel starts TCP keepalive "
                   "probes (then one every 10 seconds, or this value if smaller; three unanswered "
                   "close the link). Keeps firewalls and NAT from dropping an idle link unnoticed. "
                   "0: the system's default (usually no keepalive).",
           .store = storeIn<&C::aggregator_tcp_keepalive>},
          {.name = "EventSpoolDir",
           .type = ValueType::kPath,
           .help = "Directory of the event spool (events not yet acknowledged by the aggregator) "
                   "and the agent epoch. Unset: spool/ under StateDir.",
           .store = storeIn<&C::event_spool_dir>},
          {.name = "EventSpoolMaxSize",
           .type = ValueType::kSize,
           .default_value = "256M",
           .min = 1 << 20,
           .help =
               "Most disk space the event spool may use. When it is full, heartbeats are dropped "
               "first; the last eighth is kept for job lifecycle events.",
           .store = storeIn<&C::event_spool_max_size>},
          {.name = "HeartbeatInterval",
           .type = ValueType::kSeconds,
           .default_value = "30",
           .min = 0,
           .max = 3600,
           .help = "How often the agent tells the aggregator that it is alive (at start, then "
                   "every interval): a node_heartbeat event with the node's accelerators, those in "
                   "use, its jobs and its events not yet acknowledged. The aggregator counts a "
                   "node as late when nothing has come "
                   "from it for three intervals (`accel-aggregatord nodes`). 0: no heartbeats. "
                   "Heartbeats are the first events dropped when the spool is full.",
           .store = storeIn<&C::heartbeat_interval>},
          {.name = "MetricsAddress",
           .type = ValueType::kString,
           .help =
               "HOST:PORT (a numeric IPv4 host) on which the agent serves its metrics to "
               "Prometheus at /metrics: hook durations, jobs, the event spool, vendor calls and "
               "limit enforcements (operator guide, Metrics). Unset: no endpoint. Read at start.",
           .store = storeIn<&C::metrics_address>},
          {.name = "TelemetryInterval",
           .type = ValueType::kSeconds,
           .default_value = "10",
           .min = 1,
           .max = 300,
           .help = "How often the agent reads the utilization, memory, energy and processes of "
                   "the GPUs that jobs hold (through NVML, on a thread of its own, never on a "
                   "hook's path), for each job's figures. Nothing is read while no job holds a "
                   "GPU. Read at start.",
           .store = storeIn<&C::telemetry_interval>},
          {.name = "NvmlLibrary",
           .type = ValueType::kString,
           .default_value = "libnvidia-ml.so.1",
           .help = "The NVML library the agent loads at start for GPU telemetry: a file name "
                   "that the dynamic loader searches for, or an absolute path. A node where it "
                   "cannot be loaded works without GPU telemetry.",
           .store = storeIn<&C::nvml_library>},
          {.name = "IdleAfter",
           .type = ValueType::kSlurmTime,
           .default_value = "30",
           .help = "How long every GPU of a job on the node must read 0% utilization, sample "
                   "after sample (TelemetryInterval), before the job counts as idle, in Slurm's "
                   "time notation (a bare number is minutes: `30` is half an hour, `0:90` 90 "
                   "seconds). An idle job gets, once, a job_idle event, an `accel:` line in its "
                   "output and the accel_gpu_job_idle_seconds gauge; IdleAction decides what "
                   "more. A job sampled busy again starts from zero. 0 or UNLIMITED: off. Read "
                   "again on reload.",
           .store = storeIn<&C::idle_after>},
          {.name = "IdleAction",
           .type = ValueType::kEnum,
           .default_value = "none",
           .choices = {"none", "notify", "cancel"},
           .help = "What the agent does about a job that IdleAfter found idle, beyond the "
                   "job_idle event, the `accel:` line in its output file and the gauge. none: "
                   "nothing more. notify: an interactive job (srun or salloc, which has no "
                   "output file) gets the same words through slurmctld (as `scontrol notify`), "
                   "printed by its srun or salloc in the user's terminal; a batch job has its "
                   "line in its output file already and gets nothing more (slurmctld would hand "
                   "a batch job's notice to its batch step alone, as a second copy of the line). "
                   "cancel: the job is cancelled through slurmctld (as "
                   "`scancel`), and its summary says `\"ended\":\"idle accelerators\"`; a site "
                   "policy, never a node fault. Read again on reload.",
           .store = storeIn<&C::idle_action>},
          {.name = "KernelLog",
           .type = ValueType::kPath,
           .default_value = "/dev/kmsg",
           .help = "Where the agent reads the kernel log for the GPU driver's Xid reports: "
                   "/dev/kmsg, or a file or FIFO that receives the same lines. Each Xid is "
                   "recorded with the job that held the GPU; a hardware Xid drains the node. "
                   "A node where it cannot be opened works without. Read at start.",
           .store = storeIn<&C::kernel_log>},
          {.name = "ApplianceKillGrace",
           .type = ValueType::kSeconds,
           .default_value = "30",
           .min = 1,
           .max = 3600,
           .help =
               "When a job reaches its appliance time limit, every process of the job on the node "
               "gets SIGTERM (and its appliance jobs are cancelled); what is still running this "
               "many seconds later gets SIGKILL.",
           .store = storeIn<&C::appliance_kill_grace>},
          {.name = "SurrogateSteps",
           .type = ValueType::kBool,
           .default_value = "yes",
           .help =
               "Mirror each appliance job of a job as a step of that job, named after the "
               "appliance job (with -csxN when it holds N CS-X systems), that ends COMPLETED or "
               "FAILED with it. The agent starts the step with srun as the job's user; ending "
               "the step (scancel) cancels the appliance job.",
           .store = storeIn<&C::surrogate_steps>},
          {.name = "ApplianceTimeOnRequeue",
           .type = ValueType::kEnum,
           .default_value = "fresh",
           .choices = {"fresh", "cumulative"},
           .help = "What a requeued job's next run may use of its appliance time limit. fresh: the "
                   "whole limit again, as Slurm's --time. cumulative: what the earlier runs left, "
                   "read from the appliance_s of the job's summary in Slurm accounting (sacct, "
                   "within 5 seconds or a quarter of HookTimeout, whichever is shorter); when it "
                   "cannot be read the run starts fresh and its output says so.",
           .store = storeIn<&C::requeue_budget>},
      }};
}

ConfigSchema makeVipuSchema() {
  using C = VipuConfig;
  constexpr std::string_view kTls = "IsSecure";
  return ConfigSchema{
      .file_name = kVipuConfName,
      .summary =
          "Options of the V-IPU controller, in the file Graphcore's Slurm integration keeps "
          "beside slurm.conf. accel-agent reads it unchanged, with the same keys and defaults. "
          "Only needed on IPU hosts.",
      .config_type = &typeid(C),
      .keys = {
          {.name = "ApiHost",
           .type = ValueType::kString,
           .required = true,
           .help = "Host name or IP address of the V-IPU controller.",
           .store = storeIn<&C::api_host>},
          {.name = "ApiPort",
           .type = ValueType::kUint,
           .default_value = "8090",
           .min = 1,
           .max = 65535,
           .help = "Port of the V-IPU controller.",
           .store = storeIn<&C::api_port>},
          {.name = "IpuofDir",
           .type = ValueType::kPath,
           .required = true,
           .help = "Directory where the IPUoF configuration files of user jobs are stored: one "
                   "directory per job (IpuofDir/<job id>, owned by the job's user), which the "
                   "epilog moves into IpuofDir/.trash for accel-agentd to remove in the "
                   "background. It must be root's and writable by root only, and so must the "
                   "directories above it (one with the sticky bit, like /tmp, excepted): "
                   "accel-agentd refuses to start otherwise. Made (mode 0755) if missing.",
           .store = storeIn<&C::ipuof_dir>},
          {.name = "MaxIpusPerJob",
           .type = ValueType::kUint,
           .default_value = "256",
           .min = 1,
           .max = 4294967295u,
           .help = "Largest number of IPUs one job may use.",
           .store = storeIn<&C::max_ipus_per_job>},
          {.name = "ApiTimeout",
           .type = ValueType::kSeconds,
           .default_value = "50",
           .min = 1,
           .help = "Timeout of the V-IPU client for one request to the controller.",
           .store = storeIn<&C::api_timeout>},
          {.name = "IsSecure",
           .type = ValueType::kBool,
           .default_value = "no",
           .help = "Talk to the V-IPU controller over mutual TLS; the controller must run in "
                   "secure mode. Requires ApiUser, ApiAccessKey, ClientCertFile, "
                   "ClientKeyFile and ServerCertFile.",
           .store = storeIn<&C::is_secure>},
          {.name = "ApiUser",
           .type = ValueType::kString,
           .required_if = kTls,
           .help = "Name of the API user the agent acts as in secure mode.",
           .store = storeIn<&C::api_user>},
          {.name = "ApiAccessKey",
           .type = ValueType::kString,
           .required_if = kTls,
           .secret = true,
           .help = "Access key assigned to ApiUser. A secret: keep vipu.conf readable by "
                   "root only when it is set.",
           .store = storeIn<&C::api_access_key>},
          {.name = "ClientCertFile",
           .type = ValueType::kPath,
           .required_if = kTls,
           .help = "Client certificate for TLS.",
           .store = storeIn<&C::client_cert_file>},
          {.name = "ClientKeyFile",
           .type = ValueType::kPath,
           .required_if = kTls,
           .help = "Client private key for TLS.",
           .store = storeIn<&C::client_key_file>},
          {.name = "ServerCertFile",
           .type = ValueType::kPath,
           .required_if = kTls,
           .help = "Server certificate for TLS, used to verify the controller.",
           .store = storeIn<&C::server_cert_file>},
      }};
}

#pragma GCC diagnostic pop

}  // namespace

const ConfigSchema& accelConfigSchema() {
  static const ConfigSchema schema = makeAccelSchema();
  return schema;
}

const ConfigSchema& vipuConfigSchema() {
  static const ConfigSchema schema = makeVipuSchema();
  return schema;
}

std::vector<const ConfigSchema*> allConfigSchemas() {
  return {&accelConfigSchema(), &vipuConfigSchema()};
}

}  // namespace accel
