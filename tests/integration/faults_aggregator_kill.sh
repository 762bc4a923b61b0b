#!/usr/bin/env bash
# accel-aggregatord killed with SIGKILL during a burst of job events (eight jobs of the test
# user, each with steps, so prologs, tasks, steps and epilogs stream at once), then started
# again. The agent keeps what was not acknowledged in its spool and sends it again; the
# aggregator drops what it had already committed. Afterwards every event of the agent's epoch
# is stored exactly once, every job's lifecycle once, every job has its accel= summary, and
# nothing of the jobs is left on the node. When the kill lands is drawn from the seed.
# shellcheck source=tests/integration/faults_lib.sh
source "$(dirname -- "$0")/faults_lib.sh"

faults_init

agg_pid() {
    local pid
    read -r pid _ <"$ACCEL_SANDBOX_DIR/state/pids/aggregatord" && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

tag=faults-agg-$$
jobs=8
kill_after_ms=$((200 + RANDOM % 2500))
down_ms=$((RANDOM % 1500))
log "plan: $jobs jobs; SIGKILL the aggregator ${kill_after_ms} ms after the first submission," \
    "start it again ${down_ms} ms later"

start=$EPOCHREALTIME
for ((i = 0; i < jobs; i++)); do
    submit -J "$tag-$i" -o /dev/null -n 1 <<'SCRIPT'
#!/bin/bash
for s in 1 2 3; do srun -n 1 true; done
SCRIPT
    FAULT_JOBS+=("$JOB_ID")
done
pid=$(agg_pid) || fail "accel-aggregatord is not running"
elapsed_ms=$(((${EPOCHREALTIME/./} - ${start/./}) / 1000))
((elapsed_ms >= kill_after_ms)) || sleep "$(bc <<<"scale=3; ($kill_after_ms - $elapsed_ms) / 1000")"
kill -KILL "$pid"
log "killed accel-aggregatord (pid $pid) $(((${EPOCHREALTIME/./} - ${start/./}) / 1000)) ms after the first submission"
sleep "$(bc <<<"scale=3; $down_ms / 1000")"
"$SANDBOX_SCRIPT" restart aggregatord >/dev/null || fail "accel-aggregatord did not start again"
log "accel-aggregatord started again (pid $(agg_pid))"

for job in "${FAULT_JOBS[@]}"; do
    wait_job_final "$job" 90
    expect_eq "job $job: sacct state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
done
faults_check_all
for job in "${FAULT_JOBS[@]}"; do
    wait_comment "$job" 30
    expect_eq "job $job: summary result" ok "$(summary_of "$COMMENT" | jq -r .result)"
done
faults_expect_node_in_service
log "PASS"
