// Host (CPU) workloads: they let the whole pipeline run without a GPU, and CPU and memory-bandwidth
// neighbours are a real interference channel on shared machines.
#pragma once

#include "kernels/workload.h"

namespace ib {

void register_host_workloads(Registry& registry);

}  // namespace ib
