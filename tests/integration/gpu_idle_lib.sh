# shellcheck shell=bash disable=SC2034 # GPU_NODE, GPU_CONF, GPU_NVML are for the tests
# The idle-accelerator setup shared by the tests of IdleAfter/IdleAction on the three-node
# sandbox's GPU node (sbn3, whose agent reads the fake NVML's scripts when it starts). Sourced
# after lib.sh, with `nodes` set by sandbox_nodes.
#
#   gpu_idle_prepare SAVE_DIR   sets GPU_NODE, GPU_CONF and GPU_NVML (the node's accel.conf and
#                               fake NVML folder) and keeps a copy of the scripts in SAVE_DIR
#   gpu_idle_script GPU...      scripts those GPUs (all with "all") at 0% for ever, at the
#                               captured H200's idle reading
#   gpu_idle_policy AFTER ACTION
#                               IdleAfter and IdleAction in the node's accel.conf (in place of
#                               any before); its agent restarted with them (and so reading the
#                               scripts again)
#   gpu_idle_restore            the scripts and accel.conf as they were, the agent restarted
#                               (for the test's EXIT trap: it never fails, it says what failed)

GPU_NODE='' GPU_CONF='' GPU_NVML='' GPU_SAVED=''

gpu_idle_prepare() {
    GPU_NODE=${nodes[2]:?sandbox_nodes 3 first}
    GPU_CONF=${ACCEL_SANDBOX_NODE_CONF_3:?}
    GPU_NVML=$(dirname -- "$GPU_CONF")/nvml
    [[ -e $GPU_NVML/gpu0 ]] || fail "no fake NVML scripts in $GPU_NVML"
    GPU_SAVED=$1/nvml.orig
    cp -a "$GPU_NVML" "$GPU_SAVED" || fail "cannot keep a copy of $GPU_NVML"
}

gpu_idle_script() {
    local f files=()
    if [[ $1 == all ]]; then
        files=("$GPU_NVML"/gpu*)
    else
        for f in "$@"; do files+=("$GPU_NVML/gpu$f"); done
    fi
    for f in "${files[@]}"; do
        sed -i '/^phase /d' "$f"
        echo "phase idle util=0 memory_util=0 used=644939776 power=80587" >>"$f"
    done
}

gpu_idle_policy() {
    sed -i '/^IdleAfter=/d; /^IdleAction=/d' "$GPU_CONF"
    printf 'IdleAfter=%s\nIdleAction=%s\n' "$1" "$2" >>"$GPU_CONF"
    "$SANDBOX_SCRIPT" restart agentd --node "$GPU_NODE" >/dev/null ||
        fail "accel-agentd on $GPU_NODE did not restart with IdleAfter=$1, IdleAction=$2"
}

gpu_idle_restore() {
    [[ -n $GPU_CONF ]] || return 0
    if [[ -n $GPU_SAVED && -d $GPU_SAVED ]]; then
        rm -rf "${GPU_NVML:?}" && cp -a "$GPU_SAVED" "$GPU_NVML"
    fi
    sed -i '/^IdleAfter=/d; /^IdleAction=/d' "$GPU_CONF"
    "$SANDBOX_SCRIPT" restart agentd --node "$GPU_NODE" >/dev/null ||
        printf '%s: could not restart accel-agentd on %s\n' "$TEST_NAME" "$GPU_NODE" >&2
}
