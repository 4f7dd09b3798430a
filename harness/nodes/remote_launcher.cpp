// The conductor's launcher across nodes (remote_launcher.h).
#include "harness/nodes/remote_launcher.h"

#include "harness/core/clock.h"
#include "harness/core/text.h"
#include "harness/nodes/clock_link.h"
#include "harness/nodes/join.h"
#include "harness/nodes/node_protocol.h"
#include "harness/worker/protocol.h"

#include <nlohmann/json.hpp>

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <stdexcept>

namespace ib {

// One node's control connection: what it said about its workers so far.
struct NodesLauncher::Link {
  JoinedNodeLink node;
  StopDescriptor stop;
  LineReader reader{kMaxNodeLine};
  std::map<int, ExitStatus> exits;
  std::map<int, std::string> start_failures;
  bool lost = false;
  std::string lost_why;  // when not that the connection ended: a line that broke the protocol
  bool ended = false;
  NodesLauncher::NodeClock clock;

  std::string name() const { return "node " + std::to_string(node.node_rank) + " (" + printable(node.host, 64) + ")"; }
  std::string loss() const { return name() + " was lost mid-run" + (lost_why.empty() ? "" : ": it " + lost_why); }
  void declare_lost(const std::string& why) {
    if (!lost) lost_why = why;
    lost = true;
  }

  bool send(const NodeLine& l) { return send_text(node_line(l)); }
  bool send_text(const std::string& text) {
    if (lost || !write_all(node.control_fd, text)) lost = true;
    return !lost;
  }

  // The node's clock measured again on its control connection (the node answers between its other lines),
  // `exchanges` requests, each answer owed within a few of its round trips at the join (answer_wait_ns);
  // nullopt when no answer came in time, or a stop signal came.
  std::optional<ClockOffset> measure_clock(std::size_t exchanges) {
    std::vector<ClockExchange> got;
    const std::int64_t wait_ns = answer_wait_ns(clock.at_join.rtt_ns);
    for (std::size_t i = 0; i < exchanges && !lost; ++i) {
      asked_t0_ = monotonic_ns();
      answered_.reset();
      if (!send_text(clock_request_line(*asked_t0_))) break;
      const std::int64_t deadline = *asked_t0_ + wait_ns;
      while (!answered_ && !lost && wait_readable(node.control_fd, deadline, stop) == Waited::readable) pump();
      asked_t0_.reset();
      if (!answered_) break;
      got.push_back(*answered_);
    }
    auto est = estimate_offset(got);
    if (est) est->offset_ns = -est->offset_ns;  // asked from here: the node's time minus the conductor's
    return est;
  }

  // Reads whatever the node has said (never waits).
  void pump() {
    while (!lost) {
      pollfd p{node.control_fd, POLLIN, 0};
      if (::poll(&p, 1, 0) <= 0) return;
      std::vector<std::string> lines;
      const ReadStatus s = read_lines(node.control_fd, reader, lines);
      for (const auto& line : lines) take(line);
      if (s != ReadStatus::open) lost = true;  // the node's harness is gone (or spoke past the line limit)
    }
  }

 private:
  void take(const std::string& line) {
    if (asked_t0_)
      if (const auto e = clock_answer(line, *asked_t0_, monotonic_ns())) {
        answered_ = e;
        return;
      }
    std::string why;
    const auto l = parse_node_line(line, why);
    if (!l) {
      // A line of a type this conductor does not know is a newer node's extra: ignored. One that is not a line
      // of the protocol at all ends the node's part in the run, named.
      const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
      if (!j.is_object() || !j.contains("type") || !j.at("type").is_string())
        declare_lost("sent a line that is not the conductor protocol's: " + printable(line, 60));
      return;
    }
    if (const auto* e = std::get_if<ExitedLine>(&*l)) exits[e->id] = e->status;
    if (const auto* f = std::get_if<StartFailedLine>(&*l)) start_failures[f->id] = f->reason;
  }

  std::optional<std::int64_t> asked_t0_;  // a clock request in flight
  std::optional<ClockExchange> answered_;
};

namespace {

// A worker on another node, seen through its connection back to the conductor and its node's link. Its exit
// is its node's to report (bounded_wait.h): within kExitReportNs of its kill, or the node is lost; within
// kExitReportAfterStopNs of a stop signal, or it is left to its node, which kills it when told "end".
class RemoteChannel final : public WorkerChannel {
 public:
  RemoteChannel(std::shared_ptr<NodesLauncher::Link> link, int id, int fd) : link_(std::move(link)), id_(id), fd_(fd) {}
  ~RemoteChannel() override {
    close_fd(fd_);
    kill();
    // Reaped means reaped on its node too: wait (bounded, poll_exit's deadlines) for the node to say so.
    while (!poll_exit()) {
      pollfd p{link_->node.control_fd, POLLIN, 0};
      ::poll(&p, 1, 100);
    }
  }
  RemoteChannel(const RemoteChannel&) = delete;
  RemoteChannel& operator=(const RemoteChannel&) = delete;

  pid_t pid() const override { return -1; }
  bool send(const std::string& text) override { return write_all(fd_, shift_go_time(text, link_->node.offset.offset_ns)); }
  void close_control() override {
    if (fd_ >= 0) ::shutdown(fd_, SHUT_WR);
  }
  int report_fd() const override { return fd_; }

  ReadStatus read_reports(std::vector<std::string>& lines) override {
    if (fd_ < 0) return ReadStatus::closed;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) return ReadStatus::open;  // the socket blocks: read only what is there
    std::vector<std::string> raw;
    const ReadStatus status = read_lines(fd_, reader_, raw);
    for (const auto& line : raw) lines.push_back(shift_report_times(line, link_->node.offset.offset_ns));
    if (status != ReadStatus::open) close_fd(fd_);
    return status;
  }

  std::optional<ExitStatus> poll_exit() override {
    if (exit_) return exit_;
    link_->pump();
    if (const auto e = link_->exits.find(id_); e != link_->exits.end()) exit_ = e->second;
    else if (link_->lost) exit_ = ExitStatus{std::nullopt, SIGKILL, link_->loss()};  // and it with it
    else exit_ = overdue();
    return exit_;
  }

  void kill() override {
    if (exit_ || killed_at_) return;
    killed_at_ = monotonic_ns();
    link_->send(KillWorkerLine{id_});
  }

 private:
  // The exit its node owes and has not reported: after its kill the node is lost; after a stop signal the
  // worker is left to the node (it was told "end"; its node kills what it still runs at the launcher's "end").
  std::optional<ExitStatus> overdue() {
    const std::int64_t now = monotonic_ns();
    if (!stopped_at_ && link_->stop()) stopped_at_ = now;
    if (killed_at_ && now - *killed_at_ > kExitReportNs) {
      link_->declare_lost("did not report the exit of worker " + std::to_string(id_) + " within " +
                          std::to_string(kExitReportNs / kNsPerS) + " s of its kill");
      return ExitStatus{std::nullopt, SIGKILL, link_->loss()};
    }
    if (stopped_at_ && now - *stopped_at_ > kExitReportAfterStopNs)
      return ExitStatus{std::nullopt, SIGKILL, link_->name() + " did not report its worker's exit after a stop signal; its node kills it"};
    return std::nullopt;
  }

  std::shared_ptr<NodesLauncher::Link> link_;
  int id_;
  int fd_;
  LineReader reader_{kMaxReportLineBytes};
  std::optional<ExitStatus> exit_;
  std::optional<std::int64_t> killed_at_, stopped_at_;
};

// The first line on `fd`, read a byte at a time so that nothing after it is taken from the worker's
// reports, within `wait_ns` and `max` bytes; nullopt with `why` set when there is none.
std::optional<std::string> first_line(int fd, std::size_t max, std::int64_t wait_ns, const StopDescriptor& stop, std::string& why) {
  std::string line;
  const std::int64_t deadline = monotonic_ns() + wait_ns;
  while (line.size() < max) {
    const Waited w = wait_readable(fd, deadline, stop);
    if (w != Waited::readable) {
      why = w == Waited::stopped ? "a stop signal came before its hello" : "no worker's hello within " + std::to_string(wait_ns / kNsPerS) + " s";
      return std::nullopt;
    }
    char c = 0;
    if (::read(fd, &c, 1) <= 0) {
      why = "closed before its hello";
      return std::nullopt;
    }
    if (c == '\n') return line;
    line.push_back(c);
  }
  why = "a first line over " + std::to_string(max) + " bytes, not a worker's hello";
  return std::nullopt;
}

}  // namespace

NodesLauncher::NodesLauncher(Launcher& local, std::string local_address, int listen_fd, std::string token,
                             std::vector<JoinedNodeLink> nodes, double start_timeout_s, StopDescriptor stop)
    : local_(local),
      local_address_(std::move(local_address)),
      listen_fd_(listen_fd),
      token_(std::move(token)),
      start_timeout_s_(start_timeout_s),
      stop_(std::move(stop)) {
  for (auto& n : nodes) {
    auto link = std::make_shared<Link>();
    link->node = n;
    link->stop = stop_;
    link->clock = {n.node_rank, n.offset, 1, n.offset.offset_ns, n.offset.offset_ns};
    links_.push_back(std::move(link));
  }
}

void NodesLauncher::remeasure_clocks(std::size_t exchanges) {
  for (auto& l : links_) {
    if (l->lost || stop_()) continue;
    const auto est = l->measure_clock(exchanges);
    if (!est) continue;  // the node is lost (named when its workers are asked about) or silent: the last offset stays
    l->node.offset = *est;
    NodeClock& c = l->clock;
    ++c.measurements;
    c.lowest_offset_ns = std::min(c.lowest_offset_ns, est->offset_ns);
    c.highest_offset_ns = std::max(c.highest_offset_ns, est->offset_ns);
  }
}

std::vector<NodesLauncher::NodeClock> NodesLauncher::clocks() const {
  std::vector<NodeClock> out;
  for (const auto& l : links_) out.push_back(l->clock);
  return out;
}

NodesLauncher::~NodesLauncher() {
  for (auto& l : links_) {
    l->send(EndLine{});
    close_fd(l->node.control_fd);
  }
}

std::vector<std::string> NodesLauncher::lost() const {
  std::vector<std::string> out;
  for (const auto& l : links_)
    if (l->lost) out.push_back(l->loss());
  return out;
}

std::unique_ptr<WorkerChannel> NodesLauncher::start(const SpawnSpec& spec) {
  if (spec.node == 0) {
    SpawnSpec here = spec;
    here.env.push_back("IB_NODE_ADDRESS=" + local_address_);
    return local_.start(here);
  }
  std::shared_ptr<Link> link;
  for (auto& l : links_)
    if (l->node.node_rank == spec.node) link = l;
  if (!link) throw std::runtime_error("no node " + std::to_string(spec.node) + " joined this run");
  const int id = next_id_++;
  const std::size_t slash = spec.log_path.rfind('/');
  StartWorkerLine line{id, spec.args, spec.env, spec.env_unset,
                       slash == std::string::npos ? spec.log_path : spec.log_path.substr(slash + 1)};
  if (!link->send(line)) throw std::runtime_error(link->name() + " is lost: cannot start a worker there");
  const int fd = accept_worker(*link, id);
  return std::make_unique<RemoteChannel>(link, id, fd);
}

// Waits for worker `id` of `link`'s node to connect back (until start_timeout_s_ or a stop signal); refuses
// any other connection meanwhile, in one line naming its peer and why.
int NodesLauncher::accept_worker(Link& link, int id) {
  const std::int64_t deadline = monotonic_ns() + static_cast<std::int64_t>(start_timeout_s_ * 1e9);
  for (;;) {
    link.pump();
    if (const auto f = link.start_failures.find(id); f != link.start_failures.end())
      throw std::runtime_error(link.name() + " could not start a worker: " + printable(f->second, 200));
    if (link.lost) throw std::runtime_error(link.name() + " was lost while starting a worker" + (link.lost_why.empty() ? "" : ": it " + link.lost_why));
    std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}, {link.node.control_fd, POLLIN, 0}};
    const Waited w = wait_any(fds, deadline, stop_);
    if (w == Waited::stopped) throw std::runtime_error("a stop signal came while a worker on " + link.name() + " was starting");
    if (w == Waited::deadline)
      throw std::runtime_error("a worker on " + link.name() + " did not connect back within " +
                               std::to_string(static_cast<int>(start_timeout_s_)) + " s");
    if (!(fds[0].revents & POLLIN)) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    keep_alive(fd, Connection::worker);
    std::string why;
    const auto line = first_line(fd, kMaxHelloLine, 2 * kNsPerS, stop_, why);
    const auto hello = line ? parse_worker_hello(*line, why) : std::nullopt;
    if (hello && hello->token == token_ && hello->node_rank == link.node.node_rank && hello->id == id) return fd;
    if (hello) why = hello->token != token_ ? "not this run's token" : "not the worker being started";
    write_all(fd, nlohmann::json{{"type", "refused"}, {"reason", why}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    const std::string refusal = "a worker's connection from " + socket_address(fd, SocketEnd::peer, true) + ": " + why;
    ::close(fd);
    std::cerr << "interference-bench: refused " << refusal << "\n";
    refused_.push_back(refusal);
  }
}

}  // namespace ib
