#include "accel/common/text.h"

namespace accel {

bool isCleanText(std::string_view s, std::size_t max_bytes) {
  if (s.size() > max_bytes) return false;
  for (std::size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) return false;
    if (c < 0x80) {
      ++i;
      continue;
    }
    // Lead byte: length of the sequence and the smallest value it may encode
    // (so overlong forms are refused), then the continuation bytes.
    std::size_t len = 0;
    unsigned long cp = 0, min = 0;
    if ((c & 0xe0) == 0xc0) {
      len = 2;
      cp = c & 0x1f;
      min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
      len = 3;
      cp = c & 0x0f;
      min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
      len = 4;
      cp = c & 0x07;
      min = 0x10000;
    } else
      return false;
    if (i + len > s.size()) return false;
    for (std::size_t k = 1; k < len; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += len;
  }
  return true;
}

}  // namespace accel
