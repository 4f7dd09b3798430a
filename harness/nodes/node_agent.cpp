// A node's harness in a run across nodes (node_agent.h): join, clock, then start and watch the workers the
// conductor places here.
#include "harness/nodes/node_agent.h"

#include "harness/core/clock.h"
#include "harness/core/exit_codes.h"
#include "harness/core/json_input.h"
#include "harness/core/text.h"
#include "harness/nodes/clock_link.h"
#include "harness/nodes/join.h"
#include "harness/nodes/node_protocol.h"
#include "harness/worker/protocol.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <map>
#include <vector>

namespace ib {

namespace {

// getaddrinfo's addresses for host:port, each tried by `use` until it returns true; its descriptor, or -1
// with `why` set.
template <typename Use>
int for_each_address(const std::string& host, int port, bool passive, std::string& why, Use use) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  addrinfo* found = nullptr;
  if (const int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0) {
    why = "cannot resolve " + printable(host, 80) + ": " + gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    const int s = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (s < 0) continue;
    if (use(s, a)) fd = s;
    else {
      why = std::strerror(errno);
      ::close(s);
    }
  }
  freeaddrinfo(found);
  return fd;
}

// connect(2) bounded by `deadline_ns` and a stop signal (a blocking connect to a host that drops the SYN
// takes minutes); false with errno set when it did not connect.
bool connect_by(int s, const addrinfo* a, std::int64_t deadline_ns, const StopDescriptor& stop) {
  const int flags = fcntl(s, F_GETFL);
  fcntl(s, F_SETFL, flags | O_NONBLOCK);
  if (::connect(s, a->ai_addr, a->ai_addrlen) != 0) {
    if (errno != EINPROGRESS) return false;
    std::vector<pollfd> fds{{s, POLLOUT, 0}};
    const Waited w = wait_any(fds, deadline_ns, stop);
    if (w != Waited::readable) {
      errno = w == Waited::stopped ? EINTR : ETIMEDOUT;
      return false;
    }
    int err = 0;
    socklen_t n = sizeof err;
    getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &n);
    if (err != 0) {
      errno = err;
      return false;
    }
  }
  fcntl(s, F_SETFL, flags);
  return true;
}

std::string host_name() {
  char name[256] = "";
  gethostname(name, sizeof name - 1);
  return name;
}

// The workers this node runs for the conductor, by the conductor's id.
class NodeWorkers {
 public:
  NodeWorkers(const NodeAgentOptions& o, int control_fd, const StopDescriptor& stop)
      : o_(o), control_(control_fd), stop_(stop), address_(socket_address(control_fd, SocketEnd::local, false)) {}
  ~NodeWorkers() { kill_all(); }

  void start(const StartWorkerLine& s) {
    std::string why;
    int fd = connect_tcp(o_.conductor_host, o_.conductor_port, monotonic_ns() + kFirstAnswerNs, stop_, Connection::worker, why);
    if (fd >= 0 && fd <= kWorkerReportFd) {  // dup2 onto itself would keep close-on-exec: move it above fd 3
      const int moved = fcntl(fd, F_DUPFD_CLOEXEC, 10);
      ::close(fd);
      fd = moved;
    }
    if (fd < 0 || !write_all(fd, worker_hello_line({o_.token, o_.node_rank, s.id}))) {
      if (fd >= 0) ::close(fd);
      say(StartFailedLine{s.id, "cannot connect back to the conductor: " + why});
      return;
    }
    SpawnSpec spec{o_.worker_exe, s.args, s.env, o_.log_dir + "/" + s.log, s.env_unset};
    spec.env.push_back("IB_NODE_ADDRESS=" + address_);  // where gloo listens for this node's ranks
    spec.channel_fd = fd;
    try {
      running_[s.id] = spawn_process(spec).pid;
    } catch (const std::exception& e) {
      say(StartFailedLine{s.id, e.what()});
    }
    ::close(fd);  // the worker holds it now
  }

  void kill(int id) {
    if (const auto it = running_.find(id); it != running_.end()) kill_process_group(it->second, SIGKILL);
  }

  // Says which workers exited since the last call.
  void reap() {
    for (auto it = running_.begin(); it != running_.end();) {
      if (const auto status = try_wait_group(it->second)) {
        say(ExitedLine{it->first, *status});
        it = running_.erase(it);
      } else {
        ++it;
      }
    }
  }

  void kill_all() {
    for (const auto& [id, pid] : running_) {
      kill_process_group(pid, SIGKILL);
      wait_for(pid);
      kill_process_group(pid, SIGKILL);  // what it left in its group
    }
    running_.clear();
  }

 private:
  void say(const NodeLine& l) { write_all(control_, node_line(l)); }

  const NodeAgentOptions& o_;
  int control_;
  const StopDescriptor& stop_;
  std::string address_;  // this end of the control connection: where the node's gloo ranks listen
  std::map<int, pid_t> running_;
};

// Connects and says hello until welcomed, refused, the join deadline or a stop signal; the control
// descriptor, or -1 (why on stderr).
int join_conductor(const NodeAgentOptions& o, const StopDescriptor& stop) {
  const std::int64_t deadline = monotonic_ns() + static_cast<std::int64_t>(o.join_timeout_s * 1e9);
  std::string why = "a stop signal came";
  while (!stop()) {
    const int fd = connect_tcp(o.conductor_host, o.conductor_port, deadline, stop, Connection::control, why);
    if (fd >= 0) {
      const HelloOutcome h =
          say_hello(fd, {kConductorProtocolVersion, o.node_rank, o.nodes, o.token, host_name(), o.devices, o.cpus}, deadline, stop);
      if (h.answer == HelloAnswer::welcomed) return fd;
      ::close(fd);
      why = h.why;
      if (h.answer != HelloAnswer::no_answer) break;  // the conductor's last word, or a stop signal
    }
    if (monotonic_ns() > deadline) break;
    wait_readable(-1, std::min(deadline, monotonic_ns() + 200'000'000), stop);  // it may not listen yet: again shortly
  }
  std::cerr << "interference-bench: node " << o.node_rank << " could not join the conductor at " << printable(o.conductor_host, 80)
            << ":" << o.conductor_port << ": " << why << "\n";
  return -1;
}

// A start line the node cannot read (args not strings, no log name) is answered start_failed with the reason,
// so the conductor names it at once rather than waiting for a worker that never comes.
void refuse_start(const std::string& line, const std::string& why, int fd) {
  const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  const auto type = j.is_object() ? j.find("type") : j.end();
  const auto id = j.is_object() && j.contains("id") ? int_value(j.at("id")) : std::nullopt;
  if (type != j.end() && *type == "start" && id) write_all(fd, node_line(StartFailedLine{*id, why}));
}

// Serves the conductor's lines (start, kill, a clock request, end) until "end" (0), its loss (kExitWorkloadFailed)
// or a stop signal. No deadline of its own: the conductor may be silent for a block or an analysis; a
// conductor that vanished is named by the connection's keepalive (bounded_wait.h).
int serve(const NodeAgentOptions& o, int fd, const StopDescriptor& stop) {
  NodeWorkers workers(o, fd, stop);
  LineReader reader(kMaxNodeLine);
  while (!stop()) {
    std::vector<pollfd> fds{{fd, POLLIN, 0}};
    const Waited w = wait_any(fds, monotonic_ns() + 100'000'000, stop);  // 100 ms: its workers reaped meanwhile
    workers.reap();
    if (w != Waited::readable) continue;
    std::vector<std::string> lines;
    const ReadStatus s = read_lines(fd, reader, lines);
    const std::int64_t read_at = monotonic_ns();  // t1 of a clock request among them
    for (const auto& line : lines) {
      if (const auto answer = clock_answer_line(line, read_at, monotonic_ns)) {  // re-measured between blocks
        write_all(fd, *answer);
        continue;
      }
      std::string why;
      const auto l = parse_node_line(line, why);
      if (!l) refuse_start(line, why, fd);  // any other line this node does not know is ignored
      else if (const auto* st = std::get_if<StartWorkerLine>(&*l)) workers.start(*st);
      else if (const auto* k = std::get_if<KillWorkerLine>(&*l)) workers.kill(k->id);
      else if (std::holds_alternative<EndLine>(*l)) return kExitPass;
    }
    if (s != ReadStatus::open) {
      std::cerr << "interference-bench: node " << o.node_rank << " lost its conductor mid-run; its workers are stopped\n";
      return kExitWorkloadFailed;
    }
  }
  return kExitInterrupted;
}

// After the welcome: ready, the conductor's clock exchange answered, clock_end back, then serve. The first
// request may come as late as the conductor's own join deadline (it started before this node's welcome, with
// the same --join-timeout) plus the nodes measured before this one; each later line at once.
int measured_then_serve(const NodeAgentOptions& o, int fd, const StopDescriptor& stop) {
  const std::int64_t first_ns = static_cast<std::int64_t>(o.join_timeout_s * 1e9) + kFirstAnswerNs;
  if (!write_all(fd, node_line(ReadyLine{}))) {
    std::cerr << "interference-bench: node " << o.node_rank << ": the conductor went away after its welcome\n";
    return kExitWorkloadFailed;
  }
  const AnsweredClock a = answer_clock_requests(fd, monotonic_ns, {first_ns, kFirstAnswerNs, stop});
  if (a.ended == ClockEnd::stopped) return kExitInterrupted;
  std::string why;
  const auto l = a.ended == ClockEnd::line ? parse_node_line(a.line, why) : std::nullopt;
  if (!l || !std::holds_alternative<ClockEndLine>(*l)) {
    std::cerr << "interference-bench: node " << o.node_rank << ": the conductor's clock exchange ended: "
              << (a.ended == ClockEnd::line ? "not a clock request: " + printable(a.line, 60) : a.line) << "\n";
    return kExitWorkloadFailed;
  }
  if (!write_all(fd, node_line(ClockEndLine{}))) return kExitWorkloadFailed;
  return serve(o, fd, stop);
}

}  // namespace

int connect_tcp(const std::string& host, int port, std::int64_t deadline_ns, const StopDescriptor& stop, Connection kind,
                std::string& why) {
  const int fd = for_each_address(host, port, false, why,
                                  [&](int s, const addrinfo* a) { return connect_by(s, a, deadline_ns, stop); });
  if (fd >= 0) keep_alive(fd, kind);
  return fd;
}

int listen_tcp(const std::string& host, int& port, std::string& why) {
  const int fd = for_each_address(host, port, true, why, [](int s, const addrinfo* a) {
    const int on = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    return ::bind(s, a->ai_addr, a->ai_addrlen) == 0 && ::listen(s, 64) == 0;
  });
  if (fd >= 0 && port == 0) {
    sockaddr_storage a{};
    socklen_t n = sizeof a;
    getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
    port = ntohs(a.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&a)->sin6_port
                                         : reinterpret_cast<sockaddr_in*>(&a)->sin_port);
  }
  return fd;
}

int run_node_agent(const NodeAgentOptions& o, const StopDescriptor& stop) {
  signal(SIGPIPE, SIG_IGN);
  const int fd = join_conductor(o, stop);
  if (fd < 0) return stop() ? kExitInterrupted : kExitCannotRun;
  const int code = measured_then_serve(o, fd, stop);
  ::close(fd);
  return code;
}

}  // namespace ib
