#!/usr/bin/env bash
# The appliance time limit, enforced by the node agent. The job asks for 3 s of appliance time,
# a warning (USR1) 1 s before, and 5 minutes of Slurm time. Its appliance job waits 4 s in the
# appliance queue, which does not count, then runs. So the warning comes about 6 s after the
# launch and SIGTERM about 7 s after it, the agent cancels the appliance job through the
# appliance client, and the job's accounting summary says time_limit: minutes before Slurm's
# own limit, and far inside Slurm's own slack (30-90 s).
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user

tag=appliance-limit-$$-$RANDOM
output=$TEST_HOME/$tag.out
trap 'rm -f "$output"' EXIT

submit -J "$tag" -o "$output" --time=5 --job-time-sec=3 --appliance-signal=USR1@1 <<'SCRIPT'
#!/bin/bash
now() { date +%s.%N; }
trap 'echo "warned $(now)"' USR1
trap 'echo "term $(now)"; exit 143' TERM
fake-appliance-job --csx 1 --queue-seconds 4 --run-seconds 120 >"$HOME/appliance-$SLURM_JOB_ID.id" &
echo "launched $(now)"
# A trapped signal interrupts wait; the launcher is waited for again.
while kill -0 $! 2>/dev/null; do wait $!; done
echo "launcher ended $(now)"
SCRIPT

start=$SECONDS
wait_job_final "$JOB_ID" 120
elapsed=$((SECONDS - start))
out=$(<"$output")
log "job output:"$'\n'"$out"
((elapsed < 40)) || fail "the job took $elapsed s: the appliance limit was not what ended it"
at() { sed -n "s/^$1 \\([0-9.]*\\)$/\\1/p" <<<"$out" | head -1; }
launched=$(at launched) warned=$(at warned) term=$(at term)
[[ -n $launched ]] || fail "the job script never launched its appliance job"
[[ -n $warned ]] || fail "no warning signal reached the job's task"
[[ -n $term ]] || fail "no SIGTERM reached the job's task"
w=$(echo "$warned - $launched" | bc) t=$(echo "$term - $launched" | bc)
log "warning after $w s, SIGTERM after $t s (queue 4 s + limit 3 s, lead 1 s)"
# Queue time must not count: with it, the limit would hit 3 s after the launch.
(($(echo "$w >= 5.5 && $w <= 7.5" | bc))) || fail "warning after $w s, expected about 6"
(($(echo "$t >= 6.5 && $t <= 8.5" | bc))) || fail "SIGTERM after $t s, expected about 7"
expect_eq "sacct state" "FAILED" "${JOB_FINAL%%|*}"

# The agent itself cancelled the appliance job through the appliance client.
appl=$(head -1 "$TEST_HOME/appliance-$JOB_ID.id")
rm -f "$TEST_HOME/appliance-$JOB_ID.id"
[[ $appl == wsjob-* ]] || fail "no appliance job id ('$appl')"
grep -q "^csctl cancel job $appl\$" "$ACCEL_HW_MOCK_STATE/appliance/calls.log" ||
    fail "the agent never ran 'csctl cancel job $appl'"
state=$(csctl get jobs -o json -l "slurm-job-id=$JOB_ID" | jq -r --arg id "$appl" '.items[] | select(.name == $id) | .state')
expect_eq "appliance job state" "CANCELLED" "$state"

wait_comment "$JOB_ID" 60
expect_eq "summary result" "time_limit" "$(summary_of "$COMMENT" | jq -r .result)"
log "PASS"
