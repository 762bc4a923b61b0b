#!/usr/bin/env bash
# Idle accelerators, noticed (IdleAfter=0:03, IdleAction=notify on the GPU node sbn3, its agent
# restarted with them and again without at the end): a busy job and an idle job run side by
# side, one GPU each. Once both run, the idle job's GPU is scripted at 0% for ever in the fake
# NVML (the others stay busy at 60%) and the agent restarted, so both jobs are sampled afresh
# from then on. Then:
#  1. the idle job (its work in an srun step) gets its job_idle event (action notify, told_job
#     true) and the accel: line in its output file, once; the node's gauge shows it idle and
#     the busy job 0 s; the busy job neither;
#  2. their summaries in AdminComment, field by field: the busy job's GPU row (its GPU, mean
#     above 0 and below 60 since its first sample after the restart is the script's idle one,
#     max 60, 22070 MiB, energy above 0, samples >= 2) and no idle key; the idle job's row (its
#     GPU, 0, 0, 615 MiB, energy above 0, samples >= 3), idle {"sbn3": {idle_s >= 3, gpus
#     [its GPU], action notify}}, result ok and no "ended";
#  3. an interactive job (srun from the login side, no output file), idle, gets the line in its
#     terminal, printed by its srun (slurmctld's job notification).
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"
# shellcheck source=tests/integration/gpu_idle_lib.sh
source "$(dirname -- "$0")/gpu_idle_lib.sh"

require_root
require_sandbox
ensure_test_user
command -v sqlite3 >/dev/null || fail "sqlite3 is not installed (Debian package sqlite3)"

sandbox_nodes 3
tag=mn-idle-$$-$RANDOM
dir=$TEST_HOME/$tag
busy='' idle='' inter='' inter_pid=''
restore() {
    [[ -z $busy ]] || scancel "$busy" 2>/dev/null || true
    [[ -z $idle ]] || scancel "$idle" 2>/dev/null || true
    [[ -z $inter ]] || scancel "$inter" 2>/dev/null || true
    [[ -z $inter_pid ]] || kill "$inter_pid" 2>/dev/null || true
    gpu_idle_restore
    rm -rf "${dir:?}"
}
trap restore EXIT
mkdir -p "$dir"
chown "$TEST_USER" "$dir"
gpu_idle_prepare "$dir"
node=$GPU_NODE conf=$GPU_CONF

# A job of one GPU that says which and waits for its release file: in its batch shell, or
# (LAUNCHER srun) in a step, as a launched program does.
job_script() {
    cat <<SCRIPT
#!/bin/bash
echo "\$SLURM_JOB_GPUS" >"$dir/$1.tmp"
mv "$dir/$1.tmp" "$dir/$1.started"
${2:-} bash -c 'for _ in \$(seq 1200); do [[ -e "$dir/release" ]] && exit 0; sleep 0.1; done; exit 1'
SCRIPT
}
submit -J "$tag-busy" -w "$node" -N 1 --gres=gpu:1 -o "$dir/busy.out" < <(job_script busy)
busy=$JOB_ID
submit -J "$tag-idle" -w "$node" -N 1 --gres=gpu:1 -o "$dir/idle.out" < <(job_script idle "srun -n1")
idle=$JOB_ID
deadline=$((SECONDS + 60))
until [[ -e $dir/busy.started && -e $dir/idle.started ]]; do
    ((SECONDS <= deadline)) || fail "jobs $busy and $idle did not both start within 60 s"
    sleep 0.1
done
gpu_busy=$(<"$dir/busy.started")
gpu_idle=$(<"$dir/idle.started")
[[ $gpu_busy =~ ^[0-9]$ && $gpu_idle =~ ^[0-9]$ && $gpu_busy != "$gpu_idle" ]] ||
    fail "the jobs did not get one GPU each: '$gpu_busy' and '$gpu_idle'"
log "busy job $busy has GPU $gpu_busy, idle job $idle GPU $gpu_idle"

# The idle job's GPU at 0% for ever (its idle reading of the captured H200); the agent reads
# the scripts when it starts, and with the idle keys.
gpu_idle_script "$gpu_idle"
gpu_idle_policy 0:03 notify

# --- 1. the event, the line, the gauge -----------------------------------------------------------
db=$ACCEL_SANDBOX_DIR/state/aggregator/events.db
count_idle() { sqlite3 "$db" "SELECT count(*) FROM events WHERE kind = 'job_idle' AND job_id = $1"; }
deadline=$((SECONDS + 40))
until [[ $(count_idle "$idle") -ge 1 ]]; do
    ((SECONDS <= deadline)) || fail "no job_idle event of job $idle in $db within 40 s"
    sleep 0.5
done
sqlite3 "$db" "SELECT writefile('$dir/idle.bin', envelope) FROM events
               WHERE kind = 'job_idle' AND job_id = $idle LIMIT 1" >/dev/null
flatc --json --strict-json --raw-binary -o "$dir" "$ACCEL_REPO_DIR/schemas/events.fbs" -- \
    "$dir/idle.bin" || fail "flatc could not read the stored job_idle of job $idle"
ev=$(jq -c '.event' "$dir/idle.json")
log "job $idle's job_idle event: $ev"
jq -e --argjson g "$gpu_idle" '.job_id > 0 and .idle_s >= 3 and .devices == [$g] and
       .action == "Notify" and .told_job == true' <<<"$ev" >/dev/null ||
    fail "job $idle's job_idle event is not {idle_s >= 3, devices [$gpu_idle], Notify, told}: $ev"
line=$(grep '^accel: ' "$dir/idle.out") || fail "no accel: line in job $idle's output: $(cat "$dir/idle.out")"
log "job $idle's output: $line"
[[ $line == "accel: job $idle: GPU $gpu_idle on $node read 0% utilization for "*" (idle accelerators); "* ]] ||
    fail "job $idle's accel: line is not the idle notice: $line"
# A batch job is told once, in its file: no second copy through slurmctld (which hands a batch
# job's notice to its batch step, never to its sruns).
expect_eq "job $idle's accel: notices in its output" 1 "$(grep -c 'accel: job ' "$dir/idle.out")"
address=$(sed -n 's/^MetricsAddress=//p' "$conf")
scraped=$("$SANDBOX_SCRIPT" exec "$node" curl -sf --max-time 5 "http://$address/metrics") ||
    fail "the metrics of $node do not answer at $address"
grep -Eq "^accel_gpu_job_idle_seconds\{job_id=\"$idle\"\} ([3-9]|[1-9][0-9]+)$" <<<"$scraped" ||
    fail "job $idle is not 3 s idle or more in $node's metrics: $(grep job_idle <<<"$scraped")"
grep -qx "accel_gpu_job_idle_seconds{job_id=\"$busy\"} 0" <<<"$scraped" ||
    fail "busy job $busy is not 0 s idle in $node's metrics: $(grep job_idle <<<"$scraped")"
sleep 2  # two more samples: a busy job would have been told by now too
[[ $(count_idle "$busy") == 0 ]] || fail "busy job $busy got a job_idle event"
grep -q '^accel: ' "$dir/busy.out" && fail "busy job $busy got an accel: line: $(cat "$dir/busy.out")"

# --- 2. both summaries, field by field ------------------------------------------------------------
touch "$dir/release"
wait_job_final "$busy" 60
expect_eq "busy job $busy: state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
wait_job_final "$idle" 60
expect_eq "idle job $idle: state|exit code" "COMPLETED|0:0" "$JOB_FINAL"

wait_comment "$busy" 60
s=$(summary_of "$COMMENT")
log "busy job $busy: $s"
expect_eq "busy job: result, kind, count" "ok gpu 1" "$(jq -r '"\(.result) \(.accel) \(.count)"' <<<"$s")"
expect_eq "busy job: GPU rows on $node" 1 "$(jq --arg n "$node" '.gpu[$n] | length' <<<"$s")"
row=$(jq -c --arg n "$node" '.gpu[$n][0]' <<<"$s")
expect_eq "busy job: the row's GPU" "$gpu_busy" "$(jq '.[0]' <<<"$row")"
jq -e '.[1] > 0 and .[1] < 60' <<<"$row" >/dev/null || fail "busy job: mean not in (0, 60): $row"
expect_eq "busy job: max %" 60 "$(jq '.[2]' <<<"$row")"
expect_eq "busy job: most memory, MiB" 22070 "$(jq '.[3]' <<<"$row")"
jq -e '.[4] > 0' <<<"$row" >/dev/null || fail "busy job: no energy: $row"
jq -e '.[5] >= 2' <<<"$row" >/dev/null || fail "busy job: fewer than 2 samples: $row"
expect_eq "busy job: idle, ended" "null null" "$(jq -c -r '"\(.idle) \(.ended)"' <<<"$s")"

wait_comment "$idle" 60
s=$(summary_of "$COMMENT")
log "idle job $idle: $s"
expect_eq "idle job: result, kind, count" "ok gpu 1" "$(jq -r '"\(.result) \(.accel) \(.count)"' <<<"$s")"
row=$(jq -c --arg n "$node" '.gpu[$n][0]' <<<"$s")
expect_eq "idle job: the row's GPU, mean, max, MiB" "[$gpu_idle,0,0,615]" "$(jq -c '.[0:4]' <<<"$row")"
jq -e '.[4] > 0 and .[5] >= 3' <<<"$row" >/dev/null || fail "idle job: no energy or < 3 samples: $row"
idle_note=$(jq -c --arg n "$node" '.idle[$n]' <<<"$s")
jq -e --argjson g "$gpu_idle" '.idle_s >= 3 and .gpus == [$g] and .action == "notify" and
       (keys | length) == 3' <<<"$idle_note" >/dev/null ||
    fail "idle job: its idle entry is not {idle_s >= 3, gpus [$gpu_idle], notify}: $idle_note"
expect_eq "idle job: idle entries" 1 "$(jq '.idle | length' <<<"$s")"
expect_eq "idle job: ended" null "$(jq -r '.ended' <<<"$s")"

# --- 3. an interactive job is told in its terminal ----------------------------------------------
# As from a login node: srun in the foreground, no output file; every GPU idle now (the node
# has two CPUs, so this runs after the batch jobs).
gpu_idle_script all
gpu_idle_policy 0:03 notify
# shellcheck disable=SC2016 # expanded in the job
as_test_user srun -J "$tag-inter" -w "$node" -N 1 --gres=gpu:1 bash -c \
    'echo "$SLURM_STEP_GPUS" >"$0.started"; until [[ -e $0.release ]]; do sleep 0.1; done' \
    "$dir/inter" >"$dir/inter.out" 2>&1 &
inter_pid=$!
deadline=$((SECONDS + 60))
until [[ -e $dir/inter.started ]]; do
    ((SECONDS <= deadline)) || fail "the interactive job did not start within 60 s: $(cat "$dir/inter.out")"
    sleep 0.1
done
inter=$(squeue -h -u "$TEST_USER" -n "$tag-inter" -o %i)
gpu_inter=$(<"$dir/inter.started")
[[ $inter =~ ^[0-9]+$ && $gpu_inter =~ ^[0-9]$ ]] || fail "interactive job '$inter', GPU '$gpu_inter'"
deadline=$((SECONDS + 30))
until grep -q "^srun: accel: " "$dir/inter.out"; do
    ((SECONDS <= deadline)) || fail "the interactive job $inter's srun printed no accel: notice within 30 s: $(cat "$dir/inter.out")"
    sleep 0.2
done
line=$(grep "^srun: accel: " "$dir/inter.out")
log "interactive job $inter (GPU $gpu_inter), its terminal: $line"
[[ $line == "srun: accel: job $inter: GPU $gpu_inter on $node read 0% utilization for "*" (idle accelerators); "* ]] ||
    fail "the interactive job's notice is not its idle notice: $(cat "$dir/inter.out")"
touch "$dir/inter.release"
wait "$inter_pid" || fail "the interactive job's srun ended with $?: $(cat "$dir/inter.out")"
inter_pid=''
log "PASS"
