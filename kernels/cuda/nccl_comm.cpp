#include "kernels/cuda/nccl_comm.h"

#include "kernels/cuda/cuda_check.h"

#include <sys/stat.h>

#include <cstdlib>
#include <cstring>

namespace ib::cuda::nccl {

Placement placement_from_environment() {
  Placement p;
  const char* pipe = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
  const std::string control = std::string(pipe && *pipe ? pipe : "/tmp/nvidia-mps") + "/control";
  struct stat st {};
  p.mps_client = ::stat(control.c_str(), &st) == 0;
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  p.mig_instance = visible && std::strstr(visible, "MIG-") != nullptr;
  return p;
}

bool prepare_environment(const Placement& where) {
  if (!where.mps_client || std::getenv("NCCL_CUMEM_ENABLE")) return false;
  return ::setenv("NCCL_CUMEM_ENABLE", "0", 0) == 0;
}

std::vector<Comm> init_all(const Library& lib, const std::vector<int>& devices) {
  std::vector<Comm> comms(devices.size(), nullptr);
  const Result r = lib.api().comm_init_all(comms.data(), static_cast<int>(devices.size()), devices.data());
  if (r != Result::success) {
    const std::string detail = lib.last_error();
    throw WorkloadError("ncclCommInitAll over " + std::to_string(devices.size()) + " GPU(s) failed: " +
                        result_name(r) + (detail.empty() ? "" : " (" + detail + ")") + "; " + lib.describe());
  }
  return comms;
}

Support support_for(const std::string& workload, const std::vector<int>& devices) {
  const Placement where = placement_from_environment();
  const bool cumem_off = prepare_environment(where);
  const Library lib = Library::load_from_environment();
  if (!lib.ok()) return {false, not_found_reason(lib, workload)};
  if (!where.mps_client && !where.mig_instance) return {};
  int caller = 0;
  IB_CHECK(cudaGetDevice(&caller));  // ncclCommInitAll switches devices
  std::string why;
  try {
    for (Comm c : init_all(lib, devices))
      if (c) (void)lib.api().comm_destroy(c);  // best effort: the probe's only job was to create it
  } catch (const WorkloadError& e) {
    why = e.what();
  }
  IB_CHECK(cudaSetDevice(caller));
  if (why.empty()) return {};
  return {false, workload + ": NCCL cannot create a communicator " +
                     (where.mps_client ? std::string("as an MPS client") : std::string("inside a MIG instance")) +
                     (cumem_off ? " (with NCCL_CUMEM_ENABLE=0, set for MPS)" : "") + ": " + why};
}

}  // namespace ib::cuda::nccl
