// accel-config-doc [OUTPUT]: writes the configuration reference to OUTPUT, or
// to standard output without an argument. Only dispatches; the rendering is
// renderConfigReference() in accel_common, which the unit tests check.
#include <cstdio>
#include <string>

#include "accel/common/config_doc.h"

int main(int argc, char** argv) {
  if (argc > 2) {
    std::fprintf(stderr, "usage: %s [OUTPUT]\n", argv[0]);
    return 2;
  }
  const std::string text = accel::renderConfigReference();
  std::FILE* out = argc == 2 ? std::fopen(argv[1], "w") : stdout;
  if (out == nullptr) {
    std::perror(argv[1]);
    return 1;
  }
  bool ok = std::fwrite(text.data(), 1, text.size(), out) == text.size();
  ok = (argc == 2 ? std::fclose(out) : std::fflush(out)) == 0 && ok;
  if (!ok) {
    std::fprintf(stderr, "%s: write failed\n", argv[0]);
    return 1;
  }
  return 0;
}
