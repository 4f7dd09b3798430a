// CUDA workloads: what can be checked without a GPU.
#include "harness/exec/cuda_module_api.h"
#include "kernels/cuda/accounting.h"
#include "kernels/cuda/cuda_workloads.h"
#include "kernels/cuda/lt_matmul.h"
#include "kernels/cuda/nccl_api.h"
#include "kernels/cuda/nccl_comm.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#if __has_include(<nccl.h>)
#include <nccl.h>
#define IB_HAVE_NCCL_H 1
#endif

namespace {

using nlohmann::json;

ib::Registry cuda_registry() {
  ib::Registry r;
  ib::cuda::register_workloads(r);
  return r;
}

ib::Params valid(const ib::WorkloadSpec& spec, const json& given) {
  std::string err;
  auto p = ib::validate_params(spec, given, err);
  EXPECT_TRUE(p.has_value()) << spec.name << ": " << err;
  return p.value_or(json::object());
}

std::string invalid(const ib::WorkloadSpec& spec, const json& given) {
  std::string err;
  auto p = ib::validate_params(spec, given, err);
  EXPECT_FALSE(p.has_value()) << spec.name << " accepted " << given.dump();
  return err;
}

TEST(CudaRegistry, EveryWorkloadRegisteredAsCuda) {
  const auto r = cuda_registry();
  std::set<std::string> names;
  for (const auto* s : r.all()) {
    names.insert(s->name);
    EXPECT_EQ(s->backend, ib::Backend::cuda) << s->name;
    EXPECT_FALSE(s->description.empty()) << s->name;
    EXPECT_TRUE(static_cast<bool>(s->supported)) << s->name;
    EXPECT_TRUE(static_cast<bool>(s->create)) << s->name;
    for (const auto& p : s->params) EXPECT_FALSE(p.help.empty()) << s->name << "." << p.name;
  }
  for (const char* n : {"gemm", "copy", "h2d", "latency", "serve", "allreduce", "train-step"})
    EXPECT_TRUE(names.count(n)) << "missing workload " << n;
}

// Issue 35: a tenant of allreduce may have ranks (one process per rank, each on its own GPU); no other CUDA
// workload may (the scenario refuses ranks for a workload that is not a collective).
TEST(CudaRegistry, AllreduceAloneIsACollective) {
  const auto r = cuda_registry();
  for (const auto* s : r.all()) EXPECT_EQ(s->collective, s->name == "allreduce") << s->name;
}

TEST(CudaRegistry, CoexistsWithHostWorkloadNames) {
  ib::Registry r;
  ib::cuda::register_workloads(r);
  EXPECT_EQ(r.find("host-compute"), nullptr);  // no name clash with the host family
  EXPECT_NE(r.find("gemm"), nullptr);
}

TEST(CudaRegistry, DefaultsValidateForEveryWorkload) {
  const auto r = cuda_registry();
  for (const auto* s : r.all()) {
    const auto p = valid(*s, json::object());
    for (const auto& spec : s->params) EXPECT_TRUE(p.contains(spec.name)) << s->name << "." << spec.name;
  }
}

TEST(CudaParams, GemmRejectsBadValues) {
  const auto r = cuda_registry();
  const auto& g = *r.find("gemm");
  EXPECT_EQ(invalid(g, {{"dtype", "int8"}}), "dtype: expected one of bf16, fp16, tf32, fp32, fp8, got \"int8\"");
  EXPECT_EQ(invalid(g, {{"m", 8}}), "m: expected integer in [16, 65536], got 8");
  EXPECT_EQ(invalid(g, {{"k", 1.5}}), "k: expected integer in [16, 65536], got 1.5");
  EXPECT_NE(invalid(g, {{"reps", 0}}).find("reps: expected integer in [1, 10000]"), std::string::npos);
  EXPECT_NE(invalid(g, {{"tile", 4}}).find("tile: unknown parameter of workload 'gemm'"), std::string::npos);
  const auto p = valid(g, {{"dtype", "fp8"}, {"m", 4096}});
  EXPECT_EQ(p.at("dtype"), "fp8");
  EXPECT_EQ(p.at("m"), 4096);
  EXPECT_EQ(p.at("n"), 8192);
  EXPECT_EQ(p.at("input_sets"), 0);
}

TEST(CudaParams, OtherWorkloadsRejectBadValues) {
  const auto r = cuda_registry();
  EXPECT_EQ(invalid(*r.find("copy"), {{"engine", "dma"}}), "engine: expected one of sm, ce, got \"dma\"");
  EXPECT_EQ(invalid(*r.find("copy"), {{"mib", 0}}), "mib: expected integer in [1, 65536], got 0");
  EXPECT_EQ(invalid(*r.find("h2d"), {{"direction", "p2p"}}), "direction: expected one of h2d, d2h, got \"p2p\"");
  EXPECT_EQ(invalid(*r.find("h2d"), {{"memory", "managed"}}),
            "memory: expected one of pinned, pageable, got \"managed\"");
  EXPECT_EQ(invalid(*r.find("latency"), {{"mode", "burst"}}), "mode: expected one of open, closed, got \"burst\"");
  EXPECT_EQ(invalid(*r.find("latency"), {{"load", 0}}), "load: expected number in [0.01, 2], got 0");
  EXPECT_EQ(invalid(*r.find("latency"), {{"requests", 5}}), "requests: expected integer in [10, 100000], got 5");
  EXPECT_EQ(invalid(*r.find("serve"), {{"slo_ms", -1}}), "slo_ms: expected number in [0.01, 100000], got -1");
  EXPECT_EQ(invalid(*r.find("allreduce"), {{"gpus", 0}}), "gpus: expected integer in [1, 64], got 0");
  EXPECT_EQ(invalid(*r.find("allreduce"), {{"timeout_s", "10"}}),
            "timeout_s: expected number in [0.1, 3600], got \"10\"");
  const auto& t = *r.find("train-step");
  EXPECT_EQ(invalid(t, {{"optimizer", "lamb"}}), "optimizer: expected one of adam, sgd, got \"lamb\"");
  EXPECT_EQ(invalid(t, {{"dtype", "fp16"}}), "dtype: expected one of bf16, got \"fp16\"");
  EXPECT_EQ(invalid(t, {{"steps", 0}}), "steps: expected integer in [1, 1000], got 0");
  EXPECT_EQ(invalid(t, {{"hidden", 32}}), "hidden: expected integer in [64, 16384], got 32");
  EXPECT_EQ(invalid(t, {{"layers", 65}}), "layers: expected integer in [1, 64], got 65");
  EXPECT_EQ(invalid(t, {{"gpus", 0}}), "gpus: expected integer in [1, 64], got 0");
  const auto p = valid(t, {{"hidden", 1024}});
  EXPECT_EQ(p.at("ffn"), 0);  // 0 = 4 x hidden
  EXPECT_EQ(p.at("heads"), 32);
  EXPECT_EQ(p.at("optimizer"), "adam");
}

TEST(Accounting, GemmFlopAndSets) {
  EXPECT_DOUBLE_EQ(ib::acct::gemm_flop(8192, 8192, 8192), 1099511627776.0);  // 2 * 2^39
  EXPECT_DOUBLE_EQ(ib::acct::gemm_flop(16, 32, 64), 65536.0);
  EXPECT_DOUBLE_EQ(ib::acct::gemm_flop(1000, 1, 3), 6000.0);
  using ib::acct::DType;
  // bf16 8192^3: A and B are 128 MiB each.
  EXPECT_DOUBLE_EQ(ib::acct::gemm_set_bytes(DType::bf16, 8192, 8192, 8192), 268435456.0);
  EXPECT_DOUBLE_EQ(ib::acct::gemm_set_bytes(DType::fp8, 16, 32, 64), 64.0 * 16 + 64.0 * 32);
  EXPECT_DOUBLE_EQ(ib::acct::gemm_set_bytes(DType::tf32, 16, 32, 64), 4.0 * (64 * 16 + 64 * 32));
  const double l2 = 50.0 * 1024 * 1024;
  EXPECT_EQ(ib::acct::gemm_input_sets(268435456.0, l2, 0), 2);    // already > 4 x L2, but never 1
  EXPECT_EQ(ib::acct::gemm_input_sets(4194304.0, l2, 0), 50);     // 4 MiB sets: 200 MiB = 4 x 50 MiB
  EXPECT_EQ(ib::acct::gemm_input_sets(4194305.0, l2, 0), 50);
  EXPECT_EQ(ib::acct::gemm_input_sets(4194303.0, l2, 0), 51);
  EXPECT_EQ(ib::acct::gemm_input_sets(1.0, l2, 7), 7);           // explicit request wins
}

TEST(Accounting, DtypeTable) {
  using ib::acct::DType;
  for (const char* n : {"bf16", "fp16", "tf32", "fp32", "fp8"}) {
    auto d = ib::acct::parse_dtype(n);
    ASSERT_TRUE(d.has_value()) << n;
    EXPECT_STREQ(ib::acct::dtype_name(*d), n);
  }
  EXPECT_FALSE(ib::acct::parse_dtype("int8").has_value());
  EXPECT_EQ(ib::acct::input_bytes(DType::fp8), 1u);
  EXPECT_EQ(ib::acct::output_bytes(DType::fp8), 2u);
  EXPECT_EQ(ib::acct::input_bytes(DType::tf32), 4u);
  EXPECT_EQ(ib::acct::min_compute_capability(DType::fp8), 89);
  EXPECT_EQ(ib::acct::min_compute_capability(DType::bf16), 80);
  EXPECT_EQ(ib::acct::min_compute_capability(DType::fp32), 0);
}

TEST(Accounting, CopyCountsReadPlusWritten) {
  EXPECT_DOUBLE_EQ(ib::acct::copy_bytes_read_written(1073741824.0), 2147483648.0);
  EXPECT_DOUBLE_EQ(ib::acct::copy_bytes_one_direction(1073741824.0), 1073741824.0);
}

TEST(Accounting, BusBandwidthFactorAsNcclTests) {
  EXPECT_DOUBLE_EQ(ib::acct::allreduce_busbw_factor(1), 0.0);  // not meaningful on one rank
  EXPECT_DOUBLE_EQ(ib::acct::allreduce_busbw_factor(2), 1.0);
  EXPECT_DOUBLE_EQ(ib::acct::allreduce_busbw_factor(4), 1.5);
  EXPECT_DOUBLE_EQ(ib::acct::allreduce_busbw_factor(8), 1.75);
  EXPECT_DOUBLE_EQ(ib::acct::allreduce_busbw_factor(3), 4.0 / 3.0);
}

TEST(Accounting, BusBytesCounter) {
  // counters["bus_bytes"] per allreduce = bytes x 2(n-1)/n: its rate is busbw as nccl-tests define it.
  EXPECT_DOUBLE_EQ(ib::acct::allreduce_bus_bytes(1e9, 1), 0.0);
  EXPECT_DOUBLE_EQ(ib::acct::allreduce_bus_bytes(1e9, 2), 1e9);
  EXPECT_DOUBLE_EQ(ib::acct::allreduce_bus_bytes(268435456.0, 8), 469762048.0);  // 256 MiB x 1.75
  EXPECT_DOUBLE_EQ(ib::acct::allreduce_bus_bytes(3e6, 3), 4e6);
}

TEST(Accounting, SloMetRequests) {
  const std::vector<double> lat = {0.001, 0.010, 0.0100001, std::nan(""), 0.005, 0.2};
  EXPECT_EQ(ib::acct::count_within(lat, 0.010), 3u);  // exactly at the SLO counts; NaN never does
  EXPECT_EQ(ib::acct::count_within(lat, 1.0), 5u);
  EXPECT_EQ(ib::acct::count_within(lat, 0.0), 0u);
  EXPECT_EQ(ib::acct::count_within({}, 0.01), 0u);
}

TEST(Accounting, TrainStepFlop) {
  ib::acct::TrainShape tiny;
  tiny.hidden = 64, tiny.heads = 2, tiny.seq = 16, tiny.batch = 2, tiny.ffn = 256, tiny.layers = 1;
  EXPECT_EQ(tiny.tokens(), 32);
  EXPECT_EQ(tiny.head_dim(), 32);
  // 4h^2 + 2hf = 16384 + 32768 = 49152 weights; linear forward 2 x 32 x 49152.
  EXPECT_DOUBLE_EQ(ib::acct::transformer_linear_params(64, 256), 49152.0);
  EXPECT_DOUBLE_EQ(ib::acct::train_linear_forward_flop(tiny), 3145728.0);
  // Attention: (2 s^2 d for S + 2 s^2 d for O) x batch x heads = 2 x 2 x 256 x 32 x 2 x 2.
  EXPECT_DOUBLE_EQ(ib::acct::train_attention_forward_flop(tiny), 131072.0);
  EXPECT_DOUBLE_EQ(ib::acct::train_step_flop(tiny), 9830400.0);  // 3 x (3145728 + 131072)
  tiny.layers = 3;
  EXPECT_DOUBLE_EQ(ib::acct::train_step_flop(tiny), 3 * 9830400.0);
  EXPECT_DOUBLE_EQ(ib::acct::train_params(tiny), 3 * 49152.0);

  // Defaults: h 4096, 32 heads, seq 2048 x batch 2 = 4096 tokens, ffn 16384, 2 layers.
  const ib::acct::TrainShape def;
  EXPECT_DOUBLE_EQ(ib::acct::transformer_linear_params(4096, 16384), 12.0 * 4096 * 4096);
  EXPECT_DOUBLE_EQ(ib::acct::train_linear_forward_flop(def), 1649267441664.0);   // 24 x 4096^3
  EXPECT_DOUBLE_EQ(ib::acct::train_attention_forward_flop(def), 137438953472.0);  // 4 x 2 x 2048^2 x 4096
  EXPECT_DOUBLE_EQ(ib::acct::train_step_flop(def), 10720238370816.0);
  EXPECT_DOUBLE_EQ(ib::acct::train_params(def), 402653184.0);
  EXPECT_DOUBLE_EQ(ib::acct::request_flop(16, 4096, 4), 4 * 2.0 * 16 * 4096 * 4096);
}

TEST(Accounting, TrainShapeAndMemory) {
  ib::acct::TrainShape s;
  EXPECT_FALSE(ib::acct::train_shape_error(s).has_value());
  s.heads = 3;
  ASSERT_TRUE(ib::acct::train_shape_error(s).has_value());
  EXPECT_NE(ib::acct::train_shape_error(s)->find("must divide hidden"), std::string::npos);
  s.hidden = 64, s.heads = 16;  // d = 4
  EXPECT_NE(ib::acct::train_shape_error(s).value_or("").find("multiple of 8"), std::string::npos);
  s.heads = 2, s.ffn = 100;
  EXPECT_NE(ib::acct::train_shape_error(s).value_or("").find("ffn (100)"), std::string::npos);

  ib::acct::TrainShape tiny;
  tiny.hidden = 64, tiny.heads = 2, tiny.seq = 16, tiny.batch = 2, tiny.ffn = 256, tiny.layers = 1;
  // State 49152 x (2+2+4+4+4) = 786432; saved 2 x (32 x (8x64 + 2x256) + 1024) = 67584;
  // scratch 2 x (32 x (11x64 + 256) + 1024) = 63488.
  EXPECT_DOUBLE_EQ(ib::acct::train_device_bytes(tiny, true, 0.0), 917504.0);
  EXPECT_DOUBLE_EQ(ib::acct::train_device_bytes(tiny, false, 100.0), 917504.0 - 4 * 49152.0 + 100.0);
}

TEST(Accounting, PackedOffsetsAre256ByteAlignedForBf16) {
  // train-step's blocks (QKV, out, up, down) for hidden 1032, ffn 4128: legal shapes whose first
  // block (1032 x 3096 bf16 = 6390144 B) is not a multiple of 256 B, so packed back to back the next
  // block would start only 128-byte aligned, below what cuBLASLt's algorithms assume.
  const std::size_t h = 1032, f = 4 * h;
  ASSERT_NE((h * 3 * h * 2) % 256, 0u);  // the case this guards against does occur
  std::vector<std::size_t> sizes;
  for (int layer = 0; layer < 2; ++layer)
    for (std::size_t n : {h * 3 * h, h * h, h * f, f * h}) sizes.push_back(n);
  const auto off = ib::acct::packed_offsets(sizes, 128);
  ASSERT_EQ(off.size(), sizes.size() + 1);
  EXPECT_EQ(off[0], 0u);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_EQ(off[i] * 2 % 256, 0u) << "block " << i;  // bf16 bytes
    const std::size_t prev_end = i ? off[i - 1] + sizes[i - 1] : 0;
    EXPECT_GE(off[i], prev_end) << "block " << i << " overlaps the one before";
    EXPECT_LT(off[i] - prev_end, 128u) << "block " << i << ": more padding than needed";
  }
  EXPECT_EQ(off.back(), off[sizes.size() - 1] + sizes.back());  // the end of the last block
  EXPECT_EQ(off[1], 3195136u);  // 1032 x 3096 = 3195072 rounded up to a multiple of 128

  // Already aligned sizes (the defaults, hidden 4096) pack without padding.
  const auto dense = ib::acct::packed_offsets({4096u * 12288, 4096u * 4096, 4096u * 16384}, 128);
  EXPECT_EQ(dense, (std::vector<std::size_t>{0, 50331648, 67108864, 134217728}));
  EXPECT_EQ(ib::acct::packed_offsets({}, 128), (std::vector<std::size_t>{0}));
}

// supported(): reasons that do not need a GPU.
ib::Support supported(const ib::Registry& r, const char* name, const json& given) {
  const auto* spec = r.find(name);
  EXPECT_NE(spec, nullptr);
  return spec->supported(valid(*spec, given), ib::ExecContext{0, nullptr, nullptr, {}});
}

TEST(CudaSupported, Fp8NeedsMultiplesOf16) {
  const auto s = supported(cuda_registry(), "gemm", {{"dtype", "fp8"}, {"m", 100}});
  EXPECT_FALSE(s.supported);
  EXPECT_NE(s.reason.find("multiples of 16"), std::string::npos) << s.reason;
}

TEST(CudaSupported, ServeRequestLargerThanBatch) {
  const auto s = supported(cuda_registry(), "serve", {{"max_batch", 8}, {"max_request_rows", 16}});
  EXPECT_FALSE(s.supported);
  EXPECT_NE(s.reason.find("exceeds max_batch"), std::string::npos) << s.reason;
}

TEST(CudaSupported, TrainStepShapeErrorsAreWaivedWithReason) {
  const auto r = cuda_registry();
  auto s = supported(r, "train-step", {{"hidden", 1000}, {"heads", 3}});
  EXPECT_FALSE(s.supported);
  EXPECT_NE(s.reason.find("heads (3) must divide hidden (1000)"), std::string::npos) << s.reason;
  s = supported(r, "train-step", {{"hidden", 64}, {"heads", 16}});
  EXPECT_FALSE(s.supported);
  EXPECT_NE(s.reason.find("multiple of 8"), std::string::npos) << s.reason;
  s = supported(r, "train-step", {{"seq", 20}});
  EXPECT_FALSE(s.supported);
  EXPECT_NE(s.reason.find("seq (20)"), std::string::npos) << s.reason;
}

TEST(CudaSupported, AllreduceRefusesAcrossMigInstances) {
  const char* old = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string saved = old ? old : "";
  ::setenv("CUDA_VISIBLE_DEVICES", "MIG-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee,MIG-ffffffff-bbbb-cccc-dddd-eeeeeeeeeeee", 1);
  const auto s = supported(cuda_registry(), "allreduce", {{"gpus", 2}});
  if (old) ::setenv("CUDA_VISIBLE_DEVICES", saved.c_str(), 1); else ::unsetenv("CUDA_VISIBLE_DEVICES");
  EXPECT_FALSE(s.supported);
  EXPECT_NE(s.reason.find("MIG instances"), std::string::npos) << s.reason;
}

TEST(CudaSupported, H2dHostBufferOverHalfTheAvailableMemoryIsWaived) {
  const auto r = cuda_registry();
  for (const char* mem : {"pinned", "pageable"}) {
    const auto s = supported(r, "h2d", {{"memory", mem}, {"mib", 65536}});
    if (s.reason.find("host memory") == std::string::npos)
      GTEST_SKIP() << "more than 128 GiB of host memory available here: " << s.reason;
    EXPECT_FALSE(s.supported);
    EXPECT_NE(s.reason.find("not enough host memory: h2d needs 65536 MiB of " + std::string(mem)), std::string::npos)
        << s.reason;
  }
  // A small buffer is never waived for host memory (without a GPU: for the missing GPU).
  const auto small = supported(r, "h2d", {{"mib", 1}});
  EXPECT_EQ(small.reason.find("host memory"), std::string::npos) << small.reason;
}

// Sets (or, with nullopt, unsets) an environment variable for a scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value->c_str(), 1); else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1); else ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(CudaSupported, NoGpuGivesClearReason) {
  const auto why = ib::cuda::unavailable_reason(0);
  if (!why) GTEST_SKIP() << "a CUDA GPU is present: the no-GPU reasons cannot be checked here";
  // NCCL is looked for before the GPU: make it found, so that allreduce gives the GPU's reason too.
  const ScopedEnv nccl("INTERFERENCE_BENCH_NCCL", std::string(FAKE_NCCL_DIR));
  EXPECT_NE(why->find("no CUDA GPU found"), std::string::npos) << *why;
  const auto r = cuda_registry();
  for (const auto* spec : r.all()) {
    const auto s = spec->supported(valid(*spec, json::object()), ib::ExecContext{0, nullptr, nullptr, {}});
    EXPECT_FALSE(s.supported) << spec->name;
    EXPECT_EQ(s.reason, *why) << spec->name;
  }
  EXPECT_THROW(ib::cuda::make_executor(0), ib::WorkloadError);
}

// Two ranks of a tenant on one GPU (the harness says so with IB_RANKS_SHARE_GPU=1): NCCL 2.28.9 is waived in
// NCCL's words before any GPU is touched; 2.30 and later (the fake's 2.99.1) gets NCCL_MULTI_RANK_GPU_ENABLE=1.
TEST(CudaSupported, RanksOnOneGpuNeedNccl230) {
  const ScopedEnv nccl("INTERFERENCE_BENCH_NCCL", std::string(FAKE_NCCL_DIR));
  const ScopedEnv shared("IB_RANKS_SHARE_GPU", std::string("1"));
  const ScopedEnv multi("NCCL_MULTI_RANK_GPU_ENABLE", std::nullopt);
  const auto r = cuda_registry();
  {
    const ScopedEnv old("FAKE_NCCL_VERSION", std::string("22809"));
    const auto s = supported(r, "allreduce", json::object());
    EXPECT_FALSE(s.supported);
    EXPECT_NE(s.reason.find("NCCL 2.28.9 refuses (\"Duplicate GPU detected\")"), std::string::npos) << s.reason;
    EXPECT_NE(s.reason.find("2.30"), std::string::npos) << s.reason;
    EXPECT_EQ(std::getenv("NCCL_MULTI_RANK_GPU_ENABLE"), nullptr);
  }
  const auto s = supported(r, "allreduce", json::object());
  EXPECT_EQ(s.reason.find("Duplicate GPU"), std::string::npos) << s.reason;
  ASSERT_NE(std::getenv("NCCL_MULTI_RANK_GPU_ENABLE"), nullptr);
  EXPECT_STREQ(std::getenv("NCCL_MULTI_RANK_GPU_ENABLE"), "1");
  EXPECT_EQ(ib::cuda::nccl::ranks_on_one_gpu_refusal(22999, "2.29.99", "x", false).empty(), false);
  EXPECT_EQ(ib::cuda::nccl::ranks_on_one_gpu_refusal(23000, "2.30.0", "x", false), "");
}

// Ranks on MIG instances of one GPU (mode mig gives each rank CUDA_VISIBLE_DEVICES=MIG-<uuid> and, as NCCL sees
// one GPU, IB_RANKS_SHARE_GPU=1): NCCL 2.31 or later, waived before with NCCL's words for the version loaded.
TEST(CudaSupported, RanksOnMigInstancesNeedNccl231) {
  const ScopedEnv nccl("INTERFERENCE_BENCH_NCCL", std::string(FAKE_NCCL_DIR));
  const ScopedEnv shared("IB_RANKS_SHARE_GPU", std::string("1"));
  const ScopedEnv mig("CUDA_VISIBLE_DEVICES", std::string("MIG-aaaaaaaa-0000-0000-0000-000000000002"));
  const ScopedEnv multi("NCCL_MULTI_RANK_GPU_ENABLE", std::nullopt);
  const ScopedEnv nvls("NCCL_NVLS_ENABLE", std::nullopt);
  const auto r = cuda_registry();
  const auto waived = [&](const char* version, const std::string& says) {
    const ScopedEnv v("FAKE_NCCL_VERSION", std::string(version));
    const auto s = supported(r, "allreduce", json::object());
    EXPECT_FALSE(s.supported) << version;
    EXPECT_NE(s.reason.find(says), std::string::npos) << s.reason;
    EXPECT_NE(s.reason.find("2.31 or later"), std::string::npos) << s.reason;
    EXPECT_EQ(std::getenv("NCCL_MULTI_RANK_GPU_ENABLE"), nullptr) << version;
  };
  waived("22809", "NCCL 2.28.9 refuses (\"Duplicate GPU detected\")");
  waived("23007", "NCCL 2.30.7 refuses (\"Multiple Ranks are using the same GPU/Partition\")");
  {
    const ScopedEnv v("FAKE_NCCL_VERSION", std::string("23102"));
    const ScopedEnv on("NCCL_NVLS_ENABLE", std::string("1"));
    const auto s = supported(r, "allreduce", json::object());
    EXPECT_NE(s.reason.find("NCCL_NVLS_ENABLE=1 is set"), std::string::npos) << s.reason;
    EXPECT_EQ(std::getenv("NCCL_MULTI_RANK_GPU_ENABLE"), nullptr);
  }
  const ScopedEnv v("FAKE_NCCL_VERSION", std::string("23102"));
  const auto s = supported(r, "allreduce", json::object());
  EXPECT_EQ(s.reason.find("refuses"), std::string::npos) << s.reason;
  ASSERT_NE(std::getenv("NCCL_MULTI_RANK_GPU_ENABLE"), nullptr);
  EXPECT_STREQ(std::getenv("NCCL_MULTI_RANK_GPU_ENABLE"), "1");
  EXPECT_EQ(ib::cuda::nccl::ranks_on_one_gpu_refusal(23099, "2.30.99", "x", true).empty(), false);
  EXPECT_EQ(ib::cuda::nccl::ranks_on_one_gpu_refusal(23100, "2.31.0", "x", true), "");
  EXPECT_EQ(ib::cuda::nccl::nvls_refusal("2", "x"), "");
}

TEST(CudaSupported, BadDeviceIndex) {
  const auto why = ib::cuda::unavailable_reason(1000);
  ASSERT_TRUE(why.has_value());
  EXPECT_FALSE(why->empty());
}

TEST(CudaParams, GemmLayoutAlgoAndCopyKernel) {
  const auto r = cuda_registry();
  const auto& g = *r.find("gemm");
  auto p = valid(g, json::object());
  EXPECT_EQ(p.at("layout"), "tn");
  EXPECT_EQ(p.at("algo"), "auto");
  EXPECT_EQ(valid(g, {{"layout", "nn"}, {"algo", "id=1,tile=2,stages=3,splitk=1,reduction=0,swizzle=0,custom=0,"
                                                   "inner=0,cluster=0"}}).at("layout"), "nn");
  EXPECT_EQ(invalid(g, {{"layout", "nt"}}), "layout: expected one of tn, nn, got \"nt\"");
  const auto& c = *r.find("copy");
  EXPECT_EQ(valid(c, json::object()).at("kernel"), "v4");  // the default stays until the H200 says otherwise
  for (const char* k : {"v8", "v4-stream", "v8-stream", "v4-b512", "v8-b512", "v4-stream-b512", "v8-stream-b512"})
    EXPECT_EQ(valid(c, {{"kernel", k}}).at("kernel"), k);
  EXPECT_NE(invalid(c, {{"kernel", "v16"}}).find("kernel: expected one of v4, v8,"), std::string::npos);
}

TEST(CudaSupported, Fp8NeedsLayoutTn) {
  const auto s = supported(cuda_registry(), "gemm", {{"dtype", "fp8"}, {"layout", "nn"}});
  EXPECT_FALSE(s.supported);
  EXPECT_NE(s.reason.find("fp8 GEMM needs layout tn"), std::string::npos) << s.reason;
}

TEST(LtAlgoConfig, TextRoundTripInAnyOrder) {
  ib::cuda::LtAlgoConfig c;
  c.id = 21, c.tile = 18, c.stages = 35, c.splitk = 1, c.reduction = 0, c.swizzle = 1, c.custom = 0, c.inner = 3,
  c.cluster = 2;
  const std::string text = ib::cuda::to_text(c);
  EXPECT_EQ(text, "id=21,tile=18,stages=35,splitk=1,reduction=0,swizzle=1,custom=0,inner=3,cluster=2");
  std::string err;
  auto back = ib::cuda::parse_algo_config(text, err);
  ASSERT_TRUE(back.has_value()) << err;
  EXPECT_TRUE(*back == c);
  back = ib::cuda::parse_algo_config("cluster=2,inner=3,custom=0,swizzle=1,reduction=0,splitk=1,stages=35,tile=18,id=21",
                                     err);
  ASSERT_TRUE(back.has_value()) << err;
  EXPECT_TRUE(*back == c);
}

TEST(LtAlgoConfig, MalformedTextIsRefusedWithTheReason) {
  const std::string ok = "id=21,tile=18,stages=35,splitk=1,reduction=0,swizzle=1,custom=0,inner=3,cluster=2";
  auto why = [](const std::string& text) {
    std::string err;
    EXPECT_FALSE(ib::cuda::parse_algo_config(text, err).has_value()) << text;
    return err;
  };
  EXPECT_NE(why("auto").find("expected key=integer, got \"auto\""), std::string::npos);
  EXPECT_NE(why(ok.substr(0, ok.rfind(','))).find("missing \"cluster=\""), std::string::npos);
  EXPECT_NE(why(ok + ",id=3").find("\"id\" given twice"), std::string::npos);
  EXPECT_NE(why(ok + ",warp=4").find("unknown key"), std::string::npos);
  EXPECT_NE(why("id=21,tile=x,stages=35,splitk=1,reduction=0,swizzle=1,custom=0,inner=3,cluster=2").find("tile=x"),
            std::string::npos);
  EXPECT_NE(why("id=21,tile=18,stages=35,splitk=1,reduction=0,swizzle=1,custom=0,inner=70000,cluster=2")
                .find("\"inner\" out of range: 70000"), std::string::npos);
  EXPECT_NE(why("id=21,tile=-1,stages=35,splitk=1,reduction=0,swizzle=1,custom=0,inner=3,cluster=2")
                .find("\"tile\" out of range: -1"), std::string::npos);
}

// ---- NCCL, loaded at run time (kernels/cuda/nccl_api.h) ----

namespace fs = std::filesystem;

// A fresh folder for one test under the system's temporary folder, removed with the object.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& leaf)
      : path_((fs::temp_directory_path() / ("ib_nccl_test_" + std::to_string(::getpid()) + "_" + leaf)).string()) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Copies the complete fake libnccl.so.2 to DIR/libnccl.so.2 (creating DIR); returns the file.
std::string place_fake_nccl(const std::string& dir) {
  fs::create_directories(dir);
  const std::string to = dir + "/libnccl.so.2";
  fs::copy_file(std::string(FAKE_NCCL_DIR) + "/libnccl.so.2", to, fs::copy_options::overwrite_existing);
  return to;
}

std::string real(const std::string& p) { return fs::canonical(p).string(); }

TEST(NcclLoader, AnOverrideFolderWithoutTheLibraryFindsNothingElse) {
  ib::cuda::nccl::SearchInputs in;
  const ScratchDir empty("empty");
  in.override_path = empty.path();
  in.cuda_home = "/usr/local/cuda";  // would hold NCCL here: the override must keep it out
  const auto plan = ib::cuda::nccl::search_plan(in);
  EXPECT_FALSE(plan.by_name);
  EXPECT_TRUE(plan.candidates.empty());
  EXPECT_EQ(plan.folders, std::vector<std::string>{in.override_path});
  const auto lib = ib::cuda::nccl::Library::load(plan);
  EXPECT_FALSE(lib.ok());
  EXPECT_EQ(lib.error(), "no libnccl.so.2 in 1 folder(s) searched (" + in.override_path + ")");
  EXPECT_EQ(lib.describe(), "libnccl.so.2 not found: " + lib.error());
}

TEST(NcclLoader, LoadsTheOverrideAndResolvesEveryFunction) {
  for (const std::string& given : {std::string(FAKE_NCCL_DIR), std::string(FAKE_NCCL_DIR) + "/libnccl.so.2"}) {
    ib::cuda::nccl::SearchInputs in;
    in.override_path = given;
    const auto plan = ib::cuda::nccl::search_plan(in);
    ASSERT_EQ(plan.candidates.size(), 1u) << given;
    const auto lib = ib::cuda::nccl::Library::load(plan);
    ASSERT_TRUE(lib.ok()) << lib.error();
    EXPECT_EQ(lib.version(), 29901);
    EXPECT_EQ(lib.version_text(), "2.99.1");
    EXPECT_EQ(lib.path(), real(std::string(FAKE_NCCL_DIR) + "/libnccl.so.2"));
    EXPECT_EQ(lib.describe(), "NCCL 2.99.1 from " + lib.path() + " (found in " + FAKE_NCCL_DIR + ")");
    const auto& api = lib.api();
    for (const void* fn : {reinterpret_cast<const void*>(api.get_version), reinterpret_cast<const void*>(api.get_error_string),
                           reinterpret_cast<const void*>(api.get_last_error), reinterpret_cast<const void*>(api.comm_init_all),
                           reinterpret_cast<const void*>(api.comm_destroy), reinterpret_cast<const void*>(api.comm_abort),
                           reinterpret_cast<const void*>(api.group_start), reinterpret_cast<const void*>(api.group_end),
                           reinterpret_cast<const void*>(api.all_reduce), reinterpret_cast<const void*>(api.get_unique_id),
                           reinterpret_cast<const void*>(api.comm_init_rank_config),
                           reinterpret_cast<const void*>(api.comm_get_async_error),
                           reinterpret_cast<const void*>(api.comm_finalize)})
      EXPECT_NE(fn, nullptr);
    // The fake has no CUDA devices: its ncclCommInitAll answers ncclInvalidUsage, which init_all reports with
    // NCCL's last error.
    try {
      ib::cuda::nccl::init_all(lib, {0});
      ADD_FAILURE() << "init_all did not throw";
    } catch (const ib::WorkloadError& e) {
      EXPECT_NE(std::string(e.what()).find("ncclInvalidUsage (fake NCCL: ncclCommInitAll needs CUDA devices"), std::string::npos)
          << e.what();
    }
  }
}

TEST(NcclLoader, ALibraryWithoutAFunctionIsRefusedWithItsName) {
  ib::cuda::nccl::SearchInputs in;
  in.override_path = FAKE_NCCL_INCOMPLETE_DIR;
  const auto lib = ib::cuda::nccl::Library::load(ib::cuda::nccl::search_plan(in));
  EXPECT_FALSE(lib.ok());
  EXPECT_NE(lib.error().find("no function ncclAllReduce in"), std::string::npos) << lib.error();
}

TEST(NcclLoader, SearchesPythonSiteFoldersInOrder) {
  const ScratchDir scratch("sites");
  const std::string& root = scratch.path();
  // A venv, the prefix of a python3 on PATH, and the user site, each with an NVIDIA or torch wheel.
  const std::string venv = place_fake_nccl(root + "/venv/lib/python3.11/site-packages/torch/lib");
  const std::string on_path = place_fake_nccl(root + "/prefix/lib/python3.12/dist-packages/nvidia/nccl/lib");
  fs::create_directories(root + "/prefix/bin");
  std::ofstream(root + "/prefix/bin/python3") << "#!/bin/sh\n";
  fs::permissions(root + "/prefix/bin/python3", fs::perms::owner_all);
  const std::string user = place_fake_nccl(root + "/home/.local/lib/python3.12/site-packages/nvidia/nccl/lib");
  place_fake_nccl(root + "/unrelated/lib/python3.12/site-packages/nvidia/nccl/lib");  // not a searched prefix
  ib::cuda::nccl::SearchInputs in;
  in.virtual_env = root + "/venv";
  in.path = "/nonexistent:" + root + "/prefix/bin";
  in.home = root + "/home";
  const auto plan = ib::cuda::nccl::search_plan(in);
  EXPECT_TRUE(plan.by_name);  // LD_LIBRARY_PATH and ld.so.cache first, as ever
  auto at = [&](const std::string& f) {
    for (std::size_t i = 0; i < plan.candidates.size(); ++i)
      if (real(plan.candidates[i]) == real(f)) return static_cast<long>(i);
    return -1L;
  };
  ASSERT_GE(at(venv), 0);
  ASSERT_GT(at(on_path), at(venv));
  ASSERT_GT(at(user), at(on_path));
  for (const auto& c : plan.candidates) EXPECT_EQ(c.find("/unrelated/"), std::string::npos) << c;
  // Loaded from a candidate: the record says where.
  ib::cuda::nccl::SearchPlan only;
  only.by_name = false;
  only.candidates = {user};
  const auto lib = ib::cuda::nccl::Library::load(only);
  ASSERT_TRUE(lib.ok()) << lib.error();
  EXPECT_EQ(lib.path(), real(user));
  EXPECT_EQ(lib.found_by(), "found in " + user.substr(0, user.rfind('/')));
}

TEST(NcclLoader, TypesMatchNcclHeaderWhereInstalled) {
#ifdef IB_HAVE_NCCL_H
  using ib::cuda::nccl::DataType, ib::cuda::nccl::RedOp, ib::cuda::nccl::Result;
  static_assert(static_cast<int>(Result::success) == ncclSuccess);
  static_assert(static_cast<int>(Result::invalid_usage) == ncclInvalidUsage);
  static_assert(static_cast<int>(Result::in_progress) == ncclInProgress);
  static_assert(static_cast<int>(DataType::float32) == ncclFloat32);
  static_assert(static_cast<int>(DataType::bfloat16) == ncclBfloat16);
  static_assert(static_cast<int>(RedOp::sum) == ncclSum);
  static_assert(sizeof(Result) == sizeof(ncclResult_t) && sizeof(DataType) == sizeof(ncclDataType_t));
  static_assert(std::is_same_v<ib::cuda::nccl::Comm, ncclComm_t>);
  static_assert(static_cast<int>(DataType::int32) == ncclInt32 && static_cast<int>(RedOp::min) == ncclMin);
  // A tenant with ranks (issue 35): the unique id and the 2.17 prefix of ncclConfig_t, field by field.
  static_assert(sizeof(ib::cuda::nccl::UniqueId) == sizeof(ncclUniqueId));
  using Cfg = ib::cuda::nccl::ConfigV21700;
  static_assert(offsetof(Cfg, size) == offsetof(ncclConfig_t, size) && offsetof(Cfg, magic) == offsetof(ncclConfig_t, magic));
  static_assert(offsetof(Cfg, version) == offsetof(ncclConfig_t, version));
  static_assert(offsetof(Cfg, blocking) == offsetof(ncclConfig_t, blocking));
  static_assert(offsetof(Cfg, max_ctas) == offsetof(ncclConfig_t, maxCTAs));
  static_assert(offsetof(Cfg, net_name) == offsetof(ncclConfig_t, netName));
  static_assert(offsetof(Cfg, split_share) == offsetof(ncclConfig_t, splitShare));
  static_assert(Cfg::kUndefined == NCCL_CONFIG_UNDEF_INT);
  const ncclConfig_t theirs = NCCL_CONFIG_INITIALIZER;
  EXPECT_EQ(Cfg{}.magic, theirs.magic);
  EXPECT_EQ(ib::cuda::nccl::result_name(static_cast<Result>(ncclRemoteError)), "ncclRemoteError");
#else
  GTEST_SKIP() << "no nccl.h here: the declared ABI is checked where NCCL's header is installed";
#endif
}

TEST(NcclLoader, TheRealLibraryWhereInstalled) {
  const ScopedEnv no_override("INTERFERENCE_BENCH_NCCL", std::nullopt);
  const auto lib = ib::cuda::nccl::Library::load_from_environment();
  if (!lib.ok()) GTEST_SKIP() << "no NCCL on this machine: " << lib.describe();
  EXPECT_GE(lib.version(), 21000) << lib.describe();
  EXPECT_NE(lib.path().find("libnccl.so"), std::string::npos) << lib.describe();
  EXPECT_NE(lib.api().get_last_error, nullptr) << "NCCL >= 2.13 has ncclGetLastError";
}

TEST(NcclWaiver, AllreduceAndMultiGpuTrainStepAreWaivedWithoutNccl) {
  const ScratchDir none("none");
  const std::string& empty = none.path();
  const ScopedEnv nccl("INTERFERENCE_BENCH_NCCL", empty);
  const auto r = cuda_registry();
  auto s = supported(r, "allreduce", json::object());
  EXPECT_FALSE(s.supported);
  EXPECT_EQ(s.reason.rfind("allreduce needs NCCL, loaded at run time: libnccl.so.2 not found: no libnccl.so.2 in "
                           "1 folder(s) searched (" + empty + ")", 0), 0u) << s.reason;
  EXPECT_NE(s.reason.find("INTERFERENCE_BENCH_NCCL"), std::string::npos) << s.reason;
  s = supported(r, "train-step", {{"gpus", 2}});
  EXPECT_FALSE(s.supported);
  EXPECT_EQ(s.reason.rfind("train-step with gpus > 1 needs NCCL", 0), 0u) << s.reason;
  // Everything that does not need NCCL is decided as before (without a GPU: for the missing GPU).
  for (const char* w : {"gemm", "copy", "h2d", "latency", "serve", "train-step"}) {
    s = supported(r, w, json::object());
    EXPECT_EQ(s.reason.find("NCCL"), std::string::npos) << w << ": " << s.reason;
  }
}

TEST(NcclWaiver, PlacementAndTheMpsEnvironment) {
  const ScratchDir mps("mps");
  const std::string& pipes = mps.path();
  const ScopedEnv pipe("CUDA_MPS_PIPE_DIRECTORY", pipes);
  const ScopedEnv visible("CUDA_VISIBLE_DEVICES", std::string("0"));
  const ScopedEnv cumem("NCCL_CUMEM_ENABLE", std::nullopt);
  auto where = ib::cuda::nccl::placement_from_environment();
  EXPECT_FALSE(where.mps_client);  // an empty pipe folder: no daemon answers, CUDA runs without MPS
  EXPECT_FALSE(where.mig_instance);
  EXPECT_FALSE(ib::cuda::nccl::prepare_environment(where));
  EXPECT_EQ(std::getenv("NCCL_CUMEM_ENABLE"), nullptr);
  std::ofstream(pipes + "/control") << "";  // stands for the daemon's control pipe
  where = ib::cuda::nccl::placement_from_environment();
  EXPECT_TRUE(where.mps_client);
  EXPECT_TRUE(ib::cuda::nccl::prepare_environment(where));
  ASSERT_NE(std::getenv("NCCL_CUMEM_ENABLE"), nullptr);
  EXPECT_STREQ(std::getenv("NCCL_CUMEM_ENABLE"), "0");
  {
    const ScopedEnv user_choice("NCCL_CUMEM_ENABLE", std::string("1"));
    EXPECT_FALSE(ib::cuda::nccl::prepare_environment(where));  // the caller's own setting stays
    EXPECT_STREQ(std::getenv("NCCL_CUMEM_ENABLE"), "1");
  }
  const ScopedEnv mig("CUDA_VISIBLE_DEVICES", std::string("MIG-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"));
  EXPECT_TRUE(ib::cuda::nccl::placement_from_environment().mig_instance);
}

}  // namespace
