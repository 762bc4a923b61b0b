// accel.conf and vipu.conf parsing on arbitrary text: a complete config or
// an error message naming the file, never a crash.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "accel/common/config.h"
#include "accel/common/vipu_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto a = accel::parseAccelConfig(text, "accel.conf");
  if (!a.ok() && a.error().message().rfind("accel.conf", 0) != 0) std::abort();
  auto v = accel::parseVipuConfig(text, "vipu.conf");
  if (!v.ok() && v.error().message().rfind("vipu.conf", 0) != 0) std::abort();
  return 0;
}
