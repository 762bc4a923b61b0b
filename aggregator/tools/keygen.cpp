// accel-keygen BASE...: makes one CURVE key pair per BASE, written to
// BASE.key (secret, mode 0600) and BASE.pub (public, mode 0644). Existing
// files are never overwritten. For a node, BASE is the node's name, and its
// .pub goes into the aggregator's AllowListDir.
#include <cstdio>
#include <string>

#include "accel/events/curve_keys.h"

int main(int argc, char** argv) {
  if (argc >= 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
    std::printf(
        "usage: accel-keygen BASE...\n\n"
        "Makes one CURVE key pair per BASE: BASE.key (secret, mode 0600) and BASE.pub (public, "
        "mode 0644),\n"
        "and prints each public key. Existing files are never overwritten; BASE's directory must "
        "exist.\n"
        "  BASE   e.g. /etc/accel-agent/aggregator on the aggregator host, /etc/accel-agent/node "
        "on a node\n");
    return 0;
  }
  if (argc < 2) {
    std::fprintf(
        stderr,
        "usage: accel-keygen BASE...   (writes BASE.key and BASE.pub; see accel-keygen --help)\n");
    return 2;
  }
  for (int i = 1; i < argc; ++i) {
    auto keys = accel::event::generateCurveKeyPair();
    if (!keys.ok()) {
      std::fprintf(stderr, "accel-keygen: %s\n", keys.error().message().c_str());
      return 1;
    }
    accel::Status s = accel::event::writeKeyPair(argv[i], *keys);
    if (!s.ok()) {
      std::fprintf(stderr, "accel-keygen: %s\n", s.error().message().c_str());
      return 1;
    }
    std::printf("%s.pub %s\n", argv[i], keys->public_key.c_str());
  }
  return 0;
}
