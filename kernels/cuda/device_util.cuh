// Device helpers shared by the CUDA workloads (nvcc only): RAII buffers, deterministic
// pseudo-random initialisation and on-device checks. Inputs are never zeros or uninitialised.
#pragma once

#include "kernels/cuda/cuda_check.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <utility>

namespace ib::cuda {

// splitmix64 finaliser: the same function on host and device, so the host can recompute any
// element the device generated.
__host__ __device__ inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}
// Element i of stream `seed`: uniform in [-1, 1) on a 2^-23 grid (exact in float).
__host__ __device__ inline float uniform_pm1(std::uint64_t seed, std::uint64_t i) {
  const std::uint64_t r = mix64(mix64(seed) ^ i) >> 40;  // 24 random bits
  return static_cast<float>(r) * (2.0f / 16777216.0f) - 1.0f;
}
__host__ __device__ inline std::uint32_t word_at(std::uint64_t seed, std::uint64_t i) {
  return static_cast<std::uint32_t>(mix64(mix64(seed) ^ i) >> 16);
}

template <typename T> __host__ __device__ inline T from_float(float x);
template <> __host__ __device__ inline float from_float<float>(float x) { return x; }
template <> __host__ __device__ inline __half from_float<__half>(float x) { return __float2half_rn(x); }
template <> __host__ __device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
template <> __host__ __device__ inline __nv_fp8_e4m3 from_float<__nv_fp8_e4m3>(float x) { return __nv_fp8_e4m3(x); }

template <typename T> __host__ __device__ inline float to_float(T x) { return static_cast<float>(x); }
template <> __host__ __device__ inline float to_float<__half>(__half x) { return __half2float(x); }
template <> __host__ __device__ inline float to_float<__nv_bfloat16>(__nv_bfloat16 x) { return __bfloat162float(x); }

// Grid for a grid-stride loop over n elements: enough blocks to fill the GPU, never zero.
inline unsigned grid_for(std::size_t n, unsigned block = 256, unsigned max_blocks = 65535) {
  std::size_t b = (n + block - 1) / block;
  if (b < 1) b = 1;
  if (b > max_blocks) b = max_blocks;
  return static_cast<unsigned>(b);
}

template <typename T>
__global__ void fill_uniform_kernel(T* p, std::size_t n, std::uint64_t seed, float scale) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    p[i] = from_float<T>(uniform_pm1(seed, i) * scale);
}
template <typename T>
void fill_uniform(T* p, std::size_t n, std::uint64_t seed, float scale, cudaStream_t s) {
  fill_uniform_kernel<T><<<grid_for(n), 256, 0, s>>>(p, n, seed, scale);
  IB_CHECK_LAUNCH();
}

__global__ void fill_words_kernel(std::uint32_t* p, std::size_t n, std::uint64_t seed);
void fill_words(std::uint32_t* p, std::size_t n, std::uint64_t seed, cudaStream_t s);
// Adds to *count the number of words with p[i] != word_at(seed, i).
__global__ void check_words_kernel(const std::uint32_t* p, std::size_t n, std::uint64_t seed,
                                   unsigned long long* count);
// Number of words where a and b differ (synchronises `s`).
unsigned long long count_word_mismatches(const std::uint32_t* a, const std::uint32_t* b, std::size_t n,
                                         cudaStream_t s);
// Number of words that differ from word_at(seed, i) (synchronises `s`).
unsigned long long count_words_not_matching(const std::uint32_t* p, std::size_t n, std::uint64_t seed,
                                            cudaStream_t s);

template <typename T>
__global__ void count_nonfinite_kernel(const T* p, std::size_t n, unsigned long long* count) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float v = to_float<T>(p[i]);
    if (!isfinite(v)) ++local;
  }
  if (local) atomicAdd(count, local);
}

// Owning device allocation (cudaMalloc: 256-byte aligned).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes) IB_CHECK(cudaMalloc(&p_, bytes));
  }
  ~DeviceBuffer() {
    if (p_) cudaFree(p_);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      if (p_) cudaFree(p_);
      p_ = std::exchange(o.p_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <typename T = void> T* as() const { return static_cast<T*>(p_); }
  void* get() const { return p_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

// Counts non-finite elements of p[0..n) (synchronises `s`).
template <typename T>
unsigned long long count_nonfinite(const T* p, std::size_t n, cudaStream_t s) {
  DeviceBuffer counter(sizeof(unsigned long long));
  IB_CHECK(cudaMemsetAsync(counter.get(), 0, sizeof(unsigned long long), s));
  count_nonfinite_kernel<T><<<grid_for(n), 256, 0, s>>>(p, n, counter.as<unsigned long long>());
  IB_CHECK_LAUNCH();
  unsigned long long host = 0;
  IB_CHECK(cudaMemcpyAsync(&host, counter.get(), sizeof(host), cudaMemcpyDeviceToHost, s));
  IB_CHECK(cudaStreamSynchronize(s));
  return host;
}

}  // namespace ib::cuda
