#!/usr/bin/env bash
# An ordinary user's job with the node agent in the path: while the job runs, its directory
# exists, a tmpfs of its own owned by the user with mode 0700, and `accelctl jobs` shows it; the agent is killed
# with SIGKILL mid-job and comes back (supervised as by systemd) with the job re-adopted;
# the job still completes, and afterwards its directory and record are gone and the node is
# idle, not drained.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user

conf_dir=$(dirname -- "$SLURM_CONF")
run_dir=$(sed -n 's/^RunDir=//p' "$conf_dir/accel.conf")
[[ -n $run_dir ]] || fail "no RunDir in $conf_dir/accel.conf"
pidfile=$ACCEL_SANDBOX_DIR/run/accel-agentd.pid
tag=agent-job-$$-$RANDOM
seen=$TEST_HOME/$tag.seen
release=$TEST_HOME/$tag.release
JOB_ID=''
# On any failure the job is cancelled, so it never holds the node for the next test.
trap '[[ -n $JOB_ID ]] && scancel "$JOB_ID" 2>/dev/null; rm -f "$seen" "$release" "$TEST_HOME/$tag.out"' EXIT

# The job records what it sees of its own directory, then waits for the test to let it go.
submit --job-name="$tag" --output="$TEST_HOME/$tag.out" <<SCRIPT
#!/bin/bash
stat -c '%U %a' "$run_dir/jobs/\$SLURM_JOB_ID" >"$seen"
for _ in \$(seq 600); do [[ -e "$release" ]] && exit 0; sleep 0.1; done
exit 9
SCRIPT

deadline=$((SECONDS + 30))
until [[ -s $seen ]]; do
    ((SECONDS < deadline)) || fail "job $JOB_ID did not start within 30 s"
    sleep 0.1
done
expect_eq "job directory as the job sees it" "$TEST_USER 700" "$(<"$seen")"
# Root's view, in the node's mount namespace (slurmd's and the agent's): a tmpfs of its own
# (JobDirSize), the user's.
node=$(sinfo -h -o %n | head -n 1)
expect_eq "job directory owner and mode (root's view)" "$TEST_USER 700" \
    "$("$SANDBOX_SCRIPT" exec "$node" stat -c '%U %a' "$run_dir/jobs/$JOB_ID")"
expect_eq "job directory's file system (root's view)" tmpfs \
    "$("$SANDBOX_SCRIPT" exec "$node" stat -f -c %T "$run_dir/jobs/$JOB_ID")"
# Other tests' jobs may run at the same time: look for this one.
expect_eq "accelctl jobs lists the job" "$JOB_ID" \
    "$(accelctl jobs --json | jq -r --argjson j "$JOB_ID" '.[] | select(.job_id == $j) | .job_id')"
expect_eq "the job's state" "Ready" "$(accelctl job "$JOB_ID" --json | jq -r .state)"
expect_eq "the user may read its own job" "$JOB_ID" \
    "$(as_test_user "$(command -v accelctl)" job "$JOB_ID" --json | jq -r .job_id)"

# SIGKILL the agent itself (not its supervisor) mid-job.
old_pid=$(<"$pidfile")
kill -0 "$old_pid" || fail "agent pid $old_pid from $pidfile is not running"
kill -9 "$old_pid"
log "killed accel-agentd (pid $old_pid)"
deadline=$((SECONDS + 15))
until new_pid=$(cat "$pidfile" 2>/dev/null) && [[ -n $new_pid && $new_pid != "$old_pid" ]] &&
    accelctl status >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "accel-agentd did not come back within 15 s"
    sleep 0.1
done
log "accel-agentd is back (pid $new_pid)"
expect_eq "the job after the restart" "Ready" "$(accelctl job "$JOB_ID" --json | jq -r .state)"

touch "$release"
wait_job_final "$JOB_ID" 60
expect_eq "sacct state|exit code" "COMPLETED|0:0" "$JOB_FINAL"

# The epilog runs as the job ends; accounting may see the end a moment before it finishes.
deadline=$((SECONDS + 20))
while [[ -e $run_dir/jobs/$JOB_ID ]] ||
    [[ -n $(accelctl jobs --json | jq --argjson j "$JOB_ID" '.[] | select(.job_id == $j)') ]]; do
    ((SECONDS < deadline)) || fail "job $JOB_ID's directory or record still there 20 s after its end"
    sleep 0.2
done
log "ok: directory and record of job $JOB_ID are gone"
state=$(sinfo -h -o %T)
[[ $state =~ ^(idle|mixed|allocated|planned)$ ]] || fail "node is '$state' after the job (drained or down?)"
log "ok: node is $state, in service"
log "PASS"
