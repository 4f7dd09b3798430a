// What more than one format shares (reports/ is sorted by format: docs/architecture.md): a JSON number (null
// when not finite), a Markdown table cell, an estimate with its interval in words, and the few words of one
// document that several of its formats print. They format; they compute nothing.
#pragma once

#include "harness/results/mig_sweep.h"
#include "harness/results/results.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ib {

// A number, or null when it is not finite (JSON has no NaN).
nlohmann::ordered_json json_number(double v);

// A number, or null when absent or not finite.
nlohmann::ordered_json optional_json_number(const std::optional<double>& v);

// {"value", "ci_low", "ci_high"} of an estimate (each a json_number), or null without one.
nlohmann::ordered_json optional_estimate_json(const std::optional<Estimate>& e);

// `s` made printable, cut at `max_chars`, with its '|' escaped so it stays one Markdown table cell.
std::string markdown_cell(const std::string& s, std::size_t max_chars);

// "+12.3% [+10.1%, +14.0%]", or "n/a" without an estimate.
std::string p95_words(const std::optional<Estimate>& e);

// The scale a figure in seconds is best read at: {1e3, "ms"} for 0.012 s, {1e9, "ns"} for 2.1e-10 s (the
// largest of s, ms, us, ns under which it is at least 1; ns below that).
struct TimeScale {
  double factor = 1.0;
  const char* prefix = "s";
};
TimeScale time_scale(double seconds);

// A phase's figure in its value_unit: for "s" milliseconds without a unit (the column says ms), for "s/UNIT" (time
// per unit of work) at its own scale with its unit, "0.2103 ns/B".
std::string phase_value_text(double value, const std::string& value_unit);

// merge's exit code in words (fleet.md, the fleet's HTML page).
const char* fleet_exit_words(int exit_code);

// The name of the mig-parted config mig-sweep's recommendation is written as (and the node label's value):
// in mig-sweep.json, mig-sweep.md and mig-parted.yaml.
constexpr const char* kMigPartedConfigName = "interference-bench-recommended";

// One sentence: what every layout's slowdowns and STP are against (mig-sweep.md, its HTML page).
std::string sweep_yardstick_words(const SweepYardstick& y);

// A layout's power while colocated in words, "n/a" without readings (mig-sweep.md, its HTML page).
std::string sweep_power_words(const std::optional<SweepPower>& p);

// The recommended layout's profiles counted, in the order they first appear (mig-sweep.md's Slurm line,
// mig-parted.yaml).
std::vector<std::pair<std::string, int>> mig_profile_counts(const std::vector<std::string>& profiles);

}  // namespace ib
