#!/usr/bin/env bash
# The node agent killed (SIGKILL) and restarted while surrogate steps run (issue 8). Two jobs:
#   limit  8 s of appliance time; the agent is killed 2 s into its appliance job's run. The
#          restarted agent keeps the budget: SIGTERM comes about 8 s into the run (a reset
#          budget could not act before 10 s), the appliance job is cancelled, its step FAILED.
#   steps  two appliance jobs, each with its surrogate step, started by the killed agent. After
#          the restart, scancel of one step still cancels its appliance job (the new agent
#          watches the sruns the old one started), and so does scancel of the job for the other
#          one, whose launcher left the job's process tree (setsid -f), so that Slurm's SIGTERM
#          does not make it cancel its appliance job itself; no surrogate step process is left.
#          A third step is cancelled while the agent is stopped: back, it cancels that one's
#          appliance job at once.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user

pidfile=$ACCEL_SANDBOX_DIR/run/accel-agentd.pid
tag=appliance-restart-$$-$RANDOM
trap 'rm -f "$TEST_HOME/$tag".*' EXIT

submit -J "$tag-limit" -o "$TEST_HOME/$tag.limit" --time=5 --job-time-sec=8 <<'SCRIPT'
#!/bin/bash
trap 'echo "term $(date +%s.%N)"; exit 143' TERM
fake-appliance-job --csx 1 --queue-seconds 0.5 --run-seconds 120 &
while kill -0 $! 2>/dev/null; do wait $!; done
SCRIPT
limit_job=$JOB_ID
submit -J "$tag-steps" -o "$TEST_HOME/$tag.steps" --time=5 <<'SCRIPT'
#!/bin/bash
fake-appliance-job --csx 1 --queue-seconds 0.2 --run-seconds 120 &
fake-appliance-job --csx 3 --queue-seconds 0.2 --run-seconds 120 &
setsid -f bash -c 'echo $$ >"$0"; exec fake-appliance-job --csx 2 --queue-seconds 0.2 --run-seconds 120' \
    "$HOME/launcher-$SLURM_JOB_ID.pid" >/dev/null
wait
sleep 120
SCRIPT
steps_job=$JOB_ID
# The detached launcher ends when its appliance job does; should the test fail first, it goes too.
detached=$TEST_HOME/launcher-$steps_job.pid
trap 'rm -f "$TEST_HOME/$tag".*; if [[ -s $detached ]]; then kill "$(<"$detached")" 2>/dev/null || true; fi; rm -f "$detached"' EXIT

records() { csctl get jobs -o json -l "slurm-job-id=$1"; }
# JobID of the running surrogate step of JOB named like PATTERN.
running_step() {
    as_test_user sacct -n -P -j "$1" -o JobID,JobName,State | awk -F'|' -v p="$2" '$2 ~ p && $3 == "RUNNING" { print $1 }'
}
deadline=$((SECONDS + 40))
until [[ -n $(running_step "$limit_job" '-csx1$') && -n $(running_step "$steps_job" '-csx1$') &&
    -n $(running_step "$steps_job" '-csx2$') && -n $(running_step "$steps_job" '-csx3$') ]]; do
    ((SECONDS < deadline)) || fail "the surrogate steps were not all running within 40 s"
    sleep 0.2
done
limit_start=$(date -d "$(records "$limit_job" | jq -r '.items[0].startTime')" +%s.%N)
until (($(echo "$(date +%s.%N) - $limit_start >= 2" | bc))); do sleep 0.05; done

old_pid=$(<"$pidfile")
kill -9 "$old_pid"
log "killed accel-agentd (pid $old_pid) $(echo "$(date +%s.%N) - $limit_start" | bc) s into the limited run"
deadline=$((SECONDS + 15))
until new_pid=$(cat "$pidfile" 2>/dev/null) && [[ -n $new_pid && $new_pid != "$old_pid" ]] &&
    accelctl status >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "accel-agentd did not come back within 15 s"
    sleep 0.1
done
log "accel-agentd is back (pid $new_pid)"

# scancel of a surrogate step the old agent started.
step=$(running_step "$steps_job" '-csx1$')
appl1=$(as_test_user sacct -n -P -j "$steps_job" -o JobName | sed -n 's/^\(wsjob-[a-z0-9]*\)-csx1$/\1/p')
appl2=$(as_test_user sacct -n -P -j "$steps_job" -o JobName | sed -n 's/^\(wsjob-[a-z0-9]*\)-csx2$/\1/p')
as_test_user scancel "$step"
state_of() { records "$1" | jq -r --arg id "$2" '.items[] | select(.name == $id) | .state'; }
deadline=$((SECONDS + 20))
until [[ $(state_of "$steps_job" "$appl1") == CANCELLED ]]; do
    ((SECONDS < deadline)) || fail "appliance job $appl1 is $(state_of "$steps_job" "$appl1") 20 s after scancel of its step"
    sleep 0.2
done
grep -q "^csctl cancel job $appl1\$" "$ACCEL_HW_MOCK_STATE/appliance/calls.log" ||
    fail "the agent never ran 'csctl cancel job $appl1'"
log "ok: scancel of step $step cancelled $appl1"
expect_eq "the other appliance job" "RUNNING" "$(state_of "$steps_job" "$appl2")"
wait_job_final "$limit_job" 60
# Its epilog must have run before the agent is stopped below: an epilog that finds the agent
# down fails, and slurmd drains the node for it.
deadline=$((SECONDS + 30))
while [[ -n $(squeue -h -j "$limit_job" -o %T 2>/dev/null) || -e $ACCEL_SANDBOX_DIR/run/accel/state/$limit_job.json ]]; do
    ((SECONDS < deadline)) || fail "job $limit_job is still completing on the node 30 s after its end"
    sleep 0.2
done

# A step that ends while the agent is stopped.
step3=$(running_step "$steps_job" '-csx3$')
appl3=$(as_test_user sacct -n -P -j "$steps_job" -o JobName | sed -n 's/^\(wsjob-[a-z0-9]*\)-csx3$/\1/p')
"$SANDBOX_SCRIPT" stop agentd >/dev/null
as_test_user scancel "$step3"
deadline=$((SECONDS + 20))
while [[ -n $(running_step "$steps_job" '-csx3$') ]]; do
    ((SECONDS < deadline)) || fail "step $step3 still runs 20 s after scancel"
    sleep 0.2
done
expect_eq "appliance job of step $step3 while the agent is stopped" "RUNNING" "$(state_of "$steps_job" "$appl3")"
"$SANDBOX_SCRIPT" restart agentd >/dev/null
deadline=$((SECONDS + 20))
until [[ $(state_of "$steps_job" "$appl3") == CANCELLED ]]; do
    ((SECONDS < deadline)) || fail "appliance job $appl3 is $(state_of "$steps_job" "$appl3") 20 s after the agent came back"
    sleep 0.2
done
grep -q "^csctl cancel job $appl3\$" "$ACCEL_HW_MOCK_STATE/appliance/calls.log" ||
    fail "the agent never ran 'csctl cancel job $appl3'"
log "ok: the agent, back, cancelled $appl3, whose step $step3 ended while it was stopped"
as_test_user scancel "$steps_job"
wait_job_final "$steps_job" 60
term=$(sed -n 's/^term \([0-9.]*\)$/\1/p' "$TEST_HOME/$tag.limit")
[[ -n $term ]] || fail "no SIGTERM reached the limited job"
t=$(echo "$term - $limit_start" | bc)
log "SIGTERM $t s into the appliance run (limit 8 s, agent killed at 2 s)"
(($(echo "$t >= 7.9 && $t <= 9.5" | bc))) || fail "SIGTERM $t s into the run, expected 8"
expect_eq "appliance job of the limited job" "CANCELLED" "$(records "$limit_job" | jq -r '.items[0].state')"
deadline=$((SECONDS + 20))
until [[ $(as_test_user sacct -n -P -j "$limit_job" -o JobName,State | grep '^wsjob-' | cut -d'|' -f2) == FAILED ]]; do
    ((SECONDS < deadline)) || fail "the limited job's step is $(as_test_user sacct -n -P -j "$limit_job" -o JobName,State | grep '^wsjob-')"
    sleep 0.5
done
log "ok: the limited job's step is FAILED"
deadline=$((SECONDS + 30))
until [[ $(state_of "$steps_job" "$appl2") == CANCELLED ]] && ! pgrep -f "wait-appliance $steps_job " >/dev/null &&
    ! pgrep -f "wait-appliance $limit_job " >/dev/null; do
    ((SECONDS < deadline)) || fail "after the jobs' end: $appl2 $(state_of "$steps_job" "$appl2"), processes: $(pgrep -af "wait-appliance ($steps_job|$limit_job) ")"
    sleep 0.5
done
grep -q "^csctl cancel job $appl2\$" "$ACCEL_HW_MOCK_STATE/appliance/calls.log" ||
    fail "the agent never ran 'csctl cancel job $appl2'"
log "ok: the agent cancelled $appl2 with its job, no surrogate step process left"
wait_comment "$limit_job" 60
expect_eq "summary result" "time_limit" "$(summary_of "$COMMENT" | jq -r .result)"
node_state=$(sinfo -h -o %T) || fail "sinfo failed"
[[ $node_state != *drain* ]] || fail "the node is $node_state ($(sinfo -h -o %E)): no epilog may have met the agent down"
log "PASS"
