#include "kernels/open_loop.h"

#include <time.h>

#include <chrono>
#include <cmath>
#include <stdexcept>
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

OpenLoopSchedule::OpenLoopSchedule(double rate, double per_slice, std::uint64_t seed)
    : rate_(rate), slice_ns_(per_slice / rate * 1e9), seed_(seed), rng_(seed), gap_s_(rate > 0 ? rate : 1.0) {
  if (!(rate > 0) || !(per_slice > 0) || !std::isfinite(slice_ns_))
    throw std::invalid_argument("OpenLoopSchedule: rate and requests per slice must be > 0");
}

void OpenLoopSchedule::start(std::int64_t origin_ns) {
  started_ = true;
  origin_ns_ = origin_ns;
  next_slice_ = 0;
  rng_.seed(seed_);
  gap_s_.reset();
  next_arrival_ = gap_s_(rng_) * 1e9;
}

std::int64_t OpenLoopSchedule::boundary_ns(std::uint64_t k) const {
  return origin_ns_ + std::llround(static_cast<double>(k) * slice_ns_);
}

ArrivalSlice OpenLoopSchedule::next_slice() {
  if (!started_) throw std::logic_error("OpenLoopSchedule::next_slice before start");
  ArrivalSlice s;
  s.begin_ns = boundary_ns(next_slice_);
  s.end_ns = boundary_ns(++next_slice_);
  // Arrival times are kept as offsets from the origin (double ns: exact to well under a ns for
  // days) and truncated to whole ns, so a slice holds exactly the arrivals with begin <= t < end.
  for (;;) {
    const std::int64_t t = origin_ns_ + static_cast<std::int64_t>(next_arrival_);
    if (t >= s.end_ns) break;
    s.arrival_ns.push_back(t);
    next_arrival_ += gap_s_(rng_) * 1e9;
  }
  return s;
}

void issue_slice(const ArrivalSlice& slice, const std::function<void(std::size_t)>& issue) {
  for (std::size_t i = 0; i < slice.arrival_ns.size(); ++i) {
    wait_until_ns(slice.arrival_ns[i]);  // returns at once when the server is behind: the request queued
    issue(i);
  }
  wait_until_ns(slice.end_ns);
}

std::vector<double> serve_slice(const ArrivalSlice& slice, const std::function<void(std::size_t)>& serve) {
  std::vector<double> latency_s(slice.arrival_ns.size());
  issue_slice(slice, [&](std::size_t i) {
    serve(i);
    latency_s[i] = static_cast<double>(open_loop_now_ns() - slice.arrival_ns[i]) * 1e-9;
  });
  return latency_s;
}

}  // namespace ib
