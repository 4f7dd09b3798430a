// Plain structs of a fleet result (docs/design.md section 10): many nodes' results merged by `merge`.
// harness/fleet/ computes every field; reports/<format>/fleet_<format>.h format them (fleet.json, fleet.md,
// JUnit, Prometheus, HTML). The fleet schema is reports/fleet.schema.json (docs/fleet.md).
#pragma once

#include "harness/core/names.h"
#include "harness/results/platform_reports.h"
#include "harness/results/results.h"

#include <optional>
#include <string>
#include <vector>

namespace ib {

constexpr const char* kFleetSchemaVersion = "1.0";

// What became of one member (a node's task) of the fleet, worst first in the order the exit code weighs
// them: every status but ok and inconclusive counts against the fleet (exit 1).
enum class MemberStatus {
  missing,         // expected (--expect-nodes / --expect-tasks) and nothing of it was found
  no_result,       // its task folder exists (task.json) but holds no results file
  unreadable,      // a results, vet or sustain file that does not read (truncated, not JSON, wrong schema)
  unfinished,      // task.json without an exit code: the task was killed or its node was lost
  bad_input,       // the run exited 2
  cannot_run,      // the run exited 3: this node cannot run what was asked
  workload_error,  // the run exited 4: a workload crashed, hung or ran out of memory
  interrupted,     // the run exited 130
  failed,          // a verdict or a platform check failed (exit 1)
  straggler,       // every verdict held, but a figure lies beyond its group's robust bound on the bad side
  inconclusive,    // nothing failed, a verdict is inconclusive (exit 5)
  ok,
};
template <>
struct EnumWords<MemberStatus> {
  static constexpr std::array<const char*, 12> words = {
      "missing",     "no_result", "unreadable", "unfinished", "bad_input",    "cannot_run",
      "workload_error", "interrupted", "failed", "straggler", "inconclusive", "ok"};
};

// A task folder's task.json, written by deploy/ib-task.sh before its run (exit_code and ended null)
// and again after it (docs/fleet.md, "task.json").
struct TaskRecord {
  std::string scheduler;              // slurm | kubernetes | none
  std::string node;
  std::string job_id, array_job_id;   // "" when null
  std::optional<int> task_index;
  std::string results_dir;            // relative to the task folder
  std::optional<int> exit_code;       // none: the run has not ended (or its task was killed)
  std::string started;
  std::string ended;                  // "" when null
};

// The GPU (or, with the host backend, the CPUs) a member's numbers came from, as meta.devices says.
struct FleetDevice {
  DeviceKind kind = DeviceKind::host;
  std::string model;                 // GPU name or CPU model ("unknown" when no device was recorded)
  std::optional<int> index;          // the device index the run used
  std::string uuid;                  // "" when none (host)
  std::string driver;                // driver version, "" when none (host)
  std::string mig;                   // "on", "off" or "" (host, unknown)
};

// One verdict of a member: an aggregate of one of its results files.
struct FleetTenantFigure {
  std::string scenario, mode, tenant, workload;
  Verdict verdict = Verdict::error;
  std::string verdict_reason;
  std::optional<Estimate> p95_slowdown;      // with its interval
  double cutoff = 0.0;
  std::optional<double> exclusive_throughput;  // median over its repetitions' exclusive phases
  std::string throughput_unit;
};

// The figures compared across a group: a metric of one (scenario, mode, tenant).
enum class FleetMetric { exclusive_throughput, p95_slowdown };
template <>
struct EnumWords<FleetMetric> {
  static constexpr std::array<const char*, 2> words = {"exclusive_throughput", "p95_slowdown"};
};

struct FleetMember {
  std::string node;                   // "" for a missing task whose node is unknown
  std::optional<int> task_index;      // the scheduler's array / completion index, when known
  std::string scheduler;              // slurm | kubernetes | none | "" (unknown)
  std::string job_id, array_job_id;   // as the scheduler named them ("" when unknown)
  MemberStatus status = MemberStatus::ok;
  std::string detail;                 // why this status, in one line
  bool expected = true;               // false: a result from a node not in --expect-nodes
  std::optional<int> exit_code;       // the run's (task.json, else the results' summary)
  std::vector<std::string> files;     // what was read for it
  std::optional<FleetDevice> device;  // absent without a readable results file
  std::string group;                  // the key of its FleetGroup ("" without a device)
  std::vector<FleetTenantFigure> tenants;
  std::vector<CheckResult> checks;    // vet's checklist and sustain's verdict (id "sustained_load")
  double worst_z = 0.0;               // its largest bad-side robust z over the group's figures (0: none)
};

// Members with the same GPU model, driver and MIG state: the only ones a member is compared with.
struct FleetGroup {
  std::string key;                    // "model | driver d | MIG m"
  std::string model, driver, mig;
  std::vector<std::string> members;   // member names (node, or node.index), in member order
  bool judged = false;                // enough members to judge stragglers (kMinGroupForStragglers)
};

// A figure beyond its group's robust bound: |z| > k and the deviation above the smallest that matters.
struct FleetStraggler {
  std::string member;                 // node or node.index
  std::string node, group;
  FleetMetric metric = FleetMetric::exclusive_throughput;
  std::string scenario, mode, tenant, unit;
  double value = 0.0, group_median = 0.0, group_mad = 0.0, z = 0.0;
  int group_values = 0;               // how many members had this figure
  bool worse = true;                  // on the bad side (slower, or more slowdown): counts against the fleet
  std::string evidence;               // the numbers in words
};

// One line of the worst-GPU ranking.
struct FleetRank {
  std::string member, node, uuid, model;
  double worst_z = 0.0;               // see FleetMember::worst_z
  std::optional<double> worst_p95_slowdown;  // its largest P95 slowdown
  std::string worst_figure;           // which figure gave worst_z, in words
};

struct FleetOptions {
  double k = 3.5;                     // the robust bound: |modified z| > k (Iglewicz and Hoaglin)
  double min_throughput_change = 0.05;  // a throughput straggler also differs by > 5% of the group median
  double min_slowdown_change = 0.05;    // a P95 slowdown straggler also differs by > 5 points
  int worst = 10;                     // rank this many members
};
constexpr int kMinGroupForStragglers = 5;

struct FleetSummary {
  int members = 0;                    // all rows, missing ones included
  int expected_nodes = 0, expected_tasks = 0;  // 0: no expectation given
  int ok = 0, inconclusive = 0, failed = 0;    // failed: every status counting against the fleet
  int missing = 0, stragglers = 0;             // stragglers: members with a bad-side straggler figure
  std::vector<std::string> missing_nodes;      // expected nodes without any member
  std::vector<int> missing_tasks;              // expected indices without any member
  int exit_code = 0;                  // 0 all good, 1 a member failed or is missing, 5 only inconclusive
};

struct FleetResult {
  std::string schema_version = kFleetSchemaVersion;
  std::vector<std::string> argv;
  std::string version, git_sha, start_time;   // of the merge
  std::vector<std::string> inputs;            // as given
  std::string expect_nodes_file;              // "" when none
  FleetOptions options;
  std::vector<FleetMember> members;           // sorted by node, then task index
  std::vector<FleetGroup> groups;
  std::vector<FleetStraggler> stragglers;
  std::vector<FleetRank> worst;
  FleetSummary summary;
};

// A member's name in tables and JUnit: node, node.index, or "task index" for a missing task.
inline std::string member_name(const FleetMember& m) {
  if (m.node.empty()) return m.task_index ? "task " + std::to_string(*m.task_index) : "unknown";
  return m.task_index ? m.node + "." + std::to_string(*m.task_index) : m.node;
}

}  // namespace ib
