#!/usr/bin/env bash
# scripts/check-layers on small trees made here: it accepts a tree that follows its map, and
# refuses, naming file and line, an include of a header of a folder the area may not use, a
# Slurm header or ${SLURM_LIBRARY} outside slurm/, a link to a target of such a folder, a file
# in no area, and an exception nothing needs any more. With --build, on a small CMake project
# configured here: it accepts a link graph that follows the map (links brought by other links
# included), and refuses a link, or libslurm, that reaches a target through a variable, which the
# text of the CMake files does not show.
set -euo pipefail
here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
check=$here/../../scripts/check-layers
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# put FILE: writes stdin into the base tree.
put() {
    mkdir -p "$(dirname "$work/base/$1")"
    cat >"$work/base/$1"
}

put scripts/layers.map <<'EOF2'
area common -
area agent common
area agent/api common
area slurm common agent/api
root agentd agent/src/main.cpp : slurm
tests tests/unit/agent agent
allow agent/ctl slurm/spank   # reads the plugin's option parser
EOF2
put common/include/accel/common/result.h <<<'#pragma once'
put common/CMakeLists.txt <<<'add_library(accel_common STATIC src/result.cpp)'
put agent/api/include/accel/agent/presence.h <<<'#include "accel/common/result.h"'
put agent/include/accel/agent/agentd.h <<<'#include "accel/agent/presence.h"'
put agent/src/main.cpp <<'EOF2'
#include "accel/agent/agentd.h"
#include "accel/slurm/jobs.h"
EOF2
put agent/ctl/hook.cpp <<<'#include "accel/spank/job_env.h"'
put agent/CMakeLists.txt <<'EOF2'
add_library(accel_agent STATIC src/daemon.cpp)
target_link_libraries(accel_agent
  PUBLIC accel_common)  # a comment: accel_slurm_jobs
add_executable(agentd src/main.cpp)
target_link_libraries(agentd PRIVATE accel_agent accel_slurm_jobs)
EOF2
put agent/ctl/CMakeLists.txt <<'EOF2'
add_library(accel_ctl STATIC hook.cpp)
target_link_libraries(accel_ctl PRIVATE accel_spank)
EOF2
put slurm/include/accel/slurm/jobs.h <<<'#include "accel/agent/presence.h"'
put slurm/src/jobs.cpp <<'EOF2'
#include <slurm/slurm.h>
#include "accel/slurm/jobs.h"
EOF2
put slurm/spank/include/accel/spank/job_env.h <<<'#pragma once'
put slurm/CMakeLists.txt <<'EOF2'
add_library(accel_slurm_jobs STATIC src/jobs.cpp)
target_link_libraries(accel_slurm_jobs PRIVATE ${SLURM_LIBRARY} accel_common)
EOF2
put slurm/spank/CMakeLists.txt <<<'add_library(accel_spank STATIC src/job_env.cpp)'

put tests/unit/agent/agentd_test.cpp <<<'#include "accel/agent/agentd.h"'
put tests/unit/agent/CMakeLists.txt <<<'accel_unit_test(agent_test SOURCES daemon_test.cpp LIBS accel_agent LABELS tsan)'

# case NAME EXPECTED-EXIT EXPECTED-TEXT: a copy of the base tree, changed by stdin (a bash
# snippet run in the copy), checked.
case_() {
    local name=$1 want=$2 text=$3 out rc=0
    cp -r "$work/base" "$work/$name"
    (cd "$work/$name" && bash)
    out=$(python3 "$check" --root "$work/$name" 2>&1) || rc=$?
    if ((rc != want)) || ! grep -qF -- "$text" <<<"$out"; then
        printf 'check_layers_test: FAIL: %s: exit %d (wanted %d), output:\n%s\n' "$name" "$rc" "$want" "$out" >&2
        failures=$((failures + 1))
    else
        printf 'check_layers_test: ok: %s\n' "$name"
    fi
}

case_ clean 0 "includes and links follow" <<<':'
case_ upward_include 1 "common/src/result.cpp:2: includes accel/agent/agentd.h" <<'EOF2'
mkdir -p common/src && printf '#include "accel/common/result.h"\n#include "accel/agent/agentd.h"\n' >common/src/result.cpp
EOF2
case_ interface_only 1 "slurm/src/jobs.cpp:3: includes accel/agent/agentd.h (agent/include/accel/agent/agentd.h): area slurm may not use agent" <<'EOF2'
echo '#include "accel/agent/agentd.h"' >>slurm/src/jobs.cpp
EOF2
case_ slurm_header 1 "agent/src/daemon.cpp:1: includes Slurm's header slurm/slurmdb.h" <<'EOF2'
echo '#include <slurm/slurmdb.h>' >agent/src/daemon.cpp
EOF2
case_ slurm_compat 1 "tests/unit/agent/agentd_test.cpp:2: includes Slurm's header accel/slurm/slurm_compat.h" <<'EOF2'
echo '#include "accel/slurm/slurm_compat.h"' >>tests/unit/agent/agentd_test.cpp
EOF2
case_ not_a_root 1 "agent/src/daemon.cpp:1: includes accel/slurm/jobs.h" <<'EOF2'
echo '#include "accel/slurm/jobs.h"' >agent/src/daemon.cpp
EOF2
case_ library_link 1 "agent/CMakeLists.txt:6: accel_agent links accel_slurm_jobs (defined in slurm/)" <<'EOF2'
echo 'target_link_libraries(accel_agent PRIVATE accel_slurm_jobs)' >>agent/CMakeLists.txt
EOF2
case_ test_link 1 "tests/unit/agent/CMakeLists.txt:1: agent_test links accel_spank (defined in slurm/spank/)" <<'EOF2'
echo 'accel_unit_test(agent_test SOURCES daemon_test.cpp LIBS accel_agent accel_spank)' >tests/unit/agent/CMakeLists.txt
EOF2
case_ libslurm_link 1 "agent/CMakeLists.txt:6: accel_agent links \${SLURM_LIBRARY}" <<'EOF2'
printf 'target_link_libraries(accel_agent\n  PRIVATE ${SLURM_LIBRARY})\n' >>agent/CMakeLists.txt
EOF2
case_ no_area 1 "drivers/src/x.cpp:1: file in no area" <<'EOF2'
mkdir -p drivers/src && echo '#include "accel/common/result.h"' >drivers/src/x.cpp
EOF2
case_ unknown_header 1 "accel/agent/gone.h: no folder of the tree holds it" <<'EOF2'
echo '#include "accel/agent/gone.h"' >>agent/src/main.cpp
EOF2
case_ stale_exception 1 "allow agent/ctl -> slurm/spank is used by nothing any more" <<'EOF2'
rm agent/ctl/hook.cpp agent/ctl/CMakeLists.txt
EOF2
case_ no_reason 2 "an exception needs a reason" <<'EOF2'
echo 'allow agent slurm' >>scripts/layers.map
EOF2

# --- --build: the link graph of a configured CMake project ------------------------------------
# pput FILE: writes stdin into the project tree.
pput() {
    mkdir -p "$(dirname "$work/proj/$1")"
    cat >"$work/proj/$1"
}
pput scripts/layers.map <<'EOF2'
area common -
area agent common
area slurm common
root agentd agent/main.c : slurm/jobs
tests tests/unit agent
EOF2
pput CMakeLists.txt <<'EOF2'
cmake_minimum_required(VERSION 3.25)
project(x C)
set(SLURM_LIBRARY ${CMAKE_CURRENT_SOURCE_DIR}/fake/libslurm.so CACHE FILEPATH "libslurm")
function(unit_test name)
  cmake_parse_arguments(T "" "" "LIBS" ${ARGN})
  add_executable(${name} ${CMAKE_CURRENT_SOURCE_DIR}/t.c)
  target_link_libraries(${name} PRIVATE ${T_LIBS})
endfunction()
add_subdirectory(common)
add_subdirectory(agent)
add_subdirectory(slurm/jobs)
add_subdirectory(slurm/util)
add_subdirectory(tests/unit)
EOF2
for f in common/c.c agent/a.c agent/main.c slurm/jobs/s.c slurm/util/u.c tests/unit/t.c; do
    pput "$f" <<<'int main(void) { return 0; }'
done
pput common/CMakeLists.txt <<<'add_library(accel_common STATIC c.c)'
pput agent/CMakeLists.txt <<'EOF2'
add_library(accel_agent STATIC a.c)
target_link_libraries(accel_agent PUBLIC accel_common)
add_executable(agentd main.c)
target_link_libraries(agentd PRIVATE accel_agent accel_slurm_jobs)
EOF2
# agentd may link slurm/jobs, not slurm/util nor libslurm: those come through accel_slurm_jobs.
pput slurm/jobs/CMakeLists.txt <<'EOF2'
add_library(accel_slurm_jobs STATIC s.c)
target_link_libraries(accel_slurm_jobs PUBLIC accel_common accel_slurm_util PRIVATE ${SLURM_LIBRARY})
EOF2
pput slurm/util/CMakeLists.txt <<<'add_library(accel_slurm_util STATIC u.c)'
pput tests/unit/CMakeLists.txt <<<'unit_test(agent_test LIBS accel_agent)'

# bcase NAME EXPECTED-EXIT EXPECTED-TEXT: a copy of the project, changed by stdin, configured
# (without the file API's query: check-layers writes it and runs cmake itself), checked with
# --build; the text check alone must pass on it.
bcase() {
    local name=$1 want=$2 text=$3 out rc=0 plain prc=0
    cp -r "$work/proj" "$work/$name"
    (cd "$work/$name" && bash)
    if ! out=$(cmake -S "$work/$name" -B "$work/$name-build" -G Ninja 2>&1); then
        printf 'check_layers_test: FAIL: %s: cmake failed:\n%s\n' "$name" "$out" >&2
        failures=$((failures + 1))
        return
    fi
    plain=$(python3 "$check" --root "$work/$name" 2>&1) || prc=$?
    out=$(python3 "$check" --root "$work/$name" --build "$work/$name-build" 2>&1) || rc=$?
    if ((prc != 0)) || ((rc != want)) || ! grep -qF -- "$text" <<<"$out" ||
        ! grep -qF "running cmake" <<<"$out"; then
        printf 'check_layers_test: FAIL: %s: exit %d (wanted %d), output:\n%s\ntext check alone: exit %d:\n%s\n' \
            "$name" "$rc" "$want" "$out" "$prc" "$plain" >&2
        failures=$((failures + 1))
    else
        printf 'check_layers_test: ok: %s\n' "$name"
    fi
}

bcase build_clean 0 "includes and links (and the link graph of $work/build_clean-build) follow" <<<':'
bcase build_variable_link 1 "common/CMakeLists.txt: target accel_common_more links accel_agent (defined in agent/, linked at common/CMakeLists.txt:4): area common may not use agent" <<'EOF2'
printf 'set(up accel_agent)\nadd_library(accel_common_more STATIC c.c)\ntarget_link_libraries(accel_common_more PRIVATE ${up})\n' >>common/CMakeLists.txt
EOF2
bcase build_variable_libslurm 1 "tests/unit/CMakeLists.txt: target agent_slurm_test links $work/build_variable_libslurm/fake/libslurm.so (libslurm; itself or through a static library): area tests/unit may not use libslurm" <<'EOF2'
printf 'set(extra ${SLURM_LIBRARY})\nunit_test(agent_slurm_test LIBS accel_agent ${extra})\n' >>tests/unit/CMakeLists.txt
EOF2

# The reply, once there, is read again without running cmake; a build of another tree is refused.
rc=0
out=$(python3 "$check" --root "$work/build_clean" --build "$work/build_clean-build" 2>&1) || rc=$?
if ((rc != 0)) || grep -qF "running cmake" <<<"$out"; then
    printf 'check_layers_test: FAIL: second run: exit %d, output:\n%s\n' "$rc" "$out" >&2
    failures=$((failures + 1))
else
    echo 'check_layers_test: ok: build_reply_kept'
fi
rc=0
out=$(python3 "$check" --root "$work/base" --build "$work/build_clean-build" 2>&1) || rc=$?
if ((rc != 2)) || ! grep -qF "is a build of $work/build_clean, not of $work/base" <<<"$out"; then
    printf 'check_layers_test: FAIL: other tree: exit %d, output:\n%s\n' "$rc" "$out" >&2
    failures=$((failures + 1))
else
    echo 'check_layers_test: ok: build_of_another_tree'
fi

if ((failures > 0)); then
    echo "check_layers_test: $failures cases failed" >&2
    exit 1
fi
echo "check_layers_test: all cases passed"
