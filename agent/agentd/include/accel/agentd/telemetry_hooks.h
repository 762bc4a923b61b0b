#pragma once
// What the control handlers do with GPU telemetry (node_telemetry.h), kept
// apart from control_handler.cpp: the prolog registers a job's GPUs, the
// epilog ends the job and hands its figures to its EpilogFinished, and the
// status reply carries the sampler's state. Each does nothing when the
// context has no telemetry.
#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <optional>

#include "accel/agent/job_record.h"
#include "accel/agentd/control_handler.h"
#include "accel/events/event.h"
#include "accel/schemas/control_generated.h"

namespace accel::agentd {

// After a prolog that succeeded: registers the record's GPUs. Never waits
// on the telemetry source.
void telemetryAtProlog(const HandlerContext& ctx, const agent::JobRecord& record);

// At the epilog, before the job's devices are released: the job's figures
// (after at most NodeTelemetry::endWait()), and any stray process found so
// far reported. Unset: no telemetry, or the job held no GPU here.
std::optional<event::GpuFigures> telemetryAtEpilog(const HandlerContext& ctx, uint32_t job_id);

// StatusInfo's `telemetry`; reports strays found since the last call first.
flatbuffers::Offset<control::TelemetryStatus> telemetryStatus(flatbuffers::FlatBufferBuilder& fbb,
                                                              const HandlerContext& ctx);

}  // namespace accel::agentd
