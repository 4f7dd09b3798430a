// The run-time binding of NVML (DlNvml, behind nvml.h's Nvml): the library opened with dlopen, its C entry points
// bound by name, and the helpers every query shares (errors, optional calls, device handles). Private to
// harness/nvml/; the definitions are split by concern: loading and the ABI (nvml.cpp), device queries
// (nvml_device.cpp), MIG (nvml_mig.cpp), processes (nvml_processes.cpp).
#pragma once

#include "harness/nvml/nvml.h"
#include "harness/nvml/nvml_abi.h"

#include <dlfcn.h>

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace ib {

class DlNvml final : public Nvml {
 public:
  DlNvml(void* lib, std::string path);
  ~DlNvml() override;
  DlNvml(const DlNvml&) = delete;
  DlNvml& operator=(const DlNvml&) = delete;

  std::string library_path() const override { return path_; }

  // Device queries (nvml_device.cpp).
  unsigned device_count() override;
  std::string device_name(unsigned device) override { return name_of(handle(device)); }
  std::string device_uuid(unsigned device) override { return uuid_of(handle(device)); }
  std::optional<unsigned> pci_device_id(unsigned device) override;
  ComputeMode compute_mode(unsigned device) override;
  TelemetryReading read_telemetry(unsigned device) override;
  DeviceFacts device_facts(unsigned device) override;
  std::optional<GpuPairPath> gpu_pair_path(unsigned a, unsigned b) override;

  // MIG (nvml_mig.cpp).
  std::optional<MigModeState> mig_mode(unsigned device) override;
  std::vector<MigInstance> mig_instances(unsigned device) override;
  std::vector<MigGpuInstance> mig_gpu_instances(unsigned device) override;
  MigInstanceUsage mig_instance_usage(unsigned device, unsigned gpu_instance_id, unsigned compute_instance_id) override;
  CreatedMigInstance create_mig_instance(unsigned device, const std::string& profile,
                                         std::optional<MigPlacement> at) override;
  std::vector<MigGpuInstanceProfile> mig_gpu_instance_profiles(unsigned device) override;
  void destroy_mig_instance(unsigned device, const CreatedMigInstance& instance) override;

  // Processes (nvml_processes.cpp).
  std::optional<std::vector<ProcessSmSample>> process_utilization(unsigned device, unsigned long long since_us) override;

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

  template <typename F>
  void bind(const char* name, F& fn) {
    fn = reinterpret_cast<F>(dlsym(lib_, name));
  }

  template <typename F>
  F need(F fn, const char* name) const {
    if (!fn) throw NvmlError(std::string(name) + ": not exported by " + path_ + " (driver too old?)");
    return fn;
  }

  // Loading and errors (nvml.cpp).
  std::string message(const char* call, nvmlReturn_t rc) const;
  void check(const char* call, nvmlReturn_t rc) const;

  // Device queries (nvml_device.cpp).
  nvmlDevice_t handle(unsigned device);
  std::string name_of(nvmlDevice_t h);
  std::string uuid_of(nvmlDevice_t h);
  std::optional<unsigned long long> read_reasons(nvmlDevice_t h, std::vector<std::string>& notes) const;
  void read_nvlink(nvmlDevice_t h, DeviceFacts& f) const;
  static PciPath pci_path_of(nvmlGpuTopologyLevel_t level);
  std::optional<bool> p2p(nvmlDevice_t a, nvmlDevice_t b, nvmlGpuP2PCapsIndex_t index, const char* what,
                          std::vector<std::string>& unsupported) const;

  // MIG (nvml_mig.cpp).
  std::optional<MigGpuInstanceProfile> gi_profile_at(nvmlDevice_t h, unsigned p, std::string* refusal) const;
  std::optional<std::vector<MigGpuInstance>> gpu_instances_by_profile(unsigned device);
  nvmlDevice_t mig_handle(unsigned device, unsigned gi, unsigned ci);
  static std::vector<MigGpuInstance> gpu_instances_of(const std::vector<MigInstance>& devices);
  std::optional<MigPlacement> gpu_instance_placement(nvmlDevice_t h, unsigned id) const;
  std::vector<MigPlacement> possible_placements(nvmlDevice_t h, unsigned profile_id) const;
  MigGpuInstanceProfile find_gi_profile(nvmlDevice_t h, unsigned device, const std::string& profile);

  // Processes (nvml_processes.cpp).
  void read_processes(nvmlDevice_t h, DeviceFacts& f) const;

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

}  // namespace ib
