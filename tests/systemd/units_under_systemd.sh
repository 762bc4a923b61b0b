#!/usr/bin/env bash
# accel-agentd and accel-aggregatord under a real systemd: a Debian 12 root (debootstrap, cached
# between runs) booted with systemd as PID 1 in a systemd-nspawn container, this build's .deb
# installed in it, both units started by systemctl as shipped. It shows:
#  - `systemctl start accel-agentd` returns once the daemon is READY, and READY comes after
#    the recovery of the jobs the last daemon left: a job whose prolog ran before a restart
#    is counted in the STATUS sent with READY, which `systemctl restart` waited for;
#  - `systemctl status` shows the daemon's STATUS line;
#  - a hung daemon (SIGSTOP) is killed by the watchdog and restarted, and re-adopts the job;
#  - the journal holds the daemon's lines with their fields (SYSLOG_IDENTIFIER, PRIORITY);
#  - the limit enforcer's thread runs SCHED_FIFO under the unit's sandboxing;
#  - a job's directory is a tmpfs of its own (JobDirSize) that PID 1's mount namespace, the
#    one of slurmd and the jobs, sees: the daemon has no mount namespace of its own;
#  - `systemd-analyze security` rates each unit as the operator guide says;
#  - the aggregator's unit starts with the shipped unit and a minimal configuration, and the
#    agent's events reach it.
# Needs root, systemd-nspawn (systemd-container), debootstrap and Debian's mirror; changes
# nothing outside its work directory and the image cache (ACCEL_NSPAWN_CACHE, default
# /var/cache/accel-agent-test).
set -euo pipefail
build=${ACCEL_BUILD_DIR:?ACCEL_BUILD_DIR must name the build tree}
repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
cache=${ACCEL_NSPAWN_CACHE:-/var/cache/accel-agent-test}
fail() { echo "units: FAIL: $*" >&2; exit 1; }
log() { echo "units: $*"; }
((EUID == 0)) || fail "needs root (debootstrap, systemd-nspawn)"
for c in systemd-nspawn debootstrap nsenter pgrep jq cpack dpkg-deb; do
    command -v "$c" >/dev/null || fail "$c is not installed (scripts/bootstrap installs systemd-container and debootstrap)"
done

work=$(mktemp -d /var/tmp/accel-units-XXXXXX)
machine=accel-units-$$
nspawn_pid='' ct=''
cgroup_dirs=()
cleanup() {
    if [[ -n $ct && -e /proc/$ct ]]; then nsenter -t "$ct" -a systemctl poweroff >/dev/null 2>&1 || true; fi
    if [[ -n $nspawn_pid ]]; then
        for _ in $(seq 1 50); do [[ -e /proc/$nspawn_pid ]] || break; sleep 0.1; done
        kill -KILL "$nspawn_pid" 2>/dev/null || true
        wait "$nspawn_pid" 2>/dev/null || true
    fi
    local d
    for d in "${cgroup_dirs[@]}"; do
        find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
    done
    rm -rf "$work"
}
trap cleanup EXIT

# Every systemd-nspawn runs in a cgroup of ours in each writable hierarchy: it makes its
# supervisor and payload cgroups below its own, and those are removed with ours.
for h in systemd unified; do
    if [[ -w /sys/fs/cgroup/$h/cgroup.procs ]]; then
        mkdir -p "/sys/fs/cgroup/$h/$machine"
        cgroup_dirs+=("/sys/fs/cgroup/$h/$machine")
    fi
done
nspawn() {
    (
        for d in "${cgroup_dirs[@]}"; do echo "$BASHPID" >"$d/cgroup.procs"; done
        exec systemd-nspawn "$@"
    )
}

# --- the package ------------------------------------------------------------------------------
(cd "$build" && cpack -G DEB -B "$work/deb" >"$work/cpack.log" 2>&1) || fail "cpack: $(tail -5 "$work/cpack.log")"
deb=$(find "$work/deb" -maxdepth 1 -name 'accel-agent_*.deb' | head -n1)
[[ -n $deb ]] || fail "cpack made no accel-agent_*.deb"

# --- the image: Debian 12 with systemd and the package's dependencies, cached by them ----------
mirror=$(sed -n 's/^URIs: *\(http[^ ]*debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)
mirror=${mirror:-http://deb.debian.org/debian}
key=$(dpkg-deb -f "$deb" Depends | sha256sum | cut -c1-12)
base=$cache/bookworm-systemd-$key
if [[ ! -e $base/.accel-image-ready ]]; then
    t0=$SECONDS
    mkdir -p "$cache"
    rm -rf "$base.tmp"
    debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus,procps,util-linux bookworm "$base.tmp" "$mirror" \
        >"$work/debootstrap.log" 2>&1 || fail "debootstrap: $(tail -5 "$work/debootstrap.log")"
    # The host's libraries may come from the point-release and security suites.
    printf '%s\n' "deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
        "deb ${mirror%/debian}/debian-security bookworm-security main" >"$base.tmp/etc/apt/sources.list"
    cp "$deb" "$base.tmp/var/tmp/accel-agent.deb"
    # The package's dependencies from Debian (the package itself is installed fresh in each run).
    nspawn -q -D "$base.tmp" --register=no --keep-unit --pipe /bin/sh -c \
        'apt-get update -q && apt-get install -y -q --no-install-recommends /var/tmp/accel-agent.deb &&
         dpkg -r accel-agent && apt-get clean && rm -f /var/tmp/accel-agent.deb' >"$work/image.log" 2>&1 ||
        fail "installing the dependencies in the image: $(tail -5 "$work/image.log")"
    touch "$base.tmp/.accel-image-ready"
    find "$cache" -maxdepth 1 -name 'bookworm-systemd-*' ! -name "${base##*/}*" -exec rm -rf {} +
    mv "$base.tmp" "$base"
    log "image made in $((SECONDS - t0)) s: $(du -sh "$base" | cut -f1)"
fi
root=$work/root
cp -a --reflink=auto "$base" "$root"
cp "$deb" "$root/var/tmp/accel-agent.deb"
nspawn -q -D "$root" --register=no --keep-unit --pipe dpkg -i /var/tmp/accel-agent.deb >"$work/dpkg.log" 2>&1 ||
    fail "dpkg -i in the container: $(tail -5 "$work/dpkg.log")"

# The configuration: the agent streams to the aggregator on the container's loopback. The
# container's host name is the node's name (the aggregator files its events under it).
echo "$machine" >"$root/etc/hostname"
mkdir -p "$root/etc/slurm" "$root/etc/accel-agent/nodes"
chmod 0700 "$root/etc/accel-agent"
cat >"$root/etc/slurm/accel.conf" <<EOF
LogLevel=info
AggregatorAddress=tcp://127.0.0.1:7450
HeartbeatInterval=2
EOF
cat >"$root/etc/slurm/accel-aggregator.conf" <<EOF
Listen=tcp://127.0.0.1:7450
SecretKeyFile=/etc/accel-agent/aggregator.key
AllowListDir=/etc/accel-agent/nodes
Database=/var/lib/accel-aggregator/events.db
WriteComments=no
EOF
nspawn -q -D "$root" --register=no --keep-unit --pipe /bin/sh -c \
    'accel-keygen /etc/accel-agent/aggregator && accel-keygen /etc/accel-agent/node &&
     cp /etc/accel-agent/node.pub /etc/accel-agent/nodes/'"$machine"'.pub' >"$work/keys.log" 2>&1 ||
    fail "accel-keygen in the container: $(cat "$work/keys.log")"

# --- boot ---------------------------------------------------------------------------------------
(
    for d in "${cgroup_dirs[@]}"; do echo "$BASHPID" >"$d/cgroup.procs"; done
    exec setsid systemd-nspawn -D "$root" --boot --machine="$machine" --register=no --keep-unit \
        --private-network --console=read-only </dev/null >"$work/boot.log" 2>&1
) &
nspawn_pid=$!
for _ in $(seq 1 100); do
    ct=$(pgrep -P "$nspawn_pid" -x systemd || true)
    [[ -n $ct ]] && break
    sleep 0.1
done
[[ -n $ct ]] || fail "the container's systemd did not start: $(tail -5 "$work/boot.log")"
for _ in $(seq 1 100); do [[ -S /proc/$ct/root/run/systemd/private ]] && break; sleep 0.05; done
in_ct() { nsenter -t "$ct" -a "$@"; }
state=$(timeout 60 nsenter -t "$ct" -a systemctl is-system-running --wait 2>&1 || true)
[[ $state == running || $state == degraded ]] || fail "the container did not boot: '$state'"
log "container booted: systemd $(in_ct systemctl --version | head -n1 | awk '{print $2}') as PID 1, state $state"
[[ $(in_ct ps -o comm= -p 1) == systemd ]] || fail "PID 1 of the container is not systemd"

unit_prop() { in_ct systemctl show -P "$2" "$1"; }
main_pid() { unit_prop accel-agentd.service MainPID; }

# --- the aggregator and the agent start, each as its unit is shipped ---------------------------
# The container's whole journal, last lines: what a failed start left (a unit's own lines and
# systemd's about it, such as the signal that ended it).
ct_journal() { in_ct journalctl -b -n 40 --no-pager -o short-monotonic 2>&1 || true; }
in_ct systemctl start accel-aggregatord || fail "systemctl start accel-aggregatord:"$'\n'"$(ct_journal)"
in_ct systemctl start accel-agentd || fail "systemctl start accel-agentd:"$'\n'"$(ct_journal)"
[[ $(unit_prop accel-agentd.service ActiveState) == active ]] || fail "accel-agentd is not active"
status=$(in_ct systemctl status accel-agentd --no-pager || true)
grep -q 'Status: "ready: 0 job(s)' <<<"$status" || fail "systemctl status shows no STATUS line of the daemon: $status"
log "ok: accel-agentd active, $(grep -o 'Status: .*' <<<"$status")"
agg_status=$(unit_prop accel-aggregatord.service StatusText)
[[ -n $agg_status ]] || fail "accel-aggregatord sent no STATUS"
log "ok: accel-aggregatord active, status '$agg_status'"

# --- a job, and a restart: READY only after the job is re-adopted -----------------------------
job_env=(env SLURM_JOB_ID=77 SLURM_JOB_UID=4242 SLURM_JOB_GID=4242 SLURM_JOB_USER=bench SLURMD_NODENAME="$machine")
in_ct "${job_env[@]}" accelctl prolog || fail "accelctl prolog in the container failed"
# The job's directory is a tmpfs of its own, mounted where the job sees it: in the mount
# namespace of the container's PID 1, the one slurmd and the jobs run in.
jobdir=$(in_ct findmnt -n -o FSTYPE,OPTIONS --mountpoint /run/accel-agent/jobs/77 || true)
[[ $jobdir == tmpfs*size=131072k*nr_inodes=131072* ]] ||
    fail "job 77's directory is not a tmpfs of its own (JobDirSize) in PID 1's namespace: '$jobdir'"
[[ $(in_ct stat -c %u /run/accel-agent/jobs/77) == 4242 ]] || fail "job 77's directory is not the job's user's"
log "ok: job 77's directory is a tmpfs of its own, seen from PID 1: $jobdir"
in_ct systemctl restart accel-agentd || fail "systemctl restart accel-agentd failed"
# systemctl restart returns once READY=1 came; the STATUS sent with it counts the jobs the
# daemon re-adopted before it, so it already holds the job.
ready_status=$(unit_prop accel-agentd.service StatusText)
[[ $ready_status == "ready: 1 job(s)"* ]] || fail "READY came before the job was re-adopted: status '$ready_status'"
recovered=''
for _ in $(seq 1 50); do
    recovered=$(in_ct journalctl -u accel-agentd -o json --no-pager _PID="$(main_pid)" |
        jq -r 'select(.MESSAGE | startswith("start: jobs re-adopted")) | .MESSAGE' | tail -n1)
    [[ -n $recovered ]] && break
    sleep 0.1
done
[[ $recovered == "start: jobs re-adopted 1,"* ]] || fail "the restarted daemon logged no re-adoption of the job: '$recovered'"
log "ok: '$recovered'; READY came with status '$ready_status'"

# --- the journal's fields ------------------------------------------------------------------------
fields=$(in_ct journalctl -u accel-agentd -o json --no-pager |
    jq -r 'select(.MESSAGE | startswith("start: jobs re-adopted")) | "\(.SYSLOG_IDENTIFIER) \(.PRIORITY)"' | tail -n1)
[[ $fields == "accel-agentd 6" ]] || fail "journal fields SYSLOG_IDENTIFIER and PRIORITY: expected 'accel-agentd 6', got '$fields'"
log "ok: journal entries carry SYSLOG_IDENTIFIER=accel-agentd and PRIORITY (6 for info)"

# --- the limit enforcer's scheduling --------------------------------------------------------------
pid=$(main_pid)
tid=''
for t in "/proc/$ct/root/proc/$pid/task/"*; do
    [[ $(cat "$t/comm" 2>/dev/null) == accel-limit ]] && tid=${t##*/}
done
[[ -n $tid ]] || fail "no thread named accel-limit in accel-agentd (pid $pid in the container)"
policy=$(in_ct chrt -p "$tid" | sed -n 's/.*scheduling policy: //p')
[[ $policy == SCHED_FIFO ]] || fail "the limit thread runs $policy, not SCHED_FIFO: $(in_ct journalctl -u accel-agentd --no-pager | grep 'real-time' || true)"
log "ok: the limit thread (tid $tid) runs $policy"

# --- the watchdog: a hung daemon is killed and restarted ------------------------------------------
restarts=$(unit_prop accel-agentd.service NRestarts)
old=$(main_pid)
in_ct kill -STOP "$old"
log "accel-agentd (pid $old) stopped with SIGSTOP; waiting for the watchdog ($(unit_prop accel-agentd.service WatchdogUSec))"
deadline=$((SECONDS + 120))
until [[ $(unit_prop accel-agentd.service NRestarts) -gt $restarts && $(unit_prop accel-agentd.service ActiveState) == active ]]; do
    ((SECONDS <= deadline)) || fail "accel-agentd was not restarted within 120 s: $(in_ct journalctl -u accel-agentd -n 10 --no-pager)"
    sleep 1
done
new=$(main_pid)
[[ $new != "$old" ]] || fail "the same pid $old is still the main process"
# PID 1's line reaches the journal through journald, which may be behind on a loaded machine.
deadline=$((SECONDS + 30))
until in_ct journalctl -u accel-agentd --no-pager | grep -q 'Watchdog timeout'; do
    ((SECONDS <= deadline)) || fail "the journal does not say the watchdog fired"
    sleep 1
done
grep -q 'Status: "ready: 1 job(s)' <<<"$(in_ct systemctl status accel-agentd --no-pager || true)" ||
    fail "the restarted daemon did not re-adopt the job"
log "ok: watchdog timeout, pid $old killed, $new running with the job re-adopted"

# --- the job ends; its events reach the aggregator -------------------------------------------------
in_ct "${job_env[@]}" accelctl epilog || fail "accelctl epilog in the container failed"
deadline=$((SECONDS + 30))
until in_ct accelctl events --database /var/lib/accel-aggregator/events.db --job 77 2>/dev/null | grep -q epilog_finished; do
    ((SECONDS <= deadline)) || fail "job 77's epilog_finished did not reach the aggregator: $(in_ct accelctl status || true)"
    sleep 0.5
done
log "ok: job 77's events are in the aggregator's database"

# --- systemd-analyze security, as the operator guide records it ------------------------------------
for unit in accel-agentd accel-aggregatord; do
    overall=$(in_ct systemd-analyze security "$unit.service" --no-pager | grep 'Overall exposure level' || true)
    score=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' <<<"$overall")
    [[ -n $score ]] || fail "systemd-analyze security printed no score for $unit"
    log "$overall"
    documented=$(sed -n "s/.*\`systemd-analyze security\` rates $unit\\.service \\([0-9.]*\\).*/\\1/p" "$repo/docs/operator-guide.md")
    [[ $score == "$documented" ]] || fail "systemd-analyze security rates $unit $score; the operator guide says '${documented:-nothing}'"
    log "ok: systemd-analyze security rates $unit.service $score, as documented"
done

in_ct systemctl stop accel-agentd accel-aggregatord || fail "systemctl stop failed"
log "PASS"
