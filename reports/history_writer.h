// `interference-bench history DB`: the trend of recorded runs, one line per run per tenant (or JSON).
// Formats the records harness/history/history.h read; computes nothing.
#pragma once

#include "harness/history/history.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ib {

// One line per record: start time, run id, git sha, scenario/mode, tenant (workload), P95 slowdown
// with its CI, median slowdown, verdict.
std::string history_text(const std::vector<HistoryTenantRecord>& records);

// The records as a JSON array (one object per record, repetitions included).
nlohmann::ordered_json history_json(const std::vector<HistoryTenantRecord>& records);

}  // namespace ib
