// The canonical JSON result (reports/results.schema.json). Formats the result structs; computes nothing.
#pragma once

#include "harness/results/results.h"

#include <nlohmann/json.hpp>

#include <string>

namespace ib {

// include_raw=false (--no-raw) drops the per-sample arrays.
nlohmann::ordered_json results_to_json(const Results& results, bool include_raw);

}  // namespace ib
