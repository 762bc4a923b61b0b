#!/bin/sh
# Baseline epilog: remove what baseline_prolog.sh made.
set -e
rm -rf "${BASELINE_ROOT:?}/jobs/$SLURM_JOB_ID"
