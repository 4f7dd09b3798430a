// The options of `run` (the default command), parsed into one request (harness/run/run_request.h);
// run_command.cpp has run/assemble.h turn it into a run and wires the parts.
#pragma once

#include "harness/core/stop_signals.h"
#include "harness/run/run_request.h"
#include "kernels/workload.h"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace ib {

// The options of `run` on `app` (the default command), filled into `o` by the parse.
void add_run_options(CLI::App& app, RunRequest& o);

// `run`: every scenario of the options through its set-up, the output folder and its writers, and the planned
// repetitions (run/planned_scenarios.h); the exit code of the run (or of its refusal).
int run_command(const RunRequest& o, const std::vector<std::string>& argv, const Registry& registry, StopSignals& stop);

// One line on stderr for a refusal (shortened when it is bad input); returns `code`.
int fail(int code, const std::string& message);

}  // namespace ib
