#!/usr/bin/env bash
# IdleAction=cancel as a site's policy (IdleAfter=0:06 on the GPU node sbn3, every GPU of its
# fake NVML scripted at 0% for ever; its agent restarted with them, and again as before at the
# end): a batch job of one GPU whose bash script starts a tree of processes (a sleep, a Python
# worker with a child of its own, and a sleep in a session of its own through setsid) and
# waits, doing nothing on the GPU. About 6 s after its start:
#  1. it ends CANCELLED; its output file has the accel: line that says why;
#  2. its summary in AdminComment says "ended":"idle accelerators", result cancelled, and
#     idle {"sbn3": {idle_s >= 6, gpus [its GPU], action cancel}};
#  3. the node is not drained (no reason, state idle or mixed), and every process of the tree
#     is gone.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"
# shellcheck source=tests/integration/gpu_idle_lib.sh
source "$(dirname -- "$0")/gpu_idle_lib.sh"

require_root
require_sandbox
ensure_test_user
command -v python3 >/dev/null || fail "python3 is not installed (Debian package python3)"

sandbox_nodes 3
tag=mn-idle-cancel-$$-$RANDOM
dir=$TEST_HOME/$tag
job=''
restore() {
    [[ -z $job ]] || scancel "$job" 2>/dev/null || true
    gpu_idle_restore
    rm -rf "${dir:?}"
}
trap restore EXIT
mkdir -p "$dir"
chown "$TEST_USER" "$dir"
gpu_idle_prepare "$dir"
node=$GPU_NODE

gpu_idle_script all
gpu_idle_policy 0:06 cancel

submit -J "$tag" -w "$node" -N 1 --gres=gpu:1 -o "$dir/job.out" <<SCRIPT
#!/bin/bash
sleep 300 &
echo \$! >>"$dir/pids"
python3 -c 'import subprocess, time; subprocess.Popen(["sleep", "301"]); time.sleep(300)' &
echo \$! >>"$dir/pids"
setsid sleep 302 &
echo \$! >>"$dir/pids"
echo "\$SLURM_JOB_GPUS" >"$dir/job.tmp"
mv "$dir/job.tmp" "$dir/job.started"
wait
SCRIPT
job=$JOB_ID
deadline=$((SECONDS + 60))
until [[ -e $dir/job.started ]]; do
    ((SECONDS <= deadline)) || fail "job $job did not start within 60 s"
    sleep 0.1
done
gpu=$(<"$dir/job.started")
# The tree: the three children and the Python worker's sleep, by their command lines.
deadline=$((SECONDS + 10))
while :; do
    pids=$(pgrep -f -u "$TEST_USER" '^sleep 30[012]$|^python3 -c import subprocess' | sort -n | xargs)
    (($(wc -w <<<"$pids") == 4)) && break
    ((SECONDS <= deadline)) || fail "job $job does not run its 4 processes: '$pids'"
    sleep 0.1
done
log "job $job (GPU $gpu) runs processes $pids"

# --- 1. cancelled, and told ----------------------------------------------------------------------
wait_job_final "$job" 60
[[ $JOB_FINAL == CANCELLED* ]] || fail "job $job was not cancelled: $JOB_FINAL"
line=$(grep '^accel: ' "$dir/job.out") || fail "no accel: line in job $job's output: $(cat "$dir/job.out")"
log "job $job's output: $line"
[[ $line == "accel: job $job: GPU $gpu on $node read 0% utilization for "*" (idle accelerators); "*"the job is cancelled now" ]] ||
    fail "job $job's accel: line is not the cancel notice: $line"

# --- 2. the summary ------------------------------------------------------------------------------
wait_comment "$job" 60
s=$(summary_of "$COMMENT")
log "job $job: $s"
expect_eq "ended" "idle accelerators" "$(jq -r '.ended' <<<"$s")"
expect_eq "result" cancelled "$(jq -r '.result' <<<"$s")"
note=$(jq -c --arg n "$node" '.idle[$n]' <<<"$s")
jq -e --argjson g "$gpu" '.idle_s >= 6 and .gpus == [$g] and .action == "cancel"' <<<"$note" \
    >/dev/null || fail "job $job's idle entry is not {idle_s >= 6, gpus [$gpu], cancel}: $note"

# --- 3. the node stays in service; nothing of the job is left -----------------------------------
reason=$(sinfo -h -n "$node" -o '%E')
state=$(sinfo -h -n "$node" -o '%T')
log "$node: state $state, reason '$reason'"
[[ $state != *drain* && $reason == none ]] || fail "$node was drained: $state, '$reason'"
deadline=$((SECONDS + 30))
for pid in $pids; do
    while kill -0 "$pid" 2>/dev/null; do
        ((SECONDS <= deadline)) || fail "process $pid of job $job outlived it: $(ps -o pid,args -p "$pid")"
        sleep 0.2
    done
done
log "PASS"
