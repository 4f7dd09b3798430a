// Both ends of the conductor's clock exchange (harness/nodes/clock_link.h) over TCP on loopback, for
// tests/e2e/test_clock.py, which runs the node in a time namespace of its own (another CLOCK_MONOTONIC).
//   ib_clock_peer serve          binds 127.0.0.1 on a free port, prints it, answers one node, exits
//   ib_clock_peer ask PORT N     N exchanges with the conductor on PORT; prints the estimate as JSON
#include "harness/core/clock.h"
#include "harness/nodes/clock_link.h"

#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

sockaddr_in loopback(unsigned short port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

int serve() {
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a = loopback(0);
  socklen_t len = sizeof(a);
  if (s < 0 || ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 || ::listen(s, 1) != 0 ||
      ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    std::perror("ib_clock_peer serve");
    return 1;
  }
  std::printf("%u\n", static_cast<unsigned>(ntohs(a.sin_port)));
  std::fflush(stdout);
  const int c = ::accept4(s, nullptr, nullptr, SOCK_CLOEXEC);
  if (c < 0) return 1;
  const ib::AnsweredClock answered = ib::answer_clock_requests(c, ib::monotonic_ns, {});  // 10 s a line at most
  if (answered.ended != ib::ClockEnd::closed) std::fprintf(stderr, "ib_clock_peer serve: %s\n", answered.line.c_str());
  return answered.ended == ib::ClockEnd::closed ? 0 : 1;
}

int ask(unsigned short port, std::size_t n) {
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const sockaddr_in a = loopback(port);
  if (s < 0 || ::connect(s, reinterpret_cast<const sockaddr*>(&a), sizeof(a)) != 0) {
    std::perror("ib_clock_peer ask");
    return 1;
  }
  std::string error;
  const auto o = ib::measure_clock_offset(s, n, ib::monotonic_ns, {}, error);
  ::close(s);
  if (!o) {
    std::fprintf(stderr, "ib_clock_peer ask: %s\n", error.c_str());
    return 1;
  }
  std::printf("%s\n", nlohmann::json{{"offset_ns", o->offset_ns}, {"uncertainty_ns", o->uncertainty_ns},
                                     {"rtt_ns", o->rtt_ns}, {"exchanges", o->exchanges}, {"node_now_ns", ib::monotonic_ns()}}
                          .dump()
                          .c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "serve" && argc == 2) return serve();
  if (what == "ask" && argc == 4) return ask(static_cast<unsigned short>(std::atoi(argv[2])), std::strtoul(argv[3], nullptr, 10));
  std::fprintf(stderr, "usage: ib_clock_peer serve | ask PORT N\n");
  return 2;
}
