// Plain structs of `mig-sweep` (DESIGN.md section 12): which MIG layout suits a scenario's tenants.
// harness/vet/mig_sweep.cpp computes every field; reports/mig_sweep_writer.h formats them (mig-sweep.json,
// mig-sweep.md, the HTML page, the mig-parted config).
#pragma once

#include "harness/core/names.h"
#include "harness/results/results.h"

#include <optional>
#include <string>
#include <vector>

namespace ib {

constexpr const char* kMigSweepSchemaVersion = "1.0";

// What became of one layout of the sweep.
enum class LayoutOutcome { measured, failed, skipped_budget, skipped_existing, interrupted };
template <>
struct EnumWords<LayoutOutcome> {
  static constexpr std::array<const char*, 5> words = {"measured", "failed", "skipped_budget", "skipped_existing",
                                                       "interrupted"};
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
  std::string name;                   // the profiles joined with ',' in tenant order, e.g. "3g.71gb,2g.35gb"
  std::vector<std::string> profiles;  // tenant i runs on an instance of profiles[i]
  LayoutOutcome outcome = LayoutOutcome::skipped_budget;
  std::string reason;                 // why skipped or failed ("" when measured)
  std::optional<int> exit_code;       // the layout's run
  std::string results_file;           // its results.json
  double seconds = 0.0;               // wall time of its run
  std::vector<SweepTenant> tenants;
  int passing = 0;                    // tenants whose verdict passed
  std::optional<double> stp;          // system throughput against the exclusive baseline (sum of E/C medians)
  std::optional<double> throttled_fraction;  // the largest colocated throttled fraction of its tenants (shared power)
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
  std::vector<SweepLayout> layouts;
  std::optional<SweepRecommendation> recommendation;
  bool interrupted = false;
  int exit_code = 0;
};

}  // namespace ib
