#!/usr/bin/env bash
# The file system of the agent's job table (RunDir/state) is full. It is moved onto a small
# tmpfs of its own while the agent is stopped (contents copied in), filled, and copied back
# and unmounted at the end, pass or fail (faults_lib.sh). The agent holds a reserve there
# (ReserveSpace, 64 KiB in the sandbox): the first IPU job's prolog finds the disk full, gets
# the reserve, and the job runs and ends as usual, with its summary; the journal and
# `accelctl status` name the file system. The next job's prolog is refused while the reserve
# cannot be held again, which is a node fault: Slurm requeues the job held (cancelled here)
# and drains the node ("Prolog error"); the epilog slurmd runs next reports the job's end in
# the space the reserve left. Once the disk has room, the operator's documented remedy
# (accel-epilog again by hand, then resume) leaves nothing of the job, the reserve is held
# again, and the next job runs as usual.
# shellcheck source=tests/integration/faults_lib.sh
source "$(dirname -- "$0")/faults_lib.sh"

faults_init
tag=faults-table-$$
faults_agent_on_small_fs "$FAULT_RUN_DIR/state" 256k
faults_fill "$FAULT_RUN_DIR/state"
agent_log=$ACCEL_SANDBOX_DIR/log/agentd.out
log_at_start=$(wc -l <"$agent_log")
full="the file system holding $FAULT_RUN_DIR/state is full ("

# The reserve takes the first job through, start to end.
faults_submit "$tag-reserve" --ipus=2
faults_wait_started "$tag-reserve" 60
faults_release "$tag-reserve"
wait_job_final "$JOB_ID" 60
expect_eq "with the reserve: sacct state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
wait_comment "$JOB_ID" 30
[[ $(summary_of "$COMMENT") == *'"result":"ok"'* ]] || fail "job $JOB_ID's summary is not ok: $COMMENT"
faults_wait_left_queue "$JOB_ID" 30
# The loop notes the reserve with its next status update, within a second of the prolog.
deadline=$((SECONDS + 10))
until tail -n +"$((log_at_start + 1))" "$agent_log" |
    grep -q "space: $full.*its reserve of 64 KiB went to the agent's records"; do
    ((SECONDS <= deadline)) ||
        fail "the agent's log does not say the reserve was spent: $(grep 'space:' "$agent_log" | tail -n 3)"
    sleep 0.2
done
accelctl status | grep -q "reserve of 64 KiB went to the agent's records" ||
    fail "accelctl status does not show the spent reserve: $(accelctl status)"
log "ok: the job that found the disk full ran on the reserve; the log and status say so"

faults_submit "$tag-full" --ipus=2
job=$JOB_ID
deadline=$((SECONDS + 40))
until state=$(squeue -h -j "$job" -o '%T %r') && [[ $state == PENDING* && ${state,,} == *held* ]]; do
    ((SECONDS <= deadline)) || fail "job $job is '$state', expected requeued and held after its prolog failed"
    sleep 0.2
done
log "ok: job $job is $state after the prolog could not record it"
# The journal names the file system that is full, and what it has left.
grep -q "prolog: job $job: $full" "$agent_log" ||
    fail "the agent's log does not say which file system is full: $(grep "job $job" "$agent_log" | tail -n 3)"
log "ok: the agent's log names the full file system"
scancel "$job"
faults_wait_left_queue "$job" 30
faults_unfill "$FAULT_RUN_DIR/state"
log_at_room=$(wc -l <"$agent_log")
SLURM_JOB_ID=$job accel-epilog || fail "accel-epilog run again by hand failed for job $job"
faults_expect_drained "Prolog error"

faults_submit "$tag-after" --ipus=2
faults_wait_started "$tag-after" 60
faults_release "$tag-after"
wait_job_final "$JOB_ID" 60
expect_eq "with room again: sacct state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
tail -n +"$((log_at_room + 1))" "$agent_log" |
    grep -q "space: the reserve in $FAULT_RUN_DIR/state is held again; new jobs are taken" ||
    fail "the agent's log does not say the reserve is held again once there was room"
faults_check_all
faults_expect_node_in_service
log "PASS"
