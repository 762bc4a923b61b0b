#!/usr/bin/env bash
# GPUs scheduled by Slurm's GRES on a node of the three-node sandbox (captured ipa20: four GPUs,
# RDMA NICs beside three of them): two jobs of --gres=gpu:2 at the same time on one node get
# disjoint GPUs from Slurm, and the agent follows Slurm's choice: each job's ACCEL_DEVICES are
# the GPUs Slurm gave it, and its NCCL_IB_HCA / UCX_NET_DEVICES name the RDMA devices nearest
# those GPUs, which on this topology are different for the two halves. Each summary says gpu
# and 2.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user

sandbox_nodes 3
node=${nodes[2]}

tag=mn-gpu-$$-$RANDOM
dir=$TEST_HOME/$tag
trap 'rm -rf "${dir:?}"' EXIT
mkdir -p "$dir"
chown "$TEST_USER" "$dir"

jobs=()
for j in a b; do
    submit -J "$tag-$j" -w "$node" -N 1 --gres=gpu:2 -o "$dir/$j.out" <<SCRIPT
#!/bin/bash
echo "\$SLURM_JOB_GPUS|\$ACCEL_DEVICES|\$NCCL_IB_HCA|\$UCX_NET_DEVICES" >"$dir/$j.tmp"
mv "$dir/$j.tmp" "$dir/$j.started"
for _ in \$(seq 600); do [[ -e "$dir/release" ]] && exit 0; sleep 0.1; done
exit 1
SCRIPT
    jobs+=("$JOB_ID")
done
deadline=$((SECONDS + 60))
until [[ -e $dir/a.started && -e $dir/b.started ]]; do
    ((SECONDS <= deadline)) || fail "the two GPU jobs did not both start within 60 s"
    sleep 0.1
done
touch "$dir/release"
IFS='|' read -r gpus_a dev_a hca_a ucx_a <"$dir/a.started"
IFS='|' read -r gpus_b dev_b hca_b ucx_b <"$dir/b.started"
log "job ${jobs[0]}: GPUs $gpus_a devices $dev_a HCAs $hca_a UCX $ucx_a"
log "job ${jobs[1]}: GPUs $gpus_b devices $dev_b HCAs $hca_b UCX $ucx_b"

expect_eq "Slurm's GPUs of both jobs together" "0 1 2 3" \
    "$(tr ',' '\n' <<<"$gpus_a,$gpus_b" | sort -n | paste -sd' ')"
# The agent's device names follow Slurm's indexes (cuda<i> for GPU i of the node).
for pair in "$gpus_a|$dev_a" "$gpus_b|$dev_b"; do
    want=$(tr ',' '\n' <<<"${pair%%|*}" | sed 's/^/cuda/' | paste -sd,)
    expect_eq "ACCEL_DEVICES for SLURM_JOB_GPUS=${pair%%|*}" "$want" "${pair#*|}"
done
[[ -n $hca_a && -n $hca_b ]] || fail "a GPU job got no NCCL_IB_HCA: '$hca_a' '$hca_b'"
shared=$(comm -12 <(tr ',' '\n' <<<"$hca_a" | sort) <(tr ',' '\n' <<<"$hca_b" | sort))
[[ -z $shared ]] || fail "the two jobs share RDMA devices: $shared"
[[ $ucx_a == *mlx5_*:1* && $ucx_b == *mlx5_*:1* ]] || fail "UCX_NET_DEVICES not in UCX's form"

for job in "${jobs[@]}"; do
    wait_job_final "$job" 60
    expect_eq "GPU job $job: state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
    wait_comment "$job" 30
    expect_eq "GPU job $job: summary kind, count, nodes" "gpu 2 $node" \
        "$(summary_of "$COMMENT" | jq -r '"\(.accel) \(.count) \(.nodes | join(","))"')"
done
log "PASS"
