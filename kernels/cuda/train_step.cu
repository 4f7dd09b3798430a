// train-step: one synthetic transformer-layer training step, data-parallel over `gpus` GPUs.
//
// Model (per layer, bf16 weights and activations, fp32 accumulation, no biases, layernorm without
// affine parameters), T = seq x batch tokens, activations stored hidden x T column-major (each
// token's features contiguous), weights stored in x out (Y = W^T X):
//   ln1 = LN(x); qkv = Wqkv^T ln1 (3h); per (sequence, head): S = K^T Q / sqrt(d), P = softmax over
//   keys, O = V P (cuBLAS strided-batched GEMMs over the heads); x_mid = x + Wo^T O;
//   ln2 = LN(x_mid); up = Wup^T ln2 (f); act = GELU(up) (tanh form); x_next = x_mid + Wdown^T act.
// Backward from a fixed synthetic loss gradient dL/dx_out: for every forward GEMM a dgrad
// (dX = W dY) and a wgrad (dW = X dY^T) GEMM (cuBLASLt), the attention products dV = dO P^T,
// dP = V^T dO, dQ = K dS / sqrt(d), dK = Q dS^T / sqrt(d), softmax/GELU/layernorm backward kernels.
// Then, with gpus > 1, an in-place NCCL sum-allreduce of the bf16 gradients (one rank per GPU, one
// process, ncclCommInitAll, the ranks' calls in one group, like `allreduce`), and the optimizer over
// every parameter: Adam (or SGD with momentum) on fp32 master weights, the bf16 weights rewritten
// from them. The gradients are averaged (scaled by 1/gpus) in the optimizer.
//
// Work per sample: steps x gpus x acct::train_step_flop (GEMM FLOP only; see accounting.h).
// counters["steps"] = steps per sample, so its rate is steps/s.
//
// Correctness (setup), on a tiny model (h = 64, 2 heads, seq 16, batch 2, ffn 256, one layer) run
// through the same code: each forward stage (ln1, qkv, P, O, x_mid, ln2, up, act, x_next) against a
// float64 CPU reference computed from that stage's GPU inputs, the FFN-down dgrad (with GELU
// backward) and wgrad likewise, and the first optimizer step against its closed form
// (Adam from zero state: w' = w - lr g / (|g| + eps); SGD: w' = w - lr g, m = g). Then the real
// model runs one step and its output, gradients and weights must be finite.
// Multi-GPU: no watchdog on the collective (unlike `allreduce`); a hung step is caught by the
// harness's worker timeout. NCCL is loaded at run time (nccl_api.h) and only when gpus > 1: one GPU
// runs without it, and without it gpus > 1 is waived with the places searched.
#include "kernels/cuda/accounting.h"
#include "kernels/cuda/device_info.h"
#include "kernels/cuda/device_util.cuh"
#include "kernels/cuda/lt_matmul.h"
#include "kernels/cuda/nccl_comm.h"
#include "kernels/cuda/workload_registration.h"

#include <cublas_v2.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace ib::cuda {
namespace {

using bf16 = __nv_bfloat16;
using acct::TrainShape;

constexpr float kLnEps = 1e-5f;
constexpr float kLr = 1e-5f;  // small: thousands of steps must not drive the synthetic model anywhere odd
constexpr float kBeta1 = 0.9f, kBeta2 = 0.999f, kAdamEps = 1e-8f, kMomentum = 0.9f;
constexpr unsigned kRowThreads = 256;
// Weight/gradient blocks start on 256 bytes (128 bf16): the pointer alignment cuBLASLt's algorithms
// assume by default (CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*_BYTES). Rounding keeps the fast
// algorithms that a smaller declared alignment would exclude.
constexpr std::size_t kBlockAlignElems = 256 / sizeof(__nv_bfloat16);
constexpr float kGeluK = 0.7978845608028654f;  // sqrt(2/pi)

// ---- kernels ---------------------------------------------------------------------------------

template <bool kMax>
__device__ float block_reduce(float v) {
  __shared__ float sh[32];
  for (int o = 16; o > 0; o >>= 1) {
    const float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = kMax ? fmaxf(v, w) : v + w;
  }
  const unsigned lane = threadIdx.x & 31u, wid = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
  __syncthreads();  // the previous call's readers of sh[0] are done
  if (lane == 0) sh[wid] = v;
  __syncthreads();
  if (wid == 0) {
    v = lane < nw ? sh[lane] : (kMax ? -INFINITY : 0.0f);
    for (int o = 16; o > 0; o >>= 1) {
      const float w = __shfl_xor_sync(0xffffffffu, v, o);
      v = kMax ? fmaxf(v, w) : v + w;
    }
    if (lane == 0) sh[0] = v;
  }
  __syncthreads();
  return sh[0];
}

// Row statistics of a layernorm row (no affine): mean and 1/sqrt(var + eps), two passes.
__device__ void row_stats(const bf16* x, int n, float& mean, float& rstd) {
  float s = 0.0f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s += __bfloat162float(x[i]);
  mean = block_reduce<false>(s) / n;
  float q = 0.0f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const float d = __bfloat162float(x[i]) - mean;
    q += d * d;
  }
  rstd = rsqrtf(block_reduce<false>(q) / n + kLnEps);
}

// y = (x - mean) * rstd per row of n (one block per row, grid-stride over rows).
__global__ void layernorm_fwd_kernel(const bf16* x, bf16* y, int n, std::size_t rows) {
  for (std::size_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const bf16* xr = x + r * n;
    bf16* yr = y + r * n;
    float mean, rstd;
    row_stats(xr, n, mean, rstd);
    for (int i = threadIdx.x; i < n; i += blockDim.x) yr[i] = __float2bfloat16_rn((__bfloat162float(xr[i]) - mean) * rstd);
  }
}

// dx = rstd (dy - mean(dy) - xhat mean(dy xhat)) + dres (the residual branch's gradient).
__global__ void layernorm_bwd_kernel(const bf16* x, const bf16* dy, const bf16* dres, bf16* dx, int n,
                                     std::size_t rows) {
  for (std::size_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const bf16* xr = x + r * n;
    const bf16* dyr = dy + r * n;
    float mean, rstd;
    row_stats(xr, n, mean, rstd);
    float sdy = 0.0f, sdyx = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
      const float g = __bfloat162float(dyr[i]);
      sdy += g;
      sdyx += g * (__bfloat162float(xr[i]) - mean) * rstd;
    }
    const float mdy = block_reduce<false>(sdy) / n;
    const float mdyx = block_reduce<false>(sdyx) / n;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
      const float xhat = (__bfloat162float(xr[i]) - mean) * rstd;
      const float g = rstd * (__bfloat162float(dyr[i]) - mdy - xhat * mdyx);
      dx[r * n + i] = __float2bfloat16_rn(g + __bfloat162float(dres[r * n + i]));
    }
  }
}

// In place: each row of n becomes softmax(row).
__global__ void softmax_fwd_kernel(bf16* p, int n, std::size_t rows) {
  for (std::size_t r = blockIdx.x; r < rows; r += gridDim.x) {
    bf16* pr = p + r * n;
    float m = -INFINITY;
    for (int i = threadIdx.x; i < n; i += blockDim.x) m = fmaxf(m, __bfloat162float(pr[i]));
    m = block_reduce<true>(m);
    float s = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) s += __expf(__bfloat162float(pr[i]) - m);
    const float inv = 1.0f / block_reduce<false>(s);
    for (int i = threadIdx.x; i < n; i += blockDim.x) pr[i] = __float2bfloat16_rn(__expf(__bfloat162float(pr[i]) - m) * inv);
  }
}

// In place: dp becomes dS = P (dP - sum(P dP)) per row.
__global__ void softmax_bwd_kernel(const bf16* p, bf16* dp, int n, std::size_t rows) {
  for (std::size_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const bf16* pr = p + r * n;
    bf16* dr = dp + r * n;
    float dot = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) dot += __bfloat162float(pr[i]) * __bfloat162float(dr[i]);
    dot = block_reduce<false>(dot);
    for (int i = threadIdx.x; i < n; i += blockDim.x)
      dr[i] = __float2bfloat16_rn(__bfloat162float(pr[i]) * (__bfloat162float(dr[i]) - dot));
  }
}

__host__ __device__ inline float gelu(float x) {
  return 0.5f * x * (1.0f + tanhf(kGeluK * (x + 0.044715f * x * x * x)));
}
__host__ __device__ inline float gelu_grad(float x) {
  const float th = tanhf(kGeluK * (x + 0.044715f * x * x * x));
  return 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * kGeluK * (1.0f + 3.0f * 0.044715f * x * x);
}

__global__ void gelu_fwd_kernel(const bf16* x, bf16* y, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    y[i] = __float2bfloat16_rn(gelu(__bfloat162float(x[i])));
}

// In place: d *= gelu'(x).
__global__ void gelu_bwd_kernel(const bf16* x, bf16* d, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    d[i] = __float2bfloat16_rn(__bfloat162float(d[i]) * gelu_grad(__bfloat162float(x[i])));
}

__global__ void add_kernel(const bf16* a, const bf16* b, bf16* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    out[i] = __float2bfloat16_rn(__bfloat162float(a[i]) + __bfloat162float(b[i]));
}

__global__ void to_bf16_kernel(const float* in, bf16* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    out[i] = __float2bfloat16_rn(in[i]);
}

// Adam on fp32 master weights; c1 = 1 - beta1^t, c2 = 1 - beta2^t; g scaled by gscale (1/ranks).
__global__ void adam_kernel(float* master, float* m, float* v, const bf16* grad, bf16* w, std::size_t n, float lr,
                            float c1, float c2, float gscale) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float g = __bfloat162float(grad[i]) * gscale;
    const float mi = kBeta1 * m[i] + (1.0f - kBeta1) * g;
    const float vi = kBeta2 * v[i] + (1.0f - kBeta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    const float p = master[i] - lr * (mi / c1) / (sqrtf(vi / c2) + kAdamEps);
    master[i] = p;
    w[i] = __float2bfloat16_rn(p);
  }
}

// SGD with momentum: m = mu m + g; w -= lr m.
__global__ void sgd_kernel(float* master, float* m, const bf16* grad, bf16* w, std::size_t n, float lr, float gscale) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float mi = kMomentum * m[i] + __bfloat162float(grad[i]) * gscale;
    m[i] = mi;
    const float p = master[i] - lr * mi;
    master[i] = p;
    w[i] = __float2bfloat16_rn(p);
  }
}

unsigned row_grid(std::size_t rows) { return static_cast<unsigned>(rows < (1u << 20) ? rows : (1u << 20)); }

// ---- one replica of the model on one GPU ------------------------------------------------------

enum Linear { kQkv = 0, kOut = 1, kUp = 2, kDown = 3 };

class CublasHandle {
 public:
  CublasHandle() { IB_CHECK(cublasCreate(&h_)); }
  ~CublasHandle() {
    if (h_) cublasDestroy(h_);
  }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return h_; }

 private:
  cublasHandle_t h_ = nullptr;
};

struct LayerActs {
  DeviceBuffer x, ln1, qkv, probs, ctx, xmid, ln2, up, act;  // x: this layer's input
};

class Replica {
 public:
  // Allocates and initialises everything on `device` (made current); work is enqueued on `stream`.
  Replica(const TrainShape& sh, bool adam, int device, cudaStream_t stream, std::uint64_t data_seed)
      : sh_(sh), adam_(adam), device_(device), stream_(stream) {
    IB_CHECK(cudaSetDevice(device_));
    const std::int64_t h = sh_.hidden, f = sh_.ffn;
    in_[kQkv] = h, out_[kQkv] = 3 * h;
    in_[kOut] = h, out_[kOut] = h;
    in_[kUp] = h, out_[kUp] = f;
    in_[kDown] = f, out_[kDown] = h;
    std::vector<std::size_t> sizes;
    for (int l = 0; l < sh_.layers; ++l)
      for (int g = 0; g < 4; ++g) sizes.push_back(static_cast<std::size_t>(in_[g] * out_[g]));
    const std::vector<std::size_t> off = acct::packed_offsets(sizes, kBlockAlignElems);
    for (int l = 0; l < sh_.layers; ++l)
      for (int g = 0; g < 4; ++g) offset_[l].push_back(off[4 * l + g]);
    // Padding included (under 128 elements per block, not in acct::train_device_bytes): it is
    // zero in every buffer, so the optimizer and the allreduce leave it zero and it stays finite.
    nparams_ = off.back();
    const std::size_t t = static_cast<std::size_t>(sh_.tokens());
    const std::size_t hs = static_cast<std::size_t>(h), fs = static_cast<std::size_t>(f);
    const std::size_t probs = static_cast<std::size_t>(sh_.batch * sh_.heads) * sh_.seq * sh_.seq;

    w_ = DeviceBuffer(nparams_ * sizeof(bf16));
    grad_ = DeviceBuffer(nparams_ * sizeof(bf16));
    master_ = DeviceBuffer(nparams_ * sizeof(float));
    m_ = DeviceBuffer(nparams_ * sizeof(float));
    if (adam_) v_ = DeviceBuffer(nparams_ * sizeof(float));
    // Weights: uniform in +-1/sqrt(fan_in), identical on every replica (data parallel); padding 0.
    IB_CHECK(cudaMemsetAsync(master_.get(), 0, master_.bytes(), stream_));
    for (int l = 0; l < sh_.layers; ++l)
      for (int g = 0; g < 4; ++g)
        fill_uniform(master_.as<float>() + offset_[l][g], static_cast<std::size_t>(in_[g] * out_[g]),
                     7000 + 4 * l + g, 1.0f / std::sqrt(static_cast<float>(in_[g])), stream_);
    to_bf16_kernel<<<grid_for(nparams_), 256, 0, stream_>>>(master_.as<float>(), w_.as<bf16>(), nparams_);
    IB_CHECK_LAUNCH();
    IB_CHECK(cudaMemsetAsync(m_.get(), 0, m_.bytes(), stream_));
    if (adam_) IB_CHECK(cudaMemsetAsync(v_.get(), 0, v_.bytes(), stream_));
    // Every gradient block NaN-poisoned (each must be overwritten by its wgrad GEMM), the padding 0.
    IB_CHECK(cudaMemsetAsync(grad_.get(), 0, grad_.bytes(), stream_));
    for (int l = 0; l < sh_.layers; ++l)
      for (int g = 0; g < 4; ++g) {
        const std::size_t bytes = static_cast<std::size_t>(in_[g] * out_[g]) * sizeof(bf16);
        IB_CHECK(cudaMemsetAsync(G(l, static_cast<Linear>(g)), 0xFF, bytes, stream_));
      }

    for (int l = 0; l < sh_.layers; ++l) {
      LayerActs a;
      a.x = DeviceBuffer(hs * t * sizeof(bf16));
      a.ln1 = DeviceBuffer(hs * t * sizeof(bf16));
      a.qkv = DeviceBuffer(3 * hs * t * sizeof(bf16));
      a.probs = DeviceBuffer(probs * sizeof(bf16));
      a.ctx = DeviceBuffer(hs * t * sizeof(bf16));
      a.xmid = DeviceBuffer(hs * t * sizeof(bf16));
      a.ln2 = DeviceBuffer(hs * t * sizeof(bf16));
      a.up = DeviceBuffer(fs * t * sizeof(bf16));
      a.act = DeviceBuffer(fs * t * sizeof(bf16));
      acts_.push_back(std::move(a));
    }
    out_x_ = DeviceBuffer(hs * t * sizeof(bf16));
    loss_grad_ = DeviceBuffer(hs * t * sizeof(bf16));
    tmp_ = DeviceBuffer(hs * t * sizeof(bf16));
    for (auto& d : dx_) d = DeviceBuffer(hs * t * sizeof(bf16));
    dxmid_ = DeviceBuffer(hs * t * sizeof(bf16));
    dln_ = DeviceBuffer(hs * t * sizeof(bf16));
    dctx_ = DeviceBuffer(hs * t * sizeof(bf16));
    dqkv_ = DeviceBuffer(3 * hs * t * sizeof(bf16));
    dact_ = DeviceBuffer(fs * t * sizeof(bf16));
    dprobs_ = DeviceBuffer(probs * sizeof(bf16));
    workspace_ = DeviceBuffer(kLtWorkspaceBytes);
    fill_uniform(acts_[0].x.as<bf16>(), hs * t, data_seed, 1.0f, stream_);
    fill_uniform(loss_grad_.as<bf16>(), hs * t, data_seed + 1, 1.0f, stream_);

    for (int g = 0; g < 4; ++g) {
      const std::int64_t in = in_[g], out = out_[g], tk = sh_.tokens();
      fwd_[g] = std::make_unique<LtMatmul>(lt_.get(), acct::DType::bf16, true, false, out, tk, in, kLtWorkspaceBytes);
      dgrad_[g] = std::make_unique<LtMatmul>(lt_.get(), acct::DType::bf16, false, false, in, tk, out, kLtWorkspaceBytes);
      wgrad_[g] = std::make_unique<LtMatmul>(lt_.get(), acct::DType::bf16, false, true, in, out, tk, kLtWorkspaceBytes);
    }
    IB_CHECK(cublasSetStream(blas_.get(), stream_));
    IB_CHECK(cudaStreamSynchronize(stream_));
  }
  // The members (cuBLAS and cuBLASLt handles, buffers) are destroyed after this body and belong to
  // this replica's device, which with several GPUs is not necessarily the current one. Best effort:
  // a destructor cannot report an error, and one here was already reported by an earlier call.
  ~Replica() { (void)cudaSetDevice(device_); }
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }
  std::size_t nparams() const { return nparams_; }
  bf16* grads() const { return grad_.as<bf16>(); }

  // Enqueues the forward and backward passes (device made current).
  void forward_backward() {
    IB_CHECK(cudaSetDevice(device_));
    for (int l = 0; l < sh_.layers; ++l) forward(l);
    const bf16* dcur = loss_grad_.as<bf16>();
    for (int l = static_cast<int>(sh_.layers) - 1, k = 0; l >= 0; --l, ++k) {
      bf16* dnext = dx_[k % 2].as<bf16>();
      backward(l, dcur, dnext);
      dcur = dnext;
    }
  }

  // Enqueues one optimizer step over every parameter; gradients scaled by gscale.
  void optimizer_step(float gscale) {
    IB_CHECK(cudaSetDevice(device_));
    ++step_;
    if (adam_) {
      const float c1 = static_cast<float>(1.0 - std::pow(static_cast<double>(kBeta1), static_cast<double>(step_)));
      const float c2 = static_cast<float>(1.0 - std::pow(static_cast<double>(kBeta2), static_cast<double>(step_)));
      adam_kernel<<<grid_for(nparams_), 256, 0, stream_>>>(master_.as<float>(), m_.as<float>(), v_.as<float>(),
                                                           grad_.as<bf16>(), w_.as<bf16>(), nparams_, kLr, c1, c2,
                                                           gscale);
    } else {
      sgd_kernel<<<grid_for(nparams_), 256, 0, stream_>>>(master_.as<float>(), m_.as<float>(), grad_.as<bf16>(),
                                                          w_.as<bf16>(), nparams_, kLr, gscale);
    }
    IB_CHECK_LAUNCH();
  }

  // ---- for the checks (host copies; synchronise the stream) ----
  std::vector<float> read_bf16(const DeviceBuffer& b, std::size_t elems, std::size_t first = 0) const {
    std::vector<bf16> raw(elems);
    IB_CHECK(cudaMemcpyAsync(raw.data(), b.as<bf16>() + first, elems * sizeof(bf16), cudaMemcpyDeviceToHost, stream_));
    IB_CHECK(cudaStreamSynchronize(stream_));
    std::vector<float> out(elems);
    for (std::size_t i = 0; i < elems; ++i) out[i] = __bfloat162float(raw[i]);
    return out;
  }
  std::vector<float> read_f32(const DeviceBuffer& b, std::size_t elems) const {
    std::vector<float> out(elems);
    IB_CHECK(cudaMemcpyAsync(out.data(), b.get(), elems * sizeof(float), cudaMemcpyDeviceToHost, stream_));
    IB_CHECK(cudaStreamSynchronize(stream_));
    return out;
  }
  std::vector<float> weight(int layer, Linear g) const {
    return read_bf16(w_, static_cast<std::size_t>(in_[g] * out_[g]), offset_[layer][g]);
  }
  std::vector<float> weight_grad(int layer, Linear g) const {
    return read_bf16(grad_, static_cast<std::size_t>(in_[g] * out_[g]), offset_[layer][g]);
  }
  const LayerActs& acts(int l) const { return acts_[l]; }
  const DeviceBuffer& out_x() const { return out_x_; }
  const DeviceBuffer& loss_grad() const { return loss_grad_; }
  const DeviceBuffer& dact() const { return dact_; }
  const DeviceBuffer& w() const { return w_; }
  const DeviceBuffer& grad() const { return grad_; }
  const DeviceBuffer& master() const { return master_; }
  const DeviceBuffer& m() const { return m_; }
  const DeviceBuffer& v() const { return v_; }

 private:
  const bf16* W(int l, Linear g) const { return w_.as<bf16>() + offset_[l][g]; }
  bf16* G(int l, Linear g) const { return grad_.as<bf16>() + offset_[l][g]; }
  std::size_t elems(std::int64_t rows_per_token) const {
    return static_cast<std::size_t>(rows_per_token) * static_cast<std::size_t>(sh_.tokens());
  }

  void layernorm(const bf16* x, bf16* y) {
    layernorm_fwd_kernel<<<row_grid(sh_.tokens()), kRowThreads, 0, stream_>>>(x, y, static_cast<int>(sh_.hidden),
                                                                           static_cast<std::size_t>(sh_.tokens()));
    IB_CHECK_LAUNCH();
  }
  void layernorm_bwd(const bf16* x, const bf16* dy, const bf16* dres, bf16* dx) {
    layernorm_bwd_kernel<<<row_grid(sh_.tokens()), kRowThreads, 0, stream_>>>(
        x, dy, dres, dx, static_cast<int>(sh_.hidden), static_cast<std::size_t>(sh_.tokens()));
    IB_CHECK_LAUNCH();
  }
  void add(const bf16* a, const bf16* b, bf16* out) {
    const std::size_t n = elems(sh_.hidden);
    add_kernel<<<grid_for(n), 256, 0, stream_>>>(a, b, out, n);
    IB_CHECK_LAUNCH();
  }

  // C = alpha op(A) op(B), bf16 in and out, fp32 compute, batched over the heads (stride d).
  void batched(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const bf16* a,
               std::int64_t lda, std::int64_t sa, const bf16* b, std::int64_t ldb, std::int64_t sb, bf16* c,
               std::int64_t ldc, std::int64_t sc) {
    const float beta = 0.0f;
    IB_CHECK(cublasGemmStridedBatchedEx(blas_.get(), ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                                        static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), &alpha, a,
                                        CUDA_R_16BF, static_cast<int>(lda), sa, b, CUDA_R_16BF, static_cast<int>(ldb),
                                        sb, &beta, c, CUDA_R_16BF, static_cast<int>(ldc), sc,
                                        static_cast<int>(sh_.heads), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }

  void forward(int l) {
    LayerActs& a = acts_[l];
    const std::int64_t h = sh_.hidden, d = sh_.head_dim(), s = sh_.seq, ss = s * s;
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    layernorm(a.x.as<bf16>(), a.ln1.as<bf16>());
    fwd_[kQkv]->run(W(l, kQkv), a.ln1.get(), a.qkv.get(), workspace_.get(), stream_);
    for (std::int64_t b = 0; b < sh_.batch; ++b) {
      const bf16* q = a.qkv.as<bf16>() + b * s * 3 * h;
      bf16* p = a.probs.as<bf16>() + b * sh_.heads * ss;
      batched(true, false, s, s, d, scale, q + h, 3 * h, d, q, 3 * h, d, p, s, ss);  // S = K^T Q / sqrt(d)
    }
    const std::size_t prow = static_cast<std::size_t>(sh_.batch * sh_.heads * s);
    softmax_fwd_kernel<<<row_grid(prow), kRowThreads, 0, stream_>>>(a.probs.as<bf16>(), static_cast<int>(s), prow);
    IB_CHECK_LAUNCH();
    for (std::int64_t b = 0; b < sh_.batch; ++b) {
      const bf16* q = a.qkv.as<bf16>() + b * s * 3 * h;
      const bf16* p = a.probs.as<bf16>() + b * sh_.heads * ss;
      batched(false, false, d, s, s, 1.0f, q + 2 * h, 3 * h, d, p, s, ss, a.ctx.as<bf16>() + b * s * h, h, d);  // O = V P
    }
    fwd_[kOut]->run(W(l, kOut), a.ctx.get(), tmp_.get(), workspace_.get(), stream_);
    add(a.x.as<bf16>(), tmp_.as<bf16>(), a.xmid.as<bf16>());
    layernorm(a.xmid.as<bf16>(), a.ln2.as<bf16>());
    fwd_[kUp]->run(W(l, kUp), a.ln2.get(), a.up.get(), workspace_.get(), stream_);
    const std::size_t nf = elems(sh_.ffn);
    gelu_fwd_kernel<<<grid_for(nf), 256, 0, stream_>>>(a.up.as<bf16>(), a.act.as<bf16>(), nf);
    IB_CHECK_LAUNCH();
    fwd_[kDown]->run(W(l, kDown), a.act.get(), tmp_.get(), workspace_.get(), stream_);
    bf16* next = l + 1 < sh_.layers ? acts_[l + 1].x.as<bf16>() : out_x_.as<bf16>();
    add(a.xmid.as<bf16>(), tmp_.as<bf16>(), next);
  }

  // dy: gradient of this layer's output; writes the gradient of its input into dx.
  void backward(int l, const bf16* dy, bf16* dx) {
    LayerActs& a = acts_[l];
    const std::int64_t h = sh_.hidden, d = sh_.head_dim(), s = sh_.seq, ss = s * s;
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    // FFN down, GELU, FFN up.
    dgrad_[kDown]->run(W(l, kDown), dy, dact_.get(), workspace_.get(), stream_);
    wgrad_[kDown]->run(a.act.get(), dy, G(l, kDown), workspace_.get(), stream_);
    const std::size_t nf = elems(sh_.ffn);
    gelu_bwd_kernel<<<grid_for(nf), 256, 0, stream_>>>(a.up.as<bf16>(), dact_.as<bf16>(), nf);
    IB_CHECK_LAUNCH();
    dgrad_[kUp]->run(W(l, kUp), dact_.get(), dln_.get(), workspace_.get(), stream_);
    wgrad_[kUp]->run(a.ln2.get(), dact_.get(), G(l, kUp), workspace_.get(), stream_);
    layernorm_bwd(a.xmid.as<bf16>(), dln_.as<bf16>(), dy, dxmid_.as<bf16>());
    // Attention output projection.
    dgrad_[kOut]->run(W(l, kOut), dxmid_.get(), dctx_.get(), workspace_.get(), stream_);
    wgrad_[kOut]->run(a.ctx.get(), dxmid_.get(), G(l, kOut), workspace_.get(), stream_);
    // Attention: dV = dO P^T, dP = V^T dO, dS = softmax'(dP), dQ = K dS / sqrt(d), dK = Q dS^T / sqrt(d).
    for (std::int64_t b = 0; b < sh_.batch; ++b) {
      const bf16* q = a.qkv.as<bf16>() + b * s * 3 * h;
      const bf16* p = a.probs.as<bf16>() + b * sh_.heads * ss;
      const bf16* dout = dctx_.as<bf16>() + b * s * h;
      bf16* dq = dqkv_.as<bf16>() + b * s * 3 * h;
      bf16* dp = dprobs_.as<bf16>() + b * sh_.heads * ss;
      batched(false, true, d, s, s, 1.0f, dout, h, d, p, s, ss, dq + 2 * h, 3 * h, d);    // dV
      batched(true, false, s, s, d, 1.0f, q + 2 * h, 3 * h, d, dout, h, d, dp, s, ss);    // dP
    }
    const std::size_t prow = static_cast<std::size_t>(sh_.batch * sh_.heads * s);
    softmax_bwd_kernel<<<row_grid(prow), kRowThreads, 0, stream_>>>(a.probs.as<bf16>(), dprobs_.as<bf16>(),
                                                                     static_cast<int>(s), prow);
    IB_CHECK_LAUNCH();
    for (std::int64_t b = 0; b < sh_.batch; ++b) {
      const bf16* q = a.qkv.as<bf16>() + b * s * 3 * h;
      const bf16* ds = dprobs_.as<bf16>() + b * sh_.heads * ss;
      bf16* dq = dqkv_.as<bf16>() + b * s * 3 * h;
      batched(false, false, d, s, s, scale, q + h, 3 * h, d, ds, s, ss, dq, 3 * h, d);  // dQ = K dS
      batched(false, true, d, s, s, scale, q, 3 * h, d, ds, s, ss, dq + h, 3 * h, d);   // dK = Q dS^T
    }
    // QKV projection, first layernorm (plus the residual's gradient).
    dgrad_[kQkv]->run(W(l, kQkv), dqkv_.get(), dln_.get(), workspace_.get(), stream_);
    wgrad_[kQkv]->run(a.ln1.get(), dqkv_.get(), G(l, kQkv), workspace_.get(), stream_);
    layernorm_bwd(a.x.as<bf16>(), dln_.as<bf16>(), dxmid_.as<bf16>(), dx);
  }

  TrainShape sh_;
  bool adam_;
  int device_;
  cudaStream_t stream_;
  std::int64_t in_[4] = {}, out_[4] = {};
  std::array<std::vector<std::size_t>, 64> offset_{};  // layers <= 64 (ParamSpec)
  std::size_t nparams_ = 0;
  std::int64_t step_ = 0;
  LtHandle lt_;
  CublasHandle blas_;
  DeviceBuffer w_, grad_, master_, m_, v_;
  std::vector<LayerActs> acts_;
  DeviceBuffer out_x_, loss_grad_, tmp_, dxmid_, dln_, dctx_, dqkv_, dact_, dprobs_, workspace_;
  std::array<DeviceBuffer, 2> dx_;
  std::array<std::unique_ptr<LtMatmul>, 4> fwd_, dgrad_, wgrad_;
};

// ---- float64 references for the setup check ----------------------------------------------------

// Relative RMS error of got against ref; throws when it exceeds tol or got has non-finite values.
void expect_close(const char* what, const std::vector<float>& got, const std::vector<double>& ref, double tol) {
  if (got.size() != ref.size()) throw WorkloadError(std::string("train-step check: ") + what + ": size mismatch");
  double err2 = 0.0, ref2 = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i]))
      throw WorkloadError(std::string("train-step check: ") + what + ": element " + std::to_string(i) +
                          " is not finite (unwritten or overflowed)");
    err2 += (got[i] - ref[i]) * (got[i] - ref[i]);
    ref2 += ref[i] * ref[i];
  }
  const double rel = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  if (!(rel <= tol))
    throw WorkloadError(std::string("train-step check: ") + what + " differs from the float64 reference: relative error " +
                        std::to_string(rel) + " > " + std::to_string(tol));
}

// LN of each column (n rows) of x (n x cols).
std::vector<double> ref_layernorm(const std::vector<float>& x, std::size_t n, std::size_t cols) {
  std::vector<double> y(x.size());
  for (std::size_t c = 0; c < cols; ++c) {
    double mean = 0.0, var = 0.0;
    for (std::size_t i = 0; i < n; ++i) mean += x[c * n + i];
    mean /= static_cast<double>(n);
    for (std::size_t i = 0; i < n; ++i) var += (x[c * n + i] - mean) * (x[c * n + i] - mean);
    var /= static_cast<double>(n);
    const double rstd = 1.0 / std::sqrt(var + kLnEps);
    for (std::size_t i = 0; i < n; ++i) y[c * n + i] = (x[c * n + i] - mean) * rstd;
  }
  return y;
}

// Y (out x cols) = W^T X, W stored in x out, X in x cols.
std::vector<double> ref_linear(const std::vector<float>& w, const std::vector<float>& x, std::size_t in,
                               std::size_t out, std::size_t cols) {
  std::vector<double> y(out * cols, 0.0);
  for (std::size_t c = 0; c < cols; ++c)
    for (std::size_t o = 0; o < out; ++o) {
      double acc = 0.0;
      for (std::size_t i = 0; i < in; ++i) acc += static_cast<double>(w[o * in + i]) * x[c * in + i];
      y[c * out + o] = acc;
    }
  return y;
}

void check_small_model(cudaStream_t stream, int device, bool adam) {
  TrainShape sh;
  sh.hidden = 64, sh.heads = 2, sh.seq = 16, sh.batch = 2, sh.ffn = 256, sh.layers = 1;
  Replica r(sh, adam, device, stream, 4242);
  r.forward_backward();
  IB_CHECK(cudaStreamSynchronize(stream));
  const std::size_t h = 64, f = 256, t = 32, s = 16, d = 32, heads = 2;
  const LayerActs& a = r.acts(0);
  const auto x = r.read_bf16(a.x, h * t), ln1 = r.read_bf16(a.ln1, h * t), qkv = r.read_bf16(a.qkv, 3 * h * t);
  const auto probs = r.read_bf16(a.probs, 2 * heads * s * s), ctx = r.read_bf16(a.ctx, h * t);
  const auto xmid = r.read_bf16(a.xmid, h * t), ln2 = r.read_bf16(a.ln2, h * t);
  const auto up = r.read_bf16(a.up, f * t), act = r.read_bf16(a.act, f * t), out = r.read_bf16(r.out_x(), h * t);
  constexpr double kTol = 1e-2;  // bf16 output rounding (2^-9) plus fp32 accumulation
  expect_close("layernorm 1", ln1, ref_layernorm(x, h, t), kTol);
  expect_close("QKV projection GEMM", qkv, ref_linear(r.weight(0, kQkv), ln1, h, 3 * h, t), kTol);
  // Attention probabilities and context from the GPU's qkv and probabilities.
  std::vector<double> pref(probs.size()), cref(h * t, 0.0);
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t j = 0; j < heads; ++j)
      for (std::size_t qi = 0; qi < s; ++qi) {
        const std::size_t qtok = b * s + qi;
        std::vector<double> sc(s);
        double mx = -1e300, sum = 0.0;
        for (std::size_t ki = 0; ki < s; ++ki) {
          const std::size_t ktok = b * s + ki;
          double acc = 0.0;
          for (std::size_t e = 0; e < d; ++e) acc += static_cast<double>(qkv[ktok * 3 * h + h + j * d + e]) * qkv[qtok * 3 * h + j * d + e];
          sc[ki] = acc * scale;
          mx = std::max(mx, sc[ki]);
        }
        for (auto& v : sc) sum += (v = std::exp(v - mx));
        const std::size_t base = ((b * heads + j) * s + qi) * s;
        for (std::size_t ki = 0; ki < s; ++ki) pref[base + ki] = sc[ki] / sum;
        for (std::size_t e = 0; e < d; ++e) {
          double acc = 0.0;
          for (std::size_t ki = 0; ki < s; ++ki)
            acc += static_cast<double>(qkv[(b * s + ki) * 3 * h + 2 * h + j * d + e]) * probs[base + ki];
          cref[qtok * h + j * d + e] = acc;
        }
      }
  expect_close("attention probabilities (scores GEMM + softmax)", probs, pref, kTol);
  expect_close("attention context GEMM", ctx, cref, kTol);
  auto mref = ref_linear(r.weight(0, kOut), ctx, h, h, t);
  for (std::size_t i = 0; i < mref.size(); ++i) mref[i] += x[i];
  expect_close("attention output projection + residual", xmid, mref, kTol);
  expect_close("layernorm 2", ln2, ref_layernorm(xmid, h, t), kTol);
  expect_close("FFN up GEMM", up, ref_linear(r.weight(0, kUp), ln2, h, f, t), kTol);
  std::vector<double> gref(up.size());
  for (std::size_t i = 0; i < up.size(); ++i) gref[i] = gelu(up[i]);
  expect_close("GELU", act, gref, kTol);
  auto oref = ref_linear(r.weight(0, kDown), act, f, h, t);
  for (std::size_t i = 0; i < oref.size(); ++i) oref[i] += xmid[i];
  expect_close("FFN down GEMM + residual", out, oref, kTol);

  // Backward of FFN down: dact = (Wdown dY) * gelu'(up); dWdown = act dY^T.
  const auto dy = r.read_bf16(r.loss_grad(), h * t);
  const auto wdown = r.weight(0, kDown);
  std::vector<double> daref(f * t), dwref(f * h);
  for (std::size_t c = 0; c < t; ++c)
    for (std::size_t i = 0; i < f; ++i) {
      double acc = 0.0;
      for (std::size_t o = 0; o < h; ++o) acc += static_cast<double>(wdown[o * f + i]) * dy[c * h + o];
      daref[c * f + i] = acc * gelu_grad(up[c * f + i]);
    }
  for (std::size_t o = 0; o < h; ++o)
    for (std::size_t i = 0; i < f; ++i) {
      double acc = 0.0;
      for (std::size_t c = 0; c < t; ++c) acc += static_cast<double>(act[c * f + i]) * dy[c * h + o];
      dwref[o * f + i] = acc;
    }
  expect_close("FFN down dgrad GEMM + GELU backward", r.read_bf16(r.dact(), f * t), daref, 2e-2);
  expect_close("FFN down wgrad GEMM", r.weight_grad(0, kDown), dwref, kTol);

  // Optimizer: first step from zero state against its closed form, over every parameter.
  const std::size_t n = r.nparams();
  const auto g = r.read_bf16(r.grad(), n);
  const auto p0 = r.read_f32(r.master(), n);
  for (std::size_t i = 0; i < n; ++i)
    if (!std::isfinite(g[i]))
      throw WorkloadError("train-step check: gradient " + std::to_string(i) + " is not finite (unwritten?)");
  r.optimizer_step(1.0f);
  const auto p1 = r.read_f32(r.master(), n), m1 = r.read_f32(r.m(), n);
  const auto w1 = r.read_bf16(r.w(), n);
  const auto v1 = adam ? r.read_f32(r.v(), n) : std::vector<float>();
  for (std::size_t i = 0; i < n; ++i) {
    const double gi = g[i];
    const double step = adam ? kLr * gi / (std::fabs(gi) + kAdamEps) : kLr * gi;
    const double expect_p = p0[i] - step;
    const double expect_m = adam ? (1.0 - kBeta1) * gi : gi;
    bool ok = std::fabs(p1[i] - expect_p) <= 1e-6 * std::fabs(expect_p) + 1e-3 * kLr &&
              std::fabs(m1[i] - expect_m) <= 1e-5 * std::fabs(expect_m) + 1e-30 &&
              w1[i] == __bfloat162float(__float2bfloat16_rn(p1[i]));
    if (adam) ok = ok && std::fabs(v1[i] - (1.0 - kBeta2) * gi * gi) <= 1e-4 * (1.0 - kBeta2) * gi * gi + 1e-30;
    if (!ok)
      throw WorkloadError(std::string("train-step check: ") + (adam ? "Adam" : "SGD") + " first step, parameter " +
                          std::to_string(i) + ": got w=" + std::to_string(p1[i]) + " m=" + std::to_string(m1[i]) +
                          ", closed form w=" + std::to_string(expect_p) + " m=" + std::to_string(expect_m) +
                          " (g=" + std::to_string(gi) + ")");
  }
}

// ---- the workload --------------------------------------------------------------------------------

struct TrainConfig {
  TrainShape shape;
  int steps, gpus;
  bool adam;
  explicit TrainConfig(const Params& p)
      : steps(static_cast<int>(p_int(p, "steps"))),
        gpus(static_cast<int>(p_int(p, "gpus"))),
        adam(p_str(p, "optimizer") == "adam") {
    shape.hidden = p_int(p, "hidden");
    shape.heads = p_int(p, "heads");
    shape.seq = p_int(p, "seq");
    shape.batch = p_int(p, "batch");
    const std::int64_t ffn = p_int(p, "ffn");
    shape.ffn = ffn > 0 ? ffn : 4 * shape.hidden;
    shape.layers = p_int(p, "layers");
  }
};

class TrainStep final : public Workload {
 public:
  explicit TrainStep(const Params& p) : cfg_(p) {}
  ~TrainStep() override { release(); }

  void setup(const ExecContext& ctx) override {
    auto s0 = static_cast<cudaStream_t>(ctx.stream);
    IB_CHECK(cudaSetDevice(ctx.device));
    check_small_model(s0, ctx.device, cfg_.adam);

    for (int r = 0; r < cfg_.gpus; ++r) {
      const int dev = ctx.device + r;
      IB_CHECK(cudaSetDevice(dev));
      cudaStream_t s = s0;
      if (r > 0) {
        IB_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        own_streams_.push_back({dev, s});
        join_.push_back(nullptr);
        IB_CHECK(cudaEventCreateWithFlags(&join_.back(), cudaEventDisableTiming));
      }
      replicas_.push_back(std::make_unique<Replica>(cfg_.shape, cfg_.adam, dev, s, 100 + 2 * r));
    }
    IB_CHECK(cudaSetDevice(ctx.device));
    IB_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
    if (cfg_.gpus > 1) {
      std::vector<int> devs;
      for (int r = 0; r < cfg_.gpus; ++r) devs.push_back(ctx.device + r);
      nccl_ = nccl::Library::load_from_environment();
      if (!nccl_.ok()) throw WorkloadError(nccl::not_found_reason(nccl_, "train-step with gpus > 1"));
      comms_ = nccl::init_all(nccl_, devs);
    }
    // One full step of the real model; its output, gradients and new weights must be finite.
    enqueue_steps(s0, 1);
    for (auto& rep : replicas_) {
      IB_CHECK(cudaSetDevice(rep->device()));
      const std::size_t t = static_cast<std::size_t>(cfg_.shape.tokens()), h = static_cast<std::size_t>(cfg_.shape.hidden);
      const unsigned long long bad_out = count_nonfinite(rep->out_x().as<bf16>(), h * t, rep->stream());
      const unsigned long long bad_grad = count_nonfinite(rep->grad().as<bf16>(), rep->nparams(), rep->stream());
      const unsigned long long bad_w = count_nonfinite(rep->w().as<bf16>(), rep->nparams(), rep->stream());
      if (bad_out || bad_grad || bad_w)
        throw WorkloadError("train-step: after one step on device " + std::to_string(rep->device()) + ": " +
                            std::to_string(bad_out) + " non-finite outputs, " + std::to_string(bad_grad) +
                            " non-finite gradients, " + std::to_string(bad_w) + " non-finite weights");
    }
    IB_CHECK(cudaSetDevice(ctx.device));
  }

  void run_sample(const ExecContext& ctx, SampleOutput& out) override {
    enqueue_steps(static_cast<cudaStream_t>(ctx.stream), cfg_.steps);
    IB_CHECK(cudaSetDevice(ctx.device));
    out.counters["steps"] = static_cast<double>(cfg_.steps);
  }

  Work work_per_sample() const override {
    return {static_cast<double>(cfg_.steps) * cfg_.gpus * acct::train_step_flop(cfg_.shape), "FLOP"};
  }

  void teardown() override { release(); }

 private:
  // Forks the other ranks' streams from s0, enqueues `steps` steps on every replica (gradient
  // allreduce between backward and optimizer when there are several), joins them back into s0.
  void enqueue_steps(cudaStream_t s0, int steps) {
    if (replicas_.size() > 1) {
      IB_CHECK(cudaSetDevice(replicas_[0]->device()));
      IB_CHECK(cudaEventRecord(fork_, s0));
      for (std::size_t r = 1; r < replicas_.size(); ++r) {
        IB_CHECK(cudaSetDevice(replicas_[r]->device()));
        IB_CHECK(cudaStreamWaitEvent(replicas_[r]->stream(), fork_, 0));
      }
    }
    const float gscale = 1.0f / static_cast<float>(replicas_.size());
    for (int i = 0; i < steps; ++i) {
      for (auto& rep : replicas_) rep->forward_backward();
      if (!comms_.empty()) {
        const nccl::Api& api = nccl_.api();
        IB_CHECK(api.group_start());
        for (std::size_t r = 0; r < replicas_.size(); ++r)
          IB_CHECK(api.all_reduce(replicas_[r]->grads(), replicas_[r]->grads(), replicas_[r]->nparams(),
                                  nccl::DataType::bfloat16, nccl::RedOp::sum, comms_[r], replicas_[r]->stream()));
        IB_CHECK(api.group_end());
      }
      for (auto& rep : replicas_) rep->optimizer_step(gscale);
    }
    if (replicas_.size() > 1) {
      for (std::size_t r = 1; r < replicas_.size(); ++r) {
        IB_CHECK(cudaSetDevice(replicas_[r]->device()));
        IB_CHECK(cudaEventRecord(join_[r - 1], replicas_[r]->stream()));
        IB_CHECK(cudaSetDevice(replicas_[0]->device()));
        IB_CHECK(cudaStreamWaitEvent(s0, join_[r - 1], 0));
      }
    }
  }

  // Best effort (teardown and destructor): errors were reported when they happened.
  void release() {
    int caller_device = -1;  // restored at the end: releasing the ranks switches devices
    const bool restore = !replicas_.empty() && cudaGetDevice(&caller_device) == cudaSuccess;
    for (auto& rep : replicas_) {
      cudaSetDevice(rep->device());
      cudaStreamSynchronize(rep->stream());
    }
    for (auto& c : comms_)
      if (c) (void)nccl_.api().comm_destroy(c);  // best effort, like the rest of release()
    comms_.clear();
    replicas_.clear();
    for (std::size_t i = 0; i < own_streams_.size(); ++i) {
      cudaSetDevice(own_streams_[i].first);
      if (join_[i]) cudaEventDestroy(join_[i]);
      cudaStreamDestroy(own_streams_[i].second);
    }
    own_streams_.clear();
    join_.clear();
    if (restore) cudaSetDevice(caller_device);  // normally rank 0's, where fork_ was created
    if (fork_) cudaEventDestroy(fork_);
    fork_ = nullptr;
  }

  TrainConfig cfg_;
  std::vector<std::unique_ptr<Replica>> replicas_;
  std::vector<std::pair<int, cudaStream_t>> own_streams_;  // ranks > 0
  std::vector<cudaEvent_t> join_;                          // ranks > 0
  cudaEvent_t fork_ = nullptr;
  nccl::Library nccl_;  // gpus > 1 only; outlives comms_ (release() destroys them first)
  std::vector<nccl::Comm> comms_;
};

std::unique_ptr<Workload> make_train_step(const Params& p) { return std::make_unique<TrainStep>(p); }

Support train_step_supported(const Params& p, const ExecContext& ctx) {
  const TrainConfig cfg(p);
  if (auto why = acct::train_shape_error(cfg.shape)) return {false, "train-step: " + *why};
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (cfg.gpus > 1 && visible && std::strstr(visible, "MIG-"))
    return {false, "train-step with gpus > 1 needs an NCCL communicator, which cannot span MIG instances "
                   "(docs/design.md section 7): use gpus = 1 inside a MIG instance"};
  // Decidable without a GPU, so before the GPU checks: NCCL is loaded at run time and may be missing.
  if (cfg.gpus > 1) {
    const nccl::Library lib = nccl::Library::load_from_environment();
    if (!lib.ok()) return {false, nccl::not_found_reason(lib, "train-step with gpus > 1")};
  }
  if (Support s = cuda_support(ctx.device); !s.supported) return s;
  int count = 0;
  IB_CHECK(cudaGetDeviceCount(&count));
  if (ctx.device + cfg.gpus > count)
    return {false, "too few GPUs: train-step over " + std::to_string(cfg.gpus) + " GPUs starting at device " +
                       std::to_string(ctx.device) + " needs devices up to " + std::to_string(ctx.device + cfg.gpus - 1) +
                       ", but " + std::to_string(count) + " are visible"};
  const double need = acct::train_device_bytes(cfg.shape, cfg.adam, static_cast<double>(kLtWorkspaceBytes));
  std::vector<DeviceInfo> infos;
  for (int r = 0; r < cfg.gpus; ++r) {
    infos.push_back(query_device(ctx.device + r));
    const DeviceInfo& info = infos.back();
    if (info.cc < 80)
      return {false, "train-step uses bf16 tensor-core GEMMs: needs compute capability >= 8.0; " + info.name + " is " +
                         std::to_string(info.cc / 10) + "." + std::to_string(info.cc % 10)};
    for (int q = 0; q < r; ++q)
      if (std::memcmp(infos[q].uuid, info.uuid, sizeof(info.uuid)) == 0)
        return {false, "devices " + std::to_string(ctx.device + q) + " and " + std::to_string(ctx.device + r) +
                           " are the same physical GPU: NCCL allows one rank per GPU per communicator"};
    if (Support m = memory_support(info, need, "train-step"); !m.supported) return m;
  }
  IB_CHECK(cudaSetDevice(ctx.device));
  if (cfg.gpus == 1) return {};
  std::vector<int> devs;
  for (int r = 0; r < cfg.gpus; ++r) devs.push_back(ctx.device + r);
  return nccl::support_for("train-step with gpus > 1", devs);  // under MPS or MIG: a trial communicator
}

}  // namespace

IB_CUDA_WORKLOAD("train-step", train_step_supported, make_train_step);

}  // namespace ib::cuda
