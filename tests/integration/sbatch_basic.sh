#!/usr/bin/env bash
# A batch job of an ordinary user runs as that user on the sandbox node, writes into the
# user's home, and is COMPLETED with exit code 0:0 in accounting.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user

tag=sbatch-basic-$$-$RANDOM
result=$TEST_HOME/$tag.result
output=$TEST_HOME/$tag.out
trap 'rm -f "$result" "$output"' EXIT

submit --job-name="$tag" --output="$output" <<SCRIPT
#!/bin/bash
echo "user=\$(id -un) job=\$SLURM_JOB_ID node=\$SLURMD_NODENAME" >"\$HOME/$tag.result"
SCRIPT

wait_job_final "$JOB_ID" 60
expect_eq "sacct state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
[[ -f $result ]] || fail "the job did not write $result"
expect_eq "owner of the job's file" "$TEST_USER" "$(stat -c %U "$result")"
expect_eq "job's output" "user=$TEST_USER job=$JOB_ID node=$(sinfo -h -o %N)" "$(<"$result")"
# Anything on the job's stdout or stderr (a failed cd, a missing shell) is a fault here.
[[ -f $output && ! -s $output ]] || fail "job output $output missing or not empty:" \
    "$(cat "$output" 2>&1)"
log "PASS"
