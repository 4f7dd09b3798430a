// Stand-ins linked when the tool is built without the CUDA toolkit (IB_WITH_CUDA=OFF or no nvcc).
#include "kernels/cuda/cuda_workloads.h"

namespace ib {

void register_cuda_workloads(Registry&) {}

std::optional<std::string> cuda_unavailable_reason(int) {
  return std::string("this build of interference-bench has no CUDA support (configured without nvcc)");
}

}  // namespace ib
