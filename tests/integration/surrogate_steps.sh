#!/usr/bin/env bash
# Surrogate steps (seed 000): a job script runs a compile appliance job, then a train job on one
# CS-X, then a train job that fails. The node agent mirrors each as a step of the job, started
# with srun as the job's user: named after the appliance job (with -csx1 for the train jobs),
# COMPLETED when the appliance job succeeded and FAILED when it failed. Then scancel of a
# surrogate step cancels its appliance job.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user

tag=surrogate-$$-$RANDOM
output=$TEST_HOME/$tag.out
trap 'rm -f "$output"' EXIT

submit -J "$tag" -o "$output" --time=5 <<'SCRIPT'
#!/bin/bash
echo "compile $(fake-appliance-job --csx 0 --queue-seconds 0.2 --run-seconds 2 | head -1)"
echo "train $(fake-appliance-job --csx 1 --queue-seconds 0.5 --run-seconds 3 | head -1)"
echo "bad $(fake-appliance-job --csx 1 --queue-seconds 0.2 --run-seconds 2 --fail | head -1)"
# The steps end one poll interval after their appliance jobs; leave them time to.
sleep 3
SCRIPT

wait_job_final "$JOB_ID" 120
out=$(<"$output")
log "job output:"$'\n'"$out"
expect_eq "sacct state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
id() { sed -n "s/^$1 \\(wsjob-[a-z0-9]*\\)\$/\\1/p" <<<"$out"; }
compile=$(id compile) train=$(id train) bad=$(id bad)
[[ -n $compile && -n $train && -n $bad ]] || fail "the job script did not print three appliance job ids"

steps=$(as_test_user sacct -n -P -j "$JOB_ID" -o JobID,JobName,State | grep -v -e '\.batch|' -e '\.extern|' |
    grep '\.' || true)
log "steps:"$'\n'"$steps"
step_state() { awk -F'|' -v n="$1" '$2 == n { print $3 }' <<<"$steps"; }
expect_eq "compile step" "COMPLETED" "$(step_state "$compile")"
expect_eq "train step" "COMPLETED" "$(step_state "$train-csx1")"
expect_eq "failing train step" "FAILED" "$(step_state "$bad-csx1")"
expect_eq "surrogate steps" 3 "$(wc -l <<<"$steps")"

# scancel of a surrogate step ends its appliance job.
tag2=$tag-cancel
output2=$TEST_HOME/$tag2.out
trap 'rm -f "$output" "$output2"' EXIT
submit -J "$tag2" -o "$output2" --time=5 <<'SCRIPT'
#!/bin/bash
fake-appliance-job --csx 1 --queue-seconds 0.2 --run-seconds 60
echo "launcher exit $?"
SCRIPT
second=$JOB_ID
step=''
for _ in $(seq 100); do
    step=$(as_test_user sacct -n -P -j "$second" -o JobID,JobName | awk -F'|' '$2 ~ /^wsjob-.*-csx1$/ { print $1 }')
    [[ -n $step ]] && break
    sleep 0.2
done
[[ -n $step ]] || fail "job $second got no surrogate step within 20 s"
as_test_user scancel "$step"
wait_job_final "$second" 60
out2=$(<"$output2")
log "job output:"$'\n'"$out2"
expect_eq "the launcher saw its appliance job cancelled" "launcher exit 2" "$(grep '^launcher exit' <<<"$out2")"
log "PASS"
