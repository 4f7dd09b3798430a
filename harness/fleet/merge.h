// `merge`: many nodes' results into one fleet result (docs/design.md section 10; docs/fleet.md). Reading
// (inputs.cpp) turns files and folders into members, one per task folder (a folder with a task.json of
// deploy/ib-task.sh) or, for files outside any task folder, one per node their meta names; judging
// (judge.cpp) groups members by GPU model, driver and MIG state, names the stragglers of each group,
// ranks the worst GPUs and sets the exit code. A node's unreadable file is its status, never an error
// of the merge: only the merge's own input (a path that does not exist, a bad --expect-nodes file,
// nothing to merge) is bad input.
#pragma once

#include "harness/results/fleet.h"

#include <string>
#include <vector>

namespace ib {

struct MergeRequest {
  std::vector<std::string> inputs;       // files (results.json, vet.json, sustain.json, task.json) or folders
  std::string expect_nodes_file;         // --expect-nodes ("" for none)
  int expect_tasks = 0;                  // --expect-tasks N: indices 0..N-1 (0 for none)
  FleetOptions options;
  std::vector<std::string> argv;
};

// The whole merge: read, expect, judge. Throws InputError (exit 2) for the merge's own bad input.
FleetResult merge_fleet(const MergeRequest& request);

// The members the inputs hold, sorted by node then task index, each with its status from what it
// holds (judging may still make an ok member a straggler). Throws InputError for a missing input.
std::vector<FleetMember> read_members(const std::vector<std::string>& inputs);

// --expect-nodes FILE: one node name per line; blank lines and lines starting with # are skipped,
// surrounding blanks trimmed. Throws InputError "FILE:LINE: ..." for a name with blanks or control
// characters and for a file that does not read.
std::vector<std::string> read_expected_nodes(const std::string& file);

// Adds a `missing` member for each expected node and task index nothing was found for, and marks
// members of nodes not in a non-empty `nodes` list as unexpected.
void add_expectations(std::vector<FleetMember>& members, const std::vector<std::string>& nodes, int tasks,
                      FleetSummary& summary);

// Groups, stragglers, worst-GPU ranking, counts and the exit code, from the members.
void judge_fleet(FleetResult& fleet);

}  // namespace ib
