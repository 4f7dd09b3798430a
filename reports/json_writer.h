// The canonical JSON result (reports/results.schema.json). Formats the result structs; computes nothing.
#pragma once

#include "harness/results.h"

#include <nlohmann/json.hpp>

#include <string>

namespace ib {

// include_raw=false (--no-raw) drops the per-sample arrays.
nlohmann::ordered_json results_to_json(const Results& results, bool include_raw);

// Writes `text` to `path` atomically: a temporary file in the same folder, fsync, then rename,
// so a reader (or an interrupted run) never sees a half-written file. Throws std::runtime_error.
void write_file_atomic(const std::string& path, const std::string& text);

}  // namespace ib
