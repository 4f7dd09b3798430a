// The comparison of two saved results files (`interference-bench compare BASE NEW`): plain structs that
// harness/analysis/compare.cpp computes and reports/json/comparison_json and reports/markdown/comparison_markdown format. Definitions:
// docs/methodology.md, "Comparing two runs".
#pragma once

#include "harness/core/names.h"
#include "harness/stats/metrics.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ib {

// How a change is classified against --max-regression X (docs/methodology.md):
// worse: the whole CI is beyond X in the worse direction; inconclusive: the CI reaches beyond X but not
// wholly (or there is no CI, or too few values); better: the whole CI is beyond X in the better
// direction; same: otherwise (the CI stays within X of no change on the worse side).
enum class ChangeClass { better, same, worse, inconclusive };
template <>
struct EnumWords<ChangeClass> {
  static constexpr std::array<const char*, 4> words = {"better", "same", "worse", "inconclusive"};
};

// The compared metrics. Slowdowns change by NEW - BASE (in slowdown points: +0.05 = 5 points slower);
// throughput (colocated work per second) by NEW / BASE - 1 (-0.05 = 5% less work per second).
enum class ComparedMetric { p95_slowdown, median_slowdown, throughput };
template <>
struct EnumWords<ComparedMetric> {
  static constexpr std::array<const char*, 3> words = {"p95_slowdown", "median_slowdown", "throughput"};
};

struct MetricChange {
  ComparedMetric metric = ComparedMetric::p95_slowdown;
  double base = 0.0;   // the metric in BASE (pooled counted values of all its repetitions)
  double next = 0.0;   // the same in NEW
  Estimate change{};   // the change with its bootstrap CI (NaN CI: none)
  // The change this comparison resolves: the CI's half-width; and each side's own, the half-width of
  // the 95% interval of its metric's replicates (the wider side is why a comparison cannot resolve more).
  // Slowdowns in points; throughput's three as fractions (of the base figure, of each side's own).
  double resolution = 0.0, base_resolution = 0.0, next_resolution = 0.0;
  ChangeClass verdict = ChangeClass::inconclusive;
  std::string reason;  // why, in words with the numbers
};

// What identifies a tenant in both files.
struct TenantIdentity {
  std::string scenario, mode, tenant, workload;
  std::string params;  // the params object as compact JSON
};

struct TenantComparison {
  TenantIdentity id;
  std::string basis = "sample_time";  // or "request_latency", "time_per_work" (as the verdicts use)
  std::size_t base_exclusive_n = 0, base_colocated_n = 0, next_exclusive_n = 0, next_colocated_n = 0;
  std::vector<MetricChange> metrics;  // p95_slowdown, median_slowdown, throughput
  ChangeClass verdict = ChangeClass::inconclusive;  // worst of the metrics (worse > inconclusive > better > same)
  std::string reason;
};

struct Comparison {
  std::string base_file, next_file;
  double max_regression = 0.05;
  std::uint64_t seed = 1;
  int resamples = 1000;
  std::vector<TenantComparison> tenants;       // in BASE's order
  std::vector<TenantIdentity> only_in_base;    // tenants NEW does not have
  std::vector<TenantIdentity> only_in_next;    // tenants BASE does not have
  int better = 0, same = 0, worse = 0, inconclusive = 0;
  int exit_code = 0;  // 1 some tenant worse, else 5 some inconclusive (or nothing matched), else 0
};

}  // namespace ib
