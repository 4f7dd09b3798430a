// The saved baseline of mode mig (--baseline FILE): a GPU in MIG mode has no whole device, so the exclusive
// phase can come from a results file written by an exclusive run on a whole GPU (or on one MIG instance, as
// mig-sweep's yardstick is).
#pragma once

#include "harness/modes/plan.h"
#include "harness/scenario/scenario.h"

#include <map>
#include <string>
#include <vector>

namespace ib {

// Exclusive phases from a results file written by an exclusive run (raw samples needed), by
// "<scenario>/<tenant>" for every tenant of `scenarios`, read by harness/results/results_reader.h. Throws
// InputError when the file does not read or one is missing.
std::map<std::string, BaselinePhase> load_baseline(const std::string& path, const std::vector<Scenario>& scenarios);

}  // namespace ib
