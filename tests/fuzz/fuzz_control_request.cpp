// The daemon's request handler on arbitrary bytes, as root and as a user:
// it must answer every input with a verifiable reply and never crash; and
// with a relay, the events call it takes over.
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "accel/agent/job_dir_step.h"
#include "accel/agentd/control_handler.h"
#include "accel/common/safe_file.h"
#include "accel/schemas/control_generated.h"
#include "fake_clock.h"

namespace {

struct World {
  std::string root;
  accel::support::FakeClock clock{1};  // the job manager's, which never moves
  std::unique_ptr<accel::agent::JobManager> manager;
  accel::agentd::HandlerContext ctx;
};

World& world() {
  static World* w = [] {
    auto* x = new World;
    char tmpl[] = "/tmp/accel-fuzz-control-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) std::abort();
    x->root = tmpl;
    (void)accel::makeDirectory(x->root + "/jobs", 0755);
    accel::agent::Inventory inv;
    for (uint32_t i = 0; i < 4; ++i) {
      accel::agent::InventoryDevice d;
      d.slot = {i, i < 2 ? "gpu" : "ipu", i % 2};
      d.name = "dev" + std::to_string(i);
      inv.devices.push_back(d);
    }
    inv.device_distance.assign(4, std::vector<int>(4, 1));
    inv.nic_distance.assign(4, 0);
    std::vector<std::unique_ptr<accel::agent::JobStep>> steps;
    steps.push_back(std::make_unique<accel::agent::JobDirStep>(x->root + "/jobs"));
    x->manager = std::make_unique<accel::agent::JobManager>(
        accel::agent::JobStore(x->root + "/state"), inv, std::move(steps), x->clock);
    if (!x->manager->recover().ok()) std::abort();
    x->ctx.manager = x->manager.get();
    x->ctx.slurm_uid = 64030;
    return x;
  }();
  return *w;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& w = world();
  for (uid_t uid : {0u, 1000u}) {
    auto reply = accel::agentd::handleRequest(w.ctx, accel::agentd::Caller{uid, 1}, {data, size});
    flatbuffers::Verifier v(reply.data(), reply.size());
    if (!v.VerifyBuffer<accel::control::Reply>(nullptr)) std::abort();
  }
  // With a relay, an events or report call is handed over rather than
  // answered: what the relay gets must be what the request says.
  w.ctx.relay_events = true;
  auto routed = accel::agentd::dispatchRequest(w.ctx, accel::agentd::Caller{1000, 1}, {data, size});
  w.ctx.relay_events = false;
  if (routed.relay) {
    const auto* req = accel::control::GetRequest(data);
    const auto* e = req->body_as_EventsRequest();
    const auto* r = req->body_as_ReportRequest();
    if (!routed.reply.empty()) std::abort();
    if (e) {
      if (e->job_id() != routed.relay->job_id || e->follow() != routed.relay->follow ||
          routed.relay->report)
        std::abort();
    } else if (!r || r->job_id() != routed.relay->job_id || !routed.relay->report) {
      std::abort();
    }
  } else {
    flatbuffers::Verifier v(routed.reply.data(), routed.reply.size());
    if (!v.VerifyBuffer<accel::control::Reply>(nullptr)) std::abort();
  }
  // Keep the job table small so every input starts from a similar state.
  for (const auto& j : w.manager->jobs())
    if (!w.manager->epilog(j.spec.job_id).ok()) std::abort();
  return 0;
}
