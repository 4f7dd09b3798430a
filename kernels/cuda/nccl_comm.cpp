#include "kernels/cuda/nccl_comm.h"

#include "kernels/cuda/cuda_check.h"

#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace ib::cuda::nccl {

Placement placement_from_environment() {
  Placement p;
  const char* pipe = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
  const std::string control = std::string(pipe && *pipe ? pipe : "/tmp/nvidia-mps") + "/control";
  struct stat st {};
  p.mps_client = ::stat(control.c_str(), &st) == 0;
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  p.mig_instance = visible && std::strstr(visible, "MIG-") != nullptr;
  const char* shared = std::getenv("IB_RANKS_SHARE_GPU");
  p.shares_gpu = shared && std::string(shared) == "1";
  return p;
}

std::string ranks_on_one_gpu_refusal(int version, const std::string& text, const std::string& workload, bool on_mig) {
  if (version >= (on_mig ? kMultiRankMigVersion : kMultiRankGpuVersion)) return "";
  if (!on_mig || version < kMultiRankGpuVersion)
    return workload + ": this tenant places two of its ranks on one GPU" + (on_mig ? " (on MIG instances of it)" : "") +
           ", which NCCL " + text + " refuses (\"Duplicate GPU detected\"): NCCL " + (on_mig ? "2.31" : "2.30") +
           " or later allows it with NCCL_MULTI_RANK_GPU_ENABLE=1 (experimental); or give each rank its own GPU" +
           (on_mig ? " (a whole one: mode timeslice or mps with rank_placements)" : " (rank_placements)");
  return workload + ": this tenant places its ranks on MIG instances of one GPU, which NCCL " + text +
         " refuses (\"Multiple Ranks are using the same GPU/Partition\"): NCCL 2.31 or later supports ranks across "
         "MIG instances (experimental, over host shared memory, no P2P or NVLink); or give each rank a whole GPU";
}

std::string nvls_refusal(const char* nvls, const std::string& workload) {
  if (!nvls || std::string(nvls) != "1") return "";
  return workload + ": NCCL_NVLS_ENABLE=1 is set, and NCCL aborts a communicator with several ranks on one GPU "
                    "then (\"communicator has multiple ranks using the same NVML device\"): unset it (the default, 2, "
                    "lets NCCL decide)";
}

std::string allow_ranks_on_one_gpu(const Library& lib, const std::string& workload, bool on_mig) {
  std::string why = ranks_on_one_gpu_refusal(lib.version(), lib.version_text(), workload, on_mig);
  if (why.empty()) why = nvls_refusal(std::getenv("NCCL_NVLS_ENABLE"), workload);
  if (why.empty()) ::setenv("NCCL_MULTI_RANK_GPU_ENABLE", "1", 0);
  return why;
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

namespace {

std::string failure(const Library& lib, Result r) {
  const std::string detail = lib.last_error();
  return result_name(r) + (detail.empty() ? "" : " (" + detail + ")");
}

}  // namespace

Result async_error(const Library& lib, Comm comm) {
  Result state = Result::success;
  const Result r = lib.api().comm_get_async_error(comm, &state);
  if (r != Result::success) return r;
  return state == Result::in_progress ? Result::success : state;
}

Result settle(const Library& lib, Comm comm, Result call, std::chrono::steady_clock::time_point deadline) {
  if (call != Result::success && call != Result::in_progress) return call;
  if (!comm) return Result::invalid_argument;
  const auto spin_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
  for (;;) {
    Result state = Result::in_progress;
    if (const Result r = lib.api().comm_get_async_error(comm, &state); r != Result::success) return r;
    if (state != Result::in_progress) return state;
    const auto now = std::chrono::steady_clock::now();
    if (now > deadline) return Result::in_progress;
    if (now < spin_until)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

namespace {

std::chrono::steady_clock::time_point deadline_in(double seconds) {
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
}

// Rank 0 makes NCCL's unique id and publishes it; the others read it (waiting up to timeout_s).
UniqueId unique_id(const Library& lib, const RankInfo& rank, Rendezvous& rendezvous, double timeout_s,
                   const std::string& who) {
  const char* kKey = "nccl/unique_id";
  UniqueId id{};
  if (rank.rank == 0) {
    if (const Result r = lib.api().get_unique_id(&id); r != Result::success)
      throw WorkloadError(who + ": ncclGetUniqueId failed: " + failure(lib, r));
    rendezvous.put(kKey, std::string(id.internal, sizeof(id.internal)));
    return id;
  }
  const std::string bytes = rendezvous.get(kKey, timeout_s);
  if (bytes.size() != sizeof(id.internal))
    throw WorkloadError(who + ": rank 0 published " + std::to_string(bytes.size()) + " bytes as NCCL's unique id");
  std::memcpy(id.internal, bytes.data(), sizeof(id.internal));
  return id;
}

}  // namespace

Comm init_rank(const Library& lib, const RankInfo& rank, Rendezvous& rendezvous, double timeout_s) {
  const Api& api = lib.api();
  if (!api.get_unique_id || !api.comm_init_rank_config || !api.comm_get_async_error || !api.comm_finalize)
    throw WorkloadError("a tenant with ranks needs NCCL >= 2.14 (ncclCommInitRankConfig, ncclCommGetAsyncError, "
                        "ncclCommFinalize); " + lib.describe());
  const std::string who = "rank " + std::to_string(rank.rank) + " of " + std::to_string(rank.world_size);
  const UniqueId id = unique_id(lib, rank, rendezvous, timeout_s, who);
  ConfigV21700 config;
  config.blocking = 0;  // returns at once (ncclInProgress): settle's deadline is one NCCL lacks
  Comm comm = nullptr;
  const Result call = api.comm_init_rank_config(&comm, rank.world_size, id, rank.rank, &config);
  const Result r = comm ? settle(lib, comm, call, deadline_in(timeout_s)) : call;
  if (r == Result::success && comm) return comm;
  const std::string why = failure(lib, r);
  if (comm) (void)api.comm_abort(comm);
  if (r == Result::in_progress)
    throw WorkloadError(who + ": the NCCL communicator was not ready within timeout_s " + std::to_string(timeout_s) +
                        " s (a rank that never joined?); aborted (ncclCommAbort)");
  throw WorkloadError(who + ": ncclCommInitRankConfig failed: " + why + "; " + lib.describe());
}

std::string close_rank(const Library& lib, Comm comm, double timeout_s) {
  if (!comm) return "";
  const Api& api = lib.api();
  Result r = async_error(lib, comm);
  if (r == Result::success) r = settle(lib, comm, api.comm_finalize(comm), deadline_in(timeout_s));
  if (r == Result::success) {
    if (const Result d = api.comm_destroy(comm); d != Result::success)
      return "ncclCommDestroy after ncclCommFinalize returned " + failure(lib, d);
    return "";
  }
  const std::string why = r == Result::in_progress
                              ? "ncclCommFinalize did not finish within " + std::to_string(timeout_s) +
                                    " s (a rank that never finalized?)"
                              : "the communicator was in error: " + failure(lib, r);
  (void)api.comm_abort(comm);
  return why + "; aborted (ncclCommAbort)";
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
