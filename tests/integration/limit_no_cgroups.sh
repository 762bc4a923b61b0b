#!/usr/bin/env bash
# The appliance limit on a node whose jobs are not in cgroups of their own: a one-node sandbox
# of its own, `up --proctrack linuxproc` (no task plugin), as at a site without cgroups. The
# agent says so once in its log and on `accelctl status`'s limits line, and asks slurmctld to
# signal the job (as `scancel --signal` does), which reaches what Slurm's own tracking finds:
# the whole process tree of each task while the task lives. The job
# (`--ipus=1`, 6 s, USR1 3 s before) runs one srun step whose task is a real tree
# (limit_lib.sh); the warning must reach every process of that tree that stayed in it (a setsid
# double-forked child leaves it, and is lost here, as the operator guide says), SIGTERM ends
# the job, its summary says time_limit, and the node is not drained. What such a node leaves
# (the setsid child) the test ends itself.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"
# shellcheck source=tests/integration/limit_lib.sh
source "$(dirname -- "$0")/limit_lib.sh"

require_root
require_sandbox
ensure_test_user
grep -qx 'ProctrackType=proctrack/linuxproc' "$SLURM_CONF" ||
    fail "this test needs a sandbox made with 'up --proctrack linuxproc' ($SLURM_CONF says $(grep ProctrackType "$SLURM_CONF"))"

node=$(sinfo -h -o %n | head -1)
grace=$(kill_grace)
tag=limit-nocg-$$-$RANDOM
dir=$TEST_HOME/$tag
job=''
cleanup() {
    local p
    [[ -n $job ]] && for p in $(job_processes "$job"); do kill -9 "$p" 2>/dev/null || true; done
    rm -rf "${dir:?}"
}
trap cleanup EXIT
mkdir -p "$dir"
limit_tree_script "$dir"
chown -R "$TEST_USER" "$dir"

submit -J "$tag" -o "$dir/job.out" --time=5 --ipus=1 --appliance-time=0:06 \
    --appliance-signal=USR1@3 <<SCRIPT
#!/bin/bash
trap 'echo "term \$(date +%s.%N)" >>$dir/trace; exit 143' TERM
srun --overlap -n1 $dir/tree.sh $dir s0 &
while :; do wait; done
SCRIPT
job=$JOB_ID
wait_job_final "$job" 90
term=$(sed -n 's/^term //p' "$dir/trace" 2>/dev/null | head -1)
[[ -n $term ]] || fail "SIGTERM never reached the batch shell"
# Ending what is left of the job is Slurm's own here (KillWait after the batch shell ended).
expect_left_queue "$job" 60
wait_comment "$job" 60
summary=$(summary_of "$COMMENT")
log "summary: $summary"
expect_eq "summary result" time_limit "$(jq -r .result <<<"$summary")"
used=$(jq -r .appliance_s <<<"$summary")
((used <= 6 + grace)) || fail "appliance_s is $used, more than the limit (6 s) and the grace"

# The agent reaches the task itself; slurmctld's signal reaches the rest of its tree.
for role in s0 s0-child s0-noterm s0-python s0-pyworker; do
    [[ -n $(noted_roles "$role" warned "$dir"/notes.*) ]] ||
        fail "the warning never reached $role (started: $(noted_roles s0 started "$dir"/notes.* | xargs))"
done
log "ok: the warning reached the task and its tree: $(noted_roles s0 warned "$dir"/notes.* | xargs)"

line=$("${ACCEL_BUILD_DIR:?}/bin/accelctl" --config "$ACCEL_SANDBOX_NODE_CONF_1" status | grep '^limits ' || true)
[[ $line == "limits      reach what slurmctld's own tracking finds of the job's steps (no cgroup process tracking"* ]] ||
    fail "accelctl status does not say that limits reach what slurmctld's tracking finds: '$line'"
log "ok: $line"
# Once since the agent's last start (its log spans every start of this sandbox).
said=$(awk '/start: ready/ {n = 0} /jobs are not in cgroups of their own/ {n++} END {print n + 0}' \
    "$ACCEL_SANDBOX_DIR/log/agentd.out")
expect_eq "times the agent said it has no cgroup tracking since its start" 1 "$said"
expect_not_drained "$node"
log "PASS"
