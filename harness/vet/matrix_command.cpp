// `matrix` (docs/design.md section 14, docs/matrix.md): which of N workloads may share a device. Every
// unordered pair (the diagonal too: a workload beside a copy of itself) is one child run (matrix_runs.h) of
// two tenants in the matrix's mode, each the other's aggressor, with the run model of any run: rounds that
// hold each tenant's exclusive block and the colocated one, foreign-load control, run-until-decided, the
// verdicts. A cell is the victim's P95 slowdown against its exclusive phase of the same run, so a cell's E
// and C come from the same rounds (the run model's protection against drift) rather than from one
// exclusive run shared by a row. The judgement (which pairs may share, the packing) is matrix.cpp; the
// files are written after every run, so a stopped matrix keeps what it finished.
#include "harness/core/clock.h"
#include "harness/core/errors.h"
#include "harness/core/exit_codes.h"
#include "harness/core/files.h"
#include "harness/core/host.h"
#include "harness/core/json_input.h"
#include "harness/core/output_dir.h"
#include "harness/core/text.h"
#include "harness/scenario/scenario.h"
#include "harness/vet/matrix.h"
#include "harness/vet/matrix_predict.h"
#include "harness/vet/matrix_runs.h"
#include "harness/vet/platform.h"
#include "reports/html/matrix_html.h"
#include "reports/json/matrix_json.h"
#include "reports/markdown/matrix_markdown.h"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <sstream>

namespace ib {

namespace {

using json = nlohmann::json;

const std::vector<std::string> kMatrixFiles = {"matrix.json", "matrix.md", "matrix.html"};

// The modes a pair can run in: two tenants sharing one device. Exclusive measures no sharing, mig places
// tenants on instances a layout decides (mig-sweep), all is not one mode.
void refuse_mode(const std::string& mode) {
  if (mode == "exclusive" || mode == "mig" || mode == "all")
    throw InputError("matrix --mode " + mode + ": a pair shares one device under timeslice, mps or streams" +
                     (mode == "mig" ? std::string(" (MIG instances are chosen by mig-sweep)") : std::string()));
}

std::vector<unsigned> parse_cpus(const std::string& list) {
  std::vector<unsigned> cpus;
  std::stringstream ss(list);
  for (std::string p; std::getline(ss, p, ',');) {
    try {
      std::size_t used = 0;
      const unsigned long v = std::stoul(p, &used);
      if (used != p.size() || v > 4095) throw std::invalid_argument(p);
      cpus.push_back(static_cast<unsigned>(v));
    } catch (const std::exception&) {
      throw InputError("matrix --cpus " + printable(list, 80) + ": \"" + printable(p, 20) + "\": a CPU number was expected");
    }
  }
  if (cpus.empty()) throw InputError("matrix --cpus: a comma-separated list of CPU numbers was expected");
  return cpus;
}

// --workloads: a scenario file (an existing file) or a list of built-in workloads; --cpus pins every
// workload that has no placement of its own.
std::vector<MatrixWorkload> read_workloads(const PlatformOptions& o) {
  const MatrixOptions& m = o.matrix;
  if (m.workloads.empty()) throw InputError("matrix: --workloads LIST or FILE is required");
  std::vector<MatrixWorkload> out;
  if (std::filesystem::is_regular_file(m.workloads))
    out = matrix_workloads_from_scenario(read_json_file(m.workloads, "matrix --workloads"), m.workloads);
  else
    out = matrix_workloads_from_list(m.workloads);
  if (!m.cpus.empty()) {
    const std::vector<unsigned> cpus = parse_cpus(m.cpus);
    for (MatrixWorkload& w : out)
      if (!w.tenant.contains("placement") || !w.tenant["placement"].contains("cpus")) w.tenant["placement"]["cpus"] = cpus;
  }
  return out;
}

// Every workload checked as its diagonal run will check it, before anything runs: a bad workload or param
// is one refusal (exit 2), not an error of every pair.
void check_workloads(const PlatformOptions& o, const MatrixResult& r) {
  if (!o.registry) return;
  for (std::size_t i = 0; i < r.workloads.size(); ++i) {
    MatrixPair p;
    p.a = p.b = i;
    ScenarioOverrides ov;
    try {
      (void)parse_scenario(pair_scenario(r, p, matrix_timing(o)), "matrix --workloads", ov,
                           ValidationContext{o.registry, o.backend == "host" ? Backend::host : Backend::cuda, {}});
    } catch (const InputError& e) {
      throw InputError("matrix --workloads: " + r.workloads[i].name + ": " + e.what());
    }
  }
}

MatrixResult new_matrix_result(const PlatformOptions& o) {
  MatrixResult r;
  r.argv = o.argv;
  r.version = o.version;
  r.git_sha = o.git_sha;
  r.start_time = utc_now("%Y-%m-%dT%H:%M:%SZ");
  r.host = node_name();
  r.backend = o.backend;
  r.mode = o.matrix.mode;
  r.device = o.device;
  r.cutoff = o.cutoff;
  r.phase_s = o.phase_s;
  r.rounds = o.rounds;
  r.budget_s = o.sweep_budget_s;
  r.price_exclusive = o.price_exclusive;
  r.price_shared = o.price_shared;
  r.workloads = read_workloads(o);
  const std::size_t n = r.workloads.size();
  r.pairs = plan_matrix_pairs(n);
  r.cells.resize(n * n);
  for (std::size_t v = 0; v < n; ++v)
    for (std::size_t a = 0; a < n; ++a) {
      MatrixCell& c = r.cell(v, a);
      c.victim = v;
      c.aggressor = a;
      c.verdict_reason = "not measured";
    }
  return r;
}

// What the matrix will cost, said before anything runs (an estimate: a run that decides early is shorter,
// one that runs until decided may go on to its --max-duration).
void say_plan(const PlatformOptions& o, const MatrixResult& r) {
  const double phase = o.phase_s.value_or(10.0), warmup = o.matrix.warmup_s.value_or(2.0);
  const double per_run = 3.0 * phase + 2.0 * warmup + 2.0;  // two exclusive phases, the colocated one, set-up
  const std::size_t runs = o.matrix.predict ? prediction_run_count(o, r.workloads.size()) : r.pairs.size();
  std::cerr << fmt::format("interference-bench: matrix: {} workloads, {} runs{} under mode {}, about {} s each "
                           "({} s phases{}): about {} s in all; --budget {} s\n",
                           r.workloads.size(), runs, o.matrix.predict ? " (--predict)" : "", r.mode, significant(per_run, 3),
                           significant(phase, 3), o.rounds ? "" : ", longer where a run goes on until decided",
                           significant(per_run * static_cast<double>(runs), 3), significant(o.sweep_budget_s, 4));
}

void write_matrix(const std::string& out, const MatrixResult& r) {
  write_file_atomic(out + "/matrix.json", matrix_to_json(r).dump(2) + "\n");
  write_file_atomic(out + "/matrix.md", matrix_markdown(r));
  write_file_atomic(out + "/matrix.html", matrix_html(r));
}

// One pair's run, its two cells (one on the diagonal) filled from its results.
void run_pair(const PlatformOptions& o, const std::string& out, std::size_t index, MatrixResult& r) {
  MatrixPair& p = r.pairs[index];
  const std::string dir = out + "/pairs/" + std::to_string(p.a) + "-" + std::to_string(p.b);
  std::cerr << "interference-bench: matrix: run " << index + 1 << " of " << r.pairs.size() << ": "
            << printable(r.workloads[p.a].name, 80) << " beside " << printable(r.workloads[p.b].name, 80) << "\n";
  const MatrixChildRun c = run_matrix_child(o, pair_scenario(r, p, matrix_timing(o)), dir);
  p.run = c.run;
  if (c.run.outcome == MatrixRunOutcome::interrupted) r.interrupted = true;
  if (!c.results) {
    for (MatrixCell* cell : {&r.cell(p.a, p.b), &r.cell(p.b, p.a)}) cell->verdict_reason = c.run.reason;
    return;
  }
  r.cell(p.a, p.b) = measured_cell(*c.results, pair_tenant_name(p.a, false), p.a, p.b);
  if (p.a != p.b) r.cell(p.b, p.a) = measured_cell(*c.results, pair_tenant_name(p.b, false), p.b, p.a);
}

void run_pairs(const PlatformOptions& o, const std::string& out, MatrixResult& r, std::chrono::steady_clock::time_point t0) {
  std::vector<const MatrixRun*> done;
  for (std::size_t i = 0; i < r.pairs.size(); ++i) {
    MatrixPair& p = r.pairs[i];
    if (matrix_run_skipped(o, done, t0, r.interrupted, p.run)) {
      for (MatrixCell* cell : {&r.cell(p.a, p.b), &r.cell(p.b, p.a)}) cell->verdict_reason = p.run.reason;
    } else {
      run_pair(o, out, i, r);
      done.push_back(&p.run);
    }
    write_matrix(out, r);  // after each run: a stopped matrix keeps what it finished
  }
}

}  // namespace

int matrix_command(const PlatformOptions& o) {
  refuse_mode(o.matrix.mode);
  if (o.price_exclusive.has_value() != o.price_shared.has_value())
    throw InputError("matrix: --price-exclusive and --price-shared go together (a device-hour and one share of it)");
  MatrixResult r = new_matrix_result(o);
  check_workloads(o, r);
  // --predict on a backend without a calibrated pressure workload (cuda) is refused here, in one line, before
  // the plan is said or the output folder made (run_prediction plans it again, the same way).
  if (o.matrix.predict) plan_prediction(r);
  const std::string out_dir = o.out.empty() ? platform_default_out("matrix") : o.out;
  platform_check_outputs(o, out_dir, kMatrixFiles);
  OutputDir folder("--out", out_dir, kMatrixFiles, o.force);
  const std::string& out = folder.path();
  folder.keep();
  say_plan(o, r);
  write_matrix(out, r);
  const auto t0 = std::chrono::steady_clock::now();
  if (o.matrix.predict)
    run_prediction(o, r, out, t0);
  else
    run_pairs(o, out, r, t0);
  judge_matrix(r);
  r.exit_code = matrix_exit_code(r);
  write_matrix(out, r);
  std::cout << matrix_markdown(r) << "\nresults: " << out << "/matrix.json\n";
  if (!o.history.empty()) return record_matrix_history(o, r, out + "/matrix.json");  // --history DB (nightly rows)
  return r.exit_code;
}

}  // namespace ib
