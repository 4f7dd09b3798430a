// The one clock of the harness: CLOCK_MONOTONIC in nanoseconds, the same in every process on this
// host, so sample times of different workers and telemetry readings line up.
#pragma once

#include <cstdint>

namespace ib {

std::int64_t monotonic_ns();

}  // namespace ib
