#!/usr/bin/env bash
# `accelctl events --job ID` on any node of the three-node sandbox, asked through that node's
# agent (AggregatorQueryAddress) of the aggregator over TCP with CURVE:
#  1. on sbn3, a node the job never ran on, the job's owner sees the events of a finished job
#     that ran on sbn1 (text and --json); root sees them on sbn2;
#  2. another user (nobody) is refused with exit 5 and a one-line reason, and so
#     is a job number that has no events;
#  3. --follow subscribes: a follower started on sbn3 before a held job is released prints
#     the job's events while it runs, then its epilog's, and keeps running; a follower of
#     another user's job ends with exit 5 once the job's first events are recorded;
#  4. one user holds at most four calls on a node (the fifth: exit 3, Busy), root is not held
#     back by them, and a follower that ends frees its place.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user

sandbox_nodes 3
first=${nodes[0]} second=${nodes[1]} third=${nodes[2]}

tag=mn-events-$$-$RANDOM
dir=$TEST_HOME/$tag
followers=()
cleanup() {
    local p
    for p in "${followers[@]}"; do kill "$p" 2>/dev/null || true; done
    pkill -u "$TEST_USER" -f "accelctl events --job" 2>/dev/null || true
    [[ -z ${HELD_JOB:-} ]] || scancel "$HELD_JOB" 2>/dev/null || true
    rm -rf "${dir:?}"
}
trap cleanup EXIT
mkdir -p "$dir"
chown "$TEST_USER" "$dir"

# on NODE USER ARGS...: accelctl ARGS run inside NODE as USER (the node's own accel.conf).
on() {
    local node=$1 user=$2
    shift 2
    "$SANDBOX_SCRIPT" exec "$node" runuser -u "$user" -- env SLURM_CONF="$SLURM_CONF" accelctl "$@"
}

# refused NODE USER ARGS...: runs `on` expecting a refusal; sets rc (its exit code) and err
# (what it printed on stderr).
refused() {
    set +e
    err=$(on "$@" 2>&1 >/dev/null)
    rc=$?
    set -e
}

# --- 1. a finished job's events from a node it never ran on --------------------------------------
submit -J "$tag-done" -w "$first" -o /dev/null <<'SCRIPT'
#!/bin/bash
true
SCRIPT
done_job=$JOB_ID
wait_job_final "$done_job" 60
# The epilog's event reaches the aggregator a moment after the job ends.
deadline=$((SECONDS + 30))
until out=$(on "$third" "$TEST_USER" events --job "$done_job" 2>&1) && grep -q ' epilog_finished ' <<<"$out"; do
    ((SECONDS <= deadline)) || fail "no epilog_finished of job $done_job through $third's agent within 30 s: $out"
    sleep 0.5
done
for kind in prolog_started prolog_finished epilog_finished; do
    grep -q " $first [0-9]*:[0-9]* $kind job=$done_job " <<<"$out" ||
        fail "no $kind of job $done_job from $first in what $third's agent relayed: $out"
done
json=$(on "$third" "$TEST_USER" --json events --job "$done_job") || fail "events --json failed (exit $?)"
expect_eq "every --json line is job $done_job's" "$(wc -l <<<"$json")" \
    "$(jq -c "select(.job_id == $done_job and .node == \"$first\")" <<<"$json" | wc -l)"
expect_eq "the owner's uid in the --json prolog_started" "$(id -u "$TEST_USER")" \
    "$(jq -r 'select(.kind == "prolog_started") | .event.uid' <<<"$json")"
root_out=$(on "$second" root events --job "$done_job") || fail "root's events on $second failed (exit $?)"
expect_eq "root on $second sees as many events as the owner" "$(wc -l <<<"$out")" "$(wc -l <<<"$root_out")"
log "ok: $(wc -l <<<"$out") events of job $done_job through $third's agent"

# --- 2. refusals ---------------------------------------------------------------------------------
refused "$third" nobody events --job "$done_job"
expect_eq "another user's exit code" 5 "$rc"
[[ $err == "accelctl: events: no events of job $done_job of yours are recorded" ]] ||
    fail "another user was told: '$err'"
refused "$third" "$TEST_USER" events --job 999999
expect_eq "a job without events: exit code" 5 "$rc"

# --- 3. --follow is a subscription -----------------------------------------------------------------
submit -J "$tag-follow" -w "$second" --hold -o /dev/null <<'SCRIPT'
#!/bin/bash
sleep 8
SCRIPT
HELD_JOB=$JOB_ID
on "$third" "$TEST_USER" events --job "$HELD_JOB" --follow >"$dir/follow.out" 2>"$dir/follow.err" &
followers+=($!)
follower=$!
on "$third" nobody events --job "$HELD_JOB" --follow >"$dir/other.out" 2>"$dir/other.err" &
followers+=($!)
other=$!
sleep 1
kill -0 "$follower" 2>/dev/null || fail "the follower ended before the job started: $(cat "$dir/follow.err")"
[[ ! -s $dir/follow.out ]] || fail "the follower printed events of a job not yet started: $(cat "$dir/follow.out")"
scontrol release "$HELD_JOB" || fail "could not release job $HELD_JOB"

deadline=$((SECONDS + 30))
until grep -q " prolog_finished job=$HELD_JOB " "$dir/follow.out"; do
    ((SECONDS <= deadline)) || fail "the follower printed no prolog_finished within 30 s:" \
        "$(cat "$dir/follow.out" "$dir/follow.err")"
    sleep 0.2
done
state=$(squeue -h -j "$HELD_JOB" -o %T)
expect_eq "job $HELD_JOB while the follower has its prolog" RUNNING "$state"
grep -q " epilog_finished " "$dir/follow.out" && fail "epilog_finished before the job ended"

set +e
wait "$other"
rc=$?
set -e
expect_eq "another user's follower: exit code" 5 "$rc"
[[ ! -s $dir/other.out ]] || fail "another user's follower printed events: $(cat "$dir/other.out")"

wait_job_final "$HELD_JOB" 60
deadline=$((SECONDS + 30))
until grep -q " epilog_finished job=$HELD_JOB " "$dir/follow.out"; do
    ((SECONDS <= deadline)) || fail "the follower printed no epilog_finished within 30 s:" \
        "$(cat "$dir/follow.out" "$dir/follow.err")"
    sleep 0.2
done
kill -0 "$follower" 2>/dev/null || fail "the follower ended by itself: $(cat "$dir/follow.err")"
# Each event once, in order, as the aggregator recorded them.
expect_eq "the follower's lines against a plain read" \
    "$(on "$third" "$TEST_USER" events --job "$HELD_JOB")" "$(cat "$dir/follow.out")"
log "ok: the follower printed $(wc -l <"$dir/follow.out") events of job $HELD_JOB as they came"

# --- 4. a user holds at most four calls on a node; a closed one frees its place ---------------------
for i in 2 3 4; do
    on "$third" "$TEST_USER" events --job "$HELD_JOB" --follow >"$dir/follow$i.out" 2>&1 &
    followers+=($!)
done
deadline=$((SECONDS + 15))
until [[ $(cat "$dir"/follow[234].out | grep -c " epilog_finished ") == 3 ]]; do
    ((SECONDS <= deadline)) || fail "three more followers did not all start: $(cat "$dir"/follow[234].out)"
    sleep 0.2
done
refused "$third" "$TEST_USER" events --job "$HELD_JOB"
expect_eq "a fifth call of the same user: exit code" 3 "$rc"
[[ $err == *"too many events calls on this node now (4 per user, 64 in all)"* ]] ||
    fail "a fifth call was told: '$err'"
# Other users are not held back by this user's calls.
on "$second" root events --job "$HELD_JOB" >/dev/null || fail "root's call on $second failed while the user held four"
# `on` runs accelctl a few processes down (sandbox exec, nsenter, runuser): end one of them.
victim=$(pgrep -u "$TEST_USER" -f "accelctl events --job $HELD_JOB --follow" | head -n 1)
[[ -n $victim ]] || fail "no follower's accelctl process found"
kill "$victim"
deadline=$((SECONDS + 10))
until on "$third" "$TEST_USER" events --job "$HELD_JOB" >/dev/null 2>&1; do
    ((SECONDS <= deadline)) || fail "a closed follower's place was not freed within 10 s"
    sleep 0.2
done
log "ok: four calls per user, and a closed one's place is freed"
HELD_JOB=
