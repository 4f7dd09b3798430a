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

// Where a GPU instance sits on the GPU: memory slices [start, start + size) (nvmlGpuInstancePlacement_t). Two GPU
// instances can coexist only when their placements do not overlap.
struct MigPlacement {
  unsigned start = 0;
  unsigned size = 0;
  unsigned end() const { return start + size; }
  bool overlaps(const MigPlacement& o) const { return start < o.end() && o.start < end(); }
  bool operator==(const MigPlacement& o) const { return start == o.start && size == o.size; }
  bool operator!=(const MigPlacement& o) const { return !(*this == o); }
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
  // Where its GPU instance sits (nvmlGpuInstanceGetInfo); none when NVML will not say (no permission to look
  // the GPU instance up, or a driver without the calls).
  std::optional<MigPlacement> placement;
};

// A GPU instance, with or without a compute instance: what occupies memory slices. A MigInstance (a CUDA device)
// needs both; a GPU instance made with `nvidia-smi mig -cgi` without -C has none, yet its slices are taken.
struct MigGpuInstance {
  unsigned id = 0;
  std::string profile;                    // e.g. "1g.18gb"
  std::optional<MigPlacement> placement;  // none when NVML will not say
  std::string uuid;                       // its compute instance's MIG device UUID; "" when it has none
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

// A GPU instance profile that a GPU in MIG mode offers (nvmlDeviceGetGpuInstanceProfileInfo[V]) with the placements
// it can take (nvmlDeviceGetGpuInstancePossiblePlacements_v2): what layouts are built from.
struct MigGpuInstanceProfile {
  std::string name;                   // as nvidia-smi and --mig-create name it, e.g. "1g.18gb"
  unsigned index = 0;                 // the NVML_GPU_INSTANCE_PROFILE_* index that answered it
  unsigned id = 0;                    // profile id (what nvmlDeviceCreateGpuInstance takes)
  unsigned slice_count = 0;           // compute slices
  unsigned instance_count = 0;        // most instances of this profile the GPU holds at once
  unsigned sm_count = 0;
  unsigned long long memory_mib = 0;  // memorySizeMB
  std::vector<MigPlacement> placements;  // every placement it can take, whatever exists already (NVML's order)
};

// Cumulative time the GPU was held below its application clocks by one limiter (nvmlViolationTime_t).
struct ViolationTime {
  unsigned long long reference_us = 0;  // CPU timestamp of the reading, microseconds
  unsigned long long violation_ns = 0;  // cumulative violation time, nanoseconds
};

// One NVML telemetry reading of a whole GPU. Every field is optional: a field that NVML does not support on this
// device or driver (NVML_ERROR_NOT_SUPPORTED, or an entry point the library does not export) is left empty and
// named in `unsupported` ("<field>: <call>: <reason>"); it is never guessed. Any other NVML error throws NvmlError.
struct TelemetryReading {
  std::optional<unsigned> sm_clock_mhz;              // nvmlDeviceGetClockInfo(NVML_CLOCK_SM)
  std::optional<unsigned> mem_clock_mhz;             // nvmlDeviceGetClockInfo(NVML_CLOCK_MEM)
  std::optional<unsigned> max_sm_clock_mhz;          // nvmlDeviceGetMaxClockInfo(NVML_CLOCK_SM)
  std::optional<double> power_w;                     // nvmlDeviceGetPowerUsage (mW / 1000)
  std::optional<double> power_limit_w;               // nvmlDeviceGetEnforcedPowerLimit (mW / 1000)
  std::optional<double> default_power_limit_w;       // nvmlDeviceGetPowerManagementDefaultLimit (mW / 1000)
  std::optional<unsigned> temperature_c;             // nvmlDeviceGetTemperature(NVML_TEMPERATURE_GPU)
  std::optional<unsigned long long> clock_event_reasons;  // nvmlDeviceGetCurrentClocksEventReasons (or ...Throttle...)
  std::optional<unsigned> util_gpu_pct;              // nvmlDeviceGetUtilizationRates .gpu (not on MIG-enabled GPUs)
  std::optional<unsigned> util_memory_pct;           // nvmlDeviceGetUtilizationRates .memory
  std::optional<unsigned long long> memory_used_bytes;    // nvmlDeviceGetMemoryInfo .used
  std::optional<ViolationTime> power_violation;      // nvmlDeviceGetViolationStatus(NVML_PERF_POLICY_POWER)
  std::optional<ViolationTime> thermal_violation;    // nvmlDeviceGetViolationStatus(NVML_PERF_POLICY_THERMAL)
  std::vector<std::string> unsupported;              // one note per empty field
};

// NVML GPU virtualization modes (nvmlGpuVirtualizationMode_t).
enum class VirtualizationMode { none = 0, passthrough = 1, vgpu = 2, host_vgpu = 3, host_vsga = 4, unknown = -1 };
const char* virtualization_mode_name(VirtualizationMode m);

// One entry of nvmlDeviceGetComputeRunningProcesses_v3 (nvmlProcessInfo_t).
struct ComputeProcess {
  unsigned pid = 0;
  std::optional<unsigned long long> used_bytes;   // empty when NVML reports NVML_VALUE_NOT_AVAILABLE
  std::optional<unsigned> gpu_instance_id;        // empty outside MIG (NVML reports 0xFFFFFFFF)
  std::optional<unsigned> compute_instance_id;
};

// One sample of nvmlDeviceGetProcessUtilization: how busy one process kept the SMs over NVML's sample period.
struct ProcessSmSample {
  unsigned pid = 0;
  unsigned long long timestamp_us = 0;  // the sample's end, CPU time in microseconds since the epoch
  unsigned sm_pct = 0;
};

// Static facts about one whole GPU and the driver, for the probe. Same rule as TelemetryReading: unsupported
// fields are empty and named in `unsupported`; other errors throw NvmlError.
struct DeviceFacts {
  std::string name;
  std::string uuid;
  std::optional<std::string> driver_version;      // nvmlSystemGetDriverVersion, e.g. "550.90.07"
  std::optional<int> cuda_driver_version;         // nvmlSystemGetCudaDriverVersion_v2, e.g. 12040 (= 12.4)
  std::optional<std::string> vbios_version;       // nvmlDeviceGetVbiosVersion, e.g. "96.00.74.00.01"
  std::optional<int> cc_major, cc_minor;          // nvmlDeviceGetCudaComputeCapability
  unsigned long long memory_total_bytes = 0;      // nvmlDeviceGetMemoryInfo .total
  unsigned long long memory_used_bytes = 0;       // nvmlDeviceGetMemoryInfo .used
  std::optional<bool> ecc_current, ecc_pending;   // nvmlDeviceGetEccMode
  std::optional<VirtualizationMode> virtualization;  // nvmlDeviceGetVirtualizationMode
  std::optional<unsigned> pcie_gen_current, pcie_width_current;  // nvmlDeviceGetCurrPcieLinkGeneration/Width
  std::optional<unsigned> pcie_gen_max, pcie_width_max;          // nvmlDeviceGetMaxPcieLinkGeneration/Width
  // Active NVLink links among links 0..17 (nvmlDeviceGetNvLinkState); empty when NVLink is not supported.
  std::optional<unsigned> nvlink_links_up;
  unsigned nvlink_links_queried = 0;              // how many link indices answered (the GPU's link count)
  // nvmlDeviceGetComputeRunningProcesses_v3 (_v2 on older drivers); empty when not supported or not permitted.
  std::optional<std::vector<ComputeProcess>> processes;
  // nvmlDeviceGetAttributes_v2 .multiprocessorCount; NVML documents it for MIG handles only, so on a whole GPU
  // this is usually empty (the CUDA side reports the SM count).
  std::optional<unsigned> sm_count;
  std::vector<std::string> unsupported;
};

// How two GPUs of this machine reach each other: the closest common ancestor on PCIe
// (nvmlDeviceGetTopologyCommonAncestor) and the peer-to-peer capabilities (nvmlDeviceGetP2PStatus: read, write,
// NVLink). A capability NVML would not answer is none.
enum class PciPath { same_board, one_switch, switches, host_bridge, numa_node, across_numa, unknown };
const char* pci_path_name(PciPath p);
struct GpuPairPath {
  unsigned a = 0, b = 0;
  PciPath pci = PciPath::unknown;
  std::optional<bool> p2p_read, p2p_write, nvlink;
  std::vector<std::string> unsupported;  // what NVML would not say, with its words
};

// One MIG instance's own view, from its MIG device handle (NVML gives per-instance information only there; the
// parent GPU's list is all instances' processes, and only for a privileged caller): the compute processes on it
// and its memory. Each empty when NVML cannot say.
struct MigInstanceUsage {
  std::optional<std::vector<ComputeProcess>> processes;
  std::optional<unsigned long long> memory_total_bytes;
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
  // Every GPU instance on `device` (nvmlDeviceGetGpuInstances per profile), with or without a compute instance, in
  // id order: what creating an instance must fit beside. Where NVML cannot list them (a driver without the call, no
  // permission) the GPU instances of mig_instances(). Throws NvmlError on other NVML errors.
  virtual std::vector<MigGpuInstance> mig_gpu_instances(unsigned device) = 0;
  // The processes on one MIG instance and its memory (see MigInstanceUsage). Throws NvmlError when no MIG device
  // has those ids.
  virtual MigInstanceUsage mig_instance_usage(unsigned device, unsigned gpu_instance_id, unsigned compute_instance_id) = 0;
  // Creates one GPU instance of `profile` (e.g. "1g.18gb") and one compute instance spanning it, at placement `at`
  // when given (nvmlDeviceCreateGpuInstanceWithPlacement), else where NVML puts it.
  // Throws NvmlError (unknown profile, no capacity, placement taken, permission).
  virtual CreatedMigInstance create_mig_instance(unsigned device, const std::string& profile,
                                                 std::optional<MigPlacement> at = std::nullopt) = 0;
  // Destroys exactly that compute instance and its GPU instance. Throws NvmlError.
  virtual void destroy_mig_instance(unsigned device, const CreatedMigInstance& instance) = 0;
  // The GPU instance profiles `device` offers, in profile index order, each with its possible placements. A profile
  // index that answers NOT_SUPPORTED / INVALID_ARGUMENT does not exist on this GPU and is left out. Throws NvmlError
  // when the GPU does not support MIG or is not in MIG mode, and on any other NVML error.
  virtual std::vector<MigGpuInstanceProfile> mig_gpu_instance_profiles(unsigned device) = 0;
  // The PCI device id (nvmlPciInfo_t.pciDeviceId: device << 16 | vendor, e.g. 0x233510DE), what mig-parted's
  // device-filter matches; none when NVML cannot say.
  virtual std::optional<unsigned> pci_device_id(unsigned /*device*/) { return std::nullopt; }
  // How GPUs `a` and `b` reach each other (see GpuPairPath); none where the binding cannot ask.
  virtual std::optional<GpuPairPath> gpu_pair_path(unsigned /*a*/, unsigned /*b*/) { return std::nullopt; }

  // The per-process SM utilisation samples of `device` newer than `since_us` (microseconds since the epoch; none
  // newer: empty); nullopt when NVML cannot say (not exported, not supported, no permission, a MIG-enabled GPU).
  virtual std::optional<std::vector<ProcessSmSample>> process_utilization(unsigned /*device*/,
                                                                         unsigned long long /*since_us*/) {
    return std::nullopt;
  }

  // One telemetry reading of `device` (see TelemetryReading). Thread-safe as NVML is; cheap enough for 10 Hz.
  virtual TelemetryReading read_telemetry(unsigned device) = 0;
  // Identity, driver, memory, ECC, virtualisation, PCIe, NVLink and compute processes of `device`.
  virtual DeviceFacts device_facts(unsigned device) = 0;
};

}  // namespace ib
