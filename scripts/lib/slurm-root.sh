# shellcheck shell=bash
# A Debian root with another Slurm than the host's, for `scripts/test --slurm VERSION`.
# Sourced by scripts/test; needs `repo` (the checkout) and root.
#
# Slurm 24.11 is Debian 13's (trixie). Its root is debootstrapped (minbase) from the Debian
# mirror this machine uses, then gets the project's packages by running scripts/bootstrap
# inside it. It is cached in $ACCEL_TEST_CACHE (default /var/cache/accel-agent-test) as
# trixie-slurm-<hash of scripts/bootstrap and SLURM_ROOT_RECIPE>: a new package list, or a new
# recipe (raise it when slurm_root_prepare changes), makes a new root, and the old ones are
# removed then. Making one takes about a minute and 1.6 GB.
#
# in_slurm_root runs a command inside: the root as the root of a mount namespace of its own
# (pivot_root), with PID, IPC and UTS namespaces of its own too; /proc, /sys and /dev, a
# fresh /tmp and /run, the host's /etc/hosts and
# resolv.conf (the node's name resolves as on the host), and the checkout bind-mounted at its
# own path, so the build tree and the sandbox under it have the same paths inside and out. The
# network is the host's: the one-node sandbox binds loopback ports it picked free there. Every
# process started inside ends with the command (PID namespace), and the mounts go with the
# namespace. /sys is the machine's, cgroup hierarchies included: the cgroups a sandbox inside
# makes for its nodes are the machine's (slurm-sandbox's `down` removes them, or the next
# fresh `up` of the same sandbox directory when a run ended without `down`).

SLURM_ROOT_CACHE=${ACCEL_TEST_CACHE:-/var/cache/accel-agent-test}
: "${repo:?scripts/lib/slurm-root.sh needs repo, the checkout}"
SLURM_ROOT_RECIPE=1

# The Debian release whose Slurm is VERSION.
slurm_root_release() {
    case $1 in
    24.11) echo trixie ;;
    *) return 1 ;;
    esac
}

slurm_root_mirror() {
    local m
    m=$(sed -n 's/^URIs: *\(http[^ ]*debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)
    echo "${m:-http://deb.debian.org/debian}"
}

slurm_root_path() {
    local release hash
    release=$(slurm_root_release "$1") || return 1
    hash=$({ cat "$repo/scripts/bootstrap"; echo "recipe $SLURM_ROOT_RECIPE"; } | sha256sum | cut -c1-12)
    echo "$SLURM_ROOT_CACHE/$release-slurm-$hash"
}

# slurm_root_prepare VERSION: makes the root unless it is cached; prints its path.
slurm_root_prepare() {
    local version=$1 release root mirror tmp
    release=$(slurm_root_release "$version") || {
        echo "slurm-root: no Debian release known for Slurm $version (known: 24.11)" >&2
        return 1
    }
    root=$(slurm_root_path "$version")
    if [[ -e $root/.accel-root-ready ]]; then
        echo "$root"
        return 0
    fi
    command -v debootstrap >/dev/null || {
        echo "slurm-root: debootstrap is not installed (scripts/bootstrap installs it)" >&2
        return 1
    }
    mirror=$(slurm_root_mirror)
    tmp=$root.tmp
    mkdir -p "$SLURM_ROOT_CACHE"
    rm -rf "$tmp"
    echo "slurm-root: making a Debian $release root for Slurm $version in $root (from $mirror)" >&2
    if ! debootstrap --variant=minbase "$release" "$tmp" "$mirror" >"$tmp.log" 2>&1; then
        echo "slurm-root: debootstrap failed: $(tail -5 "$tmp.log")" >&2
        return 1
    fi
    printf '%s\n' "deb $mirror $release main" "deb $mirror $release-updates main" \
        "deb ${mirror%/debian}/debian-security $release-security main" >"$tmp/etc/apt/sources.list"
    if ! in_slurm_root "$tmp" bash "$repo/scripts/bootstrap" >>"$tmp.log" 2>&1; then
        echo "slurm-root: scripts/bootstrap failed inside the root: $(tail -5 "$tmp.log")" >&2
        return 1
    fi
    in_slurm_root "$tmp" apt-get clean >/dev/null 2>&1 || true
    touch "$tmp/.accel-root-ready"
    # Roots made by an earlier recipe or package list (named as this one is, another hash).
    find "$SLURM_ROOT_CACHE" -maxdepth 1 -regextype posix-extended \
        -regex ".*/$release-slurm-[0-9a-f]{12}(\.tmp|\.tmp\.log)?" ! -name "${root##*/}" ! -name "${root##*/}.*" \
        -exec rm -rf {} +
    mv "$tmp" "$root"
    rm -f "$tmp.log"
    echo "$root"
}

# in_slurm_root ROOT COMMAND...: runs COMMAND inside ROOT (see above); returns its status.
in_slurm_root() {
    local root=$1
    shift
    # shellcheck disable=SC2016  # the inner script expands its own arguments
    unshare --mount --pid --ipc --uts --fork --propagation private -- bash -c '
        set -e
        root=$1 repo=$2
        shift 2
        # The root a mount point of its own, as / is: `ip netns` (and anything else that
        # changes the propagation of /) refuses a root that is not one, and so does pivot_root.
        mount --bind "$root" "$root"
        mount -t proc proc "$root/proc"
        mount --rbind /sys "$root/sys"
        mount --rbind /dev "$root/dev"
        mount -t tmpfs tmpfs "$root/dev/shm"
        mount -t tmpfs tmpfs "$root/tmp"
        mount -t tmpfs tmpfs "$root/run"
        mkdir -p "$root$repo"
        mount --bind "$repo" "$root$repo"
        cp /etc/hosts "$root/etc/hosts"
        cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
        # pivot_root, not only chroot: the root becomes the mount namespace'"'"'s own, so a
        # process that later enters a namespace made inside (nsenter --mount, as the
        # sandbox'"'"'s nodes are entered) lands in it, not in the host'"'"'s file system.
        mkdir -p "$root/.host-root"
        cd "$root"
        pivot_root . .host-root
        cd /
        umount -l /.host-root
        rmdir /.host-root
        set +e
        /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" \
            PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
            ACCEL_FUZZ_SECONDS="${ACCEL_FUZZ_SECONDS:-}" CI="${CI:-}" "$@"
    ' _ "$root" "$repo" "$@"
}
