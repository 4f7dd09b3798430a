// Stand-in linked when the tool is built without the CUDA toolkit (IB_WITH_CUDA=OFF or no nvcc).
#include "harness/exec/executor.h"
#include "kernels/cuda/cuda_workloads.h"

namespace ib {

std::unique_ptr<Executor> make_cuda_executor(int device) {
  throw WorkloadError(*cuda_unavailable_reason(device));
}

}  // namespace ib
