// Plain structs of `mig-sweep` (docs/design.md section 12): which MIG layout suits a scenario's tenants.
// harness/vet/mig_sweep_command.cpp and mig_sweep.cpp compute every field; reports/<format>/mig_sweep_<format>.h and reports/yaml/mig_parted_yaml.h format them (mig-sweep.json,
// mig-sweep.md, the HTML page, the mig-parted config).
#pragma once

#include "harness/core/names.h"
#include "harness/results/results.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ib {

constexpr const char* kMigSweepSchemaVersion = "1.2";

// What became of one layout of the sweep.
// skipped_existing: pre-existing instances (never touched) hold the memory slices it needs; cannot_run: its
// run refused (exit 3) with the reason it gave.
// pending: not yet tried (only in the files written while the sweep runs).
enum class LayoutOutcome { pending, measured, failed, skipped_budget, skipped_existing, cannot_run, interrupted };
template <>
struct EnumWords<LayoutOutcome> {
  static constexpr std::array<const char*, 7> words = {"pending",          "measured",   "failed",     "skipped_budget",
                                                       "skipped_existing", "cannot_run", "interrupted"};
};

// How a sweep entry shares the GPU: a MIG layout (one instance per tenant), or a reference on the GPU's
// largest instance with every tenant on it, time-sliced or as MPS clients.
enum class SweepSharing { mig, timeslice, mps };
template <>
struct EnumWords<SweepSharing> {
  static constexpr std::array<const char*, 3> words = {"mig", "timeslice", "mps"};
};

// The GPU's power during an entry's colocated blocks (MIG instances share the card's power: the channel
// through which they still slow each other down). Over every NVML reading of the colocated phases.
struct SweepPower {
  std::size_t readings = 0;                // readings with a power figure
  std::optional<double> median_w, max_w;   // nvmlDeviceGetPowerUsage
  std::optional<double> limit_w;           // the enforced power limit (median of the readings that have one)
  // Readings whose clock-event reasons include a power cap (SwPowerCap or HwPowerBrakeSlowdown), over the
  // readings that have reasons; empty when none had.
  std::optional<double> power_capped_fraction;
};

// One tenant on its instance of a layout: the verdict of its P95 slowdown against the exclusive baseline.
struct SweepTenant {
  std::string tenant, workload, profile;  // profile: the instance it ran on
  Verdict verdict = Verdict::error;
  std::string verdict_reason;
  std::optional<Estimate> p95_slowdown;
  double cutoff = 0.0;
};

struct SweepLayout {
  SweepSharing sharing = SweepSharing::mig;
  std::string name;                   // mig: the profiles joined with ',' in tenant order, e.g. "3g.71gb,2g.35gb";
                                      // a reference: "timeslice on 7g.141gb"
  std::vector<std::string> profiles;  // tenant i runs on an instance of profiles[i] (a reference: one instance)
  LayoutOutcome outcome = LayoutOutcome::pending;
  std::string reason;                 // why skipped or failed ("" when measured)
  std::optional<int> exit_code;       // the layout's run
  std::string results_file;           // its results.json
  double seconds = 0.0;               // wall time of its run
  std::vector<SweepTenant> tenants;
  int passing = 0;                    // tenants whose verdict passed
  std::optional<double> stp;          // system throughput against the exclusive baseline (sum of E/C medians)
  std::optional<double> throttled_fraction;  // the largest colocated throttled fraction of its tenants (shared power)
  std::optional<SweepPower> power;           // empty when no colocated reading had a power figure
  std::optional<double> price;               // --prices: the sum of its instances' prices
  std::optional<double> stp_per_price;       // stp / price
};

// The one yardstick every layout is judged against (docs/design.md section 12): each tenant measured alone once,
// on one instance of the GPU's largest profile (a child run of mode exclusive there, which every layout's run
// then reads as its --baseline), or the user's --baseline file. Never a layout's own largest instance, which
// would flatter small symmetric layouts (a 1g.18gb tenant against a 1g.18gb instance is not slowed).
enum class YardstickSource { largest_instance, baseline };
template <>
struct EnumWords<YardstickSource> {
  static constexpr std::array<const char*, 2> words = {"largest_instance", "baseline"};
};

struct SweepYardstick {
  YardstickSource source = YardstickSource::largest_instance;
  std::string profile;                // largest_instance: the instance's profile ("" for a baseline file)
  // false: pre-existing instances (never touched) leave no room for the GPU's largest profile, so the
  // yardstick is the largest one that fits beside them; every layout still gets the same one.
  bool whole_gpu_largest = true;
  std::string uuid;                   // the instance it ran on ("" until made, or for a baseline file)
  std::string baseline_file;          // what every layout's run gets as --baseline
  LayoutOutcome outcome = LayoutOutcome::pending;  // measured (or a given --baseline), else why there is none
  std::string reason;
  std::optional<int> exit_code;       // its run (none for a given --baseline)
  double seconds = 0.0;
};

struct SweepRecommendation {
  std::string layout;                 // a SweepLayout name
  std::vector<std::string> profiles;
  std::string reason;
  bool distinguishable = true;        // false: the runner-up cannot be told apart with the runs' intervals
  std::string runner_up;              // "" when there is none
};

struct MigSweepResult {
  std::string schema_version = kMigSweepSchemaVersion;
  std::vector<std::string> argv;
  std::string version, git_sha, start_time, host;
  std::string scenario_file;
  std::string backend;
  int device = 0;
  std::string gpu_name, gpu_uuid;
  std::optional<unsigned> pci_device_id;   // nvmlPciInfo_t.pciDeviceId (device << 16 | vendor), mig-parted's device-filter
  std::string layouts_source;              // "all" (enumerated from NVML's profiles) or the --layouts file
  double budget_s = 0.0;
  std::vector<std::string> preexisting;    // instances found before the sweep (never touched), by profile
  SweepYardstick yardstick;
  std::vector<SweepLayout> layouts;
  // The references the user decides against (all tenants on the largest instance, time-sliced and under
  // MPS); skipped with the reason where they cannot run.
  std::vector<SweepLayout> references;
  std::string prices_file;                 // --prices FILE ("" without)
  std::map<std::string, double> prices;    // profile -> price of one instance (the file's unit, e.g. $/h)
  std::optional<SweepRecommendation> recommendation;
  bool interrupted = false;
  int exit_code = 0;
};

}  // namespace ib
