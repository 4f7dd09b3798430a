// The CUDA module's interface: libinterference-bench-cuda.so holds the CUDA workloads and executor
// (kernels/cuda, harness/exec/cuda_executor.cpp) and exports one function, ib_cuda_module_api, that
// hands the binary this table. The binary loads it only when a CUDA backend is asked for
// (harness/exec/cuda_module.h), so it starts, and runs everything else, without the CUDA libraries.
// Both sides pass C++ objects (strings, JSON, unique_ptrs), so they must come from one build: the
// binary refuses a module whose build key differs from its own.
#pragma once

#include "harness/exec/executor.h"
#include "kernels/cuda/cuda_specs.h"
#include "kernels/workload.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>

namespace ib::cuda_module {

// Bumped whenever Api changes.
inline constexpr int kAbiVersion = 1;
inline constexpr const char* kFileName = "libinterference-bench-cuda.so";
inline constexpr const char* kEntryPoint = "ib_cuda_module_api";

struct Api {
  int abi_version = 0;
  const char* build_key = nullptr;  // build_key() of the module's build
  Availability (*availability)(int device) = nullptr;
  Support (*supported)(const std::string& workload, const Params& params, const ExecContext& ctx) = nullptr;
  std::unique_ptr<Workload> (*create)(const std::string& workload, const Params& params) = nullptr;
  std::unique_ptr<Executor> (*make_executor)(int device) = nullptr;
};

// What must match for C++ objects to cross between binary and module: the ABI version, the tool's
// version and commit, the compiler and the library versions whose types cross.
inline std::string build_key(const char* version, const char* git_sha) {
  return std::to_string(kAbiVersion) + " " + version + " " + git_sha + " gcc-abi " +
         std::to_string(__GXX_ABI_VERSION) + " glibcxx " + std::to_string(__GLIBCXX__) + " json " +
         std::to_string(NLOHMANN_JSON_VERSION_MAJOR) + "." + std::to_string(NLOHMANN_JSON_VERSION_MINOR) + "." +
         std::to_string(NLOHMANN_JSON_VERSION_PATCH);
}

using EntryPoint = const Api* (*)();

}  // namespace ib::cuda_module

namespace ib::cuda {

// The CUDA executor itself (cuda_executor.cpp), in the module and in programs linked with the
// workloads: throws WorkloadError when the device cannot be used.
std::unique_ptr<Executor> make_executor(int device);

}  // namespace ib::cuda
