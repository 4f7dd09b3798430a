// The start of a run across nodes (docs/design.md section 13, issue 36): node 0's conductor accepts one
// connection per other node on the address the user or the launcher named; each node's first line is a
// hello. A connection that is not a node of this run — no hello within the deadline, a malformed line,
// another protocol version, another run's token, a node rank out of range or already joined — is refused
// with one line naming why and closed; the run goes on waiting for its nodes. A node that has not joined
// by the deadline is named. One JSON object per line, as the worker protocol.
//
// node -> conductor: {"type":"hello","version":1,"node_rank":R,"nodes":N,"token":T,"host":H,"devices":[...],"cpus":[...]}
//   (devices: the node's host and GPUs in meta.devices[]'s form, for the results; optional. cpus: the CPU numbers
//   the node's harness may run on, against which the conductor checks the placements on that node before anything
//   runs; optional, absent from a node of before issue 49, whose placements its worker then refuses)
// conductor -> node: {"type":"welcome","node_rank":R} or {"type":"refused","reason":W} (then closed)
#pragma once

#include "harness/nodes/bounded_wait.h"
#include "harness/nodes/clock_link.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ib {

constexpr int kConductorProtocolVersion = 1;
constexpr std::size_t kMaxHelloLine = 64 * 1024;  // a hello lists the node's devices

struct Hello {
  int version = kConductorProtocolVersion;
  int node_rank = 0;
  int nodes = 0;
  std::string token;  // the run's: a stranger without it is refused
  std::string host;
  nlohmann::json devices = nlohmann::json::array();  // as the node described them; not read here
  std::vector<int> cpus;  // the CPUs the node may run workers on; empty: not said
};

enum class SocketEnd { local, peer };
// The address of a connected socket's `end` as text ("10.0.0.2", with_port "10.0.0.2:4000" or "[fd00::1]:4000");
// "?" when it has none.
std::string socket_address(int fd, SocketEnd end, bool with_port);

std::string hello_line(const Hello& h);  // with its newline
// The hello in `line`; nullopt with `why` set when it is not one (malformed, a missing or wrong-typed field).
std::optional<Hello> parse_hello(const std::string& line, std::string& why);

// Why the conductor of a run of `nodes` nodes with `token` refuses `h` from a connection, given the ranks
// already joined; "" when it is welcome.
std::string refusal(const Hello& h, int nodes, const std::string& token, const std::vector<int>& joined);

struct JoinedNode {
  int node_rank = 0;
  std::string host;
  int fd = -1;  // the connection, owned by the caller once returned
  nlohmann::json devices = nlohmann::json::array();  // from its hello
  std::vector<int> cpus;                              // from its hello (empty: not said)
};

struct JoinResult {
  std::vector<JoinedNode> joined;    // by node rank
  std::vector<int> missing;          // node ranks (1..nodes-1) not joined by the deadline
  std::vector<std::string> refused;  // one line per refused connection: its peer and why
  bool interrupted = false;          // the stop descriptor became readable (a stop signal): it stopped waiting
};

// Conductor side: accepts on `listen_fd` (listening) until nodes 1..nodes-1 have joined or `deadline_ns`
// (on `now`'s clock) passes, or a stop signal comes. Every connection's hello must arrive by the deadline;
// each accepted connection is kept alive (keep_alive). `on_refused` hears each refusal as it is made (the
// line JoinResult::refused keeps), so a stop signal or a missing node does not hide them.
using RefusalSink = std::function<void(const std::string&)>;
JoinResult accept_nodes(int listen_fd, int nodes, const std::string& token, std::int64_t deadline_ns, const MonotonicNs& now,
                        const StopDescriptor& stop = {}, const RefusalSink& on_refused = {});

// Node side: says `hello` on `fd` (connected to the conductor) and reads the answer until `deadline_ns`
// (monotonic_ns) or a stop signal; "" when welcomed, else why not (the conductor's refusal, its silence, a
// stop signal, the stream's end, or a line that is no answer, its field named).
// refused and malformed are the conductor's last word (trying again changes nothing); no_answer (silence to
// the deadline, the connection closed) may be a conductor not listening yet.
enum class HelloAnswer { welcomed, refused, malformed, no_answer, stopped };
struct HelloOutcome {
  HelloAnswer answer = HelloAnswer::no_answer;
  std::string why;  // empty when welcomed
};
HelloOutcome say_hello(int fd, const Hello& hello, std::int64_t deadline_ns, const StopDescriptor& stop = {});

}  // namespace ib
