#!/usr/bin/env bash
# An interactive allocation over two nodes, as a user types it:
#   salloc -N 2 --ipus=2 srun ...
# Both nodes' tasks get the job's partition and their own node's IPUoF file and fabric
# address, the partition exists once while the allocation lasts and is gone after it.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user

sandbox_nodes 2

tag=mn-salloc-$$-$RANDOM
# The task expands these, not this shell.
# shellcheck disable=SC2016
out=$(as_test_user timeout 90 salloc -J "$tag" -w "${nodes[0]},${nodes[1]}" -N 2 --ipus=2 \
    srun --ntasks-per-node=1 bash -c \
    'echo "$(hostname) $SLURM_JOB_ID $IPUOF_VIPU_API_PARTITION_ID $IPUOF_CONFIG_PATH $([[ -r $IPUOF_CONFIG_PATH ]] && echo readable) $ACCEL_FABRIC_ADDRESSES"' \
    2>&1) || fail "salloc failed (exit $?): $out"
log "output:"$'\n'"$out"
lines=$(grep -E "^(${nodes[0]}|${nodes[1]}) " <<<"$out" | sort)
expect_eq "tasks on the two nodes" "${nodes[0]} ${nodes[1]}" "$(awk '{ print $1 }' <<<"$lines" | paste -sd' ')"
job=$(awk 'NR == 1 { print $2 }' <<<"$lines")
[[ $job =~ ^[0-9]+$ ]] || fail "the tasks did not see their job id"
while read -r host jobid partition config readable addresses; do
    expect_eq "$host: partition" "p$job" "$partition"
    [[ $jobid == "$job" && $readable == readable && $config == */ipuof-gcd0.conf ]] ||
        fail "$host: no readable IPUoF file of the job ('$config' '$readable')"
    [[ $addresses == 10.9.* ]] || fail "$host: no fabric address ('$addresses')"
done <<<"$lines"
wait_job_final "$job" 60
expect_eq "allocation: state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
if vipu list partitions --json | tr -d ' \n' | grep -q "\"id\":\"p$job\""; then
    fail "partition p$job still exists after the allocation"
fi
expect_eq "partition p$job: creations, removals after it" "1 1" "$(partition_calls "$job")"
log "PASS"
