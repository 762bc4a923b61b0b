# shellcheck shell=bash disable=SC2034 # JOB_ID, JOB_FINAL, TEST_HOME are for the tests
# Helpers shared by the integration tests; sourced, never executed. The tests run as root
# against the sandbox of scripts/slurm-sandbox (the ctest fixture runs `up` and `down`) and
# submit as the ordinary user $ACCEL_TEST_USER (default acceltest). Every check fails loudly:
# a test that cannot run is a failure, never a skip.
set -euo pipefail

ACCEL_REPO_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
SANDBOX_SCRIPT=$ACCEL_REPO_DIR/scripts/slurm-sandbox
TEST_USER=${ACCEL_TEST_USER:-acceltest}
TEST_NAME=$(basename -- "$0" .sh)
TEST_HOME=

log() { printf '%s: %s\n' "$TEST_NAME" "$*"; }
fail() {
    printf '%s: FAIL: %s\n' "$TEST_NAME" "$*" >&2
    exit 1
}

# expect_eq WHAT EXPECTED ACTUAL
expect_eq() {
    [[ $2 == "$3" ]] || fail "$1: expected '$2', got '$3'"
    log "ok: $1 = '$3'"
}

require_root() {
    ((EUID == 0)) || fail "integration tests must run as root (they create users and submit" \
        "as them); run ctest as root"
}

# Fails unless every sandbox daemon runs; then points the Slurm commands at the sandbox.
require_sandbox() {
    local rc=0
    "$SANDBOX_SCRIPT" status >/dev/null || rc=$?
    ((rc == 0)) || fail "the Slurm sandbox is not fully up (status exit $rc); run" \
        "'scripts/slurm-sandbox up' with the same ACCEL_SANDBOX_DIR"
    eval "$("$SANDBOX_SCRIPT" env)"
    [[ -r $SLURM_CONF ]] || fail "cannot read $SLURM_CONF"
    settle_epilogs
}

# A job counts as ended (sacct, squeue's final states) before its epilog is done. A test that
# starts then and restarts the agent would fail that epilog and drain the node for every test
# after it, so each test first waits (up to 20 s) until no job is completing.
settle_epilogs() {
    local deadline=$((SECONDS + 20)) completing
    while completing=$(squeue -h -t CG -o %i 2>/dev/null) && [[ -n $completing ]]; do
        if ((SECONDS >= deadline)); then
            log "jobs still completing after 20 s: $(tr '\n' ' ' <<<"$completing")"
            return 0
        fi
        sleep 0.2
    done
}

# Creates the test user if missing (tolerating a concurrent creation) and registers it with
# the sandbox's accounting. Sets TEST_HOME.
ensure_test_user() {
    if ! getent passwd "$TEST_USER" >/dev/null; then
        useradd --create-home --shell /bin/bash "$TEST_USER" 2>/dev/null ||
            getent passwd "$TEST_USER" >/dev/null || fail "could not create user $TEST_USER"
        log "created user $TEST_USER"
    fi
    "$SANDBOX_SCRIPT" add-user "$TEST_USER" || fail "could not register $TEST_USER in accounting"
    TEST_HOME=$(getent passwd "$TEST_USER" | cut -d: -f6)
    [[ -d $TEST_HOME ]] || fail "home of $TEST_USER ($TEST_HOME) does not exist"
}

# Runs a command as the test user, from its home, with the sandbox's SLURM_CONF.
as_test_user() {
    (cd "$TEST_HOME" && runuser -u "$TEST_USER" -- env SLURM_CONF="$SLURM_CONF" "$@")
}

# submit JOB_ARGS... (job script on stdin): submits as the test user and sets JOB_ID.
submit() {
    local out
    out=$(as_test_user timeout 30 sbatch --parsable "$@") || fail "sbatch failed (exit $?)"
    JOB_ID=${out%%;*}
    [[ $JOB_ID =~ ^[0-9]+$ ]] || fail "sbatch printed no job id: '$out'"
    log "submitted job $JOB_ID"
}

# wait_job_final JOBID SECONDS: waits until accounting has a final state for the job
# allocation and sets JOB_FINAL to "State|ExitCode". It polls sacct rather than using
# `sbatch --wait`, whose poll interval grows to many seconds; the job's end reaches slurmdbd
# a moment after the job ends, so a final state there also means the job is over.
wait_job_final() {
    local job=$1 limit=$2 line='' deadline=$((SECONDS + $2))
    while ((SECONDS <= deadline)); do
        line=$(as_test_user sacct -n -P -X -j "$job" -o State,ExitCode) ||
            fail "sacct failed for job $job"
        case ${line%%|*} in
        '' | PENDING | RUNNING | REQUEUED | RESIZING | SUSPENDED) sleep 0.2 ;;
        *)
            JOB_FINAL=$line
            log "job $job ended: $line"
            return 0
            ;;
        esac
    done
    fail "sacct has no final state for job $job after $limit s (last: '${line:-nothing}')"
}

# wait_for SECONDS WHAT CMD...: runs CMD every 0.2 s until it succeeds; fails naming WHAT when
# SECONDS pass first.
wait_for() {
    local limit=$1 what=$2 deadline=$((SECONDS + $1))
    shift 2
    until "$@"; do
        ((SECONDS <= deadline)) || fail "$what: not within $limit s"
        sleep 0.2
    done
}

# job_story JOB: what Slurm and the node say of a job that did not get as far as a test
# expected (its state and reason, its node's state, the node agent's last log lines), for the
# failure's message to say why rather than only that.
job_story() {
    local job=$1 said
    said=$(scontrol -o show job "$job" 2>/dev/null | grep -o 'JobState=[^ ]*\|Reason=[^ ]*\|NodeList=[^ ]*' | xargs || true)
    log "job $job: ${said:-unknown to slurmctld}"
    log "nodes: $(sinfo -h -N -o '%N %T %E' 2>/dev/null | xargs)"
    if [[ -n ${ACCEL_SANDBOX_DIR:-} && -r $ACCEL_SANDBOX_DIR/log/agentd.out ]]; then
        log "agent's last lines:"
        tail -n 15 "$ACCEL_SANDBOX_DIR/log/agentd.out" | sed "s/^/$TEST_NAME:   /"
    fi
}

# wait_comment JOB SECONDS: waits until the job's AdminComment holds an accel= segment; sets COMMENT.
wait_comment() {
    local job=$1 deadline=$((SECONDS + $2))
    while ((SECONDS <= deadline)); do
        COMMENT=$(sacct -n -P -X -j "$job" -o AdminComment)
        [[ $COMMENT == *accel=\{* ]] && return 0
        sleep 0.5
    done
    fail "job $job has no accel= summary in AdminComment after $2 s (it holds '$COMMENT')"
}

# The accel= segment's JSON.
summary_of() { sed -E 's/^(.*;)?accel=//' <<<"$1"; }

# wait_requeued_job_final JOBID SECONDS: waits until a job that may requeue itself has left the
# queue for good (squeue knows it through its requeues), then as wait_job_final.
wait_requeued_job_final() {
    local job=$1 deadline=$((SECONDS + $2))
    while [[ -n $(squeue -h -j "$job" 2>/dev/null) ]]; do
        ((SECONDS <= deadline)) || fail "job $job still queued or running after $2 s"
        sleep 0.5
    done
    wait_job_final "$job" 60
}

# wait_summary_of_run JOBID RUN SECONDS: a requeued job's summary is written after its first
# run and again as the later runs' events come; waits for the one that has the appliance
# seconds of run RUN (0 is the first) and sets SUMMARY to its JSON.
wait_summary_of_run() {
    local job=$1 run=$2 deadline=$((SECONDS + $3))
    while :; do
        wait_comment "$job" "$3"
        SUMMARY=$(summary_of "$COMMENT")
        [[ $(jq -r --argjson r "$run" '.run_appliance_s[$r] // 0' <<<"$SUMMARY") != 0 ]] && return 0
        ((SECONDS <= deadline)) || fail "job $job's summary never got run $run's seconds: $SUMMARY"
        sleep 0.5
    done
}

# partition_calls JOB: "C R", the fake V-IPU controller's calls for the job's partition: C
# creations, and R removals after the first creation (a leader's prolog first clears a
# leftover of an earlier run, which removes nothing that this run made).
partition_calls() {
    # Options (--api-host H ...) come before the verb: find "create|remove partition pJ".
    awk -v p="p$1" '$1 == "vipu" {
            for (i = 2; i < NF; i++) if ($(i + 1) == "partition" && $(i + 2) == p) break
            if (i >= NF) next
            if ($i == "create") { created++; seen = 1 }
            if ($i == "remove" && seen) removed++
        }
        END { print created + 0, removed + 0 }' "$ACCEL_HW_MOCK_STATE/vipu/calls.log"
}

# sandbox_nodes MIN: sets the array `nodes` to the sandbox's node names (ACCEL_SANDBOX_NODES,
# from `slurm-sandbox env`) and fails unless there are at least MIN of them.
sandbox_nodes() {
    read -ra nodes <<<"${ACCEL_SANDBOX_NODES:-}"
    ((${#nodes[@]} >= $1)) || fail "expected a sandbox of at least $1 nodes (up --nodes N), it has" \
        "'${ACCEL_SANDBOX_NODES:-}'"
}
