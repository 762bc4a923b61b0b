#!/usr/bin/env bash
# The appliance limit ends every process of the job, as Slurm's own time limit does, not only
# the tasks the SPANK plugin registered. Three jobs on the one-node sandbox (proctrack/cgroup,
# task/cgroup), each with real process trees (limit_lib.sh: a wrapper and its child, python
# with multiprocessing workers, a child that ignores SIGTERM, a setsid double-forked child):
#   ipu-steps   --ipus=1, 6 s, USR1 3 s before: two srun steps (one whose task exits at once,
#               leaving its children) and a tree in the batch shell; the warning reaches every
#               process of the steps and nothing of the batch step, as `sbatch --signal` does;
#   ipu-batch   --ipus=1, 6 s, B:USR1 3 s before: the work is the batch shell's own tree; the
#               warning reaches the batch shell alone; the shell ignores SIGTERM, so SIGKILL
#               after the grace is what ends the job;
#   appliance   an appliance job (6 s of appliance time, USR1 3 s before) and a tree in a step.
# For each: SIGTERM at the limit, SIGKILL after the grace (ApplianceKillGrace) to what ignored
# it; the job has left the queue within the grace and a second of SIGTERM, no process of it is
# left on the node, its summary says time_limit with appliance_s at most limit plus grace, and
# the node is not drained.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"
# shellcheck source=tests/integration/limit_lib.sh
source "$(dirname -- "$0")/limit_lib.sh"

require_root
require_sandbox
ensure_test_user
command -v bc >/dev/null || fail "bc is not installed (Debian package bc)"

node=$(sinfo -h -o %n | head -1)
grace=$(kill_grace)
tag=limit-tree-$$-$RANDOM
dir=$TEST_HOME/$tag
trap 'rm -rf "${dir:?}"' EXIT
mkdir -p "$dir"
limit_tree_script "$dir"
chown -R "$TEST_USER" "$dir"

declare -A job_of
# The batch shell notes that it started, the warning and SIGTERM; then it ends as a script does
# on SIGTERM, or (ipu-batch) it ignores SIGTERM, so that only SIGKILL after the grace ends it.
# shellcheck disable=SC2016 # expanded in the job, not here
head='#!/bin/bash
now() { date +%s.%N; }
echo "started shell-$SLURM_JOB_ID $$" >>DIR/notes.$(hostname)
trap "echo term \$(now) >>DIR/\$SLURM_JOB_ID.trace; ONTERM" TERM
trap "echo \"warned shell-\$SLURM_JOB_ID \$\$\" >>DIR/notes.\$(hostname)" USR1
'
body_steps='srun --overlap -n1 DIR/tree.sh DIR ipu-steps-s0 &
srun --overlap -n1 DIR/tree.sh DIR ipu-steps-s1 exit &
DIR/tree.sh DIR ipu-steps-batch &
while :; do wait; done'
body_batch='DIR/tree.sh DIR ipu-batch-batch &
while :; do wait; done'
body_appliance='fake-appliance-job --csx 1 --queue-seconds 0 --run-seconds 300 >/dev/null &
srun --overlap -n1 DIR/tree.sh DIR appliance-s0 &
while :; do wait; done'
# script BODY NAME ONTERM
script() {
    sed -e "s|DIR|$dir|g" -e "s|ONTERM|$3|" <<<"$head$1" >"$dir/$2.sh"
    chown "$TEST_USER" "$dir/$2.sh"
}
script "$body_steps" ipu-steps 'exit 143'
script "$body_batch" ipu-batch ':'
script "$body_appliance" appliance 'exit 143'
submit -J "$tag" -o "$dir/ipu-steps.out" --time=5 --ipus=1 --appliance-time=0:06 \
    --appliance-signal=USR1@3 "$dir/ipu-steps.sh"
job_of[ipu-steps]=$JOB_ID
submit -J "$tag" -o "$dir/ipu-batch.out" --time=5 --ipus=1 --appliance-time=0:06 \
    --appliance-signal=B:USR1@3 "$dir/ipu-batch.sh"
job_of[ipu-batch]=$JOB_ID
submit -J "$tag" -o "$dir/appliance.out" --time=5 --job-time-sec=6 --appliance-signal=USR1@3 \
    "$dir/appliance.sh"
job_of[appliance]=$JOB_ID

# roles ROLE-PREFIX WHAT: the roles that noted WHAT ("started", "warned"), sorted, one a line.
roles() { noted_roles "$1" "$2" "$dir"/notes.*; }

# check NAME MIN_END WARNED_PREFIXES... : the job's end (at least MIN_END s, at most the grace
# and a second, after SIGTERM), what is left, the summary, the warnings.
check() {
    local name=$1 min=$2 job=${job_of[$1]} summary used prefix
    shift 2
    wait_job_final "$job" 120
    log "$name (job $job): $JOB_FINAL"
    expect_limit_end "$job" "$dir/$job.trace" "$min" "$grace"
    wait_comment "$job" 60
    summary=$(summary_of "$COMMENT")
    log "$name: summary: $summary"
    expect_eq "$name: summary result" time_limit "$(jq -r .result <<<"$summary")"
    used=$(jq -r .appliance_s <<<"$summary")
    ((used <= 6 + grace)) || fail "$name: appliance_s is $used, more than the limit (6 s) and the grace"
    for prefix in "$@"; do expect_all_warned "$name" "$prefix" "$dir"/notes.*; done
}

check ipu-steps -1 ipu-steps-s0
[[ -z $(roles ipu-steps-batch warned) ]] || fail "ipu-steps: the warning reached the batch step ($(roles ipu-steps-batch warned | xargs)); without B: it goes to the steps only"
[[ -z $(roles "shell-${job_of[ipu-steps]}" warned) ]] || fail "ipu-steps: the warning reached the batch shell"
# Its batch shell ignored SIGTERM: SIGKILL after the grace ended it, not before.
check ipu-batch $((grace - 1)) "shell-${job_of[ipu-batch]}"
[[ -z $(roles ipu-batch-batch warned) ]] || fail "ipu-batch: with B: the warning reached more than the batch shell: $(roles ipu-batch-batch warned | xargs)"
check appliance -1 appliance-s0
expect_not_drained "$node"
# The node says how its limits reach a job's processes.
line=$("${ACCEL_BUILD_DIR:?}/bin/accelctl" --config "$ACCEL_SANDBOX_NODE_CONF_1" status | grep '^limits ' || true)
expect_eq "accelctl status: limits" "limits      reach every process of the job's steps (cgroup v1, freezer)" "$line"
log "PASS"
