#!/usr/bin/env bash
# Every command in the docs is run by a test, so the docs cannot rot.
#
# The docs (README.md, docs/*.md) mark each fenced block (docs/README.md has the rules):
#   ```sh       commands, one a line, run as root         ```console  a transcript: "$ cmd" runs as
#   ```text     output, diagrams, job scripts: never run              an ordinary user, "# cmd" as root
#   ```conf     configuration lines: never run
# A fence without one of these words, or a command-like line in a text block (other than a
# script starting with #!), is an error.
#
#   doc_commands.sh check   (no Slurm needed) each command is either run by 'run' or listed in
#                           not-run-here.txt with a registered test that covers it; every entry
#                           there is still in the docs; prints the commands and how each is covered
#   doc_commands.sh run     runs each command that is not listed, against the Slurm sandbox, in a
#                           private mount namespace where /etc/slurm is a copy of the sandbox's
#                           configuration and /etc is writable; the build's binaries come first in
#                           PATH. Each must exit 0; a transcript that shows "error:" lines must
#                           fail and print exactly those lines.
set -euo pipefail

REPO=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
# The tree whose README.md and docs/*.md are read (checker_test.sh points it at fixtures).
DOCS_ROOT=${ACCEL_DOCS_ROOT:-$REPO}
ALLOW=${ACCEL_DOCS_ALLOW:-$REPO/tests/docs/not-run-here.txt}
# The job ids the docs use as examples; 'run' gives each the id of a live job of the test user.
JOB_PLACEHOLDERS='42|4242|65|ID|JOBID'
# Programs whose appearance at the start of a line in a text block means a command hides there.
COMMAND_WORDS='accelctl|accel-agentd|accel-aggregatord|accel-keygen|accel-prolog|accel-epilog|sbatch|srun|salloc|sacct|scontrol|scancel|squeue|sinfo|systemctl|journalctl|cmake|apt|apt-get|dpkg|sudo|scripts/'

die() {
    printf 'doc_commands: FAIL: %s\n' "$*" >&2
    exit 1
}

doc_files() {
    local f
    printf '%s\n' "$DOCS_ROOT/README.md"
    for f in "$DOCS_ROOT"/docs/*.md; do [[ -e $f ]] && printf '%s\n' "$f"; done
}

# Prints one record per line: FILE:LINE <TAB> KIND <TAB> TEXT, where KIND is root (a sh line or
# "# cmd"), user ("$ cmd"), expect (a transcript's output line, after its command), or an
# error: bad-fence, text-command, open-fence.
extract() {
    local f
    while IFS= read -r f; do
        awk -v file="${f#"$DOCS_ROOT"/}" -v words="$COMMAND_WORDS" '
            function emit(kind, text) { printf "%s:%d\t%s\t%s\n", file, start, kind, text }
            /^```/ {
                if (!infence) {
                    infence = 1; lang = substr($0, 4); start = NR; first = NR + 1; script = 0
                    if (lang !~ /^(sh|console|text|conf)$/) emit("bad-fence", "fence \"" $0 "\"")
                } else { infence = 0; lang = "" }
                next
            }
            !infence { next }
            {
                line = $0
                if (pending != "") { line = pending " " line; pending = "" } else start = NR
                if (line ~ /\\$/) { pending = substr(line, 1, length(line) - 1); next }
            }
            lang == "sh" {
                if (line ~ /^[[:space:]]*(#|$)/) next
                sub(/[[:space:]]+#[[:space:]].*$/, "", line)
                sub(/[[:space:]]+$/, "", line)
                emit("root", line)
            }
            lang == "console" {
                if (line ~ /^\$ /) emit("user", substr(line, 3))
                else if (line ~ /^# /) emit("root", substr(line, 3))
                else if (line != "") emit("expect", line)
            }
            lang == "text" && NR == first && line ~ /^#!/ { script = 1 }
            lang == "text" && !script && line ~ ("^(\\$ |# )?(" words ")([ ]|$)") { emit("text-command", line) }
            END { if (infence) { start = NR; emit("open-fence", "a fence is never closed") } }
        ' "$f"
    done < <(doc_files)
}

# The allow-list without comments: COMMAND | FILE | EVIDENCE, fields trimmed.
allow_entries() {
    sed -e 's/[[:space:]]*#.*$//' -e '/^[[:space:]]*$/d' "$ALLOW" |
        awk -F'|' '{ for (i = 1; i <= NF; i++) gsub(/^[[:space:]]+|[[:space:]]+$/, "", $i); print $1 "\t" $2 "\t" $3 }'
}

allowed() { allow_entries | cut -f1 | grep -qxF -- "$1"; }

# A covering test must exist, contain its evidence and be registered where tests run.
check_entry() {
    local cmd=$1 file=$2 evidence=$3 base
    [[ -n $cmd && -n $file && -n $evidence ]] || die "not-run-here.txt: '$cmd': needs COMMAND | TEST FILE | EVIDENCE"
    if [[ $file == UNTESTED ]]; then
        printf 'doc_commands: WARNING: no test covers "%s" (%s)\n' "$cmd" "$evidence"
        return 0
    fi
    [[ -f $REPO/$file ]] || die "not-run-here.txt: '$cmd': $file does not exist"
    grep -qF -- "$evidence" "$REPO/$file" || die "not-run-here.txt: '$cmd': $file does not contain '$evidence'"
    base=$(basename -- "$file")
    grep -rqF --include=CMakeLists.txt --include='*.cmake' -- "$base" "$REPO/tests" "$REPO/CMakeLists.txt" ||
        grep -qF -- "$base" "$REPO/scripts/test" "$REPO/.ci/run" ||
        die "not-run-here.txt: '$cmd': $file is not registered as a test (no CMake file or scripts/test names it)"
}

cmd_check() {
    local records where kind text cmd file evidence n_run=0 n_elsewhere=0 problems=0
    records=$(extract)
    while IFS=$'\t' read -r where kind text; do
        case $kind in
        bad-fence | open-fence)
            printf '%s: %s: mark the block sh, console, text or conf (see docs/README.md)\n' "$where" "$text" >&2
            problems=$((problems + 1))
            ;;
        text-command)
            printf '%s: a command in a text block (%s): put it in a sh or console block\n' "$where" "$text" >&2
            problems=$((problems + 1))
            ;;
        root | user)
            if allowed "$text"; then
                printf 'elsewhere  %-9s %s\n' "$where" "$text"
                n_elsewhere=$((n_elsewhere + 1))
            else
                printf 'run (%s) %-9s %s\n' "$kind" "$where" "$text"
                n_run=$((n_run + 1))
            fi
            ;;
        esac
    done <<<"$records"
    while IFS=$'\t' read -r cmd file evidence; do
        check_entry "$cmd" "$file" "$evidence"
        grep -qF -- "$(printf '\t')$cmd" <<<"$(grep -P '\t(root|user)\t' <<<"$records" | cut -f2-)" ||
            die "not-run-here.txt: '$cmd' is in no doc any more: remove it from the list"
    done < <(allow_entries)
    ((problems == 0)) || die "$problems problem(s) in the docs' blocks"
    ((n_run + n_elsewhere > 0)) || die "no commands found in the docs"
    printf 'doc_commands: %d commands run by the docs test, %d covered by the tests named in %s\n' \
        "$n_run" "$n_elsewhere" "${ALLOW#"$REPO"/}"
}

# --- run ------------------------------------------------------------------------------------

BIN=${ACCEL_BUILD_DIR:-$REPO/build}/bin
WORK=
SUBMITTED=()

cleanup() {
    local j
    for j in "${SUBMITTED[@]}"; do scancel "$j" 2>/dev/null || true; done
    [[ -n $WORK ]] || return 0
    if mountpoint -q "$WORK/ovl"; then
        umount /etc || true
        umount "$WORK/ovl" || true
    fi
    rm -rf -- "$WORK"
}

# The stand-ins for the users' programs the examples name (they succeed at once).
make_user_dir() {
    local p
    mkdir -p "$WORK/user" "$WORK/root"
    for p in train.sh run.sh job.sh ipu_program ipu_program.sh; do
        printf '#!/bin/bash\nexit 0\n' >"$WORK/user/$p"
        chmod 755 "$WORK/user/$p"
    done
    chown -R "$TEST_USER" "$WORK/user"
}

# Starts a job of the test user that runs while the commands run; prints its id.
start_live_job() {
    local id state='' deadline=$((SECONDS + 60))
    id=$(as_test_user sbatch --parsable -J docs-live -D "$WORK/user" -o /dev/null --wrap 'sleep 600') ||
        fail "could not submit the live job"
    id=${id%%;*}
    SUBMITTED+=("$id")
    while ((SECONDS < deadline)); do
        state=$(squeue -h -j "$id" -o %T 2>/dev/null || true)
        [[ $state == RUNNING ]] && break
        sleep 0.2
    done
    [[ $state == RUNNING ]] || fail "the live job $id is not running after 60 s (state '$state')"
    printf '%s\n' "$id"
}

# end_job ID: cancels the job and waits until Slurm no longer lists it.
end_job() {
    local deadline=$((SECONDS + 60))
    scancel "$1" || fail "scancel $1 failed"
    while [[ -n $(squeue -h -j "$1" -o %i 2>/dev/null) ]]; do
        ((SECONDS < deadline)) || fail "job $1 is still listed 60 s after scancel"
        sleep 0.2
    done
    log "the live job $1 ended (the next command needs the node's CPUs)"
}

# The namespace's /etc: a writable layer over the real one, with the sandbox's configuration as
# /etc/slurm, and vipu.conf at its defaults on the submit side (the docs show the defaults).
private_etc() {
    local sb_etc=$1
    mkdir -p "$WORK/ovl"
    mount -t tmpfs tmpfs "$WORK/ovl"
    mkdir "$WORK/ovl/upper" "$WORK/ovl/work"
    mount -t overlay overlay -o "lowerdir=/etc,upperdir=$WORK/ovl/upper,workdir=$WORK/ovl/work" /etc
    rm -rf /etc/slurm
    cp -a "$sb_etc" /etc/slurm
    sed -i '/^MaxIpusPerJob=/d' /etc/slurm/vipu.conf
}

substitute() { sed -E "s/(^|[ =])($JOB_PLACEHOLDERS)( |$)/\\1$2\\3/g; s/(^|[ =])($JOB_PLACEHOLDERS)( |$)/\\1$2\\3/g" <<<"$1"; }

# run_one KIND COMMAND OUTFILE: the command's exit status.
run_one() {
    local kind=$1 cmd=$2 out=$3 rc=0
    if [[ $kind == user ]]; then
        # shellcheck disable=SC2016 # expanded by the inner shell
        runuser -u "$TEST_USER" -- env -u SLURM_CONF PATH="$BIN:/usr/sbin:/usr/bin:/sbin:/bin" HOME="$WORK/user" \
            bash -c 'cd "$1" && timeout 60 bash -c "$2"' _ "$WORK/user" "$cmd" </dev/null >"$out" 2>&1 || rc=$?
    else
        (cd "$WORK/root" && env -u SLURM_CONF PATH="$BIN:$PATH" timeout 60 bash -c "$cmd") </dev/null >"$out" 2>&1 ||
            rc=$?
    fi
    return "$rc"
}

# check_one WHERE KIND COMMAND EXPECTED-LINES: runs it and judges it; returns non-zero on failure.
check_one() {
    local where=$1 kind=$2 cmd=$3 expect=$4 out rc=0 line want_fail=0 ok=1 id
    out=$WORK/out
    run_one "$kind" "$cmd" "$out" || rc=$?
    while IFS= read -r id; do SUBMITTED+=("$id"); done < <(grep -oE '(Submitted batch job|Granted job allocation) [0-9]+' "$out" | grep -oE '[0-9]+$')
    grep -q 'error:' <<<"$expect" && want_fail=1
    if ((want_fail)); then
        ((rc != 0)) || { log "FAIL $where: '$cmd' succeeded; the doc shows it failing"; ok=0; }
        while IFS= read -r line; do
            [[ $line == *error:* ]] || continue
            grep -qxF -- "$line" "$out" || { log "FAIL $where: '$cmd' did not print: $line"; ok=0; }
        done <<<"$expect"
    elif ((rc != 0)); then
        log "FAIL $where: '$cmd' exited $rc"
        ok=0
    fi
    if ((ok)); then
        log "ok: $where ($kind) $cmd"
    else
        sed 's/^/    | /' "$out" >&2
    fi
    ((ok))
}

cmd_run_inside() {
    # shellcheck source=tests/integration/lib.sh
    source "$REPO/tests/integration/lib.sh"
    require_root
    require_sandbox
    ensure_test_user
    local sb_etc job live records where kind text expect='' failures=0 total=0
    local -a cmds=()
    sb_etc=$(dirname -- "$SLURM_CONF")
    [[ -x $BIN/accelctl && -x $BIN/accel-aggregatord && -x $BIN/accel-keygen ]] ||
        fail "the build's binaries are not in $BIN (set ACCEL_BUILD_DIR)"
    WORK=$(mktemp -d /tmp/accel-docs.XXXXXX)
    chmod 755 "$WORK"
    trap cleanup EXIT
    make_user_dir
    job=$(start_live_job)
    live=$job
    SUBMITTED+=("$job")
    log "the docs' job ids stand for job $job"
    private_etc "$sb_etc"
    records=$(extract)
    # Gather each command with the transcript lines that follow it.
    while IFS=$'\t' read -r where kind text; do
        case $kind in
        root | user) cmds+=("$where"$'\t'"$kind"$'\t'"$text") ;;
        expect) ((${#cmds[@]} > 0)) && cmds[-1]+=$'\n'"$text" ;;
        *) fail "$where: $text (run 'doc_commands.sh check')" ;;
        esac
    done <<<"$records"
    local entry first
    for entry in "${cmds[@]}"; do
        first=${entry%%$'\n'*}
        expect=
        [[ $entry == *$'\n'* ]] && expect=${entry#*$'\n'}
        IFS=$'\t' read -r where kind text <<<"$first"
        allowed "$text" && continue
        # This node has few CPUs: salloc and srun would wait for the live job's.
        if [[ -n $job && $text =~ ^(salloc|srun)[[:space:]] ]]; then
            end_job "$job"
            job=
        fi
        total=$((total + 1))
        check_one "$where" "$kind" "$(substitute "$text" "$live")" "$expect" || failures=$((failures + 1))
    done
    ((total > 0)) || fail "no commands were run"
    ((failures == 0)) || fail "$failures of $total documented commands did not do what the docs say"
    log "all $total documented commands did what the docs say"
}

case ${1:-} in
check) cmd_check ;;
run) exec unshare --mount --propagation private bash "$0" run-inside ;;
run-inside) cmd_run_inside ;;
*)
    printf 'usage: %s check|run\n' "$0" >&2
    exit 2
    ;;
esac
