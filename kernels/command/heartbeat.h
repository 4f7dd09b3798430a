// The heartbeat protocol between the harness and a user's program (docs/heartbeat.md is the
// reference for client writers). One stream connection on a Unix socket whose address the program
// finds in INTERFERENCE_BENCH_HEARTBEAT ("unix:@NAME": Linux abstract namespace, no file to leave
// behind; "unix:/PATH": a socket file). Lines of ASCII ending in '\n':
//
//   program -> harness   "hello 1"                        once, after connecting (protocol version 1)
//                        "step START_NS END_NS [WORK]"    one finished step, CLOCK_MONOTONIC nanoseconds
//                                                         (its start: the previous step's end, or when
//                                                         it was released); WORK: e.g. its tokens
//                        "paused"                          answer to "pause"
//   harness -> program   "go"                              run (the first after hello, and each block)
//                        "pause"                           report the step in progress, answer
//                                                          "paused" and wait for the next "go"
//
// End of file on either side ends the conversation (the harness then ends the program).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace ib {

constexpr const char* kHeartbeatEnv = "INTERFERENCE_BENCH_HEARTBEAT";
constexpr int kHeartbeatVersion = 1;
constexpr std::size_t kMaxHeartbeatLine = 256;

struct HeartbeatHello {
  int version = 0;
};
struct HeartbeatStep {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::optional<double> work;
};
struct HeartbeatPaused {};
using HeartbeatLine = std::variant<HeartbeatHello, HeartbeatStep, HeartbeatPaused>;

// Parses one line (without its '\n'); nullopt with `error` saying what is wrong.
std::optional<HeartbeatLine> parse_heartbeat_line(const std::string& line, std::string& error);

// The harness's end: listens on a fresh abstract address, accepts one connection from the program's
// process group (SO_PEERCRED; a stranger's connection is closed), and exchanges lines.
class HeartbeatServer {
 public:
  HeartbeatServer();  // throws std::runtime_error when no socket can be made
  ~HeartbeatServer();
  HeartbeatServer(const HeartbeatServer&) = delete;
  HeartbeatServer& operator=(const HeartbeatServer&) = delete;

  // The value of INTERFERENCE_BENCH_HEARTBEAT for the program.
  const std::string& address() const { return address_; }
  // Waits up to timeout_ms for the program's connection; true once connected. Connections from
  // outside process group `pgid` are refused.
  bool accept_from(pid_t pgid, int timeout_ms);
  enum class Read { line, timeout, closed, overlong };
  // The next line within timeout_ms (complete lines are buffered).
  Read next_line(std::string& line, int timeout_ms);
  // Sends a line ("go", "pause"); false when the program is gone.
  bool send(const std::string& line);
  void close_connection();

 private:
  int listen_fd_ = -1;
  int conn_fd_ = -1;
  std::string address_;
  std::string buffer_;
};

}  // namespace ib
