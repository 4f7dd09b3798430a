// NVML, loaded at run time (dlopen of libnvidia-ml.so.1, or the library named by
// $INTERFERENCE_BENCH_NVML, which tests point at the project's fake NVML). The binary starts and every
// non-GPU command works where there is no NVML. Only the calls the harness needs are bound; every
// return code is checked and turned into a message naming the call and nvmlErrorString.
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ib {

class NvmlError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct MigInstance {
  int index = 0;               // position in the enumeration (sorted by GPU instance id, then compute instance id)
  unsigned gpu_instance_id = 0;
  unsigned compute_instance_id = 0;
  std::string profile;         // e.g. "1g.18gb" (from the MIG device name)
  std::string name;            // full MIG device name, e.g. "NVIDIA H200 MIG 1g.18gb"
  std::string uuid;            // "MIG-..." as CUDA_VISIBLE_DEVICES wants it
  unsigned sm_count = 0;
  unsigned long long memory_bytes = 0;
};

struct MigModeState {
  bool current = false;
  bool pending = false;
};

// NVML compute modes (nvmlComputeMode_t).
enum class ComputeMode { default_mode = 0, exclusive_thread = 1, prohibited = 2, exclusive_process = 3, unknown = -1 };
const char* compute_mode_name(ComputeMode m);

// A MIG GPU instance + compute instance pair created by --mig-create (destroyed by the harness).
struct CreatedMigInstance {
  std::string profile;
  unsigned gpu_instance_id = 0;
  unsigned compute_instance_id = 0;
};

class Nvml {
 public:
  // Loads and initialises NVML; throws NvmlError with a clear reason when the library is missing
  // or nvmlInit fails.
  static std::unique_ptr<Nvml> load();
  virtual ~Nvml() = default;

  virtual std::string library_path() const = 0;
  virtual unsigned device_count() = 0;
  virtual std::string device_name(unsigned device) = 0;
  virtual std::string device_uuid(unsigned device) = 0;
  virtual ComputeMode compute_mode(unsigned device) = 0;
  // MIG mode; nullopt when the GPU does not support MIG (NVML_ERROR_NOT_SUPPORTED).
  virtual std::optional<MigModeState> mig_mode(unsigned device) = 0;
  // The MIG devices (GPU instance + compute instance) that exist on `device`, in index order.
  virtual std::vector<MigInstance> mig_instances(unsigned device) = 0;
  // Creates one GPU instance of `profile` (e.g. "1g.18gb") and one compute instance spanning it.
  // Throws NvmlError (unknown profile, no capacity, permission).
  virtual CreatedMigInstance create_mig_instance(unsigned device, const std::string& profile) = 0;
  // Destroys exactly that compute instance and its GPU instance. Throws NvmlError.
  virtual void destroy_mig_instance(unsigned device, const CreatedMigInstance& instance) = 0;
};

}  // namespace ib
