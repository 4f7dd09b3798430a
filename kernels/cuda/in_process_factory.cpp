// The CUDA workloads' factory by name: their supported() checks and constructors (workloads_internal.h).
#include "kernels/cuda/cuda_workloads.h"
#include "kernels/cuda/workloads_internal.h"

#include <map>

namespace ib::cuda {

namespace {

struct Implementation {
  Support (*supported)(const Params&, const ExecContext&);
  std::unique_ptr<Workload> (*create)(const Params&);
};

const Implementation* find_implementation(const std::string& name) {
  static const std::map<std::string, Implementation> table = {
      {"gemm", {gemm_supported, make_gemm}},
      {"copy", {copy_supported, make_copy}},
      {"h2d", {h2d_supported, make_h2d}},
      {"latency", {latency_supported, make_latency}},
      {"serve", {serve_supported, make_serve}},
      {"train-step", {train_step_supported, make_train_step}},
      {"allreduce", {allreduce_supported, make_allreduce}},
  };
  const auto it = table.find(name);
  return it == table.end() ? nullptr : &it->second;
}

}  // namespace

CudaFactory in_process_factory() {
  CudaFactory f;
  f.supported = [](const std::string& name, const Params& p, const ExecContext& ctx) -> Support {
    const Implementation* impl = find_implementation(name);
    if (!impl) return {false, "no CUDA workload named " + name + " in this build"};
    return impl->supported(p, ctx);
  };
  f.create = [](const std::string& name, const Params& p) -> std::unique_ptr<Workload> {
    const Implementation* impl = find_implementation(name);
    if (!impl) throw WorkloadError("no CUDA workload named " + name + " in this build");
    return impl->create(p);
  };
  return f;
}

void register_workloads(Registry& registry) { add_cuda_workload_specs(registry, in_process_factory()); }

}  // namespace ib::cuda
