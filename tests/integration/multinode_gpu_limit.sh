#!/usr/bin/env bash
# The appliance time limit on a GPU node that reads no appliance (the three-node sandbox's sbn3:
# `up --no-ipu sbn3 --no-appliance sbn3`, four GPUs as Slurm GRES). Two jobs at once there:
#  - `--gres=gpu:1 --job-time-sec=6 --appliance-signal=USR1@3`, a batch script whose one `srun`
#    step would compute for 25 s: the steps holding the job's GPU run its clock, so the step's
#    task is warned about 3 s in (the batch shell is not), and both get SIGTERM about 6 s in;
#    the summary says time_limit, gpu, about 6 s used; the job's output has no `accel:` line;
#  - no GPUs, `--job-time-sec=3`, a script of 6 s: nothing on the node can measure that limit,
#    so it is not enforced and the job completes, but never silently: its output says so in one
#    `accel:` line, and its summary names the node under limit_unmeasured.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user
command -v bc >/dev/null || fail "bc is not installed (Debian package bc)"

sandbox_nodes 3
read -ra no_appliance <<<"${ACCEL_SANDBOX_NO_APPLIANCE_NODES:-}"
((${#no_appliance[@]} == 1)) || fail "expected one node without an appliance (up --no-appliance NODE)," \
    "the sandbox has '${ACCEL_SANDBOX_NO_APPLIANCE_NODES:-}'"
node=${no_appliance[0]}

tag=mn-gpu-limit-$$-$RANDOM
dir=$TEST_HOME/$tag
trap 'rm -rf "${dir:?}"' EXIT
mkdir -p "$dir"
cp -- "$(dirname -- "$0")/limit_step_task.sh" "$dir/task.sh"
chown -R "$TEST_USER" "$dir"

submit -J "$tag-gpu" -w "$node" -N 1 --gres=gpu:1 --time=5 --job-time-sec=6 --appliance-signal=USR1@3 \
    -o "$dir/gpu.out" <<SCRIPT
#!/bin/bash
now() { date +%s.%N; }
echo "started \$(now)"
trap 'echo "batch warned \$(now)"' USR1
trap 'echo "batch term \$(now)"; exit 143' TERM
srun --quiet bash "$dir/task.sh" "$dir" &
step=\$!
while kill -0 \$step 2>/dev/null; do wait \$step; done
echo "finished \$(now)"
SCRIPT
gpu_job=$JOB_ID

submit -J "$tag-none" -w "$node" -N 1 --time=5 --job-time-sec=3 -o "$dir/none.out" <<'SCRIPT'
#!/bin/bash
sleep 6
echo "finished"
SCRIPT
none_job=$JOB_ID

# The GPU job: measured by its steps, warned and stopped on time.
wait_job_final "$gpu_job" 90
out=$(cat "$dir/gpu.out" "$dir"/step.* 2>/dev/null || true)
log "GPU job $gpu_job output:"$'\n'"$out"
at() { sed -n "s/^$1 \\([0-9.]*\\)$/\\1/p" <<<"$out" | head -1; }
grep -q 'finished ' <<<"$out" && fail "the GPU job ran its whole 25 s: its limit of 6 s was not enforced"
grep -q 'accel:' <<<"$out" && fail "the GPU job's limit is measured, yet its output has an accel: line"
started=$(at started)
[[ -n $started ]] || fail "the GPU job's script did not start"
expect_eq "GPU job: warnings of the step" 1 "$(grep -c '^step warned ' <<<"$out")"
expect_eq "GPU job: warnings of the batch shell" 0 "$(grep -c '^batch warned ' <<<"$out")"
[[ -n $(at "step term") ]] || fail "no SIGTERM reached the GPU job's step"
w=$(echo "$(at "step warned") - $started" | bc) t=$(echo "$(at "batch term") - $started" | bc)
log "GPU job: the step warned after $w s, SIGTERM after $t s (limit 6 s, lead 3 s)"
(($(echo "$w >= 2.5 && $w <= 4.5" | bc))) || fail "warning after $w s, expected about 3"
(($(echo "$t >= 5.5 && $t <= 7.5" | bc))) || fail "SIGTERM after $t s, expected about 6"
wait_comment "$gpu_job" 60
summary=$(summary_of "$COMMENT")
log "GPU job summary: $summary"
expect_eq "GPU job summary: result, kind, count, limit, unmeasured" "time_limit gpu 1 6 none" \
    "$(jq -r '"\(.result) \(.accel) \(.count) \(.appliance_limit_s) \(.limit_unmeasured // "none")"' <<<"$summary")"
used=$(jq -r .appliance_s <<<"$summary")
((used >= 5 && used <= 8)) || fail "appliance_s is $used; the GPU job's steps ran about 6 s"

# The job without GPUs: its limit cannot be measured here; it runs, and says so.
wait_job_final "$none_job" 60
expect_eq "job without GPUs: state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
out=$(<"$dir/none.out")
log "job $none_job output:"$'\n'"$out"
want="accel: job $none_job: the appliance time limit of 3 s cannot be measured on $node and is not enforced there"
expect_eq "accel: lines in the output" 1 "$(grep -c 'accel:' <<<"$out")"
grep -qF -- "$want" <<<"$out" || fail "the output does not say '$want'"
grep -q '^finished$' <<<"$out" || fail "the job without GPUs did not run to its end"
wait_comment "$none_job" 60
summary=$(summary_of "$COMMENT")
log "job without GPUs: summary: $summary"
expect_eq "job without GPUs: summary: result, kind, limit, unmeasured" "ok  3 [\"$node\"]" \
    "$(jq -c -r '"\(.result) \(.accel) \(.appliance_limit_s) \(.limit_unmeasured | tojson)"' <<<"$summary")"
log "PASS"
