// interference-microbench: every CUDA workload alone under Google Benchmark.
// Each iteration is one sample (run_sample) bracketed by CUDA events on a stream of our own and
// reported with SetIterationTime (UseManualTime), so the console and JSON figures are GPU time,
// comparable with Google Benchmark's tools. Counters are computed from the summed event times
// (not Google Benchmark's kIsRate, which divides by host CPU time):
//   TFLOP/s (gemm), GB/s = bytes read+written and GB/s_1dir (copy), GB/s (h2d, one direction),
//   algbw_GB/s and busbw_GB/s = algbw x 2(n-1)/n (allreduce), req/s, p50_ms, p99_ms (latency, serve),
//   and <counter>/s for every SampleOutput counter (steps/s, slo_met_requests/s = goodput, bus_bytes/s).
// A workload that is not supported here is reported with SkipWithError(<reason>).
// Warm-up: at least 3 samples and at least 500 ms before the timed iterations (a cold GPU's clocks
// are still rising; the same as scripts/torch_ceilings.py gives PyTorch).
// The headline cases (gemm bf16 8192^3 tn and nn, copy sm and ce: the ratios to PyTorch) come first;
// --ib-cases=headline runs only them and --ib-cases=rest the others, so that the device check has their
// JSON (Google Benchmark writes it at exit) even when a later case hangs past its step's timeout. Each case's label holds its params, what it resolved in setup (gemm's chosen
// cuBLASLt algorithm) and, for allreduce on one GPU, "local copy, no communication". The JSON
// context holds the CUDA runtime/driver and cuBLASLt versions and where NCCL was found.
// Usage: interference-microbench [--ib-cases=all|headline|rest] [--benchmark_filter=REGEX] [--benchmark_format=json] ...
//        interference-microbench --info   (prints runtime_info() as JSON and exits: the device check's
//                                          preflight, which also proves that the program starts)
//        interference-microbench --ib-headline-plan   (prints what the headline cases time, as JSON, and
//                                          exits: scripts/torch_ceilings.py --print-plan must time the same
//                                          ops per event pair, the same count of pairs, the same sizes and
//                                          statistic; tests/e2e/test_device_summary.py compares the two)
#include "harness/exec/executor.h"
#include "harness/stats/stats.h"
#include "kernels/cuda/accounting.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_workloads.h"
#include "kernels/cuda/runtime_info.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using nlohmann::json;

constexpr int kWarmupSamples = 3;
constexpr std::chrono::milliseconds kWarmup{500};

struct Case {
  std::string workload;
  json params;
  int iterations;
  bool headline = false;  // a ratio to PyTorch's ceiling is taken from it
};

// What the timed iterations of one case measured.
struct Measured {
  double gpu_s = 0.0;                     // summed event time
  std::vector<double> latencies;          // every request's latency (latency, serve)
  std::map<std::string, double> counters; // SampleOutput::counters summed over iterations
};

// The case's figures as Google Benchmark counters, computed from the summed GPU time.
void report_counters(benchmark::State& state, const Case& c, const json& params, const ib::Work& work,
                     const Measured& m) {
  const double total = work.amount * static_cast<double>(state.iterations());
  const double per_s = m.gpu_s > 0 ? total / m.gpu_s : 0.0;
  if (work.unit == "FLOP") {
    state.counters["TFLOP/s"] = per_s / 1e12;
  } else if (work.unit == "B" && c.workload == "copy") {
    state.counters["GB/s"] = per_s / 1e9;
    state.counters["GB/s_1dir"] = per_s / 2e9;
  } else if (work.unit == "B" && c.workload == "allreduce") {
    const int n = params.at("gpus").get<int>();
    state.counters["algbw_GB/s"] = per_s / 1e9;
    state.counters["busbw_GB/s"] = per_s * ib::acct::allreduce_busbw_factor(n) / 1e9;
  } else if (work.unit == "B") {
    state.counters["GB/s"] = per_s / 1e9;
  } else if (work.unit == "request") {
    state.counters["req/s"] = per_s;
    state.counters["p50_ms"] = ib::percentile(m.latencies, 50.0) * 1e3;
    state.counters["p99_ms"] = ib::percentile(m.latencies, 99.0) * 1e3;
  }
  // Every workload counter as a rate over GPU time, as the harness reports it: steps/s (train-step),
  // slo_met_requests/s = goodput (serve), bus_bytes/s = busbw and local_copy_bytes/s (allreduce).
  for (const auto& [name, sum] : m.counters) state.counters[name + "/s"] = m.gpu_s > 0 ? sum / m.gpu_s : 0.0;
}

void run_case_or_throw(benchmark::State& state, const Case& c) {
  ib::Registry registry;
  ib::cuda::register_workloads(registry);
  const ib::WorkloadSpec* spec = registry.find(c.workload);
  std::string err;
  auto params = spec ? ib::validate_params(*spec, c.params, err) : std::nullopt;
  if (!params) {
    state.SkipWithError(("bad case: " + err).c_str());
    for (auto _ : state) {
    }
    return;
  }
  const int device = 0;
  const auto support = spec->supported(*params, ib::ExecContext{device, nullptr, nullptr, {}});
  if (!support.supported) {
    state.SkipWithError(("waived: " + support.reason).c_str());
    for (auto _ : state) {
    }
    return;
  }
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, end = nullptr;
  IB_CHECK(cudaSetDevice(device));
  IB_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  IB_CHECK(cudaEventCreate(&start));
  IB_CHECK(cudaEventCreate(&end));
  const ib::ExecContext ctx{device, stream, nullptr, {}};
  auto w = spec->create(*params);
  w->setup(ctx);
  const ib::Work work = w->work_per_sample();
  ib::SampleOutput out;
  const auto warm_start = std::chrono::steady_clock::now();
  for (int i = 0; i < kWarmupSamples || std::chrono::steady_clock::now() - warm_start < kWarmup; ++i) {
    out = ib::SampleOutput{};
    w->run_sample(ctx, out);
    IB_CHECK(cudaStreamSynchronize(stream));
    w->check_sample();  // once per run_sample: the open-loop workloads complete their slice here
  }

  double gpu_s = 0.0;
  std::vector<double> latencies;
  std::map<std::string, double> counter_totals;  // SampleOutput::counters summed over iterations
  for (auto _ : state) {
    out = ib::SampleOutput{};
    IB_CHECK(cudaEventRecord(start, stream));
    w->run_sample(ctx, out);
    IB_CHECK(cudaEventRecord(end, stream));
    IB_CHECK(cudaEventSynchronize(end));
    w->check_sample();  // as the harness's executor does: a sample whose work did not happen fails
    float ms = 0.0f;
    IB_CHECK(cudaEventElapsedTime(&ms, start, end));
    state.SetIterationTime(ms * 1e-3);
    gpu_s += ms * 1e-3;
    latencies.insert(latencies.end(), out.latencies_s.begin(), out.latencies_s.end());
    for (const auto& [name, v] : out.counters)
      if (name != ib::kLongestCollectiveCounter) counter_totals[name] += v;  // a figure per sample, not an amount
  }
  report_counters(state, c, *params, work, {gpu_s, std::move(latencies), std::move(counter_totals)});
  json label = *params;
  if (const json resolved = w->resolved_params(); !resolved.empty()) label["resolved"] = resolved;
  if (c.workload == "allreduce" && params->at("gpus").get<int>() == 1) label["note"] = "local copy, no communication";
  state.SetLabel(label.dump());
  w->teardown();
  cudaEventDestroy(start);
  cudaEventDestroy(end);
  cudaStreamDestroy(stream);
}

// A failure (correctness check, CUDA error) is reported for this case and the run goes on.
void run_case(benchmark::State& state, const Case& c) {
  try {
    run_case_or_throw(state, c);
  } catch (const std::exception& e) {
    state.SkipWithError(("failed: " + std::string(e.what())).c_str());
  }
}

std::vector<Case> cases() {
  std::vector<Case> v;
  // Case names list the given params (sorted by key), so the defaults (layout tn, kernel v4) are
  // left out of the first cases: their names stay what scripts/device_summary.py looks for.
  // The headline cases first: at least 100 products (copies: 400), as PyTorch's ceiling is timed.
  v.push_back({"gemm", {{"dtype", "bf16"}, {"m", 8192}, {"n", 8192}, {"k", 8192}}, 100, true});
  // PyTorch's layout: its bf16 matmul is the ceiling the default (tn) is compared with.
  v.push_back({"gemm", {{"dtype", "bf16"}, {"layout", "nn"}, {"m", 8192}, {"n", 8192}, {"k", 8192}}, 100, true});
  for (const char* e : {"sm", "ce"}) v.push_back({"copy", {{"engine", e}, {"mib", 1024}, {"reps", 8}}, 50, true});
  for (const char* dt : {"fp16", "tf32", "fp32", "fp8"})
    v.push_back({"gemm", {{"dtype", dt}, {"m", 8192}, {"n", 8192}, {"k", 8192}}, 50});
  v.push_back({"gemm", {{"dtype", "bf16"}, {"m", 4096}, {"n", 4096}, {"k", 4096}, {"reps", 8}}, 50});
  for (const char* k : {"v8", "v4-stream", "v8-stream", "v4-b512", "v8-b512", "v4-stream-b512", "v8-stream-b512"})
    v.push_back({"copy", {{"engine", "sm"}, {"kernel", k}, {"mib", 1024}, {"reps", 8}}, 50});
  for (const char* dir : {"h2d", "d2h"})
    for (const char* mem : {"pinned", "pageable"})
      v.push_back({"h2d", {{"direction", dir}, {"memory", mem}, {"mib", 256}}, 20});
  v.push_back({"latency", {{"mode", "open"}, {"load", 0.5}}, 20});
  v.push_back({"latency", {{"mode", "closed"}, {"concurrency", 1}}, 20});
  v.push_back({"serve", json::object(), 10});
  v.push_back({"allreduce", {{"gpus", 1}, {"mib", 256}}, 20});
  v.push_back({"train-step", json::object(), 20});
  return v;
}

// What each headline case times, for comparison with PyTorch's ceilings (scripts/torch_ceilings.py
// --print-plan): its params with the defaults filled in, ops per event pair (the workload's reps), the
// count of timed pairs, the warm-up and the statistic report_counters computes.
json headline_plan() {
  ib::Registry registry;
  ib::cuda::register_workloads(registry);
  json plan = json::array();
  for (const Case& c : cases()) {
    if (!c.headline) continue;
    std::string err;
    const auto params = ib::validate_params(*registry.find(c.workload), c.params, err);
    if (!params) throw std::runtime_error("headline case " + c.workload + ": " + err);
    plan.push_back({{"workload", c.workload}, {"params", *params}, {"ops_per_event_pair", params->at("reps")},
                    {"event_pairs", c.iterations}, {"warmup_s", kWarmup.count() / 1e3},
                    {"warmup_min_runs", kWarmupSamples}, {"statistic", "total work / total event time"}});
  }
  return plan;
}

std::string case_name(const Case& c) {
  std::string name = c.workload;
  for (const auto& [k, val] : c.params.items()) name += "/" + k + ":" + (val.is_string() ? val.get<std::string>() : val.dump());
  return name;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--info") == 0) {
    try {
      std::printf("%s\n", ib::cuda::runtime_info().dump(2).c_str());
      return 0;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "interference-microbench --info: %s\n", e.what());
      return 1;
    }
  }
  if (argc == 2 && std::strcmp(argv[1], "--ib-headline-plan") == 0) {
    std::printf("%s\n", headline_plan().dump(2).c_str());
    return 0;
  }
  // --ib-cases=headline|rest|all (ours, taken out before Google Benchmark reads the rest).
  std::string which = "all";
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--ib-cases=", 11) == 0) which = argv[i] + 11;
    else argv[kept++] = argv[i];
  }
  argc = kept;
  argv[argc] = nullptr;
  if (which != "all" && which != "headline" && which != "rest") {
    std::fprintf(stderr, "interference-microbench: --ib-cases must be all, headline or rest, not '%s'\n", which.c_str());
    return 2;
  }
  const json info = ib::cuda::runtime_info();
  for (const char* key : {"cuda_runtime_version", "cuda_driver_version", "cublasLt_version", "loaded_libraries"})
    benchmark::AddCustomContext(std::string("ib_") + key, info.at(key).dump());
  benchmark::AddCustomContext("ib_nccl", info.at("nccl").at("describe").get<std::string>());
  for (const Case& c : cases()) {
    if ((which == "headline" && !c.headline) || (which == "rest" && c.headline)) continue;
    benchmark::RegisterBenchmark(case_name(c).c_str(), [c](benchmark::State& st) { run_case(st, c); })
        ->UseManualTime()
        ->Iterations(c.iterations)
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  if (auto why = ib::cuda::unavailable_reason(0)) {
    // Still run: every case reports its waiver, so the output says why there are no numbers.
    fprintf(stderr, "interference-microbench: %s\n", why->c_str());
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
