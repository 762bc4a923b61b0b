// The hwloc XML loading path and our classification on arbitrary text.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "accel/topology/loader.h"
#include "accel/topology/render.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view xml(reinterpret_cast<const char*>(data), size);
  auto t = accel::topology::loadTopologyFromXmlText(xml, "fuzz");
  if (t.ok()) (void)accel::topology::renderJson(*t);
  return 0;
}
