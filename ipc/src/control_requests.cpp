#include "accel/ipc/control_requests.h"

#include <flatbuffers/flatbuffers.h>

#include "accel/schemas/control_generated.h"

namespace accel::ipc {
namespace {

namespace fb = accel::control;

// Wraps the body in a Request (version 1) and returns the finished buffer.
std::vector<uint8_t> finish(flatbuffers::FlatBufferBuilder& fbb, fb::RequestBody kind,
                            flatbuffers::Offset<void> body) {
  fbb.Finish(fb::CreateRequest(fbb, 1, kind, body), fb::RequestIdentifier());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

}  // namespace

std::vector<uint8_t> encodePrologRequest(const JobSpecFields& j) {
  flatbuffers::FlatBufferBuilder fbb(512 + j.node_list.size());
  auto spec = fb::CreateJobSpecDirect(
      fbb, j.job_id, j.uid, j.gid, j.user.c_str(), j.node.c_str(), j.partition.c_str(),
      j.gpus.c_str(), j.ipus, j.num_replicas, j.ntasks, j.appliance_time_sec, j.appliance_signal,
      j.appliance_signal_lead_sec, j.node_list.c_str(), j.node_count,
      j.refusal.empty() ? nullptr : j.refusal.c_str(), j.appliance_signal_batch, j.restart_count);
  return finish(fbb, fb::RequestBody::PrologRequest, fb::CreatePrologRequest(fbb, spec).Union());
}

std::vector<uint8_t> encodeEpilogRequest(uint32_t job_id, uint32_t uid) {
  flatbuffers::FlatBufferBuilder fbb(128);
  return finish(fbb, fb::RequestBody::EpilogRequest,
                fb::CreateEpilogRequest(fbb, job_id, uid).Union());
}

std::vector<uint8_t> encodeStatusRequest() {
  flatbuffers::FlatBufferBuilder fbb(128);
  return finish(fbb, fb::RequestBody::StatusRequest, fb::CreateStatusRequest(fbb).Union());
}

std::vector<uint8_t> encodeJobsRequest() {
  flatbuffers::FlatBufferBuilder fbb(128);
  return finish(fbb, fb::RequestBody::JobsRequest, fb::CreateJobsRequest(fbb).Union());
}

std::vector<uint8_t> encodeJobRequest(uint32_t job_id) {
  flatbuffers::FlatBufferBuilder fbb(64);
  return finish(fbb, fb::RequestBody::JobRequest, fb::CreateJobRequest(fbb, job_id).Union());
}

std::vector<uint8_t> encodeTaskRequest(uint32_t job_id, uint32_t step_id, int32_t pid,
                                       uint64_t start_ticks, TaskEventKind kind,
                                       int32_t exit_status) {
  flatbuffers::FlatBufferBuilder fbb(96);
  auto k = kind == TaskEventKind::kStarted ? fb::TaskEventKind::Started : fb::TaskEventKind::Exited;
  return finish(
      fbb, fb::RequestBody::TaskRequest,
      fb::CreateTaskRequest(fbb, job_id, step_id, pid, start_ticks, k, exit_status).Union());
}

std::vector<uint8_t> encodeStepRequest(uint32_t job_id, uint32_t step_id, StepEventKind kind,
                                       int32_t exit_code) {
  flatbuffers::FlatBufferBuilder fbb(64);
  auto k = kind == StepEventKind::kStarted ? fb::StepEventKind::Started : fb::StepEventKind::Ended;
  return finish(fbb, fb::RequestBody::StepRequest,
                fb::CreateStepRequest(fbb, job_id, step_id, k, exit_code).Union());
}

std::vector<uint8_t> encodeSurrogateRequest(uint32_t job_id, uint32_t step_id,
                                            const std::string& appliance_job) {
  flatbuffers::FlatBufferBuilder fbb(128);
  return finish(
      fbb, fb::RequestBody::SurrogateRequest,
      fb::CreateSurrogateRequestDirect(fbb, job_id, step_id, appliance_job.c_str()).Union());
}

std::vector<uint8_t> encodeEventsRequest(uint32_t job_id, const std::string& node, bool follow,
                                         bool json) {
  flatbuffers::FlatBufferBuilder fbb(256);
  return finish(fbb, fb::RequestBody::EventsRequest,
                fb::CreateEventsRequestDirect(fbb, job_id, node.empty() ? nullptr : node.c_str(),
                                              follow, json)
                    .Union());
}

std::vector<uint8_t> encodeReportRequest(uint32_t job_id) {
  flatbuffers::FlatBufferBuilder fbb(64);
  return finish(fbb, fb::RequestBody::ReportRequest, fb::CreateReportRequest(fbb, job_id).Union());
}

std::vector<uint8_t> encodeClearFaultRequest() {
  flatbuffers::FlatBufferBuilder fbb(64);
  return finish(fbb, fb::RequestBody::ClearFaultRequest, fb::CreateClearFaultRequest(fbb).Union());
}

}  // namespace accel::ipc
