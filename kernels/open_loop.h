// Open-loop request arrivals for the latency-type workloads (host and CUDA): Poisson arrival times
// fixed in advance, so a late or slowed server does not delay later arrivals (no coordinated
// omission), and a wait that sleeps most of the way and spins the rest.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace ib {

// CLOCK_MONOTONIC in nanoseconds: the clock the harness stamps samples with.
std::int64_t open_loop_now_ns();

// Returns at `t_ns` (CLOCK_MONOTONIC) at the earliest, within about a microsecond; at once if past.
void wait_until_ns(std::int64_t t_ns);

// n arrival times after t0 with exponential gaps of mean 1/rate seconds (rate > 0, requests/s).
std::vector<std::int64_t> poisson_arrivals(std::int64_t t0, double rate, std::size_t n, std::mt19937_64& rng);

}  // namespace ib
