#!/usr/bin/env bash
# An ordinary user's IPU job over two nodes of the three-node sandbox
# (`sbatch -N 2 --ntasks-per-node=1 --ipus=2`):
#  - the V-IPU partition is created exactly once and removed exactly once for the job (the
#    fake controller's call log, one state for the whole cluster, counts the calls);
#  - each node has its own IPUoF files for the partition while the job runs, owned by the
#    user, and none after;
#  - task 0 (first node) pings the fabric address task 1 got on the second node;
#  - the job's summary in AdminComment is exactly the one documented in
#    docs/accounting-format.md: two IPUs (not two per node), both nodes, written once both
#    epilogs are in.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user

sandbox_nodes 2
command -v ping >/dev/null || fail "ping is not installed (Debian package iputils-ping)"

tag=mn-ipu-$$-$RANDOM
dir=$TEST_HOME/$tag
trap 'rm -rf "${dir:?}"' EXIT
mkdir -p "$dir"
chown "$TEST_USER" "$dir"

cat >"$dir/task.sh" <<'TASK'
#!/bin/bash
dir=$1
files=$(cd "$ACCEL_IPUOF_DIR" && stat -c '%n:%U:%a' ipuof-gcd*.conf | paste -sd,)
echo "$(hostname) $ACCEL_FABRIC_ADDRESSES $ACCEL_IPUOF_DIR $IPUOF_VIPU_API_PARTITION_ID $files" \
    >"$dir/task$SLURM_PROCID.tmp"
mv "$dir/task$SLURM_PROCID.tmp" "$dir/task$SLURM_PROCID"
if [[ $SLURM_PROCID == 0 ]]; then
    for _ in $(seq 300); do [[ -e $dir/task1 ]] && break; sleep 0.1; done
    read -r _ peer_addresses _ <"$dir/task1"
    ping -c 2 -i 0.2 -W 2 "${peer_addresses%%,*}" >"$dir/ping" 2>&1
    echo "exit=$?" >>"$dir/ping"
    touch "$dir/pinged"
else
    for _ in $(seq 300); do [[ -e $dir/pinged ]] && exit 0; sleep 0.1; done
    exit 1
fi
TASK
chmod 755 "$dir/task.sh"

submit -J "$tag" -w "${nodes[0]},${nodes[1]}" -N 2 --ntasks-per-node=1 --ipus=2 \
    -o "$dir/job.out" <<SCRIPT
#!/bin/bash
srun bash "$dir/task.sh" "$dir"
SCRIPT
wait_job_final "$JOB_ID" 120
log "job output: $(cat "$dir/job.out" 2>&1)"
expect_eq "state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
for t in 0 1; do
    [[ -e $dir/task$t ]] || fail "task $t wrote nothing"
    log "task $t: $(<"$dir/task$t")"
done

# --- the partition: once per job -----------------------------------------------------------
p=p$JOB_ID
expect_eq "partition $p: creations, removals after it" "1 1" "$(partition_calls "$JOB_ID")"
if vipu list partitions --json | tr -d ' \n' | grep -q "\"id\":\"$p\""; then
    fail "partition $p still exists after the job"
fi

# --- per-node IPUoF files and the fabric ----------------------------------------------------
read -r host0 addr0 ipuof0 part0 files0 <"$dir/task0"
read -r host1 addr1 ipuof1 part1 files1 <"$dir/task1"
expect_eq "hosts of tasks 0 and 1" "${nodes[0]} ${nodes[1]}" "$host0 $host1"
expect_eq "partition named to both tasks" "$p $p" "$part0 $part1"
[[ $ipuof0 != "$ipuof1" ]] || fail "both nodes used one IPUoF directory: $ipuof0"
for f in "$files0" "$files1"; do
    [[ $f == ipuof-gcd0.conf:$TEST_USER:600* ]] ||
        fail "a node's IPUoF files are not the user's own (0600): '$f'"
done
for d in "$ipuof0" "$ipuof1"; do [[ ! -e $d ]] || fail "$d still exists after the job"; done
[[ -n $addr0 && -n $addr1 && ${addr0%%,*} != "${addr1%%,*}" ]] ||
    fail "the tasks did not get distinct fabric addresses: '$addr0' '$addr1'"
grep -q '^exit=0$' "$dir/ping" || fail "task 0 could not ping task 1's fabric address: $(cat "$dir/ping")"

# --- the summary: once, after both epilogs, counted once -------------------------------------
wait_comment "$JOB_ID" 30
summary=$(summary_of "$COMMENT")
# appliance_s: the seconds the job's steps ran on its busiest node (an IPU job's time), a few.
expected="{\"v\":1,\"result\":\"ok\",\"accel\":\"ipu\",\"count\":2,\"partition\":\"$p\",\"nodes\":[\"$host0\",\"$host1\"],\"appliance_limit_s\":0,\"surrogate_steps\":0}"
expect_eq "summary" "$expected" "$(jq -c 'del(.appliance_s)' <<<"$summary")"
used=$(jq -r .appliance_s <<<"$summary")
((used >= 0 && used <= 30)) || fail "appliance_s is '$used' for a job that ran for seconds"
log "PASS"
