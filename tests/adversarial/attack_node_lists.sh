#!/usr/bin/env bash
# Attack (docs/security.md, "Other nodes"): a node's key cannot stall the aggregator with the
# node lists of its prologs. Needs the three-node sandbox (fixture slurm_sandbox3): root inside
# sbn3, with sbn3's own key, forge_events floods the aggregator for 25 s with the prologs of 512
# made-up jobs, each naming a node list of 65,536 names (the most a list may hold) that no
# other prolog names, so that no expansion can be reused: about 10 ms and 5 MB each, a quarter
# of an hour of the ingest thread and gigabytes if each were read when it arrived. Meanwhile
# the victim's job runs on sbn1 and sbn2.
# Must hold: the victim's summary is in AdminComment within 10 s of its job's end, while the
# flood goes on; the aggregator defers what is over a batch's budget
# (accel_aggregator_rejected_total{reason="deferred"}) rather than paying for it; it is the same
# process after the flood, and under 1 GiB of memory; no node drained, every agent answering,
# and a normal job getting its summary.
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
pidfile=$ACCEL_SANDBOX_DIR/state/pids/aggregatord
read -r agg_pid _ <"$pidfile" || fail "no aggregator pid in $pidfile"
metrics_port=$(sed -n 's/^METRICS_PORT=//p' "$ACCEL_SANDBOX_DIR/state/ports")
[[ $metrics_port =~ ^[0-9]+$ ]] || fail "no METRICS_PORT in the sandbox's ports"
spool=$(mktemp -d /tmp/accel-forge-XXXXXX)
flood_pid=
cleanup() {
    [[ -n $flood_pid ]] && kill "$flood_pid" 2>/dev/null
    rm -rf -- "$spool"
}
trap cleanup EXIT

metric() { aggregator_metric "$1" 0; }


# summary_within JOB SECONDS: the job's summary names both of its nodes, none missing, at most
# SECONDS after sacct first shows the job's final state.
summary_within() {
    local job=$1 limit=$2 start=$SECONDS s=''
    while ((SECONDS - start <= limit)); do
        COMMENT=$(sacct -n -P -X -j "$job" -o AdminComment)
        if [[ $COMMENT == *accel=\{* ]]; then
            s=$(summary_of "$COMMENT")
            if [[ $(jq -c '[.nodes, has("missing_nodes")]' <<<"$s") == "[[\"$first\",\"$second\"],false]" ]]; then
                log "job $job's summary came $((SECONDS - start)) s after its end: $s"
                return 0
            fi
        fi
        sleep 0.25
    done
    fail "job $job's summary was not complete $limit s after its end, with $third's flood on" \
        "(AdminComment: '$COMMENT')"
}

expect_nodes_in_service
kill -0 "$agg_pid" 2>/dev/null || fail "the aggregator (pid $agg_pid) does not run before the attack"
deferred0=$(metric 'rejected_total{reason="deferred"}')

# --- the flood, from inside the third node with its own key -------------------------------------
"$SANDBOX_SCRIPT" exec "$third" "$forge" --lists 512 25 "$third_conf" "$spool/lists" 900000 0 \
    >"$spool/flood.out" 2>&1 &
flood_pid=$!
sleep 2
kill -0 "$flood_pid" 2>/dev/null || fail "forge_events ended at once: $(cat "$spool/flood.out")"
log "the flood of $third runs (forge_events, pid $flood_pid)"

# --- the victim's job on the first two nodes, while it runs ----------------------------------------
out=$(as_victim timeout 30 sbatch --parsable -N 2 -w "$first,$second" -o /dev/null --wrap="sleep 1") ||
    fail "the victim's sbatch failed"
victim_job=${out%%;*}
log "victim job $victim_job (user $VICTIM_USER) on $first and $second"
wait_job_final "$victim_job" 60
expect_eq "the victim's job" "COMPLETED|0:0" "$JOB_FINAL"
summary_within "$victim_job" 10
[[ $(jq -r .result <<<"$(summary_of "$COMMENT")") == ok ]] ||
    fail "the victim's summary is not ok: $COMMENT"
kill -0 "$flood_pid" 2>/dev/null || fail "the flood was over before the victim's summary came;" \
    "it proves nothing: $(cat "$spool/flood.out")"

wait "$flood_pid" || fail "forge_events failed: $(cat "$spool/flood.out")"
flood_pid=
log "the flood: $(tail -n 1 "$spool/flood.out")"
deferred=$(metric 'rejected_total{reason="deferred"}')
((deferred > deferred0)) ||
    fail "no prolog was deferred (rejected_total{reason=\"deferred\"} $deferred0 -> $deferred)"
log "ok: $((deferred - deferred0)) frames deferred past the batches' budget"

# --- everything still answers, and a normal job works ----------------------------------------------
kill -0 "$agg_pid" 2>/dev/null || fail "the aggregator (pid $agg_pid) is gone after the flood"
rss_kb=$(awk '/^VmRSS:/ { print $2 }' "/proc/$agg_pid/status")
((rss_kb < 1024 * 1024)) || fail "the aggregator holds $((rss_kb / 1024)) MiB after the flood"
log "ok: the aggregator (pid $agg_pid) still runs, $((rss_kb / 1024)) MiB"
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
summary_within "$next_job" 30
expect_nodes_in_service
log "ok: $third's node lists could not stall the aggregator"
