#!/usr/bin/env bash
# Every finished job gets its accel= summary in AdminComment, written by accel-aggregatord from
# the events the node agent streamed: what another tool put there first is kept, and a job
# that ended while the aggregator was stopped gets its summary once it is back.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user

agg_pid() { read -r pid _ <"$ACCEL_SANDBOX_DIR/state/pids/aggregatord" && echo "$pid"; }

# 1. Another tool's JS1: segment, set while the job runs, survives the summary.
submit -J "acct-$$" -o /dev/null <<<$'#!/bin/sh\nsleep 3'
job=$JOB_ID
deadline=$((SECONDS + 30))
until [[ $(squeue -h -j "$job" -o %T) == RUNNING ]]; do
    ((SECONDS <= deadline)) || fail "job $job did not start"
    sleep 0.2
done
scontrol update jobid="$job" AdminComment="JS1:kept" || fail "could not set AdminComment"
wait_job_final "$job" 60
expect_eq "sacct state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
wait_comment "$job" 20
log "AdminComment of job $job: $COMMENT"
[[ $COMMENT == 'JS1:kept;accel={'* ]] || fail "the JS1: segment was not kept in front: '$COMMENT'"
json=$(summary_of "$COMMENT")
expect_eq "format version" 1 "$(jq -r .v <<<"$json")"
expect_eq "result" ok "$(jq -r .result <<<"$json")"
expect_eq "nodes" "$(sinfo -h -o %N)" "$(jq -r '.nodes | join(",")' <<<"$json")"

# The aggregator's record of the job, through accelctl.
record=$(accelctl events --database "$ACCEL_SANDBOX_DIR/state/aggregator/events.db" --job "$job" --json) ||
    fail "accelctl events failed"
expect_eq "event kinds of job $job (first and last)" "prolog_started epilog_finished" \
    "$(jq -rs '"\(.[0].kind) \(.[-1].kind)"' <<<"$record")"

# 2. A job that ends while the aggregator is stopped gets its summary once it is back.
kill -TERM "$(agg_pid)" || fail "could not stop accel-aggregatord"
deadline=$((SECONDS + 20))
while grep -q '^aggregatord *up' <<<"$("$SANDBOX_SCRIPT" status 2>/dev/null || true)"; do
    ((SECONDS <= deadline)) || fail "accel-aggregatord did not stop"
    sleep 0.2
done
submit -J "acct-outage-$$" -o /dev/null <<<$'#!/bin/sh\nsleep 1'
job2=$JOB_ID
wait_job_final "$job2" 60
sleep 2
[[ $(sacct -n -P -X -j "$job2" -o AdminComment) != *accel=* ]] ||
    fail "job $job2 has a summary although the aggregator was stopped"
"$SANDBOX_SCRIPT" up >/dev/null || fail "slurm-sandbox up did not restart accel-aggregatord"
wait_comment "$job2" 30
log "after the outage, job $job2: $COMMENT"
expect_eq "result after the outage" ok "$(jq -r .result <<<"$(summary_of "$COMMENT")")"
log "PASS"
