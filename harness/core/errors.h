// The two refusals every command shares (DESIGN.md section 8).
#pragma once

#include <stdexcept>

namespace ib {

// Bad input: a malformed scenario, an unknown workload, an impossible placement. Exit code 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A placement MIG cannot give (too few or no such instances, allreduce across instances): bad input
// for mode mig (exit 2), but under --mode all only mig is waived and the other modes run.
class PlacementError : public InputError {
 public:
  using InputError::InputError;
};

// This machine cannot run what was asked: no GPU, MIG disabled, no MPS daemon binary. Exit code 3.
class CannotRunError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ib
