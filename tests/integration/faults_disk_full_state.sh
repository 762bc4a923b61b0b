#!/usr/bin/env bash
# The file system of the agent's job table (RunDir/state) is full. It is moved onto a small
# tmpfs of its own while the agent is stopped (contents copied in), filled, and copied back
# and unmounted at the end, pass or fail (faults_lib.sh). An IPU job's prolog cannot record
# the job, which is a node fault: Slurm requeues the job held (cancelled here) and drains the
# node ("Prolog error"); the epilog slurmd runs next cannot record its phase either and fails.
# Once the disk has room, the operator's documented remedy (accel-epilog again by hand, then
# resume) leaves nothing of the job, and the next job runs as usual.
# shellcheck source=tests/integration/faults_lib.sh
source "$(dirname -- "$0")/faults_lib.sh"

faults_init
tag=faults-table-$$
faults_agent_on_small_fs "$FAULT_RUN_DIR/state" 256k
faults_fill "$FAULT_RUN_DIR/state"

faults_submit "$tag-full" --ipus=2
job=$JOB_ID
FAULT_EPILOGS[$job]="epilog_finished(failed) "
deadline=$((SECONDS + 40))
until state=$(squeue -h -j "$job" -o '%T %r') && [[ $state == PENDING* && ${state,,} == *held* ]]; do
    ((SECONDS <= deadline)) || fail "job $job is '$state', expected requeued and held after its prolog failed"
    sleep 0.2
done
log "ok: job $job is $state after the prolog could not record it"
# The journal names the file system that is full, and what it has left.
grep -q "the file system holding $FAULT_RUN_DIR/state is full (" "$ACCEL_SANDBOX_DIR/log/agentd.out" ||
    fail "the agent's log does not say which file system is full: $(grep "job $job" "$ACCEL_SANDBOX_DIR/log/agentd.out" | tail -n 3)"
log "ok: the agent's log names the full file system"
scancel "$job"
faults_wait_left_queue "$job" 30
faults_unfill "$FAULT_RUN_DIR/state"
SLURM_JOB_ID=$job accel-epilog || fail "accel-epilog run again by hand failed for job $job"
faults_expect_drained "Prolog error"

faults_submit "$tag-after" --ipus=2
faults_wait_started "$tag-after" 60
faults_release "$tag-after"
wait_job_final "$JOB_ID" 60
expect_eq "with room again: sacct state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
faults_check_all
faults_expect_node_in_service
log "PASS"
