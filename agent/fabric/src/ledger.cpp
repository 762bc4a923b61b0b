#include "accel/fabric/ledger.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

namespace accel::fabric {
namespace {

using json = nlohmann::json;
constexpr int kVersion = 1;

Error bad(const std::string& what) { return Error(ErrorCode::kParse, "fabric ledger: " + what); }

// The object's keys must be exactly `keys`.
Status exactKeys(const json& j, std::initializer_list<const char*> keys, const std::string& what) {
  if (!j.is_object()) return bad(what + " is not an object");
  for (const char* key : keys) {
    if (!j.contains(key)) return bad(what + " lacks \"" + key + "\"");
  }
  if (j.size() != keys.size()) return bad(what + " has an unknown key");
  return okStatus();
}

Result<uint64_t> number(const json& j, const char* key, uint64_t max, const std::string& what) {
  const json& v = j.at(key);
  if (!v.is_number_unsigned() || v.get<uint64_t>() > max) {
    return bad(what + ": \"" + key + "\" is not an integer in 0.." + std::to_string(max));
  }
  return v.get<uint64_t>();
}

Result<bool> boolean(const json& j, const char* key, const std::string& what) {
  if (!j.at(key).is_boolean()) return bad(what + ": \"" + key + "\" is not true or false");
  return j.at(key).get<bool>();
}

Result<std::string> nicName(const json& j, const char* key, const std::string& what) {
  const json& v = j.at(key);
  if (!v.is_string()) return bad(what + ": \"" + key + "\" is not a string");
  auto name = v.get<std::string>();
  // IFNAMSIZ is 16 with the terminating NUL; '/' and blanks never occur.
  if (name.empty() || name.size() > 15 || name.find_first_of("/ \t\n:") != std::string::npos) {
    return bad(what + ": \"" + name + "\" is not an interface name");
  }
  return name;
}

Result<Ipv4Cidr> cidr(const json& v, const std::string& what, bool network) {
  if (!v.is_string()) return bad(what + " is not a string");
  auto parsed = network ? parseNetwork(v.get<std::string>()) : parseCidr(v.get<std::string>());
  if (!parsed.ok()) return bad(what + ": " + parsed.error().message());
  return parsed;
}

json encodeNic(const LedgerNic& nic) {
  json routes = json::array();
  for (const auto& r : nic.routes) routes.push_back(formatCidr(r));
  return {{"name", nic.name},
          {"ifindex", nic.ifindex},
          {"mtu", nic.original_mtu},
          {"up", nic.original_up},
          {"promote_secondaries", nic.original_promote_secondaries},
          {"routes", routes}};
}

json encodeJob(const LedgerJob& job) {
  json nics = json::array();
  for (const auto& n : job.nics) {
    nics.push_back(
        {{"nic", n.nic}, {"address", n.address ? json(formatCidr(*n.address)) : json(nullptr)}});
  }
  return {{"job", job.job_id}, {"nics", nics}};
}

Result<LedgerNic> decodeNic(const json& j) {
  ACCEL_TRY(exactKeys(j, {"name", "ifindex", "mtu", "up", "promote_secondaries", "routes"}, "nic"));
  auto name = nicName(j, "name", "nic");
  if (!name.ok()) return name.error();
  const std::string what = "nic " + *name;
  auto ifindex = number(j, "ifindex", 0x7fffffff, what);
  if (!ifindex.ok()) return ifindex.error();
  if (*ifindex == 0) return bad(what + ": ifindex 0");
  auto mtu = number(j, "mtu", 0xffffffff, what);
  if (!mtu.ok()) return mtu.error();
  auto up = boolean(j, "up", what);
  if (!up.ok()) return up.error();
  auto promote = boolean(j, "promote_secondaries", what);
  if (!promote.ok()) return promote.error();
  LedgerNic nic{*name, static_cast<int>(*ifindex), static_cast<uint32_t>(*mtu), *up, *promote, {}};
  if (!j.at("routes").is_array()) return bad(what + ": \"routes\" is not a list");
  for (const auto& r : j.at("routes")) {
    auto route = cidr(r, what + ": route", true);
    if (!route.ok()) return route.error();
    nic.routes.push_back(*route);
  }
  return nic;
}

Result<LedgerJobNic> decodeJobNic(const json& j, const std::string& what) {
  ACCEL_TRY(exactKeys(j, {"nic", "address"}, what));
  LedgerJobNic out;
  auto name = nicName(j, "nic", what);
  if (!name.ok()) return name.error();
  out.nic = *name;
  if (!j.at("address").is_null()) {
    auto address = cidr(j.at("address"), what + ": address", false);
    if (!address.ok()) return address.error();
    out.address = *address;
  }
  return out;
}

Result<LedgerJob> decodeJob(const json& j) {
  ACCEL_TRY(exactKeys(j, {"job", "nics"}, "job"));
  auto id = number(j, "job", 0xffffffff, "job");
  if (!id.ok()) return id.error();
  LedgerJob job;
  job.job_id = static_cast<uint32_t>(*id);
  const std::string what = "job " + std::to_string(job.job_id);
  if (!j.at("nics").is_array()) return bad(what + ": \"nics\" is not a list");
  for (const auto& n : j.at("nics")) {
    auto nic = decodeJobNic(n, what);
    if (!nic.ok()) return nic.error();
    job.nics.push_back(*nic);
  }
  return job;
}

// Cross-record rules: unique NIC names and job ids, unique addresses, every
// job NIC held in "nics", and every held NIC used by some job.
Status checkConsistent(const Ledger& ledger) {
  std::set<std::string> nic_names;
  for (const auto& nic : ledger.nics) {
    if (!nic_names.insert(nic.name).second) return bad("nic " + nic.name + " appears twice");
    if (ledger.users(nic.name) == 0) return bad("nic " + nic.name + " is held by no job");
  }
  std::set<uint32_t> ids;
  std::set<uint32_t> addresses;
  for (const auto& job : ledger.jobs) {
    const std::string what = "job " + std::to_string(job.job_id);
    if (!ids.insert(job.job_id).second) return bad(what + " appears twice");
    std::set<std::string> names;
    for (const auto& n : job.nics) {
      if (!names.insert(n.nic).second) return bad(what + ": nic " + n.nic + " appears twice");
      if (nic_names.count(n.nic) == 0) return bad(what + ": nic " + n.nic + " is not held");
      if (n.address && !addresses.insert(n.address->address).second) {
        return bad(what + ": address " + formatCidr(*n.address) + " is held twice");
      }
    }
  }
  return okStatus();
}

}  // namespace

const LedgerJob* Ledger::job(uint32_t job_id) const {
  for (const auto& j : jobs) {
    if (j.job_id == job_id) return &j;
  }
  return nullptr;
}

const LedgerNic* Ledger::nic(const std::string& name) const {
  for (const auto& n : nics) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

LedgerNic* Ledger::nic(const std::string& name) {
  return const_cast<LedgerNic*>(static_cast<const Ledger*>(this)->nic(name));
}

size_t Ledger::users(const std::string& name, std::optional<uint32_t> except) const {
  size_t count = 0;
  for (const auto& j : jobs) {
    if (except && j.job_id == *except) continue;
    for (const auto& n : j.nics) count += n.nic == name ? 1 : 0;
  }
  return count;
}

std::vector<uint32_t> Ledger::addresses() const {
  std::vector<uint32_t> out;
  for (const auto& j : jobs) {
    for (const auto& n : j.nics) {
      if (n.address) out.push_back(n.address->address);
    }
  }
  return out;
}

void Ledger::removeJob(uint32_t job_id) {
  std::erase_if(jobs, [&](const LedgerJob& j) { return j.job_id == job_id; });
}

void Ledger::removeNic(const std::string& name) {
  std::erase_if(nics, [&](const LedgerNic& n) { return n.name == name; });
}

void Ledger::sort() {
  std::sort(nics.begin(), nics.end(),
            [](const LedgerNic& a, const LedgerNic& b) { return a.name < b.name; });
  std::sort(jobs.begin(), jobs.end(),
            [](const LedgerJob& a, const LedgerJob& b) { return a.job_id < b.job_id; });
}

std::string encodeLedger(const Ledger& ledger) {
  json nics = json::array();
  for (const auto& nic : ledger.nics) nics.push_back(encodeNic(nic));
  json jobs = json::array();
  for (const auto& job : ledger.jobs) jobs.push_back(encodeJob(job));
  json doc = {{"version", kVersion}, {"nics", nics}, {"jobs", jobs}};
  return doc.dump(1) + "\n";
}

Result<Ledger> decodeLedger(std::string_view text) {
  json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return bad("not JSON (garbage or truncated)");
  ACCEL_TRY(exactKeys(doc, {"version", "nics", "jobs"}, "ledger"));
  if (!doc.at("version").is_number_unsigned() || doc.at("version").get<uint64_t>() != kVersion) {
    return bad("version is not " + std::to_string(kVersion));
  }
  if (!doc.at("nics").is_array() || !doc.at("jobs").is_array()) {
    return bad("\"nics\" and \"jobs\" must be lists");
  }
  Ledger ledger;
  for (const auto& n : doc.at("nics")) {
    auto nic = decodeNic(n);
    if (!nic.ok()) return nic.error();
    ledger.nics.push_back(std::move(*nic));
  }
  for (const auto& j : doc.at("jobs")) {
    auto job = decodeJob(j);
    if (!job.ok()) return job.error();
    ledger.jobs.push_back(std::move(*job));
  }
  ACCEL_TRY(checkConsistent(ledger));
  ledger.sort();
  return ledger;
}

}  // namespace accel::fabric
