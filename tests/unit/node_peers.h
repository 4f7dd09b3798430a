// What the unit tests of a run across nodes share (remote_launcher_test.cpp, node_agent_test.cpp): loopback
// sockets and a peer's lines, each read with a timeout so that a broken implementation fails the test
// instead of hanging it.
#pragma once

#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace ib::test {

// A listening TCP socket on 127.0.0.1, a free port; -1 when none.
inline int listen_loopback(int& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 8) != 0) return -1;
  socklen_t n = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
  port = ntohs(a.sin_port);
  return fd;
}

inline int connect_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return fd;
  if (fd >= 0) ::close(fd);
  return -1;
}

// Accepts one connection within `timeout_ms`; -1 when none came.
inline int accept_within(int listen_fd, int timeout_ms) {
  pollfd p{listen_fd, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) <= 0) return -1;
  return ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
}

// The next line on `fd` (a byte at a time: nothing after it is taken) within `timeout_ms`; nullopt at end of
// file or when none came in time.
inline std::optional<std::string> line_within(int fd, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string line;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return std::nullopt;
    char c = 0;
    if (::read(fd, &c, 1) != 1) return std::nullopt;
    if (c == '\n') return line;
    line.push_back(c);
  }
}

// The next line that parses as a JSON object (nullopt as line_within).
inline std::optional<nlohmann::json> json_within(int fd, int timeout_ms) {
  const auto line = line_within(fd, timeout_ms);
  if (!line) return std::nullopt;
  return nlohmann::json::parse(*line, nullptr, false);
}

// A line's "type" ("" when it is none: no line, not an object, not a string).
inline std::string type_of(const std::optional<nlohmann::json>& j) {
  if (!j || !j->is_object() || !j->contains("type") || !j->at("type").is_string()) return "";
  return j->at("type").get<std::string>();
}

inline bool send_line(int fd, const std::string& line) {
  const std::string text = line + "\n";
  return ::send(fd, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size());
}

inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace ib::test
