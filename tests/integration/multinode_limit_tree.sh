#!/usr/bin/env bash
# The appliance limit of a GPU job over two nodes ends every process of the job on each node
# (the three-node sandbox: proctrack/cgroup, task/cgroup with ConstrainDevices=yes). The job,
# `--gres=gpu:1 --appliance-time=0:06 --appliance-signal=USR1@3` on two nodes, runs one srun
# step with a task per node, each a real process tree (limit_lib.sh: a wrapper and its child,
# python with multiprocessing workers, a child that ignores SIGTERM, a setsid double-forked
# child), and a tree in the batch shell on the first node. The batch shell ignores SIGTERM, so
# the job lasts until SIGKILL after the grace: each node's agent ends its own processes, the
# warning reaches every process of the step on both nodes and nothing of the batch step, and
# afterwards no process of the job is left on either node, the job has left the queue, its
# summary says time_limit with appliance_s at most limit plus grace (each node's epilog counted
# the same appliance time, to the second), and neither node is drained.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"
# shellcheck source=tests/integration/limit_lib.sh
source "$(dirname -- "$0")/limit_lib.sh"

require_root
require_sandbox
ensure_test_user
command -v bc >/dev/null || fail "bc is not installed (Debian package bc)"

sandbox_nodes 3
pair=("${nodes[1]}" "${nodes[2]}")
grace=$(kill_grace)
tag=mn-limit-tree-$$-$RANDOM
dir=$TEST_HOME/$tag
trap 'rm -rf "${dir:?}"' EXIT
mkdir -p "$dir"
limit_tree_script "$dir"
chown -R "$TEST_USER" "$dir"

submit -J "$tag" -o "$dir/job.out" -w "${pair[0]},${pair[1]}" -N 2 --ntasks-per-node=1 \
    --gres=gpu:1 --time=5 --appliance-time=0:06 --appliance-signal=USR1@3 <<SCRIPT
#!/bin/bash
trap 'echo "term \$(date +%s.%N)" >>$dir/trace' TERM
srun --overlap $dir/tree.sh $dir step &
$dir/tree.sh $dir batch &
while :; do wait; done
SCRIPT
job=$JOB_ID
wait_job_final "$job" 120
# The batch shell ignored SIGTERM: SIGKILL after the grace ended the job.
expect_limit_end "$job" "$dir/trace" $((grace - 1)) "$grace"
for node in "${pair[@]}"; do
    notes=$dir/notes.$node
    [[ -s $notes ]] || fail "no process of the job noted anything on $node"
    expect_all_warned "$node" step "$notes"
    [[ -z $(awk '$1 == "warned" && index($2, "batch") == 1' "$notes") ]] ||
        fail "$node: the warning reached the batch step; without B: it goes to the steps only"
done
wait_comment "$job" 60
summary=$(summary_of "$COMMENT")
log "summary: $summary"
expect_eq "summary: result, kind" "time_limit gpu" "$(jq -r '"\(.result) \(.accel)"' <<<"$summary")"
used=$(jq -r .appliance_s <<<"$summary")
((used <= 6 + grace)) || fail "appliance_s is $used, more than the limit (6 s) and the grace ($grace s)"
# Each node's own figure (its epilog's event): past the limit a node counts until the job is over
# there, never past its SIGKILL, so a node whose steps obeyed SIGTERM counts the time the job
# still held it, as the node whose batch shell ignored it does.
per_node=$("$SANDBOX_SCRIPT" exec "${pair[0]}" env SLURM_CONF="$SLURM_CONF" accelctl events --job "$job" --json |
    jq -r 'select(.kind == "epilog_finished") | "\(.node)=\(.event.appliance_seconds)"' | sort)
log "appliance seconds by node: $(xargs <<<"$per_node")"
expect_eq "nodes with an epilog" "${pair[*]}" "$(cut -d= -f1 <<<"$per_node" | xargs)"
# Each node's clock starts at its own first step (the second node's srun task starts a moment
# after the batch shell), so the figures may part at a second's boundary, never by more.
read -r lo hi < <(cut -d= -f2 <<<"$per_node" | sort -n | sed -n '1p;$p' | xargs)
expect_eq "the summary's appliance_s, the largest node's" "$used" "$hi"
((hi - lo <= 1)) || fail "the nodes counted $lo s and $hi s of appliance time for one job"
expect_not_drained "${pair[@]}"
log "PASS"
