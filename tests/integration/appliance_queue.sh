#!/usr/bin/env bash
# Time in the appliance queue does not count against the appliance limit (issue 8): a job with
# a 5 s appliance limit whose appliance job waits 10 s in the appliance queue (twice the
# limit), then runs. Had the queue counted, SIGTERM would come 5 s after the launch, with the
# appliance job still queued; it comes about 15 s after it, 5 s into the run, and the agent
# cancels the appliance job, which ran for about 5 s.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user

tag=appliance-queue-$$-$RANDOM
output=$TEST_HOME/$tag.out
trap 'rm -f "$output"' EXIT

submit -J "$tag" -o "$output" --time=5 --appliance-time=0:05 <<'SCRIPT'
#!/bin/bash
now() { date +%s.%N; }
trap 'echo "term $(now)"; exit 143' TERM
echo "launched $(now)"
fake-appliance-job --csx 1 --queue-seconds 10 --run-seconds 120 &
while kill -0 $! 2>/dev/null; do wait $!; done
echo "launcher ended $(now)"
SCRIPT

wait_job_final "$JOB_ID" 100
out=$(<"$output")
log "job output:"$'\n'"$out"
at() { sed -n "s/^$1 \\([0-9.]*\\)$/\\1/p" <<<"$out" | head -1; }
launched=$(at launched) term=$(at term)
[[ -n $launched ]] || fail "the job script never started"
[[ -n $term ]] || fail "no SIGTERM reached the job's task"
t=$(echo "$term - $launched" | bc)
log "SIGTERM $t s after the launch (queue 10 s + limit 5 s)"
(($(echo "$t >= 14.5 && $t <= 17" | bc))) || fail "SIGTERM after $t s, expected about 15"

# The appliance's own record: queued about 10 s, then cancelled about 5 s into its run.
record=$(csctl get jobs -o json -l "slurm-job-id=$JOB_ID" | jq -c '.items[0]')
log "appliance job: $record"
expect_eq "appliance job state" "CANCELLED" "$(jq -r .state <<<"$record")"
secs() { date -d "$(jq -r ".$1" <<<"$record")" +%s.%N; }
queued=$(echo "$(secs startTime) - $(secs createTime)" | bc)
ran=$(echo "$(secs endTime) - $(secs startTime)" | bc)
log "queued $queued s, ran $ran s"
(($(echo "$queued >= 9.5 && $queued <= 10.5" | bc))) || fail "queued $queued s, expected 10"
(($(echo "$ran >= 4.9 && $ran <= 7" | bc))) || fail "ran $ran s before the cancel, expected 5"
log "PASS"
