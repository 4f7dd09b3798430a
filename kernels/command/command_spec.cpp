#include "kernels/command/command_spec.h"

#include <cmath>

namespace ib {

using nlohmann::json;

const char* command_metric_name(CommandMetric m) {
  switch (m) {
    case CommandMetric::heartbeat: return "heartbeat";
    case CommandMetric::stdout_match: return "stdout";
    case CommandMetric::wall: return "wall";
  }
  return "?";
}

namespace {

// A failed check: the key path and what was expected (validate_command's error format).
struct Bad {
  std::string key, what;
};

std::string shown(const json& v) {
  const std::string s = v.dump();
  return s.size() <= 40 ? s : s.substr(0, 40) + "...";
}

// A string without NUL (it becomes a C string for exec).
bool plain_string(const json& v) { return v.is_string() && v.get<std::string>().find('\0') == std::string::npos; }

json argv_list(const json& v, const std::string& key, bool may_be_empty) {
  if (!v.is_array() || (!may_be_empty && v.empty()) || v.size() > kMaxArgs)
    throw Bad{key, std::string("expected ") + (may_be_empty ? "a list" : "a non-empty list") +
                       " of strings (the program and its arguments, no shell), got " + shown(v)};
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!plain_string(v[i])) throw Bad{key + "[" + std::to_string(i) + "]", "expected a string, got " + shown(v[i])};
  if (!v.empty() && v[0].get<std::string>().empty()) throw Bad{key + "[0]", "expected a program name, got \"\""};
  return v;
}

json environment(const json& v) {
  if (!v.is_object()) throw Bad{"env", "expected an object of strings {\"NAME\": \"value\"}, got " + shown(v)};
  for (const auto& [name, value] : v.items()) {
    if (name.empty() || name.find('=') != std::string::npos || name.find('\0') != std::string::npos)
      throw Bad{"env", shown(json(name)) + " is not an environment variable name"};  // JSON: a NUL shows as \u0000
    if (!plain_string(value)) throw Bad{"env." + name, "expected a string, got " + shown(value)};
  }
  return v;
}

// "heartbeat", "wall" or {"stdout": REGEX} with a regex StepPattern accepts, and "interval_s" when each line
// reports an interval (a running total needs it).
json metric(const json& v) {
  if (v.is_string() && (v == "heartbeat" || v == "wall")) return v;
  if (v.is_object() && v.contains("stdout")) {
    for (const auto& [key, value] : v.items())
      if (key != "stdout" && key != "interval_s")
        throw Bad{"metric." + (key.size() <= 40 ? key : key.substr(0, 40) + "..."), "unknown key (known: stdout, interval_s)"};
    if (!v.at("stdout").is_string()) throw Bad{"metric.stdout", "expected a regular expression, got " + shown(v.at("stdout"))};
    std::string error;
    const auto pattern = StepPattern::compile(v.at("stdout").get<std::string>(), error);
    if (!pattern) throw Bad{"metric.stdout", error};
    if (v.contains("interval_s")) {
      const json& i = v.at("interval_s");
      if (!i.is_number() || !std::isfinite(i.get<double>()) || i.get<double>() < kMinIntervalS || i.get<double>() > kMaxIntervalS)
        throw Bad{"metric.interval_s", "expected the seconds between two of its lines in [0.001, 3600], got " + shown(i)};
    } else if (pattern->reads_a_total()) {
      throw Bad{"metric.interval_s", "required with a total (the seconds between two of its lines): a running count is "
                                     "read per interval, the work of one is the difference of two totals"};
    } else if (pattern->reads_the_interval()) {
      throw Bad{"metric.interval_s", "required with start and end, interval or elapsed (the seconds between two of its "
                                     "lines): only a line per interval says its interval"};
    }
    return v;
  }
  throw Bad{"metric", "expected \"heartbeat\", \"wall\" or {\"stdout\": \"REGEX\"} (with \"interval_s\": N for a line "
                      "per interval), got " + shown(v)};
}

json seconds(const json& v, const std::string& key, double lo, double hi) {
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < lo || v.get<double>() > hi)
    throw Bad{key, "expected a number of seconds in [" + shown(json(lo)) + ", " + shown(json(hi)) + "], got " + shown(v)};
  return v;
}

json unit_name(const json& v, const std::string& key, bool may_be_empty) {
  const bool ok = v.is_string() && v.get<std::string>().size() <= 32 && (may_be_empty || !v.get<std::string>().empty()) &&
                  v.get<std::string>().find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
                      std::string::npos;
  if (!ok) throw Bad{key, "expected a unit name of letters, digits and '_' (at most 32), got " + shown(v)};
  return v;
}

json prices(const json& v) {
  if (!v.is_object()) throw Bad{"price_per_hour", "expected {\"exclusive\": N, \"shared\": N}, got " + shown(v)};
  for (const auto& [key, value] : v.items()) {
    if (key != "exclusive" && key != "shared")
      throw Bad{"price_per_hour." + key, "unknown key (known: exclusive, shared)"};
    if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() <= 0.0)
      throw Bad{"price_per_hour." + key, "expected a price > 0 per hour, got " + shown(value)};
  }
  return v;
}

// Every key of a command, in one place: its check and its default.
json checked_command(const json& given) {
  if (!given.is_object()) throw Bad{"", "expected an object (argv, metric, ...), got " + shown(given)};
  static const char* const known[] = {"argv", "cwd", "env", "metric", "ready_timeout_s", "step_timeout_s",
                                      "stop_timeout_s", "step_unit", "work_unit", "prepare", "cleanup",
                                      "run_length_h", "interruptible", "price_per_hour"};
  for (const auto& [key, value] : given.items()) {
    bool ok = false;
    for (const char* k : known) ok |= key == k;
    if (!ok) throw Bad{key.size() <= 40 ? key : key.substr(0, 40) + "...",
                       "unknown key of a command (known: argv, cwd, env, metric, ready_timeout_s, step_timeout_s, "
                       "stop_timeout_s, step_unit, work_unit, prepare, cleanup, run_length_h, interruptible, "
                       "price_per_hour)"};
  }
  if (!given.contains("argv")) throw Bad{"argv", "required (the program and its arguments)"};
  json out = json::object();
  out["argv"] = argv_list(given.at("argv"), "argv", false);
  out["cwd"] = given.value("cwd", json(""));
  if (!plain_string(out["cwd"])) throw Bad{"cwd", "expected a folder, got " + shown(out["cwd"])};
  out["env"] = environment(given.value("env", json::object()));
  out["metric"] = metric(given.value("metric", json("heartbeat")));
  out["ready_timeout_s"] = seconds(given.value("ready_timeout_s", json(60.0)), "ready_timeout_s", 0.1, 3600.0);
  out["step_timeout_s"] = seconds(given.value("step_timeout_s", json(30.0)), "step_timeout_s", 0.01, 3600.0);
  out["stop_timeout_s"] = seconds(given.value("stop_timeout_s", json(2.0)), "stop_timeout_s", 0.0, kMaxStopTimeoutS);
  out["step_unit"] = unit_name(given.value("step_unit", json("step")), "step_unit", false);
  out["work_unit"] = unit_name(given.value("work_unit", json("")), "work_unit", true);
  out["prepare"] = argv_list(given.value("prepare", json::array()), "prepare", true);
  out["cleanup"] = argv_list(given.value("cleanup", json::array()), "cleanup", true);
  const bool wall = out["metric"] == "wall";
  if (!wall && !out["prepare"].empty()) throw Bad{"prepare", "only with metric \"wall\" (run before each timed run)"};
  if (!wall && !out["cleanup"].empty()) throw Bad{"cleanup", "only with metric \"wall\" (run once at the end)"};
  if (!out["work_unit"].get<std::string>().empty() && out["metric"] != "heartbeat")
    throw Bad{"work_unit", "only with metric \"heartbeat\" (a step's work comes with its heartbeat)"};
  out["run_length_h"] = nullptr;
  if (given.contains("run_length_h") && !given.at("run_length_h").is_null()) {
    const json& v = given.at("run_length_h");
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0.0 || v.get<double>() > 1e5)
      throw Bad{"run_length_h", "expected the job's length in hours (> 0), got " + shown(v)};
    out["run_length_h"] = v;
  }
  out["interruptible"] = given.value("interruptible", json(nullptr));
  if (!out["interruptible"].is_null() && !out["interruptible"].is_boolean())
    throw Bad{"interruptible", "expected true or false, got " + shown(out["interruptible"])};
  out["price_per_hour"] = prices(given.value("price_per_hour", json::object()));
  return out;
}

}  // namespace

std::optional<Params> validate_command(const json& given, std::string& error) {
  try {
    return checked_command(given);
  } catch (const Bad& bad) {
    error = bad.key + ": " + bad.what;
    return std::nullopt;
  }
}

CommandSpec command_from_params(const Params& p) {
  CommandSpec c;
  c.argv = p.at("argv").get<std::vector<std::string>>();
  c.cwd = p.at("cwd").get<std::string>();
  c.env = p.at("env").get<std::map<std::string, std::string>>();
  const json& m = p.at("metric");
  if (m.is_object()) {
    c.metric = CommandMetric::stdout_match;
    c.pattern = m.at("stdout").get<std::string>();
    if (m.contains("interval_s")) c.interval_s = m.at("interval_s").get<double>();
  } else {
    c.metric = m == "wall" ? CommandMetric::wall : CommandMetric::heartbeat;
  }
  c.ready_timeout_s = p.at("ready_timeout_s").get<double>();
  c.step_timeout_s = p.at("step_timeout_s").get<double>();
  c.stop_timeout_s = p.at("stop_timeout_s").get<double>();
  c.step_unit = p.at("step_unit").get<std::string>();
  c.work_unit = p.at("work_unit").get<std::string>();
  c.prepare = p.at("prepare").get<std::vector<std::string>>();
  c.cleanup = p.at("cleanup").get<std::vector<std::string>>();
  if (!p.at("run_length_h").is_null()) c.run_length_h = p.at("run_length_h").get<double>();
  if (!p.at("interruptible").is_null()) c.interruptible = p.at("interruptible").get<bool>();
  return c;
}

}  // namespace ib
