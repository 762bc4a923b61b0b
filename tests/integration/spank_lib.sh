# shellcheck shell=bash disable=SC2034 # globals here are for the spank_*.sh tests
# Shared functions of the tests of spank_accel.so; sourced after lib.sh, never executed.
#
# What the tests need of the sandbox, each checked loudly (never skipped):
#   - PlugStackConfig loads spank_accel.so of this build with `required`;
#   - Prolog and Epilog are set (they run `accelctl prolog` / `accelctl epilog`);
#   - accel-agentd runs and answers `accelctl status`; it is one of the sandbox's daemons
#     ("agentd" in `slurm-sandbox status`), so `slurm-sandbox up` starts it again after a test
#     stopped it.
#
# Submit-side limits: the tests submit with SLURM_CONF pointing at a private copy of the
# sandbox's slurm.conf whose PlugStackConfig adds accel_conf= and vipu_conf= to the plugin's
# line, so sbatch, salloc and srun check the options against limits the tests chose
# (MaxIpusPerJob=64, ApplianceTimeMax=2:00:00) without touching the sandbox's own files.
# The node side (Prolog, slurmstepd, accel-agentd) keeps the sandbox's configuration.

ACCELCTL=${ACCEL_BUILD_DIR:?ACCEL_BUILD_DIR must name the build directory}/bin/accelctl
TEST_MAX_IPUS=64
TEST_TIME_MAX=2:00:00
SUBMIT_DIR=
EXIT_ACTIONS=()

# on_exit CMD...: runs CMD when the test ends, however it ends (latest first).
on_exit() {
    EXIT_ACTIONS=("$(printf '%q ' "$@")" "${EXIT_ACTIONS[@]}")
    trap run_exit_actions EXIT
}
run_exit_actions() {
    local action
    for action in "${EXIT_ACTIONS[@]}"; do eval "$action" || true; done
}

# Prints the value of KEY in `scontrol show config`. awk reads to the end: leaving early
# would kill scontrol with SIGPIPE, which pipefail turns into a failure.
slurm_config_value() {
    local out
    out=$(scontrol show config) || fail "scontrol show config failed"
    # Slurm 24.11 shows keys that may hold several values with an index: "Prolog[0] = ...".
    awk -v k="$1" '($1 == k || $1 == k "[0]") && !done { sub(/^[^=]*= */, ""); print; done = 1 }' <<<"$out"
}

# Sets PLUGSTACK (the sandbox's plugstack.conf) and PLUGIN_LINE (its line for spank_accel.so).
require_accel_plugin() {
    PLUGSTACK=$(slurm_config_value PlugStackConfig)
    [[ -n $PLUGSTACK && -r $PLUGSTACK ]] ||
        fail "slurm.conf has no readable PlugStackConfig (got '${PLUGSTACK:-nothing}');" \
            "the sandbox must load spank_accel.so"
    PLUGIN_LINE=$(grep -m 1 -E '^[[:space:]]*required[[:space:]]+[^[:space:]]*spank_accel\.so' \
        "$PLUGSTACK" || true)
    [[ -n $PLUGIN_LINE ]] ||
        fail "$PLUGSTACK does not load spank_accel.so as 'required' (an optional plugin cannot" \
            "refuse a job)"
    local path
    path=$(awk '{ print $2 }' <<<"$PLUGIN_LINE")
    [[ $path -ef $ACCEL_BUILD_DIR/lib/spank_accel.so ]] ||
        fail "$PLUGSTACK loads $path, not this build's $ACCEL_BUILD_DIR/lib/spank_accel.so"
    [[ -n $(slurm_config_value Prolog) && $(slurm_config_value Prolog) != '(null)' ]] ||
        fail "slurm.conf sets no Prolog; the options must reach accelctl prolog"
    log "plugin: $PLUGIN_LINE"
}

# Sets AGENT_CONF (the daemon's accel.conf) and AGENT_RUN_DIR (its RunDir).
require_agent() {
    local status
    status=$("$ACCELCTL" status --json 2>&1) ||
        fail "accel-agentd does not answer 'accelctl status': $status"
    AGENT_CONF=$(sed -n 's/^ *"config": "\(.*\)",\{0,1\}$/\1/p' <<<"$status")
    [[ -r $AGENT_CONF ]] || fail "accelctl status names no readable config ('$AGENT_CONF')"
    AGENT_RUN_DIR=$(sed -n 's/^[[:space:]]*RunDir[[:space:]]*=[[:space:]]*\([^[:space:]#]*\).*/\1/Ip' \
        "$AGENT_CONF" | tail -n 1)
    AGENT_RUN_DIR=${AGENT_RUN_DIR:-/run/accel-agent}
    [[ -d $AGENT_RUN_DIR/state ]] || fail "the daemon's job table $AGENT_RUN_DIR/state does not exist"
    log "agent: config $AGENT_CONF, run dir $AGENT_RUN_DIR"
}

# Pid of the sandbox's daemon that runs accel-agentd (its supervisor, which passes SIGTERM on
# and then exits), from `slurm-sandbox status`.
agent_pid() {
    local status
    status=$("$SANDBOX_SCRIPT" status 2>/dev/null) || true
    awk '($1 == "agentd" || $1 == "accel-agentd") && $2 == "up" { print $4 }' <<<"$status"
}

# True while process $1 exists and is not a zombie (an exited daemon may wait a while for
# its new parent to reap it). Not $(<file): a file that cannot be opened there is an
# expansion error, which ends a non-interactive shell; a process reaped at once (a PID
# namespace's init reaps without delay) removes its /proc entry between two looks.
process_alive() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    [[ ${stat:0:1} != Z ]]
}

# Stops the sandbox's accel-agentd; it is started again when the test ends, pass or fail, so
# the tests after this one find it running.
stop_agent() {
    local pid
    pid=$(agent_pid)
    [[ $pid =~ ^[0-9]+$ ]] ||
        fail "slurm-sandbox status shows no running agentd; cannot stop accel-agentd for this test"
    on_exit start_agent
    kill -TERM "$pid" || fail "could not signal accel-agentd (pid $pid)"
    local deadline=$((SECONDS + 20))
    while process_alive "$pid"; do
        ((SECONDS <= deadline)) || fail "accel-agentd (pid $pid) did not stop within 20 s"
        sleep 0.1
    done
    "$ACCELCTL" --config "$AGENT_CONF" status >/dev/null 2>&1 &&
        fail "accelctl status still answers after stopping the daemon"
    log "accel-agentd stopped (pid $pid)"
}

start_agent() {
    "$ACCELCTL" --config "$AGENT_CONF" status >/dev/null 2>&1 && return 0
    "$SANDBOX_SCRIPT" up >/dev/null || fail "slurm-sandbox up did not start accel-agentd again"
    "$ACCELCTL" --config "$AGENT_CONF" status >/dev/null 2>&1 ||
        fail "accel-agentd does not answer after slurm-sandbox up"
    log "accel-agentd running again (pid $(agent_pid))"
}

# Writes the private submit configuration (see the top of this file) and points SLURM_CONF at
# it. add_submit_setting adds lines to its accel.conf.
use_submit_limits() {
    local sandbox_conf=$SLURM_CONF line args
    SUBMIT_DIR=$(mktemp -d /tmp/accel-spank-test.XXXXXX)
    chmod 755 "$SUBMIT_DIR"
    on_exit rm -rf -- "$SUBMIT_DIR"
    # The node's accel.conf keeps ControlSocket and the rest; the limits are the tests'.
    grep -Eiv '^[[:space:]]*Appliance(TimeMax|TimeDefault)[[:space:]]*=' "$AGENT_CONF" \
        >"$SUBMIT_DIR/accel.conf" || true
    echo "ApplianceTimeMax=$TEST_TIME_MAX" >>"$SUBMIT_DIR/accel.conf"
    cat >"$SUBMIT_DIR/vipu.conf" <<EOF
ApiHost=127.0.0.1
IpuofDir=$SUBMIT_DIR/ipuof
MaxIpusPerJob=$TEST_MAX_IPUS
EOF
    # The plugin's line, with our files instead of any accel_conf=/vipu_conf= it had.
    args=$(awk '{ for (i = 3; i <= NF; i++) if ($i !~ /^(accel_conf|vipu_conf)=/) printf " %s", $i }' \
        <<<"$PLUGIN_LINE")
    line="required $(awk '{ print $2 }' <<<"$PLUGIN_LINE")$args"
    line+=" accel_conf=$SUBMIT_DIR/accel.conf vipu_conf=$SUBMIT_DIR/vipu.conf"
    grep -v 'spank_accel\.so' "$PLUGSTACK" >"$SUBMIT_DIR/plugstack.conf" || true
    echo "$line" >>"$SUBMIT_DIR/plugstack.conf"
    sed "s|^PlugStackConfig=.*|PlugStackConfig=$SUBMIT_DIR/plugstack.conf|I" "$sandbox_conf" \
        >"$SUBMIT_DIR/slurm.conf"
    grep -q "^PlugStackConfig=$SUBMIT_DIR/plugstack.conf" "$SUBMIT_DIR/slurm.conf" ||
        fail "could not point the private slurm.conf at $SUBMIT_DIR/plugstack.conf"
    chmod 644 "$SUBMIT_DIR"/*
    export SLURM_CONF=$SUBMIT_DIR/slurm.conf
    log "submit-side limits: MaxIpusPerJob=$TEST_MAX_IPUS ApplianceTimeMax=$TEST_TIME_MAX"
}

# Adds a line (e.g. ApplianceTimeDefault=30) to the private accel.conf of use_submit_limits.
add_submit_setting() {
    [[ -n $SUBMIT_DIR ]] || fail "add_submit_setting needs use_submit_limits first"
    echo "$1" >>"$SUBMIT_DIR/accel.conf"
    log "submit-side setting: $1"
}

# A job name no other test uses, so squeue and sacct can be asked about exactly this job.
unique_name() { echo "spank-$1-$$-$RANDOM"; }

# Fails when squeue or sacct know a job named $1.
expect_no_job() {
    local name=$1 queued accounted
    queued=$(squeue -h -n "$name" -o %A) || fail "squeue failed"
    accounted=$(sacct -n -X -a -S now-1hours --name="$name" -o JobID) || fail "sacct failed"
    [[ -z $queued && -z ${accounted//[[:space:]]/} ]] ||
        fail "a job named $name exists (squeue: '$queued', sacct: '${accounted//[[:space:]]/ }')"
}

# The node is in service: not drained, not down, no reason set; idle when no job runs.
expect_node_in_service() {
    local state reason jobs
    state=$(sinfo -h -o %T) || fail "sinfo failed"
    reason=$(sinfo -h -o %E)
    # planned: the backfill scheduler holds the node for a pending job, in service.
    [[ $state =~ ^(idle|mixed|allocated|completing|planned)$ ]] ||
        fail "node state is '$state' (reason: $reason); it must never be drained or down"
    [[ $reason == none ]] || fail "node has a reason set: '$reason' (state $state)"
    jobs=$(squeue -h -o %A | tr '\n' ' ')
    if [[ -z ${jobs// /} ]]; then
        # The last job may have left the queue while the node still completes it (Slurm
        # 24.11 shows this for longer than 22.05): completing must turn idle, and soon.
        local deadline=$((SECONDS + 10))
        while [[ $state == completing ]] && ((SECONDS <= deadline)); do
            sleep 0.2
            state=$(sinfo -h -o %T) || fail "sinfo failed"
        done
        expect_eq "node state with no job queued" idle "$state"
    else
        log "ok: node is $state (jobs queued or completing: $jobs)"
    fi
}

# Polls squeue until a job named $1 runs; prints its id.
wait_running() {
    local name=$1 limit=${2:-60} id='' state deadline=$((SECONDS + ${2:-60}))
    while ((SECONDS <= deadline)); do
        read -r id state < <(squeue -h -n "$name" -o '%A %T') || true
        [[ ${state:-} == RUNNING ]] && { echo "$id"; return 0; }
        sleep 0.2
    done
    fail "job $name is not running after $limit s (last: '${id:-} ${state:-none}')"
}

# Prints the value of KEY in the daemon's record of job $1: what the Prolog handed over, kept
# while the job runs.
record_value() {
    local file=$AGENT_RUN_DIR/state/$1.json
    [[ -r $file ]] || fail "accel-agentd has no record of job $1 ($file)"
    jq -r --arg k "$2" '.[$k]' "$file" || fail "cannot read $file"
}

# Waits until the daemon's record of job $1 says "ready" (the Prolog has finished). The
# record is written before the prolog's work starts, and with PrologFlags=Alloc squeue says
# RUNNING while the prolog still runs, so neither the file nor the job state is enough.
wait_record() {
    local job=$1 deadline=$((SECONDS + 30)) file=$AGENT_RUN_DIR/state/$1.json phase=''
    while :; do
        if [[ -r $file ]]; then
            phase=$(jq -r .phase "$file" 2>/dev/null) || phase=''
            [[ $phase == ready ]] && return 0
            [[ $phase == failed ]] && fail "the prolog of job $job failed: $(jq -r .last_error "$file")"
        fi
        ((SECONDS <= deadline)) || fail "accel-agentd's record of job $job is not ready after 30 s" \
            "(phase '${phase:-no record}')"
        sleep 0.1
    done
}

# Waits until the daemon's record of job $1 lists at least $2 tasks.
wait_tasks() {
    local job=$1 want=$2 deadline=$((SECONDS + 30)) tasks
    while :; do
        tasks=$(record_tasks "$job")
        (($(wc -w <<<"$tasks") >= want)) && return 0
        ((SECONDS <= deadline)) || fail "job $job: the daemon lists tasks '$tasks', expected $want"
        sleep 0.1
    done
}

# Prints "step:pid:ticks" for each task the daemon holds for job $1.
record_tasks() {
    local file=$AGENT_RUN_DIR/state/$1.json
    [[ -r $file ]] || return 0
    jq -r '.tasks[] | map(tostring) | join(":")' "$file" | tr '\n' ' '
}
