// Loading NVML and its C ABI: the library found and opened (Nvml::load), every entry point bound by name, the
// library started and shut down with the binding, NVML's errors as messages, and the names of nvml.h's enums.
#include "harness/nvml/dl_nvml.h"

#include <cstdlib>
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

DlNvml::DlNvml(void* lib, std::string path) : lib_(lib), path_(std::move(path)) {
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

DlNvml::~DlNvml() {
  shutdown_();  // nothing useful to do with a failure here
  dlclose(lib_);
}

std::string DlNvml::message(const char* call, nvmlReturn_t rc) const {
  const char* s = error_string_ ? error_string_(rc) : nullptr;
  std::ostringstream o;
  o << call << ": " << (s ? s : "unknown error") << " (" << rc << ")";
  return o.str();
}

void DlNvml::check(const char* call, nvmlReturn_t rc) const {
  if (rc != NVML_SUCCESS) throw NvmlError(message(call, rc));
}

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
