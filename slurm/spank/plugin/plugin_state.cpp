#include "plugin_state.h"

#include <array>
#include <string_view>
#include <vector>

namespace accel::spank {
namespace {

// One row per option: the table sbatch --help prints, and where Slurm's
// callback stores the value. Values are checked later, all together, in
// init_post_opt: some rules involve two options.
struct OptionRow {
  const char* name;
  const char* arginfo;
  const char* usage;
  std::optional<std::string> RawOptions::*field;
};

constexpr std::array<OptionRow, 5> kOptions{{
    {"ipus", "N", "number of IPUs for the job (with -n, --ntasks: the GCDs of its IPU partition)",
     &RawOptions::ipus},
    {"num-replicas", "N", "number of model replicas; must divide --ipus",
     &RawOptions::num_replicas},
    {"appliance-time", "TIME",
     "appliance time limit (MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED)",
     &RawOptions::appliance_time},
    {"job-time-sec", "SECONDS", "appliance time limit in seconds (instead of --appliance-time)",
     &RawOptions::job_time_sec},
    {"appliance-signal", "[B:]SIG[@SECONDS]",
     "send SIG to the job's steps (B: the batch shell only) SECONDS (default 60) before the "
     "appliance time limit",
     &RawOptions::appliance_signal},
}};

// Slurm's option callback (a C function pointer): the row index travels as `val`.
int optionSeen(int val, const char* optarg, int /*remote*/) noexcept {
  try {
    if (val < 0 || static_cast<std::size_t>(val) >= kOptions.size()) return -1;
    state().raw.*(kOptions[static_cast<std::size_t>(val)].field) = optarg != nullptr ? optarg : "";
    return 0;
  } catch (...) {
    return -1;  // only bad_alloc can get here; Slurm reports the option as invalid
  }
}

}  // namespace

PluginState& state() {
  static PluginState s;
  return s;
}

bool parseArgs(int argc, char** argv) {
  std::vector<std::string_view> args;
  args.reserve(argc > 0 ? size_t(argc) : 0);
  for (int i = 0; i < argc; ++i) args.emplace_back(argv[i] != nullptr ? argv[i] : "");
  auto parsed = parsePluginArgs(args);
  if (!parsed.ok()) {
    state().args_error = parsed.error().message();
    return false;
  }
  state().args = *parsed;
  return true;
}

int registerOptions(spank_t sp) {
  for (std::size_t i = 0; i < kOptions.size(); ++i) {
    // Slurm copies the strings; the casts only satisfy its C declaration.
    spank_option opt{const_cast<char*>(kOptions[i].name),
                     const_cast<char*>(kOptions[i].arginfo),
                     const_cast<char*>(kOptions[i].usage),
                     1,
                     static_cast<int>(i),
                     optionSeen};
    spank_err_t rc = spank_option_register(sp, &opt);
    if (rc != ESPANK_SUCCESS) {
      reportError(std::string("cannot register --") + kOptions[i].name + ": " + spank_strerror(rc));
      return -1;
    }
  }
  return 0;
}

void reportError(const std::string& message) {
  // A refusal is one line: a config file with several problems shows the first.
  std::size_t newline = message.find('\n');
  if (newline == std::string::npos) {
    slurm_error("accel: %s", message.c_str());
    return;
  }
  std::size_t more = 0;
  for (char c : message) more += c == '\n' ? 1 : 0;
  slurm_error("accel: %s (and %zu more)", message.substr(0, newline).c_str(), more);
}

void reportDebug(const std::string& message) { slurm_debug("accel: %s", message.c_str()); }

}  // namespace accel::spank
