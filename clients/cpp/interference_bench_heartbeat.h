// Heartbeat client for interference-bench, header-only, C++11, POSIX (Linux): report each step of
// your own program to the harness. Two lines in a loop:
//
//   #include "interference_bench_heartbeat.h"
//   interference_bench::Heartbeat hb;              // inactive when not run by interference-bench
//   for (...) { step(); hb.step(/*work=*/tokens); } // after cudaDeviceSynchronize() for GPU time
//
// step() reports the step's start and end on CLOCK_MONOTONIC and, when the harness asked for a pause
// between measurement blocks, blocks until it is released. It never ends the program on its own account:
// an address that is not one (a leftover or garbage INTERFERENCE_BENCH_HEARTBEAT, a socket nobody
// listens on) is one warning line on stderr, and the client then stays inactive. When the harness goes
// away (end of file, a reset or a broken pipe on the connection, at any point) the program exits with
// status 0 after one line on stderr, as the harness would end it anyway. Wire format:
// docs/heartbeat.md. No exceptions, no allocation per step.
#pragma once

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

namespace interference_bench {

class Heartbeat {
 public:
  // Connects to the address in INTERFERENCE_BENCH_HEARTBEAT (or `address`), says hello and waits for
  // the first "go". Without an address it stays inactive; with one that is not an address, or that
  // nobody listens on, it says so in one line on stderr and stays inactive.
  explicit Heartbeat(const char* address = nullptr) {
    const char* value = address ? address : getenv("INTERFERENCE_BENCH_HEARTBEAT");
    const char* what = address ? "address" : "INTERFERENCE_BENCH_HEARTBEAT";
    start_ns_ = now_ns();
    if (!value || !*value) return;
    sockaddr_un addr;
    socklen_t len = 0;
    if (!parse_address(value, addr, len)) {
      warn(what, value, "is not unix:@NAME or unix:/PATH", nullptr);
      return;
    }
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
      const int err = errno;
      if (fd >= 0) close(fd);
      warn(what, value, "cannot connect", strerror(err));
      return;
    }
    fd_ = fd;
    send_line("hello 1\n");
    wait_for_go();
  }
  ~Heartbeat() {
    if (fd_ >= 0) close(fd_);
  }
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

  bool active() const { return fd_ >= 0; }

  // One finished step; `work` (>= 0, e.g. tokens) is reported when not negative.
  void step(double work = -1.0) {
    if (fd_ < 0) return;
    const std::int64_t end = now_ns();
    char line[128];
    int n = work >= 0.0 ? snprintf(line, sizeof(line), "step %lld %lld %.17g\n", static_cast<long long>(start_ns_),
                                   static_cast<long long>(end), work)
                        : snprintf(line, sizeof(line), "step %lld %lld\n", static_cast<long long>(start_ns_),
                                   static_cast<long long>(end));
    if (n > 0) send_line(line);
    start_ns_ = end;
    if (pause_asked()) {
      send_line("paused\n");
      wait_for_go();
    }
  }

 private:
  static std::int64_t now_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
  }
  // The one line for an address the client cannot use: the value shown on one line (control
  // characters as '?'), at most 120 characters of it.
  static void warn(const char* what, const char* value, const char* problem, const char* why) {
    char shown[128];
    size_t n = 0;
    for (; value[n] && n < 120; ++n) {
      const unsigned char c = static_cast<unsigned char>(value[n]);
      shown[n] = c < 0x20 || c == 0x7f ? '?' : value[n];
    }
    shown[n] = '\0';
    fprintf(stderr, "interference-bench heartbeat: %s=\"%s%s\" %s%s%s%s: steps are not reported (a leftover from another "
            "run?)\n", what, shown, value[n] ? "..." : "", problem, why ? " (" : "", why ? why : "", why ? ")" : "");
    fflush(stderr);
  }
  static bool parse_address(const char* value, sockaddr_un& addr, socklen_t& len) {
    if (strncmp(value, "unix:", 5) != 0) return false;
    const char* rest = value + 5;
    const size_t n = strlen(rest);
    memset(&addr, 0, sizeof(addr));
    addr.sun_family = AF_UNIX;
    if (n == 0 || n >= sizeof(addr.sun_path)) return false;
    memcpy(addr.sun_path, rest, n);
    if (rest[0] == '@') addr.sun_path[0] = '\0';  // the abstract namespace
    len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + n + (rest[0] == '@' ? 0 : 1));
    return true;
  }
  void send_line(const char* line) {
    size_t left = strlen(line);
    while (left > 0) {
      const ssize_t n = send(fd_, line, left, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) gone(n < 0 ? strerror(errno) : "end of file");
      line += n;
      left -= static_cast<size_t>(n);
    }
  }
  // Reads what is there without waiting; true when a complete "pause" line came.
  bool pause_asked() {
    if (used_ == sizeof(buf_)) gone("no line in 256 bytes: not the harness");
    const ssize_t n = recv(fd_, buf_ + used_, sizeof(buf_) - used_, MSG_DONTWAIT);
    if (n == 0) gone("end of file");
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) gone(strerror(errno));  // a reset
    if (n > 0) used_ += static_cast<size_t>(n);
    char line[16];
    return take_line(line, sizeof(line)) && strcmp(line, "pause") == 0;
  }
  void wait_for_go() {
    char line[16];
    for (;;) {
      while (!take_line(line, sizeof(line))) {
        if (used_ == sizeof(buf_)) gone("no line in 256 bytes: not the harness");
        const ssize_t n = recv(fd_, buf_ + used_, sizeof(buf_) - used_, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) gone(n < 0 ? strerror(errno) : "end of file");
        used_ += static_cast<size_t>(n);
      }
      if (strcmp(line, "go") == 0) break;
    }
    start_ns_ = now_ns();  // the time paused is no step's
  }
  // Takes one line out of the buffer into `out` (cut to size); false when none is complete.
  bool take_line(char* out, size_t size) {
    const void* nl = memchr(buf_, '\n', used_);
    if (!nl) return false;
    const size_t len = static_cast<size_t>(static_cast<const char*>(nl) - buf_);
    const size_t keep = len < size - 1 ? len : size - 1;
    memcpy(out, buf_, keep);
    out[keep] = '\0';
    memmove(buf_, buf_ + len + 1, used_ - len - 1);
    used_ -= len + 1;
    return true;
  }
  // The harness ended the run (or died): end the program, as the harness would end it anyway.
  [[noreturn]] void gone(const char* why) {
    close(fd_);
    fd_ = -1;
    fprintf(stderr, "interference-bench heartbeat: the connection to the harness ended (%s): the run is over, exiting with "
            "status 0\n", why);
    exit(0);
  }

  int fd_ = -1;
  std::int64_t start_ns_ = 0;
  char buf_[256];
  size_t used_ = 0;
};

}  // namespace interference_bench
