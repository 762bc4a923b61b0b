#!/usr/bin/env bash
# ApplianceTimeOnRequeue=cumulative: a requeued job's next run may use only what its earlier runs
# left of the appliance time limit. The node's accel.conf gets the key (the agent restarted with
# it, and again without it at the end). An IPU job with `--job-time-sec=7
# --appliance-signal=B:USR2@2` runs a Python program that requeues itself after 3 s in its first
# run (as a preempted job would be), unwarned; its second run has 4 s left, read from the first
# run's summary in accounting, so it is warned about 2 s in and stopped about 4 s in (fresh, it
# would be 5 s and 7 s). The summary says time_limit, restarts 1, and about 3 and 4 s for the runs.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user
command -v python3 >/dev/null || fail "python3 is not installed (Debian package python3)"
command -v bc >/dev/null || fail "bc is not installed (Debian package bc)"

conf=${ACCEL_SANDBOX_NODE_CONF_1:?}
tag=ckpt-cumulative-$$-$RANDOM
dir=$TEST_HOME/$tag
restore() {
    sed -i '/^ApplianceTimeOnRequeue=/d' "$conf"
    "$SANDBOX_SCRIPT" restart agentd >/dev/null || printf '%s: could not restart accel-agentd\n' "$TEST_NAME" >&2
    rm -rf "${dir:?}"
}
trap restore EXIT
echo "ApplianceTimeOnRequeue=cumulative" >>"$conf"
"$SANDBOX_SCRIPT" restart agentd >/dev/null || fail "accel-agentd did not restart with ApplianceTimeOnRequeue"

mkdir -p "$dir"
cat >"$dir/count.py" <<'PY'
import os
import signal
import subprocess
import sys
import time

start = time.time()
run = os.environ.get("SLURM_RESTART_COUNT", "0")
print(f"run {run} starts", flush=True)


def warned(sig, frame):
    print(f"run {run} warned at {time.time() - start:.3f}", flush=True)


def stopped(sig, frame):
    print(f"run {run} stopped at {time.time() - start:.3f}", flush=True)
    sys.exit(143)


signal.signal(signal.SIGUSR2, warned)
signal.signal(signal.SIGTERM, stopped)
for second in range(1, 30):
    time.sleep(1)
    if run == "0" and second == 3:
        print("run 0 requeues itself", flush=True)
        subprocess.run(["scontrol", "requeue", os.environ["SLURM_JOB_ID"]], check=True)
        time.sleep(60)  # Slurm ends this run
print(f"run {run} was never stopped", flush=True)
PY
chown -R "$TEST_USER" "$dir"

submit -J "$tag" -o "$dir/out" --open-mode=append --time=5 --ipus=2 --job-time-sec=7 \
    --appliance-signal=B:USR2@2 <<SCRIPT
#!/bin/bash
exec python3 "$dir/count.py"
SCRIPT
job=$JOB_ID
wait_requeued_job_final "$job" 150
out=$(<"$dir/out")
log "job output:"$'\n'"$out"
expect_eq "runs" "0 1" "$(sed -n 's/^run \([0-9]*\) starts$/\1/p' <<<"$out" | paste -sd' ')"
grep -q '^run 0 requeues itself$' <<<"$out" || fail "the first run did not requeue itself"
expect_eq "warnings of the first run" 0 "$(grep -c '^run 0 warned' <<<"$out")"
grep -q 'never stopped' <<<"$out" && fail "the second run was never stopped"
grep -q 'accel:' <<<"$out" && fail "the job's output has an accel: line (the earlier run's time was not read?)"
w=$(sed -n 's/^run 1 warned at //p' <<<"$out" | head -1)
t=$(sed -n 's/^run 1 stopped at //p' <<<"$out" | head -1)
[[ -n $w && -n $t ]] || fail "the second run was not warned and stopped"
expect_eq "warnings of the second run" 1 "$(grep -c '^run 1 warned' <<<"$out")"
log "second run: warned after $w s, stopped after $t s (4 s left of 7, lead 2 s)"
(($(echo "$w >= 1.3 && $w <= 3.0" | bc))) || fail "warned after $w s, expected about 2 (fresh: 5)"
(($(echo "$t >= 3.3 && $t <= 5.0" | bc))) || fail "stopped after $t s, expected about 4 (fresh: 7)"

# The summary as written again with the second run's epilog.
wait_summary_of_run "$job" 1 60
summary=$SUMMARY
log "summary: $summary"
expect_eq "summary: result, restarts" "time_limit 1" "$(jq -r '"\(.result) \(.restarts)"' <<<"$summary")"
read -r s0 s1 < <(jq -r '.run_appliance_s | map(tostring) | join(" ")' <<<"$summary")
((s0 >= 2 && s0 <= 4)) || fail "the first run used $s0 s; expected about 3"
((s1 >= 3 && s1 <= 5)) || fail "the second run used $s1 s; expected about 4"
log "PASS"
