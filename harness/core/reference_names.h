// The name of a scenario the run derives as a single-rank reference (amplification, docs/design.md section 13):
// "<scenario>.single-rank". One definition for the scenario seam, which derives it, and the analysis,
// which pairs a collective's aggregate with its reference's.
#pragma once

#include <string>

namespace ib {

inline constexpr const char* kSingleRankSuffix = ".single-rank";

inline std::string single_rank_reference_name(const std::string& scenario) { return scenario + kSingleRankSuffix; }

inline bool is_single_rank_reference_name(const std::string& scenario) {
  const std::string suffix = kSingleRankSuffix;
  return scenario.size() > suffix.size() && scenario.compare(scenario.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace ib
