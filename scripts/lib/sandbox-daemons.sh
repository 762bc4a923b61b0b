# shellcheck shell=bash disable=SC2034 # globals here are used by the other files
# The daemons of the sandbox. Each one is a table entry plus a start_<name> function that
# spawns it and returns once it answers; optional hooks:
#   after_ready_<name>  runs on every `up` once the daemon answers (new or already running)
#   before_stop_<name>  runs on `down` before its SIGTERM
# Adding a daemon (accel-agentd, accel-aggregatord) is one entry and one start function.

# Start order; `down` walks it backwards.
SANDBOX_DAEMONS=(munged mariadbd slurmdbd slurmctld aggregatord prometheus nodens agentd slurmd)

# With several nodes (`up --nodes N`): the cluster's daemons, then on every node its
# namespace holder (node), its agent and its slurmd, recorded as DAEMON@NODE. A daemon with
# spawn_<name> and ready_<name> instead of start_<name> is started on all nodes at once and
# then waited for.
CLUSTER_DAEMONS=(munged mariadbd slurmdbd slurmctld aggregatord prometheus)
NODE_DAEMONS=(node agentd slurmd)

# Sets DAEMON_LIST: every record name of the sandbox's layout, in start order.
daemon_list() {
    local d n
    if [[ $MULTI != yes ]]; then
        DAEMON_LIST=("${SANDBOX_DAEMONS[@]}")
        return 0
    fi
    DAEMON_LIST=("${CLUSTER_DAEMONS[@]}")
    for d in "${NODE_DAEMONS[@]}"; do
        for n in "${NODES[@]}"; do DAEMON_LIST+=("$d@$n"); done
    done
}

# daemon_context RECORD: DAEMON (the table name), DAEMON_REC and the node context.
daemon_context() {
    DAEMON_REC=$1
    DAEMON=${1%@*}
    if [[ $1 == *@* ]]; then
        node_context "${1#*@}"
    elif [[ $MULTI != yes ]]; then
        node_context ''
    fi
}

# Programs `up` needs; checked first so a missing package is named before anything starts.
SANDBOX_COMMANDS=(munged mungekey munge unmunge mariadbd mariadb-install-db mariadb slurmdbd
    slurmctld slurmd sacctmgr scontrol sinfo squeue scancel ss flock setsid prometheus curl
    unshare mount umount)
# And those of a sandbox of several nodes.
MULTI_COMMANDS=(ip nsenter unshare mount mknod hostname sysctl jq cmp)

# Extra process names `down` may end when they still hold sandbox files after the daemons
# stopped: slurmstepd outlives slurmd by design.
SANDBOX_STRAGGLERS=(slurmstepd)

# --- munged ------------------------------------------------------------------------------------
# Its own key and socket; no file of the system munge (/etc/munge, /run/munge) is touched.
start_munged() {
    local key=$SB_SECRET/munge.key
    [[ -s $key ]] || mungekey --create --keyfile="$key" >>"$SB_LOG/munged.out" 2>&1 ||
        die "mungekey failed; see $SB_LOG/munged.out"
    # --num-threads=10: the value Slurm's own munge error messages ask for.
    spawn munged munged --foreground --socket="$MUNGE_SOCKET" \
        --key-file="$key" --pid-file="$SB_RUN/munged.pid" --log-file="$SB_LOG/munged.log" \
        --seed-file="$SB_STATE/munge.seed" --num-threads=10
    wait_until "$TIMEOUT" "munged to answer" munge_roundtrip
}

munge_roundtrip() { munge -S "$MUNGE_SOCKET" -n </dev/null | unmunge -S "$MUNGE_SOCKET"; }

# --- mariadbd ----------------------------------------------------------------------------------
# Private datadir, unix socket only (no TCP port to clash with). The InnoDB sizes are the
# smallest that keep slurmdbd from logging "Database settings not recommended values" (an
# error line in every log scan otherwise); the buffer pool is only reserved, not used. Its
# size depends on the Slurm version (MARIADB_BUFFER_POOL, slurm_version_choices).
MARIADB_TUNING=(--innodb-log-file-size=64M --innodb-lock-wait-timeout=900
    --innodb-flush-log-at-trx-commit=2)

start_mariadbd() {
    slurm_version_choices
    # A temporary directory of this sandbox's own: MariaDB names its temporary files by pid,
    # and a node's namespaces (several nodes) or another sandbox may run a MariaDB with the
    # same pid at the same time (seen with two sandboxes in one Debian 13 root).
    mkdir -p "$SB_RUN/mariadb-tmp"
    local -a tuning=(--innodb-buffer-pool-size="$MARIADB_BUFFER_POOL" --tmpdir="$SB_RUN/mariadb-tmp"
        "${MARIADB_TUNING[@]}")
    # The marker is written last, so a half-finished initialisation is redone, not trusted.
    if [[ ! -e $SB_DB/.initialized ]]; then
        say "initialising MariaDB datadir (first start)"
        find "$SB_DB" -mindepth 1 -delete
        mariadb-install-db --no-defaults --datadir="$SB_DB" --user=root \
            --auth-root-authentication-method=socket --skip-test-db --skip-name-resolve \
            "${tuning[@]}" >>"$SB_LOG/mariadb-install.log" 2>&1 ||
            die "mariadb-install-db failed; see $SB_LOG/mariadb-install.log"
        touch "$SB_DB/.initialized"
    fi
    # --no-defaults must come first: it keeps /etc/mysql/*.cnf out.
    spawn mariadbd mariadbd --no-defaults --datadir="$SB_DB" \
        --socket="$MYSQL_SOCKET" --pid-file="$SB_RUN/mariadbd.pid" \
        --log-error="$SB_LOG/mariadbd.log" --skip-networking --user=root "${tuning[@]}"
    wait_until "$TIMEOUT" "mariadbd to answer" \
        mariadb --no-defaults --socket="$MYSQL_SOCKET" --user=root --execute='SELECT 1'
}

# slurmdbd's database exists before slurmdbd first starts. slurmdbd would create it itself,
# but with the MariaDB client of Debian 13 (Connector/C 3.4, MariaDB 11.8) its reconnection
# after "Unknown database" leaves a handle on which every query fails ("Number of columns in
# result ... exceeds maximum allowed"), and it exits at once. Harmless where it does not.
after_ready_mariadbd() {
    mariadb --no-defaults --socket="$MYSQL_SOCKET" --user=root \
        --execute="CREATE DATABASE IF NOT EXISTS \`$ACCT_DB_NAME\`" ||
        die "could not create database $ACCT_DB_NAME; see $SB_LOG/mariadbd.log"
}

# --- the controller's host (several nodes only) -------------------------------------------------
# slurmctld and slurmdbd run in UTS and mount namespaces of their own (one each), named
# $CTL_NAME, with the sandbox's hosts file: that name resolves to the bridge address, where
# they bind (NoCtldInAddrAny, NoInAddrAny). They stay in the machine's network namespace.
ctl_host_wrap() {
    SPAWN_WRAP=()
    [[ $MULTI == yes ]] || return 0
    SPAWN_WRAP=(unshare --uts --mount --propagation private bash "$SCRIPT_DIR/lib/sandbox-nsinit"
        --hostname "$CTL_NAME" --bind "$SB_HOSTS" /etc/hosts --)
}

# --- slurmdbd ----------------------------------------------------------------------------------
# With several nodes it shares the controller's host name (see start_slurmctld): it binds to
# the address that name resolves to.
start_slurmdbd() {
    ctl_host_wrap
    spawn slurmdbd MYSQL_UNIX_PORT="$MYSQL_SOCKET" slurmdbd -D
    SPAWN_WRAP=()
    wait_until "$TIMEOUT" "slurmdbd to answer" sacctmgr -n -P show cluster format=cluster
}

# Cluster, account and users exist in accounting before anyone submits: with
# AccountingStorageEnforce=associations an unregistered user is refused, as on a real cluster.
after_ready_slurmdbd() {
    if [[ -z $(sacctmgr -n -P show cluster "$CLUSTER_NAME" format=cluster) ]]; then
        sacctmgr -i add cluster "$CLUSTER_NAME" >/dev/null || die "sacctmgr add cluster failed"
    fi
    if [[ -z $(sacctmgr -n -P show account "$ACCOUNT_NAME" format=account) ]]; then
        sacctmgr -i add account "$ACCOUNT_NAME" cluster="$CLUSTER_NAME" \
            description="accel-agent sandbox" organization=accel >/dev/null ||
            die "sacctmgr add account failed"
    fi
    # shellcheck disable=SC2046 # one word per user name is intended
    register_users $(default_users)
}

# Ordinary users: UID_MIN..UID_MAX of /etc/login.defs (1000..60000 by default) in
# /etc/passwd, plus ACCEL_SANDBOX_USERS (space- or comma-separated).
default_users() {
    local min max
    min=$(awk '$1 == "UID_MIN" { print $2 }' /etc/login.defs 2>/dev/null)
    max=$(awk '$1 == "UID_MAX" { print $2 }' /etc/login.defs 2>/dev/null)
    awk -F: -v min="${min:-1000}" -v max="${max:-60000}" '$3 >= min && $3 <= max { print $1 }' \
        /etc/passwd
    echo "${ACCEL_SANDBOX_USERS:-}" | tr ',' ' '
}

# Adds each user to the sandbox account (idempotent). When slurmctld runs, also waits until
# it has the association with the user's uid, so the caller can submit at once.
#
# slurmctld looks a user's uid up when the association reaches it (at its start, or when the
# user is added). An association whose user had no account on this host then keeps an unknown
# uid until slurmctld's hourly retry or a reconfigure, and the user's jobs are refused with
# "Invalid account" meanwhile. The sandbox's accounting outlives the host's users (a test
# creates its user after a restart; a Debian root is made anew beside an old database), so a
# user that accounting has but slurmctld cannot place is registered again, which makes
# slurmctld look the uid up now.
register_users() {
    local user known
    known=" $(sacctmgr -n -P show assoc cluster="$CLUSTER_NAME" account="$ACCOUNT_NAME" \
        format=user | tr '\n' ' ') "
    for user in "$@"; do
        getent passwd "$user" >/dev/null || die "user '$user' does not exist"
        if [[ $known == *" $user "* ]]; then
            is_running slurmctld || continue
            ctld_knows_user "$user" && continue
            say "slurmctld has no uid for $user: registering $user again"
            sacctmgr -i delete user where name="$user" cluster="$CLUSTER_NAME" \
                account="$ACCOUNT_NAME" >/dev/null || die "sacctmgr delete user $user failed"
        fi
        sacctmgr -i add user "$user" defaultaccount="$ACCOUNT_NAME" cluster="$CLUSTER_NAME" \
            >/dev/null || die "sacctmgr add user $user failed"
        say "registered user $user in account $ACCOUNT_NAME"
        if is_running slurmctld; then
            wait_until "$TIMEOUT" "slurmctld to know user $user" ctld_knows_user "$user"
        fi
    done
}

# slurmctld has USER's association in the sandbox account, with USER's uid on this host (not
# 4294967294, Slurm's "unknown", which it shows until it has looked the uid up).
ctld_knows_user() {
    local uid
    uid=$(id -u "$1" 2>/dev/null) || return 1
    scontrol show assoc_mgr users="$1" accounts="$ACCOUNT_NAME" flags=assoc |
        grep -q "UserName=$1($uid)"
}

# Every user of the sandbox account that accounting has and this host knows (the account's
# own association has no user and is skipped; a user without an account here cannot submit,
# and register_users sees to one that gets an account later).
ctld_knows_all_users() {
    local user
    for user in $(sacctmgr -n -P show assoc cluster="$CLUSTER_NAME" account="$ACCOUNT_NAME" \
        format=user); do
        getent passwd "$user" >/dev/null || continue
        ctld_knows_user "$user" || return 1
    done
}

# --- slurmctld ---------------------------------------------------------------------------------
# Jobs recovered from the state file belong to an earlier run that was not shut down with
# `down` (which cancels them); their processes are gone, so they are cancelled here rather than
# left holding the node. The state is kept otherwise: job ids keep rising, so a job id never
# names two different jobs in sacct. `restart slurmctld` sets SB_KEEP_JOBS: its jobs still run.
start_slurmctld() {
    ctl_host_wrap
    spawn slurmctld slurmctld -D
    SPAWN_WRAP=()
    wait_until "$TIMEOUT" "slurmctld to answer" scontrol ping || return 1
    # slurmctld answers before it holds the associations from slurmdbd (24.11 reads them on a
    # thread of its own); a job submitted meanwhile is refused with "Invalid account".
    wait_until "$TIMEOUT" "slurmctld to load the users' associations" ctld_knows_all_users ||
        return 1
    [[ ${SB_KEEP_JOBS:-} == yes ]] || cancel_all_jobs "left from an earlier run"
}

# --- aggregatord (accel-aggregatord) ------------------------------------------------------------
# The central event service, on a unix socket, or on TCP for several nodes (aggregator_endpoint);
# it writes job summaries into AdminComment through slurmdbd, so it starts after slurmctld and
# slurmdbd.
start_aggregatord() {
    local agg=$BUILD_DIR/bin/accel-aggregatord
    [[ -x $agg ]] || die "accel-aggregatord is not built in $BUILD_DIR"
    mkdir -p "$AGG_DIR"
    # A socket left by an earlier run would look like a listener before this one runs.
    rm -f "$AGG_SOCKET"
    spawn aggregatord "$agg" --config "$SB_ETC/accel-aggregator.conf"
    wait_until "$TIMEOUT" "accel-aggregatord to listen on $(aggregator_endpoint)" aggregator_listens
}

aggregator_listens() {
    if [[ $MULTI == yes ]]; then
        [[ -n $(ss -Hltn "src $CTL_ADDR and sport = :$AGG_PORT") ]]
    else
        test -S "$AGG_SOCKET"
    fi
}

# --- prometheus (Debian's) ---------------------------------------------------------------------
# Scrapes every node's agent and the aggregator (prometheus.yml, sandbox-config.sh), with the
# shipped alert rules; its database is under state/, its API on loopback (env prints the URL).
# It stays in the machine's network namespace, which reaches every node's bridge address.
start_prometheus() {
    mkdir -p "$SB_STATE/prometheus"
    spawn prometheus prometheus --config.file="$SB_ETC/prometheus.yml" \
        --storage.tsdb.path="$SB_STATE/prometheus" --storage.tsdb.retention.time=7d \
        --web.listen-address="127.0.0.1:$PROM_PORT"
    wait_until "$TIMEOUT" "prometheus to be ready at $(prometheus_url)" prometheus_ready
}

prometheus_url() { echo "http://127.0.0.1:$PROM_PORT"; }
prometheus_ready() { curl -fsS -o /dev/null --max-time 2 "$(prometheus_url)/-/ready"; }

# An `up` may follow a change of this script: the running Prometheus reads its rewritten
# configuration again.
after_ready_prometheus() {
    local pid
    if pid=$(daemon_pid prometheus); then kill -HUP "$pid" 2>/dev/null || true; fi
}

# --- the fabric namespace ----------------------------------------------------------------------
# A private network namespace holding one veth pair per NIC of the chosen topology, named like
# the NICs (their peers get a -p suffix), so the agent's fabric set-up works on a real kernel
# without touching the host. Made on `up` when missing; removed by `down`.
fabric_netns_up() {
    local topology='' nic
    [[ -r $SB_STATE/topology ]] && topology=$(<"$SB_STATE/topology")
    : >"$SB_STATE/fabric_nics"
    [[ -n $topology ]] || return 0
    "$BUILD_DIR/bin/accel-agentd" --print-topology --xml "$topology" --json |
        jq -r '.nics[] | select(.rdma_device != null) | .netdev' | head -n 2 >"$SB_STATE/fabric_nics" ||
        die "cannot read the NICs of $topology"
    ip netns list | grep -qw "$SB_NETNS" && return 0
    ip netns add "$SB_NETNS" || die "cannot create network namespace $SB_NETNS"
    ip -n "$SB_NETNS" link set lo up
    # The fabric is IPv4; without IPv6 no link-local address comes and goes with carrier.
    ip netns exec "$SB_NETNS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
        net.ipv6.conf.default.disable_ipv6=1
    while read -r nic; do
        ip -n "$SB_NETNS" link add "$nic" type veth peer name "${nic:0:13}-p" ||
            die "cannot create veth $nic in $SB_NETNS"
        ip -n "$SB_NETNS" link set "${nic:0:13}-p" up
        # The first up gives a link its queueing discipline for good: do it now, so a job's
        # set-up and teardown leave the namespace exactly as it was before the job.
        ip -n "$SB_NETNS" link set "$nic" up
        ip -n "$SB_NETNS" link set "$nic" down
    done < <("$BUILD_DIR/bin/accel-agentd" --print-topology --xml "$topology" --json | jq -r '.nics[].netdev')
    say "fabric namespace $SB_NETNS with $(wc -l <"$SB_STATE/fabric_nics") fabric NICs"
}

fabric_netns_down() {
    if ip netns list 2>/dev/null | grep -qw "$SB_NETNS"; then ip netns del "$SB_NETNS"; fi
}

# --- node (several nodes only) -----------------------------------------------------------------
# The holder of a node's namespaces: entered into the node's network namespace, it makes its
# own UTS and mount namespaces, where sandbox-nsinit sets the host name, binds the hosts
# file and the node's accel.conf and vipu.conf over the shared ones (a node without V-IPU
# has no vipu.conf to bind), mounts the node's own cgroups at /sys/fs/cgroup/<controller>
# (sandbox-cgroup.sh) and, for a topology with GPUs, makes the private /dev; then it
# sleeps. The node's agent and slurmd enter its namespaces (in_node_wrap), so either can be
# stopped and started alone.
spawn_node() {
    local -a args=(--hostname "$NODE_NAME" --bind "$SB_HOSTS" /etc/hosts
        --bind "$NODE_CONF" "$SB_ETC/accel.conf")
    if [[ $NODE_VIPU == yes ]]; then args+=(--bind "$NODE_ETC/vipu.conf" "$SB_ETC/vipu.conf"); fi
    mkdir -p "$NODE_RUN" "$SB_SPOOL/$NODE_NAME"
    chmod 0755 "$NODE_RUN"
    node_cgroups_up
    args+=("${NSINIT_CGROUP_ARGS[@]}")
    if ((${NODE_GPUS[$NODE_NAME]:-0} > 0)); then
        args+=(--gpus "${NODE_GPUS[$NODE_NAME]}" "$NODE_RUN/dev")
    fi
    SPAWN_WRAP=(nsenter --net="/run/netns/$NODE_NS" unshare --uts --mount --propagation private
        bash "$SCRIPT_DIR/lib/sandbox-nsinit" "${args[@]}" --)
    spawn "$DAEMON_REC" sleep infinity
    SPAWN_WRAP=()
}

# Ready once sandbox-nsinit has exec'd the sleep; fails at once when it died instead.
ready_node() {
    local pid start binary deadline=$((SECONDS + TIMEOUT))
    read -r pid start binary <"$SB_PIDS/$DAEMON_REC"
    until [[ /proc/$pid/exe -ef $binary ]]; do
        pid_gone "$pid" "$start" && return 1
        ((SECONDS <= deadline)) || return 1
        sleep 0.05
    done
}

# --- nodens (the one-node sandbox only) ---------------------------------------------------------
# The one-node sandbox's node is this host, but its agent and slurmd share a mount namespace of
# their own, held by this process, as a real node's do: sandbox-nsinit mounts the node's
# cgroups at /sys/fs/cgroup/<controller> there (sandbox-cgroup.sh), and the tmpfs the agent
# mounts for a job's directory is seen by the job. Everything else is this host's: network,
# host name, files. Its mounts are a slave of this host's: what a test mounts here (a small
# file system under RunDir, say) is seen there too, and nothing mounted there comes back.
start_nodens() {
    node_cgroups_up
    SPAWN_WRAP=(unshare --mount --propagation slave bash "$SCRIPT_DIR/lib/sandbox-nsinit"
        "${NSINIT_CGROUP_ARGS[@]}" --)
    spawn "$DAEMON_REC" sleep infinity
    SPAWN_WRAP=()
    ready_node
}

# in_node_wrap: SPAWN_WRAP that enters the namespaces of the current node's holder: node@NODE
# with several nodes, nodens (its mount namespace only) in the one-node sandbox.
in_node_wrap() {
    local holder
    if [[ $MULTI != yes ]]; then
        holder=$(daemon_pid nodens) || die "the node's namespace holder (nodens) is not running"
        SPAWN_WRAP=(nsenter --target "$holder" --mount --wd="$SANDBOX_DIR" --)
        return 0
    fi
    holder=$(daemon_pid "node@$NODE_NAME") || die "node $NODE_NAME is not running (no node@$NODE_NAME)"
    SPAWN_WRAP=(nsenter --target "$holder" --net --uts --mount --wd="$SANDBOX_DIR" --)
}

# one_node_wrap: SPAWN_WRAP for a process outside the running sandbox (exec while the node's
# holder is not running): a private mount namespace made as nodens's is.
one_node_wrap() {
    SPAWN_WRAP=(unshare --mount --propagation private bash "$SCRIPT_DIR/lib/sandbox-nsinit"
        "${NSINIT_CGROUP_ARGS[@]}" --)
}

# --- agentd (accel-agentd) ---------------------------------------------------------------------
# The node agent from this build, under scripts/lib/supervise, which restarts it on failure
# as systemd's Restart=on-failure would; the agent's own pid is in $AGENT_PIDFILE. It starts
# before slurmd: every job's Prolog asks it. With several nodes it runs in its node's
# namespaces (its host name is the node's name) and reads the node's accel.conf, mounted at
# the shared path there; a node without V-IPU names its own path instead, so that the agent
# finds no vipu.conf beside it. In the one-node sandbox it shares the node's mount namespace
# with slurmd (nodens): it sees the node's cgroups as slurmd does, and slurmd's jobs see the
# job directories it mounts.
start_agentd() { spawn_agentd && ready_agentd; }

spawn_agentd() {
    local agentd=$BUILD_DIR/bin/accel-agentd
    [[ -x $agentd && -x $BUILD_DIR/bin/accelctl ]] ||
        die "accel-agentd is not built in $BUILD_DIR (run scripts/build, or set ACCEL_BUILD_DIR)"
    mkdir -p "$NODE_RUN/accel" "$NODE_STATE/accel"
    chmod 0755 "$SB_RUN" "$NODE_RUN" "$NODE_RUN/accel"
    [[ -x $BUILD_DIR/hw_mock/bin/vipu ]] ||
        die "the fake vendor clients are not built in $BUILD_DIR/hw_mock (scripts/build or scripts/build --demo builds them)"
    # ACCEL_SANDBOX_AGENT_ENV: VAR=VALUE words added to the agent's environment, for fault
    # tests that run it alone under, say, libfaketime (`restart agentd` with it set).
    local -a extra=()
    read -ra extra <<<"${ACCEL_SANDBOX_AGENT_ENV:-}"
    local conf=$SB_ETC/accel.conf
    if [[ $NODE_VIPU != yes ]]; then conf=$NODE_CONF; fi
    # A node with GPUs: the fake NVML (NvmlLibrary) reads its scripts there (write_node_nvml,
    # which makes the folder for such nodes only). The folder decides, not NODE_GPUS: that is
    # known only to the invocation that brought the sandbox up, not to `restart agentd`.
    if [[ -n ${NODE_ETC:-} && -d $NODE_ETC/nvml ]]; then extra+=("ACCEL_FAKE_NVML_DIR=$NODE_ETC/nvml"); fi
    in_node_wrap
    spawn "$DAEMON_REC" ACCEL_HW_MOCK_STATE="$SB_MOCK" "${extra[@]}" bash "$SCRIPT_DIR/lib/supervise" \
        "$AGENT_PIDFILE" "$agentd" --config "$conf"
    SPAWN_WRAP=()
}

# The node's accel.conf names the node's control socket, reachable from here too.
ready_agentd() {
    wait_until "$TIMEOUT" "accel-agentd${NODE_NS:+ of $NODE_NAME} to answer" \
        "$BUILD_DIR/bin/accelctl" --config "$NODE_CONF" status
}

# --- slurmd ------------------------------------------------------------------------------------
# It runs in its node's namespaces (in_node_wrap), where /sys/fs/cgroup/<controller> is the
# node's own cgroup: the cgroups of its jobs are made there (sandbox-cgroup.sh).
# slurmctld restores the node's last state from its state file, so "idle" alone does not prove
# that this slurmd registered: its start time, as slurmctld reports it, does.
start_slurmd() { spawn_slurmd && ready_slurmd; }

declare -gA SLURMD_SINCE=()
spawn_slurmd() {
    SLURMD_SINCE[$NODE_NAME]=$(date +%s)
    in_node_wrap
    spawn "$DAEMON_REC" slurmd -D -N "$NODE_NAME"
    SPAWN_WRAP=()
}

ready_slurmd() {
    wait_until "$TIMEOUT" "slurmd${NODE_NS:+ of $NODE_NAME} to register with slurmctld" \
        slurmd_registered_since "${SLURMD_SINCE[$NODE_NAME]}"
}

slurmd_registered_since() {
    local started
    started=$(scontrol show node "$NODE_NAME" | grep -o 'SlurmdStartTime=[^ ]*') || return 1
    started=$(date -d "${started#*=}" +%s) || return 1
    ((started >= $1))
}

# A node left drained or down by an earlier run (a failed Epilog, say) is resumed, so every
# `up` ends with a usable node. The old reason is printed first.
after_ready_slurmd() {
    local state reason
    state=$(node_state)
    if [[ $state == *drain* || $state == down* || $state == fail* ]]; then
        reason=$(sinfo -h -n "$NODE_NAME" -o '%E')
        say "node $NODE_NAME was $state (${reason:-no reason}); resuming it"
        scontrol update nodename="$NODE_NAME" state=resume ||
            die "could not resume node $NODE_NAME"
    fi
    wait_until "$TIMEOUT" "node $NODE_NAME to be usable" node_usable ||
        die "node $NODE_NAME is '$(node_state)'; see $SB_LOG/slurmd.log and slurmctld.log"
}

node_state() { sinfo -h -n "$NODE_NAME" -o '%T' 2>/dev/null; }
# Jobs of the user may already run on a re-`up`; a node still completing cancelled jobs is
# waited for.
node_usable() { [[ $(node_state) =~ ^(idle|mixed|allocated)$ ]]; }
# The node's state is known to slurmctld (not empty, not "unknown").
node_known() {
    local state
    state=$(node_state)
    [[ -n $state && $state != unknown* ]]
}

# Jobs are cancelled before slurmd stops, so their slurmstepd and tasks end cleanly.
before_stop_slurmd() {
    is_running slurmctld || return 0
    cancel_all_jobs "still queued or running" || return 0
    wait_until "$TIMEOUT" "cancelled jobs to end" no_jobs_left ||
        warn "jobs still present: $(squeue -h -o '%A %T' | tr '\n' ' ')"
}

# cancel_all_jobs WHY: cancel every job slurmctld knows. Fails only when it cannot list them.
cancel_all_jobs() {
    local jobs
    if ! jobs=$(squeue -h -o '%A' | tr '\n' ' '); then
        warn "could not list jobs; none cancelled"
        return 1
    fi
    [[ -n ${jobs// /} ]] || return 0
    say "cancelling jobs $1: $jobs"
    # shellcheck disable=SC2086 # one word per job id is intended
    scancel $jobs || warn "scancel failed for some of: $jobs"
}

no_jobs_left() { [[ -z $(squeue -h -o '%A' 2>/dev/null) ]]; }
