#!/bin/sh
# The naive prolog accel-agent replaces, as a baseline for bench/hook_bench:
# discover the node with lstopo, then make the job's directory and a file in
# it for the job's user. Run as root with SLURM_JOB_ID and SLURM_JOB_UID set.
set -e
root=${BASELINE_ROOT:?}
lstopo --of xml > "$root/topology.$SLURM_JOB_ID.xml"
mkdir -p "$root/jobs/$SLURM_JOB_ID"
printf 'job=%s\n' "$SLURM_JOB_ID" > "$root/jobs/$SLURM_JOB_ID/devices"
chown -R "$SLURM_JOB_UID" "$root/jobs/$SLURM_JOB_ID"
chmod 0700 "$root/jobs/$SLURM_JOB_ID"
rm -f "$root/topology.$SLURM_JOB_ID.xml"
