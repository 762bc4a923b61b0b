#!/usr/bin/env bash
# Faults on one node of a job that spans two nodes of the three-node sandbox:
#  1. the second node's agent is killed (SIGKILL) while the job runs: the first node and the
#     job are unaffected, the restarted agent re-adopts the job, and after the job nothing is
#     left on either node (no job record, no IPUoF directory, the partition removed once), and
#     no node is drained;
#  2. the prolog fails on the second node only (its IpuofDir is made unusable, a node fault):
#     only that node is drained, the job does not run, and the partition the first node made
#     for it is removed, so nothing of the job is left anywhere.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user

sandbox_nodes 3
first=${nodes[0]} second=${nodes[1]}
run_of() { echo "$ACCEL_SANDBOX_DIR/run/$1"; }

tag=mn-faults-$$-$RANDOM
dir=$TEST_HOME/$tag
broken_ipuof=''
restore() {
    if [[ -n $broken_ipuof && -f $broken_ipuof ]]; then
        rm -f "$broken_ipuof"
        mkdir -m 0755 "$broken_ipuof"
    fi
    scontrol update nodename="$second" state=resume 2>/dev/null || true
    rm -rf "${dir:?}"
}
trap restore EXIT
mkdir -p "$dir"
chown "$TEST_USER" "$dir"

node_state() { sinfo -h -n "$1" -o '%T'; }
partition_exists() { vipu list partitions --json | tr -d ' \n' | grep -q "\"id\":\"p$1\""; }
no_record() { [[ ! -e $(run_of "$1")/accel/state/$2.json ]]; }

# --- 1. an agent killed mid-job ------------------------------------------------------------------
submit -J "$tag-kill" -w "$first,$second" -N 2 --ntasks-per-node=1 --ipus=2 -o "$dir/kill.out" <<SCRIPT
#!/bin/bash
srun bash -c 'touch "$dir/started.\$SLURM_PROCID"; for _ in \$(seq 600); do [[ -e "$dir/release" ]] && exit 0; sleep 0.1; done; exit 1'
SCRIPT
job=$JOB_ID
wait_for 60 "both tasks of job $job started" test -e "$dir/started.0" -a -e "$dir/started.1"
pidfile=$(run_of "$second")/accel-agentd.pid
old_pid=$(<"$pidfile")
kill -KILL "$old_pid"
log "killed $second's agent (pid $old_pid) while job $job runs"
new_agent() { [[ -s $pidfile && $(<"$pidfile") != "$old_pid" ]] &&
    "$SANDBOX_SCRIPT" exec "$second" accelctl status >/dev/null 2>&1; }
wait_for 30 "$second's agent restarted" new_agent
jobs_there=$("$SANDBOX_SCRIPT" exec "$second" accelctl jobs)
grep -qw "$job" <<<"$jobs_there" || fail "the restarted agent on $second does not hold job $job: $jobs_there"
partition_exists "$job" || fail "partition p$job went away while the job runs"
touch "$dir/release"
wait_job_final "$job" 60
expect_eq "job $job: state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
for n in "$first" "$second"; do
    wait_for 20 "$n: job $job's record gone" no_record "$n" "$job"
    [[ ! -e $(run_of "$n")/ipuof/$job ]] || fail "$n: IPUoF directory of job $job left behind"
    expect_eq "$n after the job" idle "$(node_state "$n")"
done
partition_exists "$job" && fail "partition p$job left behind"
expect_eq "partition p$job: creations, removals after it" "1 1" "$(partition_calls "$job")"

# --- 2. the prolog fails on one node ---------------------------------------------------------------
# A regular file where the second node's IpuofDir should be: its prolog cannot make the job's
# directory there, a fault of that node.
broken_ipuof=$(run_of "$second")/ipuof
[[ -d $broken_ipuof ]] || fail "no IpuofDir at $broken_ipuof"
# Nothing but the agent's trash (where epilogs move job directories to be removed) is left.
left=$(find "$broken_ipuof" -mindepth 1 -maxdepth 1 ! -name .trash -printf '%f ')
[[ -z $left ]] || fail "$broken_ipuof is not empty: $left"
rm -rf -- "$broken_ipuof"
touch "$broken_ipuof"
submit -J "$tag-fail" -w "$first,$second" -N 2 --ntasks-per-node=1 --ipus=2 -o "$dir/fail.out" <<SCRIPT
#!/bin/bash
srun touch "$dir/ran.\$SLURM_PROCID"
SCRIPT
job=$JOB_ID
drained() { [[ $(node_state "$second") == drain* ]]; }
wait_for 60 "$second drained after its prolog failed" drained
reason=$(sinfo -h -n "$second" -o '%E')
log "$second: $(node_state "$second") ($reason)"
# Slurm requeues the job held after a prolog failure; end it. A cancel that lands while the
# requeue is still under way can be lost, so it is repeated until the job has left the queue.
deadline=$((SECONDS + 60))
until [[ -z $(squeue -h -j "$job" -o %A 2>/dev/null) ]]; do
    ((SECONDS <= deadline)) || fail "job $job still queued after 60 s: $(squeue -h -j "$job" -o '%T %r')"
    scancel "$job" 2>/dev/null || true
    sleep 1
done
# (sacct may keep saying REQUEUED for a run that was cancelled before it started again: the
# queue, not accounting, says the job is over.)
for n in "$first" "$second"; do
    wait_for 30 "$n: job $job's record gone" no_record "$n" "$job"
done
wait_for 30 "partition p$job removed" bash -c "! vipu list partitions --json | tr -d ' \n' | grep -q '\"id\":\"p$job\"'"
[[ ! -e $dir/ran.0 && ! -e $dir/ran.1 ]] || fail "job $job ran tasks although a prolog failed"
[[ ! -e $(run_of "$first")/ipuof/$job ]] || fail "$first: IPUoF directory of job $job left behind"
for n in "$first" "${nodes[2]}"; do
    state=$(node_state "$n")
    [[ $state != drain* && $state != down* ]] || fail "$n is $state; only $second may be drained"
done
log "PASS"
