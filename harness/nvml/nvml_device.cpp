// NVML's device queries: a GPU's handle, name and identity, compute mode, the telemetry sampled during a run
// (clocks, power, temperature, clock event reasons, utilization, violations), the facts probe reports (driver,
// memory, ECC, virtualization, PCIe, NVLink) and the path between two GPUs (PCI topology, P2P).
#include "harness/nvml/dl_nvml.h"

namespace ib {

// VirtualizationMode mirrors nvmlGpuVirtualizationMode_t value for value (device_facts casts one to the other).
static_assert(static_cast<int>(VirtualizationMode::none) == NVML_GPU_VIRTUALIZATION_MODE_NONE &&
                  static_cast<int>(VirtualizationMode::passthrough) == NVML_GPU_VIRTUALIZATION_MODE_PASSTHROUGH &&
                  static_cast<int>(VirtualizationMode::vgpu) == NVML_GPU_VIRTUALIZATION_MODE_VGPU &&
                  static_cast<int>(VirtualizationMode::host_vgpu) == NVML_GPU_VIRTUALIZATION_MODE_HOST_VGPU &&
                  static_cast<int>(VirtualizationMode::host_vsga) == NVML_GPU_VIRTUALIZATION_MODE_HOST_VSGA,
              "VirtualizationMode values are nvmlGpuVirtualizationMode_t's");

nvmlDevice_t DlNvml::handle(unsigned device) {
  nvmlDevice_t h = nullptr;
  check("nvmlDeviceGetHandleByIndex_v2", need(get_handle_, "nvmlDeviceGetHandleByIndex_v2")(device, &h));
  return h;
}

std::string DlNvml::name_of(nvmlDevice_t h) {
  char buf[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
  check("nvmlDeviceGetName", need(get_name_, "nvmlDeviceGetName")(h, buf, NVML_DEVICE_NAME_V2_BUFFER_SIZE));
  buf[NVML_DEVICE_NAME_V2_BUFFER_SIZE - 1] = '\0';
  return buf;
}

std::string DlNvml::uuid_of(nvmlDevice_t h) {
  char buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
  check("nvmlDeviceGetUUID", need(get_uuid_, "nvmlDeviceGetUUID")(h, buf, NVML_DEVICE_UUID_V2_BUFFER_SIZE));
  buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE - 1] = '\0';
  return buf;
}

unsigned DlNvml::device_count() {
  unsigned n = 0;
  check("nvmlDeviceGetCount_v2", need(get_count_, "nvmlDeviceGetCount_v2")(&n));
  return n;
}

// A driver without the call, or one that declines it, has no answer: none (mig-parted then matches any GPU).
std::optional<unsigned> DlNvml::pci_device_id(unsigned device) {
  if (!get_pci_info_) return std::nullopt;
  nvmlPciInfo_t pci{};
  if (get_pci_info_(handle(device), &pci) != NVML_SUCCESS) return std::nullopt;
  return pci.pciDeviceId;
}

ComputeMode DlNvml::compute_mode(unsigned device) {
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

TelemetryReading DlNvml::read_telemetry(unsigned device) {
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

// nvmlDeviceGetCurrentClocksEventReasons (R535+), falling back to the older
// nvmlDeviceGetCurrentClocksThrottleReasons when it is not exported or answers FUNCTION_NOT_FOUND/NOT_SUPPORTED.
std::optional<unsigned long long> DlNvml::read_reasons(nvmlDevice_t h, std::vector<std::string>& notes) const {
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

DeviceFacts DlNvml::device_facts(unsigned device) {
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

// Counts active links among 0..NVML_NVLINK_MAX_LINKS-1. NOT_SUPPORTED on link 0: no NVLink. INVALID_ARGUMENT
// on a later link: the GPU has fewer links (stop there).
void DlNvml::read_nvlink(nvmlDevice_t h, DeviceFacts& f) const {
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

std::optional<GpuPairPath> DlNvml::gpu_pair_path(unsigned a, unsigned b) {
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

PciPath DlNvml::pci_path_of(nvmlGpuTopologyLevel_t level) {
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
std::optional<bool> DlNvml::p2p(nvmlDevice_t a, nvmlDevice_t b, nvmlGpuP2PCapsIndex_t index, const char* what,
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

}  // namespace ib
