#!/usr/bin/env bash
# The appliance time limit, enforced by the node agent. The job asks for 3 s of appliance time,
# a warning (USR1) 1 s before to its batch shell (B:, as the script itself does the work), and
# 5 minutes of Slurm time. Its appliance job waits 4 s in the
# appliance queue, which does not count, then runs. So the warning comes about 6 s after the
# launch and SIGTERM about 7 s after it to every process of the job, the launcher among them,
# the appliance job is cancelled, and the job's accounting summary says time_limit: minutes before Slurm's
# own limit, and far inside Slurm's own slack (30-90 s). The job script ignores SIGTERM, so
# SIGKILL ends it when the grace period (ApplianceKillGrace, 5 s in the sandbox) is over; its
# surrogate step, whose appliance job was cancelled, ends FAILED.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user

tag=appliance-limit-$$-$RANDOM
output=$TEST_HOME/$tag.out
trap 'rm -f "$output"' EXIT

submit -J "$tag" -o "$output" --time=5 --job-time-sec=3 --appliance-signal=B:USR1@1 <<'SCRIPT'
#!/bin/bash
now() { date +%s.%N; }
trap 'echo "warned $(now)"' USR1
trap 'echo "term $(now)"' TERM
# The launcher's exit status is taken by a subshell that waits for it in the foreground (and
# ignores SIGTERM; the launcher sets its own handler): bash's `wait` for a background child,
# cut short by a trapped signal, does not always give the child's status afterwards.
(
    trap '' TERM
    fake-appliance-job --csx 1 --queue-seconds 4 --run-seconds 120 >"$HOME/appliance-$SLURM_JOB_ID.id"
    echo "launcher ended $? $(now)"
) &
echo "launched $(now)"
launcher=$!
# A trapped signal interrupts wait (status > 128); the launcher is waited for again.
while kill -0 $launcher 2>/dev/null; do wait $launcher; done
# SIGTERM is ignored: only SIGKILL ends this.
while :; do sleep 0.2; done
SCRIPT

start=$SECONDS
wait_job_final "$JOB_ID" 120
elapsed=$((SECONDS - start))
out=$(<"$output")
log "job output:"$'\n'"$out"
# Slurm's own limit (--time=5) would act after 5 minutes and its slack.
((elapsed < 60)) || fail "the job took $elapsed s: the appliance limit was not what ended it"
at() { sed -n "s/^$1 \\([0-9.]*\\)$/\\1/p" <<<"$out" | head -1; }
launched=$(at launched) warned=$(at warned) term=$(at term)
[[ -n $launched ]] || fail "the job script never launched its appliance job"
[[ -n $warned ]] || fail "no warning signal reached the job's task"
[[ -n $term ]] || fail "no SIGTERM reached the job's task"
w=$(echo "$warned - $launched" | bc) t=$(echo "$term - $launched" | bc)
log "warning after $w s, SIGTERM after $t s (queue 4 s + limit 3 s, lead 1 s)"
# Queue time must not count: with it, the limit would hit 3 s after the launch.
(($(echo "$w >= 5.5 && $w <= 7.5" | bc))) || fail "warning after $w s, expected about 6"
(($(echo "$t >= 6.5 && $t <= 8.5" | bc))) || fail "SIGTERM after $t s, expected about 7"
# The launcher ends with its appliance job cancelled (exit 2), at once.
read -r code ended < <(sed -n 's/^launcher ended \([0-9]*\) \([0-9.]*\)$/\1 \2/p' <<<"$out")
expect_eq "launcher exit (cancelled)" 2 "${code:-none}"
(($(echo "$ended - $term <= 4" | bc))) || fail "the launcher ended $(echo "$ended - $term" | bc) s after SIGTERM"
# The task ignored SIGTERM: SIGKILL came when the grace was over, not before, not much after.
grace=$(sed -n 's/^ApplianceKillGrace=\([0-9]*\).*/\1/p' "$ACCEL_SANDBOX_NODE_CONF_1")
grace=${grace:-30}
expect_eq "sacct state|exit code (killed)" "FAILED|0:9" "$JOB_FINAL"
end=$(date -d "$(as_test_user sacct -n -P -X -j "$JOB_ID" -o End)" +%s)
k=$(echo "$end - $term" | bc)
log "the job ended $k s after SIGTERM (grace $grace s; sacct has whole seconds)"
(($(echo "$k >= $grace - 1 && $k <= $grace + 2" | bc))) || fail "SIGKILL $k s after SIGTERM, expected the $grace s grace"

# The appliance job was cancelled at the limit, once: by its launcher, which got SIGTERM as
# every process of the job does, or by the agent through the appliance client when the
# launcher had not yet (never both: the agent cancels only what still runs).
appl=$(head -1 "$TEST_HOME/appliance-$JOB_ID.id")
rm -f "$TEST_HOME/appliance-$JOB_ID.id"
[[ $appl == wsjob-* ]] || fail "no appliance job id ('$appl')"
cancels=$(grep -c "^csctl cancel job $appl\$" "$ACCEL_HW_MOCK_STATE/appliance/calls.log" || true)
((cancels <= 1)) || fail "the agent cancelled $appl $cancels times"
log "the agent's cancels of $appl: $cancels (0: its launcher cancelled it on SIGTERM first)"
state=$(csctl get jobs -o json -l "slurm-job-id=$JOB_ID" | jq -r --arg id "$appl" '.items[] | select(.name == $id) | .state')
expect_eq "appliance job state" "CANCELLED" "$state"

# Its surrogate step ends FAILED: the appliance job was cancelled (a signalled step would read
# CANCELLED).
steps=$(as_test_user sacct -n -P -j "$JOB_ID" -o JobName,State | grep '^wsjob-' || true)
expect_eq "surrogate step" "$appl-csx1|FAILED" "$steps"

wait_comment "$JOB_ID" 60
expect_eq "summary result" "time_limit" "$(summary_of "$COMMENT" | jq -r .result)"
log "PASS"
