// accel-config-doc [OUTPUT]: writes the configuration reference to OUTPUT, or
// to standard output without an argument. Only dispatches; the rendering is
// renderConfigReference() in accel_common, which the unit tests check.
#include <cstdio>
#include <string>

#include "accel/common/config_doc.h"

int main(int argc, char** argv) {
  if (argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
    std::printf(
        "usage: %s [OUTPUT]\nWrites the configuration reference (docs/config-reference.md) to "
        "OUTPUT,\n"
        "or to standard output.\n",
        argv[0]);
    return 0;
  }
  // An option is never taken for a file name to write over.
  if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
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
