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
#include <cerrno>
#include <map>
#include <stdexcept>

namespace ib {

// One node's control connection: what it said about its workers so far.
struct NodesLauncher::Link {
  JoinedNodeLink node;
  LineReader reader{kMaxNodeLine};
  std::map<int, ExitStatus> exits;
  std::map<int, std::string> start_failures;
  bool lost = false;
  std::string lost_why;  // when not that the connection ended: a line that broke the protocol
  bool ended = false;
  NodesLauncher::NodeClock clock;

  std::string name() const { return "node " + std::to_string(node.node_rank) + " (" + printable(node.host, 64) + ")"; }
  std::string loss() const { return name() + " was lost mid-run" + (lost_why.empty() ? "" : ": it " + lost_why); }

  bool send(const NodeLine& l) { return send_text(node_line(l)); }
  bool send_text(const std::string& text) {
    if (lost || !write_all(node.control_fd, text)) lost = true;
    return !lost;
  }

  // The node's clock measured again on its control connection (the node answers between its other lines),
  // `exchanges` requests of at most 2 s each; nullopt when no answer came.
  std::optional<ClockOffset> measure_clock(std::size_t exchanges) {
    std::vector<ClockExchange> got;
    for (std::size_t i = 0; i < exchanges && !lost; ++i) {
      asked_t0_ = monotonic_ns();
      answered_.reset();
      if (!send_text(clock_request_line(*asked_t0_))) break;
      const std::int64_t deadline = *asked_t0_ + 2'000'000'000;
      while (!answered_ && !lost && monotonic_ns() < deadline) {
        pollfd p{node.control_fd, POLLIN, 0};
        ::poll(&p, 1, 100);
        pump();
      }
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
      if (!j.is_object() || !j.contains("type") || !j.at("type").is_string()) {
        lost = true;
        lost_why = "sent a line that is not the conductor protocol's: " + printable(line, 60);
      }
      return;
    }
    if (const auto* e = std::get_if<ExitedLine>(&*l)) exits[e->id] = e->status;
    if (const auto* f = std::get_if<StartFailedLine>(&*l)) start_failures[f->id] = f->reason;
  }

  std::optional<std::int64_t> asked_t0_;  // a clock request in flight
  std::optional<ClockExchange> answered_;
};

namespace {

// A worker on another node, seen through its connection back to the conductor and its node's link.
class RemoteChannel final : public WorkerChannel {
 public:
  RemoteChannel(std::shared_ptr<NodesLauncher::Link> link, int id, int fd) : link_(std::move(link)), id_(id), fd_(fd) {}
  ~RemoteChannel() override {
    close_fd(fd_);
    if (exit_) return;
    kill();
    // Reaped means reaped on its node too: wait (bounded) for the node to say so.
    const std::int64_t deadline = monotonic_ns() + 5'000'000'000LL;
    while (!poll_exit() && monotonic_ns() < deadline) {
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
    return exit_;
  }

  void kill() override {
    if (!exit_) link_->send(KillWorkerLine{id_});
  }

 private:
  std::shared_ptr<NodesLauncher::Link> link_;
  int id_;
  int fd_;
  LineReader reader_{kMaxReportLineBytes};
  std::optional<ExitStatus> exit_;
};

// The first line on `fd`, read a byte at a time so that nothing after it is taken from the worker's
// reports; nullopt when none within `timeout_ms` or `max` bytes.
std::optional<std::string> first_line(int fd, std::size_t max, int timeout_ms) {
  std::string line;
  const std::int64_t deadline = monotonic_ns() + static_cast<std::int64_t>(timeout_ms) * 1'000'000;
  while (line.size() < max) {
    pollfd p{fd, POLLIN, 0};
    const int left_ms = static_cast<int>((deadline - monotonic_ns()) / 1'000'000);
    if (left_ms <= 0 || ::poll(&p, 1, left_ms) <= 0) return std::nullopt;
    char c = 0;
    const ssize_t n = ::read(fd, &c, 1);
    if (n <= 0) return std::nullopt;
    if (c == '\n') return line;
    line.push_back(c);
  }
  return std::nullopt;
}

}  // namespace

NodesLauncher::NodesLauncher(Launcher& local, std::string local_address, int listen_fd, std::string token,
                             std::vector<JoinedNodeLink> nodes, double start_timeout_s)
    : local_(local), local_address_(std::move(local_address)), listen_fd_(listen_fd), token_(std::move(token)), start_timeout_s_(start_timeout_s) {
  for (auto& n : nodes) {
    auto link = std::make_shared<Link>();
    link->node = n;
    link->clock = {n.node_rank, n.offset, 1, n.offset.offset_ns, n.offset.offset_ns};
    links_.push_back(std::move(link));
  }
}

void NodesLauncher::remeasure_clocks(std::size_t exchanges) {
  for (auto& l : links_) {
    if (l->lost) continue;
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

// Waits for worker `id` of `link`'s node to connect back; refuses any other connection meanwhile.
int NodesLauncher::accept_worker(Link& link, int id) {
  const std::int64_t deadline = monotonic_ns() + static_cast<std::int64_t>(start_timeout_s_ * 1e9);
  for (;;) {
    link.pump();
    if (const auto f = link.start_failures.find(id); f != link.start_failures.end())
      throw std::runtime_error(link.name() + " could not start a worker: " + f->second);
    if (link.lost) throw std::runtime_error(link.name() + " was lost while starting a worker" + (link.lost_why.empty() ? "" : ": it " + link.lost_why));
    const std::int64_t left_ms = (deadline - monotonic_ns()) / 1'000'000;
    if (left_ms <= 0)
      throw std::runtime_error("a worker on " + link.name() + " did not connect back within " +
                               std::to_string(static_cast<int>(start_timeout_s_)) + " s");
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {link.node.control_fd, POLLIN, 0}};
    if (::poll(fds, 2, static_cast<int>(std::min<std::int64_t>(left_ms, 1000))) <= 0 || !(fds[0].revents & POLLIN)) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    std::string why = "no worker's hello within 2 s";
    const auto line = first_line(fd, kMaxHelloLine, 2000);
    const auto hello = line ? parse_worker_hello(*line, why) : std::nullopt;
    if (hello && hello->token == token_ && hello->node_rank == link.node.node_rank && hello->id == id) return fd;
    if (hello) why = hello->token != token_ ? "not this run's token" : "not the worker being started";
    write_all(fd, nlohmann::json{{"type", "refused"}, {"reason", why}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    ::close(fd);
    refused_.push_back(why);
  }
}

}  // namespace ib
