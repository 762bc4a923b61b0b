#!/usr/bin/env bash
# Attack (docs/security.md, the aggregator before authentication): a stranger's CURVE handshakes.
# hello_flood (tools/hello_flood.cpp) holds no key of the allow list but knows the aggregator's
# public key; it keeps 64 sockets with keys of their own (new ones every second) handshaking
# with accel-aggregatord's node socket, each reconnecting 1 ms after its refusal, for 20 s. It
# runs as the test user where the socket lets that user connect, else as root. Meanwhile the
# test user runs jobs: their summaries must be written and `accelctl events --job` must answer
# with their events while the flood goes on. Afterwards the aggregator must be the same process,
# and the usual checks hold (adv_assert_unharmed). The aggregator's metrics before and after say
# how many of the stranger's handshakes reached ZAP and how many connections were cut on accept:
# at most a quarter of its connections may get their handshake to ZAP.
# shellcheck source=tests/adversarial/adv_lib.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/adv_lib.sh"

adv_setup 15

conf=$ACCEL_SANDBOX_DIR/etc/accel-aggregator.conf
[[ -r $conf ]] || fail "no aggregator config at $conf"
listen=$(sed -n 's/^Listen=//p' "$conf")
secret=$(sed -n 's/^SecretKeyFile=//p' "$conf")
metrics_at=$(sed -n 's/^MetricsAddress=//p' "$conf")
[[ -n $listen && -n $secret && -n $metrics_at ]] || fail "Listen, SecretKeyFile or MetricsAddress missing in $conf"
server_pub=${secret%.key}.pub
[[ -r $server_pub ]] || fail "no aggregator public key at $server_pub"
pidfile=$ACCEL_SANDBOX_DIR/state/pids/aggregatord
read -r agg_pid _ <"$pidfile" || fail "no aggregator pid in $pidfile"
kill -0 "$agg_pid" 2>/dev/null || fail "the aggregator (pid $agg_pid) does not run before the attack"
flood=$ACCEL_BUILD_DIR/tests/adversarial/tools/hello_flood
[[ -x $flood ]] || fail "hello_flood is not built in $ACCEL_BUILD_DIR"

# metric NAME_WITH_LABELS: its value on the aggregator's endpoint, 0 when absent.
metric() {
    curl -sf "http://$metrics_at/metrics" | awk -v m="$1" '$1 == m { print $2; f = 1 } END { if (!f) print 0 }'
}
refused0=$(metric 'accel_aggregator_rejected_total{reason="unknown_key"}')
cut0=$(metric 'accel_aggregator_rejected_total{reason="address_limit"}')

# The socket's file must be reachable by the user for the flood to come from the user.
runner=(as_test_user)
if [[ $listen == ipc://* ]] && ! as_test_user test -w "${listen#ipc://}"; then
    runner=()
    log "the node socket ${listen#ipc://} is not writable by $TEST_USER: the stranger floods as root"
fi
flood_out=$(mktemp /tmp/accel-hello-flood-XXXXXX)
trap 'rm -f -- "$flood_out"' EXIT
chmod 0666 "$flood_out"
"${runner[@]}" "$flood" "$listen" "$server_pub" 20 64 >"$flood_out" 2>&1 &
flood_pid=$!
log "hello_flood (pid $flood_pid) against $listen for 20 s"
sleep 2

# Jobs while the flood runs: each one's summary arrives, and the events query answers.
jobs=()
for _ in 1 2 3; do
    submit -o /dev/null --wrap='sleep 1' </dev/null
    jobs+=("$JOB_ID")
done
for job in "${jobs[@]}"; do
    wait_job_final "$job" 30
    expect_eq "job $job under the flood" "COMPLETED|0:0" "$JOB_FINAL"
    wait_comment "$job" 20
    [[ $(summary_of "$COMMENT") == *'"result":"ok"'* ]] || fail "job $job's summary is not ok: $COMMENT"
done
kill -0 "$flood_pid" 2>/dev/null || fail "the flood ended before the jobs' summaries were checked: $(cat "$flood_out")"
log "ok: ${#jobs[@]} jobs' summaries written during the flood"
events=$(as_test_user timeout 20 "$ACCELCTL" events --job "${jobs[0]}" 2>&1) ||
    fail "accelctl events --job ${jobs[0]} failed during the flood: $events"
grep -q 'epilog_finished' <<<"$events" || fail "accelctl events --job ${jobs[0]} lacks the epilog: $events"
kill -0 "$flood_pid" 2>/dev/null || fail "the flood ended before the events query: $(cat "$flood_out")"
log "ok: accelctl events --job ${jobs[0]} answered during the flood"

wait "$flood_pid" || fail "hello_flood failed: $(cat "$flood_out")"
log "hello_flood: $(cat "$flood_out")"
refused=$(($(metric 'accel_aggregator_rejected_total{reason="unknown_key"}') - refused0))
cut=$(($(metric 'accel_aggregator_rejected_total{reason="address_limit"}') - cut0))
log "the aggregator refused $refused of the stranger's keys at ZAP and cut $cut connections on accept"
# What bounds the aggregator's X25519 work: the stranger's connections are cut on accept, so
# few of its handshakes get as far as ZAP (with no bound, nearly every one does).
connected=$(sed -n 's/.* connected=\([0-9]*\).*/\1/p' "$flood_out")
((connected > 0)) || fail "hello_flood made no connection: $(cat "$flood_out")"
((refused * 4 < connected)) ||
    fail "$refused of the stranger's $connected connections got their handshake to ZAP (a quarter at most)"
log "ok: $refused of the stranger's $connected connections got their handshake to ZAP"
kill -0 "$agg_pid" 2>/dev/null || fail "the aggregator (pid $agg_pid) is gone after the flood"
adv_assert_unharmed
kill -0 "$agg_pid" 2>/dev/null || fail "the aggregator (pid $agg_pid) is gone after the normal job"
log "ok: a stranger's handshakes harmed no job"
