// Waits with a deadline and a stop descriptor, and a connection's keepalive (bounded_wait.h).
#include "harness/nodes/bounded_wait.h"

#include "harness/core/clock.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>

namespace ib {

bool StopDescriptor::operator()() const {
  if (requested) return requested();
  pollfd p{fd, POLLIN, 0};
  return fd >= 0 && ::poll(&p, 1, 0) > 0;
}

Waited wait_any(std::vector<pollfd>& fds, std::int64_t deadline_ns, const StopDescriptor& stop) {
  fds.push_back({stop.fd, POLLIN, 0});  // a negative fd is not polled
  Waited out = Waited::deadline;
  for (;;) {
    if (stop()) {
      out = Waited::stopped;
      break;
    }
    const std::int64_t left_ns = deadline_ns - monotonic_ns();
    if (left_ns <= 0) break;
    // Rounded up to a whole millisecond, so a wait never ends before its deadline; at most a second at a
    // time, so `stop.requested` is asked again even when the descriptor was read elsewhere.
    const int ms = static_cast<int>(std::min<std::int64_t>((left_ns + 999'999) / 1'000'000, 1000));
    const int n = ::poll(fds.data(), fds.size(), ms);
    if (n < 0 && errno != EINTR) break;
    if (n <= 0) continue;
    if (fds.back().revents != 0) continue;  // a stop signal: stop() says so next
    out = Waited::readable;
    break;
  }
  fds.pop_back();
  return out;
}

Waited wait_readable(int fd, std::int64_t deadline_ns, const StopDescriptor& stop) {
  std::vector<pollfd> fds{{fd, POLLIN, 0}};
  return wait_any(fds, deadline_ns, stop);
}

std::int64_t answer_wait_ns(std::int64_t rtt_ns) { return std::max<std::int64_t>(2 * kNsPerS, 8 * std::max<std::int64_t>(rtt_ns, 0)); }

bool keep_alive(int fd, Connection kind) {
  const int on = 1, idle = kKeepIdleS, interval = kKeepIntervalS, probes = kKeepProbes;
  bool ok = setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on) == 0;
  ok &= setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle) == 0;
  ok &= setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval) == 0;
  ok &= setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes) == 0;
  if (kind == Connection::worker) return ok;
  const unsigned user_timeout_ms = 1000u * (kKeepIdleS + kKeepIntervalS * kKeepProbes);
  const timeval send_timeout{5, 0};
  ok &= setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof user_timeout_ms) == 0;
  ok &= setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof send_timeout) == 0;
  return ok;
}

}  // namespace ib
