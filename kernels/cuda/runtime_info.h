// What this process runs on, for the device check's preflight and the microbenchmark's context:
// the CUDA runtime and driver versions, cuBLASLt's version (cublasLtGetVersion), the files the
// CUDA libraries were loaded from, where NCCL was found (or every place searched), and the GPUs.
// Plain C++ (CUDA runtime and cuBLASLt only); works without a GPU (the devices say why not).
#pragma once

#include <nlohmann/json.hpp>

namespace ib::cuda {

nlohmann::json runtime_info();

}  // namespace ib::cuda
