// Device queries shared by the CUDA workloads' supported() checks (plain C++, CUDA runtime only).
#pragma once

#include "kernels/workload.h"

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace ib::cuda {

struct DeviceInfo {
  std::string name;
  int cc = 0;               // major*10 + minor
  int sms = 0;
  double l2_bytes = 0;
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  unsigned char uuid[16] = {};
};

// Whether the current device can run this build's kernels: the runtime finds a cubin or PTX for it
// (cudaFuncGetAttributes of one kernel; defined in device_util.cu).
bool kernel_image_available();

// Makes `device` current and reads its properties and free memory (throws WorkloadError).
DeviceInfo query_device(int device);

// {false, cuda_unavailable_reason(device)} when the device cannot be used, else {true, ""}.
Support cuda_support(int device);

// {false, "not enough GPU memory: ..."} when `need` bytes exceed 90% of the free memory.
Support memory_support(const DeviceInfo& info, double need, const std::string& what);

// Monotonic clock (CLOCK_MONOTONIC) in ns; the clock TimedSample::start_ns is on.
std::int64_t mono_ns();

// The CLOCK_MONOTONIC time of a GPU event, to put the GPU's timeline on the host clock.
struct Anchor {
  std::int64_t ns = 0;        // host time taken for events[0]'s GPU timestamp
  std::int64_t error_ns = 0;  // bound on |ns - true time|: half the host window around record+wait
};
// Drains `s`, then records an event on the idle stream and waits for it, up to 5 times, keeping the
// try with the narrowest host window (midpoint of the clock reads before the record and after the
// wait). One try alone is off by however long the thread was preempted in between, and that offset
// lands on every time derived from the anchor; a window under 20 us ends the tries early. On return
// events[0] is the chosen event (the two handles are swapped as needed); both must be created on
// the stream's device.
Anchor anchor_event(std::array<cudaEvent_t, 2>& events, cudaStream_t s);

std::string mib_text(double bytes);

// Reads an integer/number/string parameter that validate_params has already checked.
inline std::int64_t p_int(const Params& p, const char* k) { return p.at(k).get<std::int64_t>(); }
inline double p_num(const Params& p, const char* k) { return p.at(k).get<double>(); }
inline std::string p_str(const Params& p, const char* k) { return p.at(k).get<std::string>(); }

}  // namespace ib::cuda
