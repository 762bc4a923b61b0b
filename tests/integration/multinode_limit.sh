#!/usr/bin/env bash
# The appliance time limit of a job over two nodes: one budget for the job (every node reads
# the one shared appliance), and the warning and the stop reach the job's tasks on both nodes.
# The job asks for 4 s of appliance time with USR1 2 s before; its appliance job runs far
# longer. Each node's task records when USR1 and SIGTERM reached it. The appliance job is
# cancelled exactly once (by the job's first node), and the summary says time_limit with the
# appliance time counted once.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user

sandbox_nodes 2

tag=mn-limit-$$-$RANDOM
dir=$TEST_HOME/$tag
trap 'rm -rf "${dir:?}"' EXIT
mkdir -p "$dir"
chown "$TEST_USER" "$dir"

cat >"$dir/task.sh" <<'TASK'
#!/bin/bash
out=$1/task.$(hostname)
now() { date +%s.%N; }
trap 'echo "warned $(now)" >>"$out"' USR1
trap 'echo "term $(now)" >>"$out"; exit 0' TERM
echo "started $(now)" >>"$out"
for _ in $(seq 1200); do sleep 0.1; done
echo "not stopped $(now)" >>"$out"
TASK
chmod 755 "$dir/task.sh"

submit -J "$tag" -o "$dir/job.out" -w "${nodes[0]},${nodes[1]}" -N 2 --ntasks-per-node=1 --time=5 \
    --job-time-sec=4 --appliance-signal=USR1@2 <<SCRIPT
#!/bin/bash
trap '' USR1
trap 'exit 0' TERM
fake-appliance-job --detach --csx 1 --queue-seconds 0.2 --run-seconds 120 >"$dir/appliance.id"
echo "launched \$(date +%s.%N)"
srun bash "$dir/task.sh" "$dir"
wait
SCRIPT

start=$SECONDS
wait_job_final "$JOB_ID" 90
elapsed=$((SECONDS - start))
log "job output: $(tr '\n' ' ' <"$dir/job.out")"
((elapsed < 60)) || fail "the job took $elapsed s: the appliance limit did not end it"
launched=$(sed -n 's/^launched \([0-9.]*\)$/\1/p' "$dir/job.out")
[[ -n $launched ]] || fail "the job never launched its appliance job"
for node in "${nodes[0]}" "${nodes[1]}"; do
    f=$dir/task.$node
    [[ -e $f ]] || fail "no task ran on $node"
    log "$node: $(tr '\n' ' ' <"$f")"
    warned=$(sed -n 's/^warned //p' "$f" | head -1) term=$(sed -n 's/^term //p' "$f" | head -1)
    [[ -n $warned ]] || fail "the warning (USR1) never reached the task on $node"
    [[ -n $term ]] || fail "SIGTERM never reached the task on $node"
    expect_eq "warnings on $node" 1 "$(grep -c '^warned ' "$f")"
    w=$(echo "$warned - $launched" | bc) t=$(echo "$term - $launched" | bc)
    log "$node: warned after $w s, SIGTERM after $t s (limit 4 s, lead 2 s, one poll of slack)"
    (($(echo "$w >= 1.5 && $w <= 4.5" | bc))) || fail "$node warned after $w s, expected about 2"
    (($(echo "$t >= 3.5 && $t <= 6.5" | bc))) || fail "$node stopped after $t s, expected about 4"
done

appl=$(head -1 "$dir/appliance.id")
[[ $appl == wsjob-* ]] || fail "no appliance job id ('$appl')"
# The launcher submitted and left (--detach): only the agents' cancel ends the appliance job,
# and only the job's first node issues it.
expect_eq "cancels of $appl" 1 "$(grep -c "^csctl cancel job $appl\$" "$ACCEL_HW_MOCK_STATE/appliance/calls.log" || true)"
state=$(csctl get jobs -o json -l "slurm-job-id=$JOB_ID" | jq -r --arg id "$appl" '.items[] | select(.name == $id) | .state')
expect_eq "appliance job state" "CANCELLED" "$state"

wait_comment "$JOB_ID" 30
json=$(summary_of "$COMMENT")
log "summary: $json"
expect_eq "summary: result, limit, nodes" "time_limit 4 ${nodes[0]},${nodes[1]}" \
    "$(jq -r '"\(.result) \(.appliance_limit_s) \(.nodes | join(","))"' <<<"$json")"
used=$(jq -r .appliance_s <<<"$json")
((used >= 3 && used <= 6)) || fail "appliance_s is $used: about 4 s of appliance time were used (twice that: counted per node)"
log "PASS"
