#include <time.h>

#include <charconv>
#include <nlohmann/json.hpp>
#include <optional>

#include "accel/appliance/csctl_cli.h"

namespace accel::appliance {
namespace {

using nlohmann::json;

bool digits(std::string_view s, size_t at, size_t n, int& out) {
  if (at + n > s.size()) return false;
  auto r = std::from_chars(s.data() + at, s.data() + at + n, out);
  return r.ec == std::errc() && r.ptr == s.data() + at + n;
}

Result<ApplianceState> parseState(const std::string& s) {
  if (s == "QUEUED" || s == "PENDING" || s == "SCHEDULED") return ApplianceState::kQueued;
  if (s == "RUNNING" || s == "INITIALIZING") return ApplianceState::kRunning;
  if (s == "SUCCEEDED" || s == "COMPLETED") return ApplianceState::kSucceeded;
  if (s == "FAILED") return ApplianceState::kFailed;
  if (s == "CANCELLED" || s == "CANCELED") return ApplianceState::kCancelled;
  return Error(ErrorCode::kParse, "unknown job state \"" + s + "\"");
}

Result<int64_t> optionalTime(const json& item, const char* key) {
  auto it = item.find(key);
  if (it == item.end() || it->is_null()) return int64_t{0};
  if (!it->is_string()) return Error(ErrorCode::kParse, std::string(key) + " is not a string");
  auto t = parseRfc3339(it->get<std::string>());
  if (!t.ok()) return t.error().context(key);
  return t;
}

// The Slurm job id label, 0 when absent or not a job id.
uint32_t slurmJobId(const json& item) {
  auto labels = item.find("labels");
  if (labels == item.end() || !labels->is_object()) return 0;
  auto v = labels->find(std::string(kSlurmJobLabel));
  if (v == labels->end() || !v->is_string()) return 0;
  const std::string& s = v->get_ref<const std::string&>();
  uint32_t id = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), id);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return 0;
  return id;
}

// Text from the appliance that goes into logs: at most `max` bytes, each
// byte outside printable ASCII shown as '?'.
std::string printable(std::string text, size_t max) {
  if (text.size() > max) text.resize(max);
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
  return text;
}

// The owner as the appliance reports it: a name and/or a uid. A field of
// the wrong type, a name that is empty, too long or not printable, or a uid
// out of range is taken as not reported.
void readOwner(const json& item, ApplianceJob& job) {
  if (auto user = item.find("user"); user != item.end() && user->is_string()) {
    const auto& name = user->get_ref<const std::string&>();
    bool printable = !name.empty() && name.size() <= kMaxUserNameBytes;
    for (unsigned char c : name) printable = printable && c > 0x20 && c < 0x7f;
    if (printable) job.user = name;
  }
  if (auto uid = item.find("uid"); uid != item.end() && uid->is_number_unsigned()) {
    uint64_t v = uid->get<uint64_t>();
    if (v < 0xffffffffULL) job.uid = static_cast<int64_t>(v);  // (uid_t)-1 is no uid
  }
}

// Everything but the label and the owner; `job.id` is set when the name is valid.
Status readRest(const json& item, ApplianceJob& job) {
  auto name = item.find("name");
  if (name == item.end() || !name->is_string() ||
      !isValidJobId(name->get_ref<const std::string&>()))
    return Error(ErrorCode::kParse, "item without a valid \"name\"");
  job.id = name->get<std::string>();
  auto state = item.find("state");
  if (state == item.end() || !state->is_string()) return Error(ErrorCode::kParse, "no state");
  auto st = parseState(state->get<std::string>());
  if (!st.ok()) return st.error();
  job.state = *st;
  auto systems = item.find("systems");
  if (systems != item.end() && !systems->is_null()) {
    if (!systems->is_number_unsigned() || systems->get<uint64_t>() > 4096)
      return Error(ErrorCode::kParse, "bad \"systems\"");
    job.systems = systems->get<uint32_t>();
  }
  auto c = optionalTime(item, "createTime"), s = optionalTime(item, "startTime"),
       e = optionalTime(item, "endTime");
  for (auto* t : {&c, &s, &e})
    if (!t->ok()) return t->error();
  job.create_ns = *c;
  job.start_ns = *s;
  job.end_ns = *e;
  return okStatus();
}

// An item with a Slurm job label, fully read or marked unreadable; nullopt
// for an item that carries no label (or is not an object).
std::optional<ApplianceJob> parseItem(const json& item) {
  if (!item.is_object()) return std::nullopt;
  ApplianceJob job;
  job.slurm_job_id = slurmJobId(item);
  if (job.slurm_job_id == 0) return std::nullopt;
  readOwner(item, job);
  if (auto s = readRest(item, job); !s.ok()) {
    ApplianceJob kept;  // only what could be read
    kept.id = job.id;
    kept.slurm_job_id = job.slurm_job_id;
    kept.user = job.user;
    kept.uid = job.uid;
    kept.unreadable = printable(s.error().message(), 200);
    return kept;
  }
  return job;
}

}  // namespace

Result<int64_t> parseRfc3339(std::string_view s) {
  tm t{};
  if (!digits(s, 0, 4, t.tm_year) || s.size() < 20 || s[4] != '-' || !digits(s, 5, 2, t.tm_mon) ||
      s[7] != '-' || !digits(s, 8, 2, t.tm_mday) || (s[10] != 'T' && s[10] != ' ') ||
      !digits(s, 11, 2, t.tm_hour) || s[13] != ':' || !digits(s, 14, 2, t.tm_min) || s[16] != ':' ||
      !digits(s, 17, 2, t.tm_sec))
    return Error(ErrorCode::kParse, "bad time \"" + std::string(s.substr(0, 40)) + "\"");
  // Nanoseconds since 1970 in an int64 end in 2262; appliance times are near now.
  if (t.tm_year < 1900 || t.tm_year > 2200 || t.tm_mon < 1 || t.tm_mon > 12 || t.tm_mday < 1 ||
      t.tm_mday > 31 || t.tm_hour > 23 || t.tm_min > 59 || t.tm_sec > 60)
    return Error(ErrorCode::kParse, "time out of range \"" + std::string(s.substr(0, 40)) + "\"");
  size_t i = 19;
  int64_t frac_ns = 0;
  if (i < s.size() && s[i] == '.') {
    int64_t scale = 100000000;
    for (++i; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, scale /= 10)
      frac_ns += (s[i] - '0') * scale;
  }
  int offset_min = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    int hh = 0, mm = 0;
    if (!digits(s, i + 1, 2, hh) || s.size() != i + 6 || s[i + 3] != ':' ||
        !digits(s, i + 4, 2, mm))
      return Error(ErrorCode::kParse,
                   "bad time offset in \"" + std::string(s.substr(0, 40)) + "\"");
    offset_min = (s[i] == '-' ? -1 : 1) * (hh * 60 + mm);
  } else if (i + 1 != s.size() || s[i] != 'Z') {
    return Error(ErrorCode::kParse, "bad time zone in \"" + std::string(s.substr(0, 40)) + "\"");
  }
  t.tm_year -= 1900;
  t.tm_mon -= 1;
  time_t secs = ::timegm(&t);
  return (static_cast<int64_t>(secs) - offset_min * 60LL) * 1000000000LL + frac_ns;
}

Result<std::vector<ApplianceJob>> parseCsctlJobs(std::string_view text) {
  auto doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return Error(ErrorCode::kParse, "not a JSON object");
  auto items = doc.find("items");
  if (items == doc.end() || !(items->is_array() || items->is_null()))
    return Error(ErrorCode::kParse, "no \"items\" list");
  std::vector<ApplianceJob> out;
  if (items->is_null()) return out;
  if (items->size() > kMaxListedJobs)
    return Error(ErrorCode::kParse, std::to_string(items->size()) + " items, more than " +
                                        std::to_string(kMaxListedJobs) + " are not read");
  for (const auto& item : *items)
    if (auto job = parseItem(item)) out.push_back(std::move(*job));
  return out;
}

}  // namespace accel::appliance
