// `matrix --predict`'s runs (docs/design.md section 14, docs/methodology.md "Predicted co-location"): the
// reporter's ladder, each workload's ladder and its run beside the reporter, then a sample of pairs measured to
// check the model. Each is a child `run` of a two-tenant scenario in the matrix's mode (matrix_runs.h), so it has
// every guarantee of a pair's run; the model itself is matrix_predict.cpp.
#include "harness/core/text.h"
#include "harness/vet/matrix.h"
#include "harness/vet/matrix_predict.h"
#include "harness/vet/matrix_runs.h"

#include <cmath>
#include <iostream>
#include <utility>

namespace ib {
namespace {

using json = nlohmann::json;

// The level as the runs' folders name it: 0.3 -> "l30".
std::string level_folder(double level) { return "l" + std::to_string(std::lround(level * 100.0)); }

json named_tenant(json tenant, const std::string& name, const char* role) {
  tenant["name"] = name;
  tenant["role"] = role;
  return tenant;
}

// The bubble at `level`, pinned as the tenant it presses on (the same cores: core share is what it calibrates).
json bubble_tenant(const MatrixPrediction& p, double level, const json& beside) {
  json params = p.bubble_params;
  params["level"] = level;
  json t = {{"name", "bubble"}, {"role", "aggressor"}, {"workload", p.bubble_workload}, {"params", params}};
  if (beside.contains("placement")) t["placement"] = beside.at("placement");
  return t;
}

// The reporter, pinned as the workload whose pressure it reports.
json reporter_tenant(const MatrixPrediction& p, const json& beside) {
  json t = named_tenant(p.reporter_tenant, "reporter", "victim");
  if (beside.contains("placement")) t["placement"] = beside.at("placement");
  return t;
}

// The conductor's state across its runs: where they go, what finished (for --budget), whether a stop arrived.
struct PredictionRuns {
  const PlatformOptions& o;
  std::chrono::steady_clock::time_point t0;
  std::string dir;
  json timing;
  std::vector<const MatrixRun*> done;
  bool interrupted = false;
  std::size_t started = 0, total = 0;

  json scenario(const std::string& name, json victim, json aggressor) const {
    json s = timing.is_object() ? timing : json::object();
    s["name"] = name;
    s["mode"] = o.matrix.mode;
    s["tenants"] = json::array({std::move(victim), std::move(aggressor)});
    return s;
  }

  // Runs `s` into dir/<folder> unless --budget or a stop says not to (then `run` says why); the run's results.
  std::optional<ResultsDocument> child(const json& s, const std::string& folder, const std::string& what, MatrixRun& run) {
    if (matrix_run_skipped(o, done, t0, interrupted, run)) return std::nullopt;
    std::cerr << "interference-bench: matrix --predict: run " << ++started << " of " << total << ": " << what << "\n";
    MatrixChildRun c = run_matrix_child(o, s, dir + "/" + folder);
    run = c.run;
    done.push_back(&run);
    if (run.outcome == MatrixRunOutcome::interrupted) interrupted = true;
    return std::move(c.results);
  }

  // Tenant `tenant`'s P95 slowdown in the run of `s` (none when it gave no figure).
  std::optional<double> slowdown(const json& s, const std::string& folder, const std::string& what,
                                 const std::string& tenant, MatrixRun& run) {
    const auto results = child(s, folder, what, run);
    if (!results) return std::nullopt;
    const MatrixCell c = measured_cell(*results, tenant, 0, 0);
    if (!c.p95_slowdown || !std::isfinite(c.p95_slowdown->value)) return std::nullopt;  // too few samples for a P95
    return c.p95_slowdown->value;
  }

  // `tenant`'s slowdown beside the bubble at each level of the ladder into `curve`.
  void ladder(const MatrixPrediction& p, const json& tenant, const std::string& name, SensitivityCurve& curve) {
    for (std::size_t l = 0; l < p.levels.size(); ++l) {
      const std::string folder = name + "-" + level_folder(p.levels[l]);
      const json s = scenario(folder, named_tenant(tenant, "victim", "victim"), bubble_tenant(p, p.levels[l], tenant));
      curve.slowdowns[l] = slowdown(s, folder, name + " beside " + p.bubble_workload + " at level " + formatted("%.2f", p.levels[l]),
                                    "victim", curve.runs[l]);
    }
  }
};

// The profiles: the reporter's ladder, then each workload's ladder and its run beside the reporter.
void run_profiles(PredictionRuns& runs, MatrixResult& r) {
  MatrixPrediction& p = *r.prediction;
  const std::size_t k = p.levels.size();
  p.reporter_curve.slowdowns.assign(k, std::nullopt);
  p.reporter_curve.runs.assign(k, MatrixRun{});
  // The reporter is pinned as the first workload: the matrix's workloads share their placement in the runs
  // this is for (--cpus); where they differ, its curve is read at each workload's own placement all the same.
  const json first = r.workloads.empty() ? json::object() : r.workloads.front().tenant;
  runs.ladder(p, reporter_tenant(p, first), "reporter", p.reporter_curve);
  for (std::size_t i = 0; i < r.workloads.size(); ++i) {
    PredictedWorkload& w = p.workloads[i];
    w.curve.slowdowns.assign(k, std::nullopt);
    w.curve.runs.assign(k, MatrixRun{});
    w.pressure_run.assign(1, MatrixRun{});
    const json& tenant = r.workloads[i].tenant;
    const std::string name = "w" + std::to_string(i);
    runs.ladder(p, tenant, name, w.curve);
    const std::string folder = name + "-pressure";
    const json s = runs.scenario(folder, reporter_tenant(p, tenant), named_tenant(tenant, "aggressor", "aggressor"));
    w.reporter_slowdown = runs.slowdown(s, folder, "the reporter beside " + r.workloads[i].name, "reporter", w.pressure_run[0]);
  }
}

// The sampled pairs, each a pair's own run (pair_scenario): its two cells replace the predicted ones, measured,
// and each is checked against what the model said.
void run_sample(PredictionRuns& runs, MatrixResult& r, std::size_t count) {
  MatrixPrediction& p = *r.prediction;
  p.sampled_pairs = choose_sample_pairs(r, count);
  p.sample_runs.assign(p.sampled_pairs.size(), MatrixRun{});
  for (std::size_t s = 0; s < p.sampled_pairs.size(); ++s) {
    const auto [a, b] = p.sampled_pairs[s];
    MatrixPair pair{a, b, {}};
    const std::string folder = "sample-" + std::to_string(a) + "-" + std::to_string(b);
    const auto results = runs.child(pair_scenario(r, pair, runs.timing), folder,
                                    r.workloads[a].name + " beside " + r.workloads[b].name + " (measured)", p.sample_runs[s]);
    for (MatrixPair& planned : r.pairs)  // every pair is planned (pending); this one is now measured
      if (planned.a == a && planned.b == b) planned.run = p.sample_runs[s];
    if (!results) continue;
    const std::pair<std::size_t, std::size_t> directions[] = {{a, b}, {b, a}};
    for (const auto& [victim, aggressor] : directions) {
      const std::string tenant = pair_tenant_name(victim, false);  // the diagonal: its first tenant
      MatrixCell measured = measured_cell(*results, tenant, victim, aggressor);
      const MatrixCell& predicted = r.cell(victim, aggressor);
      if (measured.p95_slowdown && predicted.p95_slowdown && predicted.source == CellSource::predicted &&
          std::isfinite(measured.p95_slowdown->value) && std::isfinite(predicted.p95_slowdown->value))
        p.checks.push_back({victim, aggressor, predicted.p95_slowdown->value, measured.p95_slowdown->value,
                            100.0 * (predicted.p95_slowdown->value - measured.p95_slowdown->value)});
      r.cell(victim, aggressor) = measured;
      if (a == b) break;  // the diagonal is one cell (the first tenant's; its copy is the same workload)
    }
  }
  p.error = prediction_error(p.checks);
}

}  // namespace

void run_prediction(const PlatformOptions& o, MatrixResult& r, const std::string& out_dir,
                    std::chrono::steady_clock::time_point t0) {
  r.prediction = plan_prediction(r);  // refuses a backend without a calibrated pressure workload
  const std::size_t sample = static_cast<std::size_t>(std::max(0, o.matrix.predict_sample));
  PredictionRuns runs{o, t0, out_dir + "/predict", matrix_timing(o), {}};
  runs.total = prediction_run_count(o, r.workloads.size());
  run_profiles(runs, r);
  fill_pressures(*r.prediction);
  predict_cells(r);
  if (!runs.interrupted) run_sample(runs, r, sample);
  r.interrupted = r.interrupted || runs.interrupted;
}

}  // namespace ib
