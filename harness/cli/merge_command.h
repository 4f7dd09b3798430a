// `merge RESULTS... --out DIR`: many nodes' results into one fleet result (docs/design.md section 10;
// docs/fleet.md). cli/ parses; harness/fleet/ merges; reports/<format>/fleet_<format>.h format.
#pragma once

#include "harness/fleet/merge.h"

#include <string>

namespace CLI {
class App;
}

namespace ib {

struct MergeCommand {
  CLI::App* sub = nullptr;
  MergeRequest request;
  std::string out;
  bool force = false;
};

void add_merge_command(CLI::App& app, MergeCommand& command);

// Writes fleet.json, fleet.md, fleet.junit.xml, fleet.prom and fleet.html into --out and prints
// fleet.md; exits 0 all good, 1 a member failed or is missing (a straggler counts), 5 only
// inconclusive, 2 bad input (a missing input, a bad --expect-nodes file, nothing to merge).
int merge_command(MergeCommand command, const std::vector<std::string>& argv);

}  // namespace ib
