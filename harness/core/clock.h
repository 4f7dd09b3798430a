// The one clock of the harness: CLOCK_MONOTONIC in nanoseconds, the same in every process on this
// host, so sample times of different workers and telemetry readings line up.
#pragma once

#include <cstdint>
#include <string>

namespace ib {

std::int64_t monotonic_ns();

// The wall-clock time in UTC, formatted with strftime (for file names and start times only).
std::string utc_now(const char* strftime_format);

}  // namespace ib
