#include "accel/spank/option_values.h"

#include <gtest/gtest.h>

#include <csignal>
#include <string>

namespace accel::spank {
namespace {

struct NumberCase {
  std::string text;
  std::uint64_t max;
  NumberProblem problem;
  std::uint64_t value;
};

TEST(ParseWholeNumber, Table) {
  const NumberCase cases[] = {
      {"0", 10, NumberProblem::kNone, 0},
      {"0", 0, NumberProblem::kNone, 0},
      {"1", 0, NumberProblem::kTooLarge, 0},
      {"7", 10, NumberProblem::kNone, 7},
      {"007", 10, NumberProblem::kNone, 7},
      {"10", 10, NumberProblem::kNone, 10},
      {"11", 10, NumberProblem::kTooLarge, 0},
      {"4294967295", 4294967295u, NumberProblem::kNone, 4294967295u},
      {"4294967296", 4294967295u, NumberProblem::kTooLarge, 0},
      {"18446744073709551615", UINT64_MAX, NumberProblem::kNone, UINT64_MAX},
      {"18446744073709551616", UINT64_MAX, NumberProblem::kTooLarge, 0},
      {"99999999999999999999999999", 10, NumberProblem::kTooLarge, 0},
      {"", 10, NumberProblem::kEmpty, 0},
      {"-1", 10, NumberProblem::kNegative, 0},
      {"-0", 10, NumberProblem::kNegative, 0},
      {"-", 10, NumberProblem::kNotNumber, 0},
      {"-x", 10, NumberProblem::kNotNumber, 0},
      {"+4", 10, NumberProblem::kNotNumber, 0},
      {" 4", 10, NumberProblem::kNotNumber, 0},
      {"4 ", 10, NumberProblem::kNotNumber, 0},
      {"4x", 10, NumberProblem::kNotNumber, 0},
      {"0x10", 100, NumberProblem::kNotNumber, 0},
      {"4.0", 10, NumberProblem::kNotNumber, 0},
      {"1e3", 10000, NumberProblem::kNotNumber, 0},
      {"abc", 10, NumberProblem::kNotNumber, 0},
      {"99999999999999999999999x", 10, NumberProblem::kNotNumber, 0},
      {std::string("4\0", 2), 10, NumberProblem::kNotNumber, 0},
      {"\xff\xfe", 10, NumberProblem::kNotNumber, 0},
  };
  for (const auto& c : cases) {
    ParsedNumber n = parseWholeNumber(c.text, c.max);
    EXPECT_EQ(n.problem, c.problem) << "'" << c.text << "'";
    EXPECT_EQ(n.value, c.value) << "'" << c.text << "'";
  }
}

TEST(ParseWholeNumber, EveryProblemHasWords) {
  for (auto p : {NumberProblem::kEmpty, NumberProblem::kNegative, NumberProblem::kNotNumber,
                 NumberProblem::kTooLarge}) {
    EXPECT_FALSE(describe(p).empty());
  }
  EXPECT_EQ(describe(NumberProblem::kNotNumber), "not a whole number");
}

TEST(SignalNumber, NamesAndNumbersLikeSbatch) {
  const std::pair<std::string, int> cases[] = {
      {"USR1", SIGUSR1},
      {"usr1", SIGUSR1},
      {"SIGUSR1", SIGUSR1},
      {"sigusr2", SIGUSR2},
      {"SigTerm", SIGTERM},
      {"TERM", SIGTERM},
      {"HUP", SIGHUP},
      {"INT", SIGINT},
      {"QUIT", SIGQUIT},
      {"ABRT", SIGABRT},
      {"KILL", SIGKILL},
      {"ALRM", SIGALRM},
      {"URG", SIGURG},
      {"CONT", SIGCONT},
      {"STOP", SIGSTOP},
      {"TSTP", SIGTSTP},
      {"TTIN", SIGTTIN},
      {"TTOU", SIGTTOU},
      {"XCPU", SIGXCPU},
      {"10", 10},
      {"1", 1},
      {"64", 64},
      {"010", 10},
      // Not signals:
      {"", 0},
      {"0", 0},
      {"65", 0},
      {"65535", 0},
      {"-10", 0},
      {"SIG", 0},
      {"SIGSIGUSR1", 0},
      {"USR", 0},
      {"USR1X", 0},
      {"USR1 ", 0},
      {" USR1", 0},
      {"10x", 0},
      {"SEGV", 0},
      {"FOO", 0},
      {"SIG10", 0},
      {"\xff", 0},
  };
  for (const auto& [text, number] : cases)
    EXPECT_EQ(signalNumber(text), number) << "'" << text << "'";
}

TEST(ParseSignalSpec, AcceptsSbatchForms) {
  struct Case {
    std::string text;
    int number;
    std::uint32_t lead;
    SignalTarget target = SignalTarget::kSteps;
  };
  const Case cases[] = {
      {"USR1", SIGUSR1, 60},
      {"SIGUSR1@30", SIGUSR1, 30},
      {"term@0", SIGTERM, 0},
      {"10@65535", 10, 65535},
      {"2@007", 2, 7},
      {"XCPU@120", SIGXCPU, 120},
      // The checkpointing tools' default.
      {"USR2@90", SIGUSR2, 90},
      {"B:USR1@5", SIGUSR1, 5, SignalTarget::kBatch},
      {"b:sigusr2", SIGUSR2, 60, SignalTarget::kBatch},
      {"RB:USR1@10", SIGUSR1, 10, SignalTarget::kBatch},
      {"BR:12", 12, 60, SignalTarget::kBatch},
      // R: (a reservation's end) has nothing to act on: the steps, as without it.
      {"R:USR1@10", SIGUSR1, 10},
      {"r:TERM", SIGTERM, 60},
  };
  for (const auto& c : cases) {
    auto spec = parseSignalSpec(c.text);
    ASSERT_TRUE(spec.ok()) << c.text << ": " << spec.error().message();
    EXPECT_EQ(spec->number, c.number) << c.text;
    EXPECT_EQ(spec->lead_sec, c.lead) << c.text;
    EXPECT_EQ(spec->target, c.target) << c.text;
  }
}

TEST(ParseSignalSpec, RefusesWithReason) {
  const std::pair<std::string, std::string> cases[] = {
      {"", "no signal given"},
      {"@30", "no signal given"},
      {"FOO", "unknown signal 'FOO'"},
      {"0", "unknown signal '0'"},
      {"99", "unknown signal '99'"},
      {"USR1@", "no number given"},
      {"USR1@-5", "negative numbers are not allowed"},
      {"USR1@abc", "not a whole number"},
      {"USR1@65536", "too large"},
      {"USR1@30s", "not a whole number"},
      {"USR1@5@6", "not a whole number"},
      {"B:", "no signal given"},
      {"B:@5", "no signal given"},
      {"B:B:USR1", "unknown signal 'B:USR1'"},
      {"X:USR1", "unknown signal 'X:USR1'"},
      {":USR1", "unknown signal ':USR1'"},
      {"USR1\n@5", "unknown signal 'USR1\\x0a'"},
  };
  for (const auto& [text, why] : cases) {
    auto spec = parseSignalSpec(text);
    ASSERT_FALSE(spec.ok()) << text;
    EXPECT_EQ(spec.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(spec.error().message().find(why), std::string::npos)
        << text << " -> " << spec.error().message();
    EXPECT_EQ(spec.error().message().find('\n'), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace accel::spank
