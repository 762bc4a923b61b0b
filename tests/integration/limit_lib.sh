# shellcheck shell=bash
# Workloads of the limit suites (limit_process_tree, multinode_limit_tree, the attack
# attack_outlive_limit): real process trees, not processes written to cooperate. Sourced after
# lib.sh. Every process of a tree notes "started ROLE PID" in the job's directory and, when a
# warning (USR1) reaches it, "warned ROLE PID"; the suites compare the two.
#
#   limit_tree_script DIR        writes DIR/tree.sh, the tree one task (or batch shell) runs:
#                                  - a bash wrapper whose child loops on `sleep`;
#                                  - python3 with three multiprocessing workers;
#                                  - a child that ignores SIGTERM;
#                                  - a setsid, double-forked child (its parent exits at once);
#                                  - a child left behind when the wrapper itself exits at once
#                                    (tree.sh DIR ROLE exit);
#   job_processes JOB            the pids of processes, on this machine, whose environment says
#                                SLURM_JOB_ID=JOB (every node of a sandbox shares the pid space)
#   expect_no_process_left JOB [UNTIL]
#                                fails naming each process of JOB still there; with UNTIL (epoch
#                                seconds, fractions allowed), looks again until then first: the
#                                promise is "gone within the grace", and sacct can read the job
#                                final while slurmd still ends its other steps' processes
#   expect_not_drained NODE...   fails if a node is drained
#   kill_grace                   the sandbox's ApplianceKillGrace in seconds (30 when unset)
#   expect_left_queue JOB [SECONDS]
#                                fails unless the job leaves the queue (its epilog done) within
#                                SECONDS (default 5)
#   noted_roles PREFIX WHAT FILE...
#                                the roles of PREFIX that noted WHAT (started, warned) in the
#                                notes FILEs, sorted, one a line
#   expect_all_warned LABEL PREFIX FILE...
#                                every process of PREFIX that started was warned
#   expect_limit_end JOB TRACE MIN GRACE
#                                the job (ended) got SIGTERM (a "term TIME" line in TRACE, which
#                                its batch shell writes), nothing of it is left, it has left the
#                                queue, it ended at least MIN s and at most GRACE + 1 s after
#                                SIGTERM, and each step running then reads CANCELLED or FAILED
#                                and ended within GRACE + 1 s

limit_tree_script() {
    local dir=$1
    cat >"$dir/tree.sh" <<'TREE'
#!/bin/bash
# tree.sh DIR ROLE [exit]
dir=$1 role=$2
note() { echo "$1 $2 $3" >>"$dir/notes.$(hostname)"; }
# A process that notes the warning and otherwise sleeps in short naps; $1 its role, $2 "ignore"
# to ignore SIGTERM.
keep() {
    trap "note warned $1 \$BASHPID" USR1
    [[ ${2:-} == ignore ]] && trap '' TERM
    note started "$1" "$BASHPID"
    while :; do sleep 0.2; done
}
keep "$role-child" &
keep "$role-noterm" ignore &
# setsid in a child that exits at once: the grandchild has a session of its own and init as
# its parent, outside the task's process tree.
( setsid bash -c "$(declare -f note keep); dir='$dir'; keep '$role-setsid'" </dev/null >/dev/null 2>&1 & )
python3 -c '
import multiprocessing, os, signal, socket, sys, time
out = sys.argv[1] + "/notes." + socket.gethostname()
def note(what, role):
    with open(out, "a") as f:
        f.write(f"{what} {role} {os.getpid()}\n")
def keep(role):
    signal.signal(signal.SIGUSR1, lambda s, f: note("warned", role))
    note("started", role)
    while True:
        time.sleep(0.2)
if __name__ == "__main__":
    workers = [multiprocessing.Process(target=keep, args=(sys.argv[2] + "-pyworker",)) for _ in range(3)]
    for w in workers:
        w.start()
    keep(sys.argv[2] + "-python")
' "$dir" "$role" &
if [[ ${3:-} == exit ]]; then
    note started "$role-exited" "$$"
    exit 0
fi
keep "$role"
TREE
    chmod 755 "$dir/tree.sh"
}

job_processes() {
    local job=$1 p
    for p in /proc/[0-9]*; do
        [[ $(stat -c %U "$p" 2>/dev/null) == "$TEST_USER" ]] || continue
        # Not `tr | grep -q`: grep -q stops at the match, tr then dies of SIGPIPE, and under
        # pipefail a process whose environment is long would read as none of the job's.
        grep -qx "SLURM_JOB_ID=$job" < <(tr '\0' '\n' 2>/dev/null <"$p/environ") || continue
        # A zombie is gone but for its parent's wait.
        [[ $(awk '{print $3}' "$p/stat" 2>/dev/null) == Z ]] && continue
        echo "${p#/proc/}"
    done
}

expect_no_process_left() {
    local job=$1 until=${2:-0} left p
    left=$(job_processes "$job")
    while [[ -n $left ]] && (($(echo "$(date +%s.%N) < $until" | bc))); do
        sleep 0.2
        left=$(job_processes "$job")
    done
    if [[ -n $left ]]; then
        for p in $left; do log "left: $p $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"; done
        fail "job $job: $(wc -w <<<"$left") process(es) outlived the limit and its grace"
    fi
    log "ok: no process of job $job is left"
}

expect_not_drained() {
    local node state
    for node in "$@"; do
        state=$(scontrol show node "$node" | sed -n 's/.*State=\([^ ]*\).*/\1/p')
        [[ $state != *DRAIN* ]] || fail "node $node is drained ($state): $(scontrol show node "$node" | grep -o 'Reason=.*')"
    done
    log "ok: not drained: $*"
}

expect_left_queue() {
    local job=$1 deadline=$((SECONDS + ${2:-5}))
    while [[ -n $(squeue -h -j "$job" 2>/dev/null) ]]; do
        ((SECONDS < deadline)) || fail "job $job is still in the queue: $(squeue -h -j "$job" -o '%T %R')"
        sleep 0.2
    done
    log "ok: job $job has left the queue"
}

expect_limit_end() {
    local job=$1 trace=$2 min=$3 grace=$4 term end k id state stamp steps=0
    term=$(sed -n 's/^term //p' "$trace" 2>/dev/null | head -1)
    [[ -n $term ]] || fail "job $job: SIGTERM never reached the batch shell"
    expect_no_process_left "$job" "$(echo "$term + $grace + 1" | bc)"
    expect_left_queue "$job"
    end=$(date -d "$(sacct -n -P -X -j "$job" -o End)" +%s)
    k=$(echo "$end - $term" | bc)
    log "job $job ended $k s after SIGTERM (grace $grace s; sacct has whole seconds)"
    (($(echo "$k >= $min && $k <= $grace + 1" | bc))) ||
        fail "job $job ended $k s after SIGTERM; expected between $min s and the grace ($grace s) and a second"
    # Each step still running at SIGTERM (its End not before SIGTERM's second; the extern step
    # is Slurm's, never signalled) reads CANCELLED or FAILED and ended within the grace and a
    # second. sacct truncates to the second, so a true end within the bound always passes.
    while IFS='|' read -r id state stamp; do
        [[ $id == *.* && $id != *.extern ]] || continue
        end=$(date -d "$stamp" +%s) || fail "job $job: step $id has no end ($stamp)"
        ((end >= ${term%.*})) || continue
        k=$(echo "$end - $term" | bc)
        log "step $id: $state, ended $k s after SIGTERM"
        [[ $state == CANCELLED* || $state == FAILED* ]] ||
            fail "step $id reads $state after the limit; expected CANCELLED or FAILED"
        (($(echo "$k <= $grace + 1" | bc))) ||
            fail "step $id ended $k s after SIGTERM; expected within the grace ($grace s) and a second"
        steps=$((steps + 1))
    done < <(sacct -n -P -j "$job" -o JobID,State,End)
    ((steps > 0)) || fail "job $job: no step of it was running at SIGTERM"
}

noted_roles() {
    local prefix=$1 what=$2
    shift 2
    cat "$@" 2>/dev/null | awk -v p="$prefix" -v w="$what" '$1 == w && index($2, p) == 1 {print $2}' | sort -u
}

expect_all_warned() {
    local label=$1 prefix=$2 want got
    shift 2
    want=$(noted_roles "$prefix" started "$@") got=$(noted_roles "$prefix" warned "$@")
    [[ -n $want ]] || fail "$label: no process of $prefix started"
    [[ $want == "$got" ]] || fail "$label: the warning reached [$(xargs <<<"$got")] of [$(xargs <<<"$want")]"
    log "ok: $label: the warning reached every process of $prefix: $(xargs <<<"$got")"
}

kill_grace() {
    local g
    g=$(sed -n 's/^ApplianceKillGrace=\([0-9]*\).*/\1/p' "${ACCEL_SANDBOX_NODE_CONF_1:?}")
    echo "${g:-30}"
}
