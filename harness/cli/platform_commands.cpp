#include "harness/cli/platform_commands.h"

#include "harness/cli/validators.h"
#include "harness/core/stop_signals.h"
#include "harness/core/text.h"
#include "harness/run/foreign_load.h"
#include "harness/scenario/scenario.h"

#include <CLI/CLI.hpp>

namespace ib {

namespace {

// --device and --telemetry-hz, which every platform command takes.
void add_device_options(CLI::App* sub, PlatformOptions& o) {
  sub->add_option("--device", o.device, "CUDA/NVML device index (default 0)")->check(CLI::Range(0, 63));
  sub->add_option("--telemetry-hz", o.telemetry_hz, "NVML sampling rate (default 10)")->check(number_in(0.1, 1000.0));
}

// The options of the commands that run measuring steps.
void add_backend_options(CLI::App* sub, PlatformOptions& o) {
  sub->add_option("--backend", o.backend, "cuda (default) or host (CPU workloads)")->check(CLI::IsMember({"cuda", "host"}));
  // The measuring runs' foreign-load control (see `run --help`), passed on to them.
  sub->add_option("--max-foreign-cpus", o.max_foreign_cpus, "A measuring block is contaminated (re-run or excluded) when processes not of this run use more CPUs than "
                  "this (default 0.25)")
      ->check(number_in(0.0, 4096.0));
  o.max_steal_cpus = default_max_steal_cpus();
  sub->add_option("--max-steal-cpus", o.max_steal_cpus,
                  "A block is contaminated above this many stolen CPUs, summed over the machine's (default 5% of "
                  "them, at least 0.10: " + significant(o.max_steal_cpus, 2) + " here)")
      ->check(number_in(0.0, 4096.0));
  sub->add_flag("--force", o.force, "Replace the results an existing --out holds");
}

CLI::App* add_probe_command(CLI::App& app, PlatformOptions& o) {
  CLI::App* sub = app.add_subcommand("probe", "Check what this platform is without running anything on it: identity, memory, MIG, "
                                     "virtualisation, neighbours, power limit, clocks, PCIe, NVLink, ECC, host (pass/warn/fail/unknown)");
  add_device_options(sub, o);
  sub->add_flag("--json", o.json, "Print the checks as JSON on stdout instead of the table");
  sub->add_option("--idle-window", o.idle_window_s, "Seconds of watching the GPU while running nothing (default 5)")
      ->check(number_in(0.0, 3600.0));
  return sub;
}

CLI::App* add_sustain_command(CLI::App& app, PlatformOptions& o) {
  CLI::App* sub = app.add_subcommand("sustain", "Power-heavy GEMM for --duration seconds: clocks, power, throttling and throughput over time, a "
                                       "verdict (exit 0 pass or warn, 1 fail or inconclusive)");
  add_device_options(sub, o);
  add_backend_options(sub, o);
  sub->add_option("--duration", o.duration_s, "Seconds of sustained load (default 300)")->check(number_in(kMinDurationS, kMaxDurationS));
  sub->add_option("--out", o.out, "Output folder for sustain.json and its run (default "
                                   "interference-bench-results/sustain-<UTC time>-<pid>)")->check(non_empty());
  sub->add_option("--min-clock-fraction", o.min_clock_fraction, "FAIL when the median SM clock over the last half is below this fraction of the max SM clock (default 0.70)")
      ->check(number_in(0.0, 1.0));
  sub->add_option("--max-reason-fraction", o.max_reason_fraction, "FAIL when more than this fraction of readings have a clock-event reason of 0xE8 (hardware slowdown, thermal, "
                  "power brake) (default 0.01)")
      ->check(number_in(0.0, 1.0));
  sub->add_option("--max-throughput-drop", o.max_throughput_drop, "WARN when the last minute's throughput is more than this fraction below the first minute's (default 0.05)")
      ->check(number_in(0.0, 1.0));
  sub->add_option("--junit", o.junit, "Also write the verdict as JUnit XML here")->check(non_empty());
  sub->add_option("--history", o.history, "Append the verdict to this history database (SQLite) after sustain.json is written")->check(non_empty());
  return sub;
}

CLI::App* add_baseline_command(CLI::App& app, PlatformOptions& o) {
  CLI::App* sub = app.add_subcommand("baseline", "On an exclusive card: write the baseline file that vet --baseline compares with");
  add_device_options(sub, o);
  add_backend_options(sub, o);
  sub->add_option("--out", o.out, "Baseline file to write (results JSON)")->required()->check(non_empty());
  sub->add_option("--duration", o.duration_s, "Seconds per workload (default 20)")->check(number_in(kMinDurationS, kMaxDurationS));
  sub->preparse_callback([&o](std::size_t) { o.duration_s = 20.0; });
  return sub;
}

CLI::App* add_vet_command(CLI::App& app, PlatformOptions& o) {
  CLI::App* sub = app.add_subcommand("vet", "Vet a platform within a time budget: probe, stability, sustained load, P95 slowdown against a "
                                   "baseline, cost per unit of work (exit 1 when a check fails)");
  add_device_options(sub, o);
  add_backend_options(sub, o);
  sub->add_option("--budget", o.budget_s, "Seconds for the whole vet (default 600; 60 works)")->check(number_in(20.0, 86400.0));
  sub->add_option("--baseline", o.baseline, "Baseline file from `baseline` on an exclusive card of the same model")
      ->check(non_empty())->check(CLI::ExistingFile);
  sub->add_option("--price-exclusive", o.price_exclusive, "Price per hour of the exclusive option (with --price-shared: cost per unit of work and a recommendation)")->check(number_in(0.0, 1e12));
  sub->add_option("--price-shared", o.price_shared, "Price per hour of the shared option (this platform)")
      ->check(number_in(0.0, 1e12));
  sub->add_option("--cutoff", o.cutoff, "P95 slowdown cutoff (default 0.40)")->check(number_in(0.0, kMaxCutoff, true));
  sub->add_option("--out", o.out, "Output folder for vet.json, vet.md and the runs behind them (default "
                                   "interference-bench-results/vet-<UTC time>-<pid>)")->check(non_empty());
  sub->add_option("--junit", o.junit, "Also write the checks as JUnit XML here (one testcase per check)")->check(non_empty());
  sub->add_option("--html", o.html, "Also write the checklist with its evidence as one HTML page here")->check(non_empty());
  sub->add_option("--history", o.history, "Append the checklist to this history database (SQLite) after vet.json is written")->check(non_empty());
  return sub;
}

CLI::App* add_selftest_command(CLI::App& app, PlatformOptions& o) {
  CLI::App* sub = app.add_subcommand("selftest", "Known answers that tell whether this machine can measure now, and the smallest P95 slowdown it resolves "
                                        "(exit 0 right, 1 wrong, 5 could not say)");
  add_device_options(sub, o);
  add_backend_options(sub, o);
  sub->add_option("--budget", o.selftest_budget_s, "Seconds for the whole self-test (default 60)")
      ->check(number_in(20.0, 3600.0));
  sub->add_option("--out", o.out, "Output folder for selftest.json, selftest.md and its runs (default "
                                   "interference-bench-results/selftest-<UTC time>-<pid>)")->check(non_empty());
  return sub;
}

// The length and judgement of the child runs of a conductor of runs (mig-sweep, matrix): `each` names one run
// ("each layout's run"), `phase_default` says where its phase length comes from without --duration.
void add_child_run_options(CLI::App* sub, PlatformOptions& o, const std::string& each, const std::string& phase_default) {
  sub->add_option("--duration", o.phase_s, "Seconds per phase of " + each + " (default: " + phase_default + ")")
      ->check(number_in(kMinDurationS, kMaxDurationS));
  sub->add_option("--rounds", o.rounds, "A fixed N rounds in " + each + " (default: until its verdicts are decided)")
      ->check(CLI::Range(1, 1000));
  sub->add_option("--cutoff", o.cutoff, "P95 slowdown cutoff (default 0.40)")->check(number_in(0.0, kMaxCutoff, true));
}

CLI::App* add_mig_sweep_command(CLI::App& app, PlatformOptions& o) {
  CLI::App* sub = app.add_subcommand("mig-sweep", "On a GPU already in MIG mode: measure each MIG layout for a scenario's "
                                                  "tenants, recommend one, write it as a mig-parted config");
  add_device_options(sub, o);
  add_backend_options(sub, o);
  sub->add_option("--scenario", o.scenario, "The tenants to place (tenant i on the i-th instance of a layout)")
      ->required()->check(non_empty());
  sub->add_option("--layouts", o.layouts, "all (every valid layout, from NVML's profiles and placements) or a FILE "
                                          "with one layout a line, e.g. 3g.71gb,2g.35gb (default all)")
      ->check(non_empty());
  sub->add_option("--budget", o.sweep_budget_s, "Seconds for the whole sweep; entries that would not fit are skipped "
                                                "and listed, except the first layout (default 3600)")
      ->check(number_in(1.0, 7 * 86400.0));
  add_child_run_options(sub, o, "each layout's run", "the scenario's");
  sub->add_option("--baseline", o.baseline, "An exclusive run's results, the one yardstick of every layout (default: "
                                            "each tenant alone once on the GPU's largest instance, measured by the sweep)")
      ->check(non_empty())->check(CLI::ExistingFile);
  sub->add_option("--references", o.references, "The references beside the layouts, every tenant on the largest "
                                                "instance: timeslice, mps, both as timeslice,mps (default) or none")
      ->check(non_empty());
  sub->add_option("--prices", o.prices, "A JSON FILE of MIG profile -> price of one instance (e.g. $/h): layouts "
                                        "with as many tenants passing are ranked by STP per price")
      ->check(non_empty())->check(CLI::ExistingFile);
  sub->add_option("--out", o.out, "Output folder for mig-sweep.json, .md, .html, mig-parted.yaml and every run "
                                   "(default interference-bench-results/mig-sweep-<UTC time>-<pid>)")->check(non_empty());
  return sub;
}

CLI::App* add_matrix_command(CLI::App& app, PlatformOptions& o) {
  CLI::App* sub = app.add_subcommand("matrix", "Which of N workloads may share a device: every pair measured as one run, an N x N "
                                                "heatmap of P95 slowdowns, the pairs that may share, the fewest devices for all");
  add_device_options(sub, o);
  add_backend_options(sub, o);
  MatrixOptions& m = o.matrix;
  sub->add_option("--workloads", m.workloads, "A scenario FILE (its tenants) or a LIST of built-in workloads, "
                                              "NAME[:KEY=VALUE...] separated by commas, e.g. host-compute:n=128,host-copy,host-idle")
      ->required()->check(non_empty());
  sub->add_option("--mode", m.mode, "How each pair shares the device: timeslice (default), mps or streams")
      ->check(CLI::IsMember({"timeslice", "mps", "streams", "exclusive", "mig", "all"}));
  sub->add_option("--cpus", m.cpus, "host: pin every workload without a placement of its own to these CPUs (e.g. 0: "
                                    "every pair shares one core)")->check(non_empty());
  add_child_run_options(sub, o, "each run", "the runs' 10");
  sub->add_option("--warmup", m.warmup_s, "Seconds of warm-up of each run's workers (default: the runs' 2)")
      ->check(number_in(kMinWarmupS, kMaxWarmupS));
  sub->add_option("--budget", o.sweep_budget_s, "Seconds for the whole matrix; runs that would not fit are skipped and "
                                                "listed, except the first (default 86400)")
      ->check(number_in(1.0, 7 * 86400.0));
  sub->add_option("--price-exclusive", o.price_exclusive, "Price of one device per hour (with --price-shared: the packing's "
                                                          "price and seed 000's cost rule per shared workload)")
      ->check(number_in(0.0, 1e12));
  sub->add_option("--price-shared", o.price_shared, "Price of one share of a device per hour (e.g. half the device's)")
      ->check(number_in(0.0, 1e12));
  sub->add_flag("--predict", m.predict, "Predict the pairs from each workload's sensitivity and pressure against a "
                                        "calibrated ladder (N k + N + k runs, k = 3 levels, and the sample, instead of N(N+1)/2; docs/matrix.md)");
  sub->add_option("--predict-sample", m.predict_sample, "With --predict: pairs also measured, for the prediction's error "
                                                        "(default 3)")->check(CLI::Range(0, 136));
  sub->add_option("--out", o.out, "Output folder for matrix.json, .md, .html and every run (default "
                                   "interference-bench-results/matrix-<UTC time>-<pid>)")->check(non_empty());
  sub->add_option("--history", o.history, "Append the matrix's cells and packing to this history database (SQLite) after "
                                          "matrix.json is written (history DB --scenario matrix lists them)")->check(non_empty());
  sub->preparse_callback([&o](std::size_t) { o.sweep_budget_s = 86400.0; });
  return sub;
}

}  // namespace

void add_platform_commands(CLI::App& app, PlatformCommands& c) {
  c.probe = add_probe_command(app, c.options);
  c.sustain = add_sustain_command(app, c.options);
  c.baseline = add_baseline_command(app, c.options);
  c.vet = add_vet_command(app, c.options);
  c.selftest = add_selftest_command(app, c.options);
  c.mig_sweep = add_mig_sweep_command(app, c.options);
  c.matrix = add_matrix_command(app, c.options);
}

std::optional<int> run_platform_command(PlatformCommands& c, StopSignals& stop, const Registry& registry) {
  c.options.stop = stop.check();
  c.options.registry = &registry;
  if (c.probe && *c.probe) return probe_command(c.options);
  if (c.sustain && *c.sustain) return sustain_command(c.options);
  if (c.baseline && *c.baseline) return baseline_command(c.options);
  if (c.vet && *c.vet) return vet_command(c.options);
  if (c.selftest && *c.selftest) return selftest_command(c.options);
  if (c.mig_sweep && *c.mig_sweep) return mig_sweep_command(c.options);
  if (c.matrix && *c.matrix) return matrix_command(c.options);
  return std::nullopt;
}

}  // namespace ib
