#!/usr/bin/env bash
# Node liveness at the aggregator, in the three-node sandbox (HeartbeatInterval=2 there):
#  1. every node's agent sends heartbeats: `accelctl nodes` lists the three nodes alive, each
#     heartbeat naming the node's four accelerators, none busy, and its kind (sbn1 and sbn2
#     IPU hosts, sbn3 a GPU node);
#  2. while a job holds GPUs on the third node, its heartbeat says so (busy and jobs);
#  3. the third node's agent stopped: that node turns late after three intervals (6 s), the
#     others stay alive; started again, it is alive again.
# The nodes reach the aggregator as real ones do, over TCP with CURVE: its Listen address is
# tcp://, and each node holds one established connection to it from its own address.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user

sandbox_nodes 3
third=${nodes[2]}
agg_conf=$ACCEL_SANDBOX_DIR/etc/accel-aggregator.conf
db=$(awk -F= '$1 == "Database" { print $2 }' "$agg_conf")
[[ -n $db ]] || fail "no Database= in $agg_conf"

tag=mn-heartbeat-$$-$RANDOM
dir=$TEST_HOME/$tag
third_stopped=0
cleanup() {
    ((third_stopped == 0)) || "$SANDBOX_SCRIPT" restart agentd --node "$third" >/dev/null 2>&1 || true
    rm -rf "${dir:?}"
}
trap cleanup EXIT
mkdir -p "$dir"
chown "$TEST_USER" "$dir"

nodes_json() { accelctl nodes --database "$db" --json; }
# node_field NODE JQ: the field of NODE's line of `accelctl nodes --json`.
node_field() { nodes_json | jq -r --arg n "$1" "select(.node == \$n) | $2"; }
wait_until() {
    local limit=$1 what=$2 deadline=$((SECONDS + $1))
    shift 2
    until "$@"; do
        ((SECONDS <= deadline)) || fail "$what: not within $limit s; accelctl nodes: $(accelctl nodes --database "$db")"
        sleep 0.3
    done
}
state_is() { [[ $(node_field "$1" .state) == "$2" ]]; }
all_alive() { local n; for n in "${nodes[@]}"; do state_is "$n" alive || return 1; done; }

# --- 1. three nodes alive, with what each holds -------------------------------------------------
wait_until 10 "every node alive with a heartbeat" all_alive
# Each agent's first heartbeat comes as it starts: what it holds now, not before a restart.
idle() { local n; for n in "${nodes[@]}"; do
    [[ $(node_field "$n" '"\(.heartbeat.accelerators_busy) \(.heartbeat.jobs)"') == "0 0" ]] || return 1; done; }
wait_until 10 "every node's heartbeat: no accelerator busy, no job" idle
for n in "${nodes[@]}"; do
    expect_eq "$n: heartbeat interval, accelerators" "2 4" "$(node_field "$n" '"\(.heartbeat.interval_s) \(.heartbeat.accelerators)"')"
done
expect_eq "${nodes[0]}: kind" ipu "$(node_field "${nodes[0]}" .heartbeat.accel_kind)"
expect_eq "$third: kind" gpu "$(node_field "$third" .heartbeat.accel_kind)"
log "ok: $(accelctl nodes --database "$db" | tr '\n' '|')"

listen=$(awk -F= '$1 == "Listen" { print $2 }' "$agg_conf")
[[ $listen =~ ^tcp://([0-9.]+):([0-9]+)$ ]] || fail "the aggregator should listen on TCP, not '$listen'"
agg_port=${BASH_REMATCH[2]}
# ss prints Recv-Q, Send-Q, local and peer address for the established state.
peers=$(ss -Htn state established "sport = :$agg_port" | awk '{ sub(/:[0-9]+$/, "", $4); print $4 }' | sort -u)
expect_eq "distinct nodes connected to $listen" 3 "$(grep -c . <<<"$peers")"
for n in "${nodes[@]}"; do
    addr=$(awk -v n="$n" '$2 == n { print $1 }' "$ACCEL_SANDBOX_DIR/etc/hosts")
    grep -qx -- "$addr" <<<"$peers" || fail "$n ($addr) has no connection to $listen; peers: $(tr '\n' ' ' <<<"$peers")"
done
log "ok: the three nodes stream over TCP to $listen"

# --- 2. a GPU job on the third node shows in its heartbeat --------------------------------------
submit -J "$tag" -w "$third" --gres=gpu:2 -o /dev/null <<SCRIPT
#!/bin/bash
touch "$dir/started"
for _ in \$(seq 600); do [[ -e "$dir/release" ]] && exit 0; sleep 0.1; done
exit 1
SCRIPT
job=$JOB_ID
wait_until 60 "job $job started" test -e "$dir/started"
busy_now() { [[ $(node_field "$third" '"\(.heartbeat.accelerators_busy) \(.heartbeat.jobs)"') == "2 1" ]]; }
wait_until 10 "$third's heartbeat: 2 GPUs busy, 1 job" busy_now
touch "$dir/release"
wait_job_final "$job" 60
expect_eq "job $job: state|exit code" "COMPLETED|0:0" "$JOB_FINAL"

# --- 3. an agent stopped is late after three intervals; started again, alive --------------------
third_stopped=1
"$SANDBOX_SCRIPT" stop agentd --node "$third" >/dev/null
wait_until 15 "$third late once its agent stopped" state_is "$third" late
age=$(node_field "$third" .last_event_age_s)
((age >= 6)) || fail "$third counted late when its latest event was $age s old, under three intervals (6 s)"
for n in "${nodes[0]}" "${nodes[1]}"; do state_is "$n" alive || fail "$n is not alive while $third's agent is down"; done
"$SANDBOX_SCRIPT" restart agentd --node "$third" >/dev/null
third_stopped=0
wait_until 10 "$third alive again after its agent started" state_is "$third" alive
log "PASS"
