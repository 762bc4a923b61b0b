// Fake `csctl`: the appliance's command-line client, reading the job records
// in <state>/appliance/jobs/. See ../README.md.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "appliance_jobs.h"
#include "fake_state.h"
#include "faults.h"

namespace accel::hw_mock {
namespace {

constexpr const char* kUsage =
    "usage: csctl get jobs [-o json|table] [-l KEY=VALUE[,KEY=VALUE...]]\n"
    "       csctl cancel job ID\n";

struct Args {
  std::vector<std::string> words;
  std::string output = "table";
  std::map<std::string, std::string> selector;
};

Status parseSelector(const std::string& text, std::map<std::string, std::string>& out) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string pair = text.substr(start, comma == std::string::npos ? comma : comma - start);
    size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0)
      return Error(ErrorCode::kInvalidArgument, "bad label selector '" + text + "'");
    out[pair.substr(0, eq)] = pair.substr(eq + 1);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return okStatus();
}

// -o X / -oX and -l X / -lX, anywhere; everything else is a word.
Result<Args> parseArgs(const std::vector<std::string>& argv) {
  Args a;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (arg.size() < 2 || arg[0] != '-') {
      a.words.push_back(arg);
      continue;
    }
    std::string flag = arg.substr(0, 2);
    if (flag != "-o" && flag != "-l")
      return Error(ErrorCode::kInvalidArgument, "unknown option " + arg);
    std::string value = arg.substr(2);
    if (value.empty()) {
      if (i + 1 >= argv.size()) return Error(ErrorCode::kInvalidArgument, flag + " needs a value");
      value = argv[++i];
    }
    if (flag == "-l")
      ACCEL_TRY(parseSelector(value, a.selector));
    else if (value == "json" || value == "table")
      a.output = value;
    else
      return Error(ErrorCode::kInvalidArgument, "unsupported output format '" + value + "'");
  }
  return a;
}

bool matches(const ApplianceJob& job, const std::map<std::string, std::string>& selector) {
  for (const auto& [k, v] : selector) {
    auto it = job.labels.find(k);
    if (it == job.labels.end() || it->second != v) return false;
  }
  return true;
}

int runGetJobs(const Args& a, const std::string& dir) {
  if (a.words.size() != 2) return fail(std::string("wrong number of arguments\n") + kUsage, 2);
  auto jobs_dir = jobsDir(dir);
  if (!jobs_dir.ok()) return fail(jobs_dir.error().message());
  auto jobs = loadJobs(*jobs_dir);
  if (!jobs.ok()) return fail(jobs.error().message());
  std::vector<ApplianceJob> picked;
  for (auto& job : *jobs)
    if (matches(job, a.selector)) picked.push_back(std::move(job));
  const double now = nowSeconds();
  if (a.output == "table") {
    std::fputs(jobsTable(picked, now).c_str(), stdout);
    return 0;
  }
  nlohmann::json items = nlohmann::json::array();
  for (const auto& job : picked) items.push_back(jobToApi(job, now));
  std::printf("%s\n", nlohmann::json{{"items", items}}.dump(2).c_str());
  return 0;
}

int runCancel(const Args& a, const std::string& dir) {
  if (a.words.size() != 3) return fail(std::string("wrong number of arguments\n") + kUsage, 2);
  const std::string& id = a.words[2];
  auto before = cancelJob(dir, id, nowSeconds());
  if (!before.ok()) return fail(before.error().message());
  if (phaseEnded(*before)) {
    std::printf("job %s already ended (%s); nothing to cancel\n", id.c_str(), phaseName(*before));
  } else {
    std::printf("job %s cancelled\n", id.c_str());
  }
  return 0;
}

std::string opOf(const std::vector<std::string>& words) {
  if (words.size() >= 2 && words[0] == "get" && words[1] == "jobs") return "get-jobs";
  if (words.size() >= 2 && words[0] == "cancel" && words[1] == "job") return "cancel";
  return words.empty() ? "" : words[0];
}

void printGarbage(const std::string& op) {
  if (op == "get-jobs")
    std::fputs("{\"items\": [{\"name\": \"wsjob-", stdout);
  else
    std::fputs("\x01\x02 <<garbled reply>> \xff\n", stdout);
}

int run(int argc, char** argv) {
  auto dir = stateDir("appliance");
  if (!dir.ok()) return fail("hw_mock: " + dir.error().message());
  logCall(*dir, argc, argv);
  auto args = parseArgs(argList(argc, argv));
  if (!args.ok()) return fail(args.error().message() + "\n" + kUsage, 2);
  const std::string op = opOf(args->words);
  int fault = injectFault(
      {*dir, op, "cannot reach the appliance: connection refused", [&op] { printGarbage(op); }});
  if (fault >= 0) return fault;
  if (op == "get-jobs") return runGetJobs(*args, *dir);
  if (op == "cancel") return runCancel(*args, *dir);
  return fail(std::string("unknown command\n") + kUsage, 2);
}

}  // namespace
}  // namespace accel::hw_mock

int main(int argc, char** argv) { return accel::hw_mock::run(argc, argv); }
