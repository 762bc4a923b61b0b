# shellcheck shell=bash disable=SC2034 # FAULT_* and JOB_ID are for the scenarios
# Shared pieces of the fault injection scenarios (faults_*.sh); sourced after lib.sh, never
# executed. A scenario calls faults_init, injects its fault around one or more jobs of the
# test user (faults_submit registers them), then faults_check_all, which asserts that nothing
# is left behind and no event was lost or doubled:
#  - no job directory, job record, IPUoF directory or V-IPU partition of the scenario's jobs,
#    and the fake controller's partitions are what they were before;
#  - the fabric namespace is exactly as before (addresses, routes, links);
#  - no process of the test user, no slurmstepd of the jobs, no vendor client (the fakes of
#    this build) and no child of the agent;
#  - the agent's spool is drained, it dropped no event, and the aggregator's store holds
#    every sequence number of every agent epoch since the scenario began exactly once, each
#    job's lifecycle events (prolog_started, prolog_finished, epilog_finished) exactly once
#    (an epilog that failed and ran again adds its own failed epilog_finished, which a
#    scenario declares in FAULT_EPILOGS), and one agent_started for each start of the agent.
# Random choices come from one seed, printed first: ACCEL_FAULTS_SEED=N replays a run.
# Every wait is bounded; every fault is undone on exit, pass or fail.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"

FAULT_JOBS=()
FAULT_EXIT_ACTIONS=()
FAULT_AGENT_STARTS=0
# FAULT_EPILOGS[JOB]: the failed epilog runs a scenario expects before the clean one, as
# "epilog_finished(failed) " once per run; none by default.
declare -A FAULT_EPILOGS=()

# faults_on_exit CMD [ARGS...]: runs CMD when the scenario ends, pass or fail, newest first.
faults_on_exit() {
    FAULT_EXIT_ACTIONS=("$(printf '%q ' "$@")" "${FAULT_EXIT_ACTIONS[@]}")
}
faults_run_exit_actions() {
    local rc=$? action
    for action in "${FAULT_EXIT_ACTIONS[@]}"; do eval "$action" || true; done
    return "$rc"
}

# The setting KEY of FILE (key=value lines), or DEFAULT.
conf_value() {
    local v
    v=$(sed -n "s/^[[:space:]]*$2[[:space:]]*=[[:space:]]*\\([^[:space:]#]*\\).*/\\1/Ip" "$1" | tail -n 1)
    echo "${v:-$3}"
}

faults_init() {
    require_root
    require_sandbox
    ensure_test_user
    trap faults_run_exit_actions EXIT
    FAULT_SEED=${ACCEL_FAULTS_SEED:-$((($(date +%s%N) / 1000) % 32768))}
    [[ $FAULT_SEED =~ ^[0-9]+$ ]] || fail "ACCEL_FAULTS_SEED must be a number, not '$FAULT_SEED'"
    RANDOM=$FAULT_SEED
    log "seed $FAULT_SEED (replay with ACCEL_FAULTS_SEED=$FAULT_SEED)"
    local conf_dir
    conf_dir=$(dirname -- "$SLURM_CONF")
    FAULT_ACCEL_CONF=$conf_dir/accel.conf
    FAULT_RUN_DIR=$(conf_value "$FAULT_ACCEL_CONF" RunDir '')
    FAULT_STATE_DIR=$(conf_value "$FAULT_ACCEL_CONF" StateDir '')
    [[ -n $FAULT_RUN_DIR && -n $FAULT_STATE_DIR ]] || fail "no RunDir or StateDir in $FAULT_ACCEL_CONF"
    FAULT_SPOOL_DIR=$(conf_value "$FAULT_ACCEL_CONF" EventSpoolDir "$FAULT_STATE_DIR/spool")
    FAULT_IPUOF_DIR=$(conf_value "$conf_dir/vipu.conf" IpuofDir '')
    FAULT_AGG_DB=$ACCEL_SANDBOX_DIR/state/aggregator/events.db
    FAULT_AGENT_PIDFILE=$ACCEL_SANDBOX_DIR/run/accel-agentd.pid
    FAULT_VIPU_DIR=$ACCEL_HW_MOCK_STATE/vipu
    FAULT_MOCK_BIN=${ACCEL_BUILD_DIR:-$ACCEL_REPO_DIR/build}/hw_mock/bin
    [[ -d $FAULT_MOCK_BIN ]] || fail "the fake vendor clients are not in $FAULT_MOCK_BIN"
    [[ -r $FAULT_AGG_DB ]] || fail "the aggregator's database $FAULT_AGG_DB does not exist"
    command -v sqlite3 >/dev/null || fail "sqlite3 is not installed (scripts/bootstrap)"
    if [[ -z ${ACCEL_SANDBOX_NETNS:-} ]] || ! ip netns list | grep -qw "$ACCEL_SANDBOX_NETNS"; then
        fail "the sandbox has no fabric namespace (bring it up with --topology)"
    fi
    accelctl status >/dev/null || fail "accel-agentd does not answer"
    faults_expect_node_in_service
    # A fault file left by an interrupted run would break this one; none may exist now.
    [[ ! -s $FAULT_VIPU_DIR/faults ]] || fail "$FAULT_VIPU_DIR/faults is not empty before the scenario"
    # The fake makes its state directory (sticky, world-writable) on first use.
    vipu list partitions >/dev/null || fail "the fake vipu does not answer"
    # Whatever a scenario stopped runs again at the end (up starts only what is missing).
    faults_on_exit faults_sandbox_up
    faults_on_exit faults_clear_vipu
    faults_on_exit faults_cancel_jobs
    FAULT_NODE=$(accelctl status --json | jq -r .node)
    FAULT_EPOCH0=$(faults_agent_epoch)
    FAULT_NETNS_BEFORE=$(faults_netns_snapshot)
    FAULT_PARTITIONS_BEFORE=$(faults_partitions)
    log "agent epoch $FAULT_EPOCH0 on node $FAULT_NODE; spool $FAULT_SPOOL_DIR; run dir $FAULT_RUN_DIR"
}

faults_sandbox_up() {
    "$SANDBOX_SCRIPT" up >/dev/null || printf '%s: slurm-sandbox up failed\n' "$TEST_NAME" >&2
}

# --- the agent -------------------------------------------------------------------------------
faults_agent_epoch() {
    local e
    # Read where the agent sees it: a small file system may be mounted over it in the node.
    e=$(faults_in_node cat "$FAULT_SPOOL_DIR/epoch" 2>/dev/null) || fail "cannot read $FAULT_SPOOL_DIR/epoch"
    [[ $e =~ ^[0-9]+$ ]] || fail "$FAULT_SPOOL_DIR/epoch holds '$e'"
    echo "$e"
}

faults_agent_pid() {
    local pid
    pid=$(cat "$FAULT_AGENT_PIDFILE" 2>/dev/null) || pid=''
    if [[ ! $pid =~ ^[0-9]+$ ]] || ! kill -0 "$pid" 2>/dev/null; then
        fail "no running accel-agentd in $FAULT_AGENT_PIDFILE"
    fi
    echo "$pid"
}

# SIGKILLs the agent (not its supervisor) and waits until the supervisor's restart answers.
faults_kill_agent() {
    local old new deadline
    old=$(faults_agent_pid)
    kill -KILL "$old"
    log "killed accel-agentd (pid $old) with SIGKILL${1:+: $1}"
    deadline=$((SECONDS + 20))
    until new=$(cat "$FAULT_AGENT_PIDFILE" 2>/dev/null) && [[ -n $new && $new != "$old" ]] &&
        accelctl status >/dev/null 2>&1; do
        ((SECONDS <= deadline)) || fail "accel-agentd did not come back within 20 s of the kill"
        sleep 0.1
    done
    FAULT_AGENT_STARTS=$((FAULT_AGENT_STARTS + 1))
    log "accel-agentd is back (pid $new)"
}

# --- the fake V-IPU controller ---------------------------------------------------------------
# faults_vipu_rules RULE...: replaces the fake controller's fault rules (tests/hw_mock/README.md).
faults_vipu_rules() {
    rm -rf "$FAULT_VIPU_DIR/faults.fired"
    printf '%s\n' "$@" >"$FAULT_VIPU_DIR/faults.tmp"
    mv -f "$FAULT_VIPU_DIR/faults.tmp" "$FAULT_VIPU_DIR/faults"
    log "V-IPU fault rules: $(printf '%s; ' "$@")"
}
faults_clear_vipu() { rm -rf "$FAULT_VIPU_DIR/faults" "$FAULT_VIPU_DIR/faults.fired"; }

# The fake controller's partitions as "id size" lines, sorted; read from its state file, so
# the controller's own fault rules do not apply.
faults_partitions() {
    local f=$FAULT_VIPU_DIR/partitions.json
    [[ -s $f ]] || return 0
    jq -r '.[] | "\(.id) \(.size)"' "$f" | sort
}

# faults_calls_since LINE: the vipu calls logged after line LINE of calls.log.
faults_vipu_calls_since() { tail -n +"$(($1 + 1))" "$FAULT_VIPU_DIR/calls.log" 2>/dev/null || true; }
faults_vipu_calls_count() { { [[ -r $FAULT_VIPU_DIR/calls.log ]] && wc -l <"$FAULT_VIPU_DIR/calls.log"; } || echo 0; }

# --- jobs ------------------------------------------------------------------------------------
# faults_submit TAG [SBATCH ARGS...]: a job that writes $TEST_HOME/TAG.started once running,
# then waits (at most 90 s) for $TEST_HOME/TAG.release. Sets JOB_ID and registers the job.
faults_submit() {
    local tag=$1
    shift
    rm -f "$TEST_HOME/$tag.started" "$TEST_HOME/$tag.release"
    faults_on_exit rm -f "$TEST_HOME/$tag.started" "$TEST_HOME/$tag.release" "$TEST_HOME/$tag.out"
    submit -J "$tag" -o "$TEST_HOME/$tag.out" "$@" <<SCRIPT
#!/bin/bash
echo "\$SLURM_JOB_ID \${IPUOF_VIPU_API_PARTITION_ID:-} \${ACCEL_FABRIC_ADDRESSES:-}" >"$TEST_HOME/$tag.started"
for _ in \$(seq 900); do [[ -e "$TEST_HOME/$tag.release" ]] && exit 0; sleep 0.1; done
exit 9
SCRIPT
    FAULT_JOBS+=("$JOB_ID")
}

# faults_wait_started TAG SECONDS: waits until the job of TAG runs its script.
faults_wait_started() {
    local deadline=$((SECONDS + $2))
    until [[ -s $TEST_HOME/$1.started ]]; do
        ((SECONDS <= deadline)) || fail "job $1 did not start within $2 s"
        sleep 0.1
    done
}
faults_release() { as_test_user touch "$TEST_HOME/$1.release"; }

faults_cancel_jobs() {
    local j
    for j in "${FAULT_JOBS[@]}"; do scancel "$j" 2>/dev/null || true; done
}

# faults_wait_left_queue JOB SECONDS: waits until squeue no longer lists the job (the epilog
# is over: a job stays COMPLETING in squeue until its Epilog has run).
faults_wait_left_queue() {
    local deadline=$((SECONDS + $2)) state
    while state=$(squeue -h -j "$1" -o %T 2>/dev/null) && [[ -n $state ]]; do
        ((SECONDS <= deadline)) || fail "job $1 is still '$state' in squeue after $2 s"
        sleep 0.2
    done
}

# --- the node --------------------------------------------------------------------------------
faults_expect_node_in_service() {
    local state reason
    state=$(sinfo -h -o %T) || fail "sinfo failed"
    reason=$(sinfo -h -o %E)
    # planned: the backfill scheduler holds the node for a pending job (another test's), in service.
    [[ $state =~ ^(idle|mixed|allocated|completing|planned)$ && $reason == none ]] ||
        fail "node is '$state' (reason: $reason); a fault of this kind must not take it out of service"
    log "ok: node is $state, in service"
}

# faults_expect_drained REASON_PATTERN: the node was drained for a documented node fault;
# it is resumed (as an operator would) and in service again afterwards.
faults_expect_drained() {
    local state reason deadline=$((SECONDS + 20))
    until state=$(sinfo -h -o %T) && [[ $state == *drain* ]]; do
        ((SECONDS <= deadline)) || fail "node is '$state', expected drained ($1)"
        sleep 0.2
    done
    reason=$(sinfo -h -o %E)
    [[ $reason == *$1* ]] || fail "node drained for '$reason', expected '$1'"
    log "ok: node drained ($reason), as documented for a node fault; resuming it"
    scontrol update nodename="$(sinfo -h -o %N)" state=resume || fail "could not resume the node"
    deadline=$((SECONDS + 20))
    until state=$(sinfo -h -o %T) && [[ $state =~ ^(idle|mixed|allocated)$ ]]; do
        ((SECONDS <= deadline)) || fail "node is '$state' 20 s after resume"
        sleep 0.2
    done
}

# --- full disks ------------------------------------------------------------------------------
# faults_small_fs moves a directory of the agent onto a small tmpfs (with the agent stopped),
# so it can be filled without touching the machine's disks; faults_restore_fs undoes it.
FAULT_FS_MOUNTED=()
FAULT_FS_SAVE=

faults_agent_on_small_fs() {
    FAULT_FS_SAVE=$(mktemp -d /tmp/faults-disk.XXXXXX)
    "$SANDBOX_SCRIPT" stop agentd >/dev/null || fail "cannot stop accel-agentd"
    faults_on_exit faults_restore_fs
    while (($#)); do
        faults_small_fs "$1" "$2"
        shift 2
    done
    "$SANDBOX_SCRIPT" up >/dev/null || fail "accel-agentd did not start on the small file systems"
    FAULT_AGENT_STARTS=$((FAULT_AGENT_STARTS + 1))
    accelctl status >/dev/null || fail "accel-agentd does not answer"
}


# faults_in_node CMD...: runs CMD in the node's mount namespace, the one its agent and slurmd
# share (slurm-sandbox exec): a small file system must be mounted there for the agent to see it.
faults_in_node() { "$SANDBOX_SCRIPT" exec "$FAULT_NODE" "$@"; }

# faults_small_fs DIR SIZE: puts DIR on a tmpfs of SIZE holding a copy of DIR's contents.
faults_small_fs() {
    local dir=$1 copy
    copy=$FAULT_FS_SAVE/$(tr / _ <<<"$dir")
    mkdir -p "$copy"
    cp -a "$dir/." "$copy/" || fail "cannot copy $dir"
    faults_in_node mount -t tmpfs -o "size=$2,mode=$(stat -c %a "$dir")" faults-disk-full "$dir" ||
        fail "cannot mount a tmpfs on $dir"
    FAULT_FS_MOUNTED+=("$dir")
    faults_in_node cp -a "$copy/." "$dir/" || fail "$dir's contents do not fit on a $2 tmpfs"
    log "$dir is on a $2 tmpfs"
}

# Copies what the agent wrote back to the real directories (the spool may hold events not yet
# sent, and the epoch must never go back), unmounts, and starts the agent as before.
faults_restore_fs() {
    local dir copy kept=no
    "$SANDBOX_SCRIPT" stop agentd >/dev/null || true
    for dir in "${FAULT_FS_MOUNTED[@]}"; do
        faults_in_node mountpoint -q "$dir" || continue
        copy=$FAULT_FS_SAVE/after$(tr / _ <<<"$dir")
        if ! { mkdir -p "$copy" && faults_in_node rm -f "$dir/filler" &&
            faults_in_node cp -a "$dir/." "$copy/" && faults_in_node umount "$dir" &&
            find "$dir" -mindepth 1 -delete && cp -a "$copy/." "$dir/"; }; then
            printf '%s: could not restore %s (a copy is in %s)\n' "$TEST_NAME" "$dir" "$copy" >&2
            kept=yes
        fi
    done
    "$SANDBOX_SCRIPT" up >/dev/null || printf '%s: slurm-sandbox up failed\n' "$TEST_NAME" >&2
    [[ $kept == yes ]] || rm -rf "$FAULT_FS_SAVE"
}

# faults_fill DIR: writes a filler file until the tmpfs under DIR is full.
faults_fill() {
    faults_in_node dd if=/dev/zero of="$1/filler" bs=4k status=none 2>/dev/null || true
    expect_eq "free space on $1 after filling it" 0 \
        "$(faults_in_node df --output=avail -B1 "$1" | tail -n 1 | tr -d ' ')"
}
faults_unfill() { faults_in_node rm -f "$1/filler"; }

# --- the checks ------------------------------------------------------------------------------
faults_netns_snapshot() {
    local ns=$ACCEL_SANDBOX_NETNS
    ip -n "$ns" -j addr show | jq -c '[.[] | {ifname, mtu, operstate, addr: [.addr_info[] | "\(.local)/\(.prefixlen)"]}]'
    ip -n "$ns" route show table all
}

faults_check_resources() {
    local j leftovers=()
    for j in "${FAULT_JOBS[@]}"; do
        # As the agent sees them, in the node's mount namespace.
        ! faults_in_node test -e "$FAULT_RUN_DIR/jobs/$j" || leftovers+=("job directory $FAULT_RUN_DIR/jobs/$j")
        ! faults_in_node test -e "$FAULT_RUN_DIR/state/$j.json" || leftovers+=("job record $FAULT_RUN_DIR/state/$j.json")
        [[ -z $FAULT_IPUOF_DIR ]] || ! faults_in_node test -e "$FAULT_IPUOF_DIR/$j" ||
            leftovers+=("IPUoF directory $FAULT_IPUOF_DIR/$j")
        grep -q "^p$j " <<<"$(faults_partitions)" && leftovers+=("V-IPU partition p$j")
        [[ -z $(accelctl jobs --json | jq --argjson j "$j" '.[] | select(.job_id == $j)') ]] ||
            leftovers+=("job $j in accelctl jobs")
    done
    [[ $(faults_partitions) == "$FAULT_PARTITIONS_BEFORE" ]] ||
        leftovers+=("V-IPU partitions now '$(faults_partitions | tr '\n' ,)', before '${FAULT_PARTITIONS_BEFORE//$'\n'/,}'")
    local ns_now
    ns_now=$(faults_netns_snapshot)
    [[ $ns_now == "$FAULT_NETNS_BEFORE" ]] ||
        leftovers+=("fabric namespace changed: $(diff <(echo "$FAULT_NETNS_BEFORE") <(echo "$ns_now") | head -8 | tr '\n' ' ')")
    ((${#leftovers[@]} == 0)) || fail "left behind: $(printf '%s; ' "${leftovers[@]}")"
    log "ok: no job directory, record, IPUoF file, partition or fabric address left (jobs ${FAULT_JOBS[*]})"
}

# Processes that must be gone: those of the test user and the slurmstepd of the jobs (of this
# sandbox: other sandboxes on the machine run jobs of the same user, with the same job ids),
# the fake vendor clients of this build (also one orphaned by a killed agent), and any child
# of the agent.
faults_leftover_processes() {
    local pid exe agent j
    for pid in $(pgrep -u "$TEST_USER" || true); do
        faults_of_sandbox "$pid" && echo "$pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"
    done
    for j in "${FAULT_JOBS[@]}"; do
        for pid in $(pgrep -f "^slurmstepd: \\[${j}[.\\]]" || true); do
            faults_of_sandbox "$pid" && echo "$pid slurmstepd of job $j"
        done
    done
    for pid in $(pgrep -d ' ' . || true); do
        exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || continue
        [[ $exe == "$FAULT_MOCK_BIN"/* ]] && echo "$pid $exe (fake vendor client)"
    done
    agent=$(cat "$FAULT_AGENT_PIDFILE" 2>/dev/null) || return 0
    pgrep -a -P "$agent" || true
}

# A process of this sandbox: its environment names the sandbox's slurm.conf (slurmd passes its
# own to slurmstepd; a job inherits the submitter's, which submit sets). A process that ends
# meanwhile is none (2>/dev/null comes first, so it also silences the failed redirection).
faults_of_sandbox() {
    # Not `tr | grep -q`, which under pipefail fails when grep stops before tr has written all.
    grep -qxF "SLURM_CONF=$SLURM_CONF" < <(tr '\0' '\n' 2>/dev/null <"/proc/$1/environ")
}

faults_check_processes() {
    local left deadline=$((SECONDS + 20))
    while left=$(faults_leftover_processes) && [[ -n $left ]]; do
        ((SECONDS <= deadline)) || fail "processes left 20 s after the jobs ended: ${left//$'\n'/; }"
        sleep 0.2
    done
    log "ok: no process of $TEST_USER, of the jobs' steps, of a vendor client or under the agent"
}

faults_sql() { sqlite3 -batch -noheader -separator ' ' "file:$FAULT_AGG_DB?mode=ro" "$1"; }

# Waits until the agent's spool is empty, then compares with the aggregator's store.
faults_check_events() {
    local deadline=$((SECONDS + 30)) events epoch bad j kinds count starts
    until events=$(accelctl status --json | jq -r .events) && [[ $events == *"backlog 0 "* ]]; do
        ((SECONDS <= deadline)) || fail "the agent's spool did not drain within 30 s: $events"
        sleep 0.2
    done
    log "agent events: $events"
    # Events refused by a full spool get no sequence number: only the agent's count shows them.
    # Heartbeats are dropped first when the spool is full, by design; no other event may be.
    [[ $events != *dropped* || $events =~ dropped\ [0-9]+\ telemetry/0\ lifecycle ]] ||
        fail "the agent dropped job events: $events"
    epoch=$(faults_agent_epoch)
    # Every epoch since the scenario began: sequence numbers 1..max, each stored once.
    bad=$(faults_sql "SELECT epoch, count(*), count(DISTINCT seq), min(seq), max(seq) FROM events
        WHERE node = '$FAULT_NODE' AND epoch >= $FAULT_EPOCH0 GROUP BY epoch
        HAVING count(*) != count(DISTINCT seq) OR min(seq) != 1 OR max(seq) != count(*)") ||
        fail "cannot read $FAULT_AGG_DB"
    [[ -z $bad ]] || fail "epochs with lost or doubled events (epoch count distinct min max): ${bad//$'\n'/; }"
    starts=$(faults_sql "SELECT count(*) FROM events WHERE node = '$FAULT_NODE' AND epoch > $FAULT_EPOCH0
        AND kind = 'agent_started'")
    expect_eq "agent starts since epoch $FAULT_EPOCH0 (agent_started events, new epochs)" \
        "$FAULT_AGENT_STARTS $FAULT_AGENT_STARTS" "$starts $((epoch - FAULT_EPOCH0))"
    for j in "${FAULT_JOBS[@]}"; do
        kinds=$(accelctl events --database "$FAULT_AGG_DB" --job "$j" --json | jq -rs '[.[] |
            select(.kind | test("^(prolog|epilog)_")) |
            if .kind == "epilog_finished" and .event.cleanup_ok == false then "epilog_finished(failed)"
            else .kind end] | join(" ")') || fail "accelctl events failed for job $j"
        expect_eq "job $j: lifecycle events (the last epilog clean)" \
            "prolog_started prolog_finished ${FAULT_EPILOGS[$j]:-}epilog_finished" "$kinds"
    done
    log "ok: epochs $FAULT_EPOCH0..$epoch complete, each sequence number once; lifecycle of jobs ${FAULT_JOBS[*]} once each"
}

faults_check_all() {
    local j
    for j in "${FAULT_JOBS[@]}"; do faults_wait_left_queue "$j" 60; done
    faults_check_resources
    faults_check_processes
    faults_check_events
}
