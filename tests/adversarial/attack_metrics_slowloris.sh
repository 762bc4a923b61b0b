#!/usr/bin/env bash
# Attack (docs/security.md, the metrics endpoints): the test user, from the login side, holds
# the agent's and the aggregator's metrics endpoints with slow requests (slowloris):
# metrics_slowloris.py keeps 200 connections on each, from loopback source addresses of its
# choosing, each trickling one header byte every 2 s and never finishing. Before the
# endpoints had a deadline and a limit per source, 16 such connections took every place, every
# scrape failed and AccelAgentDown fired on a healthy node. Now, while it runs:
# - a scrape of each endpoint (curl, as Prometheus makes it) answers 200 within 2 s, every
#   time, for 15 s;
# - the sandbox's own Prometheus, on the same host as the attacker, kept both targets up;
# then the usual checks (adv_assert_unharmed).
# shellcheck source=tests/adversarial/adv_lib.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/adv_lib.sh"

ATTACK_SECONDS=15
HELD=200
adv_setup 15

metrics_address() {
    sed -n 's/^[[:space:]]*MetricsAddress[[:space:]]*=[[:space:]]*\([^[:space:]#]*\).*/\1/Ip' "$1" |
        tail -n 1
}
agent_at=$(metrics_address "$AGENT_CONF")
agg_conf=$ACCEL_SANDBOX_DIR/etc/accel-aggregator.conf
[[ -r $agg_conf ]] || fail "no aggregator config at $agg_conf"
agg_at=$(metrics_address "$agg_conf")
[[ $agent_at == 127.* && $agg_at == 127.* ]] ||
    fail "the sandbox's metrics endpoints are not on loopback (agent '$agent_at', aggregator" \
        "'$agg_at'); this attack only targets addresses the sandbox made"
[[ ${ACCEL_PROMETHEUS_URL:-} == http://127.0.0.1:* ]] ||
    fail "slurm-sandbox env printed no ACCEL_PROMETHEUS_URL on loopback: '${ACCEL_PROMETHEUS_URL:-}'"

# scrape_ok ADDRESS: one scrape as Prometheus makes it, within 2 s, with a metric in it.
scrape_ok() {
    local body
    if body=$(curl -sS --max-time 2 -H 'Accept: text/plain;version=0.0.4' "http://$1/metrics" 2>&1) &&
        grep -q '^accel_' <<<"$body"; then
        return 0
    fi
    echo "${body:0:200}"
    return 1
}
scrape_ok "$agent_at" >/dev/null || fail "the agent's endpoint $agent_at does not answer before the attack"
scrape_ok "$agg_at" >/dev/null || fail "the aggregator's endpoint $agg_at does not answer before the attack"

# --- the slow clients -------------------------------------------------------------------------
work=$(mktemp -d)
chmod 0755 "$work"
chown "$TEST_USER" "$work"
stop_slow() {
    touch "$work/stop"
    sleep 0.5
    rm -rf "$work"
}
on_exit stop_slow
as_test_user python3 - $((ATTACK_SECONDS + 30)) "$work/stop" "$HELD" 2 "$agent_at" "$agg_at" \
    <"$(dirname -- "${BASH_SOURCE[0]}")/metrics_slowloris.py" >"$work/slow.json" 2>"$work/slow.err" &
slow_pid=$!
sleep 3
kill -0 "$slow_pid" 2>/dev/null || fail "the slow clients did not start: $(cat "$work/slow.err")"
log "$TEST_USER holds $agent_at and $agg_at with $HELD slow connections each"

# --- scrapes while they hold on ---------------------------------------------------------------
attack_start=$(date +%s)
scrapes=0
failed=()
for ((i = 0; i < ATTACK_SECONDS; i++)); do
    for at in "$agent_at" "$agg_at"; do
        scrapes=$((scrapes + 1))
        why=$(scrape_ok "$at") || failed+=("$at at +${i}s: $why")
    done
    sleep 1
done
((${#failed[@]} == 0)) ||
    fail "${#failed[@]} of $scrapes scrapes failed under the slow clients: ${failed[0]}"
log "ok: $scrapes scrapes of both endpoints answered within 2 s under the slow clients"

# Prometheus (same host as the attacker, every 2 s, 1 s timeout) kept both targets up for the
# whole attack.
window=$(($(date +%s) - attack_start))
query="min by (job) (min_over_time(up[${window}s]))"
ups=$(curl -fsS --max-time 5 --data-urlencode "query=$query" "$ACCEL_PROMETHEUS_URL/api/v1/query" |
    jq -r '.data.result[] | "\(.metric.job)=\(.value[1])"' | sort | tr '\n' ' ') ||
    fail "cannot ask Prometheus at $ACCEL_PROMETHEUS_URL"
[[ $ups == *"accel-agent=1"* && $ups == *"accel-aggregator=1"* ]] ||
    fail "Prometheus saw a target down during the attack: '$ups'"
log "ok: Prometheus kept both targets up: $ups"

touch "$work/stop"
wait "$slow_pid" || fail "the slow clients failed: $(cat "$work/slow.err")"
counts=$(cat "$work/slow.json")
log "slow clients: $counts"
(($(jq .connections <<<"$counts") >= 2 * HELD)) ||
    fail "the slow clients made too few connections to mean anything: $counts"
(($(jq .ended_by_server <<<"$counts") > 0)) ||
    fail "no slow connection was ever ended by an endpoint: $counts"

adv_assert_unharmed
log "PASS"
