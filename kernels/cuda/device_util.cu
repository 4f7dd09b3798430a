#include "kernels/cuda/device_util.cuh"
#include "kernels/cuda/device_info.h"

namespace ib::cuda {

__global__ void fill_words_kernel(std::uint32_t* p, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    p[i] = word_at(seed, i);
}

bool kernel_image_available() {
  cudaFuncAttributes attributes{};
  const cudaError_t e = cudaFuncGetAttributes(&attributes, fill_words_kernel);
  if (e == cudaSuccess) return true;
  (void)cudaGetLastError();  // cudaErrorNoKernelImageForDevice (or invalid device function): not sticky
  return false;
}

void fill_words(std::uint32_t* p, std::size_t n, std::uint64_t seed, cudaStream_t s) {
  fill_words_kernel<<<grid_for(n), 256, 0, s>>>(p, n, seed);
  IB_CHECK_LAUNCH();
}

__global__ void check_words_kernel(const std::uint32_t* p, std::size_t n, std::uint64_t seed,
                                   unsigned long long* count) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    if (p[i] != word_at(seed, i)) ++local;
  if (local) atomicAdd(count, local);
}

namespace {
__global__ void compare_words_kernel(const std::uint32_t* a, const std::uint32_t* b, std::size_t n,
                                     unsigned long long* count) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    if (a[i] != b[i]) ++local;
  if (local) atomicAdd(count, local);
}

unsigned long long read_counter(const DeviceBuffer& counter, cudaStream_t s) {
  unsigned long long host = 0;
  IB_CHECK(cudaMemcpyAsync(&host, counter.get(), sizeof(host), cudaMemcpyDeviceToHost, s));
  IB_CHECK(cudaStreamSynchronize(s));
  return host;
}
}  // namespace

unsigned long long count_word_mismatches(const std::uint32_t* a, const std::uint32_t* b, std::size_t n,
                                         cudaStream_t s) {
  DeviceBuffer counter(sizeof(unsigned long long));
  IB_CHECK(cudaMemsetAsync(counter.get(), 0, sizeof(unsigned long long), s));
  compare_words_kernel<<<grid_for(n), 256, 0, s>>>(a, b, n, counter.as<unsigned long long>());
  IB_CHECK_LAUNCH();
  return read_counter(counter, s);
}

unsigned long long count_words_not_matching(const std::uint32_t* p, std::size_t n, std::uint64_t seed,
                                            cudaStream_t s) {
  DeviceBuffer counter(sizeof(unsigned long long));
  IB_CHECK(cudaMemsetAsync(counter.get(), 0, sizeof(unsigned long long), s));
  check_words_kernel<<<grid_for(n), 256, 0, s>>>(p, n, seed, counter.as<unsigned long long>());
  IB_CHECK_LAUNCH();
  return read_counter(counter, s);
}

}  // namespace ib::cuda
