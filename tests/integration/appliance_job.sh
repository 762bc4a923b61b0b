#!/usr/bin/env bash
# A job script that acts like a user's appliance launcher (fake-appliance-job of tests/hw_mock):
# a compile job, then a train job on one CS-X. The node agent sees each appliance job in the
# right state within one poll interval (AppliancePollInterval=1 in the sandbox), counts only the
# running time as appliance time, and the job's summary in accounting says it was appliance work.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user

tag=appliance-$$-$RANDOM
output=$TEST_HOME/$tag.out
trap 'rm -f "$output"' EXIT

submit -J "$tag" -o "$output" --appliance-time=10:00 <<'SCRIPT'
#!/bin/bash
view() { accelctl job "$SLURM_JOB_ID" --json | jq -c '[.appliance_jobs[] | [.state, .systems]]'; }
fake-appliance-job --csx 0 --queue-seconds 0.2 --run-seconds 1 >/dev/null || echo "compile failed"
fake-appliance-job --csx 1 --queue-seconds 1 --run-seconds 4 >/dev/null &
launcher=$!
start=$(date +%s.%N)
seen_queued='' seen_running=''
for _ in $(seq 60); do
    v=$(view)
    [[ -z $seen_queued && $v == *'["queued",1]'* ]] && seen_queued=$(date +%s.%N)
    [[ -z $seen_running && $v == *'["running",1]'* ]] && seen_running=$(date +%s.%N)
    [[ -n $seen_running ]] && break
    sleep 0.1
done
echo "running seen after $(echo "$seen_running - $start" | bc) s"
wait "$launcher" || echo "train failed"
sleep 1.5
echo "final $(view)"
accelctl job "$SLURM_JOB_ID" --json | jq -r '"seconds \(.appliance_seconds)"'
SCRIPT

wait_job_final "$JOB_ID" 90
expect_eq "sacct state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
out=$(<"$output")
log "job output:"$'\n'"$out"
grep -q 'failed' <<<"$out" && fail "an appliance job failed"
# The train job runs 1 s after submission; one poll interval (1 s) later the agent must know.
# The slack (0.9 s) is for a loaded machine: the job's own polling of `accelctl job` and the
# fake's start-up; a poll interval missed would show as 3 s or more.
seen=$(sed -n 's/^running seen after \([0-9.]*\) s$/\1/p' <<<"$out")
[[ -n $seen ]] || fail "the agent never showed the train job running"
(($(echo "$seen <= 1 + 1 + 0.9" | bc))) ||
    fail "the agent saw the train job running only after $seen s (queue 1 s + poll interval 1 s)"
expect_eq "final view: compile and train succeeded" 'final [["succeeded",0],["succeeded",1]]' \
    "$(grep '^final ' <<<"$out")"
# 1 s of compile plus 4 s of training; the 1.2 s in the queue do not count.
secs=$(sed -n 's/^seconds \([0-9.]*\)$/\1/p' <<<"$out")
(($(echo "$secs >= 4.8 && $secs <= 5.6" | bc))) || fail "appliance seconds $secs, expected about 5"
log "PASS"
