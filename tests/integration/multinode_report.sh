#!/usr/bin/env bash
# `accelctl report JOB` through real Slurm on the three-node sandbox, whose third node is a GPU
# node with the fake NVML (TelemetryInterval=1; its GPUs scripted busy at 60% and 22 GB used:
# scripts/lib/sandbox-config.sh). A --gres=gpu:1 job of the test user:
#  1. while it runs, its owner's `accelctl report` (run as that user on the node) shows live
#     figures (state running, the GPU at 60% and 22070 MiB, the plain line "holds 1 GPU, uses 1
#     of them ... so far"), in text and --json; root sees the same;
#  2. another ordinary user gets, byte for byte but for the job's number, the answer of a job
#     that does not exist, with the same exit code (5), in text and --json;
#  3. after it ended, the report shows the figures of its summary (state finished, the same
#     samples, utilization and memory as its row in AdminComment), to its owner and to root, and
#     still nothing to the other user.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user

OTHER_USER=${ACCEL_OTHER_USER:-accelother}
if ! getent passwd "$OTHER_USER" >/dev/null; then
    useradd --create-home --shell /bin/bash "$OTHER_USER" 2>/dev/null ||
        getent passwd "$OTHER_USER" >/dev/null || fail "could not create user $OTHER_USER"
fi
"$SANDBOX_SCRIPT" add-user "$OTHER_USER" >/dev/null || fail "could not register $OTHER_USER"

sandbox_nodes 3
node=${nodes[2]}

tag=mn-report-$$-$RANDOM
dir=$TEST_HOME/$tag
job=''
cleanup() {
    [[ -z $job ]] || scancel "$job" 2>/dev/null || true
    rm -rf "${dir:?}"
}
trap cleanup EXIT
mkdir -p "$dir"
chown "$TEST_USER" "$dir"

# report AS ARGS...: `accelctl report ARGS` on the GPU node as user AS (root: as root); sets
# OUT, ERR and RC.
report() {
    local as=$1
    shift
    local run=(accelctl report "$@")
    [[ $as == root ]] || run=(runuser -u "$as" -- env SLURM_CONF="$SLURM_CONF" "${run[@]}")
    RC=0
    OUT=$("$SANDBOX_SCRIPT" exec "$node" "${run[@]}" 2>"$dir/err") || RC=$?
    ERR=$(<"$dir/err")
}

# not_shown JOB: another user's answer for JOB is the answer for a job that does not exist,
# but for the number, in text and in --json.
not_shown() {
    local job=$1 unknown=$((900000000 + RANDOM)) json
    for json in '' --json; do
        report root "$unknown" $json
        local want_out=$OUT want_err=${ERR//$unknown/$job} want_rc=$RC
        expect_eq "exit code for an unknown job${json:+ ($json)}" 5 "$want_rc"
        report "$OTHER_USER" "$job" $json
        expect_eq "$OTHER_USER's exit code for job $job${json:+ ($json)}" "$want_rc" "$RC"
        expect_eq "$OTHER_USER's output for job $job${json:+ ($json)}" "$want_out" "$OUT"
        expect_eq "$OTHER_USER's error for job $job${json:+ ($json)}" "$want_err" "$ERR"
    done
}

submit -J "$tag" -w "$node" -N 1 --gres=gpu:1 -o "$dir/job.out" <<SCRIPT
#!/bin/bash
touch "$dir/job.started"
for _ in \$(seq 900); do [[ -e "$dir/release" ]] && exit 0; sleep 0.1; done
exit 1
SCRIPT
job=$JOB_ID
deadline=$((SECONDS + 60))
until [[ -e $dir/job.started ]]; do
    ((SECONDS <= deadline)) || fail "the GPU job $job did not start within 60 s"
    sleep 0.2
done

# --- 1. live figures while it runs ----------------------------------------------------------------
# The fake GPU reads idle at its first sample and busy from the second: the node sends the job's
# figures at both, so the report shows the busy GPU within seconds.
deadline=$((SECONDS + 30))
until report "$TEST_USER" "$job" --json && ((RC == 0)) &&
    jq -e '.state == "running" and (.devices | length) == 1 and .devices[0].util_max_pct == 60' \
        <<<"$OUT" >/dev/null; do
    ((SECONDS <= deadline)) || fail "no live report of job $job within 30 s: rc $RC: $OUT $ERR"
    sleep 0.5
done
live=$OUT
log "live: $(jq -c '{line, state, d: .devices[0], n: .nodes[0]}' <<<"$live")"
expect_eq "live figures' source" live "$(jq -r '.nodes[0].figures' <<<"$live")"
expect_eq "live GPU's highest utilization" 60 "$(jq -r '.devices[0].util_max_pct' <<<"$live")"
expect_eq "live GPU's memory, MiB" 22070 "$(jq -r '.devices[0].memory_max_mib' <<<"$live")"
[[ $(jq -r '.line' <<<"$live") =~ ^holds\ 1\ GPU,\ uses\ 1\ of\ them,\ mean\ [0-9]+%\ so\ far$ ]] ||
    fail "job $job's live line: $(jq -r '.line' <<<"$live")"
report "$TEST_USER" "$job"
expect_eq "exit code of the owner's report" 0 "$RC"
[[ $(head -n1 <<<"$OUT") == "job $job: holds 1 GPU, uses 1 of them, mean "*"% so far" ]] ||
    fail "the report's first line is not the plain line: $OUT"
grep -q "^  state    running, result ok$" <<<"$OUT" || fail "no state line: $OUT"
grep -Eq "^  $node +[0-9]+ +[0-9.]+% +60% +21\.6 GiB " <<<"$OUT" ||
    fail "no row for the job's GPU on $node: $OUT"
report root "$job" --json
expect_eq "root's exit code" 0 "$RC"
expect_eq "root sees the running job" running "$(jq -r '.state' <<<"$OUT")"

# --- 2. another user: the answer of a job that does not exist ---------------------------------------
not_shown "$job"

# --- 3. after the end: the summary's figures ---------------------------------------------------------
touch "$dir/release"
wait_job_final "$job" 60
expect_eq "GPU job $job: state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
wait_comment "$job" 60
row=$(summary_of "$COMMENT" | jq -c --arg n "$node" '.gpu[$n][0]')
log "summary row: $row"
report "$TEST_USER" "$job" --json
expect_eq "exit code of the owner's report after the end" 0 "$RC"
final=$OUT
log "final: $(jq -c '{line, state, d: .devices[0], n: .nodes[0]}' <<<"$final")"
expect_eq "state after the end" finished "$(jq -r '.state' <<<"$final")"
expect_eq "figures' source after the end" epilog "$(jq -r '.nodes[0].figures' <<<"$final")"
expect_eq "samples, as in the summary" "$(jq -r '.[5]' <<<"$row")" \
    "$(jq -r '.devices[0].samples' <<<"$final")"
expect_eq "highest utilization, as in the summary" "$(jq -r '.[2]' <<<"$row")" \
    "$(jq -r '.devices[0].util_max_pct' <<<"$final")"
expect_eq "memory, as in the summary" "$(jq -r '.[3]' <<<"$row")" \
    "$(jq -r '.devices[0].memory_max_mib' <<<"$final")"
expect_eq "mean utilization, as in the summary (whole %)" "$(jq -r '.[1]' <<<"$row")" \
    "$(jq -r '.devices[0].util_mean_pct | round' <<<"$final")"
[[ $(jq -r '.line' <<<"$final") =~ ^held\ 1\ GPU,\ used\ 1\ of\ them,\ mean\ [0-9]+%$ ]] ||
    fail "job $job's final line: $(jq -r '.line' <<<"$final")"
report root "$job"
expect_eq "root's exit code after the end" 0 "$RC"
[[ $(head -n1 <<<"$OUT") == "job $job: held 1 GPU, used 1 of them, mean "*% ]] ||
    fail "root's report after the end: $OUT"
not_shown "$job"
log "PASS"
