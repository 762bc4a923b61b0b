// Fake `vipu`: the V-IPU controller's command-line client, with the
// controller's partition pool kept in <state>/vipu/. See ../README.md.
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fake_state.h"
#include "faults.h"
#include "vipu_pool.h"

namespace accel::hw_mock {
namespace {

// Options every verb accepts, anywhere on the command line, and whether
// each takes a value.
const std::map<std::string, bool> kGlobalOptions = {
    {"--api-host", true},       {"--api-port", true},       {"--api-timeout", true},
    {"--api-user", true},       {"--api-access-key", true}, {"--api-client-cert", true},
    {"--api-client-key", true}, {"--api-server-cert", true}};

struct Args {
  std::vector<std::string> words;             // positionals
  std::map<std::string, std::string> values;  // options with a value
  std::set<std::string> flags;                // options without one
  std::string get(const std::string& k, const std::string& dflt = "") const {
    auto it = values.find(k);
    return it == values.end() ? dflt : it->second;
  }
};

struct Verb {
  const char* op;
  const char* object;
  std::map<std::string, bool> options;  // verb-specific, as kGlobalOptions
  int (*run)(const Args&, const std::string& dir);
};

bool toInt(const std::string& s, int& out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size();
}

Result<Pool> loadPool(const std::string& dir) {
  int capacity = kDefaultPoolSize;
  auto size_file = readText(dir + "/pool_size");
  if (!size_file.ok()) return size_file.error();
  if (size_file->exists) {
    std::string t = size_file->text;
    while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
    if (!toInt(t, capacity) || capacity < 0)
      return Error(ErrorCode::kParse, dir + "/pool_size: not a number: " + t);
  }
  auto parts = readText(dir + "/partitions.json");
  if (!parts.ok()) return parts.error();
  return parsePool(parts->text, capacity);
}

int runCreate(const Args& a, const std::string& dir) {
  const std::string& name = a.words[2];
  int size = 0, gcds = 1, replicas = 1;
  if (!toInt(a.get("--size"), size)) return fail("create partition needs --size N (an integer)");
  if (!toInt(a.get("--num-gcds", "1"), gcds)) return fail("--num-gcds must be an integer");
  if (!toInt(a.get("--num-replicas", "1"), replicas))
    return fail("--num-replicas must be an integer");
  auto lock = StateLock::acquire(dir);
  if (!lock.ok()) return fail(lock.error().message());
  auto pool = loadPool(dir);
  if (!pool.ok()) return fail(pool.error().message());
  if (auto s = addPartition(*pool, name, size, gcds, replicas); !s.ok())
    return fail(s.error().message());
  if (auto s = writeText(dir + "/partitions.json", poolToJson(*pool)); !s.ok())
    return fail(s.error().message());
  std::printf("create partition %s: success (%d IPUs, %d GCDs, %d replicas)\n", name.c_str(), size,
              gcds, replicas);
  return 0;
}

int runRemove(const Args& a, const std::string& dir) {
  const std::string& name = a.words[2];
  auto lock = StateLock::acquire(dir);
  if (!lock.ok()) return fail(lock.error().message());
  auto pool = loadPool(dir);
  if (!pool.ok()) return fail(pool.error().message());
  if (!removePartition(*pool, name)) return fail("partition '" + name + "' not found");
  if (auto s = writeText(dir + "/partitions.json", poolToJson(*pool)); !s.ok())
    return fail(s.error().message());
  std::printf("remove partition %s: success\n", name.c_str());
  return 0;
}

int runList(const Args& a, const std::string& dir) {
  auto pool = loadPool(dir);
  if (!pool.ok()) return fail(pool.error().message());
  if (a.flags.count("--json") != 0) {
    std::printf("%s\n", partitionList(*pool).dump(2).c_str());
  } else {
    std::fputs(partitionTable(*pool).c_str(), stdout);
  }
  return 0;
}

int runGet(const Args& a, const std::string& dir) {
  const std::string& name = a.words[2];
  auto pool = loadPool(dir);
  if (!pool.ok()) return fail(pool.error().message());
  const Partition* p = findPartition(*pool, name);
  if (p == nullptr) return fail("partition '" + name + "' not found");
  if (a.flags.count("--ipu-configs") == 0) {
    std::fputs(partitionTable(Pool{pool->capacity, {*p}}).c_str(), stdout);
    return 0;
  }
  int port = 8090;
  (void)toInt(a.get("--api-port", "8090"), port);
  std::printf("%s\n", ipuofConfigs(*p, a.get("--api-host", "localhost"), port).dump(2).c_str());
  return 0;
}

const std::vector<Verb> kVerbs = {
    {"create",
     "partition",
     {{"--size", true}, {"--num-gcds", true}, {"--num-replicas", true}},
     runCreate},
    {"remove", "partition", {}, runRemove},
    {"list", "partitions", {{"--json", false}}, runList},
    {"get", "partition", {{"--ipu-configs", false}}, runGet},
};

constexpr const char* kUsage =
    "usage: vipu [--api-host H] [--api-port P] [--api-timeout S] [secure options] COMMAND\n"
    "  create partition NAME --size N [--num-gcds G] [--num-replicas R]\n"
    "  remove partition NAME\n"
    "  list partitions [--json]\n"
    "  get partition NAME [--ipu-configs]\n";

const Verb* findVerb(const std::vector<std::string>& words) {
  if (words.size() < 2) return nullptr;
  for (const auto& v : kVerbs)
    if (words[0] == v.op && words[1] == v.object) return &v;
  return nullptr;
}

// -1: unknown option; 0: a flag; 1: takes a value.
int optionKind(const std::string& name) {
  if (auto it = kGlobalOptions.find(name); it != kGlobalOptions.end()) return it->second ? 1 : 0;
  for (const auto& v : kVerbs)
    if (auto it = v.options.find(name); it != v.options.end()) return it->second ? 1 : 0;
  return -1;
}

Result<Args> parseArgs(const std::vector<std::string>& argv) {
  Args a;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (!arg.starts_with("--")) {
      a.words.push_back(arg);
      continue;
    }
    auto eq = arg.find('=');
    std::string name = arg.substr(0, eq);
    int kind = optionKind(name);
    if (kind < 0) return Error(ErrorCode::kInvalidArgument, "unknown option " + name);
    if (kind == 0) {
      a.flags.insert(name);
      continue;
    }
    if (eq != std::string::npos) {
      a.values[name] = arg.substr(eq + 1);
      continue;
    }
    if (i + 1 >= argv.size()) return Error(ErrorCode::kInvalidArgument, name + " needs a value");
    a.values[name] = argv[++i];
  }
  return a;
}

// Options the verb does not take are refused, like the real client does.
Status checkOptionsFit(const Args& a, const Verb& verb) {
  auto fits = [&](const std::string& name) {
    return kGlobalOptions.count(name) != 0 || verb.options.count(name) != 0;
  };
  for (const auto& [name, value] : a.values)
    if (!fits(name)) return Error(ErrorCode::kInvalidArgument, "unknown option " + name);
  for (const auto& name : a.flags)
    if (!fits(name)) return Error(ErrorCode::kInvalidArgument, "unknown option " + name);
  int number = 0;
  if (a.values.count("--api-port") != 0 &&
      (!toInt(a.get("--api-port"), number) || number < 1 || number > 65535))
    return Error(ErrorCode::kInvalidArgument, "--api-port must be 1..65535");
  if (a.values.count("--api-timeout") != 0 &&
      (!toInt(a.get("--api-timeout"), number) || number < 1))
    return Error(ErrorCode::kInvalidArgument,
                 "--api-timeout must be a whole number of seconds >= 1");
  size_t want = verb.object == std::string("partitions") ? 2 : 3;
  if (a.words.size() != want)
    return Error(ErrorCode::kInvalidArgument, "wrong number of arguments");
  return okStatus();
}

// Certificate and key files must be readable whether or not the controller is secure.
Status checkSecureFiles(const Args& a) {
  for (const char* opt : {"--api-client-cert", "--api-client-key", "--api-server-cert"}) {
    auto it = a.values.find(opt);
    if (it == a.values.end()) continue;
    if (::access(it->second.c_str(), R_OK) != 0)
      return sysError(std::string(opt) + ": cannot read '" + it->second + "'", errno);
  }
  return okStatus();
}

// <dir>/secure puts the fake controller in secure mode. Optional lines
// `user=U` and `access-key=K` in it are the only credentials it accepts.
// Like the real client, the access key may also come from the environment
// (VIPU_CLI_API_ACCESS_KEY), which keeps it out of `ps` output.
Status checkSecureMode(const Args& given, const std::string& dir) {
  Args a = given;
  if (const char* key = std::getenv("VIPU_CLI_API_ACCESS_KEY");
      key && a.values.count("--api-access-key") == 0)
    a.values["--api-access-key"] = key;
  auto secure = readText(dir + "/secure");
  if (!secure.ok()) return secure.error();
  if (!secure->exists) return okStatus();
  std::string missing;
  for (const char* opt : {"--api-user", "--api-access-key", "--api-client-cert", "--api-client-key",
                          "--api-server-cert"})
    if (a.values.count(opt) == 0) missing += std::string(missing.empty() ? "" : ", ") + opt;
  if (!missing.empty())
    return Error(ErrorCode::kPermissionDenied,
                 "the V-IPU controller runs in secure mode; missing " + missing);
  const std::string& text = secure->text;
  for (const auto& [key, opt] :
       {std::pair{"user=", "--api-user"}, std::pair{"access-key=", "--api-access-key"}}) {
    auto pos = text.find(key);
    if (pos == std::string::npos) continue;
    auto end = text.find('\n', pos);
    std::string want = text.substr(
        pos + std::string(key).size(),
        end == std::string::npos ? std::string::npos : end - pos - std::string(key).size());
    if (a.get(opt) != want)
      return Error(ErrorCode::kPermissionDenied,
                   "authentication failed for user '" + a.get("--api-user") + "'");
  }
  return okStatus();
}

void printGarbage(const std::string& op) {
  if (op == "list") {
    std::fputs("[{\"id\": \"p\x01\x7f, \"size\": ", stdout);
  } else if (op == "get") {
    std::fputs("{\"partition\": \"", stdout);
  } else {
    std::fputs("\x01\x02#@! unexpected reply \xff\xfe\n", stdout);
  }
}

int run(int argc, char** argv) {
  auto dir = stateDir("vipu");
  if (!dir.ok()) return fail("hw_mock: " + dir.error().message());
  logCall(*dir, argc, argv);
  auto args = parseArgs(argList(argc, argv));
  if (!args.ok()) return fail(args.error().message() + "\n" + kUsage, 2);
  const std::string op = args->words.empty() ? "" : args->words[0];
  const std::string where =
      args->get("--api-host", "localhost") + ":" + args->get("--api-port", "8090");
  int fault = injectFault(
      {*dir, op, "cannot connect to the V-IPU controller at " + where + ": connection refused",
       [&op] { printGarbage(op); }});
  if (fault >= 0) return fault;
  const Verb* verb = findVerb(args->words);
  if (verb == nullptr) return fail(std::string("unknown command\n") + kUsage, 2);
  if (auto s = checkOptionsFit(*args, *verb); !s.ok())
    return fail(s.error().message() + "\n" + kUsage, 2);
  if (auto s = checkSecureFiles(*args); !s.ok()) return fail(s.error().message());
  if (auto s = checkSecureMode(*args, *dir); !s.ok()) return fail(s.error().message());
  return verb->run(*args, *dir);
}

}  // namespace
}  // namespace accel::hw_mock

int main(int argc, char** argv) { return accel::hw_mock::run(argc, argv); }
