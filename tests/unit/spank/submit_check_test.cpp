#include "accel/spank/submit_check.h"

#include <gtest/gtest.h>

#include <csignal>
#include <string>

namespace accel::spank {
namespace {

SiteLimits site() {
  SiteLimits l;
  l.max_ipus = 256;
  l.vipu_conf_path = "/etc/slurm/vipu.conf";
  l.accel_conf_path = "/etc/slurm/accel.conf";
  l.appliance_time_max = SlurmDuration::fromSeconds(2 * 3600);
  return l;
}

RawOptions ipus(const std::string& n) {
  RawOptions r;
  r.ipus = n;
  return r;
}

RawOptions withReplicas(RawOptions r, const std::string& n) {
  r.num_replicas = n;
  return r;
}

RawOptions applianceTime(const std::string& t) {
  RawOptions r;
  r.appliance_time = t;
  return r;
}

RawOptions jobTimeSec(const std::string& t) {
  RawOptions r;
  r.job_time_sec = t;
  return r;
}

RawOptions withSignal(RawOptions r, const std::string& s) {
  r.appliance_signal = s;
  return r;
}

std::string refusal(const RawOptions& raw, const SiteLimits& limits = site()) {
  auto r = checkOptions(raw, limits);
  if (r.ok()) return "(accepted)";
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  return r.error().message();
}

// Every refusal, exactly as the user reads it after "accel: ".
TEST(CheckOptions, RefusalsTable) {
  const std::pair<RawOptions, std::string> cases[] = {
      {ipus("abc"),
       "--ipus=abc: not a whole number; give 1 to 256 IPUs (MaxIpusPerJob in "
       "/etc/slurm/vipu.conf)"},
      {ipus(""),
       "--ipus=: no number given; give 1 to 256 IPUs (MaxIpusPerJob in /etc/slurm/vipu.conf)"},
      {ipus("-4"),
       "--ipus=-4: negative numbers are not allowed; give 1 to 256 IPUs (MaxIpusPerJob in "
       "/etc/slurm/vipu.conf)"},
      {ipus("0"),
       "--ipus=0: a job asks for at least 1 IPU; give 1 to 256 IPUs (MaxIpusPerJob in "
       "/etc/slurm/vipu.conf)"},
      {ipus("4x"),
       "--ipus=4x: not a whole number; give 1 to 256 IPUs (MaxIpusPerJob in /etc/slurm/vipu.conf)"},
      {ipus("4.5"),
       "--ipus=4.5: not a whole number; give 1 to 256 IPUs (MaxIpusPerJob in "
       "/etc/slurm/vipu.conf)"},
      {ipus("300"), "--ipus=300: at most 256 IPUs per job (MaxIpusPerJob in /etc/slurm/vipu.conf)"},
      {ipus("99999999999999999999"),
       "--ipus=99999999999999999999: at most 256 IPUs per job (MaxIpusPerJob in "
       "/etc/slurm/vipu.conf)"},
      {ipus("4 4"),
       "--ipus='4 4': not a whole number; give 1 to 256 IPUs (MaxIpusPerJob in "
       "/etc/slurm/vipu.conf)"},
      {ipus("4\n"),
       "--ipus='4\\x0a': not a whole number; give 1 to 256 IPUs (MaxIpusPerJob in "
       "/etc/slurm/vipu.conf)"},
      {withReplicas(RawOptions{}, "2"),
       "--num-replicas=2: needs --ipus; the replicas share the job's IPUs"},
      {withReplicas(ipus("4"), "3"),
       "--num-replicas=3: does not divide --ipus=4; give 1, 2 or 4 (the divisors of --ipus=4)"},
      {withReplicas(ipus("4"), "8"),
       "--num-replicas=8: does not divide --ipus=4; give 1, 2 or 4 (the divisors of --ipus=4)"},
      {withReplicas(ipus("4"), "0"),
       "--num-replicas=0: a job has at least 1 replica; give 1, 2 or 4 (the divisors of --ipus=4)"},
      {withReplicas(ipus("4"), "two"),
       "--num-replicas=two: not a whole number; give 1, 2 or 4 (the divisors of --ipus=4)"},
      {withReplicas(ipus("4"), "-2"),
       "--num-replicas=-2: negative numbers are not allowed; give 1, 2 or 4 (the divisors of "
       "--ipus=4)"},
      {withReplicas(ipus("4"), "99999999999"),
       "--num-replicas=99999999999: too large; give 1, 2 or 4 (the divisors of --ipus=4)"},
      {withReplicas(ipus("8"), "3"),
       "--num-replicas=3: does not divide --ipus=8; give 1, 2, 4 or 8 (the divisors of --ipus=8)"},
      {withReplicas(ipus("256"), "7"),
       "--num-replicas=7: does not divide --ipus=256; give a divisor of --ipus=256"},
      {ipus("3"),
       "--ipus=3: IPU partitions hold a power of two of IPUs (1, 2, 4, 8, ...); give 2 or 4"},
      {ipus("255"),
       "--ipus=255: IPU partitions hold a power of two of IPUs (1, 2, 4, 8, ...); give 128 or 256"},
      {applianceTime("abc"),
       "--appliance-time=abc: 'abc' is not a Slurm time (unexpected character); use MM, MM:SS, "
       "HH:MM:SS, "
       "D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED"},
      {applianceTime("-5"),
       "--appliance-time=-5: '-5' is not a Slurm time (negative times are not allowed); use MM, "
       "MM:SS, "
       "HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED"},
      {applianceTime("0"),
       "--appliance-time=0: a limit of zero is not allowed; give at least 1 second"},
      {applianceTime("0:00"),
       "--appliance-time=0:00: a limit of zero is not allowed; give at least 1 second"},
      {applianceTime("2:00:01"),
       "--appliance-time=2:00:01: above the site maximum of 02:00:00 (7200 seconds; "
       "ApplianceTimeMax in "
       "/etc/slurm/accel.conf)"},
      {applianceTime("UNLIMITED"),
       "--appliance-time=UNLIMITED: above the site maximum of 02:00:00 (7200 seconds; "
       "ApplianceTimeMax in "
       "/etc/slurm/accel.conf)"},
      {jobTimeSec("7201"),
       "--job-time-sec=7201: above the site maximum of 02:00:00 (7200 seconds; ApplianceTimeMax in "
       "/etc/slurm/accel.conf)"},
      {jobTimeSec("0"), "--job-time-sec=0: a limit of zero is not allowed; give at least 1 second"},
      {jobTimeSec("60s"),
       "--job-time-sec=60s: not a whole number; give the limit in whole seconds"},
      {jobTimeSec("1:00"),
       "--job-time-sec=1:00: not a whole number; give the limit in whole seconds"},
      {jobTimeSec("-60"),
       "--job-time-sec=-60: negative numbers are not allowed; give the limit in whole seconds"},
      {jobTimeSec(""), "--job-time-sec=: no number given; give the limit in whole seconds"},
      {jobTimeSec("2147483648"),
       "--job-time-sec=2147483648: too large; Slurm times end at 2147483647 seconds"},
      {[] {
         RawOptions r = applianceTime("10");
         r.job_time_sec = "600";
         return r;
       }(),
       "--appliance-time=10 and --job-time-sec=600: give only one; both set the same appliance "
       "time limit"},
      {withSignal(RawOptions{}, "USR1"),
       "--appliance-signal=USR1: the job has no appliance time limit to warn before; add "
       "--appliance-time "
       "or --job-time-sec"},
      {withSignal(applianceTime("10"), "FOO"),
       "--appliance-signal=FOO: unknown signal 'FOO'; use a signal name such as USR1, TERM or "
       "SIGUSR2, or a "
       "number from 1 to 64, optionally after B: (the batch shell only) and followed by @SECONDS "
       "(0 to 65535, "
       "default 60)"},
      {withSignal(applianceTime("10"), "USR1@x"),
       "--appliance-signal=USR1@x: the time after '@' ('x'): not a whole number; give whole "
       "seconds from 0 to "
       "65535 before the limit"},
      {withSignal(jobTimeSec("300"), "USR1@300"),
       "--appliance-signal=USR1@300: the warning would come at once: the appliance time limit is "
       "300 seconds; "
       "give a lead below 300"},
      {withSignal(jobTimeSec("30"), "USR1"),
       "--appliance-signal=USR1: the warning would come at once: the appliance time limit is 30 "
       "seconds; give a "
       "lead below 30"},
  };
  for (const auto& [raw, expected] : cases) EXPECT_EQ(refusal(raw), expected);
}

TEST(CheckOptions, NothingAskedIsNothing) {
  auto r = checkOptions(RawOptions{}, site());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ipus, 0u);
  EXPECT_EQ(r->num_replicas, 0u);
  EXPECT_FALSE(r->appliance_time_sec);
  EXPECT_EQ(r->appliance_signal, 0);
  EXPECT_TRUE(prologEnv(*r, 4).empty());
}

TEST(CheckOptions, NoVipuConfMeansNoIpus) {
  SiteLimits l = site();
  l.max_ipus.reset();
  EXPECT_EQ(refusal(ipus("4"), l),
            "--ipus=4: this cluster has no IPUs (/etc/slurm/vipu.conf does not exist)");
  // Options other than --ipus do not need vipu.conf.
  EXPECT_EQ(refusal(applianceTime("10"), l), "(accepted)");
}

TEST(CheckOptions, BrokenVipuConfIsNamed) {
  SiteLimits l = site();
  l.max_ipus.reset();
  l.vipu_problem = "/etc/slurm/vipu.conf: key 'ApiHost': required";
  EXPECT_EQ(
      refusal(ipus("4"), l),
      "--ipus=4: the IPU limits cannot be read: /etc/slurm/vipu.conf: key 'ApiHost': required");
}

TEST(CheckOptions, IpusAndReplicasAccepted) {
  auto r = checkOptions(withReplicas(ipus("256"), "16"), site());
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->ipus, 256u);
  EXPECT_EQ(r->num_replicas, 16u);
  r = checkOptions(withReplicas(ipus("1"), "1"), site());
  ASSERT_TRUE(r.ok());
  r = checkOptions(ipus("008"), site());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ipus, 8u);
}

TEST(CheckOptions, ApplianceTimeInSlurmNotation) {
  const std::pair<std::string, std::int64_t> cases[] = {
      {"90", 5400}, {"1:30", 90}, {"1:00:00", 3600}, {"0-2", 7200}, {"2:00:00", 7200}, {"0:01", 1},
  };
  for (const auto& [text, seconds] : cases) {
    auto r = checkOptions(applianceTime(text), site());
    ASSERT_TRUE(r.ok()) << text << ": " << r.error().message();
    EXPECT_EQ(r->appliance_time_sec, seconds) << text;
    EXPECT_FALSE(r->appliance_time_from_default);
  }
  auto r = checkOptions(jobTimeSec("60"), site());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->appliance_time_sec, 60);
}

TEST(CheckOptions, UnlimitedOnlyWhenTheSiteAllowsIt) {
  SiteLimits l = site();
  l.appliance_time_max = SlurmDuration::unlimited();
  l.appliance_time_default = SlurmDuration::fromSeconds(600);
  auto r = checkOptions(applianceTime("UNLIMITED"), l);
  ASSERT_TRUE(r.ok());
  // Explicitly unlimited: the default does not apply.
  EXPECT_FALSE(r->appliance_time_sec);
  EXPECT_EQ(
      refusal(applianceTime("0"), l),
      "--appliance-time=0: a limit of zero is not allowed; give at least 1 second, or UNLIMITED");
  EXPECT_EQ(refusal(jobTimeSec("0"), l),
            "--job-time-sec=0: a limit of zero is not allowed; give at least 1 second");
  r = checkOptions(jobTimeSec("2147483647"), l);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->appliance_time_sec, 2147483647);
}

TEST(CheckOptions, DefaultAppliesWithoutAnOption) {
  SiteLimits l = site();
  l.appliance_time_default = SlurmDuration::fromSeconds(1800);
  auto r = checkOptions(RawOptions{}, l);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->appliance_time_sec, 1800);
  EXPECT_TRUE(r->appliance_time_from_default);
  r = checkOptions(applianceTime("5"), l);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->appliance_time_sec, 300);
  // A default of UNLIMITED is no limit.
  l.appliance_time_default = SlurmDuration::unlimited();
  r = checkOptions(RawOptions{}, l);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->appliance_time_sec);
}

TEST(CheckOptions, SignalWarnsBeforeTheDefaultLimit) {
  SiteLimits l = site();
  l.appliance_time_default = SlurmDuration::fromSeconds(1800);
  auto r = checkOptions(withSignal(RawOptions{}, "USR1@600"), l);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->appliance_signal, SIGUSR1);
  EXPECT_EQ(r->appliance_signal_lead_sec, 600u);
  EXPECT_EQ(refusal(withSignal(RawOptions{}, "USR1@1800"), l),
            "--appliance-signal=USR1@1800: the warning would come at once: the appliance time "
            "limit is 1800 "
            "seconds (ApplianceTimeDefault in /etc/slurm/accel.conf); give a lead below 1800");
}

TEST(CheckOptions, SignalDefaultsToSixtySeconds) {
  auto r = checkOptions(withSignal(applianceTime("10"), "sigterm"), site());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->appliance_signal, SIGTERM);
  EXPECT_EQ(r->appliance_signal_lead_sec, 60u);
}

// Checkpointing tools default to USR2 90 s ahead; B: picks the batch shell.
TEST(CheckOptions, SignalTakesSbatchsTargetPrefix) {
  auto r = checkOptions(withSignal(applianceTime("1:00:00"), "USR2@90"), site());
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->appliance_signal, SIGUSR2);
  EXPECT_EQ(r->appliance_signal_lead_sec, 90u);
  EXPECT_FALSE(r->appliance_signal_batch);
  r = checkOptions(withSignal(applianceTime("10"), "B:USR1@5"), site());
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->appliance_signal, SIGUSR1);
  EXPECT_EQ(r->appliance_signal_lead_sec, 5u);
  EXPECT_TRUE(r->appliance_signal_batch);
  r = checkOptions(withSignal(applianceTime("10"), "R:USR1@5"), site());
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_FALSE(r->appliance_signal_batch);
}

TEST(CheckOptions, FirstProblemWins) {
  RawOptions r = withReplicas(ipus("0"), "3");
  r.appliance_time = "nonsense";
  EXPECT_EQ(refusal(r).rfind("--ipus=0:", 0), 0u);
}

TEST(CheckOptions, RefusalsAreOneLine) {
  const std::string garbage[] = {std::string("1\n2"), std::string("\x1b[31mred"),
                                 std::string(200, '9'), std::string("a\0b", 3)};
  for (const auto& g : garbage) {
    for (RawOptions raw : {ipus(g), withReplicas(ipus("4"), g), applianceTime(g), jobTimeSec(g),
                           withSignal(applianceTime("10"), g)}) {
      std::string m = refusal(raw);
      EXPECT_EQ(m.find('\n'), std::string::npos) << m;
      EXPECT_EQ(m.find('\x1b'), std::string::npos) << m;
      EXPECT_EQ(m.find('\0'), std::string::npos) << m;
      EXPECT_LT(m.size(), 400u) << m;
    }
  }
}

TEST(PrologEnv, EveryVariable) {
  JobOptions o;
  o.ipus = 8;
  o.num_replicas = 2;
  o.appliance_time_sec = 600;
  o.appliance_signal = SIGUSR1;
  o.appliance_signal_lead_sec = 30;
  using Env = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(prologEnv(o, 4), (Env{{"ACCEL_IPUS", "8"},
                                  {"ACCEL_NTASKS", "4"},
                                  {"ACCEL_NUM_REPLICAS", "2"},
                                  {"ACCEL_APPLIANCE_TIME", "600"},
                                  {"ACCEL_APPLIANCE_TIME_SOURCE", "option"},
                                  {"ACCEL_APPLIANCE_SIGNAL", "10"},
                                  {"ACCEL_APPLIANCE_SIGNAL_LEAD", "30"}}));
  EXPECT_EQ(prologEnv(o, std::nullopt).size(), 6u);
  o.appliance_signal_batch = true;
  auto batch = prologEnv(o, 4);
  ASSERT_EQ(batch.size(), 8u);
  EXPECT_EQ(batch.back(),
            (std::pair<std::string, std::string>{"ACCEL_APPLIANCE_SIGNAL_BATCH", "1"}));
  JobOptions t;
  t.appliance_time_sec = 60;
  t.appliance_time_from_default = true;
  EXPECT_EQ(prologEnv(t, 4),
            (Env{{"ACCEL_APPLIANCE_TIME", "60"}, {"ACCEL_APPLIANCE_TIME_SOURCE", "default"}}));
}

}  // namespace
}  // namespace accel::spank
