#include "accel/spank/option_values.h"

#include <array>
#include <csignal>

#include "accel/common/config_errors.h"

namespace accel::spank {
namespace {

struct NamedSignal {
  std::string_view name;
  int number;
};

// Slurm's table for --signal, in its order, so that names mean the same here.
constexpr std::array<NamedSignal, 16> kSignals{{
    {"HUP", SIGHUP},
    {"INT", SIGINT},
    {"QUIT", SIGQUIT},
    {"ABRT", SIGABRT},
    {"KILL", SIGKILL},
    {"ALRM", SIGALRM},
    {"TERM", SIGTERM},
    {"USR1", SIGUSR1},
    {"USR2", SIGUSR2},
    {"URG", SIGURG},
    {"CONT", SIGCONT},
    {"STOP", SIGSTOP},
    {"TSTP", SIGTSTP},
    {"TTIN", SIGTTIN},
    {"TTOU", SIGTTOU},
    {"XCPU", SIGXCPU},
}};

char upper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (upper(a[i]) != upper(b[i])) return false;
  return true;
}

bool hasPrefixIgnoreCase(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && equalsIgnoreCase(text.substr(0, prefix.size()), prefix);
}

Error invalid(std::string message) {
  return Error(ErrorCode::kInvalidArgument, std::move(message));
}

constexpr std::string_view kSignalForms =
    "use a signal name such as USR1, TERM or SIGUSR2, or a number from 1 to 64, "
    "optionally after B: (the batch shell only) and followed by @SECONDS (0 to 65535, "
    "default 60)";

}  // namespace

ParsedNumber parseWholeNumber(std::string_view text, std::uint64_t max) {
  if (text.empty()) return {0, NumberProblem::kEmpty};
  if (text.front() == '-' && text.size() > 1) {
    bool digits = true;
    for (char c : text.substr(1)) digits = digits && c >= '0' && c <= '9';
    if (digits) return {0, NumberProblem::kNegative};
  }
  std::uint64_t value = 0;
  bool too_large = false;
  for (char c : text) {
    if (c < '0' || c > '9') return {0, NumberProblem::kNotNumber};
    // Keep scanning after an overflow: "99999999999999999999x" is not a number at all.
    if (too_large) continue;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    // value * 10 + digit > max, asked without computing it (it may not fit in 64 bits).
    if (max < digit || value > (max - digit) / 10) {
      too_large = true;
      continue;
    }
    value = value * 10 + digit;
  }
  if (too_large) return {0, NumberProblem::kTooLarge};
  return {value, NumberProblem::kNone};
}

std::string_view describe(NumberProblem problem) {
  switch (problem) {
    case NumberProblem::kNone:
      return "fine";
    case NumberProblem::kEmpty:
      return "no number given";
    case NumberProblem::kNegative:
      return "negative numbers are not allowed";
    case NumberProblem::kNotNumber:
      return "not a whole number";
    case NumberProblem::kTooLarge:
      return "too large";
  }
  return "not valid";
}

int signalNumber(std::string_view text) {
  if (text.empty()) return 0;
  if (text.front() >= '0' && text.front() <= '9') {
    ParsedNumber n = parseWholeNumber(text, kMaxSignalNumber);
    return (n.problem == NumberProblem::kNone && n.value >= 1) ? static_cast<int>(n.value) : 0;
  }
  std::string_view name = hasPrefixIgnoreCase(text, "SIG") ? text.substr(3) : text;
  for (const auto& s : kSignals)
    if (equalsIgnoreCase(name, s.name)) return s.number;
  return 0;
}

Result<SignalSpec> parseSignalSpec(std::string_view text) {
  SignalSpec spec;
  // sbatch's prefixes: "B:" sends the signal to the batch shell only; "R:"
  // (a reservation's end may signal too) has nothing to act on here, as the
  // appliance limit is no reservation, and changes nothing.
  for (std::string_view prefix : {"RB:", "BR:", "B:", "R:"}) {
    if (!hasPrefixIgnoreCase(text, prefix)) continue;
    if (prefix.find_first_of("Bb") != std::string_view::npos) spec.target = SignalTarget::kBatch;
    text.remove_prefix(prefix.size());
    break;
  }
  std::size_t at = text.find('@');
  std::string_view sig = text.substr(0, at);
  if (sig.empty()) return invalid("no signal given; " + std::string(kSignalForms));
  spec.number = signalNumber(sig);
  if (spec.number == 0)
    return invalid("unknown signal " + quoteForMessage(sig, 20) + "; " + std::string(kSignalForms));
  if (at == std::string_view::npos) return spec;
  std::string_view lead = text.substr(at + 1);
  ParsedNumber n = parseWholeNumber(lead, kMaxSignalLead);
  if (n.problem != NumberProblem::kNone) {
    return invalid("the time after '@' (" + quoteForMessage(lead, 20) +
                   "): " + std::string(describe(n.problem)) +
                   "; give whole seconds from 0 to 65535 before the limit");
  }
  spec.lead_sec = static_cast<std::uint32_t>(n.value);
  return spec;
}

}  // namespace accel::spank
