// Inference-style workloads built on one request model: `layers` square bf16 linear layers
// (hidden x hidden weights, ReLU epilogue, alpha = 1/sqrt(hidden) to keep magnitudes stable),
// applied to a block of `rows` token vectors. One CUDA graph per batch size, captured at setup, so
// a request costs one launch on the host.
//
// latency: small fixed-size requests, open-loop (Poisson arrivals at `rate`, or at `load` x the
//   capacity measured at setup) or closed-loop (`concurrency` requests outstanding). A sample is a
//   window of `requests` requests; per-request latency = completion - arrival, queueing included,
//   goes into SampleOutput::latencies_s.
// serve: requests of random sizes (1..max_request_rows rows) arriving open-loop, dynamically
//   batched (all waiting requests that fit in max_batch rows, at most `inflight` batches on the
//   GPU, each batch padded to the next power-of-two graph); latencies as for `latency`. Goodput =
//   requests with latency <= slo_ms per second: each sample reports counters["slo_met_requests"]
//   (acct::count_within) and counters["requests"], and the harness's rate of slo_met_requests is
//   the goodput; counters["batches"] (batches launched, so requests / batches is the mean batch
//   size in requests) shows how much batching the load caused. `latency` reports
//   counters["requests"].
//
// Completion times: each request's (or batch's) completion event is timed against an anchor event
// recorded on the idle stream at the start of the window, whose CLOCK_MONOTONIC time is the
// midpoint of the host clock around record+wait (the narrowest of up to five tries). Arrival times
// are the scheduled (not the actual) launch times, so a late host does not hide queueing (no
// coordinated omission).
//
// Correctness (setup): every captured graph is run once; each layer's output must be finite and
// 32 sampled elements per layer must match a float64 CPU reference computed from that layer's
// (GPU) input and weights, within 1e-2 relative (bf16 output rounding).
#include "kernels/cuda/accounting.h"
#include "kernels/cuda/device_info.h"
#include "kernels/cuda/device_util.cuh"
#include "kernels/cuda/lt_matmul.h"
#include "kernels/cuda/workloads_internal.h"
#include "kernels/open_loop.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <memory>
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
  explicit Latency(const Params& p) : cfg_(p), rng_(cfg_.seed) {}

  void setup(const ExecContext& ctx) override {
    query_device(ctx.device);
    auto s = static_cast<cudaStream_t>(ctx.stream);
    model_ = std::make_unique<RequestModel>(s, cfg_.hidden, cfg_.layers, std::vector<int>{cfg_.batch});
    clock_ = std::make_unique<EventClock>(static_cast<std::size_t>(cfg_.requests));
    service_s_ = model_->service_time_s(0, s);
    rate_ = cfg_.rate > 0 ? cfg_.rate : cfg_.load / service_s_;
  }

  void run_sample(const ExecContext& ctx, SampleOutput& out) override {
    auto s = static_cast<cudaStream_t>(ctx.stream);
    const std::size_t n = static_cast<std::size_t>(cfg_.requests);
    clock_->anchor(s);
    std::vector<std::int64_t> arrival(n);
    if (cfg_.open) {
      arrival = ib::poisson_arrivals(mono_ns(), rate_, n, rng_);
      for (std::size_t i = 0; i < n; ++i) {
        wait_until_ns(arrival[i]);
        model_->launch(0, s);
        IB_CHECK(cudaEventRecord(clock_->at(i), s));
      }
    } else {
      const std::size_t c = static_cast<std::size_t>(cfg_.concurrency);
      for (std::size_t i = 0; i < n; ++i) {
        if (i >= c) IB_CHECK(cudaEventSynchronize(clock_->at(i - c)));
        arrival[i] = mono_ns();
        model_->launch(0, s);
        IB_CHECK(cudaEventRecord(clock_->at(i), s));
      }
    }
    IB_CHECK(cudaEventSynchronize(clock_->at(n - 1)));
    out.latencies_s.resize(n);
    for (std::size_t i = 0; i < n; ++i) out.latencies_s[i] = static_cast<double>(clock_->time_ns(i) - arrival[i]) * 1e-9;
    out.counters["requests"] = static_cast<double>(n);
  }

  Work work_per_sample() const override { return {static_cast<double>(cfg_.requests), "request"}; }
  // The arrival rate derived from `load` at setup, so that later phases offer the same load.
  Params resolved_params() const override { return cfg_.open ? Params{{"rate", rate_}} : Params::object(); }

  void teardown() override {
    clock_.reset();
    model_.reset();
  }

 private:
  LatencyConfig cfg_;
  std::mt19937_64 rng_;
  std::unique_ptr<RequestModel> model_;
  std::unique_ptr<EventClock> clock_;
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
  explicit Serve(const Params& p) : cfg_(p), rng_(cfg_.seed) {}

  void setup(const ExecContext& ctx) override {
    query_device(ctx.device);
    auto s = static_cast<cudaStream_t>(ctx.stream);
    model_ = std::make_unique<RequestModel>(s, cfg_.hidden, cfg_.layers, cfg_.buckets());
    clock_ = std::make_unique<EventClock>(static_cast<std::size_t>(cfg_.requests));  // <= one batch per request
    // Capacity: full batches back to back, divided by the mean request size.
    const double full_s = model_->service_time_s(model_->buckets() - 1, s);
    const double mean_rows = (1.0 + cfg_.max_request_rows) / 2.0;
    rate_ = cfg_.rate > 0 ? cfg_.rate : cfg_.load * (cfg_.max_batch / full_s) / mean_rows;
  }

  void run_sample(const ExecContext& ctx, SampleOutput& out) override {
    auto s = static_cast<cudaStream_t>(ctx.stream);
    const std::size_t n = static_cast<std::size_t>(cfg_.requests);
    std::uniform_int_distribution<int> size(1, cfg_.max_request_rows);
    std::vector<int> rows(n);
    for (auto& r : rows) r = size(rng_);
    clock_->anchor(s);
    const std::vector<std::int64_t> arrival = ib::poisson_arrivals(mono_ns(), rate_, n, rng_);
    std::vector<std::size_t> batch_of(n);
    std::deque<std::size_t> in_flight;  // batch ids on the GPU
    std::size_t next_arrival = 0, next_pending = 0, batches = 0;
    while (next_pending < n) {
      const std::int64_t now = mono_ns();
      while (next_arrival < n && arrival[next_arrival] <= now) ++next_arrival;
      while (!in_flight.empty()) {
        const cudaError_t q = cudaEventQuery(clock_->at(in_flight.front()));
        if (q == cudaErrorNotReady) break;
        IB_CHECK(q);
        in_flight.pop_front();
      }
      if (next_pending < next_arrival && in_flight.size() < static_cast<std::size_t>(cfg_.inflight)) {
        int total = 0;
        std::size_t i = next_pending;
        while (i < next_arrival && total + rows[i] <= cfg_.max_batch) total += rows[i++];
        model_->launch(model_->bucket_for(total), s);
        IB_CHECK(cudaEventRecord(clock_->at(batches), s));
        for (std::size_t r = next_pending; r < i; ++r) batch_of[r] = batches;
        in_flight.push_back(batches++);
        next_pending = i;
      } else if (next_pending == next_arrival && in_flight.empty() && next_arrival < n) {
        wait_until_ns(arrival[next_arrival]);  // idle until the next request arrives
      }
    }
    IB_CHECK(cudaEventSynchronize(clock_->at(batches - 1)));
    out.latencies_s.resize(n);
    for (std::size_t i = 0; i < n; ++i)
      out.latencies_s[i] = static_cast<double>(clock_->time_ns(batch_of[i]) - arrival[i]) * 1e-9;
    out.counters["requests"] = static_cast<double>(n);
    out.counters["batches"] = static_cast<double>(batches);
    out.counters["slo_met_requests"] = static_cast<double>(acct::count_within(out.latencies_s, cfg_.slo_ms * 1e-3));
  }

  Work work_per_sample() const override { return {static_cast<double>(cfg_.requests), "request"}; }
  // The arrival rate derived from `load` at setup, so that later phases offer the same load.
  Params resolved_params() const override { return {{"rate", rate_}}; }

  void teardown() override {
    clock_.reset();
    model_.reset();
  }

 private:
  ServeConfig cfg_;
  std::mt19937_64 rng_;
  std::unique_ptr<RequestModel> model_;
  std::unique_ptr<EventClock> clock_;
  double rate_ = 0.0;
};

}  // namespace

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

}  // namespace ib::cuda
