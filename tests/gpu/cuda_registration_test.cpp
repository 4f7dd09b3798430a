// The CUDA workloads' two halves agree: the specs every binary knows (kernels/cuda/cuda_specs.cpp) and the
// workloads the .cu files register (IB_CUDA_WORKLOAD, kernels/cuda/workload_registration.h), in this
// program and in the CUDA module the binary loads. No GPU needed.
#include "harness/exec/cuda_module_api.h"
#include "kernels/cuda/cuda_workloads.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

// Every spec add_cuda_workload_specs gives, with its default parameters (bound to a factory never called).
std::map<std::string, ib::Params> specs_with_defaults() {
  ib::Registry registry;
  ib::cuda::add_cuda_workload_specs(registry, ib::cuda::CudaFactory{});
  std::map<std::string, ib::Params> out;
  for (const auto* spec : registry.all()) {
    std::string error;
    const auto params = ib::validate_params(*spec, ib::Params::object(), error);
    EXPECT_TRUE(params.has_value()) << spec->name << ": " << error;
    out[spec->name] = params.value_or(ib::Params::object());
  }
  return out;
}

std::vector<std::string> spec_names() {
  std::vector<std::string> names;
  for (const auto& [name, params] : specs_with_defaults()) names.push_back(name);
  return names;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

bool unknown_to(const ib::Support& s) { return s.reason.find("no CUDA workload named") != std::string::npos; }

TEST(CudaRegistration, EverySpecHasARegisteredWorkloadAndEveryRegisteredWorkloadASpec) {
  const std::vector<std::string> specs = sorted(spec_names()), registered = sorted(ib::cuda::registered_workload_names());
  ASSERT_FALSE(specs.empty());
  std::vector<std::string> without_workload, without_spec;
  std::set_difference(specs.begin(), specs.end(), registered.begin(), registered.end(), std::back_inserter(without_workload));
  std::set_difference(registered.begin(), registered.end(), specs.begin(), specs.end(), std::back_inserter(without_spec));
  EXPECT_TRUE(without_workload.empty()) << "specs in cuda_specs.cpp whose .cu file registers no workload (IB_CUDA_WORKLOAD): "
                                        << ::testing::PrintToString(without_workload);
  EXPECT_TRUE(without_spec.empty()) << "workloads registered by a .cu file without a spec in cuda_specs.cpp: "
                                    << ::testing::PrintToString(without_spec);
}

TEST(CudaRegistration, EveryNameIsRegisteredOnce) {
  std::map<std::string, int> count;
  for (const auto& name : ib::cuda::registered_workload_names()) ++count[name];
  for (const auto& [name, n] : count) EXPECT_EQ(n, 1) << name << " is registered " << n << " times";
}

TEST(CudaRegistration, TheInProcessFactoryKnowsEverySpecAndNothingElse) {
  const ib::cuda::CudaFactory factory = ib::cuda::in_process_factory();
  const ib::ExecContext ctx;
  for (const auto& [name, params] : specs_with_defaults())
    EXPECT_FALSE(unknown_to(factory.supported(name, params, ctx))) << name;
  EXPECT_TRUE(unknown_to(factory.supported("no-such-workload", ib::Params::object(), ctx)));
  EXPECT_THROW(factory.create("no-such-workload", ib::Params::object()), ib::WorkloadError);
}

// The module is linked from object files, so a .cu file that only registers is in it too: loaded here as the
// binary loads it, its factory knows every spec's name.
TEST(CudaRegistration, TheModuleHasEveryWorkload) {
  void* handle = dlopen(IB_CUDA_MODULE_FILE, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  const auto entry = reinterpret_cast<ib::cuda_module::EntryPoint>(dlsym(handle, ib::cuda_module::kEntryPoint));
  ASSERT_NE(entry, nullptr) << dlerror();
  const ib::cuda_module::Api* api = entry();
  const ib::ExecContext ctx;
  for (const auto& [name, params] : specs_with_defaults())
    EXPECT_FALSE(unknown_to(api->supported(name, params, ctx))) << name << " is not in " << IB_CUDA_MODULE_FILE;
  EXPECT_TRUE(unknown_to(api->supported("no-such-workload", ib::Params::object(), ctx)));
  // Left loaded, as the binary leaves it (harness/exec/cuda_module.cpp never closes it).
}

}  // namespace
