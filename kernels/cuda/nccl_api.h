// NCCL, loaded at run time: the one place that declares the NCCL types and functions this project
// uses (allreduce, and train-step with gpus > 1).
//
// Why not link it: libnccl.so.2 is about 218 MB and lives in different places on different images
// (the CUDA toolkit, a PyTorch wheel's nvidia/nccl/lib, a user site, a venv). Linked at start-up, a
// program that cannot find it does not start at all, gemm and copy included. Loaded here only when a
// workload needs it, a missing NCCL waives exactly those workloads, with the places searched as the
// reason, and everything else runs.
//
// No nccl.h is needed to build: the few types below are NCCL 2.x's C ABI (an opaque communicator
// pointer and int-sized enums whose values have not changed within 2.x). The unit test compares them
// with nccl.h where that header is installed.
//
// Search order (SearchPlan), first hit wins:
//   1. $INTERFERENCE_BENCH_NCCL, when set: that file, or libnccl.so.2 in that folder, and nothing
//      else (so a test can point the search at an empty folder).
//   2. dlopen("libnccl.so.2") by name: LD_LIBRARY_PATH, the program's RUNPATH, /etc/ld.so.cache
//      (what `ldconfig -p` lists) and the default folders.
//   3. The CUDA toolkit: $CUDA_HOME, $CUDA_PATH, /usr/local/cuda, /usr/local/cuda-* (newest first).
//   4. Python site folders, found by globbing (no Python is run): $VIRTUAL_ENV, $CONDA_PREFIX, the
//      prefix of every python3 on $PATH, the user site (~/.local), the system's (/usr/local/lib,
//      /usr/lib, /usr/lib64) and /opt/*/ and /opt/*/.venv prefixes; in each, nvidia/*/lib (the
//      nvidia-nccl wheels PyTorch depends on) and torch/lib.
// Library records where it was found, or every place tried and why it failed.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <vector>

struct ncclComm;  // NCCL's opaque communicator (nccl.h: typedef struct ncclComm* ncclComm_t)

namespace ib::cuda::nccl {

using Comm = ::ncclComm*;

// NCCL 2.x's ncclResult_t, ncclDataType_t and ncclRedOp_t values (only those used here).
enum class Result : int {
  success = 0,
  unhandled_cuda_error = 1,
  system_error = 2,
  internal_error = 3,
  invalid_argument = 4,
  invalid_usage = 5,
  remote_error = 6,
  in_progress = 7,
  timeout = 8,  // NCCL >= 2.28
};
enum class DataType : int { int32 = 2, float32 = 7, bfloat16 = 9 };
enum class RedOp : int { sum = 0, min = 3 };

// ncclUniqueId: the bootstrap root's address, published by rank 0 (nccl.h: NCCL_UNIQUE_ID_BYTES = 128).
struct UniqueId {
  char internal[128];
};

// ncclConfig_t as NCCL 2.17 laid it out (the fields up to splitShare; nccl.h's later versions append).
// NCCL reads `size` bytes of it and knows the layout from `version`, so this prefix stays valid for newer
// libraries, as it does for programs compiled against 2.17's header. kUndefined is NCCL_CONFIG_UNDEF_INT.
struct ConfigV21700 {
  static constexpr int kUndefined = -2147483647 - 1;
  std::size_t size = sizeof(ConfigV21700);
  unsigned int magic = 0xcafebeef;
  unsigned int version = 21700;
  int blocking = kUndefined;
  int cga_cluster_size = kUndefined;
  int min_ctas = kUndefined;
  int max_ctas = kUndefined;
  const char* net_name = nullptr;
  int split_share = kUndefined;
};

// "ncclInvalidUsage" etc.; "ncclResult <n>" for a value this table does not know.
std::string result_name(Result r);

// The resolved functions. All are required except get_last_error (NCCL >= 2.13) and those a tenant with
// ranks needs (get_unique_id, comm_init_rank_config, comm_get_async_error and comm_finalize: NCCL >= 2.14),
// which nccl_comm.h's init_rank asks for.
struct Api {
  Result (*get_version)(int* version) = nullptr;
  const char* (*get_error_string)(Result r) = nullptr;
  const char* (*get_last_error)(Comm comm) = nullptr;
  Result (*comm_init_all)(Comm* comms, int ndev, const int* devlist) = nullptr;
  Result (*comm_destroy)(Comm comm) = nullptr;
  Result (*comm_abort)(Comm comm) = nullptr;
  Result (*group_start)() = nullptr;
  Result (*group_end)() = nullptr;
  Result (*all_reduce)(const void* send, void* recv, std::size_t count, DataType type, RedOp op, Comm comm,
                       cudaStream_t stream) = nullptr;
  Result (*get_unique_id)(UniqueId* id) = nullptr;
  Result (*comm_init_rank_config)(Comm* comm, int nranks, UniqueId id, int rank, ConfigV21700* config) = nullptr;
  Result (*comm_get_async_error)(Comm comm, Result* error) = nullptr;
  Result (*comm_finalize)(Comm comm) = nullptr;
};

// What the search reads from the environment; explicit so that tests can give their own.
struct SearchInputs {
  std::string override_path;  // $INTERFERENCE_BENCH_NCCL
  std::string cuda_home, cuda_path, home, path, virtual_env, conda_prefix;
};
SearchInputs search_inputs_from_environment();

struct SearchPlan {
  bool by_name = true;                  // step 2: dlopen("libnccl.so.2") through the loader's own search
  std::vector<std::string> candidates;  // then these files, in order (existing files only, no duplicates)
  std::vector<std::string> folders;     // every folder looked in, for the record
};
// Globs the file system for the candidates of steps 1, 3 and 4.
SearchPlan search_plan(const SearchInputs& in);

// One loaded libnccl.so.2 (RAII: the handle is released with the object). Loaded with RTLD_NODELETE:
// NCCL keeps proxy threads and process-wide state, so the library stays mapped for the life of the
// process even after the last handle is closed; loading it again (another workload, another phase)
// finds it already there.
class Library {
 public:
  // Never throws: a library that was not found or lacks a function is !ok() with the reason.
  static Library load(const SearchPlan& plan);
  static Library load_from_environment() { return load(search_plan(search_inputs_from_environment())); }

  Library() = default;
  ~Library();
  Library(Library&& other) noexcept;
  Library& operator=(Library&& other) noexcept;
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  bool ok() const { return handle_ != nullptr; }
  const Api& api() const { return api_; }
  const std::string& path() const { return path_; }    // the file loaded (resolved), when ok()
  const std::string& found_by() const { return how_; }  // "by name (...)" or "candidate"
  int version() const { return version_; }              // NCCL_VERSION_CODE, e.g. 22809 for 2.28.9
  std::string version_text() const;                     // "2.28.9"
  // Why it is not loaded: every place tried and what happened there.
  const std::string& error() const { return error_; }
  // One line for logs and waivers: where it came from, or why it is missing.
  std::string describe() const;
  // NCCL's own description of the last error of this thread (ncclGetLastError), or "".
  std::string last_error(Comm comm = nullptr) const;

 private:
  void* handle_ = nullptr;
  Api api_;
  std::string path_, how_, error_;
  int version_ = 0;
};

// The reason a workload that needs NCCL is waived when it was not found.
std::string not_found_reason(const Library& lib, const std::string& workload);

}  // namespace ib::cuda::nccl
