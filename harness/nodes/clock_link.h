// The clock exchange over a byte stream (issue 36: one timeline across nodes). The asking side sends
// {"type":"clock","t0":T0} with its CLOCK_MONOTONIC; the answering side stamps t1 when it has read the line
// and t2 just before it answers {"type":"clock","t0":T0,"t1":T1,"t2":T2}; the asker stamps t3 when it has read
// the answer. In a run the conductor asks and each node answers (so the estimate, the answerer's time minus
// the asker's, is negated by the conductor). One JSON object per line, as the worker protocol. The offset is
// estimated from the exchanges by clock_sync.h (minimum round trip); every wait for a line is bounded
// (bounded_wait.h).
#pragma once

#include "harness/nodes/bounded_wait.h"
#include "harness/nodes/clock_sync.h"

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

namespace ib {

using MonotonicNs = std::function<std::int64_t()>;

// The lines themselves, for a connection that carries other lines too (a node's control connection, where
// the conductor re-measures the node's clock between blocks):
std::string clock_request_line(std::int64_t t0);  // with its newline
// The answer to `line` when it is a clock request: t1 as given (when the line was read), t2 = now() as the
// answer is made; nullopt when it is not a clock request.
std::optional<std::string> clock_answer_line(const std::string& line, std::int64_t t1, const MonotonicNs& now);
// The exchange `line` completes when it answers the request sent at `t0` (read back at `t3`); nullopt when it
// is not that answer.
std::optional<ClockExchange> clock_answer(const std::string& line, std::int64_t t0, std::int64_t t3);

// How long one side of the exchange waits for the other's lines (bounded_wait.h): the first line within
// `first_ns` of the call, each later one within `next_ns` of the last; a stop signal ends the wait.
struct ClockWaits {
  std::int64_t first_ns = kFirstAnswerNs;
  std::int64_t next_ns = kFirstAnswerNs;
  StopDescriptor stop;
};

// The answering side (a node; the conductor asks): answers clock requests read from `fd` until end of file
// or a line that is not one, which is returned (`ended` closed), or until a wait passes its deadline or a
// stop signal comes (`ended` says which; the reason names it). Writes to the same fd.
enum class ClockEnd { line, closed, deadline, stopped };
struct AnsweredClock {
  ClockEnd ended = ClockEnd::closed;
  std::string line;  // the line that was not a request (ClockEnd::line), else why it ended
};
AnsweredClock answer_clock_requests(int fd, const MonotonicNs& now, const ClockWaits& waits);

// The asking side (the conductor): `exchanges` requests, one at a time, on `fd`, the first answer awaited
// for `waits.first_ns`, each later one for a few round trips (answer_wait_ns of the best so far, at most
// `waits.next_ns`); the estimate (nullopt with `error` set when an answer is not the answer to its request,
// none came in time, a stop signal came, or the stream ended).
std::optional<ClockOffset> measure_clock_offset(int fd, std::size_t exchanges, const MonotonicNs& now, const ClockWaits& waits,
                                                std::string& error);

}  // namespace ib
