#!/usr/bin/env bash
# Attack (docs/security.md, the aggregator): garbage to accel-aggregatord's listening socket.
# As the test user: random bytes, then a well-formed ZMTP 3.0 greeting asking for CURVE followed
# by a handshake that is not one, on as many connections as the socket lets the user open. The
# same again as root, which can always reach the socket, so that the aggregator itself gets the
# garbage even where the user may not connect. Afterwards the aggregator must still run (same
# process), the victim's summary must be right and the next job must get its own.
# shellcheck source=tests/adversarial/adv_lib.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/adv_lib.sh"

adv_setup 20

conf=$ACCEL_SANDBOX_DIR/etc/accel-aggregator.conf
[[ -r $conf ]] || fail "no aggregator config at $conf"
listen=$(sed -n 's/^Listen=//p' "$conf")
[[ -n $listen ]] || fail "no Listen= in $conf"
pidfile=$ACCEL_SANDBOX_DIR/state/pids/aggregatord
read -r agg_pid _ <"$pidfile" || fail "no aggregator pid in $pidfile"
kill -0 "$agg_pid" 2>/dev/null || fail "the aggregator (pid $agg_pid) does not run before the attack"
log "aggregator pid $agg_pid listens on $listen"

# garbage.py ENDPOINT ROUNDS: prints how many connections it made.
garbage=$(mktemp /tmp/accel-agg-garbage-XXXXXX.py)
trap 'rm -f -- "$garbage"' EXIT
cat >"$garbage" <<'EOF'
import os, socket, sys
endpoint, rounds = sys.argv[1], int(sys.argv[2])
def connect():
    if endpoint.startswith("ipc://"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(2)
        s.connect(endpoint[len("ipc://"):])
    else:
        host, port = endpoint[len("tcp://"):].rsplit(":", 1)
        s = socket.create_connection((host.replace("*", "127.0.0.1"), int(port)), timeout=2)
    return s
# ZMTP 3.0 greeting: signature, version 3.0, mechanism CURVE, as-server 0, filler.
greeting = b"\xff" + b"\0" * 8 + b"\x7f" + b"\x03\x00" + b"CURVE".ljust(20, b"\0") + b"\0" + b"\0" * 31
made = 0
for i in range(rounds):
    for payload in (os.urandom(4096), greeting + os.urandom(200), greeting + b"\x04\xc8HELLO" + os.urandom(195)):
        try:
            s = connect()
        except OSError:
            continue
        made += 1
        try:
            s.sendall(payload)
            s.recv(64)
        except OSError:
            pass
        s.close()
print(made)
EOF
chmod 0644 "$garbage"

user_made=$(as_test_user python3 "$garbage" "$listen" 50) || fail "the garbage client failed as $TEST_USER"
log "as $TEST_USER: $user_made connections took garbage"
root_made=$(python3 "$garbage" "$listen" 50) || fail "the garbage client failed as root"
((root_made > 0)) || fail "root could not reach the aggregator at $listen"
log "as root: $root_made connections took garbage"

kill -0 "$agg_pid" 2>/dev/null || fail "the aggregator (pid $agg_pid) is gone after the garbage"
log "ok: the aggregator (pid $agg_pid) still runs"
adv_assert_unharmed
kill -0 "$agg_pid" 2>/dev/null || fail "the aggregator (pid $agg_pid) is gone after the normal job"
log "ok: garbage on the aggregator's socket harmed no job"
