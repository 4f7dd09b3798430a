// CUDA workloads on a GPU (CTest label `gpu`): each workload's setup() runs its own correctness
// check against a float64/closed-form reference; these tests then run it through the CUDA executor
// and check the accounting and timing that come out. Without a usable GPU every test is skipped
// with the reason (ctest shows them as skipped, not passed).
// IB_REQUIRE_GPU=1 (the device check on the H200) turns those skips into failures: a missing or
// unusable GPU fails every test, and so does a waiver of a workload that must run on an H200
// (every gemm dtype, fp8 included since the H200 is compute capability 9.0; copy sm/ce; h2d/d2h
// pinned/pageable; latency; serve; allreduce on one GPU; train-step). Waivers that depend on the
// machine's size (a second GPU, more memory than the GPU has) still skip.
#include "harness/exec/cuda_module_api.h"
#include "kernels/cuda/accounting.h"
#include "kernels/cuda/cuda_workloads.h"
#include "kernels/open_loop.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace {

using nlohmann::json;

bool gpu_required() {
  const char* v = std::getenv("IB_REQUIRE_GPU");
  return v && std::strcmp(v, "1") == 0;
}

class CudaGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = ib::cuda::unavailable_reason(0)) {
      if (gpu_required()) GTEST_FAIL() << "IB_REQUIRE_GPU=1, but there is no usable CUDA GPU: " << *why;
      GTEST_SKIP() << "no CUDA GPU: " << *why;
    }
    ib::cuda::register_workloads(registry_);
    exec_ = ib::cuda::make_executor(0);
  }

  struct Run {
    ib::Work work;
    std::vector<ib::TimedSample> samples;
    json resolved;  // resolved_params() after setup: what the harness records as worker.resolved
  };

  // Validates params, checks supported() (skips with its reason), sets up (correctness check),
  // runs `n` samples through the executor and tears down.
  Run run(const std::string& name, const json& given, int n) {
    Run out;
    const auto* spec = registry_.find(name);
    EXPECT_NE(spec, nullptr) << name;
    if (!spec) return out;
    std::string err;
    auto params = ib::validate_params(*spec, given, err);
    EXPECT_TRUE(params.has_value()) << err;
    if (!params) return out;
    const auto support = spec->supported(*params, exec_->context());
    if (!support.supported) {
      skipped_ = support.reason;
      return out;
    }
    auto w = spec->create(*params);
    w->setup(exec_->context());
    out.work = w->work_per_sample();
    out.resolved = w->resolved_params();
    int left = n;
    w->begin_block(ib::open_loop_now_ns());  // as the worker does at a block's release
    exec_->run_samples(*w, [&] { return left-- > 0; }, [&](ib::TimedSample&& s) { out.samples.push_back(std::move(s)); });
    w->teardown();
    return out;
  }

  static void expect_timeline(const Run& r, std::size_t n) {
    ASSERT_EQ(r.samples.size(), n);
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_GT(r.samples[i].duration_s, 0.0) << i;
      if (i) {
        EXPECT_GE(r.samples[i].start_ns, r.samples[i - 1].start_ns) << i;
      }
    }
  }

  static double median_rate(const Run& r) {
    std::vector<double> v;
    for (const auto& s : r.samples) v.push_back(r.work.amount / s.duration_s);
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  }

  ib::Registry registry_;
  std::unique_ptr<ib::Executor> exec_;
  std::string skipped_;
};

// A waiver this machine may legitimately give (too few GPUs, not enough memory): a visible skip.
#define SKIP_IF_WAIVED() \
  if (!skipped_.empty()) GTEST_SKIP() << "waived: " << skipped_
// A waiver of a workload that must run on an H200: a failure under IB_REQUIRE_GPU=1, else a skip.
#define SKIP_IF_WAIVED_UNLESS_REQUIRED()                                                           \
  if (!skipped_.empty()) {                                                                         \
    if (gpu_required()) FAIL() << "waived, but IB_REQUIRE_GPU=1 requires it to run: " << skipped_; \
    GTEST_SKIP() << "waived: " << skipped_;                                                        \
  }

TEST_F(CudaGpu, GemmEveryDtype) {
  for (const char* dt : {"bf16", "fp16", "tf32", "fp32", "fp8"}) {
    skipped_.clear();
    const auto r = run("gemm", {{"dtype", dt}, {"m", 1024}, {"n", 512}, {"k", 768}, {"reps", 4}}, 5);
    if (!skipped_.empty()) {
      if (gpu_required()) ADD_FAILURE() << "gemm " << dt << " waived, but IB_REQUIRE_GPU=1 requires it: " << skipped_;
      std::cout << "[  NOTE    ] gemm " << dt << " waived: " << skipped_ << "\n";
      continue;
    }
    expect_timeline(r, 5);
    EXPECT_EQ(r.work.unit, "FLOP");
    EXPECT_DOUBLE_EQ(r.work.amount, 4 * 2.0 * 1024 * 512 * 768) << dt;
  }
}

TEST_F(CudaGpu, GemmBackToBackHasNoGaps) {
  const auto r = run("gemm", {{"m", 4096}, {"n", 4096}, {"k", 4096}, {"reps", 4}}, 20);
  SKIP_IF_WAIVED_UNLESS_REQUIRED();
  expect_timeline(r, 20);
  // Pipelined executor: sample k+1 starts when sample k ends (within 50 us), and never before it
  // ends: overlapping samples would mean wrong start times (5 us: above the ~0.5 us resolution of
  // cudaEventElapsedTime, far below a sample).
  for (std::size_t i = 1; i < r.samples.size(); ++i) {
    const double gap = (r.samples[i].start_ns - r.samples[i - 1].start_ns) * 1e-9 - r.samples[i - 1].duration_s;
    EXPECT_LT(gap, 50e-6) << i;
    EXPECT_GT(gap, -5e-6) << i << ": sample starts before the previous one ended";
  }
  EXPECT_GT(median_rate(r), 50e12) << "bf16 4096^3 below 50 TFLOP/s";
}

// setup() checks the product against a float64 reference in either layout (non-square, so a swapped
// dimension shows); the algorithm it chose is recorded and, given back as `algo`, runs again.
TEST_F(CudaGpu, GemmLayoutsAndTheRecordedAlgorithmRunsAgain) {
  for (const char* layout : {"tn", "nn"}) {
    skipped_.clear();
    const json given = {{"layout", layout}, {"m", 2048}, {"n", 1024}, {"k", 512}, {"reps", 4}};
    const auto first = run("gemm", given, 3);
    SKIP_IF_WAIVED_UNLESS_REQUIRED();
    expect_timeline(first, 3);
    ASSERT_TRUE(first.resolved.contains("algo")) << layout << ": " << first.resolved.dump();
    const std::string algo = first.resolved.at("algo").get<std::string>();
    EXPECT_EQ(algo.rfind("id=", 0), 0u) << algo;
    json again_params = given;
    again_params["algo"] = algo;
    const auto again = run("gemm", again_params, 3);
    expect_timeline(again, 3);
    EXPECT_EQ(again.resolved.at("algo"), algo) << layout;
  }
}

// Every copy kernel variant passes setup's word-for-word check and moves the bytes it claims.
TEST_F(CudaGpu, CopyKernelVariants) {
  for (const char* k : {"v4", "v8", "v4-stream", "v8-stream", "v4-b512", "v8-b512", "v4-stream-b512", "v8-stream-b512"}) {
    skipped_.clear();
    const auto r = run("copy", {{"kernel", k}, {"mib", 64}, {"reps", 2}}, 3);
    SKIP_IF_WAIVED_UNLESS_REQUIRED();
    expect_timeline(r, 3);
    EXPECT_DOUBLE_EQ(r.work.amount, 2 * 2.0 * 64 * 1048576.0) << k;
    EXPECT_GT(median_rate(r), 100e9) << k;
  }
}

TEST_F(CudaGpu, CopySmAndCe) {
  for (const char* e : {"sm", "ce"}) {
    skipped_.clear();
    const auto r = run("copy", {{"engine", e}, {"mib", 256}, {"reps", 4}}, 5);
    SKIP_IF_WAIVED_UNLESS_REQUIRED();
    expect_timeline(r, 5);
    EXPECT_EQ(r.work.unit, "B");
    EXPECT_DOUBLE_EQ(r.work.amount, 4 * 2.0 * 256 * 1048576.0);
    EXPECT_GT(median_rate(r), 100e9) << e;
  }
}

TEST_F(CudaGpu, HostDeviceCopies) {
  std::map<std::string, double> rate;  // "h2d pinned" -> B/s
  for (const char* dir : {"h2d", "d2h"})
    for (const char* mem : {"pinned", "pageable"}) {
      skipped_.clear();
      const auto r = run("h2d", {{"direction", dir}, {"memory", mem}, {"mib", 64}}, 3);
      SKIP_IF_WAIVED_UNLESS_REQUIRED();
      expect_timeline(r, 3);
      EXPECT_DOUBLE_EQ(r.work.amount, 64 * 1048576.0);
      const std::string what = std::string(dir) + " " + mem;
      rate[what] = median_rate(r);
      std::cout << "[  NOTE    ] " << what << ": " << rate[what] / 1e9 << " GB/s\n";
      EXPECT_GT(rate[what], 1e9) << what;
    }
  // Pageable copies are staged by the CPU through a pinned driver buffer: slower than DMA straight
  // from pinned memory. Equal or faster would mean the pinned path is not what is measured.
  EXPECT_GT(rate["h2d pinned"], rate["h2d pageable"]);
}

TEST_F(CudaGpu, LatencyOpenAndClosedLoop) {
  for (const char* mode : {"open", "closed"}) {
    skipped_.clear();
    const bool open = std::strcmp(mode, "open") == 0;
    const auto r = run("latency", {{"mode", mode}, {"requests", 100}, {"hidden", 1024}, {"layers", 2}}, 3);
    SKIP_IF_WAIVED_UNLESS_REQUIRED();
    expect_timeline(r, 3);
    EXPECT_EQ(r.work.unit, "request");
    EXPECT_DOUBLE_EQ(r.work.amount, 100.0);  // open loop: the expected count per slice
    double total = 0.0;
    for (const auto& s : r.samples) {
      // Open loop: a sample is a slice of 100 / rate seconds of the schedule, its count is Poisson.
      const double count = s.counters.at("requests");
      ASSERT_EQ(static_cast<double>(s.latencies_s.size()), count) << mode;
      if (!open) {
        EXPECT_DOUBLE_EQ(count, 100.0);
      }
      total += count;
      for (double l : s.latencies_s) {
        EXPECT_GT(l, 0.0);
        // No request outlives its sample (anchor error ~us); in open loop this assumes the GPU was
        // never more than 1 ms behind at a slice's start, true at load 0.5 on an idle GPU.
        EXPECT_LT(l, s.duration_s + 1e-3);
      }
    }
    if (open) {
      EXPECT_GT(total, 300.0 - 6 * std::sqrt(300.0));  // Poisson(300) over three slices
      EXPECT_LT(total, 300.0 + 6 * std::sqrt(300.0));
    }
  }
}

// Default load 0.7 of full-batch capacity with requests of 1..8 rows (mean 4.5): ~5 requests arrive
// per full-batch service time. A batch of one request costs about as much as a full one (these small
// GEMMs are bound by reading the weights, not by rows), so launching requests one by one could not
// keep up: requests must queue and be batched, i.e. batches < requests. And a batch holds at most
// max_batch = 32 requests (each has >= 1 row), so batches >= requests / 32. A sample is a slice of
// the arrival schedule with 200 requests expected; its actual count is counters["requests"].
TEST_F(CudaGpu, ServeBatchesRequests) {
  const auto r = run("serve", {{"requests", 200}, {"hidden", 1024}, {"layers", 2}, {"max_batch", 32}}, 3);
  SKIP_IF_WAIVED_UNLESS_REQUIRED();
  expect_timeline(r, 3);
  EXPECT_DOUBLE_EQ(r.work.amount, 200.0);
  for (const auto& s : r.samples) {
    const double count = s.counters.at("requests");
    ASSERT_EQ(static_cast<double>(s.latencies_s.size()), count);
    EXPECT_GT(count, 200.0 - 6 * std::sqrt(200.0));  // Poisson(200)
    for (double l : s.latencies_s) EXPECT_GT(l, 0.0);
    const double batches = s.counters.at("batches");
    std::cout << "[  NOTE    ] serve: " << batches << " batches for " << count << " requests\n";
    EXPECT_LT(batches, count) << "no batching happened";
    EXPECT_GE(batches, std::ceil(count / 32.0));
    // Goodput numerator: requests within the default slo_ms = 10.
    EXPECT_DOUBLE_EQ(s.counters.at("slo_met_requests"), static_cast<double>(ib::acct::count_within(s.latencies_s, 10e-3)));
  }
}

TEST_F(CudaGpu, AllreduceOneRank) {
  const auto r = run("allreduce", {{"gpus", 1}, {"mib", 64}, {"iters", 2}}, 3);
  // NCCL is optional by design (loaded at run time): without it allreduce is waived even where the GPU
  // is required (IB_REQUIRE_GPU=1), and the rest of the suite runs.
  if (skipped_.find("needs NCCL, loaded at run time") != std::string::npos) GTEST_SKIP() << "waived: " << skipped_;
  SKIP_IF_WAIVED_UNLESS_REQUIRED();
  expect_timeline(r, 3);
  EXPECT_DOUBLE_EQ(r.work.amount, 2 * 64 * 1048576.0);
  for (const auto& s : r.samples) {
    EXPECT_DOUBLE_EQ(s.counters.at("bus_bytes"), 0.0);  // busbw not meaningful
    EXPECT_DOUBLE_EQ(s.counters.at("local_copy_bytes"), 2 * 64 * 1048576.0);  // said so in the results
  }
}

TEST_F(CudaGpu, AllreduceTwoRanksWhenTwoGpus) {
  const auto r = run("allreduce", {{"gpus", 2}, {"mib", 64}, {"iters", 2}}, 3);
  SKIP_IF_WAIVED();  // "too few GPUs" on a one-GPU machine
  expect_timeline(r, 3);
  for (const auto& s : r.samples) {
    EXPECT_DOUBLE_EQ(s.counters.at("bus_bytes"), 2 * 64 * 1048576.0);  // factor 1
    EXPECT_DOUBLE_EQ(s.counters.at("local_copy_bytes"), 0.0);
  }
}

// setup() runs the tiny-model check (every forward stage, FFN-down dgrad/wgrad, the optimizer's
// closed form) and one finite step of the configured model; these tests add accounting and timing.
TEST_F(CudaGpu, TrainStepSmallAdamAndSgd) {
  for (const char* opt : {"adam", "sgd"}) {
    skipped_.clear();
    const auto r = run("train-step",
                       {{"hidden", 1024}, {"heads", 8}, {"seq", 512}, {"batch", 2}, {"layers", 1}, {"steps", 2},
                        {"optimizer", opt}},
                       3);
    SKIP_IF_WAIVED_UNLESS_REQUIRED();
    expect_timeline(r, 3);
    ib::acct::TrainShape sh;
    sh.hidden = 1024, sh.heads = 8, sh.seq = 512, sh.batch = 2, sh.ffn = 4096, sh.layers = 1;
    EXPECT_EQ(r.work.unit, "FLOP");
    EXPECT_DOUBLE_EQ(r.work.amount, 2 * ib::acct::train_step_flop(sh)) << opt;
    for (const auto& s : r.samples) EXPECT_DOUBLE_EQ(s.counters.at("steps"), 2.0);
  }
}

TEST_F(CudaGpu, TrainStepDefaultsTakeOneToFiftyMs) {
  const auto r = run("train-step", json::object(), 5);
  SKIP_IF_WAIVED_UNLESS_REQUIRED();
  expect_timeline(r, 5);
  std::vector<double> d;
  for (const auto& s : r.samples) d.push_back(s.duration_s);
  std::sort(d.begin(), d.end());
  const double median = d[d.size() / 2];
  std::cout << "[  NOTE    ] train-step defaults: median step " << median * 1e3 << " ms, "
            << r.work.amount / median / 1e12 << " TFLOP/s\n";
  EXPECT_GE(median, 1e-3);
  EXPECT_LE(median, 50e-3);
  EXPECT_GT(median_rate(r), 100e12) << "train-step below 100 TFLOP/s";
}

TEST_F(CudaGpu, TrainStepTwoGpusWhenTwoGpus) {
  const auto r = run("train-step", {{"hidden", 1024}, {"heads", 8}, {"seq", 512}, {"batch", 1}, {"layers", 1}, {"gpus", 2}}, 3);
  SKIP_IF_WAIVED();  // "too few GPUs" on a one-GPU machine
  expect_timeline(r, 3);
}

TEST_F(CudaGpu, TooFewGpusIsWaived) {
  const auto* spec = registry_.find("allreduce");
  ASSERT_NE(spec, nullptr);
  std::string err;
  const auto p = ib::validate_params(*spec, {{"gpus", 64}}, err);
  ASSERT_TRUE(p.has_value()) << err;
  const auto s = spec->supported(*p, exec_->context());
  EXPECT_FALSE(s.supported);
  EXPECT_NE(s.reason.find("too few GPUs"), std::string::npos) << s.reason;
}

TEST_F(CudaGpu, NotEnoughMemoryIsWaived) {
  const auto* spec = registry_.find("copy");
  ASSERT_NE(spec, nullptr);
  std::string err;
  const auto p = ib::validate_params(*spec, {{"mib", 65536}}, err);  // 2 x 64 GiB
  ASSERT_TRUE(p.has_value()) << err;
  const auto s = spec->supported(*p, exec_->context());
  if (s.supported) GTEST_SKIP() << "this GPU has more than 128 GiB free";
  EXPECT_NE(s.reason.find("not enough GPU memory"), std::string::npos) << s.reason;
}

}  // namespace
