// Platform vetting commands (DESIGN.md sections 5 and 6): probe, sustain, baseline and vet.
// The measuring steps run this binary again as a child (`interference-bench --mode exclusive
// --scenario ...`) and read back its canonical results.json, so they share every guarantee of a
// normal run (worker processes, watchdog, atomic output, telemetry) without a second code path.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace ib {

struct PlatformOptions {
  int device = 0;
  std::string backend = "cuda";       // cuda | host (host: CPU workloads, for tests and CPU-only checks)
  std::string out;                    // output folder (sustain, vet) or file (baseline)
  bool json = false;                  // probe: JSON on stdout
  double idle_window_s = 5.0;         // probe: seconds of watching the idle GPU
  double duration_s = 300.0;          // sustain
  double telemetry_hz = 10.0;
  double min_clock_fraction = 0.70;   // sustain thresholds (DESIGN.md section 5)
  double max_reason_fraction = 0.01;
  double max_throughput_drop = 0.05;
  double budget_s = 600.0;            // vet
  std::string baseline;               // vet: a baseline file from an exclusive card
  std::optional<double> price_exclusive, price_shared;  // vet: per hour
  double cutoff = 0.40;
  double max_foreign_cpus = 0.25;     // passed to the measuring runs (run --max-foreign-cpus)
  double max_steal_cpus = 0.10;
  double selftest_budget_s = 60.0;    // selftest
};

// A measuring step: this binary again (`run` or `sustain`), as a child that dies with us
// (INTERFERENCE_BENCH_CHILD makes it set PR_SET_PDEATHSIG), with the foreign-load limits of `o` and
// `--out out_dir`; then its results.json.
struct ChildRun {
  int exit_code = 3;
  nlohmann::json results;  // null when the child wrote none
  std::string output;
};
ChildRun run_self(const PlatformOptions& o, std::vector<std::string> args, const std::string& out_dir, double timeout_s);

// `selftest` (harness/vet/selftest.cpp): known answers that tell whether this machine can measure now.
int selftest_command(const PlatformOptions& o);

// The subcommands `probe`, `sustain`, `baseline`, `vet` and `selftest` and their options.
struct PlatformCommands {
  CLI::App* probe = nullptr;
  CLI::App* sustain = nullptr;
  CLI::App* baseline = nullptr;
  CLI::App* vet = nullptr;
  CLI::App* selftest = nullptr;
  PlatformOptions options;
};
void add_platform_commands(CLI::App& app, PlatformCommands& commands);

// Runs the parsed platform subcommand; nullopt when none was given. Returns the exit code.
std::optional<int> run_platform_command(PlatformCommands& commands);

}  // namespace ib
