#!/usr/bin/env bash
# Surrogate steps when the job ends around its appliance job (seed 000, issue 8). Four jobs at
# once, each with one appliance job on one CS-X:
#   done     the batch script exits the moment its launcher sees the appliance job succeed:
#            Slurm ends the job (and so the surrogate step) before the agent's next poll has
#            seen the end; the step still reads COMPLETED
#   bad      the same with an appliance job that fails: FAILED
#   limit    stopped at its appliance limit; the script exits on SIGTERM: the step reads
#            FAILED (not CANCELLED), the appliance job is CANCELLED
#   scancel  the job is cancelled while its appliance job runs: the appliance job is cancelled
#   srun     the launcher itself runs under srun (seed 000's integration makes no surrogate
#            step then): the surrogate step is made beside the launcher's step, COMPLETED
# and nothing of the surrogate steps (srun, the waiter) is left on the node afterwards.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user

tag=surrogate-races-$$-$RANDOM
trap 'rm -f "$TEST_HOME/$tag".*' EXIT

submit -J "$tag-done" -o "$TEST_HOME/$tag.done" --time=5 <<'SCRIPT'
#!/bin/bash
fake-appliance-job --csx 1 --queue-seconds 0.2 --run-seconds 3
SCRIPT
done_job=$JOB_ID
submit -J "$tag-bad" -o "$TEST_HOME/$tag.bad" --time=5 <<'SCRIPT'
#!/bin/bash
fake-appliance-job --csx 1 --queue-seconds 0.2 --run-seconds 3 --fail
SCRIPT
bad_job=$JOB_ID
submit -J "$tag-limit" -o "$TEST_HOME/$tag.limit" --time=5 --job-time-sec=3 <<'SCRIPT'
#!/bin/bash
trap 'echo "term"; exit 143' TERM
fake-appliance-job --csx 1 --queue-seconds 0.2 --run-seconds 120 &
while kill -0 $! 2>/dev/null; do wait $!; done
SCRIPT
limit_job=$JOB_ID
submit -J "$tag-scancel" -o "$TEST_HOME/$tag.scancel" --time=5 <<'SCRIPT'
#!/bin/bash
fake-appliance-job --csx 1 --queue-seconds 0.2 --run-seconds 120
SCRIPT
scancel_job=$JOB_ID
submit -J "$tag-srun" -o "$TEST_HOME/$tag.srun" --time=5 <<'SCRIPT'
#!/bin/bash
srun --ntasks=1 fake-appliance-job --csx 1 --queue-seconds 0.2 --run-seconds 2
sleep 3
SCRIPT
srun_job=$JOB_ID

# The scancel job is cancelled once its surrogate step runs.
step=''
for _ in $(seq 150); do
    step=$(as_test_user sacct -n -P -j "$scancel_job" -o JobID,JobName,State |
        awk -F'|' '$2 ~ /^wsjob-.*-csx1$/ && $3 == "RUNNING" { print $1 }')
    [[ -n $step ]] && break
    sleep 0.2
done
[[ -n $step ]] || fail "job $scancel_job got no running surrogate step within 30 s"
as_test_user scancel "$scancel_job"

for job in "$done_job" "$bad_job" "$limit_job" "$scancel_job" "$srun_job"; do wait_job_final "$job" 90; done

# The step of JOB, once accounting has its final state (it may trail the job's own).
step_of() {
    local job=$1 line='' deadline=$((SECONDS + 20))
    while ((SECONDS <= deadline)); do
        line=$(as_test_user sacct -n -P -j "$job" -o JobName,State | grep '^wsjob-' || true)
        [[ -n $line && $line != *RUNNING* ]] && break
        sleep 0.5
    done
    log "job $job: steps: ${line//$'\n'/, }" >&2
    printf '%s\n' "$line"
}
appliance_state() {
    csctl get jobs -o json -l "slurm-job-id=$1" | jq -r '[.items[].state] | join(",")'
}
expect_eq "step of a job that ends with its appliance job" "COMPLETED" "$(step_of "$done_job" | cut -d'|' -f2)"
expect_eq "step of a failed appliance job" "FAILED" "$(step_of "$bad_job" | cut -d'|' -f2)"
grep -q '^term$' "$TEST_HOME/$tag.limit" || fail "job $limit_job never got SIGTERM at its appliance limit"
expect_eq "step of a job stopped at its appliance limit" "FAILED" "$(step_of "$limit_job" | cut -d'|' -f2)"
expect_eq "appliance job of the limited job" "CANCELLED" "$(appliance_state "$limit_job")"
[[ $(step_of "$scancel_job" | cut -d'|' -f1) == wsjob-*-csx1 ]] || fail "job $scancel_job lost its step"
expect_eq "surrogate step of a launcher run under srun" "COMPLETED" "$(step_of "$srun_job" | cut -d'|' -f2)"
[[ $(step_of "$srun_job" | cut -d'|' -f1) == wsjob-*-csx1 ]] || fail "job $srun_job: no step named wsjob-<id>-csx1"
# The agent cancels once the step's srun has ended, shortly after the job.
deadline=$((SECONDS + 30))
until [[ $(appliance_state "$scancel_job") == CANCELLED ]]; do
    ((SECONDS < deadline)) || fail "the appliance job of the cancelled job $scancel_job is $(appliance_state "$scancel_job")"
    sleep 0.5
done
log "ok: the appliance job of the cancelled job $scancel_job is CANCELLED"

# Nothing left behind: no srun of a surrogate step nor a waiter of any of these jobs.
deadline=$((SECONDS + 30))
for job in "$done_job" "$bad_job" "$limit_job" "$scancel_job" "$srun_job"; do
    while pgrep -f "wait-appliance $job " >/dev/null; do
        ((SECONDS < deadline)) || fail "a surrogate step process of job $job is still there: $(pgrep -af "wait-appliance $job ")"
        sleep 0.5
    done
done
log "ok: no surrogate step process left"
log "PASS"
