#!/usr/bin/env bash
# slurmctld stopped while two IPU jobs of the test user run, and started again
# from its state files: one job's script ends while slurmctld is down (how long it stays down
# is drawn from the seed), the other after it is back. Both complete, the node stays in service, both
# summaries reach AdminComment, and nothing of either job is left.
# shellcheck source=tests/integration/faults_lib.sh
source "$(dirname -- "$0")/faults_lib.sh"

faults_init

tag=faults-ctld-$$
faults_submit "$tag-a" --ipus=2
job_a=$JOB_ID
faults_submit "$tag-b" --ipus=1
job_b=$JOB_ID
faults_wait_started "$tag-a" 60
faults_wait_started "$tag-b" 60

# A clean stop: slurmctld saves its state then. After SIGKILL it recovers what it saved last,
# which may miss a job submitted a moment before: Slurm's own limit, not the agent's.
"$SANDBOX_SCRIPT" stop slurmctld >/dev/null || fail "could not stop slurmctld"
log "stopped slurmctld while jobs $job_a and $job_b run"
# Job a's script ends while slurmctld is down: its completion and its epilog wait for it.
faults_release "$tag-a"
down_ms=$((500 + RANDOM % 2000))
log "slurmctld stays down for $down_ms ms"
sleep "$(bc <<<"scale=3; $down_ms / 1000")"
"$SANDBOX_SCRIPT" restart slurmctld >/dev/null || fail "slurmctld did not start again"
log "slurmctld started again (pid $(read -r p _ <"$ACCEL_SANDBOX_DIR/state/pids/slurmctld" && echo "$p"))"
expect_eq "job $job_b after the restart" RUNNING "$(squeue -h -j "$job_b" -o %T)"
faults_release "$tag-b"

for job in "$job_a" "$job_b"; do
    wait_job_final "$job" 60
    expect_eq "job $job: sacct state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
done
faults_check_all
for job in "$job_a" "$job_b"; do
    wait_comment "$job" 30
    expect_eq "job $job: summary result" ok "$(summary_of "$COMMENT" | jq -r .result)"
done
faults_expect_node_in_service
log "PASS"
