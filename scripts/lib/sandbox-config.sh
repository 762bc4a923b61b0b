# shellcheck shell=bash disable=SC2034 # globals here are used by the other files
# Generated configuration of the sandbox. Rewritten on every `up`, so the files always match
# this script; edit here, not in <sandbox>/etc.

# --- the Slurm version ---------------------------------------------------------------------------
# The sandbox runs Debian 12's Slurm 22.05 and Debian 13's 24.11. slurm_version_choices reads
# the installed version once (`slurmctld -V`: "slurm-wlm 24.11.5"; it reads no config) into
# SLURM_VERSION and SLURM_RELEASE (major*100+minor: 2205, 2411) and sets every choice of the
# sandbox that depends on it; nothing else looks at the version.
# Not version-dependent, but found with 24.11: the accounting database is created before
# slurmdbd's first start (after_ready_mariadbd), which 22.05 never needed and does not mind.
# Neither are the cgroups: proctrack/cgroup, task/cgroup and cgroup.conf (cgroup/v1) are the
# same for both.
slurm_version_choices() {
    [[ -z ${SLURM_RELEASE:-} ]] || return 0
    local out
    out=$(slurmctld -V 2>/dev/null) || die "slurmctld -V failed"
    [[ $out =~ ([0-9]+)\.([0-9]+)(\.[0-9]+)? ]] || die "unexpected slurmctld -V output: $out"
    SLURM_VERSION=${BASH_REMATCH[0]}
    SLURM_RELEASE=$((10#${BASH_REMATCH[1]} * 100 + 10#${BASH_REMATCH[2]}))
    # The "none" plugins (switch/none, jobcomp/none, MpiDefault=none) are what 22.05 uses
    # when nothing is set, and were removed in 23.11 ("none" is then the absence of the
    # key). Kept below 23.11, where the sandbox always wrote them: lines appended to
    # slurm.conf's plugin block (each after a newline).
    SLURM_NONE_PLUGINS=''
    if ((SLURM_RELEASE < 2311)); then
        SLURM_NONE_PLUGINS=$'\nMpiDefault=none\nSwitchType=switch/none\nJobCompType=jobcomp/none'
    fi
    # MariaDB's InnoDB buffer pool (start_mariadbd): slurmdbd logs an error below half of the
    # size it recommends, 1 GiB in 22.05 and 4 GiB in 24.11 (raised somewhere between).
    MARIADB_BUFFER_POOL=512M
    if ((SLURM_RELEASE > 2205)); then MARIADB_BUFFER_POOL=2G; fi
}

# The node as slurmd itself measures it (`slurmd -C`), so slurmctld never drains it for a
# CPU or memory mismatch. Only the hardware fields are kept (in NODE_HW); name and address
# are ours.
read_node_hardware() {
    local line field out=()
    line=$(slurmd -C | head -n 1) || die "slurmd -C failed"
    for field in $line; do
        case ${field%%=*} in
        CPUs | Boards | SocketsPerBoard | CoresPerSocket | ThreadsPerCore | RealMemory)
            out+=("$field")
            ;;
        esac
    done
    ((${#out[@]} == 6)) || die "unexpected slurmd -C output: $line"
    NODE_HW=${out[*]}
}

# slurm.conf. Later additions (Prolog=, Epilog=, PlugStackConfig contents) belong in the
# "job hooks" block at the end.
write_slurm_conf() {
    read_node_hardware
    # up --proctrack linuxproc: Slurm tracks a step's processes by their parentage alone, with no
    # task plugin (task/none before 23.11, no key from then), as at a site without cgroups.
    local tracking=$'ProctrackType=proctrack/cgroup\nTaskPlugin=task/cgroup'
    if [[ $(sandbox_proctrack) == linuxproc ]]; then
        tracking=ProctrackType=proctrack/linuxproc
        if ((SLURM_RELEASE < 2311)); then tracking+=$'\nTaskPlugin=task/none'; fi
    fi
    # The one-node cluster: the host under its own name on loopback.
    local ctld_host="$NODE_NAME(127.0.0.1)" spool=$SB_SPOOL node_pid=$SB_RUN/slurmd.pid
    local node_log=$SB_LOG/slurmd.log partition_nodes=$NODE_NAME gres_types='' node
    local bind_comment="# Bind listening sockets to the configured addresses (loopback), not to every interface."
    local comm_params=NoInAddrAny,NoCtldInAddrAny dbd_addr=127.0.0.1
    local node_lines="NodeName=$NODE_NAME NodeHostname=$NODE_NAME NodeAddr=127.0.0.1 $NODE_HW State=UNKNOWN"
    if [[ $MULTI == yes ]]; then
        # Several nodes: each its own host on the sandbox bridge; slurmd expands %n to the
        # node's name, so every node has its own spool, pid file and log.
        ctld_host="$CTL_NAME($CTL_ADDR)" spool=$SB_SPOOL/%n node_pid=$SB_RUN/slurmd@%n.pid
        dbd_addr=$CTL_ADDR
        node_log=$SB_LOG/slurmd@%n.log
        bind_comment="# slurmctld binds to the address its host name resolves to (the sandbox bridge's).
# No NoInAddrAny: with it srun and salloc on this machine would listen only on the address
# of this machine's name, where slurmstepd in a node cannot call them back. slurmd listens
# on every address of its node's own namespace; slurmdbd.conf keeps NoInAddrAny."
        comm_params=NoCtldInAddrAny
        node_lines='' partition_nodes=''
        for node in "${NODES[@]}"; do
            node_context "$node"
            node_lines+="NodeName=$node NodeHostname=$node NodeAddr=$NODE_ADDR $NODE_HW"
            if ((${NODE_GPUS[$node]:-0} > 0)); then
                node_lines+=" Gres=gpu:${NODE_GPUS[$node]}"
                gres_types=$'\n# The GPUs of the nodes\' topologies, as GRES (gres.conf beside this file).\nGresTypes=gpu'
            fi
            node_lines+=$' State=UNKNOWN\n'
            partition_nodes+=${partition_nodes:+,}$node
        done
        node_lines=${node_lines%$'\n'}
    fi
    cat >"$SLURM_CONF_FILE.tmp" <<EOF
# Generated by scripts/slurm-sandbox; rewritten on every 'up'.
ClusterName=$CLUSTER_NAME
SlurmctldHost=$ctld_host
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root

# Clients find the private munged through AuthInfo; connections to slurmdbd (sacct,
# sacctmgr, slurmctld) take the socket from AccountingStoragePass instead. cred_expire (120 s
# by default) is also how long Slurm holds a requeued job before its next run, which only
# then gets its Prolog again: 15 s keeps the requeue tests short, and is still far more than
# a step's launch takes on a loaded machine (a credential older than this is refused).
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCKET,cred_expire=15
$bind_comment
CommunicationParameters=$comm_params

StateSaveLocation=$SB_CTLD_STATE
SlurmdSpoolDir=$spool
SlurmctldPidFile=$SB_RUN/slurmctld.pid
SlurmdPidFile=$node_pid
SlurmctldLogFile=$SB_LOG/slurmctld.log
SlurmdLogFile=$node_log
MailProg=/bin/true

# Processes tracked and tasks confined with cgroups, as production clusters run them
# (cgroup.conf beside this file): proctrack/cgroup keeps each step's processes in a freezer
# cgroup of its own, task/cgroup keeps a job to its GPUs with the devices controller. Each
# node's slurmd sees a cgroup of its own at /sys/fs/cgroup/<controller> (lib/sandbox-cgroup.sh
# of scripts/slurm-sandbox), so Slurm's slurm_<node>/uid_<uid>/job_<id> of one node never
# meets another node's or another sandbox's (up --proctrack linuxproc: no cgroups). No
# switch, MPI or job completion plugin (written out as the "none" plugins before Slurm 23.11).
$tracking
JobAcctGatherType=jobacct_gather/linux
SelectType=select/cons_tres
SelectTypeParameters=CR_Core$SLURM_NONE_PLUGINS

AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=$dbd_addr
AccountingStoragePort=$DBD_PORT
AccountingStoragePass=socket=$MUNGE_SOCKET
AccountingStorageEnforce=associations
AccountingStoreFlags=job_comment

# Quick turnaround for tests: schedule every second, forget finished jobs soon (sacct keeps
# them), and put the node back in service when slurmd registers again. Room for the accounting
# benchmark's ten thousand jobs at once (bench/accounting).
SchedulerParameters=sched_interval=1,batch_sched_delay=0
MinJobAge=10
MaxJobCount=50000
ReturnToService=2

# Job hooks. PrologFlags=Alloc runs the Prolog when the allocation is made, as on the
# production nodes. accel-prolog/accel-epilog are accelctl under the names slurmd runs;
# they find accel.conf beside this file. The hooks' own bound (HookTimeout) stays below
# PrologEpilogTimeout, so the agent, not Slurm, decides what a slow hook means.
PrologFlags=Alloc
Prolog=$BUILD_DIR/bin/accel-prolog
Epilog=$BUILD_DIR/bin/accel-epilog
PrologEpilogTimeout=60
PlugStackConfig=$SB_ETC/plugstack.conf
$gres_types
$node_lines
PartitionName=$PARTITION_NAME Nodes=$partition_nodes Default=YES MaxTime=INFINITE State=UP
EOF
    mv -f "$SLURM_CONF_FILE.tmp" "$SLURM_CONF_FILE"
}

# cgroup.conf beside slurm.conf, the same for 22.05 and 24.11: cgroup v1, named rather than
# left to Slurm's detection on this v1/v2 hybrid, at the usual mount point, where each node
# sees its own cgroup of each controller (sandbox-cgroup.sh). Only the devices are
# constrained, and only in a cluster with GPUs: no cores (each node claims every CPU of this
# machine) and no memory (the memory controller is the machine's, and CI's own cgroup is in
# it).
write_cgroup_conf() {
    local file=$SB_ETC/cgroup.conf devices=no node
    if [[ $(sandbox_proctrack) == linuxproc ]]; then
        # No cgroups. From 24.05 slurmd loads a cgroup plugin whatever the proctrack and task
        # plugins, so cgroup.conf says none; 22.05 rejects that key, and needs no file.
        rm -f "$file"
        if ((SLURM_RELEASE >= 2405)); then
            printf '%s\n' "# Generated by scripts/slurm-sandbox; rewritten on every 'up'." \
                "# up --proctrack linuxproc: no cgroups." "CgroupPlugin=disabled" >"$file"
        fi
        return 0
    fi
    for node in "${NODES[@]}"; do
        if ((${NODE_GPUS[$node]:-0} > 0)); then devices=yes; fi
    done
    cat >"$file.tmp" <<EOF
# Generated by scripts/slurm-sandbox; rewritten on every 'up'.
CgroupPlugin=cgroup/v1
CgroupMountpoint=$SB_CGROUP_FS
ConstrainCores=no
ConstrainRAMSpace=no
ConstrainSwapSpace=no
# A job may open the GPUs it was given (gres.conf) and no other.
ConstrainDevices=$devices
EOF
    mv -f "$file.tmp" "$file"
}

# gres.conf beside slurm.conf, for nodes whose topology has GPUs: no autodetection (there is
# no driver), each GPU a character device of the node's private /dev (sandbox-nsinit).
write_gres_conf() {
    local file=$SB_ETC/gres.conf node n body=''
    if [[ $MULTI == yes ]]; then
        for node in "${NODES[@]}"; do
            n=${NODE_GPUS[$node]:-0}
            ((n > 0)) || continue
            if ((n == 1)); then
                body+="NodeName=$node Name=gpu File=/dev/nvidia0"$'\n'
            else
                body+="NodeName=$node Name=gpu File=/dev/nvidia[0-$((n - 1))]"$'\n'
            fi
        done
    fi
    if [[ -z $body ]]; then
        rm -f "$file"
        return 0
    fi
    {
        echo "# Generated by scripts/slurm-sandbox; rewritten on every 'up'."
        echo "AutoDetect=off"
        printf '%s' "$body"
    } >"$file.tmp"
    mv -f "$file.tmp" "$file"
}

# /etc/hosts of slurmctld and of every node (bind-mounted there): each host name of the
# cluster at its address on the sandbox bridge.
write_hosts() {
    local node
    {
        echo "# Generated by scripts/slurm-sandbox; rewritten on every 'up'."
        echo "127.0.0.1 localhost"
        echo "$CTL_ADDR $CTL_NAME"
        for node in "${NODES[@]}"; do
            node_context "$node"
            echo "$NODE_ADDR $node"
        done
    } >"$SB_HOSTS.tmp"
    put_file "$SB_HOSTS.tmp" "$SB_HOSTS"
}

# Without an explicit PlugStackConfig Slurm would read /etc/slurm/plugstack.conf, i.e. the
# system's SPANK plugins. The sandbox loads only this build's spank_accel.so, which finds
# accel.conf beside slurm.conf like every other part.
write_plugstack_conf() {
    [[ -r $BUILD_DIR/lib/spank_accel.so ]] ||
        die "spank_accel.so is not built in $BUILD_DIR/lib (run scripts/build, or set ACCEL_BUILD_DIR)"
    {
        echo "# Generated by scripts/slurm-sandbox: SPANK plugins of the sandbox."
        echo "required $BUILD_DIR/lib/spank_accel.so"
    } >"$SB_ETC/plugstack.conf"
}

# slurmdbd finds its config beside $SLURM_CONF; it must be private to SlurmUser (root).
# With several nodes slurmdbd runs on the controller's host (sandbox-nsinit), on its bridge
# address, so that slurmctld's connection comes from that address and slurmdbd's updates
# (new users, say) reach slurmctld there.
write_slurmdbd_conf() {
    local file=$SB_ETC/slurmdbd.conf dbd_addr=127.0.0.1
    [[ $MULTI != yes ]] || dbd_addr=$CTL_ADDR
    (
        umask 077
        cat >"$file.tmp" <<EOF
# Generated by scripts/slurm-sandbox; rewritten on every 'up'.
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
CommunicationParameters=NoInAddrAny
DbdHost=localhost
DbdAddr=$dbd_addr
DbdPort=$DBD_PORT
SlurmUser=root
LogFile=$SB_LOG/slurmdbd.log
PidFile=$SB_RUN/slurmdbd.pid
# StorageHost=localhost makes the MariaDB client use a unix socket; which one comes from
# MYSQL_UNIX_PORT in slurmdbd's environment (there is no slurmdbd.conf key for it).
# root over that socket is authenticated by MariaDB's unix_socket plugin: no password.
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=root
StorageLoc=$ACCT_DB_NAME
EOF
    )
    mv -f "$file.tmp" "$file"
}

# accel.conf of the node agent, beside slurm.conf as on a real node. Everything the agent
# keeps lives under the sandbox; the topology is the one given to `up --topology`, else
# this machine's own.
# With several nodes, etc/nodes/<node>/ holds each node's accel.conf and vipu.conf, and the
# node's private mount namespace binds them over etc/accel.conf and etc/vipu.conf: inside a
# node, slurmd's Prolog and Epilog, the SPANK plugin in slurmstepd, the agent and whatever a
# job runs find that node's files beside slurm.conf, as on a real cluster. The shared files,
# as this machine sees them, are a login node's: the same site settings and no agent behind
# their ControlSocket (a node's agent is reached with `slurm-sandbox exec NODE ...`, or
# from here with --config etc/nodes/<node>/accel.conf).
# A node without a V-IPU controller (`up --no-ipu NODE`) gets no vipu.conf: its agent is
# started with --config etc/nodes/<node>/accel.conf, beside which there is none (the shared
# etc/vipu.conf, still visible in the node, is not beside that path).
write_accel_conf() {
    local node
    if [[ $MULTI == yes ]]; then
        MULTI=no node_context ''
        accel_conf_text login >"$SB_ETC/accel.conf.tmp"
        vipu_conf_text >"$SB_ETC/vipu.conf.tmp"
        put_file "$SB_ETC/accel.conf.tmp" "$SB_ETC/accel.conf"
        put_file "$SB_ETC/vipu.conf.tmp" "$SB_ETC/vipu.conf"
        for node in "${NODES[@]}"; do
            node_context "$node"
            mkdir -p "$NODE_ETC"
            make_node_hw_mock_dir
            write_node_nvml
            accel_conf_text >"$NODE_CONF.tmp"
            put_file "$NODE_CONF.tmp" "$NODE_CONF"
            if [[ $NODE_VIPU == yes ]]; then
                vipu_conf_text >"$NODE_ETC/vipu.conf.tmp"
                put_file "$NODE_ETC/vipu.conf.tmp" "$NODE_ETC/vipu.conf"
            else
                # Left by an earlier layout; nothing is mounted on it (the node makes no mount).
                rm -f "$NODE_ETC/vipu.conf"
            fi
        done
        return 0
    fi
    node_context ''
    accel_conf_text >"$SB_ETC/accel.conf.tmp"
    mv -f "$SB_ETC/accel.conf.tmp" "$SB_ETC/accel.conf"
    vipu_conf_text >"$SB_ETC/vipu.conf.tmp"
    mv -f "$SB_ETC/vipu.conf.tmp" "$SB_ETC/vipu.conf"
}

# The hardware-mock directory of the node of node_context: the build's, or for a node of
# `up --no-appliance` its own, etc/nodes/<node>/hw_mock, which links every fake client of the
# build's but the appliance's (bin/csctl): a mock directory without it means no appliance.
node_hw_mock_dir() {
    if [[ ${NODE_APPLIANCE:-yes} == yes ]]; then
        echo "$BUILD_DIR/hw_mock"
    else
        echo "$NODE_ETC/hw_mock"
    fi
}

# make_node_hw_mock_dir: makes that directory for the node of node_context (nothing to make
# for a node with an appliance).
make_node_hw_mock_dir() {
    [[ ${NODE_APPLIANCE:-yes} != yes ]] || return 0
    local dir=$NODE_ETC/hw_mock f
    rm -rf "${dir:?}"
    mkdir -p "$dir/bin"
    for f in "$BUILD_DIR"/hw_mock/bin/*; do
        [[ ${f##*/} == csctl ]] || ln -s "$f" "$dir/bin/${f##*/}"
    done
    if [[ -e $BUILD_DIR/hw_mock/topology.xml ]]; then ln -s "$BUILD_DIR/hw_mock/topology.xml" "$dir/topology.xml"; fi
}

# accel_conf_text [login]: accel.conf of the node of node_context; "login" writes the
# shared file of a multi-node sandbox (no topology, no fabric, a socket nobody serves).
accel_conf_text() {
    local topology=$NODE_TOPOLOGY fabric
    fabric=$(fabric_settings)
    if [[ ${1:-} == login ]]; then
        topology='' fabric=''
        echo "# Generated by scripts/slurm-sandbox; rewritten on every 'up'."
        echo "# The login node's file: inside each node, etc/nodes/<node>/accel.conf is mounted here."
    else
        echo "# Generated by scripts/slurm-sandbox; rewritten on every 'up'."
    fi
    cat <<EOF
ControlSocket=$AGENT_SOCKET
RunDir=$NODE_RUN/accel
StateDir=$NODE_STATE/accel
SlurmUser=root
HookTimeout=20
LogLevel=info
${topology:+TopologyFile=$topology}
# The fake V-IPU and appliance clients of tests/hw_mock, built with the agent.
HwMockDir=$(node_hw_mock_dir)
AppliancePollInterval=1
# A reserve of 64 KiB on the file systems of the records rather than 8 MiB: the full-disk
# fault tests put them on tmpfs of 256 KiB to 4 MiB.
ReserveSpace=64k
# SIGTERM to SIGKILL at an appliance limit: 5 s rather than the default 30, so the limit tests
# that ignore SIGTERM wait less.
ApplianceKillGrace=5
$fabric
# Job events go to the sandbox's accel-aggregatord; a heartbeat every 2 s shows the node
# alive there (accel-aggregatord nodes) without waiting the default 30 s.
AggregatorAddress=$(aggregator_endpoint)
AggregatorQueryAddress=$(aggregator_query_endpoint)
HeartbeatInterval=2
AggregatorPublicKeyFile=$KEY_DIR/aggregator.pub
NodeKeyFile=$NODE_KEY.key
EOF
    # Metrics for the sandbox's Prometheus, at the node's own address (prometheus.yml).
    [[ ${1:-} == login ]] || echo "MetricsAddress=$(agent_metrics_address)"
    [[ ${1:-} == login ]] || node_telemetry_settings
}

# GPU telemetry of a node with GPUs: the fake NVML of tests/hw_mock, its GPUs scripted in
# the node's nvml/ folder (write_node_nvml), sampled every second so that a short job gets
# several samples. Other nodes keep the default NvmlLibrary, which is not there: no NVML.
node_telemetry_settings() {
    ((${NODE_GPUS[$NODE_NAME]:-0} > 0)) || return 0
    echo "# The fake NVML of tests/hw_mock; its GPUs are scripted in $NODE_ETC/nvml."
    echo "NvmlLibrary=$BUILD_DIR/hw_mock/lib/libnvidia-ml.so.1"
    echo "TelemetryInterval=1"
    echo "# The nodes share one kernel: each GPU node's Xids come from a file of its own, which"
    echo "# tests append kernel-log lines to (tests/integration/multinode_xid.sh)."
    echo "KernelLog=$NODE_ETC/kmsg"
}

# write_node_nvml: the fake NVML's scripts of the node of node_context, one per GPU of its
# topology with that GPU's PCI bus id (so the agent finds a job's GPUs in the samples): one
# idle sample, then busy for ever at 60% and 189 W with 22 GB used, as the captured H200.
write_node_nvml() {
    local dir=$NODE_ETC/nvml i=0 bus
    rm -rf "${dir:?}"
    ((${NODE_GPUS[$NODE_NAME]:-0} > 0)) || return 0
    mkdir -p "$dir"
    : >"$NODE_ETC/kmsg"  # the node's kernel log (KernelLog), empty at each 'up'
    while read -r bus; do
        [[ -n $bus ]] || continue
        cat >"$dir/gpu$i" <<EOF
# Generated by scripts/slurm-sandbox; rewritten on every 'up'.
uuid GPU-5a4d0000-0000-0000-0000-00000000000$i
bus_id $bus
memory_total 85899345920
energy_start 1000000
sample_seconds 1
phase idle count=1 util=0 memory_util=0 used=644939776 power=80587
phase busy util=60 memory_util=16 used=23141941248 power=189160
EOF
        i=$((i + 1))
    done < <("$BUILD_DIR/bin/accel-agentd" --print-topology --xml "$NODE_TOPOLOGY" --json |
        jq -r '.accelerators[]? | select(.kind == "gpu") | .pci_bus_id // empty')
}

# HOST:PORT of the metrics of the node of node_context's agent: loopback on one node, the
# node's address on the sandbox bridge with several (every node the same port).
agent_metrics_address() { echo "$NODE_ADDR:$AGENT_METRICS_PORT"; }

# prometheus.yml: Debian's Prometheus scrapes every node's agent (job accel-agent, one target
# per node, labelled with the node's name) and the aggregator (job accel-aggregator) every 2 s,
# with the shipped alert rules loaded, as the operator guide sets it up.
write_prometheus_conf() {
    local node targets=''
    local -a names=("$HOST_NODE_NAME")
    if [[ $MULTI == yes ]]; then names=("${NODES[@]}"); else node_context ''; fi
    for node in "${names[@]}"; do
        if [[ $MULTI == yes ]]; then node_context "$node"; fi
        targets+="      - targets: ['$(agent_metrics_address)']
        labels: {node: '$node'}
"
    done
    cat >"$SB_ETC/prometheus.yml.tmp" <<EOF
# Generated by scripts/slurm-sandbox; rewritten on every 'up'.
global:
  scrape_interval: 2s
  scrape_timeout: 1s
  evaluation_interval: 2s
rule_files:
  - '$REPO_DIR/packaging/examples/accel-alerts.yml'
scrape_configs:
  - job_name: accel-agent
    static_configs:
$targets  - job_name: accel-aggregator
    static_configs:
      - targets: ['127.0.0.1:$METRICS_PORT']
EOF
    mv -f "$SB_ETC/prometheus.yml.tmp" "$SB_ETC/prometheus.yml"
}

# vipu.conf beside accel.conf makes this an IPU host; the controller is the fake client's.
vipu_conf_text() {
    cat <<EOF
# Generated by scripts/slurm-sandbox; rewritten on every 'up'.
ApiHost=127.0.0.1
ApiPort=8090
IpuofDir=$NODE_RUN/ipuof
MaxIpusPerJob=64
ApiTimeout=10
EOF
}

# The fabric keys, when the chosen topology gives NICs to mirror in the namespace: its RDMA
# ports (the first two) carry the fabric, with jumbo frames, a per-node block of a /16 and a
# route to the accelerators' subnet.
# With several nodes the fabric NICs are in the node's own network namespace (no
# FabricNetns), node i takes addresses from 10.9.i.0/26 of the shared /16, and sb0, the
# node's link to the sandbox bridge, is never fabric.
fabric_settings() {
    if [[ $MULTI == yes ]]; then
        [[ -n ${NODE_FABRIC[$NODE_NAME]:-} ]] || return 0
        local nics=${NODE_FABRIC[$NODE_NAME]% }
        printf '%s\n' "Fabric=yes" "FabricInterfaces=${nics// /,}" "FabricManagementInterface=sb0" \
            "FabricMtu=9000" "FabricAddressRange=10.9.$NODE_INDEX.0/26" "FabricAddressPrefix=16" \
            "FabricRoutes=10.10.0.0/16"
        return 0
    fi
    [[ -s $SB_STATE/fabric_nics ]] || return 0
    local nics
    nics=$(paste -sd, "$SB_STATE/fabric_nics")
    printf '%s
' "Fabric=yes" "FabricNetns=$SB_NETNS" "FabricInterfaces=$nics" "FabricMtu=9000" \
        "FabricAddressRange=10.9.0.0/26" "FabricAddressPrefix=16" "FabricRoutes=10.10.0.0/16"
}

# accel-aggregator.conf: listens on a unix socket (one node) or on TCP at the bridge's address
# (several nodes), writes AdminComment through the sandbox's
# slurmdbd, serves its counters on the fourth port.
write_aggregator_conf() {
    cat >"$SB_ETC/accel-aggregator.conf.tmp" <<EOF
# Generated by scripts/slurm-sandbox; rewritten on every 'up'.
Listen=$(aggregator_endpoint)
QueryAddress=$(aggregator_query_endpoint)
SecretKeyFile=$KEY_DIR/aggregator.key
AllowListDir=$KEY_DIR/nodes
Database=$AGG_DIR/events.db
MetricsAddress=127.0.0.1:$METRICS_PORT
WriteComments=yes
ClusterName=$CLUSTER_NAME
SlurmConf=$SLURM_CONF_FILE
EOF
    mv -f "$SB_ETC/accel-aggregator.conf.tmp" "$SB_ETC/accel-aggregator.conf"
}

# CURVE keys, made once per sandbox: the aggregator's pair, and the node's, whose public
# half goes on the aggregator's allow list under the node's name.
make_keys() {
    local keygen=$BUILD_DIR/bin/accel-keygen
    [[ -x $keygen ]] || die "accel-keygen is not built in $BUILD_DIR"
    mkdir -p "$KEY_DIR/nodes"
    chmod 700 "$KEY_DIR"
    [[ -r $KEY_DIR/aggregator.key ]] || "$keygen" "$KEY_DIR/aggregator" >/dev/null ||
        die "accel-keygen failed"
    local node pub
    local -a names=("$HOST_NODE_NAME")
    [[ $MULTI == yes ]] && names=("${NODES[@]}")
    for node in "${names[@]}"; do
        node_context "$node"
        [[ -r $NODE_KEY.key ]] || "$keygen" "$NODE_KEY" >/dev/null || die "accel-keygen failed"
        cp -f "$NODE_KEY.pub" "$KEY_DIR/nodes/$node.pub"
    done
    # The allow list holds exactly this cluster's nodes.
    for pub in "$KEY_DIR"/nodes/*.pub; do
        [[ -e $pub && " ${names[*]} " != *" $(basename -- "$pub" .pub) "* ]] || continue
        rm -f -- "$pub"
    done
}

write_configs() {
    slurm_version_choices
    make_keys
    if [[ $MULTI == yes ]]; then
        read_node_topologies
        net_up
        write_hosts
    else
        fabric_netns_up
    fi
    write_aggregator_conf
    write_accel_conf
    write_prometheus_conf
    write_slurm_conf
    write_cgroup_conf
    write_gres_conf
    write_plugstack_conf
    write_slurmdbd_conf
}
