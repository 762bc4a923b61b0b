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

# Each job runs until the test has looked at it: it waits for a file named after it in
# $GO_DIR, which release_job creates. It ends all the same after 60 s, or as soon as $GO_DIR
# is gone (removed with $SUBMIT_DIR when the test ends, however it ends).
GO_DIR=$SUBMIT_DIR/go
mkdir "$GO_DIR"
chown "$TEST_USER" "$GO_DIR"
held_cmd() {
    printf '%s' "n=0; while [ -d $GO_DIR ] && [ ! -e $GO_DIR/$1 ] && [ \$n -lt 300 ]; do" \
        " sleep 0.2; n=\$((n + 1)); done"
}
release_job() { : >"$GO_DIR/$1"; }

# start_job TOOL NAME OPTIONS...: starts a job that runs until release_job NAME, as the test
# user, and sets JOB to its id once it runs. salloc and srun block until their command ends,
# so they run in the background (BG_PID) while the test looks at the job.
start_job() {
    local tool=$1 name=$2
    shift 2
    BG_PID=
    JOB_NAME=$name
    if [[ $tool == sbatch ]]; then
        submit -J "$name" -n 2 -o /dev/null "$@" <<<"#!/bin/sh"$'\n'"$(held_cmd "$name")"
        JOB=$JOB_ID
        return 0
    fi
    as_test_user timeout 120 "$tool" -J "$name" -n 2 "$@" sh -c "$(held_cmd "$name")" \
        >/dev/null 2>&1 &
    BG_PID=$!
    JOB=$(wait_running "$name")
    log "$tool started job $JOB"
}

# finish_job TOOL: lets the job go; it ends well (and salloc or srun exit 0).
finish_job() {
    local rc=0
    release_job "$JOB_NAME"
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
submit -J "$name" -o /dev/null <<<"#!/bin/sh"$'\n'"$(held_cmd "$name")"
expect_record "$JOB_ID" ipus=0 appliance_time_sec=1800 appliance_signal=0
release_job "$name"
wait_job_final "$JOB_ID" 60
expect_eq "sacct state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
name=$(unique_name default-override)
submit -J "$name" -o /dev/null --appliance-time=5 <<<"#!/bin/sh"$'\n'"$(held_cmd "$name")"
expect_record "$JOB_ID" appliance_time_sec=300
release_job "$name"
wait_job_final "$JOB_ID" 60

expect_node_in_service
log "PASS"
