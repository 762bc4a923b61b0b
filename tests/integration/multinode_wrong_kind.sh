#!/usr/bin/env bash
# A job sent to a node that lacks its kind of accelerator, in the three-node sandbox whose
# third node has no V-IPU controller (`up --no-ipu sbn3`, a GPU node): a fault of the
# cluster's configuration, neither the user's nor the node's hardware's.
#  1. `sbatch -w sbn3 --ipus=2` as an ordinary user: the job fails, never running its script;
#     its output has an `accel:` line naming the missing V-IPU controller; the agent drains
#     sbn3, and only sbn3, with a reason that starts `accel:` (not Slurm's "Prolog error");
#     `accelctl status` on sbn3 shows the configuration fault; the job's summary in
#     AdminComment says `failed` and names sbn3 under `errors`.
#  2. sbn3 resumed, a job over sbn1 and sbn3 with --ipus=2: sbn1, the job's first node, makes
#     the partition, sbn3 fails the job the same way and is drained again, and the partition is
#     gone after the job (made once, removed once).
# The node is resumed at the end, whatever happened.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user

read -ra nodes <<<"${ACCEL_SANDBOX_NODES:-}"
((${#nodes[@]} == 3)) || fail "expected a sandbox of three nodes, it has '${ACCEL_SANDBOX_NODES:-}'"
read -ra no_ipu <<<"${ACCEL_SANDBOX_NO_IPU_NODES:-}"
((${#no_ipu[@]} == 1)) || fail "expected one node without V-IPU (up --no-ipu NODE), the sandbox has" \
    "'${ACCEL_SANDBOX_NO_IPU_NODES:-}'"
gpu=${no_ipu[0]}
ipu=''
for n in "${nodes[@]}"; do
    if [[ $n != "$gpu" ]]; then
        ipu=$n
        break
    fi
done
command -v jq >/dev/null || fail "jq is not installed (Debian package jq)"

tag=mn-kind-$$-$RANDOM
dir=$TEST_HOME/$tag
restore() {
    scontrol update nodename="$gpu" state=resume 2>/dev/null || true
    rm -rf "${dir:?}"
}
trap restore EXIT
mkdir -p "$dir"
chown "$TEST_USER" "$dir"

node_state() { sinfo -h -n "$1" -o '%T'; }
node_reason() { sinfo -h -n "$1" -o '%E'; }
drained() { [[ $(node_state "$1") == drain* ]]; }
in_service() { [[ $(node_state "$1") =~ ^(idle|mixed|allocated|planned)$ ]]; }
only_drained() {
    local n state
    for n in "${nodes[@]}"; do
        [[ $n != "$gpu" ]] || continue
        state=$(node_state "$n")
        [[ $state != drain* && $state != down* ]] || fail "$n is $state ($(node_reason "$n")); only $gpu may be"
    done
}
no_record() { [[ ! -e $ACCEL_SANDBOX_DIR/run/$1/accel/state/$2.json ]]; }
partition_exists() { vipu list partitions --json | tr -d ' \n' | grep -q "\"id\":\"p$1\""; }

# The layout this test relies on: the agents say which node has a controller.
"$SANDBOX_SCRIPT" exec "$gpu" accelctl status | grep -q '^vipu ' &&
    fail "the agent of $gpu reports a V-IPU controller; expected none (up --no-ipu $gpu)"
"$SANDBOX_SCRIPT" exec "$ipu" accelctl status | grep -q '^vipu ' ||
    fail "the agent of $ipu reports no V-IPU controller"
in_service "$gpu" || fail "$gpu is $(node_state "$gpu") ($(node_reason "$gpu")) before the test"

# check_drained JOB: the node without V-IPU is drained by the agent, for JOB, and no other.
check_drained() {
    local job=$1 reason
    wait_for 30 "$gpu drained after job $job" drained "$gpu"
    reason=$(node_reason "$gpu")
    log "$gpu: $(node_state "$gpu"): $reason"
    [[ $reason == "accel: job $job asked for IPUs but this node has no V-IPU controller (no vipu.conf beside "* ]] ||
        fail "$gpu drained with reason '$reason'; expected the agent's, naming job $job's missing V-IPU controller"
    [[ $reason == *"); check the Slurm partition's nodes" ]] || fail "the reason does not say what to check: '$reason'"
    only_drained
}

# --- 1. an IPU job on the GPU node -------------------------------------------------------------
submit -J "$tag-one" -w "$gpu" -N 1 --ipus=2 -o "$dir/one.out" <<SCRIPT
#!/bin/bash
touch "$dir/ran.one"
SCRIPT
job=$JOB_ID
wait_job_final "$job" 60
[[ ${JOB_FINAL%%|*} == FAILED ]] || fail "job $job ended '$JOB_FINAL'; expected FAILED"
[[ ! -e $dir/ran.one ]] || fail "job $job ran its script on a node without IPUs"
[[ -r $dir/one.out ]] || fail "job $job wrote no output file"
# slurmstepd prefixes its own name: "slurmstepd-NODE: error: accel: job ...".
line=$(grep -m1 -o 'error: accel: .*' "$dir/one.out") ||
    fail "no accel: line in job $job's output: $(cat "$dir/one.out")"
log "job $job's output: $line"
[[ $line == *"job $job: this node ($gpu) has no V-IPU controller (no vipu.conf beside "*") and no IPUs of its own, yet the job asked for 2 IPUs"* ]] ||
    fail "job $job's accel: line does not name the missing V-IPU controller: '$line'"
check_drained "$job"
status=$("$SANDBOX_SCRIPT" exec "$gpu" accelctl status)
grep -q "configuration fault: job $job asked for IPUs but this node has no V-IPU controller" <<<"$status" ||
    fail "accelctl status on $gpu does not show the configuration fault: $status"
grep -q '^health *NEEDS ATTENTION' <<<"$status" || fail "accelctl status on $gpu says it is healthy: $status"
wait_for 30 "$gpu: job $job's record gone" no_record "$gpu" "$job"
wait_comment "$job" 60
json=$(summary_of "$COMMENT")
log "summary: $json"
expect_eq "summary: result, nodes, nodes with errors" "failed $gpu $gpu" \
    "$(jq -r '"\(.result) \(.nodes | join(",")) \(.errors // {} | keys | join(","))"' <<<"$json")"
jq -e --arg n "$gpu" '.errors[$n] | startswith("this node (" + $n + ") has no V-IPU controller")' \
    <<<"$json" >/dev/null || fail "the summary's error for $gpu does not name the missing controller: $json"

# --- 2. a two-node IPU job whose second node is the GPU node ----------------------------------
scontrol update nodename="$gpu" state=resume || fail "could not resume $gpu"
wait_for 30 "$gpu back in service" in_service "$gpu"
submit -J "$tag-two" -w "$ipu,$gpu" -N 2 --ntasks-per-node=1 --ipus=2 -o "$dir/two.out" <<SCRIPT
#!/bin/bash
srun touch "$dir/ran.two.\$SLURMD_NODENAME"
SCRIPT
job=$JOB_ID
wait_job_final "$job" 60
[[ ${JOB_FINAL%%|*} == FAILED ]] || fail "job $job ended '$JOB_FINAL'; expected FAILED"
[[ ! -e $dir/ran.two.$gpu ]] || fail "job $job ran a task on $gpu"
grep -q "^slurmstepd-$gpu: error: accel: job $job: this node ($gpu) has no V-IPU controller" "$dir/two.out" ||
    fail "no accel: line about $gpu in job $job's output: $(cat "$dir/two.out")"
check_drained "$job"
for n in "$ipu" "$gpu"; do wait_for 30 "$n: job $job's record gone" no_record "$n" "$job"; done
wait_for 30 "partition p$job removed" eval "! partition_exists $job"
expect_eq "partition p$job: creations, removals after it" "1 1" "$(partition_calls "$job")"
[[ ! -e $ACCEL_SANDBOX_DIR/run/$ipu/ipuof/$job ]] || fail "$ipu: IPUoF directory of job $job left behind"
wait_comment "$job" 60
json=$(summary_of "$COMMENT")
log "summary: $json"
expect_eq "summary: result, partition, nodes, nodes with errors" "failed p$job $ipu,$gpu $gpu" \
    "$(jq -r '"\(.result) \(.partition) \(.nodes | join(",")) \(.errors // {} | keys | join(","))"' <<<"$json")"
log "PASS"
