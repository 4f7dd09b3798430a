// The lines between a conductor and a joined node (node_protocol.h).
#include "harness/nodes/node_protocol.h"

#include "harness/core/json_input.h"
#include "harness/core/text.h"
#include "harness/nodes/join.h"
#include "harness/worker/messages.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace ib {

namespace {

using json = nlohmann::json;

std::string dump_line(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n"; }

bool string_array(const json& j, const char* key, std::vector<std::string>& out) {
  const auto it = j.find(key);
  if (it == j.end()) return true;  // absent: empty
  if (!it->is_array()) return false;
  for (const auto& v : *it) {
    if (!v.is_string()) return false;
    out.push_back(v.get<std::string>());
  }
  return true;
}

std::optional<int> int_field(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end()) return std::nullopt;
  return int_value(*it);  // an integer past int's range is refused, not wrapped
}

struct Writer {
  json operator()(const StartWorkerLine& s) const {
    return {{"type", "start"}, {"id", s.id}, {"args", s.args}, {"env", s.env}, {"env_unset", s.env_unset}, {"log", s.log}};
  }
  json operator()(const KillWorkerLine& k) const { return {{"type", "kill"}, {"id", k.id}}; }
  json operator()(const EndLine&) const { return {{"type", "end"}}; }
  json operator()(const ClockEndLine&) const { return {{"type", "clock_end"}}; }
  json operator()(const ReadyLine&) const { return {{"type", "ready"}}; }
  json operator()(const ExitedLine& e) const {
    json j{{"type", "exited"}, {"id", e.id}};
    if (e.status.exit_code) j["exit_code"] = *e.status.exit_code;
    if (e.status.signal) j["signal"] = *e.status.signal;
    return j;
  }
  json operator()(const StartFailedLine& f) const { return {{"type", "start_failed"}, {"id", f.id}, {"reason", f.reason}}; }
};

std::optional<NodeLine> parse_start(const json& j, int id, std::string& why) {
  StartWorkerLine s;
  s.id = id;
  if (!string_array(j, "args", s.args) || !string_array(j, "env", s.env) || !string_array(j, "env_unset", s.env_unset)) {
    why = "a start line whose args, env or env_unset is not an array of strings";
    return std::nullopt;
  }
  const auto log = j.find("log");
  if (log == j.end() || !log->is_string() || log->get<std::string>().find('/') != std::string::npos ||
      log->get<std::string>().empty() || log->get<std::string>()[0] == '.') {
    why = "a start line without a plain log file name";
    return std::nullopt;
  }
  s.log = log->get<std::string>();
  return s;
}

}  // namespace

std::string node_line(const NodeLine& l) { return dump_line(std::visit(Writer{}, l)); }

std::optional<NodeLine> parse_node_line(const std::string& line, std::string& why) {
  const json j = json::parse(line, nullptr, false);
  const std::string type = j.is_object() && j.contains("type") && j.at("type").is_string() ? j.at("type").get<std::string>() : "";
  if (type == "end") return EndLine{};
  if (type == "clock_end") return ClockEndLine{};
  if (type == "ready") return ReadyLine{};
  const auto id = int_field(j, "id");
  if (!id || *id < 0) {
    why = type.empty() ? "not a conductor line: " + printable(line, 60) : "a " + type + " line without a worker id";
    return std::nullopt;
  }
  if (type == "start") return parse_start(j, *id, why);
  if (type == "kill") return KillWorkerLine{*id};
  if (type == "exited") {
    ExitedLine e{*id, {}};
    e.status.exit_code = int_field(j, "exit_code");
    e.status.signal = int_field(j, "signal");
    if (e.status.exit_code || e.status.signal) return e;
    why = "an exited line without an exit code or signal";
    return std::nullopt;
  }
  if (type == "start_failed" && j.contains("reason") && j.at("reason").is_string())
    return StartFailedLine{*id, j.at("reason").get<std::string>()};
  why = "not a conductor line: " + printable(line, 60);
  return std::nullopt;
}

std::string worker_hello_line(const WorkerHello& h) {
  return dump_line({{"type", "worker"}, {"version", kConductorProtocolVersion}, {"token", h.token}, {"node_rank", h.node_rank}, {"id", h.id}});
}

std::optional<WorkerHello> parse_worker_hello(const std::string& line, std::string& why) {
  const json j = json::parse(line, nullptr, false);
  if (!j.is_object() || j.value("type", json()) != "worker") {
    why = "not a worker's hello: " + printable(line, 60);
    return std::nullopt;
  }
  const auto version = int_field(j, "version"), node = int_field(j, "node_rank"), id = int_field(j, "id");
  if (!version || *version != kConductorProtocolVersion || !node || !id || !j.contains("token") || !j.at("token").is_string()) {
    why = "a worker's hello without this protocol's version, a node rank, an id or a token";
    return std::nullopt;
  }
  return WorkerHello{j.at("token").get<std::string>(), *node, *id};
}

std::string shift_report_times(const std::string& line, std::int64_t offset_ns) {
  json j = json::parse(line, nullptr, false);
  if (!j.is_object() || !j.contains("type") || !j.at("type").is_string()) return line;
  const auto shift = [offset_ns](json& v) {
    if (v.is_number_integer()) v = v.get<std::int64_t>() + offset_ns;
  };
  const std::string type = j.at("type").get<std::string>();
  if (type == "started" && j.contains("t_ns")) shift(j["t_ns"]);
  else if (type == "done") {
    for (const char* key : {"measure_start_ns", "measure_end_ns"})
      if (j.contains(key)) shift(j[key]);
  } else if (type == "samples" && j.contains("start_ns") && j.at("start_ns").is_array()) {
    for (auto& v : j["start_ns"]) shift(v);
  } else {
    return line;
  }
  return j.dump();
}

std::string shift_go_time(const std::string& text, std::int64_t offset_ns) {
  std::string out;
  for (std::size_t at = 0; at < text.size();) {  // line by line: a send may carry several
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = std::string_view(text).substr(at, end - at);
    auto m = line.rfind("go ", 0) == 0 ? parse_control_message(line) : std::nullopt;
    if (m && std::get<GoCommand>(m->body).at_ns > 0) {
      std::int64_t& t = std::get<GoCommand>(m->body).at_ns;
      t = std::max<std::int64_t>(1, t - offset_ns);  // 1: before the node's clock began, i.e. at once
      out += to_line(*m);
    } else {
      out.append(line);
      if (end < text.size()) out += '\n';
    }
    at = end + 1;
  }
  return out;
}

}  // namespace ib
