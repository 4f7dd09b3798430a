// The comparison of two results files (harness/results/comparison.h) as JSON (`compare --json`). Formats;
// computes nothing.
#pragma once

#include "harness/results/comparison.h"

#include <nlohmann/json.hpp>

namespace ib {

nlohmann::ordered_json comparison_to_json(const Comparison& c);

}  // namespace ib
