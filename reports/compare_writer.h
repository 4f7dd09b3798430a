// The comparison of two results files (harness/results/comparison.h) as Markdown (the terminal) and as
// JSON (--json). Formats; computes nothing.
#pragma once

#include "harness/results/comparison.h"

#include <nlohmann/json.hpp>

#include <string>

namespace ib {

std::string comparison_markdown(const Comparison& c);
nlohmann::ordered_json comparison_to_json(const Comparison& c);

}  // namespace ib
