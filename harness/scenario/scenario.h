// Scenarios and suites (docs/design.md section 3): loading and validation before anything runs.
// Every problem is reported as one line "<file>: <field path>: <what was expected>" (exit code 2).
#pragma once

#include "harness/core/errors.h"
#include "harness/core/names.h"
#include "kernels/workload.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ib {

enum class Mode { exclusive, timeslice, mps, mig, streams };
template <>
struct EnumWords<Mode> {
  static constexpr std::array<const char*, 5> words = {"exclusive", "timeslice", "mps", "mig", "streams"};
};
// The enum is the modes' words; what each mode is and does is its row in harness/modes/mode_table.h.
const char* mode_name(Mode m);
std::optional<Mode> parse_mode(const std::string& s);
const std::vector<std::string>& mode_names();

struct Placement {
  int node = 0;                             // a run across nodes: which node's harness starts it (--nodes)
  std::vector<int> cpus;                    // host CPU affinity of the worker (empty: any)
  // The worker's CUDA device (default: the scenario's `device`): a rank of a collective on its own GPU.
  // Modes exclusive, timeslice and mps only; telemetry and the foreign-load probe watch the scenario's.
  std::optional<int> device;
  std::optional<int> mig_instance;          // mode mig: index into the enumerated MIG instances
  std::optional<std::string> mig_profile;   // mode mig: profile name, e.g. "1g.18gb"
  std::optional<int> mps_active_thread_percentage;  // mode mps: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
  std::optional<std::string> mps_pinned_mem_limit;  // mode mps: CUDA_MPS_PINNED_DEVICE_MEM_LIMIT value, e.g. "8G"
  nlohmann::json raw = nlohmann::json::object();    // as given, for the results
};

// The workload a scenario's `command` tenant runs (kernels/command).
constexpr const char* kCommandWorkload = "command";

struct Tenant {
  std::string name;        // defaults to "<workload>#<index>"
  std::string role;        // "victim", "aggressor" or "" (unspecified)
  std::string workload;
  Params params;           // validated, defaults filled in
  Placement placement;
  // A collective tenant's ranks (docs/design.md section 13): one worker process each, placed by
  // rank_placements[r] (the tenant's placement where the scenario gives none). Any other tenant: 1, empty.
  int ranks = 1;
  std::vector<Placement> rank_placements;
  // "amplification": true on a collective tenant (docs/design.md section 13): the run also measures its
  // single-rank reference (single_rank.h), the rank that shares a CPU or GPU with another tenant
  // (`shared_rank`, found when the scenario is read) run alone as one rank beside the same neighbours.
  bool amplification = false;
  int shared_rank = -1;
  // Where rank r runs (rank 0 of a tenant without ranks: its placement).
  const Placement& placement_of(int rank) const {
    return rank < static_cast<int>(rank_placements.size()) ? rank_placements[static_cast<std::size_t>(rank)] : placement;
  }
};
// The most ranks a tenant may have.
constexpr int kMaxRanks = 64;

// Whether any two ranks of `t` share a GPU: the same node and device (a rank without a device of its own is on
// `scenario_device`). Then every rank's NCCL must allow it, not only theirs: from 2.30 each rank checks every
// pair of ranks at init and fails unless its own process set NCCL_MULTI_RANK_GPU_ENABLE=1 (NCCL src/init.cc,
// the peer-info loop; docs/fakes.md). So every rank's worker gets IB_RANKS_SHARE_GPU=1.
bool ranks_share_a_gpu(const Tenant& t, int scenario_device);

// Rank `rank`'s index among the ranks of `t` on its node (what torchrun calls LOCAL_RANK: IB_LOCAL_RANK).
int local_rank(const Tenant& t, int rank);

// What a tenant adds to the harness's watchdog: a command's ready_timeout_s to its start and its
// step_timeout_s to each block (a sample cannot be cut short); 0 for our workloads.
struct TenantAllowances {
  double ready_s = 0.0;
  double step_s = 0.0;
};
TenantAllowances tenant_allowances_s(const Tenant& t);

struct Scenario {
  std::string file;        // where it came from ("" when built in code)
  std::string name;
  std::string description;
  Mode mode = Mode::timeslice;
  int device = 0;
  double warmup_s = 2.0;
  double duration_s = 10.0;
  int repetitions = 1;
  double cutoff = 0.40;
  // The collective timeout a collective tenant's longest stall is held against (--collective-timeout; the
  // default is PyTorch's process-group timeout, 10 minutes).
  double collective_timeout_s = 600.0;
  std::vector<Tenant> tenants;
};

// The documented ranges of a scenario's numbers (docs/scenarios.md); the command line's
// overrides are held to the same ones.
constexpr double kMinWarmupS = 0.001, kMaxWarmupS = 3600.0;
constexpr double kMinDurationS = 0.01, kMaxDurationS = 86400.0;
constexpr double kMaxCutoff = 100.0;  // a slowdown of +10000%
constexpr int kMaxRepetitions = 1000;
constexpr std::size_t kMaxTenants = 64;

// What the command line overrides in every scenario (unset: the scenario's own value).
struct ScenarioOverrides {
  std::optional<Mode> mode;
  std::optional<double> warmup_s;
  std::optional<double> duration_s;
  std::optional<int> repetitions;
  std::optional<double> cutoff;
  std::optional<double> collective_timeout_s;
  // --mode all: placement keys of another mode than the scenario's are kept, not refused.
  bool lenient_placement = false;
};

struct ValidationContext {
  const Registry* registry = nullptr;
  Backend backend = Backend::host;
  std::vector<int> available_cpus;  // CPUs this process may run on
};

// The one-line form `run --victim-command -- PROGRAM ARGS...`: the user's command as the victim beside
// each aggressor in turn (one scenario per aggressor, "command+<workload>", the workloads' defaults).
struct VictimCommand {
  std::vector<std::string> argv;
  std::string metric = "heartbeat";          // --victim-metric: heartbeat | wall | stdout:REGEX
  std::vector<std::string> aggressors;       // --aggressors (empty: default_aggressors)
};
// gemm, copy, latency on a GPU; host-compute, host-copy on the host.
std::vector<std::string> default_aggressors(Backend backend);
// Builds and validates the scenarios (mode timeslice unless overridden); throws InputError naming
// the option that is wrong (--victim-metric, --aggressors).
std::vector<Scenario> victim_command_scenarios(const VictimCommand& v, const ScenarioOverrides& overrides,
                                               const ValidationContext& ctx);

// Parses and validates one scenario document; throws InputError naming `file` and the field path.
Scenario parse_scenario(const nlohmann::json& doc, const std::string& file, const ScenarioOverrides& overrides,
                        const ValidationContext& ctx);
// Reads a scenario file (JSON, at most 4 MiB, nesting at most 32 deep, no key twice in an object);
// throws InputError for I/O and syntax errors too.
Scenario load_scenario(const std::string& path, const ScenarioOverrides& overrides, const ValidationContext& ctx);
// Throws InputError when two scenarios of one run have the same name (a suite listing a file twice).
void check_unique_scenario_names(const std::vector<Scenario>& scenarios);

struct SuiteInfo {
  std::string name;
  std::string description;
  std::string file;
  std::optional<int> repetitions;  // overrides every scenario's (the command line still wins)
  // Scenario files (absolute paths) per backend name ("host", "cuda").
  std::vector<std::pair<std::string, std::vector<std::string>>> scenarios_by_backend;
};
// Suites are scenarios/suites/<name>.json: {"name", "description", "repetitions"?, "scenarios": {"host": [...], "cuda": [...]}}
// with scenario paths relative to the scenarios directory.
SuiteInfo load_suite(const std::string& scenarios_dir, const std::string& name);
std::vector<SuiteInfo> list_suites(const std::string& scenarios_dir);

// The scenarios directory: $INTERFERENCE_BENCH_SCENARIOS, <exe>/../share/interference-bench/scenarios,
// or the source tree's scenarios/ (for a build that was not installed).
std::string find_scenarios_dir();

// CPUs this process may run on (sched_getaffinity).
std::vector<int> available_cpus();

}  // namespace ib
