// The spool's recovery reader on arbitrary segment bytes: it must never
// crash, never claim more bytes than it got, and its good prefix must scan
// the same again (what recovery keeps is stable).
#include <cstdint>
#include <cstdlib>

#include "accel/events/spool_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  auto scan = accel::event::scanSegment(bytes);
  if (scan.valid_bytes > size || scan.torn != (scan.valid_bytes < size)) std::abort();
  auto again = accel::event::scanSegment(bytes.first(scan.valid_bytes));
  if (again.torn || again.records != scan.records) std::abort();
  return 0;
}
