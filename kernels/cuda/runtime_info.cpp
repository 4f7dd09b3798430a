#include "kernels/cuda/runtime_info.h"

#include "kernels/cuda/cuda_workloads.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/nccl_api.h"

#include <link.h>

#include <string>
#include <vector>

namespace ib::cuda {

namespace {

// Files of the loaded CUDA libraries (cudart, cuBLAS, cuBLASLt, the driver's libcuda), from the
// dynamic loader's list of loaded objects.
nlohmann::json loaded_cuda_libraries() {
  std::vector<std::string> paths;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        const std::string name = info->dlpi_name ? info->dlpi_name : "";
        for (const char* lib : {"/libcudart.so", "/libcublas.so", "/libcublasLt.so", "/libcuda.so", "/libnccl.so"})
          if (name.find(lib) != std::string::npos) static_cast<std::vector<std::string>*>(data)->push_back(name);
        return 0;
      },
      &paths);
  return paths;
}

nlohmann::json nccl_info() {
  const nccl::SearchPlan plan = nccl::search_plan(nccl::search_inputs_from_environment());
  const nccl::Library lib = nccl::Library::load(plan);
  nlohmann::json j = {{"found", lib.ok()}, {"describe", lib.describe()}, {"searched_folders", plan.folders},
                      {"candidates", plan.candidates}, {"by_name_first", plan.by_name}};
  if (lib.ok()) {
    j["path"] = lib.path();
    j["version"] = lib.version_text();
    j["found_by"] = lib.found_by();
  } else {
    j["error"] = lib.error();
  }
  return j;
}

nlohmann::json devices() {
  const Availability first = device_availability(0);
  if (first.state == Availability::State::no_gpu) return {{"count", 0}, {"reason", first.reason}};
  int count = 0;
  IB_CHECK(cudaGetDeviceCount(&count));
  nlohmann::json list = nlohmann::json::array();
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp p{};
    IB_CHECK(cudaGetDeviceProperties(&p, d));
    list.push_back({{"index", d},
                    {"name", p.name},
                    {"compute_capability", std::to_string(p.major) + "." + std::to_string(p.minor)},
                    {"sms", p.multiProcessorCount},
                    {"memory_bytes", p.totalGlobalMem},
                    {"l2_bytes", p.l2CacheSize},
                    {"built_architectures", IB_CUDA_ARCHITECTURES},
                    {"refused", d == 0 ? first.reason : device_availability(d).reason}});
  }
  return {{"count", count}, {"list", list}};
}

}  // namespace

nlohmann::json runtime_info() {
  int runtime = 0, driver = 0;
  const cudaError_t re = cudaRuntimeGetVersion(&runtime);
  const cudaError_t de = cudaDriverGetVersion(&driver);  // 0 when no driver is installed
  nlohmann::json j;
  j["cuda_runtime_version"] = re == cudaSuccess ? nlohmann::json(runtime) : nlohmann::json(cudaGetErrorString(re));
  j["cuda_driver_version"] = de == cudaSuccess ? nlohmann::json(driver) : nlohmann::json(cudaGetErrorString(de));
  j["cublasLt_version"] = cublasLtGetVersion();
  j["cublasLt_cudart_version"] = cublasLtGetCudartVersion();
  j["devices"] = devices();  // before the library list: the first CUDA call loads libcuda
  j["loaded_libraries"] = loaded_cuda_libraries();
  j["nccl"] = nccl_info();
  return j;
}

}  // namespace ib::cuda
