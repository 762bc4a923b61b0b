#!/usr/bin/env bash
# Issue 17, point 4 (docs/security.md: job users): an appliance job is tied to its Slurm job
# by a label its submitter writes. The attacker submits appliance jobs labelled with the
# victim's Slurm job ids, while those jobs run: one with --ipus=1 (adv_setup's) and one with
# an appliance limit of 5 s. Had the agent believed the label, the limited job would be
# stopped at its limit (its budget burnt by the attacker's 12 s of appliance time), the
# agent would have made surrogate steps in the victim's jobs and cancelled the attacker's
# appliance job at the limit. Since the appliance reports the attacker as the owner, the
# agent ignores both entries and says so in its log: no step in either victim job, no
# appliance time on them, both COMPLETED with summaries ok.
# shellcheck source=tests/adversarial/adv_lib.sh
source "$(dirname -- "$0")/adv_lib.sh"

adv_setup_held 240
# The limited job runs until the attack is over (the file below, 120 s at most), so it is
# still there when the attacker's appliance jobs have run far past its limit.
limited_release=$VICTIM_HOME/.accel-limited-release-$$-$RANDOM
rm -f -- "$limited_release"
release_limited() { [[ -z $limited_release ]] || : >"$limited_release"; }
on_exit release_limited
out=$(as_victim timeout 30 sbatch --parsable --appliance-time=0:05 -o /dev/null \
    --wrap="$(held_script "$limited_release" 120)") || fail "the victim's second sbatch failed"
limited=${out%%;*}
log "victim job $limited (user $VICTIM_USER, appliance limit 5 s)"

# Both victim jobs ready on the node before the attack, so the agent polls for them.
wait_running() {
    local job=$1 state='' deadline=$((SECONDS + 60))
    while ((SECONDS <= deadline)); do
        state=$(as_victim squeue -h -j "$job" -o %T 2>/dev/null || true)
        [[ $state == RUNNING ]] && return 0
        sleep 0.2
    done
    fail "job $job is not running after 60 s (state '${state:-none}')"
}
wait_running "$VICTIM_JOB"
wait_running "$limited"

agent_log=$ACCEL_SANDBOX_DIR/log/agentd.out
[[ -f $agent_log ]] || fail "no agent log at $agent_log"
log_from=$(($(wc -l <"$agent_log") + 1))

# The attack: appliance jobs of the attacker that claim the victim's Slurm jobs, running 12 s
# on one CS-X each (past the 5 s limit and the 5 s of ApplianceKillGrace after it),
# submitted the way a job script does it.
pids=()
ids=()
for job in "$VICTIM_JOB" "$limited"; do
    as_test_user fake-appliance-job --csx 1 --queue-seconds 0 --run-seconds 12 \
        --label "slurm-job-id=$job" >"$TEST_HOME/attack-$job.out" 2>&1 &
    pids+=($!)
done
for p in "${pids[@]}"; do
    wait "$p" || fail "the attacker's appliance job did not succeed (exit $?); was it cancelled?"
done
for job in "$VICTIM_JOB" "$limited"; do
    appl=$(head -1 "$TEST_HOME/attack-$job.out")
    rm -f "$TEST_HOME/attack-$job.out"
    [[ $appl == wsjob-* ]] || fail "the attacker's launcher printed no appliance job id ('$appl')"
    ids+=("$appl")
    # The appliance itself names the attacker as the owner.
    owner=$(csctl get jobs -o json -l "slurm-job-id=$job" | jq -r --arg id "$appl" '.items[] | select(.name == $id) | .user')
    expect_eq "owner of $appl as the appliance reports it" "$TEST_USER" "$owner"
done

# The agent saw both, counted neither, and said why.
for i in 0 1; do
    job=$VICTIM_JOB
    ((i == 1)) && job=$limited
    tail -n +"$log_from" "$agent_log" | grep -q "appliance: job $job: ${ids[i]} of user '$TEST_USER' (uid $(id -u "$TEST_USER")) carries this job's label but is not its user's: ignored" ||
        fail "the agent log does not say that ${ids[i]} was ignored for job $job"
    ! grep -q "^csctl cancel job ${ids[i]}\$" "$ACCEL_HW_MOCK_STATE/appliance/calls.log" ||
        fail "the agent cancelled the attacker's ${ids[i]} for job $job"
done
log "ok: the agent ignored both mislabelled appliance jobs and said so"

release_limited
wait_job_final "$limited" 120
limited_release='' # removed by the job as it ended
expect_eq "the limited victim job" "COMPLETED|0:0" "$JOB_FINAL"
for job in "$VICTIM_JOB" "$limited"; do
    steps=$(as_victim sacct -n -P -j "$job" -o JobName | grep -c '^wsjob-' || true)
    expect_eq "surrogate steps in the victim's job $job" 0 "$steps"
done
wait_comment "$limited" 60
summary=$(summary_of "$COMMENT")
expect_eq "the limited victim job's result" "ok" "$(jq -r .result <<<"$summary")"
expect_eq "appliance seconds charged to the victim" 0 "$(jq -r .appliance_s <<<"$summary")"
expect_eq "its surrogate steps" 0 "$(jq -r .surrogate_steps <<<"$summary")"

adv_assert_unharmed
log "PASS"
