// Node 0 of a run across nodes (docs/design.md section 13, issue 36): it listens on the address the user or the
// launcher named (nowhere else), waits for the other nodes to join (join.h), measures each one's
// clock against its own (clock_link.h, from this side: the conductor asks, the node answers), and hands the
// nodes to the launcher that starts workers on them (remote_launcher.h).
#pragma once

#include "harness/nodes/bounded_wait.h"
#include "harness/nodes/join.h"
#include "harness/nodes/remote_launcher.h"

#include <string>
#include <vector>

namespace ib {

struct ConductorOptions {
  std::string host;  // where to listen: --conductor HOST:PORT
  int port = 0;
  int nodes = 2;
  std::string token;
  double join_timeout_s = 60.0;
  std::size_t clock_exchanges = 16;
  StopDescriptor stop{};  // a stop signal ends every wait: for the nodes, for their lines (bounded_wait.h)
  RefusalSink on_refused{};  // each connection refused while joining, as it is refused (join.h)
};

struct OpenConductor {
  int listen_fd = -1;  // owned by the caller
  std::vector<JoinedNodeLink> nodes;  // by node rank, 1..nodes-1, each with its clock offset
  std::vector<std::string> refused;   // connections refused while joining: peer and why (each told on_refused)
};

// Throws CannotRunError naming what failed: the address that cannot be listened on (a name that did not resolve
// by the join deadline: it is tried again every second until then; a name that resolves only to loopback in a
// run of several nodes), the nodes missing at the
// deadline or when a stop signal came, a node whose clock could not be measured (its lines late, wrong or cut
// short by a stop signal); nothing is left open then.
OpenConductor open_conductor(const ConductorOptions& o);

// "node R (host): offset +X ms +- Y us" for the run's stderr and the results.
std::string describe_node(const JoinedNodeLink& n);

}  // namespace ib
