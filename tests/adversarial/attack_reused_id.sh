#!/usr/bin/env bash
# Attack (docs/security.md, reused job ids): a job id comes round again, as it does when
# MaxJobId wraps or slurmctld's state is lost. The attacker's job ends; the attacker then
# follows that job's events (`accelctl events --job J --follow`) and waits. Once slurmctld has
# forgotten the job (MinJobAge), root submits the victim's job under the same id through
# libslurm (raw_submit -i, what slurmctld does itself after a reset). The attacker must never
# see the victim's job: not through the follow, nor by asking for J afterwards; the victim
# sees exactly its own job's events under J; the attacker's summary in accounting stays what
# it was and the victim's job gets one of its own; the aggregator counts one reused id. Then
# the usual: no node drained, the other victim job (adv_setup's) right, the next job working.
# shellcheck source=tests/adversarial/adv_lib.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/adv_lib.sh"

raw_submit=$ACCEL_BUILD_DIR/tests/adversarial/tools/raw_submit
[[ -x $raw_submit ]] || fail "raw_submit is not built ($raw_submit)"
metrics_port=$(sed -n 's/^METRICS_PORT=//p' "$ACCEL_SANDBOX_DIR/state/ports")
[[ $metrics_port =~ ^[0-9]+$ ]] || fail "no METRICS_PORT in the sandbox's ports"

adv_setup 20
reused_before=$(aggregator_metric reused_job_ids_total 0)

# The attacker's job, over, with its summary written.
submit -o /dev/null --wrap='echo old; sleep 1' </dev/null
job=$JOB_ID
wait_job_final "$job" 60
wait_comment "$job" 60
old_comment=$COMMENT
old_events=$(as_test_user "$ACCELCTL" events --job "$job" 2>&1) ||
    fail "the attacker cannot read job $job: $old_events"
log "job $job: $(grep -c ' prolog_started ' <<<"$old_events") prolog, $(wc -l <<<"$old_events") events"

# The attacker follows the job's events from now on.
follow=$(mktemp)
on_exit rm -f -- "$follow"
as_test_user "$ACCELCTL" events --job "$job" --follow >"$follow" 2>&1 &
follower=$!
on_exit kill "$follower"

# slurmctld forgets the job (MinJobAge), then the id goes to the victim's job.
deadline=$((SECONDS + 90))
while scontrol show job "$job" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "slurmctld still holds job $job after 90 s"
    sleep 1
done
victim_ids=$(id -u "$VICTIM_USER"):$(id -g "$VICTIM_USER")
got=$(cd "$VICTIM_HOME" && "$raw_submit" -J reused -o /dev/null -i "$job" -u "$victim_ids" \
    "#!/bin/sh
echo new; sleep 2") || fail "root could not submit the victim's job as job $job: $got"
expect_eq "the reused id" "$job" "$got"
log "job $job given again, to $VICTIM_USER's job"

# The victim's job, over, with a summary of its own (sacct -D: both jobs under the id).
deadline=$((SECONDS + 90))
line=
while ((SECONDS < deadline)); do
    line=$(sacct -n -P -X -D -j "$job" -o User,State,AdminComment | grep "^$VICTIM_USER|" || true)
    [[ $line == *'|COMPLETED|'*accel=\{* ]] && break
    sleep 0.5
done
[[ $line == *'|COMPLETED|'*accel=\{* ]] ||
    fail "the victim's job $job has no COMPLETED record with a summary: '${line:-none}'"
new_comment=${line#*|*|}
[[ $(summary_of "$new_comment") == *'"result":"ok"'* ]] ||
    fail "the victim's summary is not ok: $new_comment"
attacker_line=$(sacct -n -P -X -D -j "$job" -o User,AdminComment | grep "^$TEST_USER|")
expect_eq "the attacker's summary in accounting" "$old_comment" "${attacker_line#*|}"
log "ok: each job under id $job has its own summary"

# The attacker saw only its own job, and sees nothing of the id now.
sleep 2
kill "$follower" 2>/dev/null || true # it may have ended: the id is no longer the attacker's
wait "$follower" 2>/dev/null || true
grep -q "$VICTIM_USER\|\"uid\":$(id -u "$VICTIM_USER")" "$follow" &&
    fail "the attacker's follow of job $job showed the victim's job: $(grep "$VICTIM_USER" "$follow")"
expect_eq "prologs the attacker's follow showed" 1 "$(grep -c ' prolog_started ' "$follow")"
if out=$(as_test_user "$ACCELCTL" events --job "$job" 2>&1); then
    fail "the attacker still reads job $job after the id went to the victim: $out"
fi
[[ $out == *"no events of job $job of yours"* ]] || fail "the attacker's refusal is not the usual one: $out"
log "ok: the attacker sees nothing of the victim's job"

# The victim sees its own job under the id, and nothing of the attacker's.
mine=$(as_victim "$ACCELCTL" events --job "$job" 2>&1) || fail "the victim cannot read job $job: $mine"
expect_eq "prologs the victim sees" 1 "$(grep -c ' prolog_started ' <<<"$mine")"
grep -q "\"user\":\"$VICTIM_USER\"" <<<"$mine" || fail "the victim's events are not its job's: $mine"
grep -q "\"user\":\"$TEST_USER\"" <<<"$mine" && fail "the victim is shown the attacker's job: $mine"
log "ok: the victim sees its job's $(wc -l <<<"$mine") events only"

reused_after=$(aggregator_metric reused_job_ids_total 0)
((reused_after == reused_before + 1)) ||
    fail "the aggregator counted $reused_before then $reused_after reused ids, not one more"

adv_assert_unharmed
log "ok: a reused job id kept the two jobs apart"
