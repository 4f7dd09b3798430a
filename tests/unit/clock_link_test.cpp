// The clock exchange over a stream (harness/nodes/clock_link.h, issue 49): an answer to an earlier request is
// not this one's, a peer's line of the wrong types is no request (never an exception), and every wait for the
// other side ends at its deadline or at a stop signal, whichever comes first.
#include "harness/core/clock.h"
#include "harness/nodes/clock_link.h"

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <thread>

namespace ib {
namespace {

struct SocketPair {
  int a = -1, b = -1;
  SocketPair() {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0) {
      a = fds[0];
      b = fds[1];
    }
  }
  ~SocketPair() {
    if (a >= 0) ::close(a);
    if (b >= 0) ::close(b);
  }
};

std::string read_line_from(int fd) {
  std::string line;
  char c = 0;
  while (::read(fd, &c, 1) == 1 && c != '\n') line.push_back(c);
  return line;
}

TEST(ClockLink, AStaleAnswerIsNotTheAnswerToThisRequest) {
  const std::string answer = R"({"type":"clock","t0":100,"t1":150,"t2":160})";
  const auto e = clock_answer(answer, 100, 200);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->t0, 100);
  EXPECT_EQ(e->t1, 150);
  EXPECT_EQ(e->t2, 160);
  EXPECT_EQ(e->t3, 200);
  // The answer to the request sent at 100, read while the one sent at 300 is awaited (it came late): taking
  // it would pair 300 with the conductor's times of 150, an offset off by the whole delay.
  EXPECT_FALSE(clock_answer(answer, 300, 400));
  EXPECT_FALSE(clock_answer(R"({"type":"clock","t0":300})", 300, 400));  // a request, not an answer
}

TEST(ClockLink, APeersLineOfTheWrongTypesIsNoRequestAndNoAnswer) {
  const auto now = [] { return std::int64_t{7}; };
  for (const char* line : {R"({"type":5,"t0":1})", R"({"type":"clock","t0":"1"})", R"({"type":"clock","t0":9223372036854775808})",
                           R"({"type":"clock","t0":1.5})", R"([1,2])", "\xff\xfe garbage", ""}) {
    EXPECT_FALSE(clock_answer_line(line, 1, now)) << line;
    EXPECT_FALSE(clock_answer(line, 1, 2)) << line;
  }
  EXPECT_FALSE(clock_answer(R"({"type":"clock","t0":1,"t1":18446744073709551615,"t2":3})", 1, 4)) << "2^64-1 is no int64";
  EXPECT_EQ(*clock_answer_line(R"({"type":"clock","t0":-5})", 1, now), "{\"t0\":-5,\"t1\":1,\"t2\":7,\"type\":\"clock\"}\n");
}

// The answering side answers each request and returns the first line that is not one; the asking side's
// estimate comes from those answers.
TEST(ClockLink, BothSidesOverASocketPair) {
  SocketPair s;
  ASSERT_GE(s.a, 0);
  AnsweredClock answered;
  std::thread node([&] { answered = answer_clock_requests(s.b, monotonic_ns, {}); });
  std::string error;
  const auto est = measure_clock_offset(s.a, 5, monotonic_ns, {}, error);
  ASSERT_EQ(::write(s.a, "{\"type\":\"clock_end\"}\n", 21), 21);
  node.join();
  ASSERT_TRUE(est) << error;
  EXPECT_EQ(est->exchanges, 5u);
  EXPECT_LE(std::abs(est->offset_ns), est->uncertainty_ns + 1);  // one clock: offset 0 within its bound
  EXPECT_EQ(answered.ended, ClockEnd::line);
  EXPECT_EQ(answered.line, "{\"type\":\"clock_end\"}");
}

// A peer that answered twice and then went silent (frozen, or a hostile node) is named when a few of its round
// trips have passed (answer_wait_ns: 2 s here), not waited for for ever.
TEST(ClockLink, APeerThatStopsAnsweringIsNamedAtItsDeadline) {
  SocketPair s;
  ASSERT_GE(s.a, 0);
  std::thread node([&] {
    for (int i = 0; i < 2; ++i) {
      const auto answer = clock_answer_line(read_line_from(s.b), monotonic_ns(), monotonic_ns);
      if (answer) (void)!::write(s.b, answer->data(), answer->size());
    }
    read_line_from(s.b);  // the third request, never answered; then the end of the stream
  });
  std::string error;
  const std::int64_t t0 = monotonic_ns();
  const auto est = measure_clock_offset(s.a, 5, monotonic_ns, {kFirstAnswerNs, kFirstAnswerNs, {}}, error);
  const std::int64_t took = monotonic_ns() - t0;
  ::shutdown(s.a, SHUT_RDWR);
  node.join();
  EXPECT_FALSE(est);
  EXPECT_EQ(error, "no answer to clock request 3: no line within 2 s");
  EXPECT_GE(took, 2 * kNsPerS);
  EXPECT_LT(took, 8 * kNsPerS) << "a few round trips, not the 10 s of the first answer";
}

// A stop signal (its descriptor readable) ends either side's wait at once, however far its deadline.
TEST(ClockLink, AStopSignalEndsEitherSidesWait) {
  SocketPair s;
  ASSERT_GE(s.a, 0);
  int stop[2];
  ASSERT_EQ(::pipe(stop), 0);
  ASSERT_EQ(::write(stop[1], "x", 1), 1);
  const std::int64_t t0 = monotonic_ns();
  const AnsweredClock a = answer_clock_requests(s.a, monotonic_ns, {600 * kNsPerS, 600 * kNsPerS, {stop[0], {}}});
  EXPECT_EQ(a.ended, ClockEnd::stopped);
  EXPECT_EQ(a.line, "a stop signal came");
  std::string error;
  EXPECT_FALSE(measure_clock_offset(s.a, 3, monotonic_ns, {600 * kNsPerS, 600 * kNsPerS, {stop[0], {}}}, error));
  EXPECT_EQ(error, "no answer to clock request 1: a stop signal came");
  EXPECT_LT(monotonic_ns() - t0, 5 * kNsPerS);
  ::close(stop[0]);
  ::close(stop[1]);
}

TEST(ClockLink, TheAnsweringSideNamesASilentPeerAndAClosedOne) {
  SocketPair s;
  ASSERT_GE(s.a, 0);
  const AnsweredClock silent = answer_clock_requests(s.a, monotonic_ns, {100'000'000, 100'000'000, {}});
  EXPECT_EQ(silent.ended, ClockEnd::deadline);
  EXPECT_EQ(silent.line, "no line within 0.1 s");
  ::close(s.b);
  s.b = -1;
  EXPECT_EQ(answer_clock_requests(s.a, monotonic_ns, {}).ended, ClockEnd::closed);
}

}  // namespace
}  // namespace ib
