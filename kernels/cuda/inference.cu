// Inference-style workloads built on one request model: `layers` square bf16 linear layers
// (hidden x hidden weights, ReLU epilogue, alpha = 1/sqrt(hidden) to keep magnitudes stable),
// applied to a block of `rows` token vectors. One CUDA graph per batch size, captured at setup, so
// a request costs one launch on the host.
//
// latency: small fixed-size requests, open-loop (Poisson arrivals at `rate`, or at `load` x the
//   capacity measured at setup) or closed-loop (`concurrency` requests outstanding). Open loop: one
//   continuous arrival schedule per block (kernels/open_loop.h, from Workload::begin_block), a sample
//   is the next slice of requests / rate seconds of it; closed loop: a sample is a window of
//   `requests` requests. Per-request latency = completion - intended arrival, queueing included,
//   goes into SampleOutput::latencies_s.
// serve: requests of random sizes (1..max_request_rows rows) arriving open-loop as for `latency`,
//   dynamically batched (all waiting requests of the slice that fit in max_batch rows, at most
//   `inflight` batches on the GPU, each batch padded to the next power-of-two graph); latencies as
//   for `latency`. Goodput = requests with latency <= slo_ms per second: each sample reports
//   counters["slo_met_requests"] (acct::count_within) and counters["requests"], and the harness's
//   rate of slo_met_requests is the goodput; counters["batches"] (batches launched, so requests /
//   batches is the mean batch size in requests) shows how much batching the load caused. `latency`
//   reports counters["requests"]. In open loop counters["requests"] is the slice's actual
//   (Poisson) count, while work_per_sample is the expected count `requests`.
//
// Open loop never waits for the GPU in run_sample: the host issues each request at its intended
// arrival (at once when behind), and a slice's latencies are read in check_sample, once the executor
// saw the sample's end event complete (OpenLoopTracker). Waiting at the end of each sample would leave
// the next slice's due arrivals unissued while the GPU drained.
//
// Completion times: events timed against an anchor event recorded on the idle stream, whose
// CLOCK_MONOTONIC time is the midpoint of the host clock around record+wait (the narrowest of up to
// five tries); closed loop anchors every window, open loop anchors when none of its slices is in
// flight and chains from slice to slice (OpenLoopTracker). Arrival times are the intended (not the
// actual) launch times, so a late host does not hide queueing (no coordinated omission).
//
// Correctness (setup): every captured graph is run once; each layer's output must be finite and
// 32 sampled elements per layer must match a float64 CPU reference computed from that layer's
// (GPU) input and weights, within 1e-2 relative (bf16 output rounding).
#include "kernels/cuda/accounting.h"
#include "kernels/cuda/device_info.h"
#include "kernels/cuda/device_util.cuh"
#include "kernels/cuda/lt_matmul.h"
#include "kernels/cuda/workload_registration.h"
#include "kernels/open_loop.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace ib::cuda {
namespace {

using bf16 = __nv_bfloat16;

// A stream capture in progress. If an exception leaves the scope before end(), the destructor
// ends the capture and frees the partial graph: otherwise the harness's stream would stay in
// capture mode and every later use of it would fail with a capture error instead of the real one.
class StreamCapture {
 public:
  explicit StreamCapture(cudaStream_t s) : s_(s) {
    IB_CHECK(cudaStreamBeginCapture(s_, cudaStreamCaptureModeThreadLocal));
  }
  ~StreamCapture() {
    if (!s_) return;
    cudaGraph_t partial = nullptr;
    if (cudaStreamEndCapture(s_, &partial) == cudaSuccess && partial) cudaGraphDestroy(partial);
    (void)cudaGetLastError();  // best effort; the exception in flight is the error to report
  }
  StreamCapture(const StreamCapture&) = delete;
  StreamCapture& operator=(const StreamCapture&) = delete;
  // Ends the capture; the caller owns the graph.
  cudaGraph_t end() {
    cudaGraph_t g = nullptr;
    const cudaStream_t s = s_;
    s_ = nullptr;  // ended (or failed to end: EndCapture leaves capture mode either way)
    IB_CHECK(cudaStreamEndCapture(s, &g));
    return g;
  }

 private:
  cudaStream_t s_;
};

class CudaGraph {
 public:
  CudaGraph() = default;
  ~CudaGraph() {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
  }
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;
  // Takes ownership of a captured graph and instantiates it.
  void instantiate(cudaGraph_t g) {
    graph_ = g;
    IB_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
  }
  void launch(cudaStream_t s) const { IB_CHECK(cudaGraphLaunch(exec_, s)); }

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

// Events timed against an anchor event on the same stream.
class EventClock {
 public:
  explicit EventClock(std::size_t n) : events_(n) {
    for (auto& e : anchors_) IB_CHECK(cudaEventCreate(&e));
    for (auto& e : events_) IB_CHECK(cudaEventCreate(&e));
  }
  ~EventClock() {
    for (auto& e : events_)
      if (e) cudaEventDestroy(e);
    for (auto& e : anchors_)
      if (e) cudaEventDestroy(e);
  }
  EventClock(const EventClock&) = delete;
  EventClock& operator=(const EventClock&) = delete;
  // Drains `s`, then anchors the GPU timeline to CLOCK_MONOTONIC (best of up to five tries, see
  // anchor_event). Its error bound, normally a few microseconds, is in every latency of the window
  // as one common offset; it is not reported (a per-sample counter would be summed as a rate).
  void anchor(cudaStream_t s) { anchor_ns_ = anchor_event(anchors_, s).ns; }
  cudaEvent_t at(std::size_t i) const { return events_.at(i); }
  // CLOCK_MONOTONIC time at which event i completed (event must be complete).
  std::int64_t time_ns(std::size_t i) const {
    float ms = 0.0f;
    IB_CHECK(cudaEventElapsedTime(&ms, anchors_[0], events_.at(i)));
    return anchor_ns_ + static_cast<std::int64_t>(static_cast<double>(ms) * 1e6);
  }

 private:
  std::array<cudaEvent_t, 2> anchors_{};  // [0]: the anchor
  std::vector<cudaEvent_t> events_;
  std::int64_t anchor_ns_ = 0;
};

// Completion times of open-loop requests, read without synchronising in run_sample.
//
// run_sample enqueues one slice of the arrival schedule and returns without waiting for the GPU;
// check_sample (called once per sample, in order, after the sample's end event completed) completes
// the oldest slice: all its completion events were recorded before that end event on the same
// stream, so they are complete too, and its latencies go into the SampleOutput that run_sample got
// (Workload::check_sample keeps it alive until then).
//
// Timing: each slice records a mark event as it opens. A slice opened while none is in flight is
// timed from a fresh anchor (anchor_event, which drains the stream: there is none of our work on it
// then); every other mark is timed from the previous slice's mark, and each completion event from
// its slice's mark. Chaining short intervals keeps cudaEventElapsedTime's float milliseconds at
// ~ns resolution, where timing everything from one anchor would lose microseconds after tens of
// seconds (the executor chains its sample starts for the same reason).
class OpenLoopTracker {
 public:
  struct Slice {
    SampleOutput* out = nullptr;
    std::uint64_t seq = 0;                  // slices are numbered in the order they were opened
    std::vector<std::int64_t> arrival_ns;   // intended arrivals
    std::vector<std::size_t> done_by;       // request i completes with done[done_by[i]]
    std::vector<cudaEvent_t> done;          // completion events, in stream order
    cudaEvent_t mark = nullptr;
    bool anchored = false;                  // mark timed from the anchor, not from the previous mark
  };

  OpenLoopTracker() {
    for (auto& e : anchors_) IB_CHECK(cudaEventCreate(&e));
  }
  ~OpenLoopTracker() {
    for (auto& sl : pending_) {
      destroy(sl.mark);
      for (cudaEvent_t e : sl.done) destroy(e);
    }
    for (cudaEvent_t e : free_) destroy(e);
    destroy(prev_mark_);
    for (cudaEvent_t e : anchors_) destroy(e);
  }
  OpenLoopTracker(const OpenLoopTracker&) = delete;
  OpenLoopTracker& operator=(const OpenLoopTracker&) = delete;

  // Creates events ahead, so a measured block does not start by creating them.
  void reserve(std::size_t n) {
    while (free_.size() < n) {
      free_.push_back(nullptr);
      IB_CHECK(cudaEventCreate(&free_.back()));
    }
  }

  // Starts a slice whose requests the caller then enqueues on s; `out` receives its latencies.
  Slice& open(cudaStream_t s, SampleOutput& out, std::vector<std::int64_t> arrival_ns) {
    Slice sl;
    if (pending_.empty()) {
      anchor_ns_ = anchor_event(anchors_, s).ns;
      sl.anchored = true;
    }
    sl.out = &out;
    sl.seq = next_seq_++;
    sl.done_by.assign(arrival_ns.size(), 0);
    sl.arrival_ns = std::move(arrival_ns);
    pending_.push_back(std::move(sl));
    Slice& p = pending_.back();  // deque: stays valid while later slices are opened
    p.mark = acquire();
    IB_CHECK(cudaEventRecord(p.mark, s));
    return p;
  }

  // Records on s the completion event of requests [first, last) of `sl`, enqueued just before.
  cudaEvent_t record_done(cudaStream_t s, Slice& sl, std::size_t first, std::size_t last) {
    sl.done.push_back(acquire());  // owned by the slice before anything can throw
    IB_CHECK(cudaEventRecord(sl.done.back(), s));
    for (std::size_t i = first; i < last; ++i) sl.done_by[i] = sl.done.size() - 1;
    return sl.done.back();
  }

  // Completes the oldest slice (its events must have completed): fills its out->latencies_s,
  // recycles its events and returns it (its event handles are only for comparison from now on).
  Slice complete_oldest() {
    if (pending_.empty()) throw WorkloadError("open loop: check_sample without a pending slice");
    {  // read everything before the slice leaves pending_, so that a throw leaks no event
      const Slice& front = pending_.front();
      const std::int64_t mark_ns = front.anchored ? anchor_ns_ + elapsed_ns(anchors_[0], front.mark)
                                                  : prev_mark_ns_ + elapsed_ns(prev_mark_, front.mark);
      std::vector<std::int64_t> done_ns(front.done.size());
      for (std::size_t k = 0; k < front.done.size(); ++k) done_ns[k] = mark_ns + elapsed_ns(front.mark, front.done[k]);
      front.out->latencies_s.resize(front.arrival_ns.size());
      for (std::size_t i = 0; i < front.arrival_ns.size(); ++i)
        front.out->latencies_s[i] = static_cast<double>(done_ns[front.done_by[i]] - front.arrival_ns[i]) * 1e-9;
      prev_mark_ns_ = mark_ns;
    }
    Slice sl = std::move(pending_.front());
    pending_.pop_front();
    release(prev_mark_);
    prev_mark_ = sl.mark;  // the next slice's mark is timed from this one
    for (cudaEvent_t e : sl.done) release(e);
    return sl;
  }

 private:
  static std::int64_t elapsed_ns(cudaEvent_t from, cudaEvent_t to) {
    float ms = 0.0f;
    IB_CHECK(cudaEventElapsedTime(&ms, from, to));
    return static_cast<std::int64_t>(static_cast<double>(ms) * 1e6);
  }
  static void destroy(cudaEvent_t e) {
    if (e) cudaEventDestroy(e);  // best effort: never throws (destructor)
  }
  cudaEvent_t acquire() {
    if (free_.empty()) reserve(1);
    const cudaEvent_t e = free_.back();
    free_.pop_back();
    return e;
  }
  void release(cudaEvent_t e) {
    if (e) free_.push_back(e);
  }

  std::array<cudaEvent_t, 2> anchors_{};  // [0]: the anchor (see anchor_event)
  std::int64_t anchor_ns_ = 0;
  std::deque<Slice> pending_;
  std::vector<cudaEvent_t> free_;
  cudaEvent_t prev_mark_ = nullptr;  // mark of the last completed slice
  std::int64_t prev_mark_ns_ = 0;
  std::uint64_t next_seq_ = 0;
};

class RequestModel {
 public:
  RequestModel(cudaStream_t s, int hidden, int layers, const std::vector<int>& row_buckets)
      : hidden_(hidden), layers_(layers), buckets_(row_buckets) {
    const std::size_t h = static_cast<std::size_t>(hidden);
    workspace_ = DeviceBuffer(kLtWorkspaceBytes);
    for (int l = 0; l < layers_; ++l) {
      weights_.emplace_back(h * h * sizeof(bf16));
      fill_uniform(weights_.back().as<bf16>(), h * h, 500 + l, 1.0f, s);
    }
    const float alpha = 1.0f / std::sqrt(static_cast<float>(hidden));
    for (std::size_t b = 0; b < buckets_.size(); ++b) {
      const std::size_t rows = static_cast<std::size_t>(buckets_[b]);
      std::vector<DeviceBuffer> acts;
      for (int l = 0; l <= layers_; ++l) acts.emplace_back(h * rows * sizeof(bf16));
      fill_uniform(acts[0].as<bf16>(), h * rows, 900 + b, 1.0f, s);
      // Y(h x rows) = relu(alpha * W^T X): W stored h_in x h_out, X stored h x rows (token-contiguous).
      plans_.push_back(std::make_unique<LtMatmul>(lt_.get(), acct::DType::bf16, true, false, hidden,
                                                  buckets_[b], hidden, kLtWorkspaceBytes, alpha, true));
      // Once eagerly first, so that a failing matmul is reported as itself rather than as a capture
      // or graph error (verify() checks the graph's own results afterwards).
      for (int l = 0; l < layers_; ++l)
        plans_.back()->run(weights_[l].get(), acts[l].get(), acts[l + 1].get(), workspace_.get(), s);
      IB_CHECK(cudaStreamSynchronize(s));
      auto g = std::make_unique<CudaGraph>();
      {
        StreamCapture capture(s);
        for (int l = 0; l < layers_; ++l)
          plans_.back()->run(weights_[l].get(), acts[l].get(), acts[l + 1].get(), workspace_.get(), s);
        g->instantiate(capture.end());
      }
      graphs_.push_back(std::move(g));
      acts_.push_back(std::move(acts));
    }
    for (std::size_t b = 0; b < buckets_.size(); ++b) verify(b, s);
  }

  std::size_t buckets() const { return buckets_.size(); }
  // Smallest bucket holding `rows` rows (rows <= the largest bucket).
  std::size_t bucket_for(int rows) const {
    for (std::size_t b = 0; b < buckets_.size(); ++b)
      if (buckets_[b] >= rows) return b;
    return buckets_.size() - 1;
  }
  void launch(std::size_t b, cudaStream_t s) const { graphs_[b]->launch(s); }

  // Mean GPU time of one launch of bucket b, launched back to back (synchronises s).
  double service_time_s(std::size_t b, cudaStream_t s) const {
    cudaEvent_t e0, e1;
    IB_CHECK(cudaEventCreate(&e0));
    IB_CHECK(cudaEventCreate(&e1));
    float ms = 0.0f;
    constexpr int kWarm = 10, kTimed = 100;
    try {
      for (int i = 0; i < kWarm; ++i) launch(b, s);
      IB_CHECK(cudaEventRecord(e0, s));
      for (int i = 0; i < kTimed; ++i) launch(b, s);
      IB_CHECK(cudaEventRecord(e1, s));
      IB_CHECK(cudaEventSynchronize(e1));
      IB_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    } catch (...) {
      cudaEventDestroy(e0);
      cudaEventDestroy(e1);
      throw;
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return static_cast<double>(ms) * 1e-3 / kTimed;
  }

 private:
  void verify(std::size_t b, cudaStream_t s) {
    const std::size_t h = static_cast<std::size_t>(hidden_), rows = static_cast<std::size_t>(buckets_[b]);
    for (int l = 1; l <= layers_; ++l)
      IB_CHECK(cudaMemsetAsync(acts_[b][l].get(), 0xFF, acts_[b][l].bytes(), s));  // NaN poison
    launch(b, s);
    IB_CHECK(cudaStreamSynchronize(s));
    std::vector<std::vector<bf16>> host(layers_ + 1, std::vector<bf16>(h * rows));
    for (int l = 0; l <= layers_; ++l)
      IB_CHECK(cudaMemcpy(host[l].data(), acts_[b][l].get(), h * rows * sizeof(bf16), cudaMemcpyDeviceToHost));
    const double alpha = 1.0 / std::sqrt(static_cast<double>(hidden_));
    std::vector<bf16> wcol(h);
    for (int l = 1; l <= layers_; ++l) {
      for (std::size_t e = 0; e < h * rows; ++e)
        if (!std::isfinite(__bfloat162float(host[l][e])))
          throw WorkloadError("inference model: layer " + std::to_string(l) + " output has non-finite/unwritten elements");
      double err2 = 0.0, ref2 = 0.0;
      for (int t = 0; t < 32; ++t) {
        const std::size_t i = mix64(31 * t + l) % h, j = mix64(37 * t + l + 1) % rows;
        IB_CHECK(cudaMemcpy(wcol.data(), weights_[l - 1].as<bf16>() + i * h, h * sizeof(bf16), cudaMemcpyDeviceToHost));
        double acc = 0.0;
        for (std::size_t p = 0; p < h; ++p)
          acc += static_cast<double>(__bfloat162float(wcol[p])) * __bfloat162float(host[l - 1][p + j * h]);
        const double ref = std::max(0.0, alpha * acc);
        const double got = __bfloat162float(host[l][i + j * h]);
        err2 += (got - ref) * (got - ref);
        ref2 += ref * ref;
      }
      const double rel = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
      if (!(rel <= 1e-2))
        throw WorkloadError("inference model: layer " + std::to_string(l) + " (" + std::to_string(rows) +
                            " rows) differs from the float64 reference: relative error " + std::to_string(rel));
    }
  }

  int hidden_, layers_;
  std::vector<int> buckets_;
  LtHandle lt_;
  DeviceBuffer workspace_;
  std::vector<DeviceBuffer> weights_;
  std::vector<std::vector<DeviceBuffer>> acts_;
  std::vector<std::unique_ptr<LtMatmul>> plans_;
  std::vector<std::unique_ptr<CudaGraph>> graphs_;
};

double model_bytes(int hidden, int layers, const std::vector<int>& buckets) {
  double b = static_cast<double>(layers) * hidden * hidden * 2 + kLtWorkspaceBytes;
  for (int r : buckets) b += static_cast<double>(layers + 1) * hidden * r * 2;
  return b;
}

// ---- latency ---------------------------------------------------------------------------------

struct LatencyConfig {
  int hidden, batch, layers, requests, concurrency;
  bool open;
  double load, rate;
  std::uint64_t seed;
  explicit LatencyConfig(const Params& p)
      : hidden(static_cast<int>(p_int(p, "hidden"))),
        batch(static_cast<int>(p_int(p, "batch"))),
        layers(static_cast<int>(p_int(p, "layers"))),
        requests(static_cast<int>(p_int(p, "requests"))),
        concurrency(static_cast<int>(p_int(p, "concurrency"))),
        open(p_str(p, "mode") == "open"),
        load(p_num(p, "load")),
        rate(p_num(p, "rate")),
        seed(static_cast<std::uint64_t>(p_int(p, "seed"))) {}
};

class Latency final : public Workload {
 public:
  explicit Latency(const Params& p) : cfg_(p) {}

  void setup(const ExecContext& ctx) override {
    query_device(ctx.device);
    auto s = static_cast<cudaStream_t>(ctx.stream);
    model_ = std::make_unique<RequestModel>(s, cfg_.hidden, cfg_.layers, std::vector<int>{cfg_.batch});
    service_s_ = model_->service_time_s(0, s);
    rate_ = cfg_.rate > 0 ? cfg_.rate : cfg_.load / service_s_;
    if (cfg_.open) {
      schedule_.emplace(rate_, static_cast<double>(cfg_.requests), cfg_.seed);
      tracker_ = std::make_unique<OpenLoopTracker>();
      tracker_->reserve(2 * static_cast<std::size_t>(cfg_.requests) + 4);  // two slices in flight
    } else {
      clock_ = std::make_unique<EventClock>(static_cast<std::size_t>(cfg_.requests));
    }
  }

  void begin_block(std::int64_t release_ns) override {
    if (schedule_) schedule_->start(release_ns);
  }

  void run_sample(const ExecContext& ctx, SampleOutput& out) override {
    auto s = static_cast<cudaStream_t>(ctx.stream);
    if (cfg_.open)
      run_open(s, out);
    else
      run_closed(s, out);
  }

  // Open loop: the slice's latencies, now that the executor saw its end event complete.
  void check_sample() override {
    if (cfg_.open) tracker_->complete_oldest();
  }

  // Open loop: the expected requests per sample (the actual count is counters["requests"]).
  Work work_per_sample() const override { return {static_cast<double>(cfg_.requests), "request"}; }
  // The arrival rate derived from `load` at setup, so that later phases offer the same load.
  Params resolved_params() const override { return cfg_.open ? Params{{"rate", rate_}} : Params::object(); }

  void teardown() override {
    tracker_.reset();
    clock_.reset();
    model_.reset();
  }

 private:
  // One slice of the block's arrival schedule, each request launched at its intended arrival (at
  // once when the host is behind); latencies follow in check_sample.
  void run_open(cudaStream_t s, SampleOutput& out) {
    if (!schedule_->started()) schedule_->start(mono_ns());
    const ArrivalSlice slice = schedule_->next_slice();
    OpenLoopTracker::Slice& pending = tracker_->open(s, out, slice.arrival_ns);
    issue_slice(slice, [&](std::size_t i) {
      model_->launch(0, s);
      tracker_->record_done(s, pending, i, i + 1);
    });
    out.counters["requests"] = static_cast<double>(slice.arrival_ns.size());
  }

  // `requests` requests with `concurrency` outstanding; arrival = when a request is issued.
  void run_closed(cudaStream_t s, SampleOutput& out) {
    const std::size_t n = static_cast<std::size_t>(cfg_.requests);
    const std::size_t c = static_cast<std::size_t>(cfg_.concurrency);
    clock_->anchor(s);
    std::vector<std::int64_t> arrival(n);
    for (std::size_t i = 0; i < n; ++i) {
      if (i >= c) IB_CHECK(cudaEventSynchronize(clock_->at(i - c)));
      arrival[i] = mono_ns();
      model_->launch(0, s);
      IB_CHECK(cudaEventRecord(clock_->at(i), s));
    }
    IB_CHECK(cudaEventSynchronize(clock_->at(n - 1)));
    out.latencies_s.resize(n);
    for (std::size_t i = 0; i < n; ++i) out.latencies_s[i] = static_cast<double>(clock_->time_ns(i) - arrival[i]) * 1e-9;
    out.counters["requests"] = static_cast<double>(n);
  }

  LatencyConfig cfg_;
  std::unique_ptr<RequestModel> model_;
  std::optional<OpenLoopSchedule> schedule_;  // open loop, built in setup once the rate is known
  std::unique_ptr<OpenLoopTracker> tracker_;  // open loop
  std::unique_ptr<EventClock> clock_;         // closed loop
  double service_s_ = 0.0, rate_ = 0.0;
};

// ---- serve -----------------------------------------------------------------------------------

struct ServeConfig {
  int hidden, layers, max_batch, max_request_rows, requests, inflight;
  double load, rate, slo_ms;
  std::uint64_t seed;
  explicit ServeConfig(const Params& p)
      : hidden(static_cast<int>(p_int(p, "hidden"))),
        layers(static_cast<int>(p_int(p, "layers"))),
        max_batch(static_cast<int>(p_int(p, "max_batch"))),
        max_request_rows(static_cast<int>(p_int(p, "max_request_rows"))),
        requests(static_cast<int>(p_int(p, "requests"))),
        inflight(static_cast<int>(p_int(p, "inflight"))),
        load(p_num(p, "load")),
        rate(p_num(p, "rate")),
        slo_ms(p_num(p, "slo_ms")),
        seed(static_cast<std::uint64_t>(p_int(p, "seed"))) {}
  // Graph sizes: powers of two below max_batch, then max_batch itself.
  std::vector<int> buckets() const {
    std::vector<int> b;
    for (int r = 1; r < max_batch; r *= 2) b.push_back(r);
    b.push_back(max_batch);
    return b;
  }
};

class Serve final : public Workload {
 public:
  explicit Serve(const Params& p) : cfg_(p) { reseed_sizes(); }

  void setup(const ExecContext& ctx) override {
    query_device(ctx.device);
    auto s = static_cast<cudaStream_t>(ctx.stream);
    model_ = std::make_unique<RequestModel>(s, cfg_.hidden, cfg_.layers, cfg_.buckets());
    // Capacity: full batches back to back, divided by the mean request size.
    const double full_s = model_->service_time_s(model_->buckets() - 1, s);
    const double mean_rows = (1.0 + cfg_.max_request_rows) / 2.0;
    rate_ = cfg_.rate > 0 ? cfg_.rate : cfg_.load * (cfg_.max_batch / full_s) / mean_rows;
    schedule_.emplace(rate_, static_cast<double>(cfg_.requests), cfg_.seed);
    tracker_ = std::make_unique<OpenLoopTracker>();
    tracker_->reserve(2 * static_cast<std::size_t>(cfg_.requests) + 4);  // <= one batch per request
  }

  // A new schedule, and request sizes drawn afresh, so every block sees the same request sequence.
  void begin_block(std::int64_t release_ns) override {
    if (schedule_) schedule_->start(release_ns);
    reseed_sizes();
  }

  // One slice of the block's arrival schedule, batched as requests arrive: whenever a batch slot is
  // free, every request of the slice that has arrived and fits in max_batch rows goes in one batch.
  // Batches do not span slices (a request belongs to its slice's sample), so a server behind its
  // schedule may launch one smaller batch per slice than it would otherwise.
  void run_sample(const ExecContext& ctx, SampleOutput& out) override {
    auto s = static_cast<cudaStream_t>(ctx.stream);
    if (!schedule_->started()) schedule_->start(mono_ns());
    const ArrivalSlice slice = schedule_->next_slice();
    const std::vector<std::int64_t>& arrival = slice.arrival_ns;
    const std::size_t n = arrival.size();
    std::uniform_int_distribution<int> size(1, cfg_.max_request_rows);
    std::vector<int> rows(n);
    for (auto& r : rows) r = size(sizes_rng_);
    OpenLoopTracker::Slice& pending = tracker_->open(s, out, arrival);
    std::size_t next = 0, batches = 0;  // next: the first request not launched yet
    while (next < n) {
      wait_until_ns(arrival[next]);  // idle until a request is waiting (at once if one already is)
      wait_for_batch_slot();         // requests that arrive meanwhile join the batch
      const std::int64_t now = mono_ns();
      std::size_t end = next;
      int total = 0;
      while (end < n && arrival[end] <= now && total + rows[end] <= cfg_.max_batch) total += rows[end++];
      if (end == next) throw WorkloadError("serve: a request has more rows than max_batch");  // waived in supported()
      model_->launch(model_->bucket_for(total), s);
      in_flight_.push_back({tracker_->record_done(s, pending, next, end), pending.seq});
      ++batches;
      next = end;
    }
    wait_until_ns(slice.end_ns);  // the sample spans its slice of schedule time
    out.counters["requests"] = static_cast<double>(n);
    out.counters["batches"] = static_cast<double>(batches);
  }

  // The slice's latencies (and goodput numerator), now that the executor saw its end event complete.
  void check_sample() override {
    const OpenLoopTracker::Slice done = tracker_->complete_oldest();
    // Its batches have completed and their events are recycled: they are no longer in flight.
    while (!in_flight_.empty() && in_flight_.front().slice <= done.seq) in_flight_.pop_front();
    done.out->counters["slo_met_requests"] =
        static_cast<double>(acct::count_within(done.out->latencies_s, cfg_.slo_ms * 1e-3));
  }

  // The expected requests per sample (the actual count is counters["requests"]).
  Work work_per_sample() const override { return {static_cast<double>(cfg_.requests), "request"}; }
  // The arrival rate derived from `load` at setup, so that later phases offer the same load.
  Params resolved_params() const override { return {{"rate", rate_}}; }

  void teardown() override {
    in_flight_.clear();
    tracker_.reset();
    model_.reset();
  }

 private:
  struct Batch {
    cudaEvent_t done;
    std::uint64_t slice;  // OpenLoopTracker::Slice::seq
  };

  // Returns once fewer than `inflight` batches are on the GPU, retiring completed ones (oldest
  // first: one stream completes them in order).
  void wait_for_batch_slot() {
    while (!in_flight_.empty()) {
      if (in_flight_.size() >= static_cast<std::size_t>(cfg_.inflight))
        IB_CHECK(cudaEventSynchronize(in_flight_.front().done));
      const cudaError_t q = cudaEventQuery(in_flight_.front().done);
      if (q == cudaErrorNotReady) return;  // still running, but a slot is free
      IB_CHECK(q);
      in_flight_.pop_front();
    }
  }

  // Request sizes come from their own stream (the schedule has its own), derived from the seed.
  void reseed_sizes() { sizes_rng_.seed(mix64(cfg_.seed)); }

  ServeConfig cfg_;
  std::mt19937_64 sizes_rng_;
  std::unique_ptr<RequestModel> model_;
  std::optional<OpenLoopSchedule> schedule_;  // built in setup once the rate is known
  std::unique_ptr<OpenLoopTracker> tracker_;
  std::deque<Batch> in_flight_;  // batches on the GPU, possibly of the previous slice too
  double rate_ = 0.0;
};

std::unique_ptr<Workload> make_latency(const Params& p) { return std::make_unique<Latency>(p); }

Support latency_supported(const Params& p, const ExecContext& ctx) {
  const LatencyConfig cfg(p);
  if (Support s = cuda_support(ctx.device); !s.supported) return s;
  const DeviceInfo info = query_device(ctx.device);
  if (info.cc < 80) return {false, "latency uses bf16 tensor-core GEMMs: needs compute capability >= 8.0"};
  return memory_support(info, model_bytes(cfg.hidden, cfg.layers, {cfg.batch}), "latency");
}

std::unique_ptr<Workload> make_serve(const Params& p) { return std::make_unique<Serve>(p); }

Support serve_supported(const Params& p, const ExecContext& ctx) {
  const ServeConfig cfg(p);
  if (cfg.max_request_rows > cfg.max_batch)
    return {false, "max_request_rows (" + std::to_string(cfg.max_request_rows) + ") exceeds max_batch (" +
                       std::to_string(cfg.max_batch) + "): such a request could never be served"};
  if (Support s = cuda_support(ctx.device); !s.supported) return s;
  const DeviceInfo info = query_device(ctx.device);
  if (info.cc < 80) return {false, "serve uses bf16 tensor-core GEMMs: needs compute capability >= 8.0"};
  return memory_support(info, model_bytes(cfg.hidden, cfg.layers, cfg.buckets()), "serve");
}

}  // namespace

IB_CUDA_WORKLOAD("latency", latency_supported, make_latency);
IB_CUDA_WORKLOAD("serve", serve_supported, make_serve);

}  // namespace ib::cuda
