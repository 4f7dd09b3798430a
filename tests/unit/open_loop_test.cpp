// Open-loop arrivals (kernels/open_loop.h): the continuous schedule, serving a slice against intended
// arrivals (no coordinated omission), and host-latency through the public Workload interface.
#include "harness/stats/stats.h"
#include "kernels/host/host_workloads.h"
#include "kernels/open_loop.h"
#include "kernels/workload.h"
#include "tests/unit/test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

namespace ib {
namespace {

using namespace ib::test;

using json = nlohmann::json;

double mean_of(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// ---- OpenLoopSchedule ----------------------------------------------------------------------------

TEST(OpenLoopSchedule, SlicesAreContiguousFromTheOrigin) {
  const std::int64_t origin = 123'456'789;
  OpenLoopSchedule s(1000.0, 7.0, 42);  // slices of 7 ms
  EXPECT_FALSE(s.started());
  EXPECT_THROW(s.next_slice(), std::logic_error);
  s.start(origin);
  EXPECT_DOUBLE_EQ(s.slice_s(), 0.007);
  std::int64_t expect_begin = origin;
  for (int k = 0; k < 500; ++k) {
    const ArrivalSlice sl = s.next_slice();
    EXPECT_EQ(sl.begin_ns, expect_begin) << k;  // no gap, no overlap
    EXPECT_EQ(sl.end_ns, origin + (k + 1) * 7 * kMs) << k;  // boundaries do not drift
    for (std::size_t i = 0; i < sl.arrival_ns.size(); ++i) {
      EXPECT_GE(sl.arrival_ns[i], sl.begin_ns);
      EXPECT_LT(sl.arrival_ns[i], sl.end_ns);
      if (i) EXPECT_GE(sl.arrival_ns[i], sl.arrival_ns[i - 1]);
    }
    expect_begin = sl.end_ns;
  }
}

TEST(OpenLoopSchedule, CountPerSliceIsPoissonWithMeanRequests) {
  OpenLoopSchedule s(5000.0, 20.0, 7);
  s.start(0);
  std::vector<double> counts;
  for (int k = 0; k < 4000; ++k) counts.push_back(static_cast<double>(s.next_slice().arrival_ns.size()));
  const double m = mean_of(counts);
  double var = 0.0;
  for (double c : counts) var += (c - m) * (c - m);
  var /= static_cast<double>(counts.size() - 1);
  // Mean 20 with standard error sqrt(20 / 4000) = 0.07; a Poisson count's variance equals its mean
  // (standard error of the sample variance ~0.45). A fixed count per slice would have variance 0.
  EXPECT_NEAR(m, 20.0, 0.35);
  EXPECT_NEAR(var, 20.0, 3.0);
}

TEST(OpenLoopSchedule, DeterministicBySeedAndRelativeToItsOrigin) {
  OpenLoopSchedule a(2000.0, 10.0, 99), b(2000.0, 10.0, 99), c(2000.0, 10.0, 100);
  a.start(1'000 * kMs);
  b.start(5'000 * kMs);
  c.start(1'000 * kMs);
  bool c_differs = false;
  for (int k = 0; k < 50; ++k) {
    const ArrivalSlice sa = a.next_slice(), sb = b.next_slice(), sc = c.next_slice();
    ASSERT_EQ(sa.arrival_ns.size(), sb.arrival_ns.size()) << k;
    for (std::size_t i = 0; i < sa.arrival_ns.size(); ++i)
      EXPECT_EQ(sa.arrival_ns[i] - 1'000 * kMs, sb.arrival_ns[i] - 5'000 * kMs);
    c_differs = c_differs || sc.arrival_ns != sa.arrival_ns;
  }
  EXPECT_TRUE(c_differs);
  // A restart (the next block's release) starts the same schedule again from the new origin.
  a.start(9'000 * kMs);
  b.start(5'000 * kMs);
  for (int k = 0; k < 5; ++k) {
    const ArrivalSlice sa = a.next_slice(), sb = b.next_slice();
    ASSERT_EQ(sa.arrival_ns.size(), sb.arrival_ns.size());
    EXPECT_EQ(sa.begin_ns - 9'000 * kMs, sb.begin_ns - 5'000 * kMs);
    for (std::size_t i = 0; i < sa.arrival_ns.size(); ++i)
      EXPECT_EQ(sa.arrival_ns[i] - 9'000 * kMs, sb.arrival_ns[i] - 5'000 * kMs);
  }
}

// No restart per slice: slicing the same schedule finely or as one long slice gives the same arrivals
// (a schedule restarted at every slice would draw a fresh first gap at each boundary instead).
TEST(OpenLoopSchedule, ContinuousAcrossSlices) {
  OpenLoopSchedule fine(3000.0, 20.0, 5), whole(3000.0, 2000.0, 5);
  fine.start(77 * kMs);
  whole.start(77 * kMs);
  std::vector<std::int64_t> joined;
  std::int64_t last_of_previous = -1;
  for (int k = 0; k < 100; ++k) {
    const ArrivalSlice sl = fine.next_slice();
    if (!sl.arrival_ns.empty()) {
      EXPECT_GT(sl.arrival_ns.front(), last_of_previous) << k;
      last_of_previous = sl.arrival_ns.back();
    }
    joined.insert(joined.end(), sl.arrival_ns.begin(), sl.arrival_ns.end());
  }
  const ArrivalSlice one = whole.next_slice();
  EXPECT_EQ(one.end_ns, fine.next_slice().begin_ns);
  EXPECT_EQ(joined, one.arrival_ns);
  // Mean gap 1/rate over the whole stretch.
  ASSERT_GT(joined.size(), 1000u);
  const double mean_gap_s = static_cast<double>(joined.back() - joined.front()) * 1e-9 / static_cast<double>(joined.size() - 1);
  EXPECT_NEAR(mean_gap_s * 3000.0, 1.0, 0.08);
}

TEST(OpenLoopSchedule, SlicesMayBeEmptyAndBadParametersAreRejected) {
  OpenLoopSchedule s(1000.0, 0.5, 3);  // half an arrival expected per slice
  s.start(0);
  int empty = 0;
  for (int k = 0; k < 200; ++k) {
    const ArrivalSlice sl = s.next_slice();
    EXPECT_EQ(sl.end_ns - sl.begin_ns, kMs / 2);
    empty += sl.arrival_ns.empty();
  }
  EXPECT_GT(empty, 80);  // e^-0.5 = 61% expected
  EXPECT_THROW(OpenLoopSchedule(0.0, 10.0, 1), std::invalid_argument);
  EXPECT_THROW(OpenLoopSchedule(10.0, 0.0, 1), std::invalid_argument);
}

// ---- serving a slice against intended arrivals ----------------------------------------------------

TEST(ServeSlice, NeverIssuesEarlyAndAnEmptySliceTakesItsTime) {
  OpenLoopSchedule s(4000.0, 40.0, 11);  // 10 ms slices
  s.start(open_loop_now_ns() + 2 * kMs);
  const ArrivalSlice sl = s.next_slice();
  ASSERT_FALSE(sl.arrival_ns.empty());
  std::vector<std::int64_t> issued;
  const std::vector<double> lat = serve_slice(sl, [&](std::size_t) { issued.push_back(open_loop_now_ns()); });
  EXPECT_GE(open_loop_now_ns(), sl.end_ns);  // a sample spans its slice
  ASSERT_EQ(issued.size(), sl.arrival_ns.size());
  ASSERT_EQ(lat.size(), sl.arrival_ns.size());
  for (std::size_t i = 0; i < issued.size(); ++i) {
    EXPECT_GE(issued[i], sl.arrival_ns[i]) << i;
    EXPECT_GE(lat[i], 0.0);
  }

  const std::int64_t now = open_loop_now_ns();
  const ArrivalSlice none{now, now + 5 * kMs, {}};
  EXPECT_TRUE(serve_slice(none, [](std::size_t) { FAIL() << "no request to serve"; }).empty());
  EXPECT_GE(open_loop_now_ns(), none.end_ns);
}

// One request stalls the server for 100 ms (a real stall: it is what is measured). The requests that
// arrive during the stall queue behind it; counted from their intended arrivals, their latencies fall
// linearly from ~100 ms, each at least the stall time it had left, and the slice's P95 shows it.
TEST(ServeSlice, StallShowsInTheLatencyOfEveryRequestQueuedBehindIt) {
  constexpr double kRate = 2000.0;
  OpenLoopSchedule s(kRate, 600.0, 21);  // a 300 ms slice, ~600 requests
  s.start(open_loop_now_ns() + 5 * kMs);
  const ArrivalSlice sl = s.next_slice();
  const auto& a = sl.arrival_ns;
  // The stalled request: the first one at least 50 ms into the slice.
  const std::size_t j = static_cast<std::size_t>(
      std::find_if(a.begin(), a.end(), [&](std::int64_t t) { return t >= sl.begin_ns + 50 * kMs; }) - a.begin());
  ASSERT_LT(j + 1, a.size());
  std::int64_t stall_end = 0;
  const std::vector<double> lat = serve_slice(sl, [&](std::size_t i) {
    if (i != j) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    stall_end = open_loop_now_ns();
  });
  ASSERT_EQ(lat.size(), a.size());
  ASSERT_GE(stall_end, a[j] + 100 * kMs);

  // Queued: arrived during the stall. Their latency is at least the stall time left at their arrival
  // (they completed after it), and not much more (the server then serves them back to back).
  std::vector<double> x, y;  // arrival after the stalled one (s), latency (s)
  for (std::size_t i = j + 1; i < a.size() && a[i] < stall_end; ++i) {
    const double left_s = static_cast<double>(stall_end - a[i]) * 1e-9;
    EXPECT_GE(lat[i], left_s) << i;
    EXPECT_LE(lat[i], left_s + 0.02) << i;
    x.push_back(static_cast<double>(a[i] - a[j]) * 1e-9);
    y.push_back(lat[i]);
  }
  ASSERT_GT(x.size(), 100u);  // ~200 expected
  EXPECT_GE(y.front(), 0.09);  // the first queued request waited for almost all of the stall
  // Least-squares slope of latency against arrival: -1 (one second later, one second less to wait).
  const double mx = mean_of(x), my = mean_of(y);
  double sxy = 0.0, sxx = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
  }
  EXPECT_NEAR(sxy / sxx, -1.0, 0.1);
  // ~1/3 of the slice's requests queued, latencies spread over 0..100 ms: P95 ~85 ms. Without the
  // stall (or with latency counted from when a request was issued) it would be microseconds.
  EXPECT_GT(summarize(lat).p95, 0.06);
  EXPECT_LT(lat.front(), 0.02);  // before the stall: no queue
}

// The old bug: every sample restarted its arrivals at "now", after the previous sample drained, so the
// next sample's first request never saw the backlog. Here sample 1 ends 120 ms late (its last
// request stalls); sample 2's requests were due meanwhile and count their wait from their intended
// arrivals in the same schedule.
TEST(ServeSlice, LateSampleDelaysTheNextSlicesRequestsInsteadOfRestartingTheSchedule) {
  OpenLoopSchedule s(2000.0, 100.0, 8);  // 50 ms slices
  s.start(open_loop_now_ns() + 5 * kMs);
  const ArrivalSlice first = s.next_slice();
  ASSERT_FALSE(first.arrival_ns.empty());
  std::int64_t stall_end = 0;
  serve_slice(first, [&](std::size_t i) {
    if (i + 1 < first.arrival_ns.size()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(120));
    stall_end = open_loop_now_ns();
  });
  const ArrivalSlice second = s.next_slice();
  EXPECT_EQ(second.begin_ns, first.end_ns);  // the schedule went on; it did not restart at "now"
  ASSERT_FALSE(second.arrival_ns.empty());
  ASSERT_LT(second.arrival_ns.front(), stall_end);  // it was due during the stall
  const std::vector<double> lat = serve_slice(second, [](std::size_t) {});
  const double waited_s = static_cast<double>(stall_end - second.arrival_ns.front()) * 1e-9;
  EXPECT_GE(lat.front(), waited_s);
  EXPECT_GT(lat.front(), 0.05);  // >= 120 ms stall - (50 ms slice) - its place in the slice
}

// ---- host-latency through the Workload interface --------------------------------------------------

std::unique_ptr<Workload> host_latency(const json& given, bool validate = true) {
  Registry r;
  register_host_workloads(r);
  const WorkloadSpec* spec = r.find("host-latency");
  EXPECT_NE(spec, nullptr);
  if (!validate) {  // e.g. fewer requests per sample than the parameter allows, for empty slices
    json p = {{"n", 32}, {"load", 0.5}, {"rate", 0.0}, {"requests", 200}, {"seed", 1}};
    p.update(given);
    return spec->create(p);
  }
  std::string err;
  const auto p = validate_params(*spec, given, err);
  EXPECT_TRUE(p.has_value()) << err;
  return spec->create(*p);
}

// begin_block(t0), then samples: sample k is slice k of one schedule from t0 (the schedule
// documented for host-latency: OpenLoopSchedule(rate, requests, seed)). It ends no earlier than
// t0 + (k + 1) x slice, and its request count is that slice's. The old per-sample restart ended each
// sample after its `requests` arrivals and drifted off this grid, with a constant count.
TEST(HostLatencyOpenLoop, SamplesAreConsecutiveSlicesOfOneScheduleFromTheRelease) {
  auto w = host_latency({{"n", 16}, {"requests", 20}, {"rate", 2000.0}, {"seed", 4}});
  ExecContext ctx;
  w->setup(ctx);
  EXPECT_EQ(w->work_per_sample().amount, 20.0);  // expected requests per slice, constant
  EXPECT_EQ(w->work_per_sample().unit, "request");
  OpenLoopSchedule ref(2000.0, 20.0, 4);
  const std::int64_t t0 = open_loop_now_ns() + 2 * kMs;
  w->begin_block(t0);
  ref.start(t0);
  std::vector<double> counts;
  for (int k = 0; k < 40; ++k) {  // 40 slices of 10 ms
    SampleOutput out;
    w->run_sample(ctx, out);
    const std::int64_t returned = open_loop_now_ns();
    const ArrivalSlice sl = ref.next_slice();
    EXPECT_GE(returned, t0 + (k + 1) * 10 * kMs) << k;
    EXPECT_EQ(out.counters.at("requests"), static_cast<double>(sl.arrival_ns.size())) << k;
    EXPECT_EQ(out.latencies_s.size(), sl.arrival_ns.size()) << k;
    counts.push_back(out.counters.at("requests"));
  }
  EXPECT_NE(*std::min_element(counts.begin(), counts.end()), *std::max_element(counts.begin(), counts.end()));
  EXPECT_NEAR(mean_of(counts), 20.0, 4.0);
}

// A release in the past: the arrivals since then are due at once, and their latencies count from
// the intended arrivals (the origin is respected, not replaced by "now").
TEST(HostLatencyOpenLoop, ReleaseInThePastIsBacklog) {
  auto w = host_latency({{"n", 16}, {"requests", 20}, {"rate", 1000.0}});
  ExecContext ctx;
  w->setup(ctx);
  const std::int64_t called = open_loop_now_ns();
  w->begin_block(called - 200 * kMs);  // slices of 20 ms: the first ten are already over
  SampleOutput out;
  w->run_sample(ctx, out);
  ASSERT_FALSE(out.latencies_s.empty());
  // Every request of slice 0 arrived before called - 180 ms.
  EXPECT_GE(*std::min_element(out.latencies_s.begin(), out.latencies_s.end()), 0.18);
}

// A sample whose slice has no arrival: no latencies, requests 0, and it still lasts its slice.
TEST(HostLatencyOpenLoop, EmptySliceGivesAnEmptySample) {
  auto w = host_latency({{"n", 16}, {"requests", 1}, {"rate", 1000.0}, {"seed", 2}}, false);  // 1 ms slices
  ExecContext ctx;
  w->setup(ctx);
  w->begin_block(open_loop_now_ns());
  int empty = 0;
  for (int k = 0; k < 40; ++k) {
    SampleOutput out;
    w->run_sample(ctx, out);
    ASSERT_EQ(out.latencies_s.size(), static_cast<std::size_t>(out.counters.at("requests")));
    empty += out.latencies_s.empty();
  }
  EXPECT_GT(empty, 3);  // e^-1 of the slices, ~15 expected
}

// Overload (arrivals at 20x the capacity measured at load 1: far beyond it however noisy that
// measurement is): the queue grows for as long as the block runs, so later samples see far longer
// latencies than the first ones. The old per-sample restart drained the queue between samples, and
// every sample's latencies started again from an empty queue (last/first ratio ~1-1.5 measured).
TEST(HostLatencyOpenLoop, BacklogCarriesAcrossSamplesUnderOverload) {
  auto probe = host_latency({{"n", 32}, {"requests", 20}, {"load", 1.0}});
  ExecContext ctx;
  probe->setup(ctx);
  const double capacity = probe->resolved_params().at("rate").get<double>();
  auto w = host_latency({{"n", 32}, {"requests", 20}, {"rate", std::min(20 * capacity, 1e7)}});
  w->setup(ctx);
  w->begin_block(open_loop_now_ns());
  std::vector<double> per_sample_mean;
  const std::int64_t end = open_loop_now_ns() + 400 * kMs;
  while (open_loop_now_ns() < end) {
    SampleOutput out;
    w->run_sample(ctx, out);
    if (!out.latencies_s.empty()) per_sample_mean.push_back(mean_of(out.latencies_s));
  }
  ASSERT_GE(per_sample_mean.size(), 20u);
  const std::vector<double> first(per_sample_mean.begin(), per_sample_mean.begin() + 5);
  const std::vector<double> last(per_sample_mean.end() - 5, per_sample_mean.end());
  EXPECT_GT(mean_of(last), 4 * mean_of(first)) << "first " << mean_of(first) << " s, last " << mean_of(last) << " s";
  EXPECT_GT(mean_of(last), 0.1);  // ~0.95 x 400 ms of backlog by the end
}

// At load 0.5 the latency distribution is the queue's, not the sample size's: P95 with 20 requests
// per sample and with 400 agree (both at one rate, measured once). This machine's neighbours preempt
// the server now and then for milliseconds, far longer than a request, so blocks of the two
// alternate and the figure is the median over rounds of the two blocks' P95 ratio: a burst of
// preemption spoils a round, not the comparison. With a restart per sample the queue was emptied at
// every sample start. Whether this band catches that depends on how close the machine runs to
// capacity (the old code measured P95 ratios of 1.1-1.4 and of 5-8 at load 0.5 on this machine), so
// the restart is also checked where it shows for certain: under overload
// (BacklogCarriesAcrossSamplesUnderOverload) and in the schedule itself
// (SamplesAreConsecutiveSlicesOfOneScheduleFromTheRelease).
TEST(HostLatencyOpenLoop, P95DoesNotDependOnRequestsPerSample) {
  auto probe = host_latency({{"n", 48}, {"requests", 20}, {"load", 0.5}});
  ExecContext ctx;
  probe->setup(ctx);
  const double rate = probe->resolved_params().at("rate").get<double>();
  auto small = host_latency({{"n", 48}, {"requests", 20}, {"rate", rate}});
  auto large = host_latency({{"n", 48}, {"requests", 400}, {"rate", rate}});
  small->setup(ctx);
  large->setup(ctx);
  // One block: at least 250 ms of samples from a release; returns the block's P95.
  const auto block_p95 = [&](Workload& w) {
    std::vector<double> lat;
    const std::int64_t start = open_loop_now_ns();
    w.begin_block(start);
    while (open_loop_now_ns() < start + 250 * kMs) {
      SampleOutput out;
      w.run_sample(ctx, out);
      lat.insert(lat.end(), out.latencies_s.begin(), out.latencies_s.end());
    }
    EXPECT_GT(lat.size(), 100u);
    return summarize(lat).p95;
  };
  std::vector<double> ratio;
  for (int round = 0; round < 11; ++round) {  // the median stands while up to 5 rounds are spoilt
    const double p_small = block_p95(*small), p_large = block_p95(*large);
    std::cout << "[  NOTE    ] round " << round << ": P95 " << p_small * 1e3 << " ms (20 per sample), "
              << p_large * 1e3 << " ms (400 per sample)\n";
    ratio.push_back(p_large / p_small);
  }
  std::sort(ratio.begin(), ratio.end());
  const double median = ratio[ratio.size() / 2];
  std::cout << "[  NOTE    ] rate " << rate << "/s: median P95 ratio (400 / 20 per sample) " << median << "\n";
  // 0.4-2.5: the restart per sample gave 5-8 at this load; CI runs on a noisy day (2026-12-05) gave single
  // rounds of 0.2 to 87 and medians of 0.35 and 2.4 over 7 rounds, spoilt by preemptions of 4-24 ms.
  EXPECT_GT(median, 0.4);
  EXPECT_LT(median, 2.5);
}

}  // namespace
}  // namespace ib
