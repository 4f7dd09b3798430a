// Nodes joining their conductor (join.h).
#include "harness/nodes/join.h"

#include "harness/core/clock.h"
#include "harness/core/json_input.h"
#include "harness/core/text.h"
#include "harness/process/process.h"
#include "harness/worker/protocol.h"

#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <sched.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <set>

namespace ib {

namespace {

using json = nlohmann::json;

// A connection that has not said hello yet.
struct Pending {
  int fd = -1;
  std::string peer;
  LineReader reader{kMaxHelloLine};
};

void refuse(Pending& p, const std::string& why, JoinResult& out, const RefusalSink& on_refused) {
  write_all(p.fd, json{{"type", "refused"}, {"reason", why}}.dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
  ::close(p.fd);
  p.fd = -1;
  out.refused.push_back(p.peer + ": " + why);
  if (on_refused) on_refused(out.refused.back());
}

// Reads what `p` sent; a hello that is welcome joins `out` (true: the connection is decided).
bool take_hello(Pending& p, int nodes, const std::string& token, JoinResult& out, const RefusalSink& on_refused) {
  std::vector<std::string> lines;
  const ReadStatus s = read_lines(p.fd, p.reader, lines);
  if (lines.empty()) {
    if (s == ReadStatus::open) return false;
    refuse(p, s == ReadStatus::overlong ? "a first line over " + std::to_string(kMaxHelloLine) + " bytes, not a hello"
                                        : "closed before its hello",
           out, on_refused);
    return true;
  }
  std::string why;
  const auto hello = parse_hello(lines.front(), why);
  std::vector<int> joined;
  for (const auto& j : out.joined) joined.push_back(j.node_rank);
  if (hello) why = refusal(*hello, nodes, token, joined);
  if (!why.empty()) {
    refuse(p, why, out, on_refused);
    return true;
  }
  write_all(p.fd, json{{"type", "welcome"}, {"node_rank", hello->node_rank}}.dump() + "\n");
  out.joined.push_back({hello->node_rank, hello->host, p.fd, hello->devices, hello->cpus});
  p.fd = -1;
  return true;
}

}  // namespace

std::string socket_address(int fd, SocketEnd end, bool with_port) {
  sockaddr_storage a{};
  socklen_t n = sizeof a;
  const int rc = end == SocketEnd::peer ? getpeername(fd, reinterpret_cast<sockaddr*>(&a), &n)
                                        : getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
  char text[INET6_ADDRSTRLEN] = "?";
  if (rc != 0) return "?";
  if (a.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&a);
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    return with_port ? std::string(text) + ":" + std::to_string(ntohs(in->sin_port)) : text;
  }
  if (a.ss_family == AF_INET6) {
    const auto* in = reinterpret_cast<const sockaddr_in6*>(&a);
    inet_ntop(AF_INET6, &in->sin6_addr, text, sizeof text);
    return with_port ? "[" + std::string(text) + "]:" + std::to_string(ntohs(in->sin6_port)) : text;
  }
  return "?";
}

std::string hello_line(const Hello& h) {
  return json{{"type", "hello"}, {"version", h.version}, {"node_rank", h.node_rank}, {"nodes", h.nodes},
              {"token", h.token},  {"host", h.host},           {"devices", h.devices}, {"cpus", h.cpus}}
             .dump(-1, ' ', false, json::error_handler_t::replace) +
         "\n";
}

std::optional<Hello> parse_hello(const std::string& line, std::string& why) {
  const json j = json::parse(line, nullptr, false);
  if (!j.is_object() || j.value("type", json()) != "hello") {
    why = "not a hello: " + printable(line, 60);
    return std::nullopt;
  }
  Hello h;
  for (const char* key : {"version", "node_rank", "nodes"})
    if (!j.contains(key) || !int_value(j.at(key))) {  // 2^32 + 1 is refused, never taken as 1
      why = std::string("a hello without an integer ") + key + " (within int's range)";
      return std::nullopt;
    }
  for (const char* key : {"token", "host"})
    if (!j.contains(key) || !j.at(key).is_string()) {
      why = std::string("a hello without a string ") + key;
      return std::nullopt;
    }
  h.version = *int_value(j.at("version"));
  h.node_rank = *int_value(j.at("node_rank"));
  h.nodes = *int_value(j.at("nodes"));
  h.token = j.at("token").get<std::string>();
  h.host = j.at("host").get<std::string>();
  // A host name is printed in messages ("node 1 (host) was lost mid-run"): a peer's escape sequences or
  // newlines would reach the terminal raw. Host names are printable ASCII (RFC 1123 and more), so refuse others.
  const bool printable_host = !h.host.empty() && h.host.size() <= 255 &&
                              std::all_of(h.host.begin(), h.host.end(), [](char c) { return c > 0x20 && c < 0x7f; });
  if (!printable_host) {
    why = "a hello whose host is not a printable name: " + printable(h.host, 60);
    return std::nullopt;
  }
  if (j.contains("devices")) {
    if (!j.at("devices").is_array()) {
      why = "a hello whose devices are not a list";
      return std::nullopt;
    }
    h.devices = j.at("devices");
  }
  if (j.contains("cpus")) {  // CPU numbers as sched_setaffinity takes them (CPU_SETSIZE), each once
    const json& cpus = j.at("cpus");
    std::set<int> seen;
    const bool numbers = cpus.is_array() && std::all_of(cpus.begin(), cpus.end(), [&](const json& c) {
      const auto n = int_value(c);
      return n && *n >= 0 && *n < CPU_SETSIZE && seen.insert(*n).second;
    });
    if (!numbers) {
      why = "a hello whose cpus are not a list of distinct CPU numbers (0.." + std::to_string(CPU_SETSIZE - 1) + ")";
      return std::nullopt;
    }
    h.cpus.assign(seen.begin(), seen.end());
  }
  return h;
}

std::string refusal(const Hello& h, int nodes, const std::string& token, const std::vector<int>& joined) {
  if (h.version != kConductorProtocolVersion)
    return "protocol version " + std::to_string(h.version) + ", this conductor speaks " +
           std::to_string(kConductorProtocolVersion);
  if (h.token != token) return "not this run's token";
  if (h.nodes != nodes) return "a node of a run of " + std::to_string(h.nodes) + " nodes; this one has " + std::to_string(nodes);
  if (h.node_rank < 1 || h.node_rank >= nodes)
    return "node rank " + std::to_string(h.node_rank) + " is not one of 1.." + std::to_string(nodes - 1);
  if (std::find(joined.begin(), joined.end(), h.node_rank) != joined.end())
    return "node rank " + std::to_string(h.node_rank) + " has already joined";
  return "";
}

JoinResult accept_nodes(int listen_fd, int nodes, const std::string& token, std::int64_t deadline_ns, const MonotonicNs& now,
                        const StopDescriptor& stop, const RefusalSink& on_refused) {
  JoinResult out;
  std::vector<Pending> pending;
  while (static_cast<int>(out.joined.size()) < nodes - 1) {
    std::vector<pollfd> fds{{listen_fd, POLLIN, 0}};
    for (const auto& p : pending) fds.push_back({p.fd, POLLIN, 0});
    const Waited w = wait_any(fds, monotonic_ns() + (deadline_ns - now()), stop);
    if (w != Waited::readable) {
      out.interrupted = w == Waited::stopped;
      break;
    }
    for (std::size_t i = 1; i < fds.size(); ++i)
      if (fds[i].revents != 0) take_hello(pending[i - 1], nodes, token, out, on_refused);
    if (fds[0].revents & POLLIN) {
      const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) {
        keep_alive(fd, Connection::control);
        pending.push_back({fd, socket_address(fd, SocketEnd::peer, true)});
      }
    }
    pending.erase(std::remove_if(pending.begin(), pending.end(), [](const Pending& p) { return p.fd < 0; }), pending.end());
  }
  for (auto& p : pending) refuse(p, out.interrupted ? "no hello before a stop signal" : "no hello by the deadline", out, on_refused);
  std::sort(out.joined.begin(), out.joined.end(), [](const JoinedNode& a, const JoinedNode& b) { return a.node_rank < b.node_rank; });
  for (int r = 1; r < nodes; ++r)
    if (std::none_of(out.joined.begin(), out.joined.end(), [r](const JoinedNode& j) { return j.node_rank == r; }))
      out.missing.push_back(r);
  return out;
}

namespace {

// The conductor's answer to a hello: a welcome naming this node's rank, or a refusal with its reason; any
// other line (a field of the wrong type included) is named, never taken for either.
HelloOutcome read_hello_answer(const std::string& line, int node_rank) {
  const json j = json::parse(line, nullptr, false);
  const auto field = [&j](const char* key) { return j.is_object() && j.contains(key) ? j.at(key) : json(); };
  const json type = field("type");
  if (type == "welcome") {
    const auto rank = int_value(field("node_rank"));
    if (rank && *rank == node_rank) return {HelloAnswer::welcomed, ""};
    return {HelloAnswer::malformed, "a welcome whose node_rank is " + printable(field("node_rank").dump(-1, ' ', false, json::error_handler_t::replace), 40) +
                                        ", not this node's " + std::to_string(node_rank)};
  }
  if (type == "refused" && field("reason").is_string())
    return {HelloAnswer::refused, "refused by the conductor: " + printable(field("reason").get<std::string>(), 120)};
  return {HelloAnswer::malformed, "not an answer to a hello: " + printable(line, 60)};
}

}  // namespace

HelloOutcome say_hello(int fd, const Hello& hello, std::int64_t deadline_ns, const StopDescriptor& stop) {
  if (!write_all(fd, hello_line(hello))) return {HelloAnswer::no_answer, "the conductor went away before the hello"};
  LineReader reader(kMaxHelloLine);
  std::vector<std::string> lines;
  while (lines.empty()) {
    const Waited w = wait_readable(fd, deadline_ns, stop);
    if (w == Waited::stopped) return {HelloAnswer::stopped, "a stop signal came while awaiting the conductor's welcome"};
    if (w == Waited::deadline) return {HelloAnswer::no_answer, "no answer to the hello from the conductor by the join deadline"};
    const ReadStatus s = read_lines(fd, reader, lines);
    if (s == ReadStatus::overlong) return {HelloAnswer::malformed, "an answer to the hello over " + std::to_string(kMaxHelloLine) + " bytes"};
    if (s != ReadStatus::open && lines.empty()) return {HelloAnswer::no_answer, "the conductor closed the connection"};
  }
  return read_hello_answer(lines.front(), hello.node_rank);
}

}  // namespace ib
