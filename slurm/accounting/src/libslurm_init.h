#pragma once
// libslurm's process-wide start (its config, the auth plugin), made once for
// every adapter of this folder, whichever thread comes first.
#include <string>

namespace accel::slurm {

// slurm_init with `slurm_conf` (empty: Slurm's default); later calls do
// nothing, whatever path they give.
void initLibslurm(const std::string& slurm_conf);

}  // namespace accel::slurm
