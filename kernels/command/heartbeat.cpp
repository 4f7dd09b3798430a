#include "kernels/command/heartbeat.h"
#include "kernels/open_loop.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <stdexcept>

namespace ib {

namespace {

std::vector<std::string> words_of(const std::string& line) {
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// A non-negative decimal integer that fits int64 (timestamps).
bool parse_ns(const std::string& w, std::int64_t& out) {
  if (w.empty() || w.size() > 19 || w.find_first_not_of("0123456789") != std::string::npos) return false;
  out = std::strtoll(w.c_str(), nullptr, 10);
  return true;
}


}  // namespace

std::optional<HeartbeatLine> parse_heartbeat_line(const std::string& line, std::string& error) {
  const auto w = words_of(line);
  if (w.size() == 2 && w[0] == "hello") {
    if (w[1] != std::to_string(kHeartbeatVersion)) {
      error = "protocol version \"" + w[1] + "\"; this harness speaks version 1";
      return std::nullopt;
    }
    return HeartbeatHello{kHeartbeatVersion};
  }
  if (w.size() == 1 && w[0] == "paused") return HeartbeatPaused{};
  if ((w.size() == 3 || w.size() == 4) && w[0] == "step") {
    HeartbeatStep s;
    if (!parse_ns(w[1], s.start_ns) || !parse_ns(w[2], s.end_ns)) {
      error = "a step's START_NS and END_NS are CLOCK_MONOTONIC nanoseconds (integers)";
      return std::nullopt;
    }
    if (s.end_ns < s.start_ns) {
      error = "a step that ends before it starts";
      return std::nullopt;
    }
    if (w.size() == 4) {
      char* stop = nullptr;
      const double work = std::strtod(w[3].c_str(), &stop);
      if (stop != w[3].c_str() + w[3].size() || !std::isfinite(work) || work < 0.0) {
        error = "a step's WORK is a number >= 0";
        return std::nullopt;
      }
      s.work = work;
    }
    return s;
  }
  error = "not a heartbeat line (expected hello, step or paused)";
  return std::nullopt;
}

HeartbeatServer::HeartbeatServer() {
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw std::runtime_error(std::string("cannot make the heartbeat socket: ") + std::strerror(errno));
  // A name nobody can guess ahead: this process, a counter of its servers and 64 random bits.
  std::random_device rd;
  const unsigned long long r = (static_cast<unsigned long long>(rd()) << 32) ^ rd();
  const std::string name = "interference-bench/" + std::to_string(::getpid()) + "/" + std::to_string(open_loop_now_ns()) + "/" +
                           std::to_string(r);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());  // sun_path[0] = 0: the abstract namespace
  const socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(listen_fd_, 4) != 0) {
    const std::string why = std::strerror(errno);
    ::close(listen_fd_);
    throw std::runtime_error("cannot listen on the heartbeat socket: " + why);
  }
  address_ = "unix:@" + name;
}

HeartbeatServer::~HeartbeatServer() {
  close_connection();
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

bool HeartbeatServer::accept_from(pid_t pgid, int timeout_ms) {
  const std::int64_t deadline = open_loop_now_ns() + static_cast<std::int64_t>(timeout_ms) * 1000000;
  while (conn_fd_ < 0) {
    const int left = static_cast<int>((deadline - open_loop_now_ns()) / 1000000);
    if (left < 0) return false;
    pollfd p{listen_fd_, POLLIN, 0};
    const int n = ::poll(&p, 1, left);
    if (n < 0 && errno != EINTR) return false;
    if (n <= 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    ucred cred{};
    socklen_t cl = sizeof(cred);
    // Only the program (or a process of its group) may talk for it.
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0 && cred.uid == ::getuid() &&
        ::getpgid(cred.pid) == pgid)
      conn_fd_ = fd;
    else
      ::close(fd);
  }
  return true;
}

HeartbeatServer::Read HeartbeatServer::next_line(std::string& line, int timeout_ms) {
  const std::int64_t deadline = open_loop_now_ns() + static_cast<std::int64_t>(timeout_ms) * 1000000;
  for (;;) {
    const std::size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      if (nl > kMaxHeartbeatLine) return Read::overlong;
      line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return Read::line;
    }
    if (buffer_.size() > kMaxHeartbeatLine) return Read::overlong;
    if (conn_fd_ < 0) return Read::closed;
    const int left = static_cast<int>(std::max<std::int64_t>(0, (deadline - open_loop_now_ns()) / 1000000));
    pollfd p{conn_fd_, POLLIN, 0};
    const int n = ::poll(&p, 1, left);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return Read::timeout;
    char buf[4096];
    const ssize_t got = ::recv(conn_fd_, buf, sizeof(buf), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return Read::closed;
    buffer_.append(buf, static_cast<std::size_t>(got));
  }
}

bool HeartbeatServer::send(const std::string& line) {
  if (conn_fd_ < 0) return false;
  const std::string text = line + "\n";
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::send(conn_fd_, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

void HeartbeatServer::close_connection() {
  if (conn_fd_ >= 0) ::close(conn_fd_);
  conn_fd_ = -1;
}

}  // namespace ib
