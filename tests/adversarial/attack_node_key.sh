#!/usr/bin/env bash
# Attack (docs/security.md, "Other nodes"): a node's key speaks for that node's jobs only.
# Needs the three-node sandbox (fixture slurm_sandbox3) and a second node's real CURVE key:
# the sandbox keeps each node's pair in etc/keys/NODE.key, and the aggregator allows sbn3's.
# The victim's job runs on sbn1 and sbn2 and is over, with its summary in AdminComment. As
# root inside sbn3, with sbn3's own key, forge_events then sends the aggregator, about that
# job, what an agent sends for a run (a prolog naming sbn3, a failed prolog result, an
# appliance job of a day, the limit enforced, a failed epilog that used a day):
#  1. as another run with the job's own restart count (0);
#  2. as a new run, restart count 1, which slurmctld does not hold;
#  3. as run 0 again, its prolog naming all three nodes.
# The job's AdminComment must stay byte for byte what it was (result, errors, nodes,
# appliance_s). Each round is held and then dropped once slurmctld answered
# (accel_aggregator_runs_unconfirmed_total): round 2 as a run slurmctld does not hold, rounds 1
# and 3 as a new job under the id (it may have been given again) that slurmctld does not run
# there; none is refused at once (not_on_job), as each round begins with its prolog. No node
# drained, the aggregator (the same process) and every node's agent answering, and a normal job
# on the victim's nodes getting its own summary.
# shellcheck source=tests/adversarial/adv_lib.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/adv_lib.sh"

require_root
require_sandbox
ensure_test_user
ensure_victim_user
sandbox_nodes 3
first=${nodes[0]} second=${nodes[1]} third=${nodes[2]}
command -v jq >/dev/null || fail "jq is not installed"

forge=$ACCEL_BUILD_DIR/tests/adversarial/tools/forge_events
[[ -x $forge ]] || fail "forge_events is not built in $ACCEL_BUILD_DIR"
third_conf=${ACCEL_SANDBOX_NODE_CONF_3:-}
[[ -r $third_conf ]] || fail "no accel.conf of $third (ACCEL_SANDBOX_NODE_CONF_3='$third_conf')"
key=$(sed -n 's/^NodeKeyFile=//p' "$third_conf")
[[ -r $key && $key == */$third.key ]] || fail "$third's accel.conf names no key of $third ('$key')"
pidfile=$ACCEL_SANDBOX_DIR/state/pids/aggregatord
read -r agg_pid _ <"$pidfile" || fail "no aggregator pid in $pidfile"
agg_log=$ACCEL_SANDBOX_DIR/log/aggregatord.out
metrics_port=$(sed -n 's/^METRICS_PORT=//p' "$ACCEL_SANDBOX_DIR/state/ports")
[[ $metrics_port =~ ^[0-9]+$ ]] || fail "no METRICS_PORT in the sandbox's ports"
spool=$(mktemp -d /tmp/accel-forge-XXXXXX)
trap 'rm -rf -- "$spool"' EXIT

metric() { aggregator_metric "$1" absent; }


# final_summary JOB: waits until the job's summary names both of its nodes with no node
# missing (both epilogs in), and sets COMMENT.
final_summary() {
    local deadline=$((SECONDS + 60)) s
    while :; do
        wait_comment "$1" 60
        s=$(summary_of "$COMMENT")
        [[ $(jq -c '[.nodes, has("missing_nodes")]' <<<"$s") == "[[\"$first\",\"$second\"],false]" ]] &&
            return 0
        ((SECONDS <= deadline)) || fail "job $1's summary never named $first and $second alone: $s"
        sleep 0.5
    done
}

expect_nodes_in_service
kill -0 "$agg_pid" 2>/dev/null || fail "the aggregator (pid $agg_pid) does not run before the attack"

# --- the victim's finished job on the first two nodes ----------------------------------------------
out=$(as_victim timeout 30 sbatch --parsable -N 2 -w "$first,$second" -o /dev/null --wrap="sleep 1") ||
    fail "the victim's sbatch failed"
victim_job=${out%%;*}
log "victim job $victim_job (user $VICTIM_USER) on $first and $second"
wait_job_final "$victim_job" 60
expect_eq "the victim's job" "COMPLETED|0:0" "$JOB_FINAL"
final_summary "$victim_job"
before=$COMMENT
log "its summary: $(summary_of "$before")"
victim_uid=$(id -u "$VICTIM_USER")

# --- the forgeries, from inside the third node with its own key -----------------------------------
log_lines=$(wc -l <"$agg_log")
refused0=$(metric 'rejected_total{reason="not_on_job"}')
dropped0=$(metric runs_unconfirmed_total)
# forge ROUND RESTART LIST COUNT: one round of forged events; sets FORGED to its output.
forge() {
    FORGED=$("$SANDBOX_SCRIPT" exec "$third" "$forge" "$third_conf" "$spool/$1" "$victim_job" \
        "$victim_uid" "$2" "$3" "$4" 2>&1) || fail "forge_events (round $1) failed: $FORGED"
    log "round $1 (run $2, list $3) from $third: $(tr '\n' ' ' <<<"$FORGED")"
}
# expect_untouched SECONDS: the aggregator writes a changed summary within a second or two;
# the victim's must stay what it was for SECONDS.
expect_untouched() {
    local deadline=$((SECONDS + $1)) now
    while ((SECONDS < deadline)); do
        now=$(sacct -n -P -X -j "$victim_job" -o AdminComment)
        [[ $now == "$before" ]] || fail "the victim's summary was rewritten by $third's key:" \
            "before $(summary_of "$before"), after $(summary_of "$now")"
        sleep 0.5
    done
    log "ok: the victim's summary is untouched after $1 s"
}
# expect_held_then_dropped ROUND: all five events of the round taken in to be held, then
# dropped within 20 s once slurmctld answered.
expect_held_then_dropped() {
    [[ $FORGED == *"published=5 acked=5 refused=0 backlog=0"* ]] ||
        fail "the forged round $1 was not taken in to be held: $FORGED"
    local deadline=$((SECONDS + 20)) want=$((${dropped0/absent/0} + 5 * $1))
    until [[ $(metric runs_unconfirmed_total) != absent &&
        $(metric runs_unconfirmed_total) -ge $want ]]; do
        ((SECONDS <= deadline)) || fail "the held round $1 was not dropped within 20 s" \
            "(runs_unconfirmed_total $(metric runs_unconfirmed_total), wanted $want)"
        sleep 0.5
    done
}

forge 1 0 "$third" 1
expect_untouched 10
expect_held_then_dropped 1
forge 2 1 "$third" 1
expect_untouched 10
expect_held_then_dropped 2
forge 3 0 "$first,$second,$third" 3
expect_untouched 10
expect_held_then_dropped 3
expect_eq "refused frames of jobs not on the node" "$refused0" \
    "$(metric 'rejected_total{reason="not_on_job"}')"
expect_eq "jobs holding events" 0 "$(metric held_jobs)"
said=$(tail -n +"$((log_lines + 1))" "$agg_log")
grep -q "ingest: an event from $third is not counted: job $victim_job: $third reports a prolog of run 0 after the job's record here ended; slurmctld " <<<"$said" ||
    fail "the aggregator's log does not name the dropped new job: $said"
grep -q "ingest: an event from $third is not counted: job $victim_job: $third reports its run 1, slurmctld " <<<"$said" ||
    fail "the aggregator's log does not name the dropped run: $said"
grep -q "ingest: an event from $third is not counted: job $victim_job: follows a prolog that was refused" <<<"$said" ||
    fail "the aggregator's log does not name the events after a dropped prolog: $said"
log "ok: the forged events were refused, or held and dropped, and logged"

# --- everything still answers, and a normal job works ----------------------------------------------
kill -0 "$agg_pid" 2>/dev/null || fail "the aggregator (pid $agg_pid) is gone after the attack"
log "ok: the aggregator (pid $agg_pid) still runs"
for n in "${nodes[@]}"; do
    status=$("$SANDBOX_SCRIPT" exec "$n" accelctl status 2>&1) ||
        fail "the agent of $n does not answer after the attack: $status"
done
log "ok: every node's agent answers"
expect_nodes_in_service
submit -N 2 -w "$first,$second" -o /dev/null --wrap="sleep 1" </dev/null
next_job=$JOB_ID
wait_job_final "$next_job" 60
expect_eq "a normal job after the attack" "COMPLETED|0:0" "$JOB_FINAL"
final_summary "$next_job"
[[ $(jq -r .result <<<"$(summary_of "$COMMENT")") == ok ]] ||
    fail "the next job's summary is not ok: $COMMENT"
expect_eq "the victim's summary at the end" "$before" \
    "$(sacct -n -P -X -j "$victim_job" -o AdminComment)"
expect_nodes_in_service
kill -0 "$agg_pid" 2>/dev/null || fail "the aggregator (pid $agg_pid) is gone after the normal job"
log "ok: $third's key could not rewrite job $victim_job of $first and $second"
