#!/usr/bin/env bash
# The appliance time limit of an IPU-POD job that launches no appliance job. Its IPUs are remote
# (reached over IPUoF), so what the limit measures is the time its steps run on the node, from
# the end of the prolog. Two such jobs at once, each `--ipus=2 --appliance-time=0:06`, each a
# batch script that starts one `srun` step that would compute for 25 s:
#  - `--appliance-signal=USR1@3`: the warning (USR1) reaches the step's task about 3 s after the
#    script starts, and not the batch shell, as with `sbatch --signal`;
#  - `--appliance-signal=B:USR1@3`: the batch shell alone gets it.
# In both, SIGTERM reaches the batch shell and the step's task about 6 s in (queue and prolog
# do not count), the job ends there, and its summary says time_limit with about 6 s used.
# Before, such a job ran all 25 s, unwarned, and its summary said ok with 0 s used.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user
command -v bc >/dev/null || fail "bc is not installed (Debian package bc)"

tag=ipu-limit-$$-$RANDOM
dir=$TEST_HOME/$tag
trap 'rm -rf "${dir:?}"' EXIT
mkdir -p "$dir"
cp -- "$(dirname -- "$0")/limit_step_task.sh" "$dir/task.sh"
cat >"$dir/job.sh" <<'SCRIPT'
#!/bin/bash
now() { date +%s.%N; }
echo "started $(now)"
trap 'echo "batch warned $(now)"' USR1
trap 'echo "batch term $(now)"; exit 143' TERM
srun --quiet bash @DIR@/task.sh @DIR@ &
step=$!
# A trapped signal interrupts wait; the step is waited for again.
while kill -0 $step 2>/dev/null; do wait $step; done
echo "finished $(now)"
SCRIPT
# The batch script runs as a copy in slurmd's spool: it is told where task.sh is.
sed -i "s|@DIR@|$dir|g" "$dir/job.sh"
chown -R "$TEST_USER" "$dir"

declare -A job_of
for form in USR1@3 B:USR1@3; do
    submit -J "$tag" -o "$dir/${form%%:*}.out" --time=5 --ipus=2 --appliance-time=0:06 \
        --appliance-signal="$form" "$dir/job.sh"
    job_of[$form]=$JOB_ID
done

# check FORM WARNED NOT_WARNED: the job of FORM warned WARNED ("step" or "batch") about 3 s
# after its script started and never NOT_WARNED; both were sent SIGTERM about 6 s in; the
# summary says time_limit with about 6 s used.
check() {
    local form=$1 warned_one=$2 spared=$3 job=${job_of[$1]} out at_started w t used summary
    wait_job_final "$job" 90
    out=$(cat "$dir/${form%%:*}.out" "$dir/step.$job" 2>/dev/null || true)
    log "job $job ($form) output:"$'\n'"$out"
    at() { sed -n "s/^$1 \\([0-9.]*\\)$/\\1/p" <<<"$out" | head -1; }
    grep -q 'finished ' <<<"$out" && fail "$form: the job ran its whole 25 s: its limit of 6 s was not enforced"
    at_started=$(at started)
    [[ -n $at_started ]] || fail "$form: the job script did not start"
    expect_eq "$form: warnings of the $warned_one" 1 "$(grep -c "^$warned_one warned " <<<"$out")"
    expect_eq "$form: warnings of the $spared" 0 "$(grep -c "^$spared warned " <<<"$out")"
    [[ -n $(at "batch term") ]] || fail "$form: no SIGTERM reached the batch shell"
    [[ -n $(at "step term") ]] || fail "$form: no SIGTERM reached the step's task"
    w=$(echo "$(at "$warned_one warned") - $at_started" | bc)
    t=$(echo "$(at "batch term") - $at_started" | bc)
    log "$form: the $warned_one warned after $w s, SIGTERM after $t s (limit 6 s, lead 3 s)"
    (($(echo "$w >= 2.5 && $w <= 4.5" | bc))) || fail "$form: warning after $w s, expected about 3"
    (($(echo "$t >= 5.5 && $t <= 7.5" | bc))) || fail "$form: SIGTERM after $t s, expected about 6"
    wait_comment "$job" 60
    summary=$(summary_of "$COMMENT")
    log "$form: summary: $summary"
    expect_eq "$form: summary: result, kind, limit" "time_limit ipu 6" \
        "$(jq -r '"\(.result) \(.accel) \(.appliance_limit_s)"' <<<"$summary")"
    used=$(jq -r .appliance_s <<<"$summary")
    ((used >= 5 && used <= 8)) || fail "$form: appliance_s is $used; the job's steps ran about 6 s"
}

check USR1@3 step batch
check B:USR1@3 batch step
log "PASS"
