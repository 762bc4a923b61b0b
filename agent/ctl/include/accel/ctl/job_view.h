#pragma once
// `accelctl jobs` and `accelctl job ID`: the daemon's JobInfo as a table, as
// lines for one job and as JSON. Pure functions of the reply (and of the
// time now), so tests feed them replies built by the daemon's handler or by
// hand.
#include <cstdint>
#include <string>
#include <vector>

namespace accel::control {
struct JobInfo;
}

namespace accel::ctl {

// What the job holds, for people, whatever its kind of accelerator: its own
// devices on this node (ACCEL_DEVICES, e.g. "cuda0,cuda2" or "ipu0,ipu1"),
// the IPUs of its V-IPU partition as its events name them ("p47:0,p47:1";
// "partition p47" from a daemon that does not say how many), and
// the CS-X systems its running appliance jobs hold ("2 CS-X"); several of
// these are joined by " + ". "none" when it holds nothing (yet, or any more).
std::string jobDevices(const control::JobInfo& j);

// When the job became ready: local time as timeText; "not yet" while its
// prolog runs; "never" when it left the prolog without becoming ready.
std::string readyText(const control::JobInfo& j);

// The job's state as the schema names it; "unknown (N)" for a value this
// accelctl does not know (a newer daemon).
std::string stateText(const control::JobInfo& j);

// The table of `accelctl jobs`: a header and one line per job, or a line
// saying there are none.
std::string jobsTable(const std::vector<const control::JobInfo*>& jobs);

// `accelctl job ID`: one line per subject (state, devices, appliance jobs
// and time, warnings, error, the tasks' variables).
std::string jobText(const control::JobInfo& j);

// The --json documents (two-space indent, keys sorted, end with a newline):
// one job, and the array of `accelctl jobs --json`.
std::string jobJson(const control::JobInfo& j);
std::string jobsJson(const std::vector<const control::JobInfo*>& jobs);

// A number of seconds as Slurm prints times (HH:MM:SS, D-HH:MM:SS from a day).
std::string durationText(double seconds);

}  // namespace accel::ctl
