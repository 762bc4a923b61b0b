#include "faults.h"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <sstream>

#include "fake_state.h"

namespace accel::hw_mock {
namespace {

bool parseInt(const std::string& s, int& out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

struct ActionName {
  const char* name;
  FaultAction action;
};
constexpr ActionName kActions[] = {{"fail", FaultAction::kFail},
                                   {"down", FaultAction::kDown},
                                   {"hang", FaultAction::kHang},
                                   {"delay", FaultAction::kDelay},
                                   {"garbage", FaultAction::kGarbage}};

Result<FaultRule> parseRule(const std::vector<std::string>& words, int line) {
  auto bad = [line](const std::string& why) {
    return Error(ErrorCode::kParse, "faults line " + std::to_string(line) + ": " + why);
  };
  FaultRule rule;
  rule.line = line;
  rule.op = words[0];
  if (words.size() < 2) return bad("missing action");
  const ActionName* found = nullptr;
  for (const auto& a : kActions)
    if (words[1] == a.name) found = &a;
  if (found == nullptr) return bad("unknown action '" + words[1] + "'");
  rule.action = found->action;
  size_t next = 2;
  if (rule.action == FaultAction::kDelay) {
    if (words.size() < 3 || !parseInt(words[2], rule.delay_ms) || rule.delay_ms < 0)
      return bad("delay needs milliseconds");
    next = 3;
  } else if (rule.action == FaultAction::kFail && words.size() > 2 && words[2] != "once") {
    if (!parseInt(words[2], rule.exit_code) || rule.exit_code < 1 || rule.exit_code > 255)
      return bad("fail exit code must be 1..255");
    next = 3;
  }
  if (next < words.size() && words[next] == "once") {
    rule.once = true;
    ++next;
  }
  if (next < words.size()) return bad("unexpected '" + words[next] + "'");
  return rule;
}

// True the first time it is called for `rule` (in any process), false after.
bool claimOnce(const std::string& dir, const FaultRule& rule) {
  const std::string fired = dir + "/faults.fired";
  if (!ensureDirectory(fired, 0777).ok()) return true;
  size_t hash = std::hash<std::string>{}(rule.text);
  std::string marker = fired + "/" + std::to_string(rule.line) + "-" + std::to_string(hash);
  int fd = ::open(marker.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

const FaultRule* firstLiveRule(const std::vector<FaultRule>& rules, const FaultSite& site) {
  for (const auto& rule : rules) {
    if (rule.op != "*" && rule.op != site.op) continue;
    if (rule.once && !claimOnce(site.dir, rule)) continue;
    return &rule;
  }
  return nullptr;
}

}  // namespace

Result<std::vector<FaultRule>> parseFaults(std::string_view content) {
  std::vector<FaultRule> rules;
  std::istringstream in{std::string(content)};
  std::string raw;
  for (int line = 1; std::getline(in, raw); ++line) {
    if (auto hash = raw.find('#'); hash != std::string::npos) raw.resize(hash);
    std::istringstream words_in(raw);
    std::vector<std::string> words;
    for (std::string w; words_in >> w;) words.push_back(w);
    if (words.empty()) continue;
    auto rule = parseRule(words, line);
    if (!rule.ok()) return rule.error();
    for (const auto& w : words) rule->text += (rule->text.empty() ? "" : " ") + w;
    rules.push_back(std::move(rule.value()));
  }
  return rules;
}

int injectFault(const FaultSite& site) {
  auto file = readText(site.dir + "/faults");
  if (!file.ok() || !file->exists) return -1;
  auto rules = parseFaults(file->text);
  if (!rules.ok()) return fail("hw_mock: " + site.dir + "/" + rules.error().message(), 2);
  const FaultRule* rule = firstLiveRule(*rules, site);
  if (rule == nullptr) return -1;
  switch (rule->action) {
    case FaultAction::kFail:
      return fail("injected failure of '" + site.op + "'", rule->exit_code);
    case FaultAction::kDown:
      return fail(site.down_message, 1);
    case FaultAction::kHang:
      for (;;) ::pause();  // until a signal kills us
    case FaultAction::kDelay:
      sleepSeconds(rule->delay_ms / 1000.0);
      return -1;
    case FaultAction::kGarbage:
      site.print_garbage();
      std::fflush(stdout);
      return 0;
  }
  return -1;
}

}  // namespace accel::hw_mock
