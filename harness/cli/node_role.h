// Which part this harness plays in a run across nodes (docs/design.md section 13): from the options, else from the
// launcher's variables (Slurm, a Kubernetes Indexed Job, torchrun). cli/ resolves it; run/ conducts or serves.
#pragma once

#include "harness/cli/run_options.h"

#include <map>
#include <string>

namespace ib {

struct NodeRole {
  int nodes = 1;       // 1: a run on this node alone
  int node_rank = 0;   // 0 conducts
  std::string host;    // the conductor's address: where node 0 listens and the others connect
  int port = 0;
  std::string token;
};

// Throws InputError (exit 2) naming the option when --nodes > 1 and the node rank, the conductor's address
// or the token is missing from the options and from `env`, or is not valid.
NodeRole resolve_node_role(const RunOptions& o, const std::map<std::string, std::string>& env);

}  // namespace ib
