// The one rule for every wait of a run across nodes (docs/design.md section 13, docs/reliability.md, issue 49):
// each wait has a deadline derived from what it waits for, and polls the stop descriptor beside its own
// descriptors, so a stop signal (SIGINT, SIGTERM, ...) ends it at once on either side and a peer that stops
// answering is named when its deadline passes, never waited for for ever.
//   what is waited for                              its deadline
//   a line the peer owes at once (a clock answer,   a few round trips: max(2 s, 8 x the node's round trip);
//     ready after the welcome, clock_end)             10 s while its round trip is not known yet
//   a node's hello, the welcome, the first clock    --join-timeout (the node's first clock request: from its
//     request                                         welcome, plus 10 s for the nodes measured before it)
//   a worker's connection back to the conductor     30 s for its start; its hello 2 s after it connected
//   a block                                         its length plus --timeout-margin (the orchestrator's watchdog)
//   a remote worker's exit                          the orchestrator's stop grace, then its kill: its node must
//                                                     report it 5 s after the kill (0.5 s after a stop signal)
//   the conductor between its lines (node side)     none of its own (a block or an analysis may last long):
//                                                     TCP keepalive names a conductor that vanished (keep_alive)
// The rank rendezvous rides the worker protocol: a kv_get is held until published or until the rank's
// watchdog (warm-up plus margin) fires, in the orchestrator's waits, which poll the same stop descriptor.
#pragma once

#include <poll.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace ib {

// How a wait asks whether a stop signal came: `fd` readable while one is pending (StopSignals::fd), and
// `requested` true once one came (StopSignals::check(); it reads the descriptor, so a signal another wait
// already read is still seen). Without `requested`, `fd` readable is the stop (a pipe in a test); without
// either, no stop signal ends the wait (a tool).
struct StopDescriptor {
  int fd = -1;
  std::function<bool()> requested;
  bool operator()() const;
};

enum class Waited { readable, deadline, stopped };

// Waits until one of `fds` (events as set; a negative fd is skipped) has something, `deadline_ns`
// (monotonic_ns) passes, or a stop signal comes; `fds[i].revents` says which.
Waited wait_any(std::vector<pollfd>& fds, std::int64_t deadline_ns, const StopDescriptor& stop);
// The same for one descriptor's input (or its end: POLLHUP and POLLERR count as readable).
Waited wait_readable(int fd, std::int64_t deadline_ns, const StopDescriptor& stop);

constexpr std::int64_t kNsPerS = 1'000'000'000;
// A line the peer owes at once, before its round trip is known (the first lines after the welcome).
constexpr std::int64_t kFirstAnswerNs = 10 * kNsPerS;
// The node's report of a worker's exit after the conductor killed it, and after a stop signal.
constexpr std::int64_t kExitReportNs = 5 * kNsPerS;
constexpr std::int64_t kExitReportAfterStopNs = kNsPerS / 2;
// A line the peer owes at once, its round trip known: a few round trips, never under 2 s.
std::int64_t answer_wait_ns(std::int64_t rtt_ns);

// A connection's liveness: TCP keepalive probes after 2 s of silence, every 1 s, and 3 unanswered name the
// peer gone (a host that vanished sends no FIN). A control connection (a node's, both ends) also bounds
// unacknowledged data the same way (TCP_USER_TIMEOUT) and a write to a peer that stopped reading (SO_SNDTIMEO,
// 5 s; its lines are short). A worker's connection back gets the probes alone: its reports may wait in the
// conductor's buffer while the conductor is busy elsewhere. Best effort: false when an option did not take.
constexpr int kKeepIdleS = 2, kKeepIntervalS = 1, kKeepProbes = 3;
enum class Connection { control, worker };
bool keep_alive(int fd, Connection kind);

}  // namespace ib
