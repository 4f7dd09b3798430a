// BASE of `compare NEW --against-history DB` (docs/history-and-html.md): the runs the history database recorded of
// NEW's tenants, read back from the results files it names and pooled, for analysis/compare.h's compare_results.
// It lives beside the database it queries (history/) rather than beside compare (analysis/): it needs the history
// and the results reader, both already history's dependencies, where analysis would need a new one on history and
// would no longer be pure functions over result structs.
#pragma once

#include "harness/results/results.h"

#include <string>
#include <vector>

namespace ib {

struct HistoryBaseline {
  Results base;                       // the runs of NEW's (scenario, mode) pairs in those files, pooled
  std::vector<std::string> skipped;   // why a recorded file was left out (gone, unreadable, no raw samples)
};

// The results files the history `db` names for the last `window` runs of each tenant of `next` (its own file,
// `next_file`, left out), and their runs of `next`'s (scenario, mode) pairs. Throws CannotRunError when the
// database is locked, InputError when it cannot be read (both naming --against-history), HistoryError's
// unavailable build through require_history.
HistoryBaseline history_baseline(const std::string& db, int window, const std::string& next_file, const Results& next);

}  // namespace ib
