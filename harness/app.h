// The command line (CLI11): `interference-bench [run] ...`, `list`, and the hidden `worker`.
#pragma once

namespace ib {

// Exit codes (DESIGN.md section 8).
enum ExitCode : int {
  kExitPass = 0,
  kExitVerdictFailed = 1,
  kExitBadInput = 2,
  kExitCannotRun = 3,
  kExitWorkloadFailed = 4,
  kExitInconclusive = 5,
  kExitInterrupted = 130,
};

int run_app(int argc, char** argv);

}  // namespace ib
