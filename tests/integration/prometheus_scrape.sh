#!/usr/bin/env bash
# The sandbox's real Prometheus (Debian's) scrapes the node agent and the aggregator: both
# targets are up, a job moves the agent's hook histogram and the aggregator's event counter as
# Prometheus sees them, the shipped alert rules are loaded and healthy, and with the agent
# stopped its target goes down and AccelAgentDown becomes pending, then clears once the agent
# is back.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user

[[ ${ACCEL_PROMETHEUS_URL:-} == http://127.0.0.1:* ]] ||
    fail "slurm-sandbox env printed no ACCEL_PROMETHEUS_URL on loopback: '${ACCEL_PROMETHEUS_URL:-}'"

# The helpers below run in $(...), where `fail` would end only the subshell: they return 1
# when Prometheus does not answer or refuses, and their callers fail or wait on that.
# api PATH [CURL ARGS...]: one answer of Prometheus' HTTP API, which must say success.
api() {
    local path=$1 body
    shift
    body=$(curl -fsS --max-time 5 "$@" "$ACCEL_PROMETHEUS_URL/api/v1/$path") || return 1
    [[ $(jq -r .status <<<"$body") == success ]] || return 1
    printf '%s' "$body"
}

# query PROMQL: the value of the query's single sample, or "none" when it has none.
query() {
    local body
    body=$(api query --data-urlencode "query=$1" -G) || return 1
    jq -r '.data.result | if length == 0 then "none" else .[0].value[1] end' <<<"$body"
}

# target_health JOB: health of the scrape target(s) of JOB, one word per target.
target_health() {
    local body
    body=$(api targets) || return 1
    jq -r --arg job "$1" '[.data.activeTargets[] | select(.labels.job == $job) | .health] | join(" ")' <<<"$body"
}

health_is() {
    local h
    h=$(target_health "$1") || return 1
    [[ $h == "$2" ]]
}

# 1. Both targets are scraped.
wait_for 30 "the agent's target to be up" health_is accel-agent up
wait_for 30 "the aggregator's target to be up" health_is accel-aggregator up
log "ok: targets accel-agent and accel-aggregator are up"
targets=$(api targets) || fail "Prometheus did not answer /api/v1/targets"
node=$(jq -r '.data.activeTargets[] | select(.labels.job == "accel-agent") | .labels.node' <<<"$targets")
expect_eq "node label of the agent's target" "$(sinfo -h -o %N)" "$node"

# 2. A job shows in what Prometheus stored.
count() {
    local v
    v=$(query "$1") || return 1
    if [[ $v == none ]]; then v=0; fi
    printf '%s' "$v"
}
must_count() { count "$1" || fail "Prometheus did not answer the query $1"; }
# A daemon restarted by an earlier test counts from zero again, and until Prometheus scrapes
# it anew it still holds the last counts of the process before. So the counts are read only
# after a scrape of both targets that began later than now (Prometheus's clock).
since=$(query 'vector(time())') || fail "Prometheus did not answer the query time()"
scraped_after() {
    local at
    at=$(query "timestamp(up{job=\"$1\"})") || return 1
    [[ $at != none ]] && awk -v a="$at" -v b="$2" 'BEGIN { exit !(a > b) }'
}
wait_for 20 "a scrape of the agent after $since" scraped_after accel-agent "$since"
wait_for 20 "a scrape of the aggregator after $since" scraped_after accel-aggregator "$since"
prologs0=$(must_count 'accel_hook_duration_seconds_count{job="accel-agent",hook="prolog"}')
epilogs0=$(must_count 'accel_hook_duration_seconds_count{job="accel-agent",hook="epilog"}')
events0=$(must_count 'accel_aggregator_events_total{job="accel-aggregator"}')
submit -J "prom-$$" -o /dev/null <<<$'#!/bin/sh\ntrue'
wait_job_final "$JOB_ID" 60
expect_eq "sacct state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
grew() {
    local c
    c=$(count "$1") || return 1
    ((c > $2))
}
wait_for 20 "Prometheus to see one more prolog" \
    grew 'accel_hook_duration_seconds_count{job="accel-agent",hook="prolog"}' "$prologs0"
wait_for 20 "Prometheus to see one more epilog" \
    grew 'accel_hook_duration_seconds_count{job="accel-agent",hook="epilog"}' "$epilogs0"
wait_for 20 "Prometheus to see the job's events stored" \
    grew 'accel_aggregator_events_total{job="accel-aggregator"}' "$events0"
log "ok: prologs $prologs0 -> $(must_count 'accel_hook_duration_seconds_count{hook="prolog"}'), events" \
    "$events0 -> $(must_count 'accel_aggregator_events_total')"
for m in accel_jobs_active accel_events_spooled accel_spool_bytes accel_aggregator_lag_seconds \
    accel_aggregator_nodes_connected accel_aggregator_pending_comments; do
    v=$(query "$m") || fail "Prometheus did not answer the query $m"
    [[ $v != none ]] || fail "Prometheus has no sample of $m"
done
log "ok: every gauge of both daemons has a sample"

# 3. The shipped alert rules are loaded and evaluate without error.
rules=$(api rules) || fail "Prometheus did not answer /api/v1/rules"
rules=$(jq -r '[.data.groups[].rules[] | "\(.name)=\(.health)"] | sort | join(" ")' <<<"$rules")
expect_eq "alert rules and their health" \
    "AccelAccountingBacklog=ok AccelAgentDown=ok AccelAggregatorDown=ok AccelAggregatorLagging=ok AccelEventSpoolGrowing=ok AccelGpuHardwareXid=ok AccelGpusIdle=ok" \
    "$rules"

# 4. The agent down: its target is down and the alert is pending (it fires after 2 minutes).
alert_state() {
    local body
    body=$(api alerts) || return 1
    jq -r --arg name "$1" '[.data.alerts[] | select(.labels.alertname == $name) | .state] | join(" ")' <<<"$body"
}
# alert_is NAME STATE: true when Prometheus answered and NAME is in STATE ('' = no such alert).
alert_is() {
    local s
    s=$(alert_state "$1") || return 1
    [[ $s == "$2" ]]
}
"$SANDBOX_SCRIPT" stop agentd >/dev/null || fail "could not stop accel-agentd"
trap '"$SANDBOX_SCRIPT" up >/dev/null 2>&1 || true' EXIT
wait_for 30 "the agent's target to be down" health_is accel-agent down
wait_for 30 "AccelAgentDown to be pending" alert_is AccelAgentDown pending
log "ok: agent stopped: target down, AccelAgentDown pending"
"$SANDBOX_SCRIPT" up >/dev/null || fail "slurm-sandbox up did not start accel-agentd again"
trap - EXIT
wait_for 30 "the agent's target to be up again" health_is accel-agent up
wait_for 30 "AccelAgentDown to clear" alert_is AccelAgentDown ''
log "ok: agent back: target up, no alert"
log "PASS"
