#!/usr/bin/env bash
# A sandbox of three nodes (`slurm-sandbox up --nodes 3`, every node the 4-GPU ipa20
# topology) behaves as three hosts of one cluster, for an ordinary user:
#  - each node's agent runs in the node, under the node's name;
#  - `srun -N 3 hostname` and an `sbatch -N 3` job see the three node names;
#  - a job on two nodes is told SLURM_JOB_NUM_NODES=2 on both;
#  - two jobs of --gres=gpu:2 running at the same time on one node get disjoint GPUs, and
#    the task sees them (SLURM_JOB_GPUS, CUDA_VISIBLE_DEVICES);
#  - in a two-node GPU job, task 0 (node 1) pings the fabric address task 1 got on node 2,
#    over the fabric bridge, and both nodes' job addresses are gone after the job;
#  - the sandbox's Prometheus scrapes each node's agent at the node's own address, labelled
#    with its name, and sees the prologs each node ran.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user

read -ra nodes <<<"${ACCEL_SANDBOX_NODES:-}"
((${#nodes[@]} == 3)) || fail "expected a sandbox of 3 nodes (up --nodes 3), it has" \
    "'${ACCEL_SANDBOX_NODES:-}'"
sorted_nodes=$(printf '%s\n' "${nodes[@]}" | sort | paste -sd' ')
command -v ping >/dev/null || fail "ping is not installed (Debian package iputils-ping)"

tag=multinode-$$-$RANDOM
cleanup() { rm -rf "${TEST_HOME:?}/$tag"; }
trap cleanup EXIT
dir=$TEST_HOME/$tag
mkdir -p "$dir"
chown "$TEST_USER" "$dir"

# waits (bounded) until every file named exists
wait_files() {
    local limit=$1 f deadline=$((SECONDS + $1))
    shift
    for f; do
        until [[ -e $f ]]; do
            ((SECONDS <= deadline)) || fail "no $f after $limit s"
            sleep 0.1
        done
    done
}

# --- one agent per node, named after it -------------------------------------------------------
for node in "${nodes[@]}"; do
    status=$("$SANDBOX_SCRIPT" exec "$node" accelctl status) ||
        fail "accelctl status inside $node failed: $status"
    grep -q "^daemon .* on $node," <<<"$status" || fail "the agent inside $node is not $node's:" \
        "$(grep '^daemon' <<<"$status")"
    expect_eq "host name inside $node" "$node" "$("$SANDBOX_SCRIPT" exec "$node" hostname)"
done

# --- srun and sbatch over three nodes ----------------------------------------------------------
out=$(as_test_user timeout 60 srun -J "$tag-srun" -N 3 hostname) || fail "srun -N 3 failed (exit $?)"
expect_eq "srun -N 3 hostname" "$sorted_nodes" "$(sort <<<"$out" | paste -sd' ')"

submit -J "$tag-sbatch3" -N 3 -o "$dir/sbatch3.out" <<'SCRIPT'
#!/bin/bash
srun hostname
SCRIPT
wait_job_final "$JOB_ID" 60
expect_eq "sbatch -N 3: state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
expect_eq "sbatch -N 3: the step's host names" "$sorted_nodes" \
    "$(sort "$dir/sbatch3.out" | paste -sd' ')"

# --- a job on two nodes ------------------------------------------------------------------------
# The task expands these, not this shell.
# shellcheck disable=SC2016
out=$(as_test_user timeout 60 srun -J "$tag-two" -N 2 bash -c 'echo "$(hostname) $SLURM_JOB_NUM_NODES"') ||
    fail "srun -N 2 failed (exit $?)"
expect_eq "SLURM_JOB_NUM_NODES on each of the two nodes" "2 2" \
    "$(awk '{ print $2 }' <<<"$out" | paste -sd' ')"
expect_eq "the two nodes of the job" 2 "$(awk '{ print $1 }' <<<"$out" | sort -u | wc -l)"

# --- two GPU jobs at once on one node -----------------------------------------------------------
gpu_node=${nodes[0]}
gpu_jobs=()
for j in a b; do
    submit -J "$tag-gpu-$j" -w "$gpu_node" -N 1 --gres=gpu:2 -o "$dir/gpu-$j.out" <<SCRIPT
#!/bin/bash
echo "\$SLURM_JOB_GPUS|\$CUDA_VISIBLE_DEVICES|\$(hostname)" >"$dir/gpu-$j.tmp"
mv "$dir/gpu-$j.tmp" "$dir/gpu-$j.started"
for _ in \$(seq 600); do [[ -e "$dir/release" ]] && exit 0; sleep 0.1; done
exit 1
SCRIPT
    gpu_jobs+=("$JOB_ID")
done
wait_files 60 "$dir/gpu-a.started" "$dir/gpu-b.started"
IFS='|' read -r gpus_a cuda_a host_a <"$dir/gpu-a.started"
IFS='|' read -r gpus_b cuda_b host_b <"$dir/gpu-b.started"
touch "$dir/release"
log "job ${gpu_jobs[0]}: SLURM_JOB_GPUS=$gpus_a CUDA_VISIBLE_DEVICES=$cuda_a on $host_a"
log "job ${gpu_jobs[1]}: SLURM_JOB_GPUS=$gpus_b CUDA_VISIBLE_DEVICES=$cuda_b on $host_b"
expect_eq "hosts of the two GPU jobs" "$gpu_node $gpu_node" "$host_a $host_b"
[[ $gpus_a =~ ^[0-3],[0-3]$ && $gpus_b =~ ^[0-3],[0-3]$ ]] ||
    fail "each job should hold two of GPUs 0-3: '$gpus_a' and '$gpus_b'"
[[ $cuda_a =~ ^[0-9],[0-9]$ && $cuda_b =~ ^[0-9],[0-9]$ ]] ||
    fail "CUDA_VISIBLE_DEVICES should name two GPUs: '$cuda_a' and '$cuda_b'"
expect_eq "GPUs of both jobs together, sorted" "0 1 2 3" \
    "$(tr ',' '\n' <<<"$gpus_a,$gpus_b" | sort -n | paste -sd' ')"
for job in "${gpu_jobs[@]}"; do
    wait_job_final "$job" 60
    expect_eq "GPU job $job: state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
done

# --- the fabric between two nodes ---------------------------------------------------------------
# Task 0 (first node) waits for task 1's fabric addresses and pings the first one; task 1
# stays until task 0 is done, so its addresses exist meanwhile.
cat >"$dir/fabric-task.sh" <<'TASK'
#!/bin/bash
dir=$1
PATH=$PATH:/usr/sbin:/sbin
echo "$(hostname) $ACCEL_FABRIC_ADDRESSES $ACCEL_FABRIC_NICS" >"$dir/task$SLURM_PROCID.tmp"
mv "$dir/task$SLURM_PROCID.tmp" "$dir/task$SLURM_PROCID"
if [[ $SLURM_PROCID == 0 ]]; then
    for _ in $(seq 300); do [[ -e $dir/task1 ]] && break; sleep 0.1; done
    read -r _ peer_addresses _ <"$dir/task1"
    peer=${peer_addresses%%,*}
    echo "peer $peer route $(ip -o route get "$peer" 2>&1)" >"$dir/ping"
    ping -c 3 -i 0.2 -W 2 "$peer" >>"$dir/ping" 2>&1
    echo "exit=$?" >>"$dir/ping"
    touch "$dir/pinged"
else
    for _ in $(seq 300); do [[ -e $dir/pinged ]] && exit 0; sleep 0.1; done
    exit 1
fi
TASK
chmod 755 "$dir/fabric-task.sh"
submit -J "$tag-fabric" -w "${nodes[0]},${nodes[1]}" -N 2 --ntasks-per-node=1 --gres=gpu:1 \
    -o "$dir/fabric.out" <<SCRIPT
#!/bin/bash
srun bash "$dir/fabric-task.sh" "$dir"
SCRIPT
wait_job_final "$JOB_ID" 90
[[ -e $dir/ping ]] || fail "task 0 never pinged (job output: $(cat "$dir/fabric.out" 2>&1))"
log "task 0: $(<"$dir/task0")"
log "task 1: $(<"$dir/task1")"
log "ping: $(tr '\n' ' ' <"$dir/ping")"
expect_eq "fabric job: state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
read -r host0 addresses0 _ <"$dir/task0"
read -r host1 addresses1 _ <"$dir/task1"
expect_eq "hosts of tasks 0 and 1" "${nodes[0]} ${nodes[1]}" "$host0 $host1"
# Node i takes its job addresses from 10.9.i.0/26.
[[ ${addresses0%%,*} == 10.9.1.* && ${addresses1%%,*} == 10.9.2.* ]] ||
    fail "fabric addresses not from each node's block: '$addresses0' and '$addresses1'"
grep -q '^exit=0$' "$dir/ping" || fail "task 0 could not ping task 1's fabric address:" \
    "$(cat "$dir/ping")"
grep -q ' 3 received' "$dir/ping" || fail "not every ping was answered: $(cat "$dir/ping")"

# Each node's job addresses are gone with the job (its epilog ran on both nodes).
for i in 1 2; do
    netns_var=ACCEL_SANDBOX_NODE_NETNS_$i
    left=$(ip -n "${!netns_var}" -4 -o addr show | grep -F ' 10.9.' || true)
    [[ -z $left ]] || fail "fabric addresses left in ${nodes[i - 1]} after the job: $left"
done

# Prometheus: one accel-agent target per node, at the node's bridge address, all up; the
# fabric job's prologs on nodes 1 and 2 are in what it scraped from each.
[[ -n ${ACCEL_PROMETHEUS_URL:-} ]] || fail "slurm-sandbox env printed no ACCEL_PROMETHEUS_URL"
targets() {
    curl -fsS --max-time 5 "$ACCEL_PROMETHEUS_URL/api/v1/targets" |
        jq -r '[.data.activeTargets[] | select(.labels.job == "accel-agent")
                | "\(.labels.node)@\(.labels.instance | sub(":[0-9]+$"; ""))=\(.health)"] | sort | join(" ")'
}
want=''
for i in 1 2 3; do
    addr=$(scontrol show node "${nodes[i - 1]}" | sed -n 's/.*NodeAddr=\([^ ]*\).*/\1/p')
    want+="${want:+ }${nodes[i - 1]}@$addr=up"
done
deadline=$((SECONDS + 30))
until [[ $(targets) == "$want" ]]; do
    ((SECONDS <= deadline)) || fail "Prometheus' agent targets: expected '$want', got '$(targets)'"
    sleep 0.5
done
log "ok: Prometheus scrapes $want"
# The prologs Prometheus scraped from node $1; 0 also when it does not answer (the caller waits).
prologs_on() {
    local v
    v=$(curl -fsS --max-time 5 -G "$ACCEL_PROMETHEUS_URL/api/v1/query" \
        --data-urlencode "query=accel_hook_duration_seconds_count{hook=\"prolog\",node=\"$1\"}" |
        jq -r '.data.result[0].value[1] // "0"') || v=0
    echo "${v:-0}"
}
for i in 1 2; do
    deadline=$((SECONDS + 20))
    until (($(prologs_on "${nodes[i - 1]}") > 0)); do
        ((SECONDS <= deadline)) || fail "Prometheus saw no prolog on ${nodes[i - 1]}"
        sleep 0.5
    done
done
log "ok: prologs scraped from ${nodes[0]}: $(prologs_on "${nodes[0]}"), ${nodes[1]}: $(prologs_on "${nodes[1]}")"
log "PASS"
