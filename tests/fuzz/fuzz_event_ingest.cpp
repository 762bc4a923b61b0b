// The aggregator's ingest path on arbitrary bytes: decode (verify first) and
// Ingestor::offer/commit into a real SQLite store. Nothing may crash, and a
// buffer the decoder accepts must re-encode to one that decodes the same.
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "accel/aggregator/ingest.h"
#include "accel/common/safe_file.h"
#include "accel/events/codec.h"

namespace {

struct World {
  accel::aggregator::Metrics metrics;
  std::unique_ptr<accel::aggregator::Store> store;
  std::unique_ptr<accel::aggregator::Ingestor> ingestor;
};

World& world() {
  static World* w = [] {
    auto* x = new World;
    char tmpl[] = "/tmp/accel-fuzz-ingest-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) std::abort();
    auto store = accel::aggregator::Store::open(std::string(tmpl) + "/events.db",
                                                accel::aggregator::Store::Mode::kReadWrite);
    if (!store.ok()) std::abort();
    x->store = std::move(store).value();
    x->ingestor = std::make_unique<accel::aggregator::Ingestor>(*x->store, x->metrics, 64 * 1024);
    if (!x->ingestor->load().ok()) std::abort();
    return x;
  }();
  return *w;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  auto env = accel::event::decode(bytes);
  if (env.ok() && env->event) {
    auto again = accel::event::decode(accel::event::encode(env->header, *env->event));
    if (!again.ok() || !(again->header == env->header) || !(again->event == env->event))
      std::abort();
  }
  auto& w = world();
  (void)w.ingestor->offer("", bytes, 1);
  if (!w.ingestor->commit(2).ok()) std::abort();
  return 0;
}
