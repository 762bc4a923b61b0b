#include "accel/aggregator/job_admission.h"

#include <algorithm>
#include <optional>
#include <set>

#include "accel/events/codec.h"

namespace accel::aggregator {
namespace {

// The run an event names: its prolog's or its epilog's restart count.
std::optional<uint32_t> runOf(const event::Event& ev) {
  if (const auto* p = std::get_if<event::PrologStarted>(&ev)) return p->restart_count;
  if (const auto* e = std::get_if<event::EpilogFinished>(&ev)) return e->restart_count;
  return std::nullopt;
}

Verdict refuse(std::string why) { return {Admission::kRefuse, std::move(why), false}; }
Verdict held() { return {Admission::kHold, "", false}; }

// A few names of `nodes` for a message, with how many there are in all.
template <typename Names>
std::string shown(const Names& nodes) {
  if (nodes.empty()) return "no nodes";
  std::string out;
  size_t n = 0;
  for (const auto& name : nodes) {
    if (n == 4) return out + ", ... (" + std::to_string(nodes.size()) + " nodes)";
    out += (n++ ? "," : "") + name;
  }
  return out;
}

// Whom the job is known to run on, for a refusal.
std::string knownNodes(const JobSummary& s) {
  if (!s.listed_nodes.empty()) return "its node list " + s.node_list;
  std::vector<std::string> reporters;
  for (const auto& [node, run] : s.node_run) reporters.push_back(node);
  return "the nodes that reported it (" + (reporters.empty() ? shown(s.nodes) : shown(reporters)) +
         "; its node list cannot be used)";
}

// A prolog or epilog of a run after the summary's latest, weighed against
// slurmctld's answer: confirmed when slurmctld holds that very run, started,
// on the sender and on exactly the nodes the prolog lists.
Verdict newRun(const JobSummary& s, const std::string& node, uint32_t run,
               const std::set<std::string>& list, int64_t received_ns, const RunAnswer* answer) {
  if (!answer) return held();
  const std::string claim =
      "job " + std::to_string(s.job_id) + ": " + node + " reports its run " + std::to_string(run);
  const JobRun& r = answer->run;
  if (answer->found && r.started && r.restart_count == run) {
    const std::set<std::string> nodes(r.nodes.begin(), r.nodes.end());
    if (nodes.contains(node) && (list.empty() || list == nodes))
      return {Admission::kApply, "", true};
    return refuse(claim + ", slurmctld runs it on " + shown(r.nodes));
  }
  if (answer->found && r.restart_count > run)
    return refuse(claim + ", slurmctld is at run " + std::to_string(r.restart_count) +
                  " (an earlier run cannot be confirmed)");
  // An answer older than the event may predate the run: ask again.
  if (answer->as_of_ns < received_ns) return held();
  if (!answer->found) return refuse(claim + ", slurmctld does not know the job");
  return refuse(claim + ", slurmctld " + (r.started ? "runs" : "has pending") + " run " +
                std::to_string(r.restart_count));
}

// A prolog that the recorded job cannot have sent (JobSummary::endedFor),
// weighed against slurmctld's answer: a new job under the id, confirmed when
// slurmctld runs that run of it, started after the record's last epilog, on
// the sender and on exactly the nodes the prolog lists.
Verdict newJob(const JobSummary& s, const std::string& node, uint32_t run,
               const std::set<std::string>& list, int64_t received_ns, const RunAnswer* answer) {
  if (!answer) return held();
  const std::string claim = "job " + std::to_string(s.job_id) + ": " + node +
                            " reports a prolog of run " + std::to_string(run) +
                            " after the job's record here ended";
  const JobRun& r = answer->run;
  const int64_t ended_ns = std::max(s.last_epilog_ns, s.first_epilog_ns);
  const bool later = r.start_time_s > 0 && r.start_time_s * 1'000'000'000 > ended_ns;
  if (answer->found && r.started && r.restart_count == std::min(run, JobSummary::kMaxRun) &&
      later) {
    const std::set<std::string> nodes(r.nodes.begin(), r.nodes.end());
    if (nodes.contains(node) && (list.empty() || list == nodes))
      return {Admission::kApply, "", false, true};
    return refuse(claim + "; slurmctld runs the job under that id on " + shown(r.nodes));
  }
  if (answer->as_of_ns < received_ns) return held();  // may predate the new job: ask again
  if (!answer->found) return refuse(claim + "; slurmctld does not know the job");
  if (!r.started) return refuse(claim + "; slurmctld has it pending");
  if (!later)
    return refuse(claim + "; the job slurmctld holds under that id started at " +
                  std::to_string(r.start_time_s) + ", before that record's last epilog");
  return refuse(claim + "; slurmctld is at run " + std::to_string(r.restart_count));
}

}  // namespace

Verdict admit(const JobSummary& s, const std::string& node, const event::Event& ev,
              int64_t received_ns, const RunAnswer* answer) {
  auto job = [&] { return "job " + std::to_string(s.job_id); };  // for refusals only
  const auto* prolog = std::get_if<event::PrologStarted>(&ev);
  const NodeSet listed = prolog ? usableNodeList(prolog->node_list, prolog->node_count) : nullptr;
  static const std::set<std::string> kNone;
  const std::set<std::string>& list = listed ? *listed : kNone;
  if (prolog) {
    if (!list.empty() && !list.contains(node))
      return refuse(job() + ": its node list " + prolog->node_list + " does not name " + node);
  }
  if (s.holdsFrom(node)) return held();  // behind its own held events, in order
  const auto run = runOf(ev);
  if (prolog && s.endedFor(node, *run)) return newJob(s, node, *run, list, received_ns, answer);
  if (run && !s.nodes.empty() && std::min(*run, JobSummary::kMaxRun) > s.restarts)
    return newRun(s, node, *run, list, received_ns, answer);
  if (!s.mayReport(node)) return refuse(job() + ": " + node + " is not on " + knownNodes(s));
  if (prolog && !list.empty() && !s.listed_nodes.empty() && list != s.listed_nodes &&
      !std::all_of(list.begin(), list.end(), [&](const auto& n) { return s.mayReport(n); }))
    return refuse(job() + ": " + node + " names the nodes " + prolog->node_list +
                  ", the job runs on " + s.node_list);
  return {};
}

bool hold(JobSummary& s, const std::string& node, int64_t received_ns,
          std::span<const uint8_t> envelope) {
  size_t bytes = envelope.size();
  for (const auto& h : s.held) bytes += h.envelope.size();
  if (s.held.size() >= JobSummary::kMaxHeld || bytes > JobSummary::kMaxHeldBytes) return false;
  s.held.push_back({node, received_ns, {envelope.begin(), envelope.end()}});
  return true;
}

Settled settleHeld(JobSummary& s, const RunAnswer& answer) {
  Settled out;
  std::vector<HeldEvent> waiting = std::move(s.held);
  s.held.clear();
  std::set<std::string> refused_from;
  for (auto& h : waiting) {
    auto env = event::decode(h.envelope);
    if (!env.ok() || !env->event) {
      out.dropped.push_back(
          {h.node, "job " + std::to_string(s.job_id) + ": a held event no longer reads (" +
                       (env.ok() ? "unknown kind" : env.error().message()) + ")"});
      continue;
    }
    // A node's events after a prolog that was refused are of the run that
    // prolog claimed (they came in order after it): they go with it.
    const bool is_prolog = std::holds_alternative<event::PrologStarted>(*env->event);
    if (is_prolog) refused_from.erase(h.node);
    if (refused_from.contains(h.node)) {
      out.dropped.push_back(
          {h.node, "job " + std::to_string(s.job_id) + ": follows a prolog that was refused"});
      continue;
    }
    Verdict v = admit(s, h.node, *env->event, h.received_ns, &answer);
    if (v.admission == Admission::kRefuse && is_prolog) refused_from.insert(h.node);
    switch (v.admission) {
      case Admission::kApply:
        if (v.new_job) {
          const auto* p = std::get_if<event::PrologStarted>(&*env->event);
          // Events still held came before this one (in order of arrival):
          // the new job's too, as the old record had ended.
          out.new_since_ns = h.received_ns;
          for (const auto& w : s.held) out.new_since_ns = std::min(out.new_since_ns, w.received_ns);
          out.new_owner = p ? p->uid : 0;
          JobSummary fresh;
          fresh.job_id = s.job_id;
          fresh.instance = s.instance + 1;
          fresh.held = std::move(s.held);  // weighed again against the new record
          out.archived = std::move(s);
          s = std::move(fresh);
        }
        if (v.confirmed_run)
          for (const auto& n : answer.run.nodes)
            if (!s.listed_nodes.contains(n)) s.later_nodes.insert(n);
        mergeEvent(s, h.node, *env->event, h.received_ns);
        out.merged = true;
        break;
      case Admission::kHold:
        out.newest_held_ns = std::max(out.newest_held_ns, h.received_ns);
        s.held.push_back(std::move(h));
        break;
      case Admission::kRefuse:
        out.dropped.push_back({h.node, std::move(v.why)});
        break;
    }
  }
  return out;
}

}  // namespace accel::aggregator
