// The command lines of the platform commands (probe, sustain, baseline, vet, selftest; the commands
// themselves are harness/vet/platform.h): every number checked finite and in its documented range.
#pragma once

#include "harness/vet/platform.h"

#include <optional>

namespace CLI {
class App;
}

namespace ib {

class StopSignals;

struct PlatformCommands {
  CLI::App* probe = nullptr;
  CLI::App* sustain = nullptr;
  CLI::App* baseline = nullptr;
  CLI::App* vet = nullptr;
  CLI::App* selftest = nullptr;
  CLI::App* mig_sweep = nullptr;
  CLI::App* matrix = nullptr;
  PlatformOptions options;
};
void add_platform_commands(CLI::App& app, PlatformCommands& commands);

// Runs the parsed platform subcommand; nullopt when none was given. Returns the exit code; throws
// InputError, CannotRunError or Interrupted (a stop signal before anything was measured).
std::optional<int> run_platform_command(PlatformCommands& commands, StopSignals& stop, const Registry& registry);

}  // namespace ib
