// The conductor's clock exchange over a byte stream (issue 36: one timeline across nodes). A node asks
// {"type":"clock","t0":T0} with its CLOCK_MONOTONIC; the conductor stamps t1 when it has read the line and
// t2 just before it answers {"type":"clock","t0":T0,"t1":T1,"t2":T2}; the node stamps t3 when it has read
// the answer. One JSON object per line, as the worker protocol. The offset is estimated from the exchanges
// by clock_sync.h (minimum round trip).
#pragma once

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

// Conductor side: answers clock requests read from `fd` until end of file or a line that is not one
// (returned as the reason; "" at end of file). Writes to the same fd.
std::string answer_clock_requests(int fd, const MonotonicNs& now);

// Node side: `exchanges` requests, one at a time, on `fd`; the estimate (nullopt with `error` set when the
// conductor's answers are not clock answers to these requests, or the stream ends).
std::optional<ClockOffset> measure_clock_offset(int fd, std::size_t exchanges, const MonotonicNs& now,
                                                std::string& error);

}  // namespace ib
