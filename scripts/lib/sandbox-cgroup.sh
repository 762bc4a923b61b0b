# shellcheck shell=bash disable=SC2034 # globals here are used by the other files
# The cgroups of the sandbox's nodes. Sourced by scripts/slurm-sandbox, never executed.
#
# slurm.conf runs proctrack/cgroup and task/cgroup, as production clusters do. On this machine
# kind Slurm uses cgroup v1 (a controller per hierarchy at /sys/fs/cgroup/<controller>; the
# cgroup2 mount at /sys/fs/cgroup/unified has no controller Slurm could use), and puts a job at
# <hierarchy root>/slurm_<node>/uid_<uid>/job_<id>/step_<step>, the freezer for tracking and
# the devices controller for ConstrainDevices. At the machine's root that path would be shared
# by every slurmd of one node name here (the one-node sandboxes of two build trees are both
# named after this host), and each would remove the other's cgroups. So every node of every
# sandbox gets a cgroup of its own in each controller Slurm uses,
#   /sys/fs/cgroup/<controller>/accel-sb-<hash>-<node>
# (the prefix of the sandbox's namespaces, from its path), and that node's slurmd and agent run
# in a mount namespace where that cgroup, not the machine's root, is mounted at
# /sys/fs/cgroup/<controller> (sandbox-nsinit --cgroup): Slurm's whole hierarchy lands inside
# it. In /proc/PID/cgroup the node's processes show the full path from the machine's root
# (/accel-sb-<hash>-<node>/slurm_<node>/...), which the mount's root in mountinfo maps to the
# mount point. The other controllers (memory above all: this machine's CI runs in a memory
# cgroup of its own) are never touched: cgroup.conf constrains no memory, cores or swap.
# `down`, and a fresh `up` after a run that ended without it, end whatever still runs in these
# cgroups and remove them bottom-up.

SB_CGROUP_FS=/sys/fs/cgroup
SB_CGROUP_CONTROLLERS=(freezer devices)

# The node of node_context's cgroup in CONTROLLER, as this machine sees it.
node_cgroup() { echo "$SB_CGROUP_FS/$1/$SB_NS_PREFIX-$NODE_NAME"; }

# Dies unless CONTROLLER is a cgroup v1 hierarchy mounted at its usual place.
cgroup_require_v1() {
    local c=$1
    [[ $(stat -f -c %T "$SB_CGROUP_FS/$c" 2>/dev/null) == cgroupfs ]] ||
        die "no cgroup v1 $c hierarchy at $SB_CGROUP_FS/$c: the sandbox runs Slurm's" \
            "proctrack/cgroup and task/cgroup on cgroup v1 (see scripts/README.md)"
}

# Makes the node of node_context's cgroups (idempotent) and sets NSINIT_CGROUP_ARGS, the
# sandbox-nsinit arguments that mount them in place of the hierarchies' roots. The staging
# directory is where each mount is prepared before it is moved into place; it stays empty.
node_cgroups_up() {
    local c dir stage=$NODE_RUN/cgroup-stage
    NSINIT_CGROUP_ARGS=()
    mkdir -p "$stage"
    for c in "${SB_CGROUP_CONTROLLERS[@]}"; do
        cgroup_require_v1 "$c"
        dir=$(node_cgroup "$c")
        mkdir -p "$dir" || die "cannot create cgroup $dir"
        NSINIT_CGROUP_ARGS+=(--cgroup "$dir" "$SB_CGROUP_FS/$c" "$stage")
    done
}

# The sandbox's cgroups that exist: the top one of each node in each controller.
sandbox_cgroups() {
    local c d
    for c in "${SB_CGROUP_CONTROLLERS[@]}"; do
        for d in "$SB_CGROUP_FS/$c/$SB_NS_PREFIX"-*; do
            if [[ -d $d ]]; then echo "$d"; fi
        done
    done
}

# One line for `status`: the nodes' cgroups and their controllers, or "(none)".
cgroups_summary() {
    local names
    names=$(sandbox_cgroups | sed 's|.*/||' | sort -u | paste -sd' ')
    if [[ -n $names ]]; then
        echo "$names (${SB_CGROUP_CONTROLLERS[*]})"
    else
        echo '(none)'
    fi
}

# Pids of every process in the cgroups below the directories given (cgroup.procs of each).
cgroup_pids() {
    find "$@" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -un
}

cgroups_empty() { [[ -z $(cgroup_pids "$@") ]]; }

# Removes the directories given and every cgroup below them, children first. Succeeds when
# all are gone: a cgroup whose last process has exited but is not yet reaped (PID 1 here
# reaps slowly) refuses rmdir for a moment, so the caller retries.
remove_cgroup_trees() {
    local d
    find "$@" -depth -type d -exec rmdir {} + 2>/dev/null || true
    for d; do [[ ! -d $d ]] || return 1; done
}

# Ends every process left in the sandbox's cgroups and removes them. Run by `down` once the
# daemons and slurmstepd are gone, and by a fresh `up` for what an earlier run left.
cgroups_down() {
    local -a tops=() pids=()
    local f
    mapfile -t tops < <(sandbox_cgroups)
    ((${#tops[@]})) || return 0
    # A step that slurmstepd froze to signal it (and did not thaw: it was killed meanwhile)
    # keeps its tasks stopped, and SIGKILL only acts once they run again.
    while IFS= read -r f; do
        echo THAWED 2>/dev/null >"$f" || true
    done < <(find "${tops[@]}" -name freezer.state 2>/dev/null)
    mapfile -t pids < <(cgroup_pids "${tops[@]}")
    if ((${#pids[@]})); then
        say "ending ${#pids[@]} leftover processes in the sandbox's cgroups: ${pids[*]}"
        kill -KILL "${pids[@]}" 2>/dev/null || true
        wait_until 10 "the sandbox's cgroups to be empty" cgroups_empty "${tops[@]}" ||
            warn "still in the sandbox's cgroups: $(cgroup_pids "${tops[@]}" | paste -sd' ')"
    fi
    if wait_until 10 "the sandbox's cgroups to be removed" remove_cgroup_trees "${tops[@]}"; then
        say "removed cgroups $(printf '%s\n' "${tops[@]##*/}" | sort -u | paste -sd' ')" \
            "(${SB_CGROUP_CONTROLLERS[*]})"
    else
        warn "cgroups left: $(sandbox_cgroups | paste -sd' ')"
    fi
}
