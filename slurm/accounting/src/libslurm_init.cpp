#include "libslurm_init.h"

#include <mutex>

#include "accel/slurm/slurm_compat.h"

namespace accel::slurm {

void initLibslurm(const std::string& slurm_conf) {
  static std::once_flag once;
  std::call_once(once, [&] { slurm_init(slurm_conf.empty() ? nullptr : slurm_conf.c_str()); });
}

}  // namespace accel::slurm
