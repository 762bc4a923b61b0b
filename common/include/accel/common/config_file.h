#pragma once
// Finding and reading configuration files. accel.conf and vipu.conf live in
// the directory of slurm.conf, the way Slurm's plugins keep their files
// (cgroup.conf, gres.conf, and V-IPU's own vipu.conf).
#include <cstddef>
#include <string>
#include <string_view>

#include "accel/common/result.h"

namespace accel {

// Where slurm.conf is when SLURM_CONF is not set (Debian's and Slurm's default).
inline constexpr std::string_view kDefaultSlurmConf = "/etc/slurm/slurm.conf";
// Configuration files are small; anything larger is a mistake, not a config.
inline constexpr std::size_t kMaxConfigFileBytes = 16u << 20;

// Reads a whole configuration file, following symbolic links (config files
// are often links into a managed tree). Errors name the path: kNotFound when
// it does not exist, kPermissionDenied, kInvalidArgument for a directory, a
// device or FIFO, or a file over kMaxConfigFileBytes, kIo otherwise.
Result<std::string> readConfigFile(const std::string& path);

// The path of `file_name` ("accel.conf") in the directory of slurm.conf.
// `slurm_conf_env` is the value of SLURM_CONF (nullptr or empty: unset, use
// kDefaultSlurmConf). SLURM_CONF must be an absolute path to a file (not
// ending in '/'); `file_name` must be a plain name without '/'. Errors are
// kInvalidArgument and name the offending value.
Result<std::string> defaultConfigPath(const char* slurm_conf_env, std::string_view file_name);

// The path of `file_name` in the directory holding `path`: for "/a/b.conf"
// and "c.conf", "/a/c.conf"; for a bare "b.conf", just "c.conf".
std::string configPathBeside(std::string_view path, std::string_view file_name);

}  // namespace accel
