// The node's reading of the job's SPANK environment (readJobEnv): what the
// plugin writes reads back unchanged, and whatever a user can put there
// instead (garbage, overflowing numbers, values above the site's limits,
// half of a pair) is refused with one printable line, never accepted in part.
#include "accel/spank/job_env.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace accel::spank {
namespace {

using Env = std::map<std::string, std::string>;

SiteLimits site() {
  SiteLimits l;
  l.max_ipus = 64;
  l.vipu_conf_path = "/etc/slurm/vipu.conf";
  l.accel_conf_path = "/etc/slurm/accel.conf";
  l.appliance_time_max = SlurmDuration::fromSeconds(2 * 3600);
  return l;
}

Result<JobEnvOptions> read(const Env& env, const SiteLimits& limits = site()) {
  return readJobEnv(
      [&env](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      limits);
}

// The refusal's text, or "(accepted)".
std::string refusal(const Env& env, const SiteLimits& limits = site()) {
  auto r = read(env, limits);
  if (r.ok()) return "(accepted)";
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  return r.error().message();
}

// The variables exactly as prologEnv() writes them, with slurmd's prefix.
Env fromPlugin(const JobOptions& o, std::optional<std::uint32_t> ntasks) {
  Env env;
  for (const auto& [k, v] : prologEnv(o, ntasks)) env["SPANK_" + k] = v;
  return env;
}

TEST(JobEnv, WhatThePluginWritesReadsBack) {
  JobOptions o;
  o.ipus = 8;
  o.num_replicas = 2;
  o.appliance_time_sec = 600;
  o.appliance_signal = SIGUSR1;
  o.appliance_signal_lead_sec = 30;
  auto r = read(fromPlugin(o, 4));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->options.ipus, 8u);
  EXPECT_EQ(r->options.num_replicas, 2u);
  EXPECT_EQ(r->options.appliance_time_sec, 600);
  EXPECT_FALSE(r->options.appliance_time_from_default);
  EXPECT_EQ(r->options.appliance_signal, SIGUSR1);
  EXPECT_EQ(r->options.appliance_signal_lead_sec, 30u);
  EXPECT_FALSE(r->options.appliance_signal_batch);
  EXPECT_EQ(r->ntasks, 4u);

  o.appliance_signal_batch = true;
  r = read(fromPlugin(o, 4));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(r->options.appliance_signal_batch) << "B: reaches the prolog";
  EXPECT_EQ(r->options.appliance_signal, SIGUSR1);
  EXPECT_EQ(r->options.appliance_signal_lead_sec, 30u);

  JobOptions d;
  d.appliance_time_sec = 1800;
  d.appliance_time_from_default = true;
  r = read(fromPlugin(d, std::nullopt));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->options.appliance_time_sec, 1800);
  EXPECT_TRUE(r->options.appliance_time_from_default) << "a default stays a default";
  EXPECT_EQ(r->options.ipus, 0u);
  EXPECT_EQ(r->ntasks, 0u);
}

TEST(JobEnv, NothingSetAsksForNothing) {
  auto r = read({});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->options.ipus, 0u);
  EXPECT_FALSE(r->options.appliance_time_sec.has_value());
  EXPECT_EQ(r->ntasks, 0u);
}

TEST(JobEnv, TheNodesDefaultLimitAppliesWhenNoneIsSet) {
  SiteLimits l = site();
  l.appliance_time_default = SlurmDuration::fromSeconds(900);
  auto r = read({}, l);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->options.appliance_time_sec, 900)
      << "leaving the variable out does not escape the default";
  EXPECT_TRUE(r->options.appliance_time_from_default);
}

TEST(JobEnv, GarbageIsRefused) {
  const std::string ipu_range = "; give 1 to 64 IPUs (MaxIpusPerJob in /etc/slurm/vipu.conf)";
  const std::pair<Env, std::string> cases[] = {
      {{{"SPANK_ACCEL_IPUS", "abc"}}, "--ipus=abc: not a whole number" + ipu_range},
      {{{"SPANK_ACCEL_IPUS", ""}}, "--ipus=: no number given" + ipu_range},
      {{{"SPANK_ACCEL_IPUS", " 4"}}, "--ipus=' 4': not a whole number" + ipu_range},
      {{{"SPANK_ACCEL_IPUS", "4 "}}, "--ipus='4 ': not a whole number" + ipu_range},
      {{{"SPANK_ACCEL_IPUS", "\t"}}, "--ipus='\\x09': not a whole number" + ipu_range},
      {{{"SPANK_ACCEL_IPUS", "-4"}}, "--ipus=-4: negative numbers are not allowed" + ipu_range},
      {{{"SPANK_ACCEL_IPUS", "+4"}}, "--ipus=+4: not a whole number" + ipu_range},
      {{{"SPANK_ACCEL_IPUS", "0x10"}}, "--ipus=0x10: not a whole number" + ipu_range},
      {{{"SPANK_ACCEL_IPUS", "0"}}, "--ipus=0: a job asks for at least 1 IPU" + ipu_range},
      {{{"SPANK_ACCEL_IPUS", "3"}},
       "--ipus=3: IPU partitions hold a power of two of IPUs (1, 2, 4, 8, ...); give 2 or 4"},
      {{{"SPANK_ACCEL_NUM_REPLICAS", "2"}},
       "--num-replicas=2: needs --ipus; the replicas share the job's IPUs"},
      {{{"SPANK_ACCEL_IPUS", "4"}, {"SPANK_ACCEL_NUM_REPLICAS", "3"}},
       "--num-replicas=3: does not divide --ipus=4; give 1, 2 or 4 (the divisors of --ipus=4)"},
      {{{"SPANK_ACCEL_IPUS", "4"}, {"SPANK_ACCEL_NUM_REPLICAS", "-1"}},
       "--num-replicas=-1: negative numbers are not allowed; give 1, 2 or 4 (the divisors of "
       "--ipus=4)"},
      {{{"SPANK_ACCEL_APPLIANCE_TIME", "abc"}},
       "--job-time-sec=abc: not a whole number; give the limit in whole seconds"},
      {{{"SPANK_ACCEL_APPLIANCE_TIME", ""}},
       "--job-time-sec=: no number given; give the limit in whole seconds"},
      {{{"SPANK_ACCEL_APPLIANCE_TIME", "-1"}},
       "--job-time-sec=-1: negative numbers are not allowed; give the limit in whole seconds"},
      {{{"SPANK_ACCEL_APPLIANCE_TIME", "1:00"}},
       "--job-time-sec=1:00: not a whole number; give the limit in whole seconds"},
      {{{"SPANK_ACCEL_APPLIANCE_TIME", "0"}},
       "--job-time-sec=0: a limit of zero is not allowed; give at least 1 second"},
      {{{"SPANK_ACCEL_APPLIANCE_TIME", "60"}, {"SPANK_ACCEL_APPLIANCE_TIME_SOURCE", "site"}},
       "SPANK_ACCEL_APPLIANCE_TIME_SOURCE='site': neither 'option' nor 'default'"},
      {{{"SPANK_ACCEL_APPLIANCE_TIME_SOURCE", "default"}},
       "SPANK_ACCEL_APPLIANCE_TIME_SOURCE='default' without SPANK_ACCEL_APPLIANCE_TIME"},
      {{{"SPANK_ACCEL_APPLIANCE_TIME", "60"}, {"SPANK_ACCEL_APPLIANCE_SIGNAL", "10"}},
       "SPANK_ACCEL_APPLIANCE_SIGNAL='10' without SPANK_ACCEL_APPLIANCE_SIGNAL_LEAD"},
      {{{"SPANK_ACCEL_APPLIANCE_TIME", "60"}, {"SPANK_ACCEL_APPLIANCE_SIGNAL_LEAD", "10"}},
       "SPANK_ACCEL_APPLIANCE_SIGNAL_LEAD='10' without SPANK_ACCEL_APPLIANCE_SIGNAL"},
      {{{"SPANK_ACCEL_APPLIANCE_TIME", "60"},
        {"SPANK_ACCEL_APPLIANCE_SIGNAL", "10@1"},
        {"SPANK_ACCEL_APPLIANCE_SIGNAL_LEAD", "10"}},
       "SPANK_ACCEL_APPLIANCE_SIGNAL='10@1': not a signal"},
      {{{"SPANK_ACCEL_APPLIANCE_TIME", "60"},
        {"SPANK_ACCEL_APPLIANCE_SIGNAL", "99"},
        {"SPANK_ACCEL_APPLIANCE_SIGNAL_LEAD", "10"}},
       "--appliance-signal=99@10: unknown signal '99'; use a signal name such as USR1, TERM or "
       "SIGUSR2, or a "
       "number from 1 to 64, optionally after B: (the batch shell only) and followed by @SECONDS "
       "(0 to 65535, "
       "default 60)"},
      {{{"SPANK_ACCEL_APPLIANCE_TIME", "60"},
        {"SPANK_ACCEL_APPLIANCE_SIGNAL", "10"},
        {"SPANK_ACCEL_APPLIANCE_SIGNAL_LEAD", "10"},
        {"SPANK_ACCEL_APPLIANCE_SIGNAL_BATCH", "yes"}},
       "SPANK_ACCEL_APPLIANCE_SIGNAL_BATCH='yes': not 1"},
      {{{"SPANK_ACCEL_APPLIANCE_TIME", "60"}, {"SPANK_ACCEL_APPLIANCE_SIGNAL_BATCH", "1"}},
       "SPANK_ACCEL_APPLIANCE_SIGNAL_BATCH='1' without SPANK_ACCEL_APPLIANCE_SIGNAL"},
      {{{"SPANK_ACCEL_APPLIANCE_TIME", "60"},
        {"SPANK_ACCEL_APPLIANCE_SIGNAL", "B:10"},
        {"SPANK_ACCEL_APPLIANCE_SIGNAL_LEAD", "10"}},
       "SPANK_ACCEL_APPLIANCE_SIGNAL='B:10': not a signal"},
      {{{"SPANK_ACCEL_APPLIANCE_SIGNAL", "10"}, {"SPANK_ACCEL_APPLIANCE_SIGNAL_LEAD", "10"}},
       "--appliance-signal=10@10: the job has no appliance time limit to warn before; add "
       "--appliance-time or "
       "--job-time-sec"},
      {{{"SPANK_ACCEL_APPLIANCE_TIME", "60"},
        {"SPANK_ACCEL_APPLIANCE_SIGNAL", "10"},
        {"SPANK_ACCEL_APPLIANCE_SIGNAL_LEAD", "60"}},
       "--appliance-signal=10@60: the warning would come at once: the appliance time limit is 60 "
       "seconds; give a "
       "lead below 60"},
      {{{"SPANK_ACCEL_IPUS", "4"}, {"SPANK_ACCEL_NTASKS", "abc"}},
       "SPANK_ACCEL_NTASKS='abc': not a whole number; a job has 1 to 65536 tasks on a node"},
      {{{"SPANK_ACCEL_IPUS", "4"}, {"SPANK_ACCEL_NTASKS", "0"}},
       "SPANK_ACCEL_NTASKS='0': zero tasks; a job has 1 to 65536 tasks on a node"},
      {{{"SPANK_ACCEL_IPUS", "4"}, {"SPANK_ACCEL_NTASKS", ""}},
       "SPANK_ACCEL_NTASKS='': no number given; a job has 1 to 65536 tasks on a node"},
  };
  for (const auto& [env, want] : cases) EXPECT_EQ(refusal(env), want);
}

TEST(JobEnv, HugeNumbersAreRefusedBeforeAnyConversion) {
  const std::string twenty_nines(20, '9');
  EXPECT_EQ(
      refusal({{"SPANK_ACCEL_APPLIANCE_TIME", twenty_nines}}),
      "--job-time-sec=" + twenty_nines + ": too large; Slurm times end at 2147483647 seconds");
  // Fits in 64 bits, and in minutes would overflow a 64-bit count of nanoseconds.
  EXPECT_EQ(refusal({{"SPANK_ACCEL_APPLIANCE_TIME", "9223372036854775807"}}),
            "--job-time-sec=9223372036854775807: too large; Slurm times end at 2147483647 seconds");
  EXPECT_EQ(refusal({{"SPANK_ACCEL_APPLIANCE_TIME", "2147483648"}}),
            "--job-time-sec=2147483648: too large; Slurm times end at 2147483647 seconds");
  EXPECT_EQ(refusal({{"SPANK_ACCEL_IPUS", twenty_nines}}),
            "--ipus=" + twenty_nines +
                ": at most 64 IPUs per job (MaxIpusPerJob in /etc/slurm/vipu.conf)");
  EXPECT_EQ(refusal({{"SPANK_ACCEL_IPUS", "4294967296"}}),
            "--ipus=4294967296: at most 64 IPUs per job (MaxIpusPerJob in /etc/slurm/vipu.conf)")
      << "2^32 must not wrap to 0";
  EXPECT_EQ(refusal({{"SPANK_ACCEL_IPUS", "4"}, {"SPANK_ACCEL_NTASKS", "4294967297"}}),
            "SPANK_ACCEL_NTASKS='4294967297': too large; a job has 1 to 65536 tasks on a node");
  const std::string long_value(100000, '7');
  std::string m = refusal({{"SPANK_ACCEL_APPLIANCE_TIME", long_value}});
  EXPECT_LT(m.size(), 200u) << "a long value is cut in the message";
  EXPECT_NE(m.find("too large"), std::string::npos) << m;
}

TEST(JobEnv, TheSitesLimitsAreAppliedAgain) {
  EXPECT_EQ(refusal({{"SPANK_ACCEL_IPUS", "128"}}),
            "--ipus=128: at most 64 IPUs per job (MaxIpusPerJob in /etc/slurm/vipu.conf)");
  EXPECT_EQ(
      refusal({{"SPANK_ACCEL_APPLIANCE_TIME", "7201"}}),
      "--job-time-sec=7201: above the site maximum of 02:00:00 (7200 seconds; ApplianceTimeMax in "
      "/etc/slurm/accel.conf)");
  // A value the plugin marked as the site default is checked all the same.
  EXPECT_EQ(
      refusal({{"SPANK_ACCEL_APPLIANCE_TIME", "7201"},
               {"SPANK_ACCEL_APPLIANCE_TIME_SOURCE", "default"}}),
      "--job-time-sec=7201: above the site maximum of 02:00:00 (7200 seconds; ApplianceTimeMax in "
      "/etc/slurm/accel.conf)");
  EXPECT_EQ(refusal({{"SPANK_ACCEL_IPUS", "64"}, {"SPANK_ACCEL_APPLIANCE_TIME", "7200"}}),
            "(accepted)");
  SiteLimits no_ipus = site();
  no_ipus.max_ipus.reset();
  EXPECT_EQ(refusal({{"SPANK_ACCEL_IPUS", "1"}}, no_ipus),
            "--ipus=1: this cluster has no IPUs (/etc/slurm/vipu.conf does not exist)");
}

TEST(JobEnv, NtasksMattersOnlyForIpuJobs) {
  auto r = read({{"SPANK_ACCEL_NTASKS", "junk"}});
  ASSERT_TRUE(r.ok()) << "without IPUs the count is not used";
  EXPECT_EQ(r->ntasks, 0u);
  r = read({{"SPANK_ACCEL_IPUS", "2"}, {"SPANK_ACCEL_NTASKS", "65536"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ntasks, 65536u);
  r = read({{"SPANK_ACCEL_IPUS", "2"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ntasks, 0u) << "absent: not known";
}

TEST(JobEnv, RefusalsArePrintableOneLiners) {
  const char* hostile[] = {"\x1b[2J", "4\n", "\xff\xfe", "1\r\n2", "%s%n"};
  const char* vars[] = {"SPANK_ACCEL_IPUS", "SPANK_ACCEL_APPLIANCE_TIME",
                        "SPANK_ACCEL_APPLIANCE_TIME_SOURCE"};
  for (const char* var : vars) {
    for (const char* v : hostile) {
      Env env{{var, v}};
      if (std::string(var) == "SPANK_ACCEL_APPLIANCE_TIME_SOURCE")
        env["SPANK_ACCEL_APPLIANCE_TIME"] = "60";
      std::string m = refusal(env);
      ASSERT_NE(m, "(accepted)") << var;
      for (char c : m) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << var << ": " << m;
    }
  }
}

TEST(NodeSiteLimits, ReadFromTheNodesFiles) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("spank-job-env-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string accel = (dir / "accel.conf").string();
  AccelConfig config;
  config.appliance_time_max = SlurmDuration::fromSeconds(3600);
  config.appliance_time_default = SlurmDuration::fromSeconds(60);
  SiteLimits l = nodeSiteLimits(config, accel, true);
  EXPECT_EQ(l.max_ipus, kNodeIpusWithoutVipuConf) << "no vipu.conf: the daemon judges the node";
  EXPECT_EQ(l.appliance_time_max, SlurmDuration::fromSeconds(3600));
  EXPECT_EQ(l.appliance_time_default, SlurmDuration::fromSeconds(60));
  std::ofstream(dir / "vipu.conf") << "ApiHost=127.0.0.1\nIpuofDir=/tmp\nMaxIpusPerJob=16\n";
  EXPECT_EQ(nodeSiteLimits(config, accel, true).max_ipus, 16u);
  EXPECT_FALSE(nodeSiteLimits(config, accel, false).max_ipus.has_value())
      << "not read for a job without IPUs";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace accel::spank
