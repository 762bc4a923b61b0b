// The recipe of ARCHITECTURE.md §7: select the job by a slurm_selected_step_t
// with NO_VAL step fields, the cluster name, JOBCOND_FLAG_NO_DEFAULT_USAGE and
// db_flags = SLURMDB_JOB_FLAG_NOTSET (without which slurmdbd silently changes
// nothing), then slurmdb_job_modify and commit.
#include "accel/slurm/slurmdb_accounting.h"

#include <slurm/slurmdb.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "accel/slurm/slurm_compat.h"
#include "libslurm_init.h"

// Exported by libslurm but missing from its headers; sacctmgr uses them to
// get a record whose unset fields are NO_VAL (a zeroed record would also
// reset the derived exit code).
extern "C" slurmdb_job_rec_t* slurmdb_create_job_rec(void);
extern "C" void slurmdb_destroy_job_rec(void* object);

namespace accel::slurm {

using aggregator::AccountedJob;
using aggregator::CommentUpdate;
namespace {

// One connection per batch: batches are rate-limited, and a fresh connection
// recovers from a restarted slurmdbd without extra state.
class Connection {
 public:
  Connection() { db_ = slurmdb_connection_get(&flags_); }
  ~Connection() {
    if (db_) slurmdb_connection_close(&db_);
  }
  void* get() const { return db_; }

 private:
  uint16_t flags_ = 0;
  void* db_ = nullptr;
};

// A job condition selecting the given jobs of one cluster (the latest record
// of each: a requeued job's earlier runs are left alone, as sacct shows them
// only with --duplicates). The lists hold pointers into this object, so they
// are created without destructors.
class JobSelector {
 public:
  JobSelector(const std::vector<uint32_t>& job_ids, const std::string& cluster)
      : cluster_(cluster), steps_(job_ids.size()) {
    cond_.step_list = slurm_list_create(nullptr);
    for (size_t i = 0; i < job_ids.size(); ++i) {
      steps_[i].array_task_id = NO_VAL;
      steps_[i].het_job_offset = NO_VAL;
      steps_[i].step_id.job_id = job_ids[i];
      steps_[i].step_id.step_id = NO_VAL;
      steps_[i].step_id.step_het_comp = NO_VAL;
      slurm_list_append(cond_.step_list, &steps_[i]);
    }
    cond_.cluster_list = slurm_list_create(nullptr);
    slurm_list_append(cond_.cluster_list, cluster_.data());
    // NO_TRUNC: without it slurmdbd clips each job's times to the query's
    // window, and a running job's end reads as the window's end (now).
    cond_.flags = JOBCOND_FLAG_NO_DEFAULT_USAGE | JOBCOND_FLAG_NO_TRUNC;
    cond_.db_flags = SLURMDB_JOB_FLAG_NOTSET;
  }
  ~JobSelector() {
    slurm_list_destroy(cond_.step_list);
    slurm_list_destroy(cond_.cluster_list);
  }
  JobSelector(const JobSelector&) = delete;
  JobSelector& operator=(const JobSelector&) = delete;
  slurmdb_job_cond_t* cond() { return &cond_; }

 private:
  std::string cluster_;
  std::vector<slurm_selected_step_t> steps_;  // never resized: the step list points into it
  slurmdb_job_cond_t cond_{};
};

// The record's run has started and not ended (slurmctld's completion record
// is still to come); a requeued job's new run is PENDING, the run before over.
bool inProgress(uint32_t state) {
  const uint32_t base = state & JOB_STATE_BASE;
  return base == JOB_RUNNING || base == JOB_SUSPENDED;
}

Error unreachable(const std::string& what) {
  return Error(ErrorCode::kUnavailable, what + ": " + slurm_strerror(errno));
}

}  // namespace

SlurmdbAccounting::SlurmdbAccounting(std::optional<std::string> cluster, std::string slurm_conf,
                                     int connections)
    : cluster_(std::move(cluster)),
      slurm_conf_(std::move(slurm_conf)),
      connections_(std::max(1, connections)) {
  initLibslurm(slurm_conf_);
}

SlurmdbAccounting::~SlurmdbAccounting() = default;

Result<std::string> SlurmdbAccounting::cluster() {
  if (cluster_) return *cluster_;
  slurm_conf_t* conf = nullptr;
  if (slurm_load_ctl_conf(0, &conf) != SLURM_SUCCESS || conf == nullptr)
    return unreachable("slurmctld (for ClusterName)");
  std::string name = conf->cluster_name ? conf->cluster_name : "";
  slurm_free_ctl_conf(conf);
  if (name.empty()) return Error(ErrorCode::kNotFound, "slurmctld reports no ClusterName");
  cluster_ = name;
  return name;
}

Result<std::map<uint32_t, AccountedJob>> SlurmdbAccounting::adminComments(
    const std::vector<uint32_t>& job_ids) {
  std::map<uint32_t, AccountedJob> out;
  if (job_ids.empty()) return out;
  auto name = cluster();
  if (!name.ok()) return name.error();
  Connection db;
  if (!db.get()) return unreachable("slurmdbd");
  JobSelector sel(job_ids, *name);
  list_t* jobs = slurmdb_jobs_get(db.get(), sel.cond());
  if (!jobs) return unreachable("slurmdbd job query");
  std::unique_ptr<void, void (*)(void*)> guard(
      jobs, [](void* l) { slurm_list_destroy(static_cast<list_t*>(l)); });
  list_itr_t* it = slurm_list_iterator_create(jobs);
  while (auto* rec = static_cast<slurmdb_job_rec_t*>(slurm_list_next(it)))
    out[rec->jobid] = {.admin_comment = rec->admin_comment ? rec->admin_comment : "",
                       .running = inProgress(rec->state)};
  slurm_list_iterator_destroy(it);
  return out;
}

namespace {

// Writes `updates` over one connection committed once: each modify is its own
// request to slurmdbd, and the commit makes them all durable at once.
void writeOver(const std::string& cluster, const CommentUpdate* updates, size_t n, Status* out) {
  Connection db;
  if (!db.get()) {
    for (size_t i = 0; i < n; ++i) out[i] = unreachable("slurmdbd");
    return;
  }
  bool any = false;
  for (size_t i = 0; i < n; ++i) {
    JobSelector sel({updates[i].job_id}, cluster);
    slurmdb_job_rec_t* rec = slurmdb_create_job_rec();
    std::string text = updates[i].comment;
    rec->admin_comment = text.data();
    list_t* changed = slurmdb_job_modify(db.get(), sel.cond(), rec);
    rec->admin_comment = nullptr;  // ours, not Slurm's to free
    slurmdb_destroy_job_rec(rec);
    if (!changed) {
      out[i] = unreachable("slurmdbd job modify");
      continue;
    }
    int count = slurm_list_count(changed);
    slurm_list_destroy(changed);
    if (count == 0) {
      out[i] = Error(ErrorCode::kNotFound,
                     "slurmdbd changed no record for job " + std::to_string(updates[i].job_id));
      continue;
    }
    out[i] = okStatus();
    any = true;
  }
  if (slurmdb_connection_commit(db.get(), any) != SLURM_SUCCESS && any) {
    Error e = unreachable("slurmdbd commit");
    for (size_t i = 0; i < n; ++i)
      if (out[i].ok()) out[i] = e;
  }
}

}  // namespace

// The batch is cut into one contiguous slice per connection, written side by
// side: each request to slurmdbd waits mostly on the network, not on work.
std::vector<Status> SlurmdbAccounting::setAdminComments(const std::vector<CommentUpdate>& updates) {
  std::vector<Status> out(updates.size());
  if (updates.empty()) return out;
  auto name = cluster();
  if (!name.ok()) return std::vector<Status>(updates.size(), Status(name.error()));
  const size_t slices = std::min(updates.size(), static_cast<size_t>(connections_));
  const size_t per = (updates.size() + slices - 1) / slices;
  std::vector<std::thread> writers;
  for (size_t from = per; from < updates.size(); from += per)
    writers.emplace_back(writeOver, std::cref(*name), updates.data() + from,
                         std::min(per, updates.size() - from), out.data() + from);
  writeOver(*name, updates.data(), std::min(per, updates.size()), out.data());
  for (auto& t : writers) t.join();
  return out;
}

}  // namespace accel::slurm
