# shellcheck shell=bash disable=SC2034 # globals here are used by the other files
# Shared pieces of scripts/slurm-sandbox: paths, messages, bounded waits, process records and
# port selection. Sourced, never executed. Everything the sandbox creates lives under
# $SANDBOX_DIR; nothing here reads or writes the system's own Slurm or munge paths.

# --- paths -----------------------------------------------------------------------------------
# One directory holds everything, so `down` plus `rm -rf` is a complete reset and two sandboxes
# (say, a developer's and a CI build's) never share a file.
sandbox_init_paths() {
    SANDBOX_DIR=$(realpath -m -- "${ACCEL_SANDBOX_DIR:-$REPO_DIR/.sandbox}")
    BUILD_DIR=$(realpath -m -- "${ACCEL_BUILD_DIR:-$REPO_DIR/build}")
    [[ $SANDBOX_DIR != / ]] || die "ACCEL_SANDBOX_DIR must not be /"
    SB_ETC=$SANDBOX_DIR/etc          # generated config, world-readable (clients parse slurm.conf)
    SB_SECRET=$SANDBOX_DIR/etc/munge # munge key, root only
    # Sockets, the daemons' own pid files and the agents' RunDir. ACCEL_SANDBOX_RUN_DIR puts
    # them elsewhere, such as on a tmpfs as /run is on a node (bench/multinode does).
    SB_RUN=$(realpath -m -- "${ACCEL_SANDBOX_RUN_DIR:-$SANDBOX_DIR/run}")
    SB_LOG=$SANDBOX_DIR/log
    SB_STATE=$SANDBOX_DIR/state      # our records: pids, ports, topology
    SB_PIDS=$SB_STATE/pids
    SB_CTLD_STATE=$SB_STATE/slurmctld
    SB_SPOOL=$SANDBOX_DIR/spool/slurmd
    SB_DB=$SANDBOX_DIR/db
    SB_LOCK=$SANDBOX_DIR/lock
    SB_MOCK=$SANDBOX_DIR/hw_mock     # state of the fake vendor clients (tests/hw_mock)
    AGENT_SOCKET=$SB_RUN/accel/control.sock
    AGG_SOCKET=$SB_RUN/aggregator.sock  # one node: the aggregator's endpoint (see aggregator_endpoint)
    # The fabric's private network namespace, named after the sandbox path so two sandboxes
    # never share one; the host's own interfaces are never touched.
    local sum
    sum=$(cksum <<<"$SANDBOX_DIR")
    SB_NETNS=accel-sb-${sum%% *}
    AGG_DIR=$SB_STATE/aggregator     # its database
    KEY_DIR=$SB_ETC/keys             # CURVE keys of the aggregator and the node (0700)
    AGENT_PIDFILE=$SB_RUN/accel-agentd.pid  # the agent itself, not its supervisor
    SLURM_CONF_FILE=$SB_ETC/slurm.conf
    MUNGE_SOCKET=$SB_RUN/munge.socket
    MYSQL_SOCKET=$SB_RUN/mariadb.socket
    ACCT_DB_NAME=slurm_acct_db       # slurmdbd's StorageLoc
    CLUSTER_NAME=sandbox
    ACCOUNT_NAME=accel
    PARTITION_NAME=main
    NODE_NAME=$(hostname -s)
    TIMEOUT=${ACCEL_SANDBOX_TIMEOUT:-30}
    # A cluster of several nodes (`up --nodes N`, scripts/lib/sandbox-net.sh): the layout is
    # recorded in state/nodes, one "NAME<TAB>TOPOLOGY" line per node, "NAME<TAB>TOPOLOGY<TAB>
    # KINDS" for a node that lacks something, KINDS a comma-separated list of no-ipu (no V-IPU
    # controller: `up --no-ipu NAME`) and no-appliance (no appliance client: `up
    # --no-appliance NAME`); without that file the sandbox is the one-node cluster on loopback.
    SB_NODES_FILE=$SB_STATE/nodes
    SB_NET_FILE=$SB_STATE/net        # the chosen /24 while the network exists
    SB_NODE_ETC=$SB_ETC/nodes        # per-node accel.conf and vipu.conf
    SB_HOSTS=$SB_ETC/hosts           # /etc/hosts of slurmctld and every node
    SB_NS_PREFIX=$SB_NETNS           # node namespaces: <prefix>-<node>, fabric: <prefix>-fabric
    NODE_PREFIX=sbn
    CTL_NAME=sbctl
    MULTI=no
    NODES=()
    NODE_NS=''
    declare -gA NODE_TOPO=()
    declare -gA NODE_NO_IPU=()
    declare -gA NODE_NO_APPLIANCE=()
    HOST_NODE_NAME=$NODE_NAME
    load_layout
}

# Reads state/nodes into MULTI, NODES, NODE_TOPO (node -> topology file or empty) and
# NODE_NO_IPU (node -> yes for a node without a V-IPU controller) and NODE_NO_APPLIANCE (node
# -> yes for a node without an appliance client). Fields are split by hand:
# read with IFS=$'\t' would merge the two tabs around an empty topology.
load_layout() {
    MULTI=no
    NODES=()
    NODE_TOPO=()
    NODE_NO_IPU=()
    NODE_NO_APPLIANCE=()
    [[ -r $SB_NODES_FILE ]] || return 0
    local line name rest topo kind
    while IFS= read -r line; do
        name=${line%%$'\t'*}
        [[ -n $name ]] || continue
        rest='' kind=''
        if [[ $line == *$'\t'* ]]; then rest=${line#*$'\t'}; fi
        topo=${rest%%$'\t'*}
        if [[ $rest == *$'\t'* ]]; then kind=${rest#*$'\t'}; fi
        NODES+=("$name")
        NODE_TOPO[$name]=$topo
        if [[ ,$kind, == *,no-ipu,* ]]; then NODE_NO_IPU[$name]=yes; fi
        if [[ ,$kind, == *,no-appliance,* ]]; then NODE_NO_APPLIANCE[$name]=yes; fi
    done <"$SB_NODES_FILE"
    ((${#NODES[@]})) && MULTI=yes
    return 0
}

# node_context NAME: points the per-node globals at one node. In the one-node sandbox the
# node is this host under its own name, with the paths the sandbox always had.
node_context() {
    if [[ $MULTI != yes ]]; then
        NODE_NAME=$HOST_NODE_NAME
        NODE_INDEX=1
        NODE_NS=''
        NODE_ADDR=127.0.0.1
        NODE_CONF=$SB_ETC/accel.conf
        NODE_RUN=$SB_RUN
        NODE_STATE=$SB_STATE
        NODE_TOPOLOGY=$(cat "$SB_STATE/topology" 2>/dev/null || true)
        NODE_VIPU=yes
        NODE_APPLIANCE=yes
        AGENT_SOCKET=$SB_RUN/accel/control.sock
        AGENT_PIDFILE=$SB_RUN/accel-agentd.pid
        NODE_KEY=$KEY_DIR/node
        return 0
    fi
    local i
    for i in "${!NODES[@]}"; do [[ ${NODES[i]} == "$1" ]] && break; done
    [[ ${NODES[i]:-} == "$1" ]] || die "no node '$1' in this sandbox (nodes: ${NODES[*]})"
    NODE_NAME=$1
    NODE_INDEX=$((i + 1))
    NODE_ETC=$SB_NODE_ETC/$1
    NODE_CONF=$NODE_ETC/accel.conf
    NODE_RUN=$SB_RUN/$1
    NODE_STATE=$SB_STATE/$1
    NODE_TOPOLOGY=${NODE_TOPO[$1]}
    # An IPU-POD host has vipu.conf beside its accel.conf; a node of `up --no-ipu` has none.
    NODE_VIPU=yes
    if [[ ${NODE_NO_IPU[$1]:-} == yes ]]; then NODE_VIPU=no; fi
    # A node of `up --no-appliance` gets a hardware-mock directory of its own without the
    # appliance client (etc/nodes/<node>/hw_mock): its agent reads no appliance.
    NODE_APPLIANCE=yes
    if [[ ${NODE_NO_APPLIANCE[$1]:-} == yes ]]; then NODE_APPLIANCE=no; fi
    NODE_NS=$SB_NS_PREFIX-$1
    AGENT_SOCKET=$NODE_RUN/accel/control.sock
    AGENT_PIDFILE=$NODE_RUN/accel-agentd.pid
    NODE_KEY=$KEY_DIR/$1
    if [[ -n ${NET_PREFIX:-} ]]; then NODE_ADDR=$NET_PREFIX.$((10 + NODE_INDEX)); fi
}

# put_file TMP DEST: installs a generated file. With several nodes, files that nodes or
# slurmctld see through bind mounts (accel.conf, vipu.conf, hosts) are rewritten in place:
# replacing one by rename would detach the mounts made on it in the other mount namespaces.
# An unchanged file is left alone.
put_file() {
    if [[ -e $2 ]] && cmp -s -- "$1" "$2"; then
        rm -f -- "$1"
    elif [[ $MULTI == yes && -e $2 ]]; then
        cat -- "$1" >"$2"
        rm -f -- "$1"
    else
        mv -f -- "$1" "$2"
    fi
}

sandbox_make_dirs() {
    # 022: job scripts in the spool and slurm.conf must be readable by the job's user.
    umask 022
    mkdir -p "$SB_ETC" "$SB_RUN" "$SB_LOG" "$SB_PIDS" "$SB_CTLD_STATE" "$SB_SPOOL" "$SB_DB"
    mkdir -p "$SB_SECRET" "$SB_MOCK"
    chmod 755 "$SB_MOCK"
    chmod 700 "$SB_SECRET"
    chmod 755 "$SANDBOX_DIR" "$SB_ETC" "$SB_RUN"
}

# Unix socket paths are limited to 107 bytes; slurmstepd puts one per step in the spool
# (<node>_<job>.<step>). Fail early with a hint rather than deep inside a daemon.
# sandbox_check_path_lengths [NODE...]: with the names of several nodes, each node's spool
# <spool>/<node> is checked.
sandbox_check_path_lengths() {
    local longest node
    local -a longest_paths=("$SB_SPOOL/${HOST_NODE_NAME}_4294967294.4294967294")
    if (($#)); then
        longest_paths=()
        for node; do longest_paths+=("$SB_SPOOL/$node/${node}_4294967294.4294967294"); done
    fi
    for longest in "${longest_paths[@]}"; do
        ((${#longest} <= 107)) ||
            die "sandbox path too long for unix sockets (${#longest} > 107 bytes): $SANDBOX_DIR;" \
                "set ACCEL_SANDBOX_DIR to a shorter directory"
    done
}

# --- messages and time -----------------------------------------------------------------------
say() { printf 'slurm-sandbox: %s\n' "$*"; }
warn() { printf 'slurm-sandbox: warning: %s\n' "$*" >&2; }
die() {
    printf 'slurm-sandbox: error: %s\n' "$*" >&2
    exit 1
}

now_ms() {
    local t=${EPOCHREALTIME/[.,]/}
    echo $((t / 1000))
}

# Milliseconds since $1 as seconds with one decimal, for progress lines.
elapsed() {
    local ms=$(($(now_ms) - $1))
    printf '%d.%01d s' $((ms / 1000)) $((ms % 1000 / 100))
}

# wait_until SECONDS DESCRIPTION CMD...: run CMD every 0.1 s until it succeeds. Every wait in
# the sandbox goes through here so none can hang.
wait_until() {
    local limit_ms=$(($1 * 1000)) what=$2 start
    shift 2
    start=$(now_ms)
    until "$@" >/dev/null 2>&1; do
        if (($(now_ms) - start > limit_ms)); then
            warn "timed out after ${limit_ms%000} s waiting for $what"
            return 1
        fi
        sleep 0.1
    done
}

# --- process records -------------------------------------------------------------------------
# state/pids/<name> holds "pid starttime binary". The start time (field 22 of /proc/PID/stat)
# guards against a recycled pid: a record only counts while both still match.

# Prints the start time of a live process; fails for a missing one and for a zombie (an exited
# daemon is reparented to PID 1, which may take seconds to reap it).
proc_starttime() {
    local stat rest fields
    read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
    rest=${stat##*) } # comm may contain spaces and parentheses; skip past it
    read -ra fields <<<"$rest"
    [[ ${fields[0]} != Z ]] || return 1
    echo "${fields[19]}"
}

record_pid() {
    local name=$1 pid=$2 binary=$3 start
    start=$(proc_starttime "$pid") || die "$name (pid $pid) exited at once; see $SB_LOG/$name.*"
    echo "$pid $start $binary" >"$SB_PIDS/$name"
}

# Prints the recorded pid of a live daemon; fails when there is none.
daemon_pid() {
    local name=$1 pid start binary
    [[ -r $SB_PIDS/$name ]] || return 1
    read -r pid start binary <"$SB_PIDS/$name" || return 1
    [[ $(proc_starttime "$pid" 2>/dev/null) == "$start" ]] || return 1
    echo "$pid"
}

is_running() { daemon_pid "$1" >/dev/null; }

# spawn NAME [VAR=VALUE...] PROGRAM [ARGS...]: start a daemon that stays in the foreground,
# so $! is its pid. SPAWN_WRAP, when set, is a command put before PROGRAM that ends by
# exec'ing it in the same process (nsenter, unshare, sandbox-nsinit): the pid stays the
# daemon's, in the namespaces the wrapper entered.
# setsid puts it in its own session: a Ctrl-C at the terminal, or ctest ending the setup test,
# does not reach it. Its output goes to log/NAME.out, and the lock fd is closed so a daemon
# never holds the sandbox lock.
SPAWN_WRAP=()

spawn() {
    local name=$1 binary
    local -a env=()
    shift
    while [[ $1 =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; do
        env+=("$1")
        shift
    done
    binary=$(command -v "$1") || die "$1 not found; see the packages in scripts/README.md"
    shift
    (
        exec 9>&-
        cd "$SANDBOX_DIR" || exit 1
        ((${#env[@]} == 0)) || export "${env[@]?}"
        exec setsid "${SPAWN_WRAP[@]}" "$binary" "$@" </dev/null >>"$SB_LOG/$name.out" 2>&1
    ) &
    record_pid "$name" "$!" "$binary"
}

# The recorded pid must be the daemon itself, not a wrapper: check once it is ready.
verify_identity() {
    local name=$1 pid start binary
    read -r pid start binary <"$SB_PIDS/$name"
    [[ /proc/$pid/exe -ef $binary ]] ||
        die "$name: recorded pid $pid is not $binary; refusing to track the wrong process"
}

# Send SIGTERM, wait (bounded), then SIGKILL. Succeeds when the process is gone.
terminate_pid() {
    local pid=$1 what=$2 start
    start=$(proc_starttime "$pid") || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    local limit=${ACCEL_SANDBOX_STOP_TIMEOUT:-20}
    if ! wait_until "$limit" "$what to exit" pid_gone "$pid" "$start"; then
        warn "$what ignored SIGTERM; sending SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
        wait_until 5 "$what to die" pid_gone "$pid" "$start" || return 1
    fi
}

pid_gone() { [[ $(proc_starttime "$1" 2>/dev/null) != "$2" ]]; }

# Processes left once the recorded daemons are gone: a slurmstepd (it outlives slurmd by
# design and ignores SIGTERM) with its job's tasks, or a task orphaned earlier. Those named in
# $@, and anything holding a file in the slurmd spool (a job script), are ended together with
# their descendants. Any other holder (an operator's `tail -f` on a log) is reported only.
sweep_stragglers() {
    local allowed=" $* " pid child comm
    local -a holders=() doomed=()
    local -A is_doomed=()
    mapfile -t holders < <(sandbox_file_holders)
    for pid in "${holders[@]}"; do
        [[ $pid != "$$" && -z ${is_doomed[$pid]:-} ]] || continue
        read -r comm 2>/dev/null <"/proc/$pid/comm" || continue
        [[ $allowed == *" $comm "* ]] || holds_file_under "$pid" "$SB_SPOOL" || continue
        say "ending leftover $comm (pid $pid) and its children"
        for child in "$pid" $(descendants_of "$pid"); do
            doomed+=("$child")
            is_doomed[$child]=1
        done
    done
    for pid in "${holders[@]}"; do
        [[ $pid != "$$" && -z ${is_doomed[$pid]:-} ]] || continue
        read -r comm 2>/dev/null <"/proc/$pid/comm" || continue
        warn "$comm (pid $pid) still uses files under $SANDBOX_DIR; left alone"
    done
    ((${#doomed[@]})) || return 0
    # SIGKILL at once: a job's tasks would get it from slurmstepd, which is gone or going.
    kill -KILL "${doomed[@]}" 2>/dev/null || true
    wait_until 10 "leftover processes to die" all_gone "${doomed[@]}" ||
        warn "still alive: $(for pid in "${doomed[@]}"; do is_alive "$pid" && echo "$pid"; done)"
}

is_alive() { proc_starttime "$1" >/dev/null 2>&1; }

all_gone() {
    local pid
    for pid; do ! is_alive "$pid" || return 1; done
}

holds_file_under() {
    find "/proc/$1/fd" "/proc/$1/cwd" -maxdepth 1 -lname "$2/*" -print -quit 2>/dev/null | grep -q .
}

# All descendants of a pid, from the parent links in /proc/*/stat.
descendants_of() {
    local -A children=()
    local stat rest fields pid queue
    for stat in /proc/[0-9]*/stat; do
        read -r rest 2>/dev/null <"$stat" || continue
        pid=${rest%% *}
        rest=${rest##*) }
        read -ra fields <<<"$rest"
        children[${fields[1]}]+=" $pid"
    done
    queue=${children[$1]:-}
    while [[ -n ${queue// /} ]]; do
        read -r pid queue <<<"$queue"
        echo "$pid"
        queue+=" ${children[$pid]:-}"
    done
}

# Pids of processes with an open file or working directory under the sandbox (the lock file
# excepted: this script holds it). find fails on processes that vanish while it reads /proc;
# only its output matters.
sandbox_file_holders() {
    { find /proc/[0-9]*/fd /proc/[0-9]*/cwd -maxdepth 1 \( -lname "$SANDBOX_DIR/*" \
        ! -lname "$SB_LOCK" \) -printf '%h\n' 2>/dev/null || true; } |
        sed -n 's|^/proc/\([0-9]*\).*|\1|p' | sort -un
}

# Where the agents reach accel-aggregatord. One node: a unix socket. Several: TCP on the
# bridge's address (where slurmctld is too), with CURVE, as real nodes reach it.
aggregator_endpoint() {
    if [[ $MULTI == yes ]]; then
        echo "tcp://$CTL_ADDR:$AGG_PORT"
    else
        echo "ipc://$AGG_SOCKET"
    fi
}

# Where the agents ask accel-aggregatord for a job's events (accelctl events --job): its
# QueryAddress, beside the events endpoint.
aggregator_query_endpoint() {
    if [[ $MULTI == yes ]]; then
        echo "tcp://$CTL_ADDR:$AGG_QUERY_PORT"
    else
        echo "ipc://${AGG_SOCKET%.sock}-query.sock"
    fi
}

# --- ports -----------------------------------------------------------------------------------
# Eight TCP ports (slurmctld, slurmd, slurmdbd, the aggregator's metrics, the aggregator's
# events and its questions when the sandbox has several nodes, the node agents' metrics,
# Prometheus). The search
# starts at a base derived from the sandbox path, so two sandboxes rarely even probe the same
# ports, and stays below the kernel's ephemeral range (32768 up) so client sockets cannot take
# them later. With several nodes every agent serves its metrics on the same port, at its own
# node's address.
PORT_NAMES=(CTLD_PORT SLURMD_PORT DBD_PORT METRICS_PORT AGG_PORT AGENT_METRICS_PORT PROM_PORT AGG_QUERY_PORT)

pick_ports() {
    local -A used=()
    local port base hash i
    # Listening sockets only: a port in TIME_WAIT from our last run is fine to bind again
    # (Slurm sets SO_REUSEADDR), and keeping it keeps the ports stable across restarts.
    while read -r port; do
        used[$port]=1
    done < <(ss -Hltnu | awk '{ sub(/.*:/, "", $5); print $5 }')
    hash=$(cksum <<<"$SANDBOX_DIR")
    base=$((20000 + ${hash%% *} % 1000 * 10))
    PORTS=()
    for ((port = base; port < base + 500 && ${#PORTS[@]} < ${#PORT_NAMES[@]}; port++)); do
        [[ -z ${used[$port]:-} ]] && PORTS+=("$port")
    done
    ((${#PORTS[@]} == ${#PORT_NAMES[@]})) || die "no ${#PORT_NAMES[@]} free TCP ports found from $base"
    for i in "${!PORT_NAMES[@]}"; do
        printf -v "${PORT_NAMES[i]}" '%s' "${PORTS[i]}"
        printf '%s=%s\n' "${PORT_NAMES[i]}" "${PORTS[i]}"
    done >"$SB_STATE/ports"
}

load_ports() {
    [[ -r $SB_STATE/ports ]] || return 1
    local key value
    while IFS='=' read -r key value; do
        if [[ " ${PORT_NAMES[*]} " == *" $key "* ]]; then printf -v "$key" '%s' "$value"; fi
    done <"$SB_STATE/ports"
    for key in "${PORT_NAMES[@]}"; do
        [[ -n ${!key:-} ]] || return 1
    done
}

# The process tracking `up` chose: cgroup (the default, as sites run it) or linuxproc
# (up --proctrack linuxproc), kept in state/proctrack while the sandbox exists.
sandbox_proctrack() {
    local p=cgroup
    [[ -r $SB_STATE/proctrack ]] && p=$(<"$SB_STATE/proctrack")
    echo "$p"
}
