// What allreduce and train-step (gpus > 1) share about NCCL: whether it can be used here
// (support_for: a waiver with the reason when not), and communicators with NCCL's own reason when
// their creation fails (init_all).
#pragma once

#include "kernels/cuda/nccl_api.h"
#include "kernels/workload.h"

#include <chrono>
#include <string>
#include <vector>

namespace ib::cuda::nccl {

// How this process reaches the GPU, read from the environment.
struct Placement {
  // An MPS control daemon answers in this process's pipe folder ($CUDA_MPS_PIPE_DIRECTORY, else
  // /tmp/nvidia-mps, holds its `control` pipe): CUDA makes the process an MPS client. The harness
  // points phases without MPS at an empty folder, so there this is false.
  bool mps_client = false;
  // CUDA_VISIBLE_DEVICES names a MIG instance (MIG-<uuid>), as the harness's mig mode places tenants.
  bool mig_instance = false;
  // IB_RANKS_SHARE_GPU=1: the harness placed another rank of this tenant on this process's GPU.
  bool shares_gpu = false;
};
Placement placement_from_environment();

// Sets NCCL_CUMEM_ENABLE=0 for an MPS client when the caller has not set it (returns true when it
// did). NCCL reads its parameters once per process, at its first call, so this must come before any
// NCCL call; setenv is done while no other thread of the workload runs NCCL. Assumption, not
// verified on a GPU here: NCCL >= 2.19 allocates with the cuMem* virtual-memory API by default,
// which MPS clients do not always support; 0 makes it use cudaMalloc as before.
bool prepare_environment(const Placement& where);

// Several ranks of one communicator on one GPU (docs/design.md section 7): NCCL before 2.30 refuses them ("Duplicate
// GPU detected"); 2.30 and later allow them behind NCCL_MULTI_RANK_GPU_ENABLE=1 (experimental). Ranks on MIG
// instances of one GPU are several ranks on one GPU to NCCL too (it identifies a rank by the parent GPU's bus
// id, and still wants NCCL_MULTI_RANK_GPU_ENABLE=1); it supports them from 2.31 (experimental, over host shared
// memory). The waiver's reason for NCCL `version` (NCCL_VERSION_CODE; `text` as "2.28.9") with this process
// on a MIG instance or not, or "" when it can.
constexpr int kMultiRankGpuVersion = 23000;
constexpr int kMultiRankMigVersion = 23100;
std::string ranks_on_one_gpu_refusal(int version, const std::string& text, const std::string& workload, bool on_mig);
// NCCL_NVLS_ENABLE=1 set by the user makes NCCL 2.31 abort a communicator with several ranks on one GPU
// ("communicator has multiple ranks using the same NVML device", reported on an H200 with MIG, NVIDIA/nccl
// issue 1716): the waiver's reason for the value `nvls` of that variable (nullptr: unset), or "".
std::string nvls_refusal(const char* nvls, const std::string& workload);
// Both for the loaded `lib`; when it can, also sets NCCL_MULTI_RANK_GPU_ENABLE=1 for this process (unless the
// user set it), which NCCL reads at its first initialisation, so before any communicator is made.
std::string allow_ranks_on_one_gpu(const Library& lib, const std::string& workload, bool on_mig);

// Loads NCCL (waived with the places searched when it is missing). As an MPS client or on a MIG
// instance it also creates and destroys one communicator over `devices`: NCCL's initialisation can
// fail there for reasons of the platform (no cuMem/memory pools under MPS, no peer access on a
// slice), which is a waiver with NCCL's reason, not a failure of the workload.
Support support_for(const std::string& workload, const std::vector<int>& devices);

// ncclCommInitAll over `devices`; throws WorkloadError with NCCL's last error when it fails.
std::vector<Comm> init_all(const Library& lib, const std::vector<int>& devices);

// NCCL's non-blocking API, which every communicator of init_rank uses (blocking = 0, for the deadlines NCCL
// lacks). A call on such a communicator may return ncclInProgress: ncclCommInitRankConfig, ncclGroupEnd, a
// collective outside a group (its implicit group ends inside it) and ncclCommFinalize do. Until
// ncclCommGetAsyncError says the communicator left that state, no NCCL call on it and no CUDA work on its
// streams may be issued (NCCL's docs of ncclCommGetAsyncError; NCCL's ncclCommEnsureReady refuses such a call
// with ncclInvalidArgument, and an event recorded meanwhile lands before NCCL's kernels).
// settle: `call` is what the call returned. Its error when it failed; otherwise polls the communicator's state
// until it leaves ncclInProgress or `deadline` passes: ncclSuccess when ready, the state's error, or
// ncclInProgress when the deadline came first (the caller aborts). Spins for the first millisecond (a
// collective's launch takes microseconds; a sleep would starve a GPU waiting for the next one), then sleeps
// 50 us a poll.
Result settle(const Library& lib, Comm comm, Result call, std::chrono::steady_clock::time_point deadline);

// One rank of a communicator whose ranks are processes (a tenant with `ranks`, docs/design.md "Collectives"), on
// the current device. Rank 0 makes NCCL's unique id (its process hosts NCCL's bootstrap root) and
// publishes it through the harness's rendezvous; every rank reads it and joins with
// ncclCommInitRankConfig, non-blocking (blocking = 0), settled under `timeout_s`. Past it (a rank that never
// joined) the communicator is aborted and WorkloadError names this rank, the world and the wait; an NCCL
// error names NCCL's reason. Needs NCCL >= 2.14.
Comm init_rank(const Library& lib, const RankInfo& rank, Rendezvous& rendezvous, double timeout_s);

// Tears down a communicator of init_rank: ncclCommFinalize (an intra-node collective: it waits for the node's
// other ranks to finalize too) settled under `timeout_s`, then ncclCommDestroy, which is then local. A
// communicator in an error state, or one whose finalize failed or outlived the deadline, is aborted
// instead (NCCL's docs: after an error, ncclCommAbort). Never throws (a teardown path); returns "" when it
// finalized, otherwise what happened, for the log.
std::string close_rank(const Library& lib, Comm comm, double timeout_s);

// NCCL's asynchronous error of `comm` (ncclCommGetAsyncError): success while it is healthy (or still
// initialising), otherwise the error (a peer that died, a network failure).
Result async_error(const Library& lib, Comm comm);

}  // namespace ib::cuda::nccl
