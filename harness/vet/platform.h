// Platform vetting commands (docs/design.md sections 5 and 6): probe, sustain, baseline and vet.
// The measuring steps run this binary again as a child (`interference-bench --mode exclusive
// --scenario ...`) and read back its canonical results.json, so they share every guarantee of a
// normal run (worker processes, watchdog, atomic output, telemetry) without a second code path.
//
// Errors throw like the rest of the harness: InputError (exit 2) for bad options or a wrong baseline
// file, CannotRunError (exit 3) where NVML is missing. The documents they write are computed here into
// the structs of harness/results/platform_reports.h and formatted by reports/<format>/platform_<format>.h.
#pragma once

#include "harness/nvml/nvml.h"
#include "kernels/workload.h"
#include "harness/results/matrix.h"
#include "harness/results/platform_reports.h"
#include "harness/results/results_reader.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ib {

// `matrix` (harness/vet/matrix_command.cpp): its own options; the runs' timing, cutoff, budget and prices are
// PlatformOptions' phase_s, rounds, cutoff, sweep_budget_s, price_exclusive and price_shared.
struct MatrixOptions {
  std::string workloads;              // --workloads LIST (matrix.h matrix_workloads_from_list) or a scenario FILE
  std::string mode = "timeslice";     // --mode: how each pair shares the device
  std::string cpus;                   // --cpus LIST: placement.cpus of every workload without its own (host backend)
  std::optional<double> warmup_s;     // --warmup S of every run (default: the runs')
  bool predict = false;               // --predict: N k + N + k profiling runs instead of every pair (matrix_predict.h)
  int predict_sample = 3;             // --predict-sample K: pairs measured to report the prediction's error
};

struct PlatformOptions {
  // The workloads, for checking a scenario (mig-sweep) before anything is made; nullptr: not checked here.
  const Registry* registry = nullptr;
  int device = 0;
  std::string backend = "cuda";       // cuda | host (host: CPU workloads, for tests and CPU-only checks)
  std::string out;                    // output folder (sustain, vet) or file (baseline)
  bool json = false;                  // probe: JSON on stdout
  double idle_window_s = 5.0;         // probe: seconds of watching the idle GPU
  double duration_s = 300.0;          // sustain
  double telemetry_hz = 10.0;
  double min_clock_fraction = 0.70;   // sustain thresholds (docs/design.md section 5)
  double max_reason_fraction = 0.01;
  double max_throughput_drop = 0.05;
  double budget_s = 600.0;            // vet
  std::string baseline;               // vet: a baseline file from an exclusive card
  std::optional<double> price_exclusive, price_shared;  // vet: per hour
  double cutoff = 0.40;
  double max_foreign_cpus = 0.25;     // passed to the measuring runs (run --max-foreign-cpus)
  double max_steal_cpus = 0.10;
  double selftest_budget_s = 60.0;    // selftest
  bool force = false;                 // --force: replace the results an existing --out holds
  // True once a stop signal arrived (the command's StopSignals); asked between steps and passed to
  // the measuring steps, which then get SIGTERM, write what they finished and exit 130.
  std::function<bool()> stop;
  std::string junit;                  // sustain, vet: also write JUnit XML here (--junit FILE)
  std::string html;                   // vet: --html FILE (the checklist as a page)
  std::string history;                // vet: --history DB (harness/history/history.h), after vet.json is written
  std::string version, git_sha;       // of this binary, for the history (set by the command line)
  std::vector<std::string> argv;      // mig-sweep: the command line, for its report
  // mig-sweep (harness/vet/mig_sweep_command.cpp)
  std::string scenario;               // --scenario FILE: the tenants to place
  std::string layouts = "all";        // --layouts all | FILE (one layout a line: "3g.71gb,2g.35gb")
  double sweep_budget_s = 3600.0;     // --budget S: layouts that would not fit are skipped, and said so
  std::optional<double> phase_s;      // --duration S: each layout's phases (default: the scenario's)
  std::optional<int> rounds;          // --rounds N: each layout's run a fixed N rounds (default: until decided)
  std::string references = "timeslice,mps";  // --references: the whole-GPU-equivalent references, or "none"
  std::string prices;                 // --prices FILE: {"profile": price of one instance, ...}
  MatrixOptions matrix;
};

// A measuring step: this binary again (`run` or `sustain`), as a child that dies with us
// (INTERFERENCE_BENCH_CHILD makes it set PR_SET_PDEATHSIG), with the foreign-load limits of `o` and
// `--out out_dir`; then its results.json, read back (harness/results/results_reader.h).
struct ChildRun {
  int exit_code = 3;
  std::optional<ResultsDocument> results;  // empty when the child wrote none (or one that does not read)
  std::string output;                      // the child's stdout and stderr (and why its results did not read)
};
// `env`: more of the child's environment (NAME=VALUE), beside INTERFERENCE_BENCH_CHILD=1.
ChildRun run_self(const PlatformOptions& o, std::vector<std::string> args, const std::string& out_dir, double timeout_s,
                  const std::vector<std::string>& env = {});
// The arguments of a conductor's child `run` (mig-sweep's entries, matrix's runs): `mode` on `scenario` with
// --backend, --device, --telemetry-hz, --cutoff, and --duration and a fixed --rounds where given.
std::vector<std::string> child_run_args(const PlatformOptions& o, const std::string& mode, const std::string& scenario);
// The last non-empty line of a child's output, printable and cut: what it said when it refused.
std::string child_last_line(const std::string& output);

// The commands (their options are parsed in harness/cli/platform_commands.cpp). Each returns its exit
// code; throws InputError, CannotRunError or Interrupted (a stop signal before anything was measured).
int probe_command(const PlatformOptions& o);
int sustain_command(const PlatformOptions& o);
int baseline_command(const PlatformOptions& o);
int vet_command(const PlatformOptions& o);
// `mig-sweep` (harness/vet/mig_sweep_command.cpp): each valid MIG layout for a scenario's tenants, measured and
// compared; the recommendation as a mig-parted config.
int mig_sweep_command(const PlatformOptions& o);
// `matrix` (harness/vet/matrix_command.cpp): every pair of a set of workloads measured (or predicted, --predict),
// which pairs may share, the fewest devices that hold them all.
int matrix_command(const PlatformOptions& o);

// Shared by the platform commands' files: NVML for `command` with --device checked (exit 3 without
// NVML, 2 for a device it does not see); the default output folder; the output checks of --out.
std::unique_ptr<Nvml> platform_nvml(const std::string& command, int device);
std::string platform_default_out(const std::string& what);
void platform_check_outputs(const PlatformOptions& o, const std::string& out, const std::vector<std::string>& own_files);
// matrix --history DB (nightly): the matrix's cells and packing appended (history.h, record_matrix) after its
// matrix.json (`file`) is written. Returns the matrix's exit code, or exit_code_after_history_failure's when
// the database cannot be used (one line on stderr naming it; matrix.json stays written).
int record_matrix_history(const PlatformOptions& o, const MatrixResult& r, const std::string& file);
// `selftest` (harness/vet/selftest.cpp): known answers that tell whether this machine can measure now.
int selftest_command(const PlatformOptions& o);
// The self-test's first known answer: two identical tenants time-sharing one resource (its scenario).
inline constexpr int kSelftestGemmReps = 16;
nlohmann::json selftest_shared_scenario(const std::string& backend, double warmup, double duration);

// ---- the judgements of vet and sustain: pure functions over what the measuring steps read back ----

// One tenant's exclusive phase from a results file (with raw samples), as vet compares it.
struct ExclusivePhase {
  std::string name;
  std::string workload;
  Work work;
  PhaseResult phase;  // as the file has it
  // What a P95 comparison judges, as finalize_run does: per-request latency where the workload has it
  // (an open-loop sample lasts as long as its arrivals do), else sample time; the counted values by block.
  std::vector<std::vector<double>> judged_blocks;
  bool by_latency() const { return !phase.latencies_s.empty(); }
  std::size_t judged_count() const;
  const char* basis() const { return by_latency() ? "per-request latency" : "sample time"; }
};

// The exclusive phases of the first run that were measured and have raw samples, in tenant order.
std::vector<ExclusivePhase> exclusive_phases(const ResultsDocument& doc);

// Throughput stability from the CV of 1 s window throughput (docs/design.md section 4, seed 003):
// pass <= 1.5%, warn <= 10%, fail above, unknown when there were fewer than 2 windows (NaN).
CheckOutcome stability_outcome(double window_cv);
CheckResult stability_check(const ExclusivePhase& phase);

// p95_slowdown = P95(here) / P95(baseline) - 1 of one workload, judged on its CI against `cutoff`
// (slowdown_verdict); unknown when the baseline lacks the workload or one side has per-request
// latencies and the other not.
CheckResult p95_against_baseline(const ExclusivePhase& here, const ExclusivePhase* baseline, double cutoff,
                                 const std::string& baseline_file);

// fail when a check failed, else warn when one warned, else pass.
CheckOutcome vet_verdict(const std::vector<CheckResult>& checks);

// What `sustain` exits with: the run's own 4 (a workload failed) or 130 (interrupted) first; then 1
// for a failed or inconclusive verdict (a sustained load that could not be judged is not a pass),
// else 0.
int sustain_exit_code(LoadVerdict verdict, int run_exit_code);

}  // namespace ib
