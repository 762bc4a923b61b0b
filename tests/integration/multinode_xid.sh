#!/usr/bin/env bash
# GPU Xids through real Slurm on the three-node sandbox. The nodes share one kernel, so each
# GPU node's agent reads a kernel log of its own (KernelLog=<node etc>/kmsg,
# scripts/lib/sandbox-config.sh), to which this test appends the lines NVIDIA's driver writes:
#  1. a GPU job runs; an application Xid (13) on its GPU's bus id is recorded in the job's
#     events (gpu_xid, class application, the GPU Slurm gave it) and the node stays in service,
#     with no GPU fault in `accelctl status`;
#  2. a hardware Xid (79) on the same GPU drains the node, with a reason that names the Xid, the
#     GPU and the job; `accelctl status` shows the fault (text and --json), also after the
#     agent was killed and started again;
#  3. the job ends normally; its summary in AdminComment has both Xids ("xid");
#  4. `accelctl clear-fault` is refused to a user, and clears the fault for root; the node is
#     resumed, as the test found it.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user
command -v jq >/dev/null || fail "jq is not installed (Debian package jq)"

sandbox_nodes 3
node=${nodes[2]}
conf=${ACCEL_SANDBOX_NODE_CONF_3:-}
[[ -n $conf ]] || fail "no ACCEL_SANDBOX_NODE_CONF_3 in the sandbox's environment"
etc=$(dirname -- "$conf")
kmsg=$(sed -n 's/^KernelLog=//p' "$conf")
[[ -n $kmsg && -f $kmsg ]] || fail "$node's accel.conf ($conf) names no kernel log file: '$kmsg'"

tag=mn-xid-$$-$RANDOM
dir=$TEST_HOME/$tag
job=''
node_state() { sinfo -h -n "$1" -o '%T'; }
node_reason() { sinfo -h -n "$1" -o '%E'; }
drained() { [[ $(node_state "$1") == drain* ]]; }
in_service() { [[ $(node_state "$1") =~ ^(idle|mixed|allocated|planned|completing)$ ]]; }
restore() {
    [[ -z $job ]] || scancel "$job" 2>/dev/null || true
    "$SANDBOX_SCRIPT" exec "$node" accelctl clear-fault >/dev/null 2>&1 || true
    scontrol update nodename="$node" state=resume 2>/dev/null || true
    rm -rf "${dir:?}"
}
trap restore EXIT
mkdir -p "$dir"
chown "$TEST_USER" "$dir"

status_json() { "$SANDBOX_SCRIPT" exec "$node" accelctl --json status; }
faults() { status_json | jq -c '.gpu_faults'; }
in_service "$node" || fail "$node is $(node_state "$node") ($(node_reason "$node")) before the test"
expect_eq "GPU faults of $node before the test" "[]" "$(faults)"

# --- 1. an application Xid on the job's GPU ---------------------------------------------------------
submit -J "$tag" -w "$node" -N 1 --gres=gpu:1 -o "$dir/job.out" <<SCRIPT
#!/bin/bash
echo "\$SLURM_JOB_GPUS" >"$dir/job.tmp"
mv "$dir/job.tmp" "$dir/job.started"
for _ in \$(seq 900); do [[ -e "$dir/release" ]] && exit 0; sleep 0.1; done
exit 1
SCRIPT
job=$JOB_ID
wait_for 60 "GPU job $job started" test -e "$dir/job.started"
gpu=$(<"$dir/job.started")
bus=$(sed -n 's/^bus_id //p' "$etc/nvml/gpu$gpu")
[[ -n $bus ]] || fail "no bus id for GPU $gpu in $etc/nvml/gpu$gpu"
device=${bus%.*} # the driver names the device without its PCI function
log "job $job holds GPU $gpu ($bus)"

# As /dev/kmsg would give it: "PRIO,SEQ,USEC,FLAGS;MESSAGE".
echo "3,90001,5200000,-;NVRM: Xid (PCI:$device): 13, pid=4242, name=python3, Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): Out Of Range Address" >>"$kmsg"
xid_events() {
    "$SANDBOX_SCRIPT" exec "$node" runuser -u "$TEST_USER" -- env SLURM_CONF="$SLURM_CONF" \
        accelctl events --job "$job" --json | jq -c 'select(.kind == "gpu_xid") | .event'
}
has_xid() { [[ $(xid_events | jq -s --argjson c "$1" 'map(select(.code == $c)) | length') -ge 1 ]]; }
wait_for 30 "the Xid 13 of job $job in its events" has_xid 13
event=$(xid_events | jq -c 'select(.code == 13)' | head -n1)
log "job $job's event: $event"
expect_eq "Xid 13's class" application "$(jq -r '.class' <<<"$event")"
expect_eq "Xid 13's GPU (the one Slurm gave the job)" "$gpu" "$(jq -r '.gpu' <<<"$event")"
expect_eq "Xid 13's pid" 4242 "$(jq -r '.pid' <<<"$event")"
expect_eq "Xid 13 drained the node" false "$(jq -r '.drained' <<<"$event")"
sleep 2 # a drain, were one asked for, would be on its way by now
in_service "$node" || fail "an application Xid took $node out of service: $(node_state "$node") ($(node_reason "$node"))"
expect_eq "GPU faults of $node after an application Xid" "[]" "$(faults)"
log "ok: the application Xid is the job's, and $node stays in service"

# --- 2. a hardware Xid drains the node -----------------------------------------------------------
echo "4,90002,5300000,-;NVRM: Xid (PCI:$device): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus." >>"$kmsg"
wait_for 30 "$node drained after a hardware Xid" drained "$node"
reason=$(node_reason "$node")
log "$node drained: $reason"
[[ $reason == "accel: node fault: GPU Xid 79"* && $reason == *"GPU $gpu ($bus)"* &&
    $reason == *"job $job"* ]] ||
    fail "the drain reason does not name Xid 79, GPU $gpu ($bus) and job $job: '$reason'"
f=$(faults)
expect_eq "GPU faults of $node after Xid 79" 1 "$(jq 'length' <<<"$f")"
[[ $(jq -r '.[0].message' <<<"$f") == "$reason"* ]] || fail "the status's fault is not the drain reason: $f"
text=$("$SANDBOX_SCRIPT" exec "$node" accelctl status)
grep -q '^health      NEEDS ATTENTION' <<<"$text" || fail "the status of $node does not need attention: $text"
grep -q "GPU hardware fault .*Xid 79" <<<"$text" || fail "the status of $node does not show Xid 79: $text"
wait_for 30 "the Xid 79 of job $job in its events" has_xid 79

# The fault outlives the agent.
pidfile=$ACCEL_SANDBOX_DIR/run/$node/accel-agentd.pid
old_pid=$(<"$pidfile")
kill -KILL "$old_pid"
new_agent() { [[ -s $pidfile && $(<"$pidfile") != "$old_pid" ]] &&
    "$SANDBOX_SCRIPT" exec "$node" accelctl status >/dev/null 2>&1; }
wait_for 30 "$node's agent started again" new_agent
expect_eq "GPU faults of $node after its agent restarted" 1 "$(faults | jq 'length')"
log "ok: $node drained for Xid 79, and the fault outlives the agent"

# --- 3. the job's summary ------------------------------------------------------------------------------
touch "$dir/release"
wait_job_final "$job" 60
expect_eq "GPU job $job: state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
wait_comment "$job" 60
xids=$(summary_of "$COMMENT" | jq -c '.xid')
log "job $job's summary: xid $xids"
expect_eq "job $job's Xids in its summary" "[[79,\"$node\",$gpu],[13,\"$node\",$gpu]]" \
    "$(jq -c 'sort_by(-.[0])' <<<"$xids")"

# --- 4. clearing ---------------------------------------------------------------------------------------
rc=0
"$SANDBOX_SCRIPT" exec "$node" runuser -u "$TEST_USER" -- env SLURM_CONF="$SLURM_CONF" \
    accelctl clear-fault >/dev/null 2>"$dir/denied.err" || rc=$?
expect_eq "accelctl clear-fault as $TEST_USER: exit code" 4 "$rc"
expect_eq "GPU faults after a user's clear-fault" 1 "$(faults | jq 'length')"
out=$("$SANDBOX_SCRIPT" exec "$node" accelctl clear-fault) || fail "clear-fault as root failed"
[[ $out == "1 GPU fault(s) cleared"* ]] || fail "clear-fault said: $out"
expect_eq "GPU faults after clear-fault" "[]" "$(faults)"
scontrol update nodename="$node" state=resume || fail "could not resume $node"
wait_for 30 "$node back in service" in_service "$node"
job=''
log "PASS"
