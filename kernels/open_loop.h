// Open-loop request arrivals for the latency-type workloads (host and CUDA).
//
// One continuous Poisson arrival schedule per measurement block (docs/design.md section 3): it starts at
// the block's release (Workload::begin_block) and runs on regardless of how the server keeps up. A
// sample is a fixed slice of the schedule's time, not a batch of requests served from an empty queue:
// a late or slowed server does not delay later arrivals, and a request that waited in the queue counts
// its wait (latency = completion - INTENDED arrival: no coordinated omission).
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

namespace ib {

// CLOCK_MONOTONIC in nanoseconds: the clock the harness stamps samples with.
std::int64_t open_loop_now_ns();

// Returns at `t_ns` (CLOCK_MONOTONIC) at the earliest, within about a microsecond; at once if past.
void wait_until_ns(std::int64_t t_ns);

// The intended arrivals of one slice of schedule time [begin_ns, end_ns), ascending, each in range.
// Empty when no request arrives in the slice (a Poisson count can be 0).
struct ArrivalSlice {
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
  std::vector<std::int64_t> arrival_ns;
};

// A Poisson process of `rate` requests/s from an origin (CLOCK_MONOTONIC ns), cut into consecutive
// slices of per_slice / rate seconds (per_slice arrivals expected in each; the actual count is
// Poisson). Arrivals are drawn lazily as slices are taken, one gap after another across slice
// boundaries, so how the schedule is sliced does not change it. start() (re)starts it at an origin
// and reseeds it: relative to its origin the schedule depends only on seed, rate and nothing else
// (e.g. not on how many arrivals a warm-up drew), so every block and every phase sees the same one.
class OpenLoopSchedule {
 public:
  // rate > 0 (requests/s) and per_slice > 0; throws std::invalid_argument otherwise.
  OpenLoopSchedule(double rate, double per_slice, std::uint64_t seed);

  void start(std::int64_t origin_ns);
  bool started() const { return started_; }
  // The next slice of schedule time (the first starts at the origin); start() must have been called.
  ArrivalSlice next_slice();

  double rate() const { return rate_; }
  double slice_s() const { return slice_ns_ / 1e9; }
  std::int64_t origin_ns() const { return origin_ns_; }

 private:
  // Absolute slice boundary k (k = 0 is the origin); computed from k, so boundaries do not drift.
  std::int64_t boundary_ns(std::uint64_t k) const;

  double rate_;
  double slice_ns_;  // slice length in ns (fractional: boundary_ns rounds each boundary)
  std::uint64_t seed_;
  std::mt19937_64 rng_;
  std::exponential_distribution<double> gap_s_;
  bool started_ = false;
  std::int64_t origin_ns_ = 0;
  std::uint64_t next_slice_ = 0;  // index of the slice next_slice() returns
  double next_arrival_ = 0.0;     // ns after the origin of the first arrival not yet handed out
};

// Issues the requests of a slice in order: request i no earlier than its intended arrival, and right
// after request i-1 was issued when that is later (the server is behind: the request queued). Then
// returns no earlier than the slice's end, so that a sample spans its slice of schedule time (and an
// empty slice still takes its time). issue(i) does what issuing request i means to the caller: run it
// to completion (host) or enqueue it (CUDA).
void issue_slice(const ArrivalSlice& slice, const std::function<void(std::size_t)>& issue);

// issue_slice with a synchronous service: serve(i) runs request i to completion. Returns each
// request's latency in seconds, completion - intended arrival, so the time a request spent queued
// behind a slow or stalled request (or behind the previous sample) counts.
std::vector<double> serve_slice(const ArrivalSlice& slice, const std::function<void(std::size_t)>& serve);

}  // namespace ib
