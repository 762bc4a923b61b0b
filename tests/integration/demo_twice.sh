#!/usr/bin/env bash
# The README's first command, run twice on a built tree: scripts/demo brings up its own
# sandbox (here <build>/demo-sandbox) and tells the seeds' story as the user acceldemo. Each
# run must show, from its own new jobs: both IPU tasks finding their own IPUoF file (mode
# 0600, the user's); the appliance run's two surrogate steps COMPLETED, the train job's named
# -csx1; the overrun warned in its batch script and stopped by the node (its step FAILED,
# summary time_limit); an accel= summary for every job; and `accelctl status` saying the
# node is healthy.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
repo=$(cd "$(dirname -- "$0")/../.." && pwd)
[[ -n ${ACCEL_BUILD_DIR:-} && -x $ACCEL_BUILD_DIR/bin/accel-agentd ]] ||
    fail "ACCEL_BUILD_DIR must name a built tree (got '${ACCEL_BUILD_DIR:-}')"
export ACCEL_SANDBOX_DIR=$ACCEL_BUILD_DIR/demo-sandbox ACCEL_DEMO_BUILT=1
stop_demo_sandbox() { "$repo/scripts/slurm-sandbox" down >/dev/null 2>&1 || true; }
trap stop_demo_sandbox EXIT

# check_run N OUTPUT: what run N of the demo must have shown. Sets RUN_IDS to its job ids.
check_run() {
    local n=$1 out=$2 line
    RUN_IDS=()
    # The demo's headings are bold (ANSI escapes): strip them.
    # shellcheck disable=SC2001
    out=$(sed 's/\x1b\[[0-9;]*m//g' <<<"$out")
    for task in 0 1; do
        grep -Eq "^ +task $task: /.*/ipuof-gcd$task\\.conf \\(acceldemo, mode 600\\)$" <<<"$out" ||
            fail "run $n: IPU task $task did not find its own IPUoF file"
    done
    grep -Eq '^[0-9]+\.0 +wsjob-[a-z0-9]+ +COMPLETED ' <<<"$out" ||
        fail "run $n: no COMPLETED surrogate step for the compile job"
    grep -Eq '^[0-9]+\.1 +wsjob-[a-z0-9]+-csx1 +COMPLETED ' <<<"$out" ||
        fail "run $n: no COMPLETED surrogate step named -csx1 for the train job"
    line=$(grep -E '^[0-9]+ +overrun-demo ' <<<"$out") || fail "run $n: sacct shows no overrun-demo job"
    [[ $line == *'"result":"time_limit"'* ]] || fail "run $n: the overrun's summary is not time_limit: $line"
    grep -q '^ *warned (SIGUSR1): checkpoint now$' <<<"$out" ||
        fail "run $n: the overrun's batch script got no warning (--appliance-signal=B:USR1@2)"
    grep -Eq '^[0-9]+\.0 +wsjob-[a-z0-9]+-csx1 +FAILED ' <<<"$out" ||
        fail "run $n: the overrun's surrogate step did not end FAILED"
    for name in ipu-demo gpt2-small-test overrun-demo; do
        line=$(grep -E "^[0-9]+ +$name " <<<"$out") || fail "run $n: sacct shows no $name job"
        [[ $line == *'accel={"v":1,'* ]] || fail "run $n: job $name has no accel= summary: $line"
        RUN_IDS+=("${line%% *}")
    done
    grep -Eq '^health +ok$' <<<"$out" || fail "run $n: accelctl status does not say the node is healthy"
}

declare -a ids
for n in 1 2; do
    out=$("$repo/scripts/demo" 2>&1) || fail "run $n of scripts/demo failed:"$'\n'"$out"
    check_run "$n" "$out"
    log "run $n: jobs ${RUN_IDS[*]}; $(grep -o 'done in [0-9]* s after the build' <<<"$out" || echo 'no timing line')"
    ids+=("${RUN_IDS[@]}")
done
# Every job of the second run is new.
[[ $(printf '%s\n' "${ids[@]}" | sort -u | wc -l) == 6 ]] || fail "the two runs share job ids: ${ids[*]}"
log "PASS"
