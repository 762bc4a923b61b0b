#include <nlohmann/json.hpp>

#include "accel/ipu/vipu_cli.h"

namespace accel::ipu {

Result<std::vector<GcdConfig>> parseIpuConfigs(std::string_view text, std::string_view name) {
  auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return Error(ErrorCode::kParse, "not a JSON object");
  auto p = doc.find("partition");
  if (p == doc.end() || !p->is_string() || p->get<std::string>() != name)
    return Error(ErrorCode::kParse, "answer is not about partition " + std::string(name));
  auto g = doc.find("gcds");
  if (g == doc.end() || !g->is_array() || g->empty())
    return Error(ErrorCode::kParse, "no \"gcds\" list");
  if (g->size() > 4096) return Error(ErrorCode::kParse, "too many GCDs");
  std::vector<GcdConfig> out(g->size());
  std::vector<bool> seen(g->size(), false);
  for (const auto& entry : *g) {
    if (!entry.is_object()) return Error(ErrorCode::kParse, "GCD entry is not an object");
    auto idx = entry.find("gcd");
    auto cfg = entry.find("config");
    if (idx == entry.end() || !idx->is_number_unsigned())
      return Error(ErrorCode::kParse, "GCD entry without a \"gcd\" index");
    if (cfg == entry.end() || !cfg->is_object())
      return Error(ErrorCode::kParse, "GCD entry without a \"config\" object");
    auto i = idx->get<uint64_t>();
    if (i >= out.size() || seen[i])
      return Error(ErrorCode::kParse,
                   "GCD index " + std::to_string(i) + " out of order or repeated");
    seen[i] = true;
    out[i] = GcdConfig{static_cast<uint32_t>(i), cfg->dump(2) + "\n"};
  }
  return out;
}

}  // namespace accel::ipu
