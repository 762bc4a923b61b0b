# shellcheck shell=bash
# Sanitizer reports of a sanitizer build (cmake -DACCEL_SANITIZE=ON; see cmake/sanitize.cmake).
# Such a build has <build>/sanitizer/, and each of its programs reads the options files there
# when they exist. While a sandbox of that build runs, those files send every report of its
# programs to <sandbox>/log/sanitizer/report.<program>.<pid>: the daemons, the Prolog and
# Epilog (slurmd gives them an environment of its own), surrogate steps (started with a
# minimal environment, as the job's user) and accelctl run by the tests. `down` fails while
# any report is there, so a report fails the run that caused it instead of resting in a log.
# gcc's UndefinedBehaviorSanitizer has a runtime of its own that writes to stderr whatever
# log_path says, so `down` also looks for its "runtime error:" lines in the daemons' output.
# Sourced by scripts/slurm-sandbox, never executed.

sanitizer_build() { [[ -d $BUILD_DIR/sanitizer ]]; }

# sanitizer_up FRESH: writes the options files; on a fresh start (FRESH=yes) also empties the
# report directory and notes where the daemons' output ends, so only this run's lines count.
sanitizer_up() {
    sanitizer_build || return 0
    local dir=$SB_LOG/sanitizer out f
    if [[ $1 == yes ]]; then
        rm -rf "$dir"
        : >"$SB_STATE/sanitizer-offsets"
        for out in "$SB_LOG"/*.out; do
            [[ -e $out ]] && printf '%s %s\n' "$(stat -c %s "$out")" "$out" >>"$SB_STATE/sanitizer-offsets"
        done
    fi
    mkdir -p "$dir"
    # Surrogate steps run as the job's user and must be able to write their report.
    chmod 1777 "$dir"
    local common="log_path=$dir/report:log_exe_name=1"
    local supp=$REPO_DIR/tests/fuzz/lsan.supp
    for f in asan lsan ubsan; do
        case $f in
        asan) echo "$common:detect_leaks=1" ;;
        lsan) echo "$common:suppressions=$supp:print_suppressions=0" ;;
        ubsan) echo "$common:print_stacktrace=1:halt_on_error=1" ;;
        esac >"$BUILD_DIR/sanitizer/$f.options.tmp"
        chmod 644 "$BUILD_DIR/sanitizer/$f.options.tmp"
        mv -f "$BUILD_DIR/sanitizer/$f.options.tmp" "$BUILD_DIR/sanitizer/$f.options"
    done
    say "sanitizer reports of this build go to $dir"
}

# Once every daemon is stopped: removes the options files and fails, showing them, when any
# program of this run left a report.
sanitizer_down() {
    sanitizer_build || return 0
    rm -f "$BUILD_DIR"/sanitizer/{asan,lsan,ubsan}.options
    local dir=$SB_LOG/sanitizer report out size n=0
    for report in "$dir"/report.*; do
        [[ -e $report ]] || continue
        n=$((n + 1))
        echo "--- $report" >&2
        head -n 40 "$report" >&2
    done
    for out in "$SB_LOG"/*.out; do
        [[ -e $out ]] || continue
        size=$(awk -v f="$out" '$2 == f { print $1 }' "$SB_STATE/sanitizer-offsets" 2>/dev/null)
        if tail -c +"$((${size:-0} + 1))" "$out" | grep -q 'runtime error:'; then
            n=$((n + 1))
            echo "--- UndefinedBehaviorSanitizer in $out" >&2
            tail -c +"$((${size:-0} + 1))" "$out" | grep -A 12 'runtime error:' | head -n 40 >&2
        fi
    done
    ((n == 0)) || die "$n sanitizer reports from programs of $BUILD_DIR (above; kept in $dir)"
    say "no sanitizer reports"
}
