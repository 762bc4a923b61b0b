#!/usr/bin/env bash
# The V-IPU controller (the fake vipu's fault rules) failing and hanging during IPU jobs'
# prologs and epilogs, each case with one `--ipus=2` job of the test user:
#  1. transient: unreachable once at create and once at the epilog's remove, one garbled
#     answer to the IPUoF query, a slow create: the agent retries, the job completes, the
#     node stays in service;
#  2. refused at create (a controller-side error, not transient): the prolog fails cleanly;
#     Slurm requeues the job held and drains the node ("Prolog error"), as documented for a
#     node fault; nothing of the job is left;
#  3. hung at create: the call is ended at its deadline (a third of HookTimeout), the hung
#     client is killed, and the prolog fails as in 2;
#  4. hung at the epilog's remove: the epilog fails, the node is drained ("Epilog error"),
#     the record and the partition stay so nothing is forgotten; the operator's documented
#     remedy (accel-epilog run again by hand) then cleans everything.
# After each case: nothing left (faults_lib.sh) and every event once.
# shellcheck source=tests/integration/faults_lib.sh
source "$(dirname -- "$0")/faults_lib.sh"

faults_init

tag=faults-vipu-$$

# calls_of OP JOB SINCE: how many `vipu OP partition pJOB` calls were logged after line SINCE.
calls_of() { faults_vipu_calls_since "$3" | grep -c " $1 partition p$2\\b" || true; }

# A job whose prolog fails is requeued held by Slurm: it is cancelled once checked.
expect_prolog_failed() {
    local job=$1 deadline=$((SECONDS + 40)) state
    until state=$(squeue -h -j "$job" -o '%T %r') && [[ $state == PENDING* && ${state,,} == *held* ]]; do
        ((SECONDS <= deadline)) || fail "job $job is '$state', expected requeued and held after its prolog failed"
        sleep 0.2
    done
    log "ok: job $job is $state after the failed prolog"
    scancel "$job" || fail "could not cancel job $job"
    faults_expect_drained "Prolog error"
}

# --- 1. transient faults: retried, the job completes ----------------------------------------
since=$(faults_vipu_calls_count)
faults_vipu_rules "create down once" "get garbage once" "create delay $((200 + RANDOM % 800))"
faults_submit "$tag-transient" --ipus=2
job=$JOB_ID
faults_wait_started "$tag-transient" 60
faults_vipu_rules "remove down once"
faults_release "$tag-transient"
wait_job_final "$job" 60
expect_eq "transient faults: sacct state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
faults_wait_left_queue "$job" 30
expect_eq "vipu create calls of job $job (one refused, one retried)" 2 "$(calls_of create "$job" "$since")"
(($(calls_of remove "$job" "$since") >= 2)) || fail "the epilog's remove of p$job was not retried"
faults_clear_vipu
faults_expect_node_in_service
faults_check_all

# --- 2. refused at create: the prolog fails cleanly --------------------------------------------
faults_vipu_rules "create fail 1"
faults_submit "$tag-refused" --ipus=2
expect_prolog_failed "$JOB_ID"
faults_clear_vipu
faults_check_all

# --- 3. hung at create -----------------------------------------------------------------------
faults_vipu_rules "create hang"
faults_submit "$tag-hung" --ipus=2
expect_prolog_failed "$JOB_ID"
faults_clear_vipu
faults_check_all

# --- 4. hung at the epilog's remove ----------------------------------------------------------
faults_submit "$tag-epilog" --ipus=2
job=$JOB_ID
FAULT_EPILOGS[$job]="epilog_finished(failed) "
faults_wait_started "$tag-epilog" 60
faults_vipu_rules "remove hang"
faults_release "$tag-epilog"
faults_expect_drained "Epilog error"
[[ -e $FAULT_RUN_DIR/state/$job.json ]] || fail "job $job's record is gone although its epilog failed"
grep -q "^p$job " <<<"$(faults_partitions)" || fail "partition p$job is gone although its removal hung"
faults_clear_vipu
SLURM_JOB_ID=$job accel-epilog || fail "accel-epilog run again by hand failed for job $job"
faults_check_all
faults_expect_node_in_service
log "PASS"
