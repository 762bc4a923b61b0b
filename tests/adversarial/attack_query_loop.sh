#!/usr/bin/env bash
# Attack (docs/security.md, the events queries): one user loops `accelctl events --job J` on a
# long job of their own, four calls at a time (what the agent lets one user have), while another
# user asks for their own job's events. The long job is made by storing, after the attacker's
# finished job, ACCEL_QUERY_LOOP_ROWS rows of other traffic (heartbeats, job 0) and then one more
# event of the job, as a busy cluster would between a long job's first and last events. Written
# straight into the aggregator's database as root (as the aggregator writes them: the events,
# the job's span and, where the store has them, its row ranges), which is quicker than sending
# millions of events. The victim's every call must answer within ACCEL_QUERY_LOOP_BOUND seconds,
# the attacker must still get the whole job (the last event too) afterwards, and then the
# usual: no node drained, the victim's job and summary right, the next job working.
# shellcheck source=tests/adversarial/adv_lib.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/adv_lib.sh"

rows=${ACCEL_QUERY_LOOP_ROWS:-3000000}
bound=${ACCEL_QUERY_LOOP_BOUND:-1}
command -v sqlite3 >/dev/null || fail "sqlite3 is needed to seed the store"

adv_setup 25

conf=$ACCEL_SANDBOX_DIR/etc/accel-aggregator.conf
db=$(sed -n 's/^Database=//p' "$conf")
[[ -n $db && -f $db ]] || fail "no Database= in $conf, or no file there"

# The attacker's job, finished, with its events recorded.
submit -o /dev/null --wrap='true' </dev/null
long_job=$JOB_ID
wait_job_final "$long_job" 60
wait_comment "$long_job" 60
mine=$(as_test_user "$ACCELCTL" events --job "$long_job" 2>&1) || fail "the attacker cannot read job $long_job: $mine"
log "job $long_job: $(wc -l <<<"$mine") events recorded"

start=$SECONDS
has_ranges=$(sqlite3 "$db" "SELECT count(*) FROM sqlite_master WHERE name = 'job_ranges'")
ranges_sql=
((has_ranges == 1)) &&
    ranges_sql="INSERT INTO job_ranges(job_id, first_row, last_row) VALUES($long_job, last_insert_rowid(), last_insert_rowid());"
sqlite3 "$db" >/dev/null <<SQL || fail "seeding the store failed"
.timeout 10000
BEGIN IMMEDIATE;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $rows)
INSERT INTO events(node, epoch, seq, time_ns, kind, job_id, received_ns, envelope)
  SELECT 'filler', 1, i, i, 'node_heartbeat', 0, 0, x'00' FROM n;
INSERT INTO events(node, epoch, seq, time_ns, kind, job_id, received_ns, envelope)
  SELECT node, epoch, seq, time_ns, kind, job_id, received_ns, envelope FROM events
  WHERE job_id = $long_job ORDER BY rowid DESC LIMIT 1;
UPDATE job_spans SET last_row = last_insert_rowid() WHERE job_id = $long_job;
$ranges_sql
COMMIT;
SQL
log "stored $rows rows of other traffic inside job $long_job's lifetime ($((SECONDS - start)) s)"
want=$(($(wc -l <<<"$mine") + 1))

# Four loops of the attacker, each ending by itself after $loop_s seconds (the agent refuses
# calls beyond ControlUserRate; a refused call is looped over like any other).
loop_s=14
pids=()
for i in 1 2 3 4; do
    as_test_user bash -c "while ((SECONDS < $loop_s)); do '$ACCELCTL' events --job $long_job >/dev/null 2>&1; done" &
    pids+=($!)
done
sleep 2

# The victim, five times, each within the bound.
worst=0
for i in 1 2 3 4 5; do
    t0=$(date +%s%N)
    out=$(as_victim timeout "$bound" "$ACCELCTL" events --job "$VICTIM_JOB" 2>&1) ||
        fail "the victim's events call $i failed or took over $bound s while the attacker looped (exit $?): $out"
    ms=$((($(date +%s%N) - t0) / 1000000))
    ((ms > worst)) && worst=$ms
    grep -q ' prolog_started ' <<<"$out" || fail "the victim's events call $i lacks the prolog: $out"
    sleep 0.5
done
log "ok: the victim's five calls answered, the slowest in $worst ms (bound ${bound} s)"

# The attacker is served too: once the loops end, the whole job, through the rows stored
# meanwhile.
wait "${pids[@]}" || true  # a loop ends with its last call's status, refused or not
# The loops' last calls may still fill this second's ControlUserRate (50 a second): the
# attacker is served once that second has passed, within a few seconds at most.
deadline=$((SECONDS + 5))
while true; do
    err=$(mktemp)
    if got=$(as_test_user timeout 10 "$ACCELCTL" events --job "$long_job" 2>"$err" | wc -l); then
        rm -f "$err"
        break
    fi
    why=$(<"$err")
    rm -f "$err"
    if [[ $why != *ControlUserRate* ]] || ((SECONDS >= deadline)); then
        fail "the attacker's own call failed after the loops: $why"
    fi
    sleep 0.3
done
expect_eq "events of job $long_job" "$want" "$got"
adv_assert_unharmed
log "ok: four loops of events queries held up nobody else's"
