// The CUDA workloads' factory by name: the supported() checks and constructors their own .cu files
// registered (workload_registration.h).
#include "kernels/cuda/cuda_workloads.h"
#include "kernels/cuda/workload_registration.h"

#include <string>
#include <vector>

namespace ib::cuda {

namespace {

// The one mutable global of the registration, and why it is one: each workload's .cu file adds itself
// here from its static initialiser (IB_CUDA_WORKLOAD), so that no other file lists the workloads. A
// function-local static, so that it exists before the first registrar runs whatever order the files'
// initialisers run in. It changes only during static initialisation (before main, or inside the module's
// dlopen, one thread either way); after that it is only read. A name registered twice would be there
// twice: tests/gpu/cuda_unit_test.cpp refuses that.
std::vector<CudaWorkloadImplementation>& cuda_workload_table() {
  static std::vector<CudaWorkloadImplementation> table;
  return table;
}

const CudaWorkloadImplementation* find_implementation(const std::string& name) {
  for (const CudaWorkloadImplementation& impl : cuda_workload_table())
    if (name == impl.name) return &impl;
  return nullptr;
}

}  // namespace

CudaWorkloadRegistrar::CudaWorkloadRegistrar(const CudaWorkloadImplementation& implementation) {
  cuda_workload_table().push_back(implementation);
}

std::vector<std::string> registered_workload_names() {
  std::vector<std::string> names;
  for (const CudaWorkloadImplementation& impl : cuda_workload_table()) names.emplace_back(impl.name);
  return names;
}

CudaFactory in_process_factory() {
  CudaFactory f;
  f.supported = [](const std::string& name, const Params& p, const ExecContext& ctx) -> Support {
    const CudaWorkloadImplementation* impl = find_implementation(name);
    if (!impl) return {false, "no CUDA workload named " + name + " in this build"};
    return impl->supported(p, ctx);
  };
  f.create = [](const std::string& name, const Params& p) -> std::unique_ptr<Workload> {
    const CudaWorkloadImplementation* impl = find_implementation(name);
    if (!impl) throw WorkloadError("no CUDA workload named " + name + " in this build");
    return impl->create(p);
  };
  return f;
}

void register_workloads(Registry& registry) { add_cuda_workload_specs(registry, in_process_factory()); }

}  // namespace ib::cuda
