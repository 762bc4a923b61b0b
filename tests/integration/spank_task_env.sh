#!/usr/bin/env bash
# The tasks of a job receive the environment accel-agentd answers for it (ACCEL_JOB_DIR and
# whatever else the daemon adds): in the batch script, in srun steps inside sbatch and salloc,
# and in a plain srun. Each task is registered with the daemon under its pid and start time,
# so the agent can tell it from a later process that reuses the pid.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"
# shellcheck source=tests/integration/spank_lib.sh
source "$(dirname -- "$0")/spank_lib.sh"

require_root
require_sandbox
ensure_test_user
require_accel_plugin
require_agent
use_submit_limits

# The daemon's environment for job $1 as NAME=VALUE lines (from accelctl job --json).
daemon_env() {
    local json
    json=$("$ACCELCTL" --config "$AGENT_CONF" job "$1" --json) || fail "accelctl job $1 failed"
    jq -r '.env | to_entries[] | "\(.key)=\(.value)"' <<<"$json"
}

# expect_env_in WHAT FILE EXPECTED: every line of EXPECTED appears in FILE.
expect_env_in() {
    local what=$1 file=$2 expected=$3 line
    [[ -n $expected ]] || fail "accel-agentd gave the job no variables at all"
    while IFS= read -r line; do
        grep -qxF -- "$line" "$file" || fail "$what lacks $line; it has: $(tr '\n' ' ' <"$file")"
    done <<<"$expected"
    log "ok: $what has the $(wc -l <<<"$expected") variable(s) of accel-agentd"
}

# One sbatch job: the batch script and both tasks of an srun step dump their environment,
# then the step's tasks wait for a flag so the test can look at them while they run.
work=$TEST_HOME/spank-task-env-$$
as_test_user mkdir -p "$work"
on_exit rm -rf -- "$work"
name=$(unique_name env)
script="#!/bin/sh
env > $work/batch.env
srun -n 2 sh -c 'env > $work/task.\$SLURM_PROCID.env; while [ ! -e $work/go ]; do sleep 0.1; done'"
submit -J "$name" -n 2 --appliance-time=5:00 --appliance-signal=USR1@30 -o "$work/out" -e "$work/err" <<<"$script"
job=$JOB_ID
deadline=$((SECONDS + 60))
until [[ -e $work/task.0.env && -e $work/task.1.env ]]; do
    ((SECONDS <= deadline)) || fail "the srun step of job $job did not start within 60 s"
    sleep 0.1
done
expected=$(daemon_env "$job")
expect_env_in "batch script of job $job" "$work/batch.env" "$expected"
expect_env_in "task 0 of step $job.0" "$work/task.0.env" "$expected"
expect_env_in "task 1 of step $job.0" "$work/task.1.env" "$expected"
grep -qx "ACCEL_JOB_DIR=$AGENT_RUN_DIR/jobs/$job" "$work/batch.env" ||
    fail "ACCEL_JOB_DIR of job $job is not $AGENT_RUN_DIR/jobs/$job"
log "ok: ACCEL_JOB_DIR=$AGENT_RUN_DIR/jobs/$job"
for v in ACCEL_APPLIANCE_TIME_LIMIT=300 ACCEL_APPLIANCE_SIGNAL=10@30; do
    grep -qx "$v" "$work/task.1.env" || fail "task 1 of job $job lacks $v"
done
log "ok: the tasks know their appliance limit and warning signal"

# Task registration: the batch shell and both tasks of step 0, each with the start time
# /proc gives for its pid.
wait_tasks "$job" 3
tasks=$(record_tasks "$job")
log "daemon holds tasks (step:pid:ticks): $tasks"
step0=0
for task in $tasks; do
    IFS=: read -r step pid ticks <<<"$task"
    [[ -r /proc/$pid/stat ]] || fail "registered task $pid of job $job does not exist"
    stat=$(<"/proc/$pid/stat")
    read -ra fields <<<"${stat##*) }"
    expect_eq "start ticks of task $pid (step $step)" "${fields[19]}" "$ticks"
    if [[ $step == 0 ]]; then step0=$((step0 + 1)); fi
done
expect_eq "tasks registered for step 0" 2 "$step0"
# Slurm numbers the batch step 0xfffffffb.
jq -e '.steps | index(4294967291) != null and index(0) != null' "$AGENT_RUN_DIR/state/$job.json" \
    >/dev/null || fail "the daemon's steps of job $job lack the batch step or step 0"
touch "$work/go"
wait_job_final "$job" 60
expect_eq "sacct state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
[[ ! -s $work/err ]] || fail "job $job wrote to stderr: $(cat "$work/err")"

# salloc + srun, and a plain srun: the step's task sees the job's variables too.
name=$(unique_name salloc-env)
# shellcheck disable=SC2016 # expanded by the step
out=$(as_test_user timeout 60 salloc -J "$name" sh -c \
    'srun sh -c "echo JOB=\$SLURM_JOB_ID; env | grep ^ACCEL_JOB_DIR="' 2>/dev/null) ||
    fail "salloc failed (exit $?)"
job=$(sed -n 's/^JOB=//p' <<<"$out")
[[ $job =~ ^[0-9]+$ ]] || fail "salloc step printed no job id: $out"
expect_eq "ACCEL_JOB_DIR in an srun step under salloc" "ACCEL_JOB_DIR=$AGENT_RUN_DIR/jobs/$job" \
    "$(grep ^ACCEL_JOB_DIR= <<<"$out")"
wait_job_final "$job" 60

name=$(unique_name srun-env)
# shellcheck disable=SC2016 # expanded by the step
out=$(as_test_user timeout 60 srun -J "$name" sh -c 'echo JOB=$SLURM_JOB_ID; env | grep ^ACCEL_JOB_DIR=') ||
    fail "srun failed (exit $?)"
job=$(sed -n 's/^JOB=//p' <<<"$out")
[[ $job =~ ^[0-9]+$ ]] || fail "srun printed no job id: $out"
expect_eq "ACCEL_JOB_DIR in a plain srun" "ACCEL_JOB_DIR=$AGENT_RUN_DIR/jobs/$job" \
    "$(grep ^ACCEL_JOB_DIR= <<<"$out")"
wait_job_final "$job" 60

expect_node_in_service
log "PASS"
