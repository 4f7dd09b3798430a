// Exit codes (docs/design.md section 8), shared by every command.
#pragma once

namespace ib {

enum ExitCode : int {
  kExitPass = 0,
  kExitVerdictFailed = 1,
  kExitBadInput = 2,
  kExitCannotRun = 3,
  kExitWorkloadFailed = 4,
  kExitInconclusive = 5,
  // An unexpected exception: a bug in interference-bench, not a fact about the machine (sysexits' EX_SOFTWARE).
  kExitInternalError = 70,
  kExitInterrupted = 130,
};

}  // namespace ib
