// The CUDA workloads in this process (each registered by its own .cu file: workload_registration.h): what
// the CUDA module (harness/exec/cuda_module_entry.cpp) exports, and what a program linked with the
// workloads themselves (the microbenchmark, the GPU tests) calls directly. The tool's binary never
// links these: it loads the module when a CUDA backend is asked for (harness/exec/cuda_module.h).
#pragma once

#include "kernels/cuda/cuda_specs.h"
#include "kernels/workload.h"

#include <optional>
#include <string>
#include <vector>

namespace ib::cuda {

// Whether CUDA `device` can be used: no driver, no GPU or a bad index is no_gpu; a GPU whose
// architecture this build has no kernels for is unusable (architectures.h).
Availability device_availability(int device);

// The reason of device_availability when not usable, else nullopt.
std::optional<std::string> unavailable_reason(int device);

// The workloads' own factory: supported() and create() by name (unknown names: not supported / throw).
CudaFactory in_process_factory();

// The names the workloads' .cu files registered, in registration order (each should have one spec in
// cuda_specs.cpp, and each spec one of these: tests/gpu/cuda_unit_test.cpp).
std::vector<std::string> registered_workload_names();

// add_cuda_workload_specs with in_process_factory().
void register_workloads(Registry& registry);

}  // namespace ib::cuda
