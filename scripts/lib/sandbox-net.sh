# shellcheck shell=bash disable=SC2034 # globals here are used by the other files
# The network of a multi-node sandbox (`up --nodes N`). Sourced by scripts/slurm-sandbox.
#
# - One /24 of 10.213.0.0/16 per sandbox: 10.213.X.0/24, X derived from the sandbox path
#   (the next free one when another interface of this machine already has an address in
#   it), recorded in state/net while the network exists. The bridge asb<X>br in the
#   machine's namespace holds .1, the name slurmctld runs under ($CTL_NAME); node i is
#   .(10+i). Only interfaces made here carry these addresses, no default route is set
#   anywhere, so nothing the sandbox sends can leave the machine.
# - Node i: network namespace <prefix>-<node> with lo and sb0 (a veth whose peer asb<X>n<i>
#   is a port of the bridge), and one veth per NIC of its topology, named like the NIC. The
#   fabric NICs (the first two with an RDMA device) have their peers on the bridge "fabric"
#   of the namespace <prefix>-fabric: a layer 2 between the nodes' fabric NICs and nothing
#   else. The other NICs' peers stay in the node's namespace, unconnected.
# - IPv6 is off in every namespace made here and on the host-side interfaces; ordinary users
#   may ping inside the nodes (net.ipv4.ping_group_range).

FABRIC_BRIDGE=fabric

net_names() {
    FABRIC_NS=$SB_NS_PREFIX-fabric
    if [[ -r $SB_NET_FILE ]]; then NET_OCTET=$(sed -n 's/^NET_OCTET=//p' "$SB_NET_FILE"); fi
    if [[ -z ${NET_OCTET:-} ]]; then
        NET_PREFIX='' CTL_ADDR='' NET_BRIDGE=''
        return 0
    fi
    NET_PREFIX=10.213.$NET_OCTET
    CTL_ADDR=$NET_PREFIX.1
    NET_BRIDGE=asb${NET_OCTET}br
}

# Host-side name of node i's uplink veth.
node_uplink() { echo "asb${NET_OCTET}n$1"; }

# Chooses the /24 on a fresh start and records it.
net_pick() {
    local sum start o i
    local -A used=()
    while read -r o; do used[$o]=1; done < <(ip -4 -o addr show |
        awk '{ print $4 }' | sed -n 's|^10\.213\.\([0-9]*\)\..*|\1|p')
    sum=$(cksum <<<"$SANDBOX_DIR")
    start=$((${sum%% *} % 256))
    for ((i = 0; i < 256; i++)); do
        o=$(((start + i) % 256))
        [[ -z ${used[$o]:-} ]] && ! ip link show "asb${o}br" >/dev/null 2>&1 && break
    done
    ((i < 256)) || die "no free /24 left in 10.213.0.0/16"
    echo "NET_OCTET=$o" >"$SB_NET_FILE"
    net_names
}

ns_exists() { [[ -e /run/netns/$1 ]] && ip netns list | grep -qw -- "$1"; }

# in_ns NS CMD...: runs CMD in the network namespace only (not `ip netns exec`, which
# remounts /sys; sysctl and ip need nothing else).
in_ns() {
    local ns=$1
    shift
    nsenter --net="/run/netns/$ns" "$@"
}

quiet_ipv6() { sysctl -qw "net.ipv6.conf.$1.disable_ipv6=1" 2>/dev/null || true; }

new_ns() {
    ip netns add "$1" || die "cannot create network namespace $1"
    in_ns "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 \
        2>/dev/null || true
    in_ns "$1" sysctl -qw net.ipv4.ping_group_range="0 2147483647"
    ip -n "$1" link set lo up
}

# The NICs of a topology file, one "NETDEV FABRIC" line each (FABRIC yes/no).
topology_nics() {
    [[ -n $1 ]] || return 0
    "$BUILD_DIR/bin/accel-agentd" --print-topology --xml "$1" --json |
        jq -r '[.nics[] | select(.rdma_device != null) | .netdev][:2] as $f
               | .nics[] | "\(.netdev) \(if (.netdev | IN($f[])) then "yes" else "no" end)"' ||
        die "cannot read the NICs of $1"
}

# The GPUs of a topology file (0 without one).
topology_gpus() {
    [[ -n $1 ]] || {
        echo 0
        return 0
    }
    "$BUILD_DIR/bin/accel-agentd" --print-topology --xml "$1" --json |
        jq '[.accelerators[]? | select(.kind == "gpu")] | length' ||
        die "cannot read the accelerators of $1"
}

# Reads each node's NICs and GPUs once per `up` (into NODE_NICS, NODE_FABRIC, NODE_GPUS).
declare -gA NODE_NICS=() NODE_FABRIC=() NODE_GPUS=()
read_node_topologies() {
    local node topo key nic fab
    local -A seen_nics=() seen_gpus=()
    for node in "${NODES[@]}"; do
        topo=${NODE_TOPO[$node]}
        key=":$topo" # never empty: a node without a topology file has the key ":"
        if [[ -z ${seen_nics[$key]+x} ]]; then
            seen_nics[$key]=$(topology_nics "$topo")
            seen_gpus[$key]=$(topology_gpus "$topo")
        fi
        NODE_NICS[$node]='' NODE_FABRIC[$node]=''
        while read -r nic fab; do
            [[ -n $nic ]] || continue
            NODE_NICS[$node]+="$nic "
            if [[ $fab == yes ]]; then NODE_FABRIC[$node]+="$nic "; fi
        done <<<"${seen_nics[$key]}"
        NODE_GPUS[$node]=${seen_gpus[$key]}
    done
}

# Makes whatever part of the network is missing (idempotent).
net_up() {
    local node up nic
    if ! ip link show "$NET_BRIDGE" >/dev/null 2>&1; then
        ip link add "$NET_BRIDGE" type bridge || die "cannot create bridge $NET_BRIDGE"
        quiet_ipv6 "$NET_BRIDGE"
        ip addr add "$CTL_ADDR/24" dev "$NET_BRIDGE"
    fi
    ip link set "$NET_BRIDGE" up
    if ! ns_exists "$FABRIC_NS"; then
        new_ns "$FABRIC_NS"
        ip -n "$FABRIC_NS" link add "$FABRIC_BRIDGE" type bridge
        ip -n "$FABRIC_NS" link set "$FABRIC_BRIDGE" up
    fi
    for node in "${NODES[@]}"; do
        node_context "$node"
        # shellcheck disable=SC2153 # set by node_context (sandbox-common.sh)
        ns_exists "$NODE_NS" && continue
        new_ns "$NODE_NS"
        up=$(node_uplink "$NODE_INDEX")
        # A link left by an earlier namespace that is still being torn down.
        if ip link show "$up" >/dev/null 2>&1; then ip link del "$up" 2>/dev/null || true; fi
        ip link add "$up" type veth peer name sb0 netns "$NODE_NS" ||
            die "cannot create veth $up for $node"
        quiet_ipv6 "$up"
        ip link set "$up" master "$NET_BRIDGE"
        ip link set "$up" up
        ip -n "$NODE_NS" addr add "$NODE_ADDR/24" dev sb0
        ip -n "$NODE_NS" link set sb0 up
        for nic in ${NODE_NICS[$node]}; do
            if [[ " ${NODE_FABRIC[$node]}" == *" $nic "* ]]; then
                ip -n "$FABRIC_NS" link add "n$NODE_INDEX-${nic:0:10}" mtu 9000 type veth \
                    peer name "$nic" netns "$NODE_NS" ||
                    die "cannot create fabric veth $nic for $node"
                ip -n "$FABRIC_NS" link set "n$NODE_INDEX-${nic:0:10}" master "$FABRIC_BRIDGE" up
            else
                ip -n "$NODE_NS" link add "$nic" type veth peer name "${nic:0:13}-p" ||
                    die "cannot create veth $nic for $node"
                ip -n "$NODE_NS" link set "${nic:0:13}-p" up
            fi
            # The first up gives a link its queueing discipline for good: do it now, so a
            # job's set-up and teardown leave the namespace exactly as it was.
            ip -n "$NODE_NS" link set "$nic" up
            ip -n "$NODE_NS" link set "$nic" down
        done
    done
    say "network $NET_PREFIX.0/24 on $NET_BRIDGE (slurmctld $CTL_NAME $CTL_ADDR), fabric bridge" \
        "in $FABRIC_NS, ${#NODES[@]} node namespaces"
}

# Removes every namespace and link made by net_up, then waits until the kernel has let go
# of the names (deleting a namespace finishes asynchronously).
net_down() {
    net_names
    local node ns i
    local -a gone=()
    if [[ -n $NET_BRIDGE ]]; then
        for i in "${!NODES[@]}"; do
            gone+=("$(node_uplink $((i + 1)))")
            if ip link show "${gone[-1]}" >/dev/null 2>&1; then ip link del "${gone[-1]}" 2>/dev/null || true; fi
        done
    fi
    for node in "${NODES[@]}" fabric; do
        ns=$SB_NS_PREFIX-$node
        if ns_exists "$ns"; then ip netns del "$ns" || warn "could not delete namespace $ns"; fi
    done
    if [[ -n $NET_BRIDGE ]] && ip link show "$NET_BRIDGE" >/dev/null 2>&1; then
        ip link del "$NET_BRIDGE" || warn "could not delete bridge $NET_BRIDGE"
    fi
    wait_until 10 "the sandbox's network to be gone" net_gone "${gone[@]}" ||
        warn "still present: $(ip -br link | grep -F "asb${NET_OCTET:-}" || true)" \
            "$(ip netns list | grep -F -- "$SB_NS_PREFIX-" || true)"
    rm -f "$SB_NET_FILE"
    NET_OCTET=''
    net_names
}

net_gone() {
    local l
    [[ -z $NET_BRIDGE ]] || ! ip link show "$NET_BRIDGE" >/dev/null 2>&1 || return 1
    for l; do ! ip link show "$l" >/dev/null 2>&1 || return 1; done
    ! ip netns list | grep -qF -- "$SB_NS_PREFIX-"
}
