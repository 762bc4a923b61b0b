#!/usr/bin/env bash
# An appliance job launched from a job that holds two nodes of the three-node sandbox: every
# node's agent sees it in the one shared appliance, but the Slurm job gets exactly one
# surrogate step for it, and the summary counts its appliance time once (not once per node).
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user

sandbox_nodes 2

tag=mn-appliance-$$-$RANDOM
output=$TEST_HOME/$tag.out
trap 'rm -f "$output"' EXIT

submit -J "$tag" -o "$output" -w "${nodes[0]},${nodes[1]}" -N 2 --appliance-time=60 <<'SCRIPT'
#!/bin/bash
echo "train $(fake-appliance-job --csx 1 --queue-seconds 0.2 --run-seconds 4 | head -1)"
# Both nodes' agents poll the appliance once a second; give each of them several polls.
sleep 3
SCRIPT

wait_job_final "$JOB_ID" 120
out=$(<"$output")
log "job output:"$'\n'"$out"
expect_eq "sacct state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
train=$(sed -n 's/^train \(wsjob-[a-z0-9]*\)$/\1/p' <<<"$out")
[[ -n $train ]] || fail "the job script printed no appliance job id"

steps=$(as_test_user sacct -n -P -j "$JOB_ID" -o JobID,JobName,State | grep -v -e '\.batch|' -e '\.extern|' |
    grep '\.' || true)
log "steps:"$'\n'"$steps"
expect_eq "surrogate steps of the two-node job" 1 "$(grep -c "|$train-csx1|" <<<"$steps" || true)"
expect_eq "its state" "COMPLETED" "$(awk -F'|' -v n="$train-csx1" '$2 == n { print $3 }' <<<"$steps")"

wait_comment "$JOB_ID" 30
json=$(summary_of "$COMMENT")
log "summary: $json"
expect_eq "summary: result, kind, surrogate steps, nodes" \
    "ok appliance 1 ${nodes[0]},${nodes[1]}" \
    "$(jq -r '"\(.result) \(.accel) \(.surrogate_steps) \(.nodes | join(","))"' <<<"$json")"
# Four seconds of appliance time, give or take a poll interval: twice that would mean it was
# summed over the two nodes.
used=$(jq -r '.appliance_s' <<<"$json")
((used >= 3 && used <= 6)) || fail "appliance_s is $used; the job used about 4 s of the appliance"
log "PASS"
