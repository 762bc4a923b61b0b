#!/usr/bin/env bash
# The file system of the agent's StateDir (the event spool and the agent epoch) is full. It
# is moved onto a small tmpfs of its own while the agent is stopped (contents copied in),
# filled, and copied back and unmounted at the end, pass or fail (faults_lib.sh). An IPU job
# with ten steps (some fifty events, more than the spool's last page holds) runs meanwhile:
# it completes, the node stays in service, and once the disk has room again every event of
# the job (its steps' and tasks' too) reaches the aggregator exactly once: none may be
# dropped: the outbox holds what the disk refuses and appends it once there is room.
# shellcheck source=tests/integration/faults_lib.sh
source "$(dirname -- "$0")/faults_lib.sh"

faults_init
tag=faults-spool-$$
faults_agent_on_small_fs "$FAULT_STATE_DIR" 4m
faults_fill "$FAULT_STATE_DIR"

release=$TEST_HOME/$tag.release steps=$TEST_HOME/$tag.steps
faults_on_exit rm -f "$release" "$steps"
submit -J "$tag" -o /dev/null --ipus=2 <<SCRIPT
#!/bin/bash
for s in \$(seq 10); do srun -n 1 true; done
touch "$steps"
for _ in \$(seq 600); do [[ -e "$release" ]] && exit 0; sleep 0.1; done
exit 9
SCRIPT
FAULT_JOBS+=("$JOB_ID")
deadline=$((SECONDS + 60))
until [[ -e $steps ]]; do
    ((SECONDS <= deadline)) || { job_story "$JOB_ID"; fail "job $JOB_ID did not run its ten steps within 60 s"; }
    sleep 0.2
done
log "agent events with the spool full: $(accelctl status --json | jq -r .events)"
faults_unfill "$FAULT_STATE_DIR"
as_test_user touch "$release"
wait_job_final "$JOB_ID" 60
expect_eq "spool full: sacct state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
faults_check_all
faults_expect_node_in_service
log "PASS"
