// NVML bound at run time with dlopen/dlsym (see nvml.h). The NVML types, constants and entry points come from
// harness/nvml/nvml_abi.h, shared with the fake NVML, because the CUDA toolkit does not ship nvml.h and the
// binary must start where there is no driver.
#include "harness/nvml/nvml.h"

#include "harness/nvml/nvml_abi.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <sstream>
#include <utility>

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

const char* virtualization_mode_name(VirtualizationMode m) {
  switch (m) {
    case VirtualizationMode::none: return "NONE";
    case VirtualizationMode::passthrough: return "PASSTHROUGH";
    case VirtualizationMode::vgpu: return "VGPU";
    case VirtualizationMode::host_vgpu: return "HOST_VGPU";
    case VirtualizationMode::host_vsga: return "HOST_VSGA";
    case VirtualizationMode::unknown: break;
  }
  return "UNKNOWN";
}

namespace {

// VirtualizationMode mirrors nvmlGpuVirtualizationMode_t value for value (device_facts casts one to the other).
static_assert(static_cast<int>(VirtualizationMode::none) == NVML_GPU_VIRTUALIZATION_MODE_NONE &&
                  static_cast<int>(VirtualizationMode::passthrough) == NVML_GPU_VIRTUALIZATION_MODE_PASSTHROUGH &&
                  static_cast<int>(VirtualizationMode::vgpu) == NVML_GPU_VIRTUALIZATION_MODE_VGPU &&
                  static_cast<int>(VirtualizationMode::host_vgpu) == NVML_GPU_VIRTUALIZATION_MODE_HOST_VGPU &&
                  static_cast<int>(VirtualizationMode::host_vsga) == NVML_GPU_VIRTUALIZATION_MODE_HOST_VSGA,
              "VirtualizationMode values are nvmlGpuVirtualizationMode_t's");

constexpr unsigned kProfileIndexLimit = 32;  // beyond every NVML_GPU/COMPUTE_INSTANCE_PROFILE_COUNT so far (0x12)

// "NVIDIA H200 MIG 1g.18gb" -> "1g.18gb"; "MIG 1g.18gb" -> "1g.18gb".
std::string profile_from_name(const std::string& name) {
  const std::string marker = "MIG ";
  auto pos = name.rfind(marker);
  if (pos == std::string::npos) return name;
  return name.substr(pos + marker.size());
}

namespace {

// What read_processes fills the buffer with before NVML writes into it.
constexpr unsigned char kProcessFill = 0xA5;

// Bytes per entry NVML wrote for `count` processes into `buf` (filled with kProcessFill): 24-byte entries
// (nvmlProcessInfo_v2_t) leave the bytes past count x 24 as they were; 32-byte ones (nvmlProcessInfo_v3_t, an
// early R535 NVML) write into them (every 8 bytes of an entry hold a field the driver sets).
std::size_t process_entry_bytes(const unsigned char* buf, std::size_t size, unsigned count) {
  const std::size_t v2 = sizeof(nvmlProcessInfo_v2_t), v3 = sizeof(nvmlProcessInfo_v3_t);
  for (std::size_t b = count * v2; b < count * v3 && b < size; ++b)
    if (buf[b] != kProcessFill) return v3;
  return v2;
}

}  // namespace

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
    bind("nvmlDeviceGetGpuInstancePossiblePlacements_v2", gi_placements_);
    bind("nvmlDeviceCreateGpuInstance", create_gi_);
    bind("nvmlDeviceCreateGpuInstanceWithPlacement", create_gi_at_);
    bind("nvmlDeviceGetGpuInstanceById", get_gi_by_id_);
    bind("nvmlDeviceGetGpuInstances", get_gis_);
    bind("nvmlGpuInstanceGetInfo", gi_get_info_);
    bind("nvmlGpuInstanceGetComputeInstanceProfileInfo", ci_profile_info_);
    bind("nvmlGpuInstanceCreateComputeInstance", create_ci_);
    bind("nvmlGpuInstanceGetComputeInstanceById", get_ci_by_id_);
    bind("nvmlComputeInstanceGetInfo_v2", ci_get_info_);
    if (!ci_get_info_) bind("nvmlComputeInstanceGetInfo", ci_get_info_);
    bind("nvmlComputeInstanceDestroy", destroy_ci_);
    bind("nvmlGpuInstanceDestroy", destroy_gi_);
    // Telemetry and facts: each optional, a missing entry point makes its field "unsupported".
    bind("nvmlDeviceGetClockInfo", get_clock_);
    bind("nvmlDeviceGetMaxClockInfo", get_max_clock_);
    bind("nvmlDeviceGetPowerUsage", get_power_);
    bind("nvmlDeviceGetEnforcedPowerLimit", get_enforced_limit_);
    bind("nvmlDeviceGetPowerManagementDefaultLimit", get_default_limit_);
    bind("nvmlDeviceGetTemperature", get_temperature_);
    bind("nvmlDeviceGetCurrentClocksEventReasons", get_event_reasons_);
    bind("nvmlDeviceGetCurrentClocksThrottleReasons", get_throttle_reasons_);
    bind("nvmlDeviceGetUtilizationRates", get_utilization_);
    bind("nvmlDeviceGetViolationStatus", get_violation_);
    bind("nvmlSystemGetDriverVersion", get_driver_version_);
    bind("nvmlSystemGetCudaDriverVersion_v2", get_cuda_version_);
    bind("nvmlDeviceGetCudaComputeCapability", get_cc_);
    bind("nvmlDeviceGetEccMode", get_ecc_);
    bind("nvmlDeviceGetVbiosVersion", get_vbios_);
    bind("nvmlDeviceGetVirtualizationMode", get_virt_);
    bind("nvmlDeviceGetCurrPcieLinkGeneration", get_pcie_gen_);
    bind("nvmlDeviceGetCurrPcieLinkWidth", get_pcie_width_);
    bind("nvmlDeviceGetMaxPcieLinkGeneration", get_pcie_max_gen_);
    bind("nvmlDeviceGetMaxPcieLinkWidth", get_pcie_max_width_);
    bind("nvmlDeviceGetPciInfo_v3", get_pci_info_);
    bind("nvmlDeviceGetNvLinkState", get_nvlink_state_);
    bind("nvmlDeviceGetTopologyCommonAncestor", get_common_ancestor_);
    bind("nvmlDeviceGetP2PStatus", get_p2p_status_);
    bind("nvmlDeviceGetProcessUtilization", get_process_util_);
    bind("nvmlDeviceGetComputeRunningProcesses_v3", get_processes_);
    processes_call_ = "nvmlDeviceGetComputeRunningProcesses_v3";
    if (!get_processes_) {
      bind("nvmlDeviceGetComputeRunningProcesses_v2", get_processes_);  // same nvmlProcessInfo_t layout
      processes_call_ = "nvmlDeviceGetComputeRunningProcesses_v2";
    }

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

  // A driver without the call, or one that declines it, has no answer: none (mig-parted then matches any GPU).
  std::optional<unsigned> pci_device_id(unsigned device) override {
    if (!get_pci_info_) return std::nullopt;
    nvmlPciInfo_t pci{};
    if (get_pci_info_(handle(device), &pci) != NVML_SUCCESS) return std::nullopt;
    return pci.pciDeviceId;
  }

  ComputeMode compute_mode(unsigned device) override {
    nvmlDevice_t h = handle(device);
    nvmlComputeMode_t mode = NVML_COMPUTEMODE_DEFAULT;
    check("nvmlDeviceGetComputeMode", need(get_compute_mode_, "nvmlDeviceGetComputeMode")(h, &mode));
    switch (mode) {
      case NVML_COMPUTEMODE_DEFAULT: return ComputeMode::default_mode;
      case NVML_COMPUTEMODE_EXCLUSIVE_THREAD: return ComputeMode::exclusive_thread;
      case NVML_COMPUTEMODE_PROHIBITED: return ComputeMode::prohibited;
      case NVML_COMPUTEMODE_EXCLUSIVE_PROCESS: return ComputeMode::exclusive_process;
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
    return MigModeState{current != NVML_DEVICE_MIG_DISABLE, pending != NVML_DEVICE_MIG_DISABLE};
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
      m.placement = gpu_instance_placement(h, m.gpu_instance_id);
      out.push_back(std::move(m));
    }
    std::sort(out.begin(), out.end(), [](const MigInstance& a, const MigInstance& b) {
      return std::make_pair(a.gpu_instance_id, a.compute_instance_id) <
             std::make_pair(b.gpu_instance_id, b.compute_instance_id);
    });
    for (size_t i = 0; i < out.size(); ++i) out[i].index = static_cast<int>(i);
    return out;
  }

  std::vector<MigGpuInstance> mig_gpu_instances(unsigned device) override {
    const std::vector<MigInstance> devices = mig_instances(device);
    auto listed = gpu_instances_by_profile(device);
    if (!listed) listed = gpu_instances_of(devices);
    for (MigGpuInstance& g : *listed)
      for (const MigInstance& m : devices)
        if (m.gpu_instance_id == g.id && g.uuid.empty()) g.uuid = m.uuid;
    std::sort(listed->begin(), listed->end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    return *listed;
  }

  MigInstanceUsage mig_instance_usage(unsigned device, unsigned gpu_instance_id, unsigned compute_instance_id) override {
    const nvmlDevice_t mig = mig_handle(device, gpu_instance_id, compute_instance_id);
    MigInstanceUsage u;
    DeviceFacts f;
    read_processes(mig, f);
    u.processes = std::move(f.processes);
    nvmlMemory_t mem{};
    const nvmlReturn_t rc = need(get_memory_, "nvmlDeviceGetMemoryInfo")(mig, &mem);
    if (rc != NVML_ERROR_NOT_SUPPORTED && rc != NVML_ERROR_NO_PERMISSION) check("nvmlDeviceGetMemoryInfo", rc);
    if (rc == NVML_SUCCESS) u.memory_total_bytes = mem.total;
    return u;
  }

  CreatedMigInstance create_mig_instance(unsigned device, const std::string& profile,
                                         std::optional<MigPlacement> at) override {
    auto mode = mig_mode(device);
    if (!mode) throw NvmlError("cannot create MIG instance " + profile + ": GPU " + std::to_string(device) +
                               " does not support MIG");
    if (!mode->current)
      throw NvmlError("cannot create MIG instance " + profile + ": MIG mode is not enabled on GPU " +
                      std::to_string(device));
    nvmlDevice_t h = handle(device);

    // 1. The GPU instance profile whose name matches.
    MigGpuInstanceProfile gi_profile = find_gi_profile(h, device, profile);

    // 2. The GPU instance.
    nvmlGpuInstance_t gi = nullptr;
    if (at) {
      const nvmlGpuInstancePlacement_t placement{at->start, at->size};
      check("nvmlDeviceCreateGpuInstanceWithPlacement",
            need(create_gi_at_, "nvmlDeviceCreateGpuInstanceWithPlacement")(h, gi_profile.id, &placement, &gi));
    } else {
      check("nvmlDeviceCreateGpuInstance", need(create_gi_, "nvmlDeviceCreateGpuInstance")(h, gi_profile.id, &gi));
    }
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
        nvmlReturn_t rc = ci_info_fn(gi, p, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &info);
        if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_INVALID_ARGUMENT) continue;
        check("nvmlGpuInstanceGetComputeInstanceProfileInfo", rc);
        if (info.sliceCount == gi_profile.slice_count) {
          ci_profile = info;
          found = true;
        }
      }
      if (!found)
        throw NvmlError("cannot create MIG instance " + profile + ": no compute instance profile with " +
                        std::to_string(gi_profile.slice_count) + " slice(s) in the new GPU instance");
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

  std::vector<MigGpuInstanceProfile> mig_gpu_instance_profiles(unsigned device) override {
    auto mode = mig_mode(device);
    if (!mode) throw NvmlError("cannot list MIG profiles: GPU " + std::to_string(device) + " does not support MIG");
    if (!mode->current)
      throw NvmlError("cannot list MIG profiles: MIG mode is not enabled on GPU " + std::to_string(device));
    nvmlDevice_t h = handle(device);
    std::vector<MigGpuInstanceProfile> out;
    for (unsigned p = 0; p < kProfileIndexLimit; ++p) {
      auto info = gi_profile_at(h, p, nullptr);
      if (!info) continue;
      info->placements = possible_placements(h, info->id);
      out.push_back(std::move(*info));
    }
    return out;
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

  TelemetryReading read_telemetry(unsigned device) override {
    nvmlDevice_t h = handle(device);
    TelemetryReading r;
    auto& notes = r.unsupported;
    unsigned v = 0;
    if (optional_call(notes, "sm_clock", "nvmlDeviceGetClockInfo", get_clock_, {}, h, NVML_CLOCK_SM, &v))
      r.sm_clock_mhz = v;
    if (optional_call(notes, "mem_clock", "nvmlDeviceGetClockInfo", get_clock_, {}, h, NVML_CLOCK_MEM, &v))
      r.mem_clock_mhz = v;
    if (optional_call(notes, "max_sm_clock", "nvmlDeviceGetMaxClockInfo", get_max_clock_, {}, h, NVML_CLOCK_SM, &v))
      r.max_sm_clock_mhz = v;
    if (optional_call(notes, "power", "nvmlDeviceGetPowerUsage", get_power_, {}, h, &v)) r.power_w = v / 1000.0;
    if (optional_call(notes, "power_limit", "nvmlDeviceGetEnforcedPowerLimit", get_enforced_limit_, {}, h, &v))
      r.power_limit_w = v / 1000.0;
    if (optional_call(notes, "default_power_limit", "nvmlDeviceGetPowerManagementDefaultLimit", get_default_limit_,
                      {}, h, &v))
      r.default_power_limit_w = v / 1000.0;
    if (optional_call(notes, "temperature", "nvmlDeviceGetTemperature", get_temperature_, {}, h, NVML_TEMPERATURE_GPU,
                      &v))
      r.temperature_c = v;
    r.clock_event_reasons = read_reasons(h, notes);
    nvmlUtilization_t util{};
    if (optional_call(notes, "utilization", "nvmlDeviceGetUtilizationRates", get_utilization_, {}, h, &util)) {
      r.util_gpu_pct = util.gpu;
      r.util_memory_pct = util.memory;
    }
    nvmlMemory_t mem{};
    // On a GPU in MIG mode the whole-device memory figures need privileges (NO_PERMISSION otherwise).
    if (optional_call(notes, "memory_used", "nvmlDeviceGetMemoryInfo", get_memory_, {NVML_ERROR_NO_PERMISSION}, h, &mem))
      r.memory_used_bytes = mem.used;
    nvmlViolationTime_t viol{};
    if (optional_call(notes, "power_violation", "nvmlDeviceGetViolationStatus", get_violation_, {}, h,
                      NVML_PERF_POLICY_POWER, &viol))
      r.power_violation = ViolationTime{viol.referenceTime, viol.violationTime};
    viol = {};
    if (optional_call(notes, "thermal_violation", "nvmlDeviceGetViolationStatus", get_violation_, {}, h,
                      NVML_PERF_POLICY_THERMAL, &viol))
      r.thermal_violation = ViolationTime{viol.referenceTime, viol.violationTime};
    return r;
  }

  DeviceFacts device_facts(unsigned device) override {
    nvmlDevice_t h = handle(device);
    DeviceFacts f;
    auto& notes = f.unsupported;
    f.name = name_of(h);
    f.uuid = uuid_of(h);
    {
      char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
      if (optional_call(notes, "driver_version", "nvmlSystemGetDriverVersion", get_driver_version_, {}, buf,
                        NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE)) {
        buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE - 1] = '\0';
        f.driver_version = std::string(buf);
      }
    }
    int cuda = 0;
    // Without libcuda.so.1 NVML cannot ask the CUDA driver: the version is then unknown, not an error.
    if (optional_call(notes, "cuda_driver_version", "nvmlSystemGetCudaDriverVersion_v2", get_cuda_version_,
                      {NVML_ERROR_LIBRARY_NOT_FOUND, NVML_ERROR_FUNCTION_NOT_FOUND}, &cuda))
      f.cuda_driver_version = cuda;
    int major = 0, minor = 0;
    if (optional_call(notes, "compute_capability", "nvmlDeviceGetCudaComputeCapability", get_cc_, {}, h, &major,
                      &minor)) {
      f.cc_major = major;
      f.cc_minor = minor;
    }
    {
      char buf[NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE] = {};
      if (optional_call(notes, "vbios_version", "nvmlDeviceGetVbiosVersion", get_vbios_, {}, h, buf,
                        NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE)) {
        buf[NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE - 1] = '\0';
        f.vbios_version = std::string(buf);
      }
    }
    nvmlMemory_t mem{};
    check("nvmlDeviceGetMemoryInfo", need(get_memory_, "nvmlDeviceGetMemoryInfo")(h, &mem));
    f.memory_total_bytes = mem.total;
    f.memory_used_bytes = mem.used;
    nvmlEnableState_t ecc_current = NVML_FEATURE_DISABLED, ecc_pending = NVML_FEATURE_DISABLED;
    if (optional_call(notes, "ecc", "nvmlDeviceGetEccMode", get_ecc_, {}, h, &ecc_current, &ecc_pending)) {
      f.ecc_current = ecc_current != NVML_FEATURE_DISABLED;
      f.ecc_pending = ecc_pending != NVML_FEATURE_DISABLED;
    }
    nvmlGpuVirtualizationMode_t virt = NVML_GPU_VIRTUALIZATION_MODE_NONE;
    if (optional_call(notes, "virtualization_mode", "nvmlDeviceGetVirtualizationMode", get_virt_, {}, h, &virt))
      f.virtualization = (virt >= NVML_GPU_VIRTUALIZATION_MODE_NONE && virt <= NVML_GPU_VIRTUALIZATION_MODE_HOST_VSGA)
                             ? static_cast<VirtualizationMode>(virt)  // same values (static_asserts above)
                             : VirtualizationMode::unknown;
    unsigned v = 0;
    if (optional_call(notes, "pcie_gen_current", "nvmlDeviceGetCurrPcieLinkGeneration", get_pcie_gen_, {}, h, &v))
      f.pcie_gen_current = v;
    if (optional_call(notes, "pcie_width_current", "nvmlDeviceGetCurrPcieLinkWidth", get_pcie_width_, {}, h, &v))
      f.pcie_width_current = v;
    if (optional_call(notes, "pcie_gen_max", "nvmlDeviceGetMaxPcieLinkGeneration", get_pcie_max_gen_, {}, h, &v))
      f.pcie_gen_max = v;
    if (optional_call(notes, "pcie_width_max", "nvmlDeviceGetMaxPcieLinkWidth", get_pcie_max_width_, {}, h, &v))
      f.pcie_width_max = v;
    read_nvlink(h, f);
    read_processes(h, f);
    nvmlDeviceAttributes_t attr{};
    // Documented for MIG handles only; a whole GPU may answer NOT_SUPPORTED or INVALID_ARGUMENT.
    if (optional_call(notes, "sm_count", "nvmlDeviceGetAttributes_v2", get_attributes_, {NVML_ERROR_INVALID_ARGUMENT},
                      h, &attr))
      f.sm_count = attr.multiprocessorCount;
    return f;
  }

 private:
  // Calls fn(args...) when the library exports it. Returns true on success; false, with a note in `notes`,
  // when the entry point is missing or answers NOT_SUPPORTED (or one of `also_unsupported`); throws otherwise.
  template <typename F, typename... A>
  bool optional_call(std::vector<std::string>& notes, const char* field, const char* call, F fn,
                     std::initializer_list<nvmlReturn_t> also_unsupported, A... args) const {
    if (!fn) {
      notes.push_back(std::string(field) + ": " + call + ": not exported by " + path_);
      return false;
    }
    nvmlReturn_t rc = fn(args...);
    if (rc == NVML_SUCCESS) return true;
    if (rc == NVML_ERROR_NOT_SUPPORTED ||
        std::find(also_unsupported.begin(), also_unsupported.end(), rc) != also_unsupported.end()) {
      notes.push_back(std::string(field) + ": " + message(call, rc));
      return false;
    }
    throw NvmlError(message(call, rc));
  }

  // nvmlDeviceGetCurrentClocksEventReasons (R535+), falling back to the older
  // nvmlDeviceGetCurrentClocksThrottleReasons when it is not exported or answers FUNCTION_NOT_FOUND/NOT_SUPPORTED.
  std::optional<unsigned long long> read_reasons(nvmlDevice_t h, std::vector<std::string>& notes) const {
    unsigned long long mask = 0;
    if (get_event_reasons_) {
      nvmlReturn_t rc = get_event_reasons_(h, &mask);
      if (rc == NVML_SUCCESS) return mask;
      if (rc != NVML_ERROR_FUNCTION_NOT_FOUND && rc != NVML_ERROR_NOT_SUPPORTED)
        throw NvmlError(message("nvmlDeviceGetCurrentClocksEventReasons", rc));
    }
    if (optional_call(notes, "clock_event_reasons", "nvmlDeviceGetCurrentClocksThrottleReasons",
                      get_throttle_reasons_, {NVML_ERROR_FUNCTION_NOT_FOUND}, h, &mask))
      return mask;
    return std::nullopt;
  }

  // Counts active links among 0..NVML_NVLINK_MAX_LINKS-1. NOT_SUPPORTED on link 0: no NVLink. INVALID_ARGUMENT
  // on a later link: the GPU has fewer links (stop there).
  void read_nvlink(nvmlDevice_t h, DeviceFacts& f) const {
    if (!get_nvlink_state_) {
      f.unsupported.push_back("nvlink: nvmlDeviceGetNvLinkState: not exported by " + path_);
      return;
    }
    unsigned up = 0, queried = 0;
    for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
      nvmlEnableState_t active = NVML_FEATURE_DISABLED;
      nvmlReturn_t rc = get_nvlink_state_(h, link, &active);
      if (rc == NVML_ERROR_NOT_SUPPORTED || (rc == NVML_ERROR_INVALID_ARGUMENT && link > 0)) {
        if (link == 0) {
          f.unsupported.push_back("nvlink: " + message("nvmlDeviceGetNvLinkState", rc));
          return;
        }
        break;
      }
      check("nvmlDeviceGetNvLinkState", rc);
      ++queried;
      if (active != NVML_FEATURE_DISABLED) ++up;
    }
    f.nvlink_links_up = up;
    f.nvlink_links_queried = queried;
  }

  // The documented two-step query: *infoCount = 0 answers SUCCESS (none) or INSUFFICIENT_SIZE with the count;
  // then a buffer with headroom (the list can grow between the calls), retried a few times. The buffer has room
  // for 32-byte entries and is filled with kProcessFill first, so the entries are read with the stride the
  // driver wrote (process_entry_bytes): an early R535 NVML writes 32 bytes an entry, R550-R580 24.
  void read_processes(nvmlDevice_t h, DeviceFacts& f) const {
    const char* call = processes_call_;
    if (!get_processes_) {
      f.unsupported.push_back(std::string("processes: ") + call + ": not exported by " + path_);
      return;
    }
    std::vector<nvmlProcessInfo_v3_t> room;  // 32-byte entries: room for either stride, suitably aligned
    unsigned count = 0;
    nvmlReturn_t rc = get_processes_(h, &count, nullptr);
    for (int attempt = 0; rc == NVML_ERROR_INSUFFICIENT_SIZE && attempt < 4; ++attempt) {
      room.assign(count + 8, nvmlProcessInfo_v3_t{});
      std::memset(room.data(), kProcessFill, room.size() * sizeof(nvmlProcessInfo_v3_t));
      count = static_cast<unsigned>(room.size());
      rc = get_processes_(h, &count, reinterpret_cast<nvmlProcessInfo_t*>(room.data()));
    }
    if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_NO_PERMISSION) {
      f.unsupported.push_back("processes: " + message(call, rc));
      return;
    }
    check(call, rc);
    std::vector<ComputeProcess> out;
    const auto* bytes = reinterpret_cast<const unsigned char*>(room.data());
    const std::size_t stride = process_entry_bytes(bytes, room.size() * sizeof(nvmlProcessInfo_v3_t), count);
    for (unsigned i = 0; i < count && i < room.size(); ++i) {
      nvmlProcessInfo_v2_t e{};  // the first 24 bytes of either entry
      std::memcpy(&e, bytes + i * stride, sizeof e);
      ComputeProcess p;
      p.pid = e.pid;
      if (e.usedGpuMemory != NVML_VALUE_NOT_AVAILABLE_ULL) p.used_bytes = e.usedGpuMemory;
      if (e.gpuInstanceId != NVML_NO_INSTANCE_ID) p.gpu_instance_id = e.gpuInstanceId;
      if (e.computeInstanceId != NVML_NO_INSTANCE_ID) p.compute_instance_id = e.computeInstanceId;
      out.push_back(p);
    }
    f.processes = std::move(out);
  }

  // The documented two-step query (NULL buffer: INSUFFICIENT_SIZE with the count), retried while the list grows.
  std::optional<std::vector<ProcessSmSample>> process_utilization(unsigned device, unsigned long long since_us) override {
    if (!get_process_util_) return std::nullopt;
    const nvmlDevice_t h = handle(device);
    std::vector<nvmlProcessUtilizationSample_t> room;
    unsigned count = 0;
    nvmlReturn_t rc = get_process_util_(h, nullptr, &count, since_us);
    for (int attempt = 0; rc == NVML_ERROR_INSUFFICIENT_SIZE && attempt < 4; ++attempt) {
      room.assign(count + 8, nvmlProcessUtilizationSample_t{});
      count = static_cast<unsigned>(room.size());
      rc = get_process_util_(h, room.data(), &count, since_us);
    }
    if (rc == NVML_ERROR_NOT_FOUND) return std::vector<ProcessSmSample>{};
    if (rc != NVML_SUCCESS) return std::nullopt;
    std::vector<ProcessSmSample> out;
    for (unsigned i = 0; i < count && i < room.size(); ++i) out.push_back({room[i].pid, room[i].timeStamp, room[i].smUtil});
    return out;
  }

  std::optional<GpuPairPath> gpu_pair_path(unsigned a, unsigned b) override {
    GpuPairPath p;
    p.a = a;
    p.b = b;
    nvmlDevice_t ha = handle(a), hb = handle(b);
    if (!get_common_ancestor_) {
      p.unsupported.push_back("pci path: nvmlDeviceGetTopologyCommonAncestor: not exported by " + path_);
    } else {
      nvmlGpuTopologyLevel_t level = 0;
      const nvmlReturn_t rc = get_common_ancestor_(ha, hb, &level);
      if (rc == NVML_SUCCESS) p.pci = pci_path_of(level);
      else p.unsupported.push_back("pci path: " + message("nvmlDeviceGetTopologyCommonAncestor", rc));
    }
    p.p2p_read = p2p(ha, hb, NVML_P2P_CAPS_INDEX_READ, "read", p.unsupported);
    p.p2p_write = p2p(ha, hb, NVML_P2P_CAPS_INDEX_WRITE, "write", p.unsupported);
    p.nvlink = p2p(ha, hb, NVML_P2P_CAPS_INDEX_NVLINK, "nvlink", p.unsupported);
    return p;
  }

  static PciPath pci_path_of(nvmlGpuTopologyLevel_t level) {
    switch (level) {
      case NVML_TOPOLOGY_INTERNAL: return PciPath::same_board;
      case NVML_TOPOLOGY_SINGLE: return PciPath::one_switch;
      case NVML_TOPOLOGY_MULTIPLE: return PciPath::switches;
      case NVML_TOPOLOGY_HOSTBRIDGE: return PciPath::host_bridge;
      case NVML_TOPOLOGY_NODE: return PciPath::numa_node;
      case NVML_TOPOLOGY_SYSTEM: return PciPath::across_numa;
      default: return PciPath::unknown;
    }
  }

  // One P2P capability: true when NVML answers OK, false for any "not supported" status, none when the call fails.
  std::optional<bool> p2p(nvmlDevice_t a, nvmlDevice_t b, nvmlGpuP2PCapsIndex_t index, const char* what,
                          std::vector<std::string>& unsupported) const {
    if (!get_p2p_status_) {
      unsupported.push_back(std::string("p2p ") + what + ": nvmlDeviceGetP2PStatus: not exported by " + path_);
      return std::nullopt;
    }
    nvmlGpuP2PStatus_t status = NVML_P2P_STATUS_UNKNOWN;
    const nvmlReturn_t rc = get_p2p_status_(a, b, index, &status);
    if (rc != NVML_SUCCESS || status == NVML_P2P_STATUS_UNKNOWN) {
      unsupported.push_back(std::string("p2p ") + what + ": " +
                            (rc != NVML_SUCCESS ? message("nvmlDeviceGetP2PStatus", rc) : "status unknown"));
      return std::nullopt;
    }
    return status == NVML_P2P_STATUS_OK;
  }

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
    char buf[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
    check("nvmlDeviceGetName", need(get_name_, "nvmlDeviceGetName")(h, buf, NVML_DEVICE_NAME_V2_BUFFER_SIZE));
    buf[NVML_DEVICE_NAME_V2_BUFFER_SIZE - 1] = '\0';
    return buf;
  }

  std::string uuid_of(nvmlDevice_t h) {
    char buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
    check("nvmlDeviceGetUUID", need(get_uuid_, "nvmlDeviceGetUUID")(h, buf, NVML_DEVICE_UUID_V2_BUFFER_SIZE));
    buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE - 1] = '\0';
    return buf;
  }

  // The GPU instance profile at NVML_GPU_INSTANCE_PROFILE_* index `p`, named the way nvidia-smi shows it (without
  // placements); nullopt when the driver does not offer that index (NOT_SUPPORTED / INVALID_ARGUMENT, whose message
  // goes to *refusal). Any other answer throws.
  std::optional<MigGpuInstanceProfile> gi_profile_at(nvmlDevice_t h, unsigned p, std::string* refusal) const {
    MigGpuInstanceProfile out;
    out.index = p;
    auto fill = [&out](const auto& info) {
      out.id = info.id;
      out.slice_count = info.sliceCount;
      out.instance_count = info.instanceCount;
      out.sm_count = info.multiprocessorCount;
      out.memory_mib = info.memorySizeMB;
    };
    const char* call =
        gi_profile_info_v_ ? "nvmlDeviceGetGpuInstanceProfileInfoV" : "nvmlDeviceGetGpuInstanceProfileInfo";
    nvmlReturn_t rc;
    if (gi_profile_info_v_) {
      nvmlGpuInstanceProfileInfo_v2_t info{};
      info.version = nvmlGpuInstanceProfileInfo_v2;
      rc = gi_profile_info_v_(h, p, &info);
      if (rc == NVML_SUCCESS) {
        info.name[sizeof(info.name) - 1] = '\0';
        out.name = profile_from_name(info.name);
        fill(info);
      }
    } else {
      // Drivers without the versioned call give no name: rebuild it the way nvidia-smi shows it,
      // "<slices>g.<memory rounded up to GiB>gb".
      nvmlGpuInstanceProfileInfo_t info{};
      rc = need(gi_profile_info_, call)(h, p, &info);
      if (rc == NVML_SUCCESS) {
        out.name = std::to_string(info.sliceCount) + "g." + std::to_string((info.memorySizeMB + 1023) / 1024) + "gb";
        fill(info);
      }
    }
    if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_INVALID_ARGUMENT) {
      if (refusal) *refusal = message(call, rc);
      return std::nullopt;
    }
    check(call, rc);
    return out;
  }

  // Where GPU instance `id` sits, or none when NVML does not say: looking a GPU instance up needs root on most
  // drivers (NO_PERMISSION) and an old driver lacks the calls. Whatever the code, the answer is only "not known":
  // the instance is still listed (a run on it needs no placement), and what needs one (--mig-create, mig-sweep)
  // falls back to letting NVML place new instances.
  // Every GPU instance, profile by profile (nvmlDeviceGetGpuInstances): those without a compute instance too. None
  // where the driver lacks the call or refuses it (not root): then only the compute instances' view is left.
  std::optional<std::vector<MigGpuInstance>> gpu_instances_by_profile(unsigned device) {
    auto mode = mig_mode(device);
    if (!mode || !mode->current) return std::vector<MigGpuInstance>{};
    if (!get_gis_ || !gi_get_info_) return std::nullopt;
    const nvmlDevice_t h = handle(device);
    std::vector<MigGpuInstance> out;
    for (const MigGpuInstanceProfile& p : mig_gpu_instance_profiles(device)) {
      // The buffer holds the most the profile allows (the call takes no NULL to ask how many there are).
      std::vector<nvmlGpuInstance_t> gis(std::max<std::size_t>({1, p.instance_count, p.placements.size()}), nullptr);
      unsigned count = static_cast<unsigned>(gis.size());
      const nvmlReturn_t rc = get_gis_(h, p.id, gis.data(), &count);
      if (rc == NVML_ERROR_NO_PERMISSION || rc == NVML_ERROR_NOT_SUPPORTED) return std::nullopt;
      check("nvmlDeviceGetGpuInstances", rc);
      for (unsigned i = 0; i < count && i < gis.size(); ++i) {
        nvmlGpuInstanceInfo_t info{};
        check("nvmlGpuInstanceGetInfo", gi_get_info_(gis[i], &info));
        out.push_back({info.id, p.name, MigPlacement{info.placement.start, info.placement.size}, ""});
      }
    }
    return out;
  }

  // The MIG device handle of GPU instance `gi`, compute instance `ci`.
  nvmlDevice_t mig_handle(unsigned device, unsigned gi, unsigned ci) {
    const nvmlDevice_t h = handle(device);
    unsigned max = 0;
    check("nvmlDeviceGetMaxMigDeviceCount", need(get_max_mig_count_, "nvmlDeviceGetMaxMigDeviceCount")(h, &max));
    for (unsigned i = 0; i < max; ++i) {
      nvmlDevice_t mig = nullptr;
      const nvmlReturn_t rc = need(get_mig_handle_, "nvmlDeviceGetMigDeviceHandleByIndex")(h, i, &mig);
      if (rc == NVML_ERROR_NOT_FOUND) continue;
      check("nvmlDeviceGetMigDeviceHandleByIndex", rc);
      unsigned g = 0, c = 0;
      check("nvmlDeviceGetGpuInstanceId", need(get_gi_id_, "nvmlDeviceGetGpuInstanceId")(mig, &g));
      check("nvmlDeviceGetComputeInstanceId", need(get_ci_id_, "nvmlDeviceGetComputeInstanceId")(mig, &c));
      if (g == gi && c == ci) return mig;
    }
    throw NvmlError("no MIG device of GPU instance " + std::to_string(gi) + ", compute instance " + std::to_string(ci) +
                    " on GPU " + std::to_string(device));
  }

  // The GPU instances that hold a compute instance, from the MIG devices: one per GPU instance.
  static std::vector<MigGpuInstance> gpu_instances_of(const std::vector<MigInstance>& devices) {
    std::vector<MigGpuInstance> out;
    for (const MigInstance& m : devices)
      if (std::none_of(out.begin(), out.end(), [&m](const MigGpuInstance& g) { return g.id == m.gpu_instance_id; }))
        out.push_back({m.gpu_instance_id, m.profile, m.placement, m.uuid});
    return out;
  }

  std::optional<MigPlacement> gpu_instance_placement(nvmlDevice_t h, unsigned id) const {
    if (!get_gi_by_id_ || !gi_get_info_) return std::nullopt;
    nvmlGpuInstance_t gi = nullptr;
    if (get_gi_by_id_(h, id, &gi) != NVML_SUCCESS) return std::nullopt;
    nvmlGpuInstanceInfo_t info{};
    if (gi_get_info_(gi, &info) != NVML_SUCCESS) return std::nullopt;
    return MigPlacement{info.placement.start, info.placement.size};
  }

  // nvmlDeviceGetGpuInstancePossiblePlacements_v2, the documented two-step query: placements NULL gives the count,
  // then a buffer of that length (retried a few times should the driver answer INSUFFICIENT_SIZE).
  std::vector<MigPlacement> possible_placements(nvmlDevice_t h, unsigned profile_id) const {
    const char* call = "nvmlDeviceGetGpuInstancePossiblePlacements_v2";
    auto fn = need(gi_placements_, call);
    unsigned count = 0;
    nvmlReturn_t rc = fn(h, profile_id, nullptr, &count);
    if (rc != NVML_ERROR_INSUFFICIENT_SIZE) check(call, rc);
    std::vector<nvmlGpuInstancePlacement_t> buf;
    for (int attempt = 0; attempt < 4 && count > 0; ++attempt) {
      buf.assign(count, nvmlGpuInstancePlacement_t{});
      unsigned n = count;
      rc = fn(h, profile_id, buf.data(), &n);
      if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
        count = std::max(n, count + 1);
        continue;
      }
      check(call, rc);
      buf.resize(std::min<size_t>(n, buf.size()));
      std::vector<MigPlacement> out;
      for (const auto& pl : buf) out.push_back({pl.start, pl.size});
      return out;
    }
    if (count == 0) return {};
    throw NvmlError(message(call, rc));
  }

  // Walks the GPU instance profile indices (NVML_GPU_INSTANCE_PROFILE_*) and returns the one whose name
  // ("MIG 1g.18gb") matches. Indices the driver does not offer answer NOT_SUPPORTED / INVALID_ARGUMENT.
  MigGpuInstanceProfile find_gi_profile(nvmlDevice_t h, unsigned device, const std::string& profile) {
    std::vector<std::string> offered;
    std::string first_refusal;  // what index 0 answered, when it was skipped
    for (unsigned p = 0; p < kProfileIndexLimit; ++p) {
      std::string refusal;
      auto info = gi_profile_at(h, p, &refusal);
      if (!info) {
        if (p == 0) first_refusal = refusal;
        continue;
      }
      if (info->name == profile) return *info;
      offered.push_back(info->name);
    }
    std::string list;
    for (const auto& n : offered) list += (list.empty() ? "" : ", ") + n;
    // No profile at all, while the GPU is in MIG mode, is not "unknown profile": say what NVML answered
    // (INVALID_ARGUMENT for every index would be a struct version this driver does not take).
    throw NvmlError("unknown MIG profile '" + profile + "' on GPU " + std::to_string(device) + " (offered: " +
                    (list.empty() ? "none" + (first_refusal.empty() ? "" : "; profile index 0: " + first_refusal) : list) +
                    ")");
  }

  void* lib_;
  std::string path_;

  decltype(&nvmlInit_v2) init_ = nullptr;
  decltype(&nvmlShutdown) shutdown_ = nullptr;
  decltype(&nvmlErrorString) error_string_ = nullptr;
  decltype(&nvmlDeviceGetCount_v2) get_count_ = nullptr;
  decltype(&nvmlDeviceGetHandleByIndex_v2) get_handle_ = nullptr;
  decltype(&nvmlDeviceGetName) get_name_ = nullptr;
  decltype(&nvmlDeviceGetUUID) get_uuid_ = nullptr;
  decltype(&nvmlDeviceGetComputeMode) get_compute_mode_ = nullptr;
  decltype(&nvmlDeviceGetMigMode) get_mig_mode_ = nullptr;
  decltype(&nvmlDeviceGetMaxMigDeviceCount) get_max_mig_count_ = nullptr;
  decltype(&nvmlDeviceGetMigDeviceHandleByIndex) get_mig_handle_ = nullptr;
  decltype(&nvmlDeviceGetGpuInstanceId) get_gi_id_ = nullptr;
  decltype(&nvmlDeviceGetComputeInstanceId) get_ci_id_ = nullptr;
  decltype(&nvmlDeviceGetMemoryInfo) get_memory_ = nullptr;
  decltype(&nvmlDeviceGetAttributes_v2) get_attributes_ = nullptr;
  decltype(&nvmlDeviceGetGpuInstanceProfileInfoV) gi_profile_info_v_ = nullptr;
  decltype(&nvmlDeviceGetGpuInstanceProfileInfo) gi_profile_info_ = nullptr;
  decltype(&nvmlDeviceGetGpuInstancePossiblePlacements_v2) gi_placements_ = nullptr;
  decltype(&nvmlDeviceCreateGpuInstance) create_gi_ = nullptr;
  decltype(&nvmlDeviceCreateGpuInstanceWithPlacement) create_gi_at_ = nullptr;
  decltype(&nvmlDeviceGetGpuInstanceById) get_gi_by_id_ = nullptr;
  decltype(&nvmlGpuInstanceGetInfo) gi_get_info_ = nullptr;
  decltype(&nvmlDeviceGetGpuInstances) get_gis_ = nullptr;
  decltype(&nvmlGpuInstanceGetComputeInstanceProfileInfo) ci_profile_info_ = nullptr;
  decltype(&nvmlGpuInstanceCreateComputeInstance) create_ci_ = nullptr;
  decltype(&nvmlGpuInstanceGetComputeInstanceById) get_ci_by_id_ = nullptr;
  decltype(&nvmlComputeInstanceGetInfo_v2) ci_get_info_ = nullptr;
  decltype(&nvmlComputeInstanceDestroy) destroy_ci_ = nullptr;
  decltype(&nvmlGpuInstanceDestroy) destroy_gi_ = nullptr;
  decltype(&nvmlDeviceGetClockInfo) get_clock_ = nullptr;
  decltype(&nvmlDeviceGetMaxClockInfo) get_max_clock_ = nullptr;
  decltype(&nvmlDeviceGetPowerUsage) get_power_ = nullptr;
  decltype(&nvmlDeviceGetEnforcedPowerLimit) get_enforced_limit_ = nullptr;
  decltype(&nvmlDeviceGetPowerManagementDefaultLimit) get_default_limit_ = nullptr;
  decltype(&nvmlDeviceGetTemperature) get_temperature_ = nullptr;
  decltype(&nvmlDeviceGetCurrentClocksEventReasons) get_event_reasons_ = nullptr;
  decltype(&nvmlDeviceGetCurrentClocksThrottleReasons) get_throttle_reasons_ = nullptr;
  decltype(&nvmlDeviceGetUtilizationRates) get_utilization_ = nullptr;
  decltype(&nvmlDeviceGetProcessUtilization) get_process_util_ = nullptr;
  decltype(&nvmlDeviceGetViolationStatus) get_violation_ = nullptr;
  decltype(&nvmlSystemGetDriverVersion) get_driver_version_ = nullptr;
  decltype(&nvmlSystemGetCudaDriverVersion_v2) get_cuda_version_ = nullptr;
  decltype(&nvmlDeviceGetCudaComputeCapability) get_cc_ = nullptr;
  decltype(&nvmlDeviceGetEccMode) get_ecc_ = nullptr;
  decltype(&nvmlDeviceGetVbiosVersion) get_vbios_ = nullptr;
  decltype(&nvmlDeviceGetVirtualizationMode) get_virt_ = nullptr;
  decltype(&nvmlDeviceGetCurrPcieLinkGeneration) get_pcie_gen_ = nullptr;
  decltype(&nvmlDeviceGetCurrPcieLinkWidth) get_pcie_width_ = nullptr;
  decltype(&nvmlDeviceGetMaxPcieLinkGeneration) get_pcie_max_gen_ = nullptr;
  decltype(&nvmlDeviceGetPciInfo_v3) get_pci_info_ = nullptr;
  decltype(&nvmlDeviceGetMaxPcieLinkWidth) get_pcie_max_width_ = nullptr;
  decltype(&nvmlDeviceGetNvLinkState) get_nvlink_state_ = nullptr;
  decltype(&nvmlDeviceGetTopologyCommonAncestor) get_common_ancestor_ = nullptr;
  decltype(&nvmlDeviceGetP2PStatus) get_p2p_status_ = nullptr;
  decltype(&nvmlDeviceGetComputeRunningProcesses_v3) get_processes_ = nullptr;
  const char* processes_call_ = "nvmlDeviceGetComputeRunningProcesses_v3";
};

}  // namespace

const char* pci_path_name(PciPath p) {
  switch (p) {
    case PciPath::same_board: return "same board";
    case PciPath::one_switch: return "one PCIe switch";
    case PciPath::switches: return "PCIe switches";
    case PciPath::host_bridge: return "host bridge";
    case PciPath::numa_node: return "NUMA node";
    case PciPath::across_numa: return "across NUMA nodes";
    case PciPath::unknown: return "unknown";
  }
  return "unknown";
}

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
