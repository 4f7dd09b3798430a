// `history DB --json`: the recorded runs, one object per run per tenant. Formats the records
// harness/history/history.h read; computes nothing.
#pragma once

#include "harness/history/history.h"

#include <nlohmann/json.hpp>

#include <vector>

namespace ib {

// The records as a JSON array (one object per record, repetitions included).
nlohmann::ordered_json history_json(const std::vector<HistoryTenantRecord>& records);

}  // namespace ib
