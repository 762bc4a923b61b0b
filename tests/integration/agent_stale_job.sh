#!/usr/bin/env bash
# A job whose epilog never reached the agent: accel-agentd is stopped while an ordinary
# user's IPU job runs, the job is cancelled (slurmd's Epilog fails, the node is drained, as
# it must be: the job's partition and files are still there). When the agent comes back it
# asks slurmctld about the jobs it re-adopted, finds this one over, and removes what its
# prolog made: record, IPUoF directory, V-IPU partition. The job's summary still reaches
# sacct. The test resumes the node it drained.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"
# shellcheck source=tests/integration/spank_lib.sh
source "$(dirname -- "$0")/spank_lib.sh"

require_root
require_sandbox
ensure_test_user
require_agent

node=$(sinfo -h -o %N | head -n 1)
[[ -n $node ]] || fail "sinfo names no node"
tag=$(unique_name stale)
resume_node() {
    scontrol update nodename="$node" state=resume >/dev/null 2>&1 || true
}
JOB_ID=''
cancel_job() { [[ -z $JOB_ID ]] || scancel "$JOB_ID" 2>/dev/null; }
on_exit resume_node
on_exit cancel_job
has_partition() {
    local list
    list=$(vipu list partitions --json) || fail "the fake vipu cannot list partitions"
    [[ $(tr -d ' \n' <<<"$list") == *"\"id\":\"p$1\""* ]]
}

submit --job-name="$tag" --output=/dev/null --ipus=2 -n 2 <<'SCRIPT'
#!/bin/bash
sleep 300
SCRIPT
wait_running "$tag" 60 >/dev/null
wait_record "$JOB_ID"
has_partition "$JOB_ID" || fail "job $JOB_ID runs without its partition p$JOB_ID"
ipuof=$ACCEL_SANDBOX_DIR/run/ipuof/$JOB_ID
[[ -d $ipuof ]] || fail "job $JOB_ID runs without its IPUoF directory $ipuof"

stop_agent
scancel "$JOB_ID" || fail "scancel $JOB_ID failed"
deadline=$((SECONDS + 60))
while [[ -n $(squeue -h -j "$JOB_ID" -o %T 2>/dev/null) ]]; do
    ((SECONDS <= deadline)) || fail "job $JOB_ID is still queued 60 s after scancel"
    sleep 0.2
done
# What slurmd's failed Epilog left: without the agent's sweep these stay for good.
[[ -r $AGENT_RUN_DIR/state/$JOB_ID.json ]] || fail "the record of job $JOB_ID went away without the agent"
has_partition "$JOB_ID" || fail "partition p$JOB_ID went away without the agent"
log "job $JOB_ID ended while the agent was down; its record and partition p$JOB_ID remain"

start_agent
deadline=$((SECONDS + 30))
while [[ -e $AGENT_RUN_DIR/state/$JOB_ID.json ]] || has_partition "$JOB_ID" || [[ -e $ipuof ]]; do
    ((SECONDS <= deadline)) || fail "30 s after the agent came back, job $JOB_ID still has" \
        "$( [[ -e $AGENT_RUN_DIR/state/$JOB_ID.json ]] && echo ' its record')" \
        "$(has_partition "$JOB_ID" && echo ' its partition')$( [[ -e $ipuof ]] && echo ' its IPUoF directory')"
    sleep 0.2
done
log "ok: the agent cleaned the ended job $JOB_ID on its return"
[[ -z $(accelctl jobs --json | jq -r --argjson j "$JOB_ID" '.[] | select(.job_id == $j) | .job_id') ]] ||
    fail "accelctl jobs still lists job $JOB_ID"
wait_comment "$JOB_ID" 30
log "ok: summary of job $JOB_ID: $(summary_of "$COMMENT")"

resume_node
expect_node_in_service
log "PASS"
