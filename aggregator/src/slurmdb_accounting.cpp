// The recipe of ARCHITECTURE.md §7: select the job by a slurm_selected_step_t
// with NO_VAL step fields, the cluster name, JOBCOND_FLAG_NO_DEFAULT_USAGE and
// db_flags = SLURMDB_JOB_FLAG_NOTSET (without which slurmdbd silently changes
// nothing), then slurmdb_job_modify and commit.
#include "accel/aggregator/slurmdb_accounting.h"

#include <slurm/slurm.h>
#include <slurm/slurmdb.h>

#include <memory>
#include <mutex>

// Exported by libslurm but missing from its headers; sacctmgr uses them to
// get a record whose unset fields are NO_VAL (a zeroed record would also
// reset the derived exit code).
extern "C" slurmdb_job_rec_t* slurmdb_create_job_rec(void);
extern "C" void slurmdb_destroy_job_rec(void* object);

namespace accel::aggregator {
namespace {

std::once_flag g_init;

// One connection per call: writes are rare and rate-limited, and a fresh
// connection recovers from a restarted slurmdbd without extra state.
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

// A job condition selecting exactly one job of one cluster. The lists hold
// pointers into this object, so they are created without destructors.
class JobSelector {
 public:
  JobSelector(uint32_t job_id, const std::string& cluster) : cluster_(cluster) {
    step_.array_task_id = NO_VAL;
    step_.het_job_offset = NO_VAL;
    step_.step_id.job_id = job_id;
    step_.step_id.step_id = NO_VAL;
    step_.step_id.step_het_comp = NO_VAL;
    cond_.step_list = slurm_list_create(nullptr);
    slurm_list_append(cond_.step_list, &step_);
    cond_.cluster_list = slurm_list_create(nullptr);
    slurm_list_append(cond_.cluster_list, cluster_.data());
    cond_.flags = JOBCOND_FLAG_NO_DEFAULT_USAGE;
    cond_.db_flags = SLURMDB_JOB_FLAG_NOTSET;
  }
  ~JobSelector() {
    slurm_list_destroy(cond_.step_list);
    slurm_list_destroy(cond_.cluster_list);
  }
  slurmdb_job_cond_t* cond() { return &cond_; }

 private:
  std::string cluster_;
  slurm_selected_step_t step_{};
  slurmdb_job_cond_t cond_{};
};

Error unreachable(const std::string& what) {
  return Error(ErrorCode::kUnavailable, what + ": " + slurm_strerror(slurm_get_errno()));
}

}  // namespace

SlurmdbAccounting::SlurmdbAccounting(std::optional<std::string> cluster, std::string slurm_conf)
    : cluster_(std::move(cluster)), slurm_conf_(std::move(slurm_conf)) {
  std::call_once(g_init, [this] { slurm_init(slurm_conf_.empty() ? nullptr : slurm_conf_.c_str()); });
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

Result<std::string> SlurmdbAccounting::adminComment(uint32_t job_id) {
  auto name = cluster();
  if (!name.ok()) return name.error();
  Connection db;
  if (!db.get()) return unreachable("slurmdbd");
  JobSelector sel(job_id, *name);
  List jobs = slurmdb_jobs_get(db.get(), sel.cond());
  if (!jobs) return unreachable("slurmdbd job query");
  std::unique_ptr<void, void (*)(void*)> guard(jobs, [](void* l) { slurm_list_destroy(static_cast<List>(l)); });
  if (slurm_list_count(jobs) == 0)
    return Error(ErrorCode::kNotFound, "slurmdbd has no record of job " + std::to_string(job_id));
  ListIterator it = slurm_list_iterator_create(jobs);
  auto* rec = static_cast<slurmdb_job_rec_t*>(slurm_list_next(it));
  slurm_list_iterator_destroy(it);
  return std::string(rec && rec->admin_comment ? rec->admin_comment : "");
}

Status SlurmdbAccounting::setAdminComment(uint32_t job_id, const std::string& comment) {
  auto name = cluster();
  if (!name.ok()) return name.error();
  Connection db;
  if (!db.get()) return unreachable("slurmdbd");
  JobSelector sel(job_id, *name);
  slurmdb_job_rec_t* rec = slurmdb_create_job_rec();
  std::string text = comment;
  rec->admin_comment = text.data();
  List changed = slurmdb_job_modify(db.get(), sel.cond(), rec);
  rec->admin_comment = nullptr;  // ours, not Slurm's to free
  slurmdb_destroy_job_rec(rec);
  if (!changed) return unreachable("slurmdbd job modify");
  int n = slurm_list_count(changed);
  slurm_list_destroy(changed);
  if (n == 0) {
    slurmdb_connection_commit(db.get(), false);
    return Error(ErrorCode::kNotFound, "slurmdbd changed no record for job " + std::to_string(job_id));
  }
  if (slurmdb_connection_commit(db.get(), true) != SLURM_SUCCESS) return unreachable("slurmdbd commit");
  return okStatus();
}

}  // namespace accel::aggregator
