// `run` across nodes (docs/design.md section 13, issue 36), its parts in the cli: a node other than node 0 serves its
// conductor (nodes/node_agent.h); node 0 opens the conductor (nodes/conductor.h), records each node in the results'
// meta and hands the orchestrator the launcher that starts workers on the nodes (nodes/remote_launcher.h).
#pragma once

#include "harness/core/stop_signals.h"
#include "harness/results/results.h"
#include "harness/run/assemble.h"
#include "harness/nodes/conductor.h"
#include "harness/run/orchestrator.h"
#include "harness/scenario/scenario.h"

#include <memory>
#include <vector>

namespace ib {

// Clock exchanges with each node before each block (16 when it joins): a few milliseconds on a LAN.
constexpr std::size_t kClockExchangesPerBlock = 8;

// A node other than node 0: it keeps no results, it starts the workers the conductor places on it; their
// logs go to its --out folder. Returns the exit code (run_node_agent's).
int serve_as_node(const NodeParts& nodes, StopSignals& stop);

// Every placement names a node of the run; throws InputError naming the tenant.
void check_placed_nodes(const std::vector<Scenario>& scenarios, int nodes);
// After the join, before any worker starts: every CPU a tenant (or rank) placed on node R names is one node R's
// harness may run on, as its hello said (join.h); throws PlacementError naming the file, the field and the node.
// A node whose hello said no CPUs is not checked.
void check_node_cpus(const std::vector<Scenario>& scenarios, const std::vector<JoinedNodeLink>& nodes);

// Node 0's nodes: joined, their clocks measured, and the launcher that starts workers on them.
struct ConductedNodes {
  OpenConductor open;
  std::unique_ptr<NodesLauncher> launcher;
  ~ConductedNodes();  // the launcher says "end" to every node first, then the port closes
};
// Opens the conductor and records each node in `meta.nodes` (throws CannotRunError as open_conductor does, also
// when a stop signal came while the nodes or their clocks were awaited). Every wait of the nodes' protocol, then
// and during the run, ends on a stop signal (nodes/bounded_wait.h).
std::unique_ptr<ConductedNodes> conduct_nodes(const NodeParts& nodes, Launcher& local, Meta& meta, StopSignals& stop);
// The orchestrator's launcher becomes the nodes', each block re-measures every node's clock, and its start time
// lies far enough ahead that the go lines reach every node first (two round trips of the slowest node's).
void attach_nodes(ConductedNodes& nodes, OrchestratorOptions& oo);
// After the run: each node's clock as re-measured before its blocks, into `meta.nodes`.
void record_node_clocks(const NodesLauncher& launcher, Meta& meta);

}  // namespace ib
