// The two refusals every command shares (docs/design.md section 8).
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace ib {

// Bad input: a malformed scenario, an unknown workload, an impossible placement. Exit code 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A placement a mode cannot give (MIG: too few or no such instances, one process's allreduce over several; MPS or
// MIG: a worker on another node): bad input for that mode (exit 2), but under --mode all only that mode is waived
// and the other modes run.
class PlacementError : public InputError {
 public:
  using InputError::InputError;
};

// This machine cannot run what was asked: no GPU, MIG disabled, no MPS daemon binary. Exit code 3.
class CannotRunError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A result file could not be written (disk full, folder removed, permissions): the run keeps what it
// measured in memory and says which file is missing. A CannotRunError (exit 3) where nothing catches it.
class OutputError : public CannotRunError {
 public:
  OutputError(std::string path, const std::string& message) : CannotRunError(message), path_(std::move(path)) {}
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A stop signal arrived (core/stop_signals.h): the stage that noticed it unwinds to the command, which
// cleans up, keeps what finished and exits 130.
class Interrupted : public std::runtime_error {
 public:
  // `signal` 0: the stage that noticed does not know which one.
  explicit Interrupted(int signal = 0)
      : std::runtime_error(signal ? "interrupted by " + signal_name(signal) : std::string("interrupted")), signal_(signal) {}
  int signal() const { return signal_; }
  // "SIGINT", or "signal N" for one without an abbreviation.
  static std::string signal_name(int signal);

 private:
  int signal_;
};

}  // namespace ib
