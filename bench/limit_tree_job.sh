#!/bin/bash
# The job of the process-tree limit benchmark: this shell and N-1 children (`sleep`), N
# processes in all. limit_tree_bench runs it as a job's task; bench/run submits it to Slurm
# with --time=1 as the baseline.
#   limit_tree_job.sh N obeyed|ignored
# obeyed: every process ends at SIGTERM. ignored: every process ignores SIGTERM, so only
# SIGKILL ends the job. Either way the shell writes "term SECONDS" (CLOCK_REALTIME) to its
# standard output when SIGTERM reaches it. The children sleep 1000 s, so that a job nobody
# ends still goes by itself.
n=${1:-200} sigterm=${2:-obeyed}
[[ $n =~ ^[1-9][0-9]*$ ]] || { echo "limit_tree_job.sh: N must be a number, not '$n'" >&2; exit 2; }
case $sigterm in
    obeyed) ;;
    ignored) trap '' TERM ;;  # inherited by the children, across exec
    *) echo "limit_tree_job.sh: obeyed or ignored, not '$sigterm'" >&2; exit 2 ;;
esac
for ((i = 1; i < n; i++)); do sleep 1000 & done
if [[ $sigterm == ignored ]]; then
    trap 'echo "term $EPOCHREALTIME"' TERM
else
    trap 'echo "term $EPOCHREALTIME"; exit 0' TERM
fi
# wait returns above 128 when a trapped signal interrupts it, and 0 once no child is left.
until wait; do :; done
