#!/usr/bin/env bash
# slurmctld down: jobs whose scripts end while slurmctld is stopped get their accel= summary
# in AdminComment once it is back, each written once. Their epilogs (and so their
# epilog_finished events) can only run after slurmctld returns and tells slurmd to end them;
# slurmctld then also sends slurmdbd the jobs' ends late, and the summary must survive that.
# Each summary counts as one write in the aggregator's counters, with no failed attempt.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user

jobs_n=2 # the sandbox's node has two CPUs: both jobs run at once
ports=$ACCEL_SANDBOX_DIR/state/ports
metrics_port=$(sed -n 's/^METRICS_PORT=//p' "$ports")
[[ $metrics_port =~ ^[0-9]+$ ]] || fail "no METRICS_PORT in $ports"

# counter NAME: the aggregator's counter NAME (accel_aggregator_NAME).
counter() {
    local text v
    text=$(curl -sf --max-time 5 "http://127.0.0.1:$metrics_port/metrics") ||
        fail "the aggregator's metrics on port $metrics_port do not answer"
    v=$(awk -v n="accel_aggregator_$1" '$1 == n {print $2}' <<<"$text")
    [[ $v =~ ^[0-9]+$ ]] || fail "no counter accel_aggregator_$1 in the metrics"
    echo "$v"
}

ctld_up() { "$SANDBOX_SCRIPT" status 2>/dev/null | grep -q '^slurmctld *up'; }
# Whatever happens, slurmctld runs again when the test ends (restart keeps the running jobs),
# and the jobs below are let go.
marks=$TEST_HOME/outage-$$
restore_ctld() {
    ctld_up || "$SANDBOX_SCRIPT" restart slurmctld >/dev/null || true
    if [[ -d $marks ]]; then : >"$marks/go"; fi
}
trap restore_ctld EXIT

# Writes left from earlier tests would blur the count below: none may wait now.
deadline=$((SECONDS + 30))
until [[ $(counter pending_comments) == 0 ]]; do
    ((SECONDS <= deadline)) || fail "the aggregator still has comments pending from before the test"
    sleep 0.5
done

# 1. Jobs that run into the outage. Each runs until the file go appears in $marks (created once
# slurmctld is stopped; 60 s at most), then leaves a mark as its script ends.
as_test_user mkdir -p "$marks"
jobs=()
for ((i = 0; i < jobs_n; i++)); do
    submit -J "acct-ctld-$$-$i" -o /dev/null <<<"#!/bin/sh
n=0
while [ ! -e '$marks/go' ] && [ \$n -lt 300 ]; do sleep 0.2; n=\$((n + 1)); done
touch '$marks/'\"\$SLURM_JOB_ID\""
    jobs+=("$JOB_ID")
done
deadline=$((SECONDS + 60))
for job in "${jobs[@]}"; do
    until [[ $(squeue -h -j "$job" -o %T) == RUNNING ]]; do
        ((SECONDS <= deadline)) || fail "job $job did not start"
        sleep 0.2
    done
done
for job in "${jobs[@]}"; do
    [[ ! -e $marks/$job ]] || fail "job $job ended before slurmctld could be stopped"
done
writes0=$(counter comment_writes_total)
failures0=$(counter comment_failures_total)
log "jobs ${jobs[*]} running; comment writes $writes0, failures $failures0 so far"

# 2. slurmctld stops; the jobs' scripts end without it.
"$SANDBOX_SCRIPT" stop slurmctld >/dev/null || fail "could not stop slurmctld"
ctld_up && fail "slurmctld still runs after 'slurm-sandbox stop slurmctld'"
: >"$marks/go"
deadline=$((SECONDS + 30))
for job in "${jobs[@]}"; do
    until [[ -e $marks/$job ]]; do
        ((SECONDS <= deadline)) || fail "the script of job $job did not end while slurmctld was down"
        sleep 0.2
    done
done
log "the scripts of ${jobs[*]} ended while slurmctld was down"
sleep 3 # room for a summary that should not be written yet
for job in "${jobs[@]}"; do
    c=$(sacct -n -P -X -j "$job" -o AdminComment)
    [[ $c != *accel=* ]] || fail "job $job has a summary before its epilog could run: '$c'"
done
expect_eq "comment writes while slurmctld is down" "$writes0" "$(counter comment_writes_total)"

# 3. slurmctld is back: every job ends, and gets its summary exactly once.
"$SANDBOX_SCRIPT" restart slurmctld >/dev/null || fail "slurm-sandbox restart slurmctld failed"
for job in "${jobs[@]}"; do
    wait_job_final "$job" 90
    expect_eq "job $job: sacct state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
    wait_comment "$job" 30
    log "job $job: $COMMENT"
done
# slurmctld's late report of the jobs' ends to slurmdbd, and any retry, have had time to land.
sleep 5
for job in "${jobs[@]}"; do
    c=$(sacct -n -P -X -j "$job" -o AdminComment)
    segments=$(grep -o 'accel=' <<<"$c" | wc -l)
    expect_eq "job $job: accel= segments in AdminComment after the outage" 1 "$segments"
    json=$(summary_of "$c")
    expect_eq "job $job: result" ok "$(jq -r .result <<<"$json")"
    expect_eq "job $job: nodes" "$(sinfo -h -o %N)" "$(jq -r '.nodes | join(",")' <<<"$json")"
done
expect_eq "comment writes for the $jobs_n jobs (each once)" "$((writes0 + jobs_n))" \
    "$(counter comment_writes_total)"
expect_eq "failed comment writes" "$failures0" "$(counter comment_failures_total)"
expect_eq "comments still pending" 0 "$(counter pending_comments)"
rm -rf "$marks"
log "PASS"
