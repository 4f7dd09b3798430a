// The command line (CLI11): `interference-bench [run] ...`, `list`, the platform commands and the
// hidden `worker`.
#pragma once

#include "harness/core/exit_codes.h"

namespace ib {

int run_app(int argc, char** argv);

}  // namespace ib
