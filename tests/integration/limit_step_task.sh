#!/bin/bash
# The task of a step in the appliance-limit tests (ipu_limit, multinode_gpu_limit): 25 s of work
# in short sleeps, so that its traps run at once, noting when the warning (USR1) and SIGTERM
# reached it; SIGTERM ends it.
now() { date +%s.%N; }
trap 'echo "step warned $(now)"' USR1
trap 'echo "step term $(now)"; exit 143' TERM
for ((i = 0; i < 125; i++)); do sleep 0.2; done
echo "step finished $(now)"
