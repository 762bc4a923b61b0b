// Persisted job records on arbitrary text (a damaged state file): decode
// succeeds or fails cleanly; what decodes re-encodes to an equal record.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "accel/agent/job_record.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = accel::agent::decodeRecord(text);
  if (!r.ok()) return 0;
  auto again = accel::agent::decodeRecord(accel::agent::encodeRecord(*r));
  if (!again.ok() || accel::agent::encodeRecord(*again) != accel::agent::encodeRecord(*r))
    std::abort();
  return 0;
}
