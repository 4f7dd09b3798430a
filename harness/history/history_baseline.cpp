// BASE of compare --against-history (history_baseline.h): query, read, filter, pool.
#include "harness/history/history_baseline.h"

#include "harness/core/errors.h"
#include "harness/history/history.h"
#include "harness/results/results_reader.h"

#include <algorithm>
#include <filesystem>

namespace ib {

namespace {

bool contains(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// The results files the history names for NEW's tenants' last `window` runs (NEW itself left out).
std::vector<std::string> history_files(const std::string& db, int window, const std::string& next_file,
                                       const Results& next) {
  const std::string self = std::filesystem::absolute(next_file).lexically_normal().string();
  std::vector<std::string> files;
  require_history("--against-history");
  try {
    for (const RunResult& run : next.runs)
      for (const TenantResult& t : run.tenants) {
        const HistoryWindow w{{run.scenario, run.mode, t.name, t.workload, history_params_key(t.params)}, window, self};
        for (const HistoryTenantRecord& r : history_window(db, w))
          if (!contains(files, r.run.results_file)) files.push_back(r.run.results_file);
      }
  } catch (const HistoryError& e) {
    if (e.problem() == HistoryProblem::locked) throw CannotRunError(std::string("--against-history: ") + e.what());
    throw InputError(std::string("--against-history: ") + e.what());
  }
  return files;
}

}  // namespace

HistoryBaseline history_baseline(const std::string& db, int window, const std::string& next_file, const Results& next) {
  HistoryBaseline out;
  for (const std::string& file : history_files(db, window, next_file, next)) {
    try {
      const ResultsDocument doc = read_results_file(file);
      if (!doc.raw_samples) throw InputError(file + ": written with --no-raw, no samples to compare");
      for (const RunResult& run : doc.results.runs)
        if (std::any_of(next.runs.begin(), next.runs.end(),
                        [&](const RunResult& n) { return n.scenario == run.scenario && n.mode == run.mode; }))
          out.base.runs.push_back(run);
    } catch (const InputError& e) {  // gone, unreadable or without samples: the other nights still count
      out.skipped.push_back(e.what());
    }
  }
  return out;
}

}  // namespace ib
