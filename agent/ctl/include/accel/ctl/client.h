#pragma once
// What the verbs share: finding accel.conf, calling the daemon, and turning
// a reply's outcome into an exit code.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "accel/common/config.h"
#include "accel/common/result.h"
#include "accel/ctl/verbs.h"
#include "accel/ipc/control_socket.h"

namespace accel::ctl {

// accel.conf from --config, else beside slurm.conf (SLURM_CONF).
Result<std::string> configPath(const GlobalOptions& g, const CliIo& io);
Result<AccelConfig> loadConfig(const GlobalOptions& g, const CliIo& io);

// One verified reply (kParse if it fails verification), from the admin
// socket when the caller may use it, else from ControlSocket. A Busy answer,
// a full backlog or a connection closed unanswered is tried again, after
// pauses growing from 1 ms to 50 ms, until `timeout` is spent; the last
// answer is returned.
Result<std::vector<uint8_t>> callDaemon(const AccelConfig& config,
                                        const std::vector<uint8_t>& request,
                                        std::chrono::milliseconds timeout);

// Exit code for an error reaching the daemon.
int exitForCallError(const Error& e);

// A connection to the daemon: its admin socket when the caller may use it,
// else ControlSocket.
Result<ipc::Socket> connectDaemon(const AccelConfig& config);

// The exit code of an agent's reply outcome (control.fbs Outcome; Ok is 0).
int exitForOutcome(uint8_t outcome);

// For the verbs the agent relays to the aggregator (events, report): reads
// accel.conf, connects and sends `request`. On failure it has said why on
// stderr ("accelctl: VERB: ...") and `*code` is the exit code.
std::optional<ipc::Socket> sendToAgent(const GlobalOptions& g, const CliIo& io,
                                       const std::string& verb, const std::vector<uint8_t>& request,
                                       int* code);

// `accelctl events --job ID` asked through this node's agent (its
// AggregatorQueryAddress); see verb_events.cpp.
struct EventsArgs {
  uint32_t job_id = 0;
  std::string node;
  bool follow = false;
};
int eventsThroughAgent(const EventsArgs& args, const GlobalOptions& g, const CliIo& io);

}  // namespace accel::ctl
