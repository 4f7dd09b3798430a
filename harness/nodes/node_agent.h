// A node of a run across nodes that is not node 0 (docs/design.md section 13, issue 36): its harness joins the
// conductor, answers its clock exchanges, then starts the workers the conductor places on it, each of which
// connects back to the conductor and speaks the worker protocol there (node_protocol.h). The node keeps no
// results of its own: the conductor writes the one results.json. Every worker it started is killed and
// reaped on every way out (the conductor's "end", its loss, a stop signal).
#pragma once

#include "harness/nodes/bounded_wait.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ib {

struct NodeAgentOptions {
  std::string conductor_host;  // the address the conductor listens on (the user's, or the launcher's)
  int conductor_port = 0;
  int node_rank = 1;
  int nodes = 2;
  std::string token;
  double join_timeout_s = 60.0;  // to reach the conductor and be welcomed (it may start after this node)
  std::string log_dir;           // the workers' logs
  std::string worker_exe;        // this binary
  nlohmann::json devices = nlohmann::json::array();  // said in the hello, for the conductor's results
  std::vector<int> cpus;  // said in the hello: the CPUs its workers may be placed on (the conductor checks placements)
};

// Returns the exit code: 0 when the conductor said "end"; kExitCannotRun when it could not join (unreachable,
// refused, silent until the join deadline: the reason on stderr); kExitWorkloadFailed when the conductor was
// lost mid-run (its connection closed, its keepalive unanswered, or no clock exchange in time);
// kExitInterrupted on a stop signal, in any of its waits (bounded_wait.h).
int run_node_agent(const NodeAgentOptions& o, const StopDescriptor& stop);

// A connected TCP socket to host:port (IPv4 or IPv6, a name resolved), kept alive as `kind`; -1 with `why` set
// when no address connects by `deadline_ns` (monotonic_ns) or a stop signal comes first.
int connect_tcp(const std::string& host, int port, std::int64_t deadline_ns, const StopDescriptor& stop, Connection kind,
                std::string& why);
// A listening TCP socket on host:port (port 0: any; the one taken is written back), or -1 with `why` set.
int listen_tcp(const std::string& host, int& port, std::string& why);

}  // namespace ib
