// Which part this harness plays in a run across nodes (docs/design.md section 13): from the options, else from the
// launcher's variables (Slurm, a Kubernetes Indexed Job, torchrun). cli/ resolves it (the struct is run/run_request.h's);
// run/ conducts or serves.
#pragma once

#include "harness/run/run_request.h"

#include <map>
#include <string>

namespace ib {

// Throws InputError (exit 2) naming the option when --nodes > 1 and the node rank, the conductor's address
// or the token is missing from the options and from `env`, or is not valid.
NodeRole resolve_node_role(const RunRequest& o, const std::map<std::string, std::string>& env);

}  // namespace ib
