#pragma once
// Slurm's compact host lists ("node[01-03,7],login1"), as SLURM_NODELIST and
// SLURM_JOB_NODELIST carry them. Every node of a job must agree on which of
// them is the job's first node, and the aggregator must know which nodes it
// still waits for; both read the list here instead of asking slurmctld.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "accel/common/result.h"

namespace accel {

// At most this many names: a list that expands further is refused rather than
// allowed to take memory without bound (the text may come from a user).
inline constexpr std::size_t kMaxHostlistNames = 65536;

// The names of `list` in order, duplicates kept as given. Ranges keep their
// zero padding ("n[08-10]" is n08 n09 n10). Nested brackets, a range running
// backwards, and more than kMaxHostlistNames names are errors. Empty text is
// an empty list.
Result<std::vector<std::string>> expandHostlist(std::string_view list);

// How many names expandHostlist(list) gives, duplicates counted, without
// making them: the cost of a list is known before it is paid. The same errors
// as expandHostlist.
Result<std::size_t> countHostlist(std::string_view list);

// The first name of `list` without expanding the rest (cheap on a list of
// thousands of nodes); an error where expandHostlist would fail on the first
// element, and for an empty list.
Result<std::string> firstHost(std::string_view list);

}  // namespace accel
