#!/usr/bin/env bash
# faults_clock_jump.sh's appliance limit, with the agent's wall clock jumping forward by an
# hour while the appliance job is still queued (0.4 s after the launch, 1 s of queue): the
# limit must still act after about 3 s of appliance time. The appliance stamps the run's start
# with its own clock, now an hour behind the agent's; the agent keeps that start within the
# window in which it saw the job begin (agent/core/src/appliance_watcher.cpp), so the skew
# costs at most one poll interval, never the hour.
FAULT_CLOCK_JUMP_AT=0.4
FAULT_CLOCK_IPU_JOB=no
# shellcheck source=tests/integration/faults_clock_jump.sh
source "$(dirname -- "$0")/faults_clock_jump.sh"
