#!/usr/bin/env bash
# faults_clock_jump.sh's appliance limit, with the agent's wall clock jumping forward by an
# hour while the appliance job is still queued (0.4 s after the launch, 1 s of queue): the
# limit must still act after about 3 s of appliance time. It acts after about 0.9 s, because
# the deadline is the appliance's own start time plus the budget, armed on the node's wall
# clock: any skew between the two clocks moves it (see tests-faults.cmake).
FAULT_CLOCK_JUMP_AT=0.4
FAULT_CLOCK_IPU_JOB=no
# shellcheck source=tests/integration/faults_clock_jump.sh
source "$(dirname -- "$0")/faults_clock_jump.sh"
