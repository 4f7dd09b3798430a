// The conductor's launcher for a run across nodes (docs/design.md section 13, issue 36): node 0's workers start
// here as processes, every other node's through that node's harness (node_agent.h), which starts the worker
// and lets it connect back to the conductor's address. The orchestrator sees one WorkerChannel per worker
// either way: the barrier, the key-value rendezvous and every report ride the worker protocol unchanged,
// and a remote worker's times arrive moved onto the conductor's clock (node_protocol.h). The foreign-load
// accounting sees node 0's processes only (a remote worker has no pid here).
#pragma once

#include "harness/nodes/bounded_wait.h"
#include "harness/nodes/clock_sync.h"
#include "harness/run/launcher.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace ib {

// A node that joined (join.h) and whose clock was measured.
struct JoinedNodeLink {
  int node_rank = 0;
  std::string host;
  int control_fd = -1;  // owned by the launcher once given
  ClockOffset offset;   // conductor time = node time + offset.offset_ns
  nlohmann::json devices = nlohmann::json::array();  // as its hello said (join.h)
  std::vector<int> cpus;                              // as its hello said (join.h; empty: not said)
};

class NodesLauncher final : public Launcher {
 public:
  // `local` starts the workers placed on node 0. A remote worker must connect to `listen_fd` with this run's
  // `token` within `start_timeout_s`; any other connection meanwhile is refused (one line on stderr naming its
  // peer and why) and remembered. `local_address`: the conductor's, given to node 0's workers as
  // IB_NODE_ADDRESS (where gloo listens). `stop` ends every wait (bounded_wait.h): a worker's start, a clock
  // re-measurement, a remote worker's exit (then left to its node, which kills it at "end").
  NodesLauncher(Launcher& local, std::string local_address, int listen_fd, std::string token, std::vector<JoinedNodeLink> nodes,
                double start_timeout_s, StopDescriptor stop = {});
  ~NodesLauncher() override;  // says "end" to every node (each kills what it still runs) and closes
  NodesLauncher(const NodesLauncher&) = delete;
  NodesLauncher& operator=(const NodesLauncher&) = delete;

  // spec.node 0: a local process; else a worker on that node. Throws std::runtime_error when it cannot start
  // (the node refused or is lost, no connection back in time).
  std::unique_ptr<WorkerChannel> start(const SpawnSpec& spec) override;
  std::vector<std::string> refused() const { return refused_; }
  // The nodes lost so far (their control connection ended before "end", or a line on it was not the protocol's):
  // "node R (host) was lost mid-run", with ": it sent ..." for the latter.
  std::vector<std::string> lost() const;

  // Measures every node's clock again (before each block: CLOCK_MONOTONIC of two machines drifts apart by
  // some parts per million), `exchanges` requests each on its control connection, each answer awaited for a
  // few of the node's round trips (answer_wait_ns: at least 2 s); the new offset moves the times of what its
  // workers say from now on. A node that does not answer in time keeps its last offset; a stop signal ends it.
  void remeasure_clocks(std::size_t exchanges);
  struct NodeClock {
    int node_rank = 0;
    ClockOffset at_join;
    int measurements = 1;  // at the join, and each re-measurement that got an answer
    std::int64_t lowest_offset_ns = 0, highest_offset_ns = 0;
  };
  std::vector<NodeClock> clocks() const;

  struct Link;  // one node's control connection, shared with its workers' channels

 private:
  int accept_worker(Link& link, int id);

  Launcher& local_;
  std::string local_address_;
  int listen_fd_;
  std::string token_;
  std::vector<std::shared_ptr<Link>> links_;
  double start_timeout_s_;
  StopDescriptor stop_;
  int next_id_ = 0;
  std::vector<std::string> refused_;
};

}  // namespace ib
