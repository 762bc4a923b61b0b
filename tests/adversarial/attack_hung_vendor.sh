#!/usr/bin/env bash
# Issue 17, point 6 (docs/security.md: vendor control planes): a vendor program that never
# answers while it works for one user's job. The attacker's job has 2 s of appliance time; at
# its limit the agent runs `csctl cancel job` for its appliance job, and that call hangs (the
# fake appliance client's `cancel hang once` rule stands for whatever makes the real client
# hang). A victim's job with 3 s of appliance time, submitted at the same moment, must still be
# stopped at its own limit: its appliance job cancelled by the agent while the attacker's
# cancel still hangs, so no job's stuck vendor call holds up another's. The hung client is
# killed at its bound (ApplianceTimeout) and the attacker's appliance job still ends
# cancelled; both jobs end with a time_limit summary, and the node stays in service.
# shellcheck source=tests/adversarial/adv_lib.sh
source "$(dirname -- "$0")/adv_lib.sh"

adv_setup_held 240
faults=$ACCEL_HW_MOCK_STATE/appliance/faults
[[ -d ${faults%/*} ]] || fail "no fake appliance state at ${faults%/*}"
rm -rf "$faults" "$faults.fired"
on_exit rm -rf -- "$faults" "$faults.fired"
echo "cancel hang once" >"$faults"
chmod 644 "$faults"

# On a node of two CPUs (CI's) the victim's job waits for the attacker's to end, as adv_setup's
# job holds the other CPU; its 3 s limit still comes well within the hang (ApplianceTimeout,
# 10 s). With more CPUs both jobs start, and launch their appliance job, at once.
# The launcher submits and leaves (--detach):
# every process of the job gets SIGTERM at the limit, and a launcher still there would cancel
# its appliance job itself; this way only the agent's cancel ends it. The job script ends at
# that SIGTERM.
# shellcheck disable=SC2016 # expanded by the job, not here
script='#!/bin/bash
fake-appliance-job --detach --csx 1 --queue-seconds 0 --run-seconds 60 \
    >"$HOME/hung-vendor-$SLURM_JOB_ID.id" </dev/null
sleep 60
'
submit -o /dev/null --job-time-sec=2 <<<"$script"
attacker=$JOB_ID
out=$(as_victim timeout 30 sbatch --parsable -o /dev/null --job-time-sec=3 <<<"$script") ||
    fail "the victim's sbatch failed"
limited=${out%%;*}
log "attacker job $attacker (2 s of appliance time), victim job $limited (3 s)"
on_exit rm -f -- "$TEST_HOME/hung-vendor-$attacker.id" "$VICTIM_HOME/hung-vendor-$limited.id"

# The appliance job id a launcher printed, once it has.
appliance_id() {
    local file=$1 id='' deadline=$((SECONDS + 60))
    while ((SECONDS <= deadline)); do
        id=$(head -1 "$file" 2>/dev/null || true)
        [[ $id == wsjob-* ]] && { echo "$id"; return 0; }
        sleep 0.2
    done
    fail "no appliance job id in $file after 60 s"
}
att_appl=$(appliance_id "$TEST_HOME/hung-vendor-$attacker.id")
vic_appl=$(appliance_id "$VICTIM_HOME/hung-vendor-$limited.id")
log "appliance jobs: attacker $att_appl, victim $vic_appl"

hung_cancel() { pgrep -f "csctl cancel job $att_appl\$" || true; }
state_of() {
    csctl get jobs -o json | jq -r --arg id "$1" '.items[] | select(.name == $id) | .state'
}

# The attacker's limit comes first: its cancel starts and hangs.
deadline=$((SECONDS + 30))
until [[ -n $(hung_cancel) ]]; do
    ((SECONDS < deadline)) || fail "no hanging 'csctl cancel job $att_appl' within 30 s"
    sleep 0.1
done
hang_seen=$SECONDS
log "the agent's 'csctl cancel job $att_appl' hangs"

# The victim's limit is enforced meanwhile, by the agent's own cancel.
calls=$ACCEL_HW_MOCK_STATE/appliance/calls.log
deadline=$((SECONDS + 30))
until [[ $(state_of "$vic_appl") == CANCELLED ]] && grep -q "^csctl cancel job $vic_appl\$" "$calls"; do
    ((SECONDS < deadline)) || fail "the victim's $vic_appl is $(state_of "$vic_appl") 30 s into the hang"
    sleep 0.1
done
[[ -n $(hung_cancel) ]] ||
    fail "the victim's $vic_appl was cancelled only after the attacker's hung cancel had ended"
log "ok: the victim's $vic_appl was cancelled by the agent $((SECONDS - hang_seen)) s into the hang, which goes on"

# The hung client is killed at its bound (ApplianceTimeout), and the attacker's appliance job
# is cancelled all the same (the agent's retry, or the end of its surrogate step).
deadline=$((SECONDS + 30))
while [[ -n $(hung_cancel) ]]; do
    ((SECONDS < deadline)) || fail "'csctl cancel job $att_appl' still hangs $((SECONDS - hang_seen)) s on"
    sleep 0.2
done
log "ok: the hung client is gone $((SECONDS - hang_seen)) s after it was seen"
deadline=$((SECONDS + 30))
until [[ $(state_of "$att_appl") == CANCELLED ]]; do
    ((SECONDS < deadline)) || fail "the attacker's $att_appl is $(state_of "$att_appl") after the hang"
    sleep 0.2
done
log "ok: the attacker's $att_appl is cancelled too"

for job in "$attacker" "$limited"; do
    wait_job_final "$job" 120
    [[ $JOB_FINAL != NODE_FAIL* ]] || fail "job $job ended $JOB_FINAL"
    wait_comment "$job" 60
    result=$(jq -r .result <<<"$(summary_of "$COMMENT")")
    expect_eq "job $job's summary" "time_limit" "$result"
done
adv_assert_unharmed
log "PASS"
