#include "kernels/open_loop.h"

#include <time.h>

#include <chrono>
#include <thread>

namespace ib {

std::int64_t open_loop_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

void wait_until_ns(std::int64_t t_ns) {
  for (;;) {
    const std::int64_t left = t_ns - open_loop_now_ns();
    if (left <= 0) return;
    // Sleep until 100 us before, then spin: sleeping the whole way would wake tens of us late.
    if (left > 200000) std::this_thread::sleep_for(std::chrono::nanoseconds(left - 100000));
  }
}

std::vector<std::int64_t> poisson_arrivals(std::int64_t t0, double rate, std::size_t n, std::mt19937_64& rng) {
  std::exponential_distribution<double> gap(rate);
  std::vector<std::int64_t> out(n);
  double t = static_cast<double>(t0);
  for (auto& a : out) {
    t += gap(rng) * 1e9;
    a = static_cast<std::int64_t>(t);
  }
  return out;
}

}  // namespace ib
