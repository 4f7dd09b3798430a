// Node 0's opening of a run across nodes (conductor.h).
#include "harness/nodes/conductor.h"

#include "harness/core/clock.h"
#include "harness/core/errors.h"
#include "harness/core/text.h"
#include "harness/nodes/clock_link.h"
#include "harness/nodes/join.h"
#include "harness/nodes/node_agent.h"
#include "harness/nodes/node_protocol.h"
#include "harness/worker/protocol.h"

#include <unistd.h>

namespace ib {

namespace {

void close_all(OpenConductor& c) {
  for (auto& n : c.nodes) close_fd(n.control_fd);
  close_fd(c.listen_fd);
}

// The next line from `n`, owed at once (bounded_wait.h: kFirstAnswerNs), is a `Line`: "" or why not.
template <typename Line>
std::string expect_line(const JoinedNodeLink& n, const char* what, const StopDescriptor& stop) {
  LineReader reader(kMaxNodeLine);
  std::vector<std::string> lines;
  const std::int64_t deadline = monotonic_ns() + kFirstAnswerNs;
  while (lines.empty()) {
    const Waited w = wait_readable(n.control_fd, deadline, stop);
    if (w == Waited::stopped) return std::string("a stop signal came while awaiting ") + what;
    if (w == Waited::deadline) return std::string("no ") + what + " from the node within " + std::to_string(kFirstAnswerNs / kNsPerS) + " s";
    if (read_lines(n.control_fd, reader, lines) != ReadStatus::open && lines.empty()) return "the node closed its connection";
  }
  std::string why;
  const auto l = parse_node_line(lines.front(), why);
  return l && std::holds_alternative<Line>(*l) ? "" : std::string("not ") + what + ": " + printable(lines.front(), 60);
}

// Measures node `n`'s clock from here. It starts once the node said it is ready (so no request is read
// with the welcome) and ends with clock_end both ways (so the next line read from the node is its own, not
// an answer in flight). Each answer is owed at once: kFirstAnswerNs for the first, then a few of the round
// trips seen (measure_clock_offset). "" or why not.
std::string measure_node_clock(JoinedNodeLink& n, std::size_t exchanges, const StopDescriptor& stop) {
  if (std::string why = expect_line<ReadyLine>(n, "ready", stop); !why.empty()) return why;
  std::string error;
  const auto est = measure_clock_offset(n.control_fd, exchanges, monotonic_ns, {kFirstAnswerNs, kFirstAnswerNs, stop}, error);
  if (!est) return error;
  // Asked from here, the estimate is the node's time minus the conductor's: the launcher wants the reverse.
  n.offset = *est;
  n.offset.offset_ns = -est->offset_ns;
  if (!write_all(n.control_fd, node_line(ClockEndLine{}))) return "the node went away after its clock exchange";
  return expect_line<ClockEndLine>(n, "the end of the clock exchange", stop);
}

}  // namespace

OpenConductor open_conductor(const ConductorOptions& o) {
  OpenConductor c;
  std::string why;
  int port = o.port;
  c.listen_fd = listen_tcp(o.host, port, why);
  if (c.listen_fd < 0) throw CannotRunError("--conductor: cannot listen on " + o.host + ":" + std::to_string(o.port) + ": " + why);
  const JoinResult joined =
      accept_nodes(c.listen_fd, o.nodes, o.token, monotonic_ns() + static_cast<std::int64_t>(o.join_timeout_s * 1e9), monotonic_ns,
                   o.stop, o.on_refused);
  c.refused = joined.refused;
  for (const auto& j : joined.joined) c.nodes.push_back({j.node_rank, j.host, j.fd, {}, j.devices});
  if (!joined.missing.empty()) {
    std::string names;
    for (int r : joined.missing) names += (names.empty() ? "" : ", ") + std::to_string(r);
    close_all(c);
    throw CannotRunError("node(s) " + names + " did not join the conductor at " + o.host + ":" + std::to_string(o.port) +
                         (joined.interrupted ? " before a stop signal"
                                             : " within " + formatted("%g", o.join_timeout_s) + " s (--join-timeout)"));
  }
  for (auto& n : c.nodes)
    if (const std::string failed = measure_node_clock(n, o.clock_exchanges, o.stop); !failed.empty()) {
      close_all(c);
      throw CannotRunError("node " + std::to_string(n.node_rank) + " (" + printable(n.host, 64) + "): clock exchange failed: " +
                           failed);
    }
  return c;
}

std::string describe_node(const JoinedNodeLink& n) {
  return "node " + std::to_string(n.node_rank) + " (" + printable(n.host, 64) + "): clock offset " +
         formatted("%+.3f ms", static_cast<double>(n.offset.offset_ns) / 1e6) + " +- " +
         formatted("%.1f us", static_cast<double>(n.offset.uncertainty_ns) / 1e3);
}

}  // namespace ib
