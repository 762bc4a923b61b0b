#include "accel/agentd/task_signals.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "accel/common/proc_stat.h"

namespace accel::agentd {
namespace {

bool sameProcess(const agent::TaskRef& task) {
  auto ticks = readStartTicks(task.pid);
  return ticks.ok() && *ticks == task.start_ticks;
}

}  // namespace

bool signalTask(const agent::TaskRef& task, int sig) {
  if (task.pid <= 0 || task.start_ticks == 0 || !sameProcess(task)) return false;
  int fd = static_cast<int>(syscall(SYS_pidfd_open, task.pid, 0));
  if (fd < 0) return false;
  // The pid may have been reused between the check and the open: the pidfd
  // names whatever held the pid at open time, so check again now.
  bool ok = sameProcess(task) && syscall(SYS_pidfd_send_signal, fd, sig, nullptr, 0) == 0;
  close(fd);
  return ok;
}

int signalTasks(const std::vector<agent::TaskRef>& tasks, int sig) {
  int reached = 0;
  for (const auto& t : tasks) reached += signalTask(t, sig) ? 1 : 0;
  return reached;
}

}  // namespace accel::agentd
