#!/usr/bin/env bash
# A process of the job that outlives SIGKILL at the appliance limit is the node's fault: the node
# is drained, with a reason that names the job and the processes left, and `accelctl status`
# shows it. Such a process is one stuck in the kernel (a hung file system, a wedged driver); the
# test makes one by freezing the job's freezer cgroup as root once the job's tree runs, so
# neither SIGTERM nor SIGKILL can take effect until it is thawed. The job (--ipus=1, 4 s of
# appliance time) is an ordinary user's tree (limit_lib.sh) in an srun step and in the batch
# shell. The test then thaws the cgroup: the processes go, the job leaves the queue and nothing
# of it is left; it resumes the node it drained and a next job runs.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"
# shellcheck source=tests/integration/limit_lib.sh
source "$(dirname -- "$0")/limit_lib.sh"

require_root
require_sandbox
ensure_test_user

node=$(sinfo -h -o %n | head -1)
grace=$(kill_grace)
tag=limit-stuck-$$-$RANDOM
dir=$TEST_HOME/$tag
frozen=''
cleanup() {
    [[ -z $frozen ]] || echo THAWED >"$frozen/freezer.state" 2>/dev/null || true
    [[ -z ${JOB_ID:-} ]] || scancel "$JOB_ID" 2>/dev/null || true
    scontrol update nodename="$node" state=resume >/dev/null 2>&1 || true
    rm -rf "${dir:?}"
}
trap cleanup EXIT
mkdir -p "$dir"
limit_tree_script "$dir"
chown -R "$TEST_USER" "$dir"

submit -J "$tag" -o "$dir/job.out" --time=5 --ipus=1 --appliance-time=0:04 <<SCRIPT
#!/bin/bash
srun --overlap -n1 $dir/tree.sh $dir step &
$dir/tree.sh $dir batch &
while :; do wait; done
SCRIPT
job=$JOB_ID

# Once the step's tree runs, its job's freezer cgroup is frozen (it holds the batch step and
# step 0; a node's cgroups are under its own subtree of the host's freezer hierarchy).
deadline=$((SECONDS + 30))
until [[ $(noted_roles step-py started "$dir"/notes.* | wc -l) -ge 2 ]]; do
    ((SECONDS < deadline)) || fail "job $job: its step never started its tree"
    sleep 0.2
done
pids=$(job_processes "$job")
pid=${pids%%$'\n'*}
[[ -n $pid ]] || fail "job $job has no process"
rel=$(sed -n 's/^[0-9]*:freezer:\(.*\/job_'"$job"'\)\/.*/\1/p' "/proc/$pid/cgroup")
[[ -n $rel && -d /sys/fs/cgroup/freezer$rel ]] ||
    fail "no freezer cgroup of job $job for pid $pid: $(cat "/proc/$pid/cgroup")"
frozen=/sys/fs/cgroup/freezer$rel
echo FROZEN >"$frozen/freezer.state"
log "froze $frozen ($(wc -l <"$frozen/cgroup.procs") processes)"

# SIGTERM at 4 s, SIGKILL after the grace, the drain 5 s after that.
deadline=$((SECONDS + 4 + grace + 20))
while :; do
    reason=$(scontrol show node "$node" | sed -n 's/.*Reason=\(.*\)/\1/p')
    [[ $(scontrol show node "$node") == *DRAIN* && -n $reason ]] && break
    ((SECONDS < deadline)) || fail "node $node was not drained for job $job's stuck processes"
    sleep 0.5
done
log "drained: $reason"
[[ $reason == *"accel: job $job: "*"outlived SIGKILL at the appliance limit"* ]] ||
    fail "the drain reason does not name job $job and its processes: $reason"
grep -qE "(^|[:,] )$pid \(" <<<"$reason" || [[ $reason == *" more"* ]] ||
    fail "the drain reason does not name process $pid: $reason"
status=$("${ACCEL_BUILD_DIR:?}/bin/accelctl" --config "$ACCEL_SANDBOX_NODE_CONF_1" status)
grep -q "job $job: .*outlived SIGKILL" <<<"$status" ||
    fail "accelctl status does not show the fault: $status"
log "ok: the node is drained and accelctl status names the fault"

# Thawed, the pending SIGKILL takes them.
echo THAWED >"$frozen/freezer.state"
frozen=''
wait_job_final "$job" 60
expect_left_queue "$job" 30
expect_no_process_left "$job"
scontrol update nodename="$node" state=resume
expect_not_drained "$node"
submit -J "$tag-next" -o /dev/null --ipus=1 --wrap true
wait_job_final "$JOB_ID" 60
expect_eq "the next job" COMPLETED "${JOB_FINAL%%|*}"
log "PASS"
