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

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <iostream>

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

// The addresses `host` resolves to here; empty with `why` set when it does not resolve (yet).
std::vector<sockaddr_storage> resolved(const std::string& host, std::string& why) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::vector<sockaddr_storage> out;
  if (const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found); rc != 0) {
    why = gai_strerror(rc);
    return out;
  }
  for (addrinfo* a = found; a; a = a->ai_next) {
    sockaddr_storage s{};
    std::memcpy(&s, a->ai_addr, std::min<std::size_t>(a->ai_addrlen, sizeof s));
    out.push_back(s);
  }
  freeaddrinfo(found);
  return out;
}

bool is_loopback(const sockaddr_storage& s) {
  if (s.ss_family == AF_INET) return (ntohl(reinterpret_cast<const sockaddr_in&>(s).sin_addr.s_addr) >> 24) == 127;
  if (s.ss_family == AF_INET6) {
    const in6_addr& a = reinterpret_cast<const sockaddr_in6&>(s).sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(&a) || (IN6_IS_ADDR_V4MAPPED(&a) && a.s6_addr[12] == 127);
  }
  return false;
}

std::string address_text(const sockaddr_storage& s) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (s.ss_family == AF_INET) inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(s).sin_addr, text, sizeof text);
  if (s.ss_family == AF_INET6) inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(s).sin6_addr, text, sizeof text);
  return text;
}

// This host's first address that is up and not loopback (a suggestion for the refusal below), "" when none.
std::string routable_address() {
  ifaddrs* all = nullptr;
  if (getifaddrs(&all) != 0) return "";
  std::string out;
  for (ifaddrs* i = all; i && out.empty(); i = i->ifa_next)
    if (i->ifa_addr && (i->ifa_flags & IFF_UP) && !(i->ifa_flags & IFF_LOOPBACK) && i->ifa_addr->sa_family == AF_INET) {
      sockaddr_storage s{};
      std::memcpy(&s, i->ifa_addr, sizeof(sockaddr_in));
      out = address_text(s);
    }
  freeifaddrs(all);
  return out;
}

// Pod 0 of a Kubernetes Job listens on its own DNS name, which the headless Service publishes a moment after the
// pod starts: a name that does not resolve yet is resolved again every second until the join deadline (a stop
// signal ends the wait). A *name* that resolves only to loopback (Debian's and Ubuntu's /etc/hosts map the host's
// name to 127.0.1.1) would make node 0 listen where no other host reaches it: refused, naming an address to give
// instead (a literal 127.0.0.1 is the user's choice: every node on this host).
void check_listen_address(const ConductorOptions& o, std::int64_t deadline) {
  std::string why;
  std::vector<sockaddr_storage> addresses = resolved(o.host, why);
  for (bool said = false; addresses.empty(); addresses = resolved(o.host, why)) {
    if (!said) std::cerr << "interference-bench: --conductor " << printable(o.host, 80) << ":" << o.port << ": " << printable(o.host, 80)
                         << " does not resolve yet (" << why << "); trying again until the join deadline\n";
    said = true;
    if (monotonic_ns() > deadline || wait_readable(-1, std::min(deadline, monotonic_ns() + kNsPerS), o.stop) == Waited::stopped)
      throw CannotRunError("--conductor: " + printable(o.host, 80) + " did not resolve" +
                           (o.stop() ? " before a stop signal" : " within --join-timeout") + ": " + why);
  }
  addrinfo numeric_hints{};
  numeric_hints.ai_flags = AI_NUMERICHOST;
  addrinfo* numeric = nullptr;
  const bool literal = getaddrinfo(o.host.c_str(), nullptr, &numeric_hints, &numeric) == 0;
  if (numeric) freeaddrinfo(numeric);
  if (literal || o.nodes < 2 || !std::all_of(addresses.begin(), addresses.end(), is_loopback)) return;
  const std::string instead = routable_address();
  throw CannotRunError("--conductor " + printable(o.host, 80) + ":" + std::to_string(o.port) + ": " + printable(o.host, 80) +
                       " resolves to " + address_text(addresses.front()) +
                       " on this host (loopback, e.g. /etc/hosts), which the other nodes cannot reach; name an address "
                       "they reach" + (instead.empty() ? "" : " (this host's " + instead + ")") +
                       ", or 127.0.0.1 when every node runs on this host");
}

}  // namespace

OpenConductor open_conductor(const ConductorOptions& o) {
  OpenConductor c;
  const std::int64_t deadline = monotonic_ns() + static_cast<std::int64_t>(o.join_timeout_s * 1e9);
  check_listen_address(o, deadline);
  std::string why;
  int port = o.port;
  c.listen_fd = listen_tcp(o.host, port, why);
  if (c.listen_fd < 0) throw CannotRunError("--conductor: cannot listen on " + o.host + ":" + std::to_string(o.port) + ": " + why);
  const JoinResult joined =
      accept_nodes(c.listen_fd, o.nodes, o.token, deadline, monotonic_ns,
                   o.stop, o.on_refused);
  c.refused = joined.refused;
  for (const auto& j : joined.joined) c.nodes.push_back({j.node_rank, j.host, j.fd, {}, j.devices, j.cpus});
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
