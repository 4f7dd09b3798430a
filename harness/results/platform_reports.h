// Plain result structs of the platform commands (docs/design.md sections 4, 5 and 6): the checks of
// `probe` and `vet`, the sustained-load report of `sustain`, the known answers of `selftest`.
// harness/vet/ computes every field; reports/<format>/platform_<format>.h and selftest_<format>.h format them.
#pragma once

#include "harness/nvml/telemetry.h"
#include "harness/core/names.h"
#include "harness/results/results.h"

#include <optional>
#include <string>
#include <vector>

namespace ib {

// The version of the probe, vet and sustain documents (results.json has its own, kSchemaVersion): a
// reader takes any minor of its major.
constexpr const char* kPlatformSchemaVersion = "1.1";  // 1.1: vet.json and sustain.json have host
constexpr const char* kPlatformSchemaMajor = "1";

// How one check of the vetting checklist came out; `unknown` when there was nothing to judge.
enum class CheckOutcome { pass, warn, fail, unknown };
template <>
struct EnumWords<CheckOutcome> {
  static constexpr std::array<const char*, 4> words = {"pass", "warn", "fail", "unknown"};
};

// One check with its evidence, the rule applied and where the rule comes from.
struct CheckResult {
  std::string id;         // stable key, e.g. "memory_total", "stability:compute"
  std::string title;
  CheckOutcome status = CheckOutcome::unknown;
  std::string evidence;   // what was seen, with numbers
  std::string threshold;  // the rule applied
  std::string source;     // seed / docs/design.md section
};

// `probe`: the checklist of one device.
struct ProbeReport {
  int device = 0;
  double idle_window_s = 0.0;
  std::vector<CheckResult> checks;
  bool pass = false;  // no check failed
};

// ---- sustain ----

// The sustained-load verdict's words (load_verdict_name in harness/nvml/telemetry.h says the same).
template <>
struct EnumWords<LoadVerdict> {
  static constexpr std::array<const char*, 4> words = {"pass", "warn", "fail", "inconclusive"};
};

// One window of the sustained load: its throughput beside its telemetry.
struct SustainWindow {
  double t_s = 0.0;  // start, seconds after the first sample's start
  double throughput = 0.0;
  TelemetryWindow telemetry;
};

// `sustain`: the verdict on a power-heavy load and the 1 s series behind it.
struct SustainReport {
  double duration_s = 0.0;  // what was asked (--duration)
  LoadVerdict verdict = LoadVerdict::inconclusive;
  std::vector<std::string> evidence;  // one line per rule
  // false: the run measured nothing; only the verdict, the evidence and the run are reported.
  bool measured = false;
  std::string workload;
  std::string throughput_unit;
  std::vector<SustainWindow> windows;
  std::size_t telemetry_readings = 0;
  SustainThresholds thresholds;
  std::string run_results;  // the results.json of the run behind it
  std::string host;         // the node it ran on (the scheduler's name for it, else the host name)
  int exit_code = 0;        // what the command exits with (not written)
};

// ---- vet ----

// What the vet budget was split into.
struct VetSteps {
  double idle_window_s = 0.0;
  double stability_phase_s = 0.0;
  double sustain_s = 0.0;
};

enum class CostRecommendation { exclusive, shared, undecided };
template <>
struct EnumWords<CostRecommendation> {
  static constexpr std::array<const char*, 3> words = {"exclusive", "shared", "undecided"};
};

// One option of the cost advice: throughput in units of work per second, price per hour.
struct PricedOption {
  double throughput = 0.0;
  double price_per_h = 0.0;
  double cost_per_unit = 0.0;
};

// The cost advice (docs/design.md section 6) for the first workload compared with the baseline.
struct CostReport {
  std::string unit;      // the unit of work, e.g. "FLOP"
  std::string workload;
  PricedOption exclusive, shared;
  bool p95_cutoff_passed = false;
  CostRecommendation recommendation = CostRecommendation::undecided;
  std::string reason;
};

// `vet`: the checklist of the probe and of the measuring steps, the verdict over it, the cost advice.
struct VetReport {
  std::string start_time;  // ISO 8601 UTC
  std::string host;        // the node it ran on (the scheduler's name for it, else the host name)
  int device = 0;
  std::string backend;
  double budget_s = 0.0;
  VetSteps steps;
  std::string baseline;  // the --baseline file ("" without one)
  CheckOutcome verdict = CheckOutcome::pass;  // fail when a check failed, else warn when one warned, else pass
  std::vector<CheckResult> checks;
  std::optional<CostReport> cost;
  std::string stability_results;  // the files of the measuring steps
  std::string sustain_results;
  bool interrupted = false;  // a stop signal ended the vet early: the checks are those it finished
};

// ---- selftest ----

enum class KnownAnswerStatus { ok, inconclusive, wrong };

// One known answer (docs/design.md section 4, "Self-test") and what the machine gave.
struct KnownAnswer {
  std::string name;      // "shared_resource" or "idle_neighbour"
  std::string expected;  // in words
  KnownAnswerStatus status = KnownAnswerStatus::inconclusive;  // inconclusive: the run could not say
  std::string evidence;
  std::optional<TenantAggregate> aggregate;  // the victim's, from the run's results.json
  std::optional<double> resolution;          // the half-width of its P95 slowdown's interval (Decision)
};

struct SelftestReport {
  std::string backend;
  double budget_s = 0.0;
  double duration_s = 0.0;  // of each phase
  int exit_code = 0;
  std::vector<KnownAnswer> known_answers;
  std::optional<double> resolvable_p95_slowdown;  // the idle case's CI bound
};

}  // namespace ib
