#!/usr/bin/env bash
# Every folder that holds code says in a README.md what it holds, what it depends on and where
# its tests are, so that a newcomer never has to guess from the CMake files.
#
#   folder_readmes.sh [ROOT]     checks the tree at ROOT (default: this repository)
#   folder_readmes.sh --self-test  runs the check on small trees made here and fails unless it
#                                accepts the good ones and refuses each bad one
#
# A folder holds code when it has a CMakeLists.txt or a C or C++ source or header. The files
# are those git knows (tracked, or new and not ignored); outside a git checkout (the self-test's
# trees), every file. Folders under build*/ and .git/ are never looked at.
#
# Such a folder needs a README.md with a line "## Depends on" and a line "## Tests", unless
#  - a part of its path below some folder F is include/, src/, plugin/ or tools/ and F has a
#    README.md (F's README covers its sources), or
#  - it matches an entry of COVERED_BY_PARENT below: then its parent's README.md must name it
#    as `NAME/` (the parent's own README is checked as any other).
# Exit 0 when every folder passes, 1 naming each offender otherwise, 2 on a usage error.
set -euo pipefail
here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)

# Folders described in their parent's README instead of one of their own, each with why.
# Entries are shell patterns on the folder's path from the root.
COVERED_BY_PARENT=(
    # One GoogleTest program per library; tests/unit/README.md has a row per folder naming
    # what it tests, what it links and the program to run. A README in each would repeat it.
    'tests/unit/*'
    # Built by tests/hw_mock's CMake; the fakes' contracts are the "fakes/" section of
    # tests/hw_mock/README.md, next to the captured data they are used with.
    'tests/hw_mock/fakes'
)

is_code_file() {
    case ${1##*/} in
        CMakeLists.txt | *.c | *.cc | *.cpp | *.cxx | *.h | *.hh | *.hpp | *.hxx) return 0 ;;
    esac
    return 1
}

# list_files ROOT: paths relative to ROOT, one a line.
list_files() {
    local root=$1 top
    top=$(git -C "$root" rev-parse --show-toplevel 2>/dev/null || true)
    if [[ -n $top && $(cd -- "$top" && pwd -P) == $(cd -- "$root" && pwd -P) ]]; then
        git -C "$root" ls-files -co --exclude-standard
    else
        (cd -- "$root" && find . -type f | sed 's|^\./||')
    fi
}

# code_folders ROOT: every folder of ROOT holding code, "." for ROOT itself, sorted.
code_folders() {
    local root=$1 f
    list_files "$root" | while IFS= read -r f; do
        case $f in
            build*/* | .git/* | */.git/*) continue ;;
        esac
        [[ -f $root/$f ]] || continue # deleted but still in the index
        is_code_file "$f" || continue
        if [[ $f == */* ]]; then printf '%s\n' "${f%/*}"; else printf '.\n'; fi
    done | sort -u
}

# covered_by_ancestor ROOT DIR: DIR is at or below an include/, src/, plugin/ or tools/ folder
# whose parent has a README.md.
covered_by_ancestor() {
    local root=$1 dir=$2 prefix=. part
    local -a parts
    IFS=/ read -ra parts <<<"$dir"
    for part in "${parts[@]}"; do
        case $part in
            include | src | plugin | tools)
                [[ -f $root/$prefix/README.md ]] && return 0
                ;;
        esac
        if [[ $prefix == . ]]; then prefix=$part; else prefix=$prefix/$part; fi
    done
    return 1
}

# check ROOT: prints one line per offender on stderr; returns 1 when there is any.
check() {
    local root=$1 dir readme parent name pattern offenders=0 checked=0
    [[ -d $root ]] || {
        printf 'folder_readmes: %s is not a directory\n' "$root" >&2
        return 2
    }
    local -a dirs
    mapfile -t dirs < <(code_folders "$root")
    if ((${#dirs[@]} == 0)); then
        printf 'folder_readmes: no folder with code under %s; wrong root?\n' "$root" >&2
        return 1
    fi
    for dir in "${dirs[@]}"; do
        covered_by_ancestor "$root" "$dir" && continue
        for pattern in "${COVERED_BY_PARENT[@]}"; do
            # shellcheck disable=SC2053 # the entry is a pattern on purpose
            [[ $dir == $pattern ]] || continue
            parent=${dir%/*} name=${dir##*/}
            if ! grep -qF -- "\`$name/\`" "$root/$parent/README.md" 2>/dev/null; then
                printf "folder_readmes: %s/: has no README.md, and %s/README.md does not name \`%s/\`\n" \
                    "$dir" "$parent" "$name" >&2
                offenders=$((offenders + 1))
            fi
            continue 2
        done
        checked=$((checked + 1))
        readme=$root/$dir/README.md
        [[ $dir == . ]] && readme=$root/README.md
        if [[ ! -f $readme ]]; then
            printf 'folder_readmes: %s/: no README.md\n' "$dir" >&2
            offenders=$((offenders + 1))
            continue
        fi
        if ! grep -qE '^## Depends on( |$)' "$readme"; then
            printf 'folder_readmes: %s/README.md: no "## Depends on" section\n' "$dir" >&2
            offenders=$((offenders + 1))
        fi
        if ! grep -qE '^## Tests( |$)' "$readme"; then
            printf 'folder_readmes: %s/README.md: no "## Tests" section\n' "$dir" >&2
            offenders=$((offenders + 1))
        fi
    done
    if ((offenders > 0)); then
        printf 'folder_readmes: %d problem(s) in %d folders with code\n' "$offenders" "${#dirs[@]}" >&2
        return 1
    fi
    printf 'folder_readmes: ok: %d READMEs for %d folders with code\n' "$checked" "${#dirs[@]}"
}

# --- self-test --------------------------------------------------------------------------------
# tree NAME FILE...: a tree of empty files (a README.md gets both headings unless the list says
# "README.md:nodeps" or "README.md:notests").
tree() {
    local base=$work/$1 f path
    shift
    for f in "$@"; do
        path=${f%%:*}
        mkdir -p "$base/$(dirname "$path")"
        case $f in
            *:nodeps) printf '# x\n## Tests\n' >"$base/$path" ;;
            *:notests) printf '# x\n## Depends on\n' >"$base/$path" ;;
            */README.md | README.md) printf '# x\n## Depends on\n## Tests\n' >"$base/$path" ;;
            *) : >"$base/$path" ;;
        esac
    done
}

# expect NAME WANT-EXIT TEXT: the check of tree NAME exits WANT-EXIT and its output holds TEXT.
expect() {
    local name=$1 want=$2 text=$3 out rc=0
    out=$(check "$work/$name" 2>&1) || rc=$?
    if ((rc != want)) || ! grep -qF -- "$text" <<<"$out"; then
        printf 'folder_readmes self-test: FAIL: %s: exit %d (wanted %d), output:\n%s\n' \
            "$name" "$rc" "$want" "$out" >&2
        failures=$((failures + 1))
    else
        printf 'folder_readmes self-test: ok: %s\n' "$name"
    fi
}

self_test() {
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    failures=0
    local good=(README.md CMakeLists.txt lib/README.md lib/CMakeLists.txt lib/src/a.cpp
        lib/include/x/a.h lib/tools/gen/main.cpp lib/tools/gen/CMakeLists.txt build-x/gen/b.cpp
        docs/notes.md tests/unit/README.md tests/unit/lib/CMakeLists.txt tests/unit/lib/a_test.cpp)
    tree good "${good[@]}"
    printf 'the %s tests\n' "\`lib/\`" >>"$work/good/tests/unit/README.md"
    expect good 0 'ok: 2 READMEs for 6 folders'

    tree missing "${good[@]}" app/main.c
    printf 'the %s tests\n' "\`lib/\`" >>"$work/missing/tests/unit/README.md"
    expect missing 1 'app/: no README.md'
    tree header_only "${good[@]}" support/util.hpp
    printf 'the %s tests\n' "\`lib/\`" >>"$work/header_only/tests/unit/README.md"
    expect header_only 1 'support/: no README.md'
    tree no_deps README.md CMakeLists.txt lib/README.md:nodeps lib/CMakeLists.txt
    expect no_deps 1 'lib/README.md: no "## Depends on" section'
    tree no_tests README.md:notests CMakeLists.txt
    expect no_tests 1 './README.md: no "## Tests" section'
    # src/ is covered only by its parent's README: without one, both are offenders.
    tree src_orphan README.md CMakeLists.txt lib/src/a.cpp lib/CMakeLists.txt
    expect src_orphan 1 'lib/src/: no README.md'
    # A folder of COVERED_BY_PARENT that its parent does not name.
    tree unnamed "${good[@]}" tests/unit/other/CMakeLists.txt
    printf 'the %s tests\n' "\`lib/\`" >>"$work/unnamed/tests/unit/README.md"
    expect unnamed 1 "tests/unit/README.md does not name \`other/\`"
    tree empty docs/notes.md
    expect empty 1 'no folder with code'

    if ((failures > 0)); then
        printf 'folder_readmes self-test: %d case(s) failed\n' "$failures" >&2
        return 1
    fi
}

case ${1:-} in
    --self-test) self_test ;;
    -h | --help) sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' ;;
    -*)
        printf 'usage: folder_readmes.sh [ROOT] | --self-test\n' >&2
        exit 2
        ;;
    *) check "${1:-$here/../..}" ;;
esac
