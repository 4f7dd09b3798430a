// The conductor's clock exchange over a byte stream (issue 36: one timeline across nodes). A node asks
// {"type":"clock","t0":T0} with its CLOCK_MONOTONIC; the conductor stamps t1 when it has read the line and
// t2 just before it answers {"type":"clock","t0":T0,"t1":T1,"t2":T2}; the node stamps t3 when it has read
// the answer. One JSON object per line, as the worker protocol. The offset is estimated from the exchanges
// by clock_sync.h (minimum round trip).
#pragma once

#include "harness/run/clock_sync.h"

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

namespace ib {

using MonotonicNs = std::function<std::int64_t()>;

// Conductor side: answers clock requests read from `fd` until end of file or a line that is not one
// (returned as the reason; "" at end of file). Writes to the same fd.
std::string answer_clock_requests(int fd, const MonotonicNs& now);

// Node side: `exchanges` requests, one at a time, on `fd`; the estimate (nullopt with `error` set when the
// conductor's answers are not clock answers to these requests, or the stream ends).
std::optional<ClockOffset> measure_clock_offset(int fd, std::size_t exchanges, const MonotonicNs& now,
                                                std::string& error);

}  // namespace ib
