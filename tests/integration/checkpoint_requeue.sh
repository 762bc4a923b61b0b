#!/usr/bin/env bash
# The checkpoint and requeue loop that users build on the appliance time limit, as
# checkpointing tools for Slurm do it: a small Python program counts to 7, one step a second,
# in an IPU job with `--job-time-sec=7 --appliance-signal=B:USR2@3` (the program is the batch
# shell: the script execs it). On USR2 it saves its count and runs `scontrol requeue
# $SLURM_JOB_ID`. Each run starts from the saved count with a fresh budget of 7 s, so the work
# of 7 s needs two runs: the first is warned about 4 s in and requeues itself, the second
# finishes within its own budget (it would not, were the first run's time counted). Slurm
# holds a requeued job for the credential lifetime (AuthInfo cred_expire: 120 s by default, 15
# s in the sandbox), after which the next run gets its Prolog. Checked: the output (appended
# over the runs) shows every count from 1 to 7 once and two runs; the first run was warned once,
# the second never, and none was stopped; the job ends COMPLETED; its summary says ok, restarts
# 1, and the appliance seconds of each run; nothing of the job is left on the node (its record,
# its partition in the V-IPU controller).
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user
command -v python3 >/dev/null || fail "python3 is not installed (Debian package python3)"

tag=ckpt-$$-$RANDOM
dir=$TEST_HOME/$tag
trap 'rm -rf "${dir:?}"' EXIT
mkdir -p "$dir"
cat >"$dir/count.py" <<'PY'
import os
import signal
import subprocess
import sys
import time

state, goal = sys.argv[1], int(sys.argv[2])
count = int(open(state).read()) if os.path.exists(state) else 0
run = os.environ.get("SLURM_RESTART_COUNT", "0")
print(f"run {run} starts at {count}", flush=True)
warned = []
signal.signal(signal.SIGUSR2, lambda sig, frame: warned.append(time.time()))
while count < goal:
    time.sleep(1)
    count += 1
    print(f"count {count}", flush=True)
    if warned and count < goal:
        with open(state + ".tmp", "w") as f:
            f.write(str(count))
        os.replace(state + ".tmp", state)
        print(f"run {run} warned {len(warned)} time(s); saved {count}; requeueing", flush=True)
        subprocess.run(["scontrol", "requeue", os.environ["SLURM_JOB_ID"]], check=True)
        time.sleep(60)  # Slurm ends this run
print(f"done at {count}", flush=True)
PY
chown -R "$TEST_USER" "$dir"

submit -J "$tag" -o "$dir/out" --open-mode=append --time=5 --ipus=2 --job-time-sec=7 \
    --appliance-signal=B:USR2@3 <<SCRIPT
#!/bin/bash
exec python3 "$dir/count.py" "$dir/state" 7
SCRIPT
job=$JOB_ID

wait_requeued_job_final "$job" 150
out=$(<"$dir/out")
log "job output:"$'\n'"$out"
expect_eq "sacct state|exit code of the last run" "COMPLETED|0:0" "$JOB_FINAL"
expect_eq "counts 1 to 7, each once" "$(seq 7 | paste -sd' ')" \
    "$(sed -n 's/^count //p' <<<"$out" | paste -sd' ')"
grep -q '^done at 7$' <<<"$out" || fail "the last run did not finish the count"
expect_eq "runs" "0 1" "$(sed -n 's/^run \([0-9]*\) starts at .*/\1/p' <<<"$out" | paste -sd' ')"
expect_eq "warnings and requeues" "run 0 warned 1 time(s)" "$(sed -n 's/; saved .*//p' <<<"$out")"
grep -q 'accel:' <<<"$out" && fail "the job's output has an accel: line"

# The summary as written again with the second run's epilog.
wait_summary_of_run "$job" 1 60
summary=$SUMMARY
log "summary: $summary"
expect_eq "summary: result, restarts, runs" "ok 1 2" \
    "$(jq -r '"\(.result) \(.restarts) \(.run_appliance_s | length)"' <<<"$summary")"
read -r s0 s1 < <(jq -r '.run_appliance_s | map(tostring) | join(" ")' <<<"$summary")
# Warned 4 s in, the first run counted one more second and was requeued; the second counted
# the remaining two or three.
((s0 >= 3 && s0 <= 7)) || fail "the requeued run used $s0 s; expected about 5"
((s1 >= 1 && s1 <= 5)) || fail "the last run used $s1 s; expected about 3"
expect_eq "summary: appliance_s is the runs' sum" "$((s0 + s1))" "$(jq -r .appliance_s <<<"$summary")"

# Nothing of the job is left on the node.
conf=${ACCEL_SANDBOX_NODE_CONF_1:?}
run_dir=$(sed -n 's/^RunDir=//p' "$conf")
[[ ! -e $run_dir/state/$job.json ]] || fail "the agent still holds a record of job $job"
partitions=$(vipu list partitions --json)
[[ $(jq --arg p "p$job" '[.[] | select(.id == $p)] | length' <<<"$partitions") == 0 ]] ||
    fail "partition p$job is left in the V-IPU controller"
log "PASS"
