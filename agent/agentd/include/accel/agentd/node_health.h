#pragma once
// What `accelctl status` reports beyond the job table: when the config was
// read, how the last call to each vendor client went, and the node faults
// of late, each with its time. Thread-safe; everything is kept in memory
// (a restart starts afresh, which the status says: "since" the start).
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "accel/appliance/appliance.h"
#include "accel/common/clock.h"
#include "accel/common/result.h"
#include "accel/ipu/partition_controller.h"

namespace accel::agentd {

// The last call to one vendor client (V-IPU controller, appliance).
struct ControllerCall {
  std::string name;    // "vipu", "appliance"
  std::string client;  // the client's describe(), e.g. "vipu at 10.1.2.3:8090"
  std::string call;    // the last operation, e.g. "create p42"; empty: never called
  int64_t at_ns = 0;   // when it ended; 0: never called
  bool ok = false;
  std::string error;       // why it failed; empty when ok
  int64_t last_ok_ns = 0;  // the last call that succeeded; 0: none yet
  uint64_t calls = 0;
  uint64_t failures = 0;
};

struct TimedError {
  int64_t at_ns = 0;
  std::string message;  // "prolog: job 42: ..."
};

struct HealthSnapshot {
  int64_t config_loaded_ns = 0;             // start, or the last reload that was applied
  std::string config_error;                 // why the last reload was refused; empty: it was not
  std::vector<ControllerCall> controllers;  // by name
  std::vector<TimedError> errors;           // newest last
  // How an appliance limit reaches a job's processes (job_processes.h);
  // empty: not known yet.
  std::string process_tracking;
};

class NodeHealth {
 public:
  static constexpr size_t kMaxErrors = 10;

  // Times are `clock`'s wall time; `clock` must outlive this object.
  explicit NodeHealth(const Clock& clock = systemClock());

  void configLoaded();
  void configRefused(const std::string& why);
  // A client the node uses, listed before its first call.
  void addController(const std::string& name, const std::string& client);
  // `seconds`: how long the call took (negative: not measured), for the
  // call timer.
  void controllerCalled(const std::string& name, const std::string& call, const Status& outcome,
                        double seconds = -1);
  // Told of every measured call (accel_driver_call_seconds); set before the
  // first call. Called outside the lock.
  using CallTimer = std::function<void(const std::string& name, bool ok, double seconds)>;
  void setCallTimer(CallTimer timer);
  // A node fault (a hook answered NodeFault, a reload refused, ...).
  void nodeFault(const std::string& message);
  // A fault of the cluster's configuration found here (a job sent to a node
  // without its kind of accelerator): kept with the node faults, marked
  // "configuration fault: ".
  void configFault(const std::string& message);

  // How an appliance limit reaches a job's processes here.
  void processTracking(const std::string& how);

  HealthSnapshot snapshot() const;

 private:
  void record(const std::string& name, const std::string& call, const Status& outcome, int64_t now);
  const Clock& clock_;
  mutable std::mutex mu_;
  int64_t config_loaded_ns_ = 0;
  std::string config_error_;
  std::string process_tracking_;
  std::map<std::string, ControllerCall> controllers_;
  std::deque<TimedError> errors_;
  CallTimer timer_;
};

// The same client, with every call's outcome noted in `health` ("vipu",
// "appliance"). A V-IPU "not found" counts as reached. Null stays null.
std::shared_ptr<ipu::PartitionController> watchCalls(
    std::shared_ptr<ipu::PartitionController> inner, std::shared_ptr<NodeHealth> health);
std::shared_ptr<appliance::ApplianceClient> watchCalls(
    std::shared_ptr<appliance::ApplianceClient> inner, std::shared_ptr<NodeHealth> health);

}  // namespace accel::agentd
