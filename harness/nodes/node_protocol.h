// What a conductor and its nodes say once a node has joined (join.h; docs/design.md section 13,
// issue 36). One JSON object per line, as the worker protocol; docs/architecture.md lists the lines.
//
// On the node's control connection, after the welcome:
//   node -> conductor: {"type":"ready"} (nothing of the conductor's is in flight: the welcome was read)
//   conductor -> node: {"type":"clock","t0":T0} ... (clock_link.h), then {"type":"clock_end"}
//   node -> conductor: the clock answers, then {"type":"clock_end"} (nothing of the node's is in flight after it)
//   conductor -> node: {"type":"start","id":K,"args":[...],"env":[...],"env_unset":[...],"log":NAME}
//                      {"type":"kill","id":K}   {"type":"end"}
//   node -> conductor: {"type":"exited","id":K,"exit_code":C} or {"type":"exited","id":K,"signal":S}
//                      {"type":"start_failed","id":K,"reason":W}
// A worker the node starts connects to the conductor's address on its own and says first
//   {"type":"worker","version":1,"token":T,"node_rank":R,"id":K}
// then speaks the worker protocol (protocol.h) on that connection, both ways: its reports' times are on
// the node's CLOCK_MONOTONIC, which the conductor moves onto its own timeline (shift_report_times).
#pragma once

#include "harness/process/process.h"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace ib {

constexpr std::size_t kMaxNodeLine = 256 * 1024;  // a start line carries a worker's arguments and environment

struct StartWorkerLine {
  int id = 0;
  std::vector<std::string> args, env, env_unset;  // as SpawnSpec's; the node runs its own executable
  std::string log;                                // a file name in the node's log folder
};
struct KillWorkerLine {
  int id = 0;
};
struct EndLine {};
struct ClockEndLine {};
struct ReadyLine {};
struct ExitedLine {
  int id = 0;
  ExitStatus status;
};
struct StartFailedLine {
  int id = 0;
  std::string reason;
};
using NodeLine = std::variant<StartWorkerLine, KillWorkerLine, EndLine, ClockEndLine, ReadyLine, ExitedLine, StartFailedLine>;

std::string node_line(const NodeLine& l);  // with its newline
// The line's message; nullopt with `why` set when it is none of them.
std::optional<NodeLine> parse_node_line(const std::string& line, std::string& why);

struct WorkerHello {
  std::string token;
  int node_rank = 0;
  int id = 0;
};
std::string worker_hello_line(const WorkerHello& h);
std::optional<WorkerHello> parse_worker_hello(const std::string& line, std::string& why);

// A worker report line from a node whose clock reads `offset_ns` less than the conductor's, with every time
// in it (started.t_ns, samples.start_ns, done.measure_start_ns / measure_end_ns) moved onto the conductor's
// timeline; any other line unchanged (the orchestrator validates it as from a local worker).
std::string shift_report_times(const std::string& line, std::int64_t offset_ns);
// The other way: a control line (messages.h, with its newline) for a worker on that node, a go's start time
// (GoCommand::at_ns) moved onto the node's clock; any other line unchanged.
std::string shift_go_time(const std::string& line, std::int64_t offset_ns);

}  // namespace ib
