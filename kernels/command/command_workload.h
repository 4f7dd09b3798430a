// The `command` workload: a user's program as a tenant, run by an ordinary worker through the
// Workload interface (docs/design.md section 11), so the orchestrator, the modes and the analysis treat it
// like any of ours. set-up starts the program, a sample is its next step, begin_block releases it,
// end_block pauses it (heartbeat "pause", or SIGSTOP to its group for the stdout metric), teardown
// ends its process group. With the wall metric a sample is one whole run (hyperfine's model).
#pragma once

#include "kernels/workload.h"

namespace ib {

// Registers "command" (every backend; its params are a command object, kernels/command/command_spec.h).
void register_command_workload(Registry& registry);

}  // namespace ib
