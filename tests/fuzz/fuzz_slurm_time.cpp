// Slurm time formats on arbitrary text; whatever parses must format and
// parse back to the same duration.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "accel/common/slurm_time.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto d = accel::parseSlurmTime(text);
  if (!d.ok()) return 0;
  auto again = accel::parseSlurmTime(accel::formatSlurmTime(*d));
  if (!again.ok() || !(*again == *d)) std::abort();
  return 0;
}
