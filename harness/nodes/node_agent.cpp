// A node's harness in a run across nodes (node_agent.h): join, clock, then start and watch the workers the
// conductor places here.
#include "harness/nodes/node_agent.h"

#include "harness/core/clock.h"
#include "harness/core/exit_codes.h"
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

namespace ib {

namespace {

// getaddrinfo's addresses for host:port, each tried by `use` until it returns a descriptor.
template <typename Use>
int for_each_address(const std::string& host, int port, bool passive, std::string& why, Use use) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  addrinfo* found = nullptr;
  if (const int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0) {
    why = "cannot resolve " + host + ": " + gai_strerror(rc);
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

std::string host_name() {
  char name[256] = "";
  gethostname(name, sizeof name - 1);
  return name;
}

// The workers this node runs for the conductor, by the conductor's id.
class NodeWorkers {
 public:
  NodeWorkers(const NodeAgentOptions& o, int control_fd)
      : o_(o), control_(control_fd), address_(socket_address(control_fd, SocketEnd::local, false)) {}
  ~NodeWorkers() { kill_all(); }

  void start(const StartWorkerLine& s) {
    std::string why;
    int fd = connect_tcp(o_.conductor_host, o_.conductor_port, why);
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
  std::string address_;  // this end of the control connection: where the node's gloo ranks listen
  std::map<int, pid_t> running_;
};

// Connects and says hello until welcomed or the join deadline; the control descriptor, or -1 (why on stderr).
int join_conductor(const NodeAgentOptions& o, StopSignals& stop) {
  const std::int64_t deadline = monotonic_ns() + static_cast<std::int64_t>(o.join_timeout_s * 1e9);
  std::string why;
  while (!stop.requested()) {
    const int fd = connect_tcp(o.conductor_host, o.conductor_port, why);
    if (fd >= 0) {
      why = say_hello(fd, {kConductorProtocolVersion, o.node_rank, o.nodes, o.token, host_name(), o.devices},
                      static_cast<int>(std::max(1.0, o.join_timeout_s) * 1000));
      if (why.empty()) return fd;
      ::close(fd);
      if (why.rfind("refused", 0) == 0) break;  // the conductor's answer: trying again changes nothing
    }
    if (monotonic_ns() > deadline) break;
    pollfd p{stop.fd(), POLLIN, 0};
    ::poll(&p, 1, 200);  // the conductor may not listen yet: try again shortly
  }
  std::cerr << "interference-bench: node " << o.node_rank << " could not join the conductor at " << o.conductor_host << ":"
            << o.conductor_port << ": " << why << "\n";
  return -1;
}

// Serves the conductor's lines (start, kill, a clock request, end) until "end" (0), its loss (kExitWorkloadFailed) or a stop signal.
int serve(const NodeAgentOptions& o, int fd, StopSignals& stop) {
  NodeWorkers workers(o, fd);
  LineReader reader(kMaxNodeLine);
  while (!stop.requested()) {
    pollfd fds[2] = {{fd, POLLIN, 0}, {stop.fd(), POLLIN, 0}};
    ::poll(fds, 2, 100);
    workers.reap();
    if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
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
      if (!l) continue;  // a line this node does not know
      if (const auto* st = std::get_if<StartWorkerLine>(&*l)) workers.start(*st);
      if (const auto* k = std::get_if<KillWorkerLine>(&*l)) workers.kill(k->id);
      if (std::holds_alternative<EndLine>(*l)) return kExitPass;
    }
    if (s != ReadStatus::open) {
      std::cerr << "interference-bench: node " << o.node_rank << " lost its conductor mid-run; its workers are stopped\n";
      return kExitWorkloadFailed;
    }
  }
  return kExitInterrupted;
}

}  // namespace

int connect_tcp(const std::string& host, int port, std::string& why) {
  return for_each_address(host, port, false, why,
                          [](int s, const addrinfo* a) { return ::connect(s, a->ai_addr, a->ai_addrlen) == 0; });
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

int run_node_agent(const NodeAgentOptions& o, StopSignals& stop) {
  signal(SIGPIPE, SIG_IGN);
  const int fd = join_conductor(o, stop);
  if (fd < 0) return stop.requested() ? kExitInterrupted : kExitCannotRun;
  // The conductor measures this node's clock: answer until its clock_end, then say clock_end back.
  const std::string ended = write_all(fd, node_line(ReadyLine{})) ? answer_clock_requests(fd, monotonic_ns) : "";
  int code = kExitWorkloadFailed;
  if (ended.find("clock_end") == std::string::npos) {
    std::cerr << "interference-bench: node " << o.node_rank << ": the conductor's clock exchange ended: "
              << (ended.empty() ? "connection closed" : ended) << "\n";
  } else if (write_all(fd, node_line(ClockEndLine{}))) {
    code = serve(o, fd, stop);
  }
  ::close(fd);
  return code;
}

}  // namespace ib
