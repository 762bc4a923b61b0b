#include "accel/agentd/telemetry_hooks.h"

#include "accel/agentd/node_telemetry.h"

namespace accel::agentd {

void telemetryAtProlog(const HandlerContext& ctx, const agent::JobRecord& record) {
  if (ctx.telemetry == nullptr || !ctx.telemetry->loaded() || record.devices.empty()) return;
  ctx.telemetry->jobStarted(record.spec.job_id,
                            devicesOf(ctx.manager->deviceUse(), record.devices));
}

std::optional<event::GpuFigures> telemetryAtEpilog(const HandlerContext& ctx, uint32_t job_id) {
  if (ctx.telemetry == nullptr || !ctx.telemetry->loaded()) return std::nullopt;
  auto figures = ctx.telemetry->jobEnded(job_id);
  ctx.telemetry->reportStrays(ctx.health);
  if (!figures) return std::nullopt;
  return eventFigures(*figures);
}

flatbuffers::Offset<control::TelemetryStatus> telemetryStatus(flatbuffers::FlatBufferBuilder& fbb,
                                                              const HandlerContext& ctx) {
  if (ctx.telemetry == nullptr) return 0;
  ctx.telemetry->reportStrays(ctx.health);
  const TelemetryStatusView v = ctx.telemetry->status();
  return control::CreateTelemetryStatusDirect(
      fbb, v.loaded, v.reason.c_str(), v.source.c_str(), static_cast<uint64_t>(v.interval.count()),
      v.state.samples, v.state.failures, v.state.cpu_ns, v.state.last_error.c_str(),
      static_cast<uint32_t>(v.state.jobs), v.strays);
}

}  // namespace accel::agentd
