#!/usr/bin/env bash
# An ordinary user's `sbatch --ipus=2 -n 2` job on the sandbox's IPU host (the fake V-IPU
# controller of tests/hw_mock): the job's partition exists while it runs and not after, each of
# its two tasks finds its own GCD's IPUoF file through IPUOF_CONFIG_PATH, owned by the user
# with mode 0600, and the IPUOF_VIPU_API_* variables name the controller and the partition.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user

tag=ipu-job-$$-$RANDOM
output=$TEST_HOME/$tag.out
trap 'rm -f "$output"' EXIT

partitions() { vipu list partitions --json; }

submit --job-name="$tag" --output="$output" --ipus=2 -n 2 <<'SCRIPT'
#!/bin/bash
echo "batch IPUOF_CONFIG_PATH=$IPUOF_CONFIG_PATH"
echo "api $IPUOF_VIPU_API_HOST:$IPUOF_VIPU_API_PORT partition=$IPUOF_VIPU_API_PARTITION_ID"
srun -n 2 bash -c 'echo "task $SLURM_LOCALID $IPUOF_CONFIG_PATH $(stat -c "%U %a" "$IPUOF_CONFIG_PATH") $(head -c 400 "$IPUOF_CONFIG_PATH" | tr -d " \n" | grep -o "\"gcd_index\":[0-9]*")"' | sort
echo "partitions $(vipu list partitions --json | tr -d ' \n')"
SCRIPT

wait_job_final "$JOB_ID" 90
expect_eq "sacct state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
out=$(<"$output")
log "job output:"$'\n'"$out"
ipuof=$ACCEL_SANDBOX_DIR/run/ipuof/$JOB_ID
grep -qx "batch IPUOF_CONFIG_PATH=$ipuof/ipuof-gcd0.conf" <<<"$out" ||
    fail "the batch step does not point at GCD 0's file"
grep -qx "api 127.0.0.1:8090 partition=p$JOB_ID" <<<"$out" || fail "IPUOF_VIPU_API_* are wrong"
for gcd in 0 1; do
    grep -qx "task $gcd $ipuof/ipuof-gcd$gcd.conf $TEST_USER 600 \"gcd_index\":$gcd" <<<"$out" ||
        fail "task $gcd did not find its own IPUoF file (GCD $gcd, owner $TEST_USER, mode 0600)"
done
grep -q "\"id\":\"p$JOB_ID\"" <<<"$(grep '^partitions ' <<<"$out")" ||
    fail "the partition p$JOB_ID was not listed while the job ran"
# After the job: the partition and the files are gone.
if grep -q "\"id\":\"p$JOB_ID\"" <<<"$(partitions | tr -d ' \n')"; then
    fail "partition p$JOB_ID still exists after the job"
fi
[[ ! -e $ipuof ]] || fail "$ipuof still exists after the job"
# The job's summary in accounting names the IPUs and the partition.
wait_comment "$JOB_ID" 20
json=$(summary_of "$COMMENT")
expect_eq "summary: kind, count, partition" "ipu 2 p$JOB_ID" \
    "$(jq -r '"\(.accel) \(.count) \(.partition)"' <<<"$json")"
log "PASS"
