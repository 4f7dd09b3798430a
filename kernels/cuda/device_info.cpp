#include "kernels/cuda/device_info.h"

#include "kernels/cuda/architectures.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_workloads.h"

#include <cstring>
#include <ctime>
#include <limits>
#include <sstream>
#include <utility>

namespace ib::cuda {

namespace {

// The architectures this build compiled (CMAKE_CUDA_ARCHITECTURES, set by CMake) against `device`:
// from the list when it is one, else by asking the runtime for a kernel's attributes, which fails
// with cudaErrorNoKernelImageForDevice when no cubin or PTX fits the GPU.
std::optional<std::string> architecture_reason(int device) {
  cudaDeviceProp prop{};
  const cudaError_t e = cudaGetDeviceProperties(&prop, device);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return std::string("cannot read GPU ") + std::to_string(device) + "'s properties: " + cudaGetErrorName(e);
  }
  const int cc = prop.major * 10 + prop.minor;
  if (const auto built = parse_architectures(IB_CUDA_ARCHITECTURES))
    return architecture_refusal(prop.name, device, cc, *built);
  if (cudaSetDevice(device) == cudaSuccess && kernel_image_available()) return std::nullopt;
  (void)cudaGetLastError();
  return "GPU " + std::to_string(device) + " (" + prop.name + ", compute capability " + std::to_string(prop.major) +
         "." + std::to_string(prop.minor) + ") cannot run this build's kernels (CMAKE_CUDA_ARCHITECTURES=" +
         IB_CUDA_ARCHITECTURES + "); rebuild for it: cmake --preset default -DCMAKE_CUDA_ARCHITECTURES=" +
         std::to_string(cc) + " && cmake --build --preset default";
}

}  // namespace

Availability device_availability(int device) {
  using State = Availability::State;
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // clear it so later calls do not see it
    return {State::no_gpu, std::string("no CUDA GPU found: cudaGetDeviceCount returned ") + cudaGetErrorName(e) +
                               " (" + cudaGetErrorString(e) + ")"};
  }
  if (count == 0) return {State::no_gpu, "no CUDA GPU found: cudaGetDeviceCount reported 0 devices"};
  if (device < 0 || device >= count) {
    return {State::no_gpu, "device " + std::to_string(device) + " does not exist: " + std::to_string(count) +
                               " CUDA device(s) visible (indices 0.." + std::to_string(count - 1) + ")"};
  }
  if (auto why = architecture_reason(device)) return {State::unusable, *why};
  return {};
}

std::optional<std::string> unavailable_reason(int device) {
  Availability a = device_availability(device);
  if (a.state == Availability::State::usable) return std::nullopt;
  return std::move(a.reason);
}

DeviceInfo query_device(int device) {
  DeviceInfo info;
  IB_CHECK(cudaSetDevice(device));
  cudaDeviceProp prop{};
  IB_CHECK(cudaGetDeviceProperties(&prop, device));
  info.name = prop.name;
  info.cc = prop.major * 10 + prop.minor;
  info.sms = prop.multiProcessorCount;
  info.l2_bytes = static_cast<double>(prop.l2CacheSize);
  std::memcpy(info.uuid, prop.uuid.bytes, sizeof(info.uuid));
  IB_CHECK(cudaMemGetInfo(&info.free_bytes, &info.total_bytes));
  return info;
}

Support cuda_support(int device) {
  if (auto why = unavailable_reason(device)) return {false, *why};
  return {};
}

std::string mib_text(double bytes) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(0);
  os << bytes / (1024.0 * 1024.0) << " MiB";
  return os.str();
}

Support memory_support(const DeviceInfo& info, double need, const std::string& what) {
  if (need > 0.9 * static_cast<double>(info.free_bytes)) {
    return {false, "not enough GPU memory: " + what + " needs " + mib_text(need) + ", " +
                       mib_text(static_cast<double>(info.free_bytes)) + " free of " +
                       mib_text(static_cast<double>(info.total_bytes)) + " on " + info.name};
  }
  return {};
}

std::int64_t mono_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

Anchor anchor_event(std::array<cudaEvent_t, 2>& events, cudaStream_t s) {
  constexpr int kTries = 5;
  constexpr std::int64_t kGoodWindowNs = 20000;  // a record+wait round trip is a few us on an idle GPU
  IB_CHECK(cudaStreamSynchronize(s));
  std::int64_t best_window = std::numeric_limits<std::int64_t>::max();
  Anchor best;
  for (int i = 0; i < kTries; ++i) {
    // events[1] is the scratch event; events[0] holds the best try so far.
    const std::int64_t before = mono_ns();
    IB_CHECK(cudaEventRecord(events[1], s));
    IB_CHECK(cudaEventSynchronize(events[1]));
    const std::int64_t window = mono_ns() - before;
    if (window < best_window) {
      best_window = window;
      best = {before + window / 2, (window + 1) / 2};
      std::swap(events[0], events[1]);
    }
    if (best_window < kGoodWindowNs) break;
  }
  return best;
}

}  // namespace ib::cuda
