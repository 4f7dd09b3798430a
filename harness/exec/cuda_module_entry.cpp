// The CUDA module's one export (see cuda_module_api.h): the table of what the binary may ask it.
#include "build_info.h"
#include "harness/exec/cuda_module_api.h"
#include "kernels/cuda/cuda_workloads.h"

namespace {

ib::Support supported(const std::string& workload, const ib::Params& params, const ib::ExecContext& ctx) {
  return ib::cuda::in_process_factory().supported(workload, params, ctx);
}

std::unique_ptr<ib::Workload> create(const std::string& workload, const ib::Params& params) {
  return ib::cuda::in_process_factory().create(workload, params);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const ib::cuda_module::Api* ib_cuda_module_api() {
  // Built once, on the first call, and never changed (a C++11 function-local static: thread-safe).
  static const std::string key = ib::cuda_module::build_key(IB_VERSION, IB_GIT_SHA);
  static const ib::cuda_module::Api api{ib::cuda_module::kAbiVersion, key.c_str(), ib::cuda::device_availability,
                                        supported, create, ib::cuda::make_executor};
  return &api;
}
