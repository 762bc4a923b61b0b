#!/usr/bin/env bash
# accel-agentd killed with SIGKILL while an IPU job runs (partition, IPUoF files, fabric
# address, job directory), twice, and restarted each time by its supervisor as systemd's
# Restart=on-failure would; when the kills land is drawn from the seed. Nothing the user sees
# changes: the job is re-adopted, completes, and its epilog cleans everything; every event of
# the three agent epochs arrives once (faults_lib.sh). The kills during the prolog and the
# epilog are faults_agent_kill_hooks.sh.
# shellcheck source=tests/integration/faults_lib.sh
source "$(dirname -- "$0")/faults_lib.sh"

faults_init

tag=faults-agent-$$

sleep_ms() { sleep "$(bc <<<"scale=3; $1 / 1000")"; }

faults_submit "$tag-running" --ipus=2
job=$JOB_ID
faults_wait_started "$tag-running" 60
sleep_ms $((RANDOM % 1000))
faults_kill_agent "job $job running"
sleep_ms $((RANDOM % 2000))
faults_kill_agent "job $job running, again"
expect_eq "job $job after the restart" Ready "$(accelctl job "$job" --json | jq -r .state)"
faults_release "$tag-running"
wait_job_final "$job" 60
expect_eq "job $job: sacct state|exit code" "COMPLETED|0:0" "$JOB_FINAL"

faults_check_all
faults_expect_node_in_service
log "PASS"
