#!/bin/bash
# The task of a step in the appliance-limit tests (ipu_limit, multinode_gpu_limit): 25 s of work
# in short sleeps, so that its traps run at once, noting when the warning (USR1) and SIGTERM
# reached it; SIGTERM ends it. The notes go to DIR/step.JOBID (DIR, the first argument), not
# to the output: at the limit srun, which carries a step's output, gets SIGTERM too (as at
# Slurm's own limit) and may be gone before the task's last words.
now() { date +%s.%N; }
out=$1/step.$SLURM_JOB_ID
trap 'echo "step warned $(now)" >>"$out"' USR1
trap 'echo "step term $(now)" >>"$out"; exit 143' TERM
for ((i = 0; i < 125; i++)); do sleep 0.2; done
echo "step finished $(now)" >>"$out"
