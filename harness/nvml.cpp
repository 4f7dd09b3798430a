// NVML bound at run time with dlopen/dlsym (see nvml.h). The few NVML types and entry points used here are
// declared below from NVML's public API documentation, because the CUDA toolkit does not ship nvml.h and
// the binary must start where there is no driver.
#include "harness/nvml.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <utility>

// ---- NVML ABI (public API, C linkage; only what this file uses) ----
extern "C" {
// nvmlReturn_t and nvmlComputeMode_t are C enums (4 bytes, returned/passed like int); plain int here so that
// codes this file does not name (999 = NVML_ERROR_UNKNOWN, ...) stay well-defined values.
typedef int nvmlReturn_t;
typedef int nvmlComputeMode_t;

typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlGpuInstance_st* nvmlGpuInstance_t;
typedef struct nvmlComputeInstance_st* nvmlComputeInstance_t;

typedef struct {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

typedef struct {
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
  unsigned int gpuInstanceSliceCount;
  unsigned int computeInstanceSliceCount;
  unsigned long long memorySizeMB;
} nvmlDeviceAttributes_t;

typedef struct {
  unsigned int id;
  unsigned int isP2pSupported;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int copyEngineCount;
  unsigned int decoderCount;
  unsigned int encoderCount;
  unsigned int jpegCount;
  unsigned int ofaCount;
  unsigned long long memorySizeMB;
} nvmlGpuInstanceProfileInfo_t;

typedef struct {
  unsigned int version;  // sizeof(this) | (2 << 24)
  unsigned int id;
  unsigned int isP2pSupported;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int copyEngineCount;
  unsigned int decoderCount;
  unsigned int encoderCount;
  unsigned int jpegCount;
  unsigned int ofaCount;
  unsigned long long memorySizeMB;
  char name[96];  // NVML_DEVICE_NAME_V2_BUFFER_SIZE, e.g. "MIG 1g.18gb"
} nvmlGpuInstanceProfileInfo_v2_t;

typedef struct {
  unsigned int id;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
} nvmlComputeInstanceProfileInfo_t;

typedef struct {
  unsigned int start;
  unsigned int size;
} nvmlInstancePlacement_t;  // nvmlGpuInstancePlacement_t / nvmlComputeInstancePlacement_t

typedef struct {
  nvmlDevice_t device;
  unsigned int id;
  unsigned int profileId;
  nvmlInstancePlacement_t placement;
} nvmlGpuInstanceInfo_t;

typedef struct {
  nvmlDevice_t device;
  nvmlGpuInstance_t gpuInstance;
  unsigned int id;
  unsigned int profileId;
  nvmlInstancePlacement_t placement;
} nvmlComputeInstanceInfo_t;
}  // extern "C"

namespace ib {

const char* compute_mode_name(ComputeMode m) {
  switch (m) {
    case ComputeMode::default_mode: return "Default";
    case ComputeMode::exclusive_thread: return "Exclusive_Thread";
    case ComputeMode::prohibited: return "Prohibited";
    case ComputeMode::exclusive_process: return "Exclusive_Process";
    case ComputeMode::unknown: break;
  }
  return "Unknown";
}

namespace {

constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr nvmlReturn_t NVML_ERROR_INVALID_ARGUMENT = 2;
constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
constexpr nvmlReturn_t NVML_ERROR_NOT_FOUND = 6;

constexpr unsigned kNameBuffer = 96;   // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned kUuidBuffer = 96;   // NVML_DEVICE_UUID_V2_BUFFER_SIZE
constexpr unsigned kProfileIndexLimit = 32;          // beyond every NVML_GPU/COMPUTE_INSTANCE_PROFILE_COUNT so far
constexpr unsigned kComputeEngineProfileShared = 0;  // NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED

// "NVIDIA H200 MIG 1g.18gb" -> "1g.18gb"; "MIG 1g.18gb" -> "1g.18gb".
std::string profile_from_name(const std::string& name) {
  const std::string marker = "MIG ";
  auto pos = name.rfind(marker);
  if (pos == std::string::npos) return name;
  return name.substr(pos + marker.size());
}

class DlNvml final : public Nvml {
 public:
  DlNvml(void* lib, std::string path) : lib_(lib), path_(std::move(path)) {
    bind("nvmlInit_v2", init_);
    bind("nvmlShutdown", shutdown_);
    bind("nvmlErrorString", error_string_);
    bind("nvmlDeviceGetCount_v2", get_count_);
    bind("nvmlDeviceGetHandleByIndex_v2", get_handle_);
    bind("nvmlDeviceGetName", get_name_);
    bind("nvmlDeviceGetUUID", get_uuid_);
    bind("nvmlDeviceGetComputeMode", get_compute_mode_);
    bind("nvmlDeviceGetMigMode", get_mig_mode_);
    bind("nvmlDeviceGetMaxMigDeviceCount", get_max_mig_count_);
    bind("nvmlDeviceGetMigDeviceHandleByIndex", get_mig_handle_);
    bind("nvmlDeviceGetGpuInstanceId", get_gi_id_);
    bind("nvmlDeviceGetComputeInstanceId", get_ci_id_);
    bind("nvmlDeviceGetMemoryInfo", get_memory_);
    bind("nvmlDeviceGetAttributes_v2", get_attributes_);
    bind("nvmlDeviceGetGpuInstanceProfileInfoV", gi_profile_info_v_);
    bind("nvmlDeviceGetGpuInstanceProfileInfo", gi_profile_info_);
    bind("nvmlDeviceCreateGpuInstance", create_gi_);
    bind("nvmlDeviceGetGpuInstanceById", get_gi_by_id_);
    bind("nvmlGpuInstanceGetInfo", gi_get_info_);
    bind("nvmlGpuInstanceGetComputeInstanceProfileInfo", ci_profile_info_);
    bind("nvmlGpuInstanceCreateComputeInstance", create_ci_);
    bind("nvmlGpuInstanceGetComputeInstanceById", get_ci_by_id_);
    bind("nvmlComputeInstanceGetInfo_v2", ci_get_info_);
    if (!ci_get_info_) bind("nvmlComputeInstanceGetInfo", ci_get_info_);
    bind("nvmlComputeInstanceDestroy", destroy_ci_);
    bind("nvmlGpuInstanceDestroy", destroy_gi_);

    if (!init_ || !shutdown_ || !error_string_) {
      std::string missing = !init_ ? "nvmlInit_v2" : !shutdown_ ? "nvmlShutdown" : "nvmlErrorString";
      dlclose(lib_);
      throw NvmlError("NVML not available: " + path_ + " does not export " + missing);
    }
    nvmlReturn_t rc = init_();
    if (rc != NVML_SUCCESS) {
      std::string msg = message("nvmlInit_v2", rc);
      dlclose(lib_);
      throw NvmlError(msg);
    }
  }

  ~DlNvml() override {
    shutdown_();  // nothing useful to do with a failure here
    dlclose(lib_);
  }

  DlNvml(const DlNvml&) = delete;
  DlNvml& operator=(const DlNvml&) = delete;

  std::string library_path() const override { return path_; }

  unsigned device_count() override {
    unsigned n = 0;
    check("nvmlDeviceGetCount_v2", need(get_count_, "nvmlDeviceGetCount_v2")(&n));
    return n;
  }

  std::string device_name(unsigned device) override { return name_of(handle(device)); }

  std::string device_uuid(unsigned device) override { return uuid_of(handle(device)); }

  ComputeMode compute_mode(unsigned device) override {
    nvmlDevice_t h = handle(device);
    nvmlComputeMode_t mode = 0;
    check("nvmlDeviceGetComputeMode", need(get_compute_mode_, "nvmlDeviceGetComputeMode")(h, &mode));
    switch (mode) {
      case 0: return ComputeMode::default_mode;
      case 1: return ComputeMode::exclusive_thread;
      case 2: return ComputeMode::prohibited;
      case 3: return ComputeMode::exclusive_process;
      default: return ComputeMode::unknown;
    }
  }

  std::optional<MigModeState> mig_mode(unsigned device) override {
    nvmlDevice_t h = handle(device);
    if (!get_mig_mode_) return std::nullopt;  // a driver that predates MIG
    unsigned current = 0, pending = 0;
    nvmlReturn_t rc = get_mig_mode_(h, &current, &pending);
    if (rc == NVML_ERROR_NOT_SUPPORTED) return std::nullopt;
    check("nvmlDeviceGetMigMode", rc);
    return MigModeState{current != 0, pending != 0};
  }

  std::vector<MigInstance> mig_instances(unsigned device) override {
    auto mode = mig_mode(device);
    if (!mode || !mode->current) return {};
    nvmlDevice_t h = handle(device);
    unsigned max = 0;
    check("nvmlDeviceGetMaxMigDeviceCount", need(get_max_mig_count_, "nvmlDeviceGetMaxMigDeviceCount")(h, &max));
    auto by_index = need(get_mig_handle_, "nvmlDeviceGetMigDeviceHandleByIndex");
    std::vector<MigInstance> out;
    for (unsigned i = 0; i < max; ++i) {
      nvmlDevice_t mig = nullptr;
      nvmlReturn_t rc = by_index(h, i, &mig);
      if (rc == NVML_ERROR_NOT_FOUND) continue;
      check("nvmlDeviceGetMigDeviceHandleByIndex", rc);
      MigInstance m;
      check("nvmlDeviceGetGpuInstanceId", need(get_gi_id_, "nvmlDeviceGetGpuInstanceId")(mig, &m.gpu_instance_id));
      check("nvmlDeviceGetComputeInstanceId",
            need(get_ci_id_, "nvmlDeviceGetComputeInstanceId")(mig, &m.compute_instance_id));
      m.name = name_of(mig);
      m.profile = profile_from_name(m.name);
      m.uuid = uuid_of(mig);
      nvmlDeviceAttributes_t attr{};
      check("nvmlDeviceGetAttributes_v2", need(get_attributes_, "nvmlDeviceGetAttributes_v2")(mig, &attr));
      m.sm_count = attr.multiprocessorCount;
      nvmlMemory_t mem{};
      check("nvmlDeviceGetMemoryInfo", need(get_memory_, "nvmlDeviceGetMemoryInfo")(mig, &mem));
      m.memory_bytes = mem.total;
      out.push_back(std::move(m));
    }
    std::sort(out.begin(), out.end(), [](const MigInstance& a, const MigInstance& b) {
      return std::make_pair(a.gpu_instance_id, a.compute_instance_id) <
             std::make_pair(b.gpu_instance_id, b.compute_instance_id);
    });
    for (size_t i = 0; i < out.size(); ++i) out[i].index = static_cast<int>(i);
    return out;
  }

  CreatedMigInstance create_mig_instance(unsigned device, const std::string& profile) override {
    auto mode = mig_mode(device);
    if (!mode) throw NvmlError("cannot create MIG instance " + profile + ": GPU " + std::to_string(device) +
                               " does not support MIG");
    if (!mode->current)
      throw NvmlError("cannot create MIG instance " + profile + ": MIG mode is not enabled on GPU " +
                      std::to_string(device));
    nvmlDevice_t h = handle(device);

    // 1. The GPU instance profile whose name matches.
    GiProfile gi_profile = find_gi_profile(h, device, profile);

    // 2. The GPU instance.
    nvmlGpuInstance_t gi = nullptr;
    check("nvmlDeviceCreateGpuInstance", need(create_gi_, "nvmlDeviceCreateGpuInstance")(h, gi_profile.id, &gi));
    CreatedMigInstance created;
    created.profile = profile;
    try {
      nvmlGpuInstanceInfo_t gi_info{};
      check("nvmlGpuInstanceGetInfo", need(gi_get_info_, "nvmlGpuInstanceGetInfo")(gi, &gi_info));
      created.gpu_instance_id = gi_info.id;

      // 3. One compute instance spanning the whole GPU instance (same slice count, shared engines).
      auto ci_info_fn = need(ci_profile_info_, "nvmlGpuInstanceGetComputeInstanceProfileInfo");
      bool found = false;
      nvmlComputeInstanceProfileInfo_t ci_profile{};
      for (unsigned p = 0; p < kProfileIndexLimit && !found; ++p) {
        nvmlComputeInstanceProfileInfo_t info{};
        nvmlReturn_t rc = ci_info_fn(gi, p, kComputeEngineProfileShared, &info);
        if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_INVALID_ARGUMENT) continue;
        check("nvmlGpuInstanceGetComputeInstanceProfileInfo", rc);
        if (info.sliceCount == gi_profile.slices) {
          ci_profile = info;
          found = true;
        }
      }
      if (!found)
        throw NvmlError("cannot create MIG instance " + profile + ": no compute instance profile with " +
                        std::to_string(gi_profile.slices) + " slice(s) in the new GPU instance");
      nvmlComputeInstance_t ci = nullptr;
      check("nvmlGpuInstanceCreateComputeInstance",
            need(create_ci_, "nvmlGpuInstanceCreateComputeInstance")(gi, ci_profile.id, &ci));
      try {
        nvmlComputeInstanceInfo_t ci_info{};
        check("nvmlComputeInstanceGetInfo_v2", need(ci_get_info_, "nvmlComputeInstanceGetInfo_v2")(ci, &ci_info));
        created.compute_instance_id = ci_info.id;
      } catch (...) {
        if (destroy_ci_) destroy_ci_(ci);
        throw;
      }
    } catch (...) {
      if (destroy_gi_) destroy_gi_(gi);  // best effort: leave nothing behind that we created
      throw;
    }
    return created;
  }

  void destroy_mig_instance(unsigned device, const CreatedMigInstance& instance) override {
    nvmlDevice_t h = handle(device);
    nvmlGpuInstance_t gi = nullptr;
    check("nvmlDeviceGetGpuInstanceById",
          need(get_gi_by_id_, "nvmlDeviceGetGpuInstanceById")(h, instance.gpu_instance_id, &gi));
    nvmlComputeInstance_t ci = nullptr;
    check("nvmlGpuInstanceGetComputeInstanceById",
          need(get_ci_by_id_, "nvmlGpuInstanceGetComputeInstanceById")(gi, instance.compute_instance_id, &ci));
    check("nvmlComputeInstanceDestroy", need(destroy_ci_, "nvmlComputeInstanceDestroy")(ci));
    check("nvmlGpuInstanceDestroy", need(destroy_gi_, "nvmlGpuInstanceDestroy")(gi));
  }

 private:
  struct GiProfile {
    unsigned id = 0;
    unsigned slices = 0;
  };

  template <typename F>
  void bind(const char* name, F& fn) {
    fn = reinterpret_cast<F>(dlsym(lib_, name));
  }

  template <typename F>
  F need(F fn, const char* name) const {
    if (!fn) throw NvmlError(std::string(name) + ": not exported by " + path_ + " (driver too old?)");
    return fn;
  }

  std::string message(const char* call, nvmlReturn_t rc) const {
    const char* s = error_string_ ? error_string_(rc) : nullptr;
    std::ostringstream o;
    o << call << ": " << (s ? s : "unknown error") << " (" << rc << ")";
    return o.str();
  }

  void check(const char* call, nvmlReturn_t rc) const {
    if (rc != NVML_SUCCESS) throw NvmlError(message(call, rc));
  }

  nvmlDevice_t handle(unsigned device) {
    nvmlDevice_t h = nullptr;
    check("nvmlDeviceGetHandleByIndex_v2", need(get_handle_, "nvmlDeviceGetHandleByIndex_v2")(device, &h));
    return h;
  }

  std::string name_of(nvmlDevice_t h) {
    char buf[kNameBuffer] = {};
    check("nvmlDeviceGetName", need(get_name_, "nvmlDeviceGetName")(h, buf, kNameBuffer));
    buf[kNameBuffer - 1] = '\0';
    return buf;
  }

  std::string uuid_of(nvmlDevice_t h) {
    char buf[kUuidBuffer] = {};
    check("nvmlDeviceGetUUID", need(get_uuid_, "nvmlDeviceGetUUID")(h, buf, kUuidBuffer));
    buf[kUuidBuffer - 1] = '\0';
    return buf;
  }

  // Walks the GPU instance profile indices (NVML_GPU_INSTANCE_PROFILE_*) and returns the one whose name
  // ("MIG 1g.18gb") matches. Indices the driver does not offer answer NOT_SUPPORTED / INVALID_ARGUMENT.
  GiProfile find_gi_profile(nvmlDevice_t h, unsigned device, const std::string& profile) {
    std::vector<std::string> offered;
    for (unsigned p = 0; p < kProfileIndexLimit; ++p) {
      std::string name;
      GiProfile gp;
      nvmlReturn_t rc;
      if (gi_profile_info_v_) {
        nvmlGpuInstanceProfileInfo_v2_t info{};
        info.version = static_cast<unsigned>(sizeof(info)) | (2u << 24);
        rc = gi_profile_info_v_(h, p, &info);
        if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_INVALID_ARGUMENT) continue;
        check("nvmlDeviceGetGpuInstanceProfileInfoV", rc);
        info.name[sizeof(info.name) - 1] = '\0';
        name = profile_from_name(info.name);
        gp = {info.id, info.sliceCount};
      } else {
        // Drivers without the versioned call give no name: rebuild it the way nvidia-smi shows it,
        // "<slices>g.<memory rounded up to GiB>gb".
        nvmlGpuInstanceProfileInfo_t info{};
        rc = need(gi_profile_info_, "nvmlDeviceGetGpuInstanceProfileInfo")(h, p, &info);
        if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_INVALID_ARGUMENT) continue;
        check("nvmlDeviceGetGpuInstanceProfileInfo", rc);
        name = std::to_string(info.sliceCount) + "g." + std::to_string((info.memorySizeMB + 1023) / 1024) + "gb";
        gp = {info.id, info.sliceCount};
      }
      if (name == profile) return gp;
      offered.push_back(name);
    }
    std::string list;
    for (const auto& n : offered) list += (list.empty() ? "" : ", ") + n;
    throw NvmlError("unknown MIG profile '" + profile + "' on GPU " + std::to_string(device) +
                    " (offered: " + (list.empty() ? "none" : list) + ")");
  }

  void* lib_;
  std::string path_;

  nvmlReturn_t (*init_)() = nullptr;
  nvmlReturn_t (*shutdown_)() = nullptr;
  const char* (*error_string_)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*get_count_)(unsigned*) = nullptr;
  nvmlReturn_t (*get_handle_)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*get_name_)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*get_uuid_)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*get_compute_mode_)(nvmlDevice_t, nvmlComputeMode_t*) = nullptr;
  nvmlReturn_t (*get_mig_mode_)(nvmlDevice_t, unsigned*, unsigned*) = nullptr;
  nvmlReturn_t (*get_max_mig_count_)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*get_mig_handle_)(nvmlDevice_t, unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*get_gi_id_)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*get_ci_id_)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*get_memory_)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*get_attributes_)(nvmlDevice_t, nvmlDeviceAttributes_t*) = nullptr;
  nvmlReturn_t (*gi_profile_info_v_)(nvmlDevice_t, unsigned, nvmlGpuInstanceProfileInfo_v2_t*) = nullptr;
  nvmlReturn_t (*gi_profile_info_)(nvmlDevice_t, unsigned, nvmlGpuInstanceProfileInfo_t*) = nullptr;
  nvmlReturn_t (*create_gi_)(nvmlDevice_t, unsigned, nvmlGpuInstance_t*) = nullptr;
  nvmlReturn_t (*get_gi_by_id_)(nvmlDevice_t, unsigned, nvmlGpuInstance_t*) = nullptr;
  nvmlReturn_t (*gi_get_info_)(nvmlGpuInstance_t, nvmlGpuInstanceInfo_t*) = nullptr;
  nvmlReturn_t (*ci_profile_info_)(nvmlGpuInstance_t, unsigned, unsigned, nvmlComputeInstanceProfileInfo_t*) =
      nullptr;
  nvmlReturn_t (*create_ci_)(nvmlGpuInstance_t, unsigned, nvmlComputeInstance_t*) = nullptr;
  nvmlReturn_t (*get_ci_by_id_)(nvmlGpuInstance_t, unsigned, nvmlComputeInstance_t*) = nullptr;
  nvmlReturn_t (*ci_get_info_)(nvmlComputeInstance_t, nvmlComputeInstanceInfo_t*) = nullptr;
  nvmlReturn_t (*destroy_ci_)(nvmlComputeInstance_t) = nullptr;
  nvmlReturn_t (*destroy_gi_)(nvmlGpuInstance_t) = nullptr;
};

}  // namespace

std::unique_ptr<Nvml> Nvml::load() {
  const char* env = std::getenv("INTERFERENCE_BENCH_NVML");
  std::string path = (env && *env) ? env : "libnvidia-ml.so.1";
  dlerror();
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* err = dlerror();
    throw NvmlError("NVML not available: cannot load " + path + " (" + (err ? err : "unknown error") + ")");
  }
  return std::make_unique<DlNvml>(lib, path);
}

}  // namespace ib
