#!/usr/bin/env bash
# Checks the dynamic symbol table of spank_accel.so:
#  1. it defines exactly the SPANK entry points and the plugin loader's three
#     variables, nothing else (a leaked symbol could interpose on slurmstepd's
#     own or another plugin's);
#  2. every symbol it needs without a version tag comes from Slurm's SPANK API
#     (spank_*, slurm_*), which the loading process provides;
#  3. it links no library beyond libc and the C++ runtime (no libzmq: the
#     plugin must not start threads in slurmstepd; no libslurm: the host
#     process has its own copy).
set -euo pipefail
plugin=${1:?usage: check_exports.sh PATH/spank_accel.so}
[[ -f $plugin ]] || { echo "FAIL: $plugin does not exist" >&2; exit 1; }
for tool in nm readelf; do
    command -v "$tool" >/dev/null || { echo "FAIL: $tool (binutils) is needed" >&2; exit 1; }
done

fail=0
expected="plugin_name
plugin_type
plugin_version
slurm_spank_exit
slurm_spank_init
slurm_spank_init_post_opt
slurm_spank_task_exit
slurm_spank_task_init
slurm_spank_task_post_fork
slurm_spank_user_init"
defined=$(nm -D --defined-only "$plugin" | awk '{ print $3 }' | sed 's/@.*//' | sort -u)
if [[ $defined != "$expected" ]]; then
    echo "FAIL: exported symbols differ from the expected list" >&2
    diff <(echo "$expected") <(echo "$defined") >&2 || true
    fail=1
fi

# Undefined, non-weak, without a version (GLIBC_*, GLIBCXX_*, ...): the host must provide them.
unversioned=$(nm -D --undefined-only "$plugin" | awk '$1 == "U" { print $2 }' | grep -v '@' || true)
foreign=$(grep -Ev '^(spank|slurm)_' <<<"$unversioned" | grep -v '^$' || true)
if [[ -n $foreign ]]; then
    echo "FAIL: needs symbols that are not Slurm's SPANK API:" >&2
    echo "$foreign" >&2
    fail=1
fi

needed=$(readelf -d "$plugin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort)
unexpected=$(grep -Ev '^(libc\.so|libm\.so|libstdc\+\+\.so|libgcc_s\.so)' <<<"$needed" || true)
if [[ -n $unexpected ]]; then
    echo "FAIL: links unexpected libraries:" >&2
    echo "$unexpected" >&2
    fail=1
fi

if ((fail == 0)); then
    echo "exports: $(tr '\n' ' ' <<<"$defined")"
    echo "needs from the host: $(tr '\n' ' ' <<<"$unversioned")"
    echo "libraries: $(tr '\n' ' ' <<<"$needed")"
fi
exit "$fail"
