#pragma once
// Every request of the control protocol (schemas/control.fbs), built from
// plain values. The clients (accelctl, spank_accel.so) and the daemon's own
// stale-job sweep call these; nothing else builds a control Request. Each
// function returns a finished buffer with the Request file identifier and
// version 1, ready to send.
#include <cstdint>
#include <string>
#include <vector>

namespace accel::ipc {

// The JobSpec of a prolog request: what the hooks learn of one job. Empty
// strings are sent as empty strings, except `refusal`, which is left out
// when empty (the job's options were not refused).
struct JobSpecFields {
  uint32_t job_id = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string user;
  std::string node;
  std::string partition;
  std::string gpus;  // SLURM_JOB_GPUS as given, e.g. "0,2"
  uint32_t ipus = 0;
  uint32_t num_replicas = 0;
  uint32_t ntasks = 0;
  int64_t appliance_time_sec = -1;  // -1: no limit given
  int32_t appliance_signal = 0;     // 0: the default signal
  uint32_t appliance_signal_lead_sec = 0;
  std::string node_list;    // empty: unknown
  uint32_t node_count = 0;  // 0: unknown
  std::string refusal;      // empty: not refused
  bool appliance_signal_batch = false;
  uint32_t restart_count = 0;
};

std::vector<uint8_t> encodePrologRequest(const JobSpecFields& job);
std::vector<uint8_t> encodeEpilogRequest(uint32_t job_id, uint32_t uid);
std::vector<uint8_t> encodeStatusRequest();
std::vector<uint8_t> encodeJobsRequest();
std::vector<uint8_t> encodeJobRequest(uint32_t job_id);

enum class TaskEventKind { kStarted, kExited };
std::vector<uint8_t> encodeTaskRequest(uint32_t job_id, uint32_t step_id, int32_t pid,
                                       uint64_t start_ticks, TaskEventKind kind,
                                       int32_t exit_status);

enum class StepEventKind { kStarted, kEnded };
std::vector<uint8_t> encodeStepRequest(uint32_t job_id, uint32_t step_id, StepEventKind kind,
                                       int32_t exit_code);

// The step `step_id` of the job stands for the appliance job `appliance_job`.
std::vector<uint8_t> encodeSurrogateRequest(uint32_t job_id, uint32_t step_id,
                                            const std::string& appliance_job);

// The aggregator's events of a job; `node` empty: from every node (left out
// of the request).
std::vector<uint8_t> encodeEventsRequest(uint32_t job_id, const std::string& node, bool follow,
                                         bool json);

// The aggregator's accelerator report of a job (`accelctl report`).
std::vector<uint8_t> encodeReportRequest(uint32_t job_id);

// Forgets the node's GPU hardware faults (`accelctl clear-fault`).
std::vector<uint8_t> encodeClearFaultRequest();

}  // namespace accel::ipc
