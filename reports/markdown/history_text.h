// `history DB`: the trend of recorded runs as plain lines, one per run per tenant. Formats the records
// harness/history/history.h read; computes nothing.
#pragma once

#include "harness/history/history.h"

#include <string>
#include <vector>

namespace ib {

// One line per record: start time, run id, git sha, scenario/mode, tenant (workload), P95 slowdown
// with its CI, median slowdown, verdict. A matrix's cells (tenant "VICTIM beside AGGRESSOR") follow one line of
// its own: its packing's devices for its workloads.
std::string history_text(const std::vector<HistoryTenantRecord>& records);

}  // namespace ib
