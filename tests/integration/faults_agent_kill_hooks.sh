#!/usr/bin/env bash
# accel-agentd killed with SIGKILL during an IPU job's epilog and during another's prolog,
# restarted each time by its supervisor as systemd's Restart=on-failure would. The fake V-IPU controller takes 1.5 s per create and remove, so
# the prolog and the epilog last long enough to be hit; where in them the kill lands is
# drawn from the seed.
#  - epilog: the hook loses its daemon mid-request, which is a node fault (operator guide:
#    exit 1): the node is drained ("Epilog error"); the restarted agent finishes the epilog;
#  - prolog: the same, Slurm requeues the job held (it is cancelled here) and drains the
#    node; the restarted agent rolls the prolog back (the epilog that follows at once may
#    find the agent still down and fail as well).
# Nothing is left behind, and the aggregator must learn how each job ended: one
# epilog_finished each.
# After each: nothing left and every event once (faults_lib.sh).
# shellcheck source=tests/integration/faults_lib.sh
source "$(dirname -- "$0")/faults_lib.sh"

faults_init

tag=faults-agent-$$
delay_ms=1500
faults_vipu_rules "create delay $delay_ms" "remove delay $delay_ms"

# wait_vipu_call OP JOB N SINCE: waits until the N-th `vipu OP partition pJOB` call since line SINCE.
wait_vipu_call() {
    local deadline=$((SECONDS + 30))
    until (($(faults_vipu_calls_since "$4" | grep -c " $1 partition p$2\\b" || true) >= $3)); do
        ((SECONDS <= deadline)) || fail "no call 'vipu $1 partition p$2' (number $3) within 30 s"
        sleep 0.02
    done
}

sleep_ms() { sleep "$(bc <<<"scale=3; $1 / 1000")"; }

# --- during the epilog: one remove of 1.5 s ----------------------------------------------------
since=$(faults_vipu_calls_count)
faults_submit "$tag-epilog" --ipus=2
job=$JOB_ID
faults_wait_started "$tag-epilog" 60
offset=$((100 + RANDOM % (delay_ms - 200)))
faults_release "$tag-epilog"
wait_vipu_call remove "$job" 1 "$since"
sleep_ms "$offset"
faults_kill_agent "epilog of job $job, $offset ms after its controller call"
faults_expect_drained "Epilog error"

# --- during the prolog: its create, of 1.5 s ---------------------------------------------------
since=$(faults_vipu_calls_count)
faults_submit "$tag-prolog" --ipus=2
job=$JOB_ID
offset=$((100 + RANDOM % (delay_ms - 200)))
wait_vipu_call create "$job" 1 "$since"
sleep_ms "$offset"
faults_kill_agent "prolog of job $job, $offset ms after its first controller call"
# The epilog that follows may find the agent still down, which drains the node as well.
faults_expect_drained "error"
scancel "$job"
faults_wait_left_queue "$job" 30

faults_clear_vipu
faults_check_all
log "PASS"
