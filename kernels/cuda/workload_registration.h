// How a CUDA workload's own .cu file makes it known to the CUDA module: after its supported() check and
// its constructor, one line
//
//   IB_CUDA_WORKLOAD("gemm", gemm_supported, make_gemm);
//
// registers them under the workload's name, as the file's static initialiser runs (before main, or while
// the module is being loaded); in_process_factory() and registered_workload_names() (cuda_workloads.h)
// find them there. No other file lists the workloads: kernels/cuda/CMakeLists.txt builds every .cu file
// of this folder, as object files, so no linker drops a file that only registers. The name's spec
// (description, parameters) is plain C++ in kernels/cuda/cuda_specs.cpp, compiled into every binary;
// tests/gpu/cuda_unit_test.cpp fails when a spec has no registered workload or a registered workload no spec.
#pragma once

#include "kernels/workload.h"

#include <memory>

namespace ib::cuda {

// One CUDA workload of this build: its name in scenarios, whether it can run here, how to make it.
struct CudaWorkloadImplementation {
  const char* name = nullptr;
  Support (*supported)(const Params& p, const ExecContext& ctx) = nullptr;
  std::unique_ptr<Workload> (*create)(const Params& p) = nullptr;
};

// Adds `implementation` to the workloads of this build; only IB_CUDA_WORKLOAD's object calls it.
class CudaWorkloadRegistrar {
 public:
  explicit CudaWorkloadRegistrar(const CudaWorkloadImplementation& implementation);
};

}  // namespace ib::cuda

// At namespace scope in the workload's .cu file, after the two functions (which can then stay file-local).
#define IB_CUDA_WORKLOAD(name, supported_fn, make_fn)                                         \
  [[maybe_unused]] static const ::ib::cuda::CudaWorkloadRegistrar ib_cuda_workload_registrar_##make_fn( \
      ::ib::cuda::CudaWorkloadImplementation{name, supported_fn, make_fn})
