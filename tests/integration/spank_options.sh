#!/usr/bin/env bash
# Each option of spank_accel.so works through sbatch, salloc and srun: the commands list it in
# --help, accept valid values, and the Prolog receives them (accel-agentd's record of the
# running job holds what `accelctl prolog` handed over). ApplianceTimeDefault applies to a job
# that gives no time limit.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"
# shellcheck source=tests/integration/spank_lib.sh
source "$(dirname -- "$0")/spank_lib.sh"

require_root
require_sandbox
ensure_test_user
require_accel_plugin
require_agent
use_submit_limits

for tool in sbatch salloc srun; do
    help=$(as_test_user "$tool" --help) || fail "$tool --help failed"
    for opt in "--ipus=N" "--num-replicas=N" "--appliance-time=TIME" "--job-time-sec=SECONDS" \
        "--appliance-signal=[B:]SIG[@SECONDS]"; do
        grep -qF -- "$opt" <<<"$help" || fail "$tool --help does not list $opt"
    done
    log "ok: $tool --help lists the five options"
done

# expect_record JOB KEY=VALUE...: the daemon's record of the running job holds these values.
expect_record() {
    local job=$1 pair
    shift
    wait_record "$job"
    for pair in "$@"; do
        expect_eq "job $job: ${pair%%=*}" "${pair#*=}" "$(record_value "$job" "${pair%%=*}")"
    done
}

# start_job TOOL NAME OPTIONS...: starts a job that sleeps a few seconds, as the test user,
# and sets JOB to its id once it runs. salloc and srun block until their command ends, so
# they run in the background (BG_PID) while the test looks at the job.
start_job() {
    local tool=$1 name=$2
    shift 2
    BG_PID=
    if [[ $tool == sbatch ]]; then
        submit -J "$name" -n 2 -o /dev/null "$@" <<<$'#!/bin/sh\nsleep 5'
        JOB=$JOB_ID
        return 0
    fi
    as_test_user timeout 120 "$tool" -J "$name" -n 2 "$@" sleep 5 >/dev/null 2>&1 &
    BG_PID=$!
    JOB=$(wait_running "$name")
    log "$tool started job $JOB"
}

# finish_job TOOL: the job ends well (and salloc or srun exit 0).
finish_job() {
    local rc=0
    if [[ -n $BG_PID ]]; then
        wait "$BG_PID" || rc=$?
        expect_eq "$1 exit status" 0 "$rc"
    fi
    wait_job_final "$JOB" 60
    expect_eq "sacct state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
}

# Every option through every command, in two jobs each: one with both IPU options, the Slurm
# time form and a signal with a lead (to the steps); one with the seconds form and a signal by
# its SIG name, for the batch shell (B:).
for tool in sbatch salloc srun; do
    start_job "$tool" "$(unique_name "$tool")" --ipus=8 --num-replicas=2 --appliance-time=10:00 \
        --appliance-signal=usr1@30
    expect_record "$JOB" ipus=8 num_replicas=2 appliance_time_sec=600 appliance_signal=10 \
        appliance_signal_lead_sec=30 appliance_signal_batch=false
    finish_job "$tool"

    start_job "$tool" "$(unique_name "$tool-sec")" --ipus 4 --num-replicas 4 --job-time-sec=900 \
        --appliance-signal=B:SIGTERM
    expect_record "$JOB" ipus=4 num_replicas=4 appliance_time_sec=900 appliance_signal=15 \
        appliance_signal_lead_sec=60 appliance_signal_batch=true
    finish_job "$tool"
done

# A job that gives no limit gets the site's default; an explicit limit still wins.
add_submit_setting ApplianceTimeDefault=30
name=$(unique_name default)
submit -J "$name" -o /dev/null <<<$'#!/bin/sh\nsleep 3'
expect_record "$JOB_ID" ipus=0 appliance_time_sec=1800 appliance_signal=0
wait_job_final "$JOB_ID" 60
expect_eq "sacct state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
name=$(unique_name default-override)
submit -J "$name" -o /dev/null --appliance-time=5 <<<$'#!/bin/sh\nsleep 3'
expect_record "$JOB_ID" appliance_time_sec=300
wait_job_final "$JOB_ID" 60

expect_node_in_service
log "PASS"
