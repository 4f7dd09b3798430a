// A user's program as a tenant (docs/design.md section 11): what a scenario's `command` object says, checked
// at load time, and the parsed form the command workload runs.
//
//   "command": {"argv": ["python3", "train.py"], "cwd": "...", "env": {"K": "V"},
//               "metric": "heartbeat" | {"stdout": "REGEX", "interval_s": N} | "wall",
//               "ready_timeout_s": 60, "step_timeout_s": 30, "stop_timeout_s": 2,
//               "step_unit": "step", "work_unit": "token",
//               "prepare": [...], "cleanup": [...],               (wall only)
//               "run_length_h": 12, "interruptible": false, "price_per_hour": {...}}  (the advice)
#pragma once

#include "kernels/command/step_pattern.h"
#include "kernels/workload.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ib {

enum class CommandMetric { heartbeat, stdout_match, wall };
const char* command_metric_name(CommandMetric m);

struct CommandSpec {
  std::vector<std::string> argv;           // argv[0] found on PATH when it has no '/'
  std::string cwd;                         // "" = the worker's
  std::map<std::string, std::string> env;  // set on top of the worker's environment (placement included)
  CommandMetric metric = CommandMetric::heartbeat;
  std::string pattern;                     // metric stdout: the regular expression
  // metric stdout: each line reports the interval since the previous one, about this long (a server's
  // periodic tokens/s, sysbench --report-interval); unset: each line is one step.
  std::optional<double> interval_s;
  double ready_timeout_s = 60.0;           // start to first heartbeat / first match
  double step_timeout_s = 30.0;            // the longest a step (or a wall run) may take
  double stop_timeout_s = 2.0;             // SIGTERM to SIGKILL at the end
  std::string step_unit = "step";          // the unit of one sample's work
  std::string work_unit;                   // heartbeat: name of the optional per-step work (e.g. "token")
  std::vector<std::string> prepare;        // wall: run before each timed run (untimed)
  std::vector<std::string> cleanup;        // wall: run once at the end
  std::optional<double> run_length_h;      // declared, for the advice
  std::optional<bool> interruptible;       // declared, for the advice
};

// The largest a stop may take: the worker's teardown must fit in the harness's stop grace (3 s).
constexpr double kMaxStopTimeoutS = 2.5;
constexpr std::size_t kMaxArgs = 4096;
// The range of metric.interval_s: from a fast progress bar's redraws to an hourly report.
constexpr double kMinIntervalS = 0.001, kMaxIntervalS = 3600.0;

// Checks a `command` object; returns it normalised (every key present, metric as given) or nullopt
// with `error` = "<key path>: <what was expected>" (relative to the command object, like
// validate_params: ": ..." for the object itself).
std::optional<Params> validate_command(const nlohmann::json& given, std::string& error);
// The parsed form of validated params (validate_command's output).
CommandSpec command_from_params(const Params& params);

}  // namespace ib
