# shellcheck shell=bash
# A long step's progress in one line, for scripts/bootstrap, scripts/build and scripts/demo.
# On a terminal the line is rewritten in place, with the seconds since the step began, every
# second even while the step says nothing. Anywhere else (a pipe, a log, CI) the line is
# printed at most every PROGRESS_EVERY seconds (default 5), and at least that often while the
# step goes on: a log shows the step moving, without a line for each file compiled.
#
#   progress_begin TEXT    the step starts; TEXT is what the line says until progress_show
#   progress_show TEXT     the step's latest state
#   progress_tick          shows the line again (the seconds go on)
#   progress_end           clears the line on a terminal; prints nothing elsewhere
#   progress_filter TEXT   all four over a command's output on stdin (below)

PROGRESS_EVERY=${PROGRESS_EVERY:-5}

progress_begin() {
    PROGRESS_T0=$SECONDS
    PROGRESS_LAST=$SECONDS
    PROGRESS_TEXT=$1
    PROGRESS_TTY=no
    PROGRESS_COLS=80
    if [[ -t 1 ]]; then
        PROGRESS_TTY=yes
        local size
        size=$(stty size </dev/tty 2>/dev/null) || size=''
        [[ ${size#* } =~ ^[0-9]+$ ]] && ((${size#* } > 20)) && PROGRESS_COLS=${size#* }
    fi
    progress_tick
}

progress_show() {
    PROGRESS_TEXT=$1
    progress_tick
}

progress_tick() {
    local line="   $PROGRESS_TEXT ($((SECONDS - PROGRESS_T0)) s)"
    if [[ $PROGRESS_TTY == yes ]]; then
        printf '\r\033[K%s' "${line:0:PROGRESS_COLS-1}"
    elif ((SECONDS - PROGRESS_LAST >= PROGRESS_EVERY)); then
        printf '%s\n' "$line"
        PROGRESS_LAST=$SECONDS
    fi
}

progress_end() {
    if [[ $PROGRESS_TTY == yes ]]; then printf '\r\033[K'; fi
}

# progress_line LINE: sets PROGRESS_TEXT to what one line of a step's output says:
#   ninja's "[n/N] Building CXX object dir/file.cpp.o"  ->  "[n/N] building file.cpp.o"
#   apt's status (APT::Status-Fd) "dlstatus:ID:PERCENT:Retrieving file 2 of 9" ->
#     "downloading PERCENT%: retrieving file 2 of 9", "pmstatus:PACKAGE:PERCENT:MESSAGE" ->
#     "installing PERCENT%: MESSAGE" (the first letter of MESSAGE in lower case)
#   any other line: the line itself (blank lines leave the text as it was).
progress_line() {
    local line=$1 re_ninja='^\[([0-9]+/[0-9]+)\] ([A-Za-z-]+)[^/]* ([^ ]+)$'
    local re_apt='^(dlstatus|pmstatus):.*:([0-9]+)(\.[0-9]*)?:(.*)$'
    if [[ $line =~ $re_ninja ]]; then
        PROGRESS_TEXT="[${BASH_REMATCH[1]}] ${BASH_REMATCH[2],,} ${BASH_REMATCH[3]##*/}"
    elif [[ $line =~ $re_apt ]]; then
        local what=installing
        [[ ${BASH_REMATCH[1]} == dlstatus ]] && what=downloading
        PROGRESS_TEXT="$what ${BASH_REMATCH[2]}%: ${BASH_REMATCH[4],}"
    elif [[ $line == *[![:space:]]* ]]; then
        PROGRESS_TEXT=$line
    fi
}

# progress_filter TEXT: reads a command's output on stdin until it ends and shows its latest
# line as the progress (progress_line), starting with TEXT.
progress_filter() {
    local line partial='' status
    progress_begin "$1"
    while :; do
        IFS= read -r -t 1 line && status=0 || status=$?
        if ((status > 128)); then # a second without a whole line: keep what came
            partial+=$line
            progress_tick
            continue
        fi
        line=$partial$line
        partial=''
        if ((status != 0)); then # the end of the output
            [[ -n $line ]] && progress_line "$line"
            break
        fi
        progress_line "$line"
        progress_tick
    done
    progress_end
}
