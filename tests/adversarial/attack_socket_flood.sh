#!/usr/bin/env bash
# Attack (docs/security.md, the control socket): the test user floods accel-agentd's public
# control socket, holding about 1000 connections that never send a request and churning others,
# while its own --ipus jobs start and end: slurmd's prologs and epilogs (root) must all succeed,
# so every job completes and the node is never drained. Also: `accelctl status` run by the test
# user shows nothing of the victim's job, which root's does.
# shellcheck source=tests/adversarial/adv_lib.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/adv_lib.sh"

JOBS=20
adv_setup_held 240

socket=$(sed -n 's/^[[:space:]]*ControlSocket[[:space:]]*=[[:space:]]*\([^[:space:]#]*\).*/\1/Ip' \
    "$AGENT_CONF" | tail -n 1)
socket=${socket:-/run/accel-agent/control.sock}
[[ -S $socket ]] || fail "the agent's ControlSocket $socket is not a socket"

# --- accelctl status as an ordinary user: only that user's jobs ---------------------------
# The victim's --ipus job holds no device of the node's own (its IPUs are behind the fabric):
# what status says of it is the job count, and a fault of it if it had one.
deadline=$((SECONDS + 60))
until "$ACCELCTL" jobs | grep -Eq "^${VICTIM_JOB}[[:space:]]"; do
    ((SECONDS <= deadline)) || fail "root's accelctl jobs never showed the victim's job $VICTIM_JOB"
    sleep 0.5
done
root_jobs=$("$ACCELCTL" status --json | jq .jobs)
((root_jobs >= 1)) || fail "root's accelctl status counts $root_jobs jobs while the victim's job runs"
log "ok: root's accelctl status counts $root_jobs job(s), the victim's among them"
theirs=$(as_test_user "$ACCELCTL" status) || fail "accelctl status as $TEST_USER failed: $theirs"
[[ $theirs != *"job $VICTIM_JOB"* && $theirs != *"$VICTIM_USER"* ]] ||
    fail "accelctl status as $TEST_USER names the victim's job: $theirs"
theirs_json=$(as_test_user "$ACCELCTL" status --json) || fail "accelctl status --json as $TEST_USER failed"
expect_eq "jobs counted for $TEST_USER by accelctl status" 0 "$(jq .jobs <<<"$theirs_json")"
[[ $(jq --argjson j "$VICTIM_JOB" '[.device_use[] | select(.job_id == $j)] | length' <<<"$theirs_json") == 0 ]] ||
    fail "accelctl status --json as $TEST_USER names the victim's job: $theirs_json"
theirs=$(as_test_user "$ACCELCTL" jobs) || fail "accelctl jobs as $TEST_USER failed: $theirs"
[[ $theirs != *"$VICTIM_JOB"* ]] || fail "accelctl jobs as $TEST_USER shows the victim's job: $theirs"
log "ok: accelctl status and jobs as $TEST_USER show nothing of the victim's job"

# --- the flood ------------------------------------------------------------------------------
work=$(mktemp -d)
chmod 0755 "$work"
chown "$TEST_USER" "$work"
stop_flood() {
    touch "$work/stop"
    sleep 1
    rm -rf "$work"
}
on_exit stop_flood
as_test_user python3 - "$socket" 1000 240 "$work/stop" \
    <"$(dirname -- "${BASH_SOURCE[0]}")/socket_flood.py" >"$work/flood.json" 2>"$work/flood.err" &
flood_pid=$!
sleep 2
kill -0 "$flood_pid" 2>/dev/null || fail "the flooder did not start: $(cat "$work/flood.err")"
log "flooding $socket as $TEST_USER (1000 held connections and churn)"

jobs=()
for ((i = 0; i < JOBS; i++)); do
    # shellcheck disable=SC2016 # expanded by the job's shell
    submit --ipus=1 -o /dev/null --wrap='test -r "$IPUOF_CONFIG_PATH"' </dev/null
    jobs+=("$JOB_ID")
done
for job in "${jobs[@]}"; do
    wait_job_final "$job" 120
    expect_eq "job $job under the flood" "COMPLETED|0:0" "$JOB_FINAL"
    state=$(sinfo -h -o %T)
    [[ $state != *drain* && $state != down* ]] || fail "the node is $state during the flood: $(sinfo -h -o %E)"
done

touch "$work/stop"
wait "$flood_pid" || fail "the flooder failed: $(cat "$work/flood.err")"
counts=$(cat "$work/flood.json")
log "flood: $counts"
(($(jq .connections <<<"$counts") > 1000)) || fail "the flood made too few connections to mean anything: $counts"
(($(jq '.answered + .closed_by_agent' <<<"$counts") > 0)) ||
    fail "the agent never answered or closed a held connection: $counts"
log "ok: $JOBS jobs COMPLETED and the node in service under the flood"

adv_assert_unharmed
log "PASS"
