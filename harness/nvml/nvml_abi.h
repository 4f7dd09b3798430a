// NVML's C ABI, as far as the harness uses it: types, constants, structs and the signatures of the entry points,
// declared once. Two files include it and nothing else should:
//   - harness/nvml/nvml.cpp binds the entry points with dlsym (its function pointers are decltype(&nvmlX), so it
//     calls exactly the signature declared here, and never links against them);
//   - tests/fakes/fake_nvml.cpp defines the entry points; a definition whose signature differs from the
//     declaration here does not compile (two C functions of one name), so the fake cannot copy an ABI mistake of
//     the binding: both are checked against this one file, and this file against NVIDIA's nvml.h below.
//
// Where the values come from: NVIDIA's nvml.h (not shipped with the CUDA toolkit, not on the build machines),
// read in the cuda_nvml_dev packages of CUDA 12.0 to 12.6.2 and of NVML 13.3.29. Every declaration here is the
// same in all of them unless its comment says otherwise. The names are NVML's, so the code reads like NVML's
// documentation; only what the binding (or the fake, to answer it) uses is declared.
//
// NVML's C enums (nvmlReturn_t, nvmlClockType_t, ...) are declared as int with named constants: a C enum whose
// values fit in int has the size, alignment and calling convention of int on the ABIs NVML ships for (x86-64,
// aarch64, ppc64le: all LP64), and an int keeps a value this file does not name (a newer return code) a
// well-defined value instead of an out-of-range enum.
//
// The static_asserts at the end pin the layout of every struct that crosses the ABI. Their expected sizes and
// offsets are those of nvml.h's declarations on LP64 Linux, worked out by hand from the field lists (4-byte
// unsigned int, 8-byte unsigned long long and pointers, natural alignment) and confirmed by compiling the CUDA
// 12.6.2 and NVML 13.3.29 nvml.h and printing sizeof/offsetof, which agreed for every struct here.
#pragma once

#include <cstddef>

// ---- handles (opaque pointers) ----
typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlGpuInstance_st* nvmlGpuInstance_t;
typedef struct nvmlComputeInstance_st* nvmlComputeInstance_t;

// ---- enums, as int (see above) ----
typedef int nvmlReturn_t;
typedef int nvmlClockType_t;
typedef int nvmlTemperatureSensors_t;
typedef int nvmlPerfPolicyType_t;
typedef int nvmlEnableState_t;
typedef int nvmlComputeMode_t;
typedef int nvmlGpuVirtualizationMode_t;
typedef int nvmlGpuTopologyLevel_t;
typedef int nvmlGpuP2PCapsIndex_t;
typedef int nvmlGpuP2PStatus_t;

// ---- constants (nvml.h's enum values and #defines, with their names) ----

// nvmlReturn_t
constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr nvmlReturn_t NVML_ERROR_UNINITIALIZED = 1;
constexpr nvmlReturn_t NVML_ERROR_INVALID_ARGUMENT = 2;
constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
constexpr nvmlReturn_t NVML_ERROR_NO_PERMISSION = 4;
constexpr nvmlReturn_t NVML_ERROR_ALREADY_INITIALIZED = 5;
constexpr nvmlReturn_t NVML_ERROR_NOT_FOUND = 6;
constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_POWER = 8;
constexpr nvmlReturn_t NVML_ERROR_DRIVER_NOT_LOADED = 9;
constexpr nvmlReturn_t NVML_ERROR_TIMEOUT = 10;
constexpr nvmlReturn_t NVML_ERROR_IRQ_ISSUE = 11;
constexpr nvmlReturn_t NVML_ERROR_LIBRARY_NOT_FOUND = 12;
constexpr nvmlReturn_t NVML_ERROR_FUNCTION_NOT_FOUND = 13;
constexpr nvmlReturn_t NVML_ERROR_CORRUPTED_INFOROM = 14;
constexpr nvmlReturn_t NVML_ERROR_GPU_IS_LOST = 15;
constexpr nvmlReturn_t NVML_ERROR_RESET_REQUIRED = 16;
constexpr nvmlReturn_t NVML_ERROR_OPERATING_SYSTEM = 17;
constexpr nvmlReturn_t NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18;
constexpr nvmlReturn_t NVML_ERROR_IN_USE = 19;
constexpr nvmlReturn_t NVML_ERROR_MEMORY = 20;
constexpr nvmlReturn_t NVML_ERROR_NO_DATA = 21;
constexpr nvmlReturn_t NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22;
constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_RESOURCES = 23;
constexpr nvmlReturn_t NVML_ERROR_FREQ_NOT_SUPPORTED = 24;
constexpr nvmlReturn_t NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25;
constexpr nvmlReturn_t NVML_ERROR_DEPRECATED = 26;
constexpr nvmlReturn_t NVML_ERROR_NOT_READY = 27;
constexpr nvmlReturn_t NVML_ERROR_GPU_NOT_FOUND = 28;
constexpr nvmlReturn_t NVML_ERROR_INVALID_STATE = 29;
constexpr nvmlReturn_t NVML_ERROR_UNKNOWN = 999;

// nvmlClockType_t
constexpr nvmlClockType_t NVML_CLOCK_GRAPHICS = 0;
constexpr nvmlClockType_t NVML_CLOCK_SM = 1;
constexpr nvmlClockType_t NVML_CLOCK_MEM = 2;
constexpr nvmlClockType_t NVML_CLOCK_VIDEO = 3;
// nvmlTemperatureSensors_t
constexpr nvmlTemperatureSensors_t NVML_TEMPERATURE_GPU = 0;
// nvmlPerfPolicyType_t
constexpr nvmlPerfPolicyType_t NVML_PERF_POLICY_POWER = 0;
constexpr nvmlPerfPolicyType_t NVML_PERF_POLICY_THERMAL = 1;
// nvmlEnableState_t
constexpr nvmlEnableState_t NVML_FEATURE_DISABLED = 0;
constexpr nvmlEnableState_t NVML_FEATURE_ENABLED = 1;
// nvmlComputeMode_t
constexpr nvmlComputeMode_t NVML_COMPUTEMODE_DEFAULT = 0;
constexpr nvmlComputeMode_t NVML_COMPUTEMODE_EXCLUSIVE_THREAD = 1;
constexpr nvmlComputeMode_t NVML_COMPUTEMODE_PROHIBITED = 2;
constexpr nvmlComputeMode_t NVML_COMPUTEMODE_EXCLUSIVE_PROCESS = 3;
// nvmlGpuVirtualizationMode_t
constexpr nvmlGpuVirtualizationMode_t NVML_GPU_VIRTUALIZATION_MODE_NONE = 0;
constexpr nvmlGpuVirtualizationMode_t NVML_GPU_VIRTUALIZATION_MODE_PASSTHROUGH = 1;
constexpr nvmlGpuVirtualizationMode_t NVML_GPU_VIRTUALIZATION_MODE_VGPU = 2;
constexpr nvmlGpuVirtualizationMode_t NVML_GPU_VIRTUALIZATION_MODE_HOST_VGPU = 3;
constexpr nvmlGpuVirtualizationMode_t NVML_GPU_VIRTUALIZATION_MODE_HOST_VSGA = 4;

// nvmlDeviceGetMigMode's current/pending values.
constexpr unsigned int NVML_DEVICE_MIG_DISABLE = 0;
constexpr unsigned int NVML_DEVICE_MIG_ENABLE = 1;

// Clock-event (throttle) reason bits of nvmlDeviceGetCurrentClocksEventReasons (nvmlClocksEventReason*; the older
// nvmlClocksThrottleReason* names have the same values).
constexpr unsigned long long nvmlClocksEventReasonGpuIdle = 0x1ull;
constexpr unsigned long long nvmlClocksEventReasonApplicationsClocksSetting = 0x2ull;
constexpr unsigned long long nvmlClocksEventReasonSwPowerCap = 0x4ull;
constexpr unsigned long long nvmlClocksThrottleReasonHwSlowdown = 0x8ull;
constexpr unsigned long long nvmlClocksEventReasonSyncBoost = 0x10ull;
constexpr unsigned long long nvmlClocksEventReasonSwThermalSlowdown = 0x20ull;
constexpr unsigned long long nvmlClocksThrottleReasonHwThermalSlowdown = 0x40ull;
constexpr unsigned long long nvmlClocksThrottleReasonHwPowerBrakeSlowdown = 0x80ull;

// Buffer sizes.
constexpr unsigned int NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96;
constexpr unsigned int NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96;
constexpr unsigned int NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80;
constexpr unsigned int NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE = 32;

// NVLink link indices run 0 .. NVML_NVLINK_MAX_LINKS - 1. 18 in CUDA 12.x (11.8 too); NVML 13.x raised it to 36.
// The binding queries 18: a driver answers INVALID_ARGUMENT past the GPU's last link, so the value only bounds
// the walk; a GPU with more than 18 links would be undercounted (none that the harness targets has).
constexpr unsigned int NVML_NVLINK_MAX_LINKS = 18;

// nvmlGpuTopologyLevel_t: the closest common ancestor of two GPUs on PCIe (nvmlDeviceGetTopologyCommonAncestor).
// SINGLE and MULTIPLE are PCIe switches, not NVLink; NVLink is a P2P capability (below).
constexpr nvmlGpuTopologyLevel_t NVML_TOPOLOGY_INTERNAL = 0;     // the same board (two GPUs on one card)
constexpr nvmlGpuTopologyLevel_t NVML_TOPOLOGY_SINGLE = 10;      // one PCIe switch
constexpr nvmlGpuTopologyLevel_t NVML_TOPOLOGY_MULTIPLE = 20;    // several PCIe switches, no host bridge
constexpr nvmlGpuTopologyLevel_t NVML_TOPOLOGY_HOSTBRIDGE = 30;  // the same host bridge
constexpr nvmlGpuTopologyLevel_t NVML_TOPOLOGY_NODE = 40;        // the same NUMA node (CPU)
constexpr nvmlGpuTopologyLevel_t NVML_TOPOLOGY_SYSTEM = 50;      // across NUMA nodes (SMP interconnect)

// nvmlGpuP2PCapsIndex_t and nvmlGpuP2PStatus_t (nvmlDeviceGetP2PStatus).
constexpr nvmlGpuP2PCapsIndex_t NVML_P2P_CAPS_INDEX_READ = 0;
constexpr nvmlGpuP2PCapsIndex_t NVML_P2P_CAPS_INDEX_WRITE = 1;
constexpr nvmlGpuP2PCapsIndex_t NVML_P2P_CAPS_INDEX_NVLINK = 2;
constexpr nvmlGpuP2PCapsIndex_t NVML_P2P_CAPS_INDEX_ATOMICS = 3;
constexpr nvmlGpuP2PStatus_t NVML_P2P_STATUS_OK = 0;
constexpr nvmlGpuP2PStatus_t NVML_P2P_STATUS_CHIPSET_NOT_SUPPORED = 1;  // sic, NVML's spelling
constexpr nvmlGpuP2PStatus_t NVML_P2P_STATUS_GPU_NOT_SUPPORTED = 2;
constexpr nvmlGpuP2PStatus_t NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED = 3;
constexpr nvmlGpuP2PStatus_t NVML_P2P_STATUS_DISABLED_BY_REGKEY = 4;
constexpr nvmlGpuP2PStatus_t NVML_P2P_STATUS_NOT_SUPPORTED = 5;
constexpr nvmlGpuP2PStatus_t NVML_P2P_STATUS_UNKNOWN = 6;

// NVML_VALUE_NOT_AVAILABLE is (-1): in an unsigned long long field (usedGpuMemory) it reads as all ones.
constexpr unsigned long long NVML_VALUE_NOT_AVAILABLE_ULL = ~0ull;
// nvmlProcessInfo_t's gpuInstanceId / computeInstanceId outside MIG ("0xFFFFFFFF otherwise", nvml.h).
constexpr unsigned int NVML_NO_INSTANCE_ID = 0xFFFFFFFFu;

// GPU instance profile indices (the `profile` argument of nvmlDeviceGetGpuInstanceProfileInfo[V]). The count is
// 0xA in CUDA 12.x and 0x12 in NVML 13.x (gfx and media-engine variants added after 1_SLICE_REV2).
constexpr unsigned int NVML_GPU_INSTANCE_PROFILE_1_SLICE = 0x0;
constexpr unsigned int NVML_GPU_INSTANCE_PROFILE_2_SLICE = 0x1;
constexpr unsigned int NVML_GPU_INSTANCE_PROFILE_3_SLICE = 0x2;
constexpr unsigned int NVML_GPU_INSTANCE_PROFILE_4_SLICE = 0x3;
constexpr unsigned int NVML_GPU_INSTANCE_PROFILE_7_SLICE = 0x4;
constexpr unsigned int NVML_GPU_INSTANCE_PROFILE_8_SLICE = 0x5;
constexpr unsigned int NVML_GPU_INSTANCE_PROFILE_6_SLICE = 0x6;
constexpr unsigned int NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV1 = 0x7;
constexpr unsigned int NVML_GPU_INSTANCE_PROFILE_2_SLICE_REV1 = 0x8;
constexpr unsigned int NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2 = 0x9;
// Compute instance profile indices (nvmlGpuInstanceGetComputeInstanceProfileInfo's `profile`). The count is 0x8 in
// CUDA 12.x and 0x9 in NVML 13.x (7_SLICE_NVL added).
constexpr unsigned int NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE = 0x0;
constexpr unsigned int NVML_COMPUTE_INSTANCE_PROFILE_2_SLICE = 0x1;
constexpr unsigned int NVML_COMPUTE_INSTANCE_PROFILE_3_SLICE = 0x2;
constexpr unsigned int NVML_COMPUTE_INSTANCE_PROFILE_4_SLICE = 0x3;
constexpr unsigned int NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE = 0x4;
constexpr unsigned int NVML_COMPUTE_INSTANCE_PROFILE_8_SLICE = 0x5;
constexpr unsigned int NVML_COMPUTE_INSTANCE_PROFILE_6_SLICE = 0x6;
constexpr unsigned int NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE_REV1 = 0x7;
constexpr unsigned int NVML_COMPUTE_INSTANCE_PROFILE_COUNT = 0x8;  // CUDA 12.x
// nvmlGpuInstanceGetComputeInstanceProfileInfo's `engProfile`.
constexpr unsigned int NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED = 0x0;

// ---- structs ----
typedef struct nvmlPciInfo_st {  // nvmlDeviceGetPciInfo_v3 (NVML's nvmlPciInfo_t since the v2/v3 layout)
  char busIdLegacy[16];            // NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;        // device id << 16 | vendor id (0x10DE for NVIDIA): mig-parted's device-filter
  unsigned int pciSubSystemId;
  char busId[32];                  // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE
} nvmlPciInfo_t;

typedef struct nvmlMemory_st {  // nvmlDeviceGetMemoryInfo (the unversioned v1 layout)
  unsigned long long total;     // bytes
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlUtilization_st {  // nvmlDeviceGetUtilizationRates
  unsigned int gpu;     // percent of the last sample period with a kernel running
  unsigned int memory;  // percent of the last sample period with device memory being read or written
} nvmlUtilization_t;

typedef struct nvmlViolationTime_st {  // nvmlDeviceGetViolationStatus
  unsigned long long referenceTime;    // CPU timestamp, microseconds
  unsigned long long violationTime;    // cumulative, nanoseconds
} nvmlViolationTime_t;

// nvmlDeviceGetComputeRunningProcesses_v3 and _v2 take the same struct: nvml.h declares it once under both names.
typedef struct nvmlProcessInfo_v2_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes, or NVML_VALUE_NOT_AVAILABLE
  unsigned int gpuInstanceId;        // NVML_NO_INSTANCE_ID outside MIG
  unsigned int computeInstanceId;    // NVML_NO_INSTANCE_ID outside MIG
} nvmlProcessInfo_v2_t, nvmlProcessInfo_t;

// What an early R535 NVML (the CUDA 12.2 headers, met on the forward-compatibility path) wrote for each entry of
// ..._v3: the fields above and usedGpuCcProtectedMemory, 32 bytes, where R550-R580 write 24. Read with the stride
// the driver used (nvml.cpp, process_entry_bytes); never passed to NVML as a type.
typedef struct nvmlProcessInfo_v3_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
  unsigned long long usedGpuCcProtectedMemory;
} nvmlProcessInfo_v3_t;

typedef struct nvmlProcessUtilizationSample_st {  // nvmlDeviceGetProcessUtilization
  unsigned int pid;
  unsigned long long timeStamp;  // CPU timestamp, microseconds since the epoch
  unsigned int smUtil;           // percent of the sample period with a kernel of this process running
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

typedef struct nvmlDeviceAttributes_st {  // nvmlDeviceGetAttributes_v2
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

typedef struct nvmlGpuInstanceProfileInfo_st {  // nvmlDeviceGetGpuInstanceProfileInfo
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

// nvmlDeviceGetGpuInstanceProfileInfoV. A versioned struct: the caller sets `version` to
// nvmlGpuInstanceProfileInfo_v2 (below); a driver that does not take that version answers
// NVML_ERROR_ARGUMENT_VERSION_MISMATCH (or INVALID_ARGUMENT).
typedef struct nvmlGpuInstanceProfileInfo_v2_st {
  unsigned int version;
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
  char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];  // e.g. "MIG 1g.18gb"
} nvmlGpuInstanceProfileInfo_v2_t;

typedef struct nvmlComputeInstanceProfileInfo_st {  // nvmlGpuInstanceGetComputeInstanceProfileInfo
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

typedef struct nvmlGpuInstancePlacement_st {  // where a GPU instance sits, in memory slices
  unsigned int start;                           // index of the first occupied memory slice
  unsigned int size;                            // number of memory slices occupied
} nvmlGpuInstancePlacement_t;

typedef struct nvmlComputeInstancePlacement_st {
  unsigned int start;
  unsigned int size;
} nvmlComputeInstancePlacement_t;

typedef struct nvmlGpuInstanceInfo_st {  // nvmlGpuInstanceGetInfo
  nvmlDevice_t device;
  unsigned int id;
  unsigned int profileId;
  nvmlGpuInstancePlacement_t placement;
} nvmlGpuInstanceInfo_t;

typedef struct nvmlComputeInstanceInfo_st {  // nvmlComputeInstanceGetInfo_v2 (and the older unversioned name)
  nvmlDevice_t device;
  nvmlGpuInstance_t gpuInstance;
  unsigned int id;
  unsigned int profileId;
  nvmlComputeInstancePlacement_t placement;
} nvmlComputeInstanceInfo_t;

extern "C" {

// ---- entry points ----
// Declared only: the harness reaches them through dlsym and the fake defines them. Nothing may call them directly
// from the harness (it does not link against NVML, so such a call would not link).
const char* nvmlErrorString(nvmlReturn_t result);
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length);
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* cudaDriverVersion);

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* deviceCount);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length);
nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t device, nvmlComputeMode_t* mode);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory);
nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t device, nvmlDeviceAttributes_t* attributes);
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int* major, int* minor);
nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, nvmlEnableState_t* current, nvmlEnableState_t* pending);
nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t device, char* version, unsigned int length);
nvmlReturn_t nvmlDeviceGetVirtualizationMode(nvmlDevice_t device, nvmlGpuVirtualizationMode_t* pVirtualMode);
nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int* currLinkGen);
nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int* currLinkWidth);
nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int* maxLinkGen);
nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int* maxLinkWidth);
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci);
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, nvmlEnableState_t* isActive);
nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t device1, nvmlDevice_t device2,
                                                 nvmlGpuTopologyLevel_t* pathInfo);
nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2, nvmlGpuP2PCapsIndex_t p2pIndex,
                                    nvmlGpuP2PStatus_t* p2pStatus);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int* infoCount,
                                                     nvmlProcessInfo_t* infos);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int* infoCount,
                                                     nvmlProcessInfo_v2_t* infos);

// Telemetry.
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock);
nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock);
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power);               // milliwatts
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int* limit);       // milliwatts
nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device, unsigned int* defaultLimit);
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType, unsigned int* temp);
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long* clocksEventReasons);
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,  // the pre-R535 name of the above
                                                       unsigned long long* clocksThrottleReasons);
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization);
// Samples newer than lastSeenTimeStamp (microseconds since the epoch); utilization = NULL asks for the count
// (INSUFFICIENT_SIZE); NOT_FOUND: no sample newer than that.
nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device, nvmlProcessUtilizationSample_t* utilization,
                                             unsigned int* processSamplesCount, unsigned long long lastSeenTimeStamp);
nvmlReturn_t nvmlDeviceGetViolationStatus(nvmlDevice_t device, nvmlPerfPolicyType_t perfPolicyType,
                                          nvmlViolationTime_t* violTime);

// MIG.
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int* currentMode, unsigned int* pendingMode);
nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int* count);
nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index, nvmlDevice_t* migDevice);
nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int* id);
nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int* id);
nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfo(nvmlDevice_t device, unsigned int profile,
                                                 nvmlGpuInstanceProfileInfo_t* info);
nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfoV(nvmlDevice_t device, unsigned int profile,
                                                  nvmlGpuInstanceProfileInfo_v2_t* info);
// All the placements a profile (by its id, nvmlGpuInstanceProfileInfo_t.id) can take on the device, whatever is
// already created: memory slices [start, start + size). placements NULL: *count receives how many there are; else
// *count is the buffer's length on entry (the _v2 fix of the unversioned call, which ignored it) and their number
// on return, and a buffer too short answers NVML_ERROR_INSUFFICIENT_SIZE. NOT_SUPPORTED: no MIG, or the profile
// is not supported; INVALID_ARGUMENT: a bad device, profileId or count.
nvmlReturn_t nvmlDeviceGetGpuInstancePossiblePlacements_v2(nvmlDevice_t device, unsigned int profileId,
                                                           nvmlGpuInstancePlacement_t* placements,
                                                           unsigned int* count);
nvmlReturn_t nvmlDeviceCreateGpuInstance(nvmlDevice_t device, unsigned int profileId, nvmlGpuInstance_t* gpuInstance);
// The same at one of the profile's possible placements: INVALID_ARGUMENT when it is not one of them,
// INSUFFICIENT_RESOURCES when it overlaps an instance already there (NVML 11.4 and later).
nvmlReturn_t nvmlDeviceCreateGpuInstanceWithPlacement(nvmlDevice_t device, unsigned int profileId,
                                                      const nvmlGpuInstancePlacement_t* placement,
                                                      nvmlGpuInstance_t* gpuInstance);
nvmlReturn_t nvmlDeviceGetGpuInstanceById(nvmlDevice_t device, unsigned int id, nvmlGpuInstance_t* gpuInstance);
// The GPU instances of one profile (by its id), whether or not they hold a compute instance (`nvidia-smi mig -cgi`
// without -C makes one without, which nvmlDeviceGetMigDeviceHandleByIndex does not list). gpuInstances must hold the
// profile's instanceCount (it takes no NULL to ask for the count); *count receives how many there are. Requires a
// privileged user (else NO_PERMISSION).
nvmlReturn_t nvmlDeviceGetGpuInstances(nvmlDevice_t device, unsigned int profileId, nvmlGpuInstance_t* gpuInstances,
                                       unsigned int* count);
nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gpuInstance, nvmlGpuInstanceInfo_t* info);
nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfo(nvmlGpuInstance_t gpuInstance, unsigned int profile,
                                                          unsigned int engProfile,
                                                          nvmlComputeInstanceProfileInfo_t* info);
nvmlReturn_t nvmlGpuInstanceCreateComputeInstance(nvmlGpuInstance_t gpuInstance, unsigned int profileId,
                                                  nvmlComputeInstance_t* computeInstance);
nvmlReturn_t nvmlGpuInstanceGetComputeInstanceById(nvmlGpuInstance_t gpuInstance, unsigned int id,
                                                   nvmlComputeInstance_t* computeInstance);
nvmlReturn_t nvmlComputeInstanceGetInfo_v2(nvmlComputeInstance_t computeInstance, nvmlComputeInstanceInfo_t* info);
nvmlReturn_t nvmlComputeInstanceGetInfo(nvmlComputeInstance_t computeInstance, nvmlComputeInstanceInfo_t* info);
nvmlReturn_t nvmlComputeInstanceDestroy(nvmlComputeInstance_t computeInstance);
nvmlReturn_t nvmlGpuInstanceDestroy(nvmlGpuInstance_t gpuInstance);

}  // extern "C"

// NVML_STRUCT_VERSION(data, ver) of nvml.h: sizeof(nvml<data>_v<ver>_t) | (ver << 24).
constexpr unsigned int nvml_struct_version(std::size_t size, unsigned int ver) {
  return static_cast<unsigned int>(size) | (ver << 24u);
}
constexpr unsigned int nvmlGpuInstanceProfileInfo_v2 =
    nvml_struct_version(sizeof(nvmlGpuInstanceProfileInfo_v2_t), 2);

// ---- layout checks (expected values: see the top of this file) ----
static_assert(sizeof(void*) == 8 && sizeof(unsigned long long) == 8 && sizeof(unsigned int) == 4,
              "the layouts below are NVML's on LP64");
static_assert(sizeof(nvmlReturn_t) == 4, "C enums are int-sized");

static_assert(sizeof(nvmlMemory_t) == 24, "nvmlMemory_t");
static_assert(sizeof(nvmlPciInfo_t) == 68 && offsetof(nvmlPciInfo_t, pciDeviceId) == 28 &&
                  offsetof(nvmlPciInfo_t, busId) == 36,
              "nvmlPciInfo_t");
static_assert(offsetof(nvmlMemory_t, free) == 8 && offsetof(nvmlMemory_t, used) == 16, "nvmlMemory_t");

static_assert(sizeof(nvmlUtilization_t) == 8 && offsetof(nvmlUtilization_t, memory) == 4, "nvmlUtilization_t");

static_assert(sizeof(nvmlViolationTime_t) == 16 && offsetof(nvmlViolationTime_t, violationTime) == 8,
              "nvmlViolationTime_t");

// pid (4) + 4 bytes of padding before the 8-aligned usedGpuMemory.
static_assert(sizeof(nvmlProcessInfo_t) == 24, "nvmlProcessInfo_t");
static_assert(offsetof(nvmlProcessInfo_t, usedGpuMemory) == 8, "nvmlProcessInfo_t");
static_assert(offsetof(nvmlProcessInfo_t, gpuInstanceId) == 16, "nvmlProcessInfo_t");
static_assert(offsetof(nvmlProcessInfo_t, computeInstanceId) == 20, "nvmlProcessInfo_t");
static_assert(sizeof(nvmlProcessInfo_v3_t) == 32, "nvmlProcessInfo_v3_t");
static_assert(offsetof(nvmlProcessInfo_v3_t, computeInstanceId) == 20, "nvmlProcessInfo_v3_t");

// 8 unsigned ints, then memorySizeMB.
static_assert(sizeof(nvmlDeviceAttributes_t) == 40, "nvmlDeviceAttributes_t");
static_assert(offsetof(nvmlDeviceAttributes_t, computeInstanceSliceCount) == 28, "nvmlDeviceAttributes_t");
static_assert(offsetof(nvmlDeviceAttributes_t, memorySizeMB) == 32, "nvmlDeviceAttributes_t");

// 10 unsigned ints, then memorySizeMB.
static_assert(sizeof(nvmlGpuInstanceProfileInfo_t) == 48, "nvmlGpuInstanceProfileInfo_t");
static_assert(offsetof(nvmlGpuInstanceProfileInfo_t, sliceCount) == 8, "nvmlGpuInstanceProfileInfo_t");
static_assert(offsetof(nvmlGpuInstanceProfileInfo_t, memorySizeMB) == 40, "nvmlGpuInstanceProfileInfo_t");

// version first; 11 unsigned ints (44 bytes) + 4 of padding; memorySizeMB at 48; the 96-byte name at 56.
static_assert(offsetof(nvmlGpuInstanceProfileInfo_v2_t, version) == 0, "versioned structs start with version");
static_assert(offsetof(nvmlGpuInstanceProfileInfo_v2_t, id) == 4, "nvmlGpuInstanceProfileInfo_v2_t");
static_assert(offsetof(nvmlGpuInstanceProfileInfo_v2_t, sliceCount) == 12, "nvmlGpuInstanceProfileInfo_v2_t");
static_assert(offsetof(nvmlGpuInstanceProfileInfo_v2_t, memorySizeMB) == 48, "nvmlGpuInstanceProfileInfo_v2_t");
static_assert(offsetof(nvmlGpuInstanceProfileInfo_v2_t, name) == 56, "nvmlGpuInstanceProfileInfo_v2_t");
static_assert(sizeof(nvmlGpuInstanceProfileInfo_v2_t) == 152, "nvmlGpuInstanceProfileInfo_v2_t");
// 152 = 0x98, version 2 in the top byte: what NVML_STRUCT_VERSION(GpuInstanceProfileInfo, 2) gives.
static_assert(nvmlGpuInstanceProfileInfo_v2 == 0x02000098u, "nvmlGpuInstanceProfileInfo_v2");

static_assert(sizeof(nvmlComputeInstanceProfileInfo_t) == 36, "nvmlComputeInstanceProfileInfo_t: 9 unsigned ints");
static_assert(offsetof(nvmlComputeInstanceProfileInfo_t, sliceCount) == 4, "nvmlComputeInstanceProfileInfo_t");

static_assert(sizeof(nvmlGpuInstancePlacement_t) == 8 && sizeof(nvmlComputeInstancePlacement_t) == 8, "placements");

static_assert(sizeof(nvmlGpuInstanceInfo_t) == 24, "nvmlGpuInstanceInfo_t");
static_assert(offsetof(nvmlGpuInstanceInfo_t, id) == 8, "nvmlGpuInstanceInfo_t");
static_assert(offsetof(nvmlGpuInstanceInfo_t, profileId) == 12, "nvmlGpuInstanceInfo_t");
static_assert(offsetof(nvmlGpuInstanceInfo_t, placement) == 16, "nvmlGpuInstanceInfo_t");

static_assert(sizeof(nvmlComputeInstanceInfo_t) == 32, "nvmlComputeInstanceInfo_t");
static_assert(offsetof(nvmlComputeInstanceInfo_t, gpuInstance) == 8, "nvmlComputeInstanceInfo_t");
static_assert(offsetof(nvmlComputeInstanceInfo_t, id) == 16, "nvmlComputeInstanceInfo_t");
static_assert(offsetof(nvmlComputeInstanceInfo_t, profileId) == 20, "nvmlComputeInstanceInfo_t");
static_assert(offsetof(nvmlComputeInstanceInfo_t, placement) == 24, "nvmlComputeInstanceInfo_t");
