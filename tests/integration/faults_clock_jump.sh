#!/usr/bin/env bash
# The wall clock jumps under the node agent, and only under it: the machine's clock is never
# touched. The agent is restarted under libfaketime (Debian package faketime), whose offset
# it reads from a file at every call, limited to the accel-agentd process (the vendor clients
# and everything else keep the true time) and to CLOCK_REALTIME (the monotonic clock does not
# jump, as with an NTP step). Two jobs of the test user run across the jumps:
#  - an IPU job: the clock jumps forward by an hour while it runs, then back by two hours
#    before it ends; it completes, its epilog cleans everything, every event arrives once;
#  - an appliance job with a 3 s appliance limit whose appliance work runs for 120 s: the
#    clock jumps forward by an hour once the agent has seen the appliance work start; the limit must
#    still act after about 3 s of appliance time (not at once, and not never).
#    faults_clock_jump_queued.sh jumps while the appliance job is still queued instead.
# The events the agent streamed after the jump carry the jumped time, which proves the offset
# reached it.
# shellcheck source=tests/integration/faults_lib.sh
source "$(dirname -- "$0")/faults_lib.sh"

faults_init
preload=$(dpkg -L libfaketime 2>/dev/null | grep '/libfaketimeMT\.so\.1$' | head -n 1) || true
[[ -r $preload ]] || fail "libfaketime is not installed (Debian package faketime; scripts/bootstrap)"

tag=faults-clock-$$
offset_file=$(mktemp /tmp/faults-clock.XXXXXX)
chmod 644 "$offset_file"
echo "+0" >"$offset_file"
jump() {
    echo "$1" >"$offset_file.tmp" && mv -f "$offset_file.tmp" "$offset_file"
    log "the agent's wall clock is now offset by $1 s"
}

# An ASan build refuses a library loaded before its runtime unless told to allow it.
asan=ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
agent_env="LD_PRELOAD=$preload FAKETIME_TIMESTAMP_FILE=$offset_file FAKETIME_NO_CACHE=1"
agent_env+=" FAKETIME_DONT_FAKE_MONOTONIC=1 FAKETIME_ONLY_CMDS=accel-agentd $asan"
# libfaketime gives every process it is loaded in (the agent and the helpers it spawns) a
# shared-memory segment and a semaphore named after its pid, and removes them only at a
# normal exit; those of processes gone without one are removed here, so the test leaves
# nothing behind.
shm_marker=$(mktemp /tmp/faults-clock-shm.XXXXXX)
remove_faketime_shm() {
    local f pid deadline=$((SECONDS + 10))
    for f in /dev/shm/faketime_shm_* /dev/shm/sem.faketime_sem_*; do
        [[ -e $f && $f -nt $shm_marker ]] || continue
        pid=${f##*_}
        [[ $pid =~ ^[0-9]+$ ]] || continue
        # The stopped agent's helpers may take a moment to go.
        while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
        if kill -0 "$pid" 2>/dev/null; then
            printf '%s: pid %s (%s) outlived the agent under libfaketime\n' "$TEST_NAME" "$pid" \
                "$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" >&2
        else
            rm -f -- "$f"
        fi
    done
    rm -f "$shm_marker"
}
restart_plain() {
    "$SANDBOX_SCRIPT" restart agentd >/dev/null || printf '%s: could not restart accel-agentd\n' "$TEST_NAME" >&2
    rm -f "$offset_file"
    remove_faketime_shm
}
faults_on_exit restart_plain
ACCEL_SANDBOX_AGENT_ENV=$agent_env "$SANDBOX_SCRIPT" restart agentd >/dev/null ||
    fail "accel-agentd did not start under libfaketime"
FAULT_AGENT_STARTS=$((FAULT_AGENT_STARTS + 1))
grep -q faketime "/proc/$(faults_agent_pid)/maps" || fail "libfaketime is not loaded in accel-agentd"
log "accel-agentd runs under libfaketime (pid $(faults_agent_pid))"

# --- an IPU job across a forward and a backward jump -------------------------------------------
if [[ ${FAULT_CLOCK_IPU_JOB:-yes} == yes ]]; then
faults_submit "$tag-ipu" --ipus=2
ipu_job=$JOB_ID
faults_wait_started "$tag-ipu" 60
jump +3600
accelctl status >/dev/null || fail "accel-agentd does not answer after the jump"
expect_eq "job $ipu_job after a jump forward" Ready "$(accelctl job "$ipu_job" --json | jq -r .state)"
jump -3600
faults_release "$tag-ipu"
wait_job_final "$ipu_job" 60
expect_eq "IPU job: sacct state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
faults_wait_left_queue "$ipu_job" 30
# The epilog's event carries the agent's time: an hour behind the true one.
faults_check_events
t=$(accelctl events --database "$FAULT_AGG_DB" --job "$ipu_job" --json |
    jq -r 'select(.kind == "epilog_finished") | .time')
skew=$(($(date +%s) - $(date -d "$t" +%s)))
((skew > 3000 && skew < 4200)) || fail "epilog_finished of job $ipu_job is stamped $t, $skew s from now; the jump did not reach the agent"
log "ok: the agent stamped job $ipu_job's epilog $skew s in the past"
jump +0
fi

# --- an appliance limit across a forward jump --------------------------------------------------
output=$TEST_HOME/$tag-limit.out
faults_on_exit rm -f "$output"
submit -J "$tag-limit" -o "$output" --time=5 --job-time-sec=3 <<'SCRIPT'
#!/bin/bash
trap 'echo "term $(date +%s.%N)"; exit 143' TERM
fake-appliance-job --csx 1 --queue-seconds 1 --run-seconds 120 >/dev/null &
echo "launched $(date +%s.%N)"
while kill -0 $! 2>/dev/null; do wait $!; done
SCRIPT
FAULT_JOBS+=("$JOB_ID")
limit_job=$JOB_ID
deadline=$((SECONDS + 60))
until launched=$(sed -n 's/^launched //p' "$output" 2>/dev/null) && [[ -n $launched ]]; do
    ((SECONDS <= deadline)) || fail "job $limit_job did not launch its appliance job"
    sleep 0.1
done
# The appliance work starts 1 s after the launch. The jump comes once the agent has seen it
# run (and armed the limit), or FAULT_CLOCK_JUMP_AT seconds after the launch.
if [[ -n ${FAULT_CLOCK_JUMP_AT:-} ]]; then
    sleep "$(bc <<<"scale=3; x = $launched + $FAULT_CLOCK_JUMP_AT - $(date +%s.%N); if (x < 0) 0 else x")"
else
    until [[ $(accelctl job "$limit_job" --json | jq -r '[.appliance_jobs[].state] | join(" ")') == *[Rr][Uu][Nn]* ]]; do
        ((SECONDS <= deadline)) || fail "the agent never saw job $limit_job's appliance work run"
        sleep 0.05
    done
    sleep 0.2
fi
jump +3600
wait_job_final "$limit_job" 60
term=$(sed -n 's/^term //p' "$output")
[[ -n $term ]] || fail "no SIGTERM reached job $limit_job's task (output: $(tr '\n' ' ' <"$output"))"
t=$(bc <<<"$term - $launched")
log "SIGTERM $t s after the launch (1 s queue + 3 s limit)"
(($(bc <<<"$t >= 3.5 && $t <= 6.5"))) ||
    fail "SIGTERM came $t s after the launch, expected about 4: the jump moved the appliance limit"
wait_comment "$limit_job" 30
expect_eq "appliance job: summary result" time_limit "$(summary_of "$COMMENT" | jq -r .result)"
jump +0
faults_check_all
faults_expect_node_in_service
log "PASS"
