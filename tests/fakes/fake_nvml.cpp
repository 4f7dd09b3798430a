// A fake NVML (libfake_nvml.so) for tests: exports the NVML entry points the harness binds, with NVML's C ABI as
// declared once in harness/nvml/nvml_abi.h (the binding's header too: a signature or struct that differs from
// NVML's is fixed there, for both), and answers from a JSON description of the machine. The harness loads it
// through $INTERFERENCE_BENCH_NVML.
//
//   $FAKE_NVML_CONFIG  JSON file read at nvmlInit_v2 (without it nvmlInit_v2 fails with "Driver Not Loaded"):
//     {
//       "init": "ok" | "<error name>" | <code>,          // what nvmlInit_v2 returns (default "ok")
//       "fail": {"<nvml function>": <code or name>},     // scripted failures for every device (optional)
//       "devices": [{
//         "name": "NVIDIA H200", "uuid": "GPU-...", "compute_mode": 0, "sm": 132, "memory_mb": 143771,
//         "mig": {"supported": true, "current": 1, "pending": 1, "max_devices": 7, "slices": 7},
//         "instances": [{"gi": 1, "ci": 0, "profile": "1g.18gb", "uuid": "MIG-...", "sm": 16,
//                        "memory_mb": 16384, "slot": 0,      // slot: index for GetMigDeviceHandleByIndex
//                        "placement": [6, 1]}],              // its GPU instance's [start, size] (default: the
//                                                            // profile's first placement free of those before it)
//                        // "ci": null: a GPU instance without a compute instance (nvidia-smi mig -cgi without -C):
//                        // it takes its slices and nvmlDeviceGetGpuInstances lists it, but no MIG device handle does
//         "profiles": [{"name": "1g.18gb", "id": 19, "slices": 1, "sm": 16, "memory_mb": 16384,
//                       "capacity": 7, "index": 0,         // index: NVML_GPU_INSTANCE_PROFILE_* (default from slices)
//                       "create_fails": 23,                // (optional) what creating one answers, a race lost
//                       "placements": [[0, 1], [1, 1]]}],  // nvmlDeviceGetGpuInstancePossiblePlacements_v2's
//                       // [start, size] in memory slices (or {"start": s, "size": n}); default: the A100/H100/H200
//                       // ones for the slice count (1: {0..6}:1, or {0,2,4,6}:2 when capacity <= 4 as for 1g.35gb;
//                       // 2: {0,2,4}:2, 3: {0,4}:4, 4: {0}:4, 7: {0}:8), else `capacity` x `slices` side by side
//         "fail": {"nvmlDeviceGetMigMode": 3},               // scripted failures for this device
//         // --- telemetry (whole-GPU handles only; MIG handles answer NOT_SUPPORTED) ---
//         "telemetry": [{"sm_clock": 1980, "mem_clock": 3201, "max_sm_clock": 1980, "power_w": 650,
//                        "power_limit_w": 700, "default_power_limit_w": 700, "temp_c": 60, "reasons": 4,
//                        "util_gpu": 100, "util_mem": 40, "memory_used_mb": 1024,
//                        "power_violation_ns": 0, "thermal_violation_ns": 0, "violation_ref_us": 1000,
//                        "fail": {"nvmlDeviceGetPowerUsage": "GPU_IS_LOST"}}, ...],
//         // --- facts ---
//         "cc": "9.0",                                        // or [9, 0]
//         "ecc": {"current": 1, "pending": 1},                // null: NOT_SUPPORTED (default 1/1)
//         "vbios": "96.00.74.00.01",                          // nvmlDeviceGetVbiosVersion (null: NOT_SUPPORTED)
//         "virtualization_mode": 0,                           // nvmlGpuVirtualizationMode_t (default 0 NONE)
//         "pcie": {"gen": 5, "width": 16, "max_gen": 5, "max_width": 16},  // a null member: NOT_SUPPORTED
//         "nvlink": {"links": 18, "up": 18},                  // links 0..up-1 active; absent/null: NOT_SUPPORTED
//         "processes": [{"pid": 4242, "used_mb": 1024, "gi": 1, "ci": 0}],  // null: NOT_SUPPORTED (default [])
//                      // {"pid_file": PATH, "used_mb": ...}: one process per PID in PATH (one a line, read at
//                      // each call; a missing file lists none): the fake MPS server's, written as it starts;
//                      // {"children": true, "used_mb": ...}: one process per live child of the process calling
//                      // NVML (the harness's workers, which a real NVML lists once they hold a CUDA context)
//         "process_utilization": {"children": true, "sm_util": 60, "busy_calls": 3},
//                      // nvmlDeviceGetProcessUtilization (absent/null: NOT_SUPPORTED): one sample per live child of
//                      // the caller (the harness's workers), ending now; its smUtil is sm_util for the first
//                      // busy_calls calls of this process (-1: every call), 0 after: a program whose queued kernels
//                      // run on after it was paused, then drain
//         "process_info_bytes": 32,                           // ..._v3 writes 32-byte entries, as an early R535
//                                                             // NVML did (default 24, R550-R580)
//         "attributes_on_device": true                        // nvmlDeviceGetAttributes_v2 answers "sm" for the
//                                                             // whole GPU (default: NOT_SUPPORTED, as NVML documents)
//       }],
//       "topology": {"pci": "hostbridge", "nvlink": false,     // every pair of GPUs (absent: both calls NOT_SUPPORTED)
//                    "pairs": [{"a": 0, "b": 1, "pci": "single", "nvlink": true, "read": true, "write": true}]},
//                    // pci: internal|single|multiple|hostbridge|node|system (nvmlDeviceGetTopologyCommonAncestor);
//                    // nvlink/read/write: nvmlDeviceGetP2PStatus OK or NOT_SUPPORTED (read/write default true);
//                    // a pair's keys override the defaults, in either order of a and b
//       "driver_version": "550.90.07",                        // nvmlSystemGetDriverVersion (null: NOT_SUPPORTED)
//       "cuda_driver_version": 12040                          // nvmlSystemGetCudaDriverVersion_v2 (null: NOT_SUPPORTED)
//     }
//
//   Telemetry series: each entry point (and, for nvmlDeviceGetClockInfo / GetMaxClockInfo / GetViolationStatus, each
//   clock type or policy) keeps its own call counter per device and per process, reset when NVML is first
//   initialised: its n-th call (0-based) answers from telemetry[n], and from the last entry once the list is used
//   up. One ib::Nvml::read_telemetry makes one call of each, so reading k answers from entry k. A key absent from an
//   entry takes its default (sm_clock/max_sm_clock 1980, mem_clock 3201, power_w 100, power_limit_w and
//   default_power_limit_w 700, temp_c 40, reasons/util/memory_used_mb/violations 0, violation_ref_us 100000*n);
//   a key set to null answers NVML_ERROR_NOT_SUPPORTED; an entry's "fail" fails that call while the entry is served.
//   "telemetry" may also be a single object (one entry). nvmlDeviceGetMemoryInfo on a whole GPU reports
//   memory_used_mb from the series, and every call of it (also from mig/facts code) advances its counter.
//   nvmlDeviceGetCurrentClocksEventReasons and ...ThrottleReasons both answer "reasons".
//   $FAKE_NVML_STATE   JSON-lines file of MIG instances created/destroyed through the fake, shared by every process
//     that uses it: {"op":"create_gi","device":0,"gi":2,"profile":"1g.18gb","profile_id":19,"slices":1,"sm":16,
//     "memory_mb":16384,"placement":[3,1],"asked":false} (asked: made by ...WithPlacement at that placement, which
//     must be one of the profile's and free; else the first free one in the profile's order; neither: 23
//     INSUFFICIENT_RESOURCES, as a real GPU whose instances overlap every placement), {"op":"create_ci","device":0,"gi":2,"ci":0,"profile_id":0,"profile":"1g.18gb",
//     "uuid":"MIG-...","sm":16,"memory_mb":16384,"slot":3}, {"op":"destroy_ci","device":0,"gi":2,"ci":0},
//     {"op":"destroy_gi","device":0,"gi":2}. The MIG devices seen are the configured instances plus the replayed
//     file. Without it the operations are kept in memory for the life of the process.
//
// Fidelity (docs/fakes.md has the table): each behaviour follows NVML's own reference, the doc comments of nvml.h
// (quoted from github.com/NVIDIA/go-nvml, pkg/nvml/nvml.h, which carries NVML's header; the same text is the
// NVML API reference at docs.nvidia.com/deploy/nvml-api/). Where the fake answers something NVML would refuse,
// or cannot fail where NVML can, it says so at the call and docs/fakes.md lists it under "Not modelled".
// Not modelled: privileges (NVML answers NO_PERMISSION to a non-root caller of the GPU/compute instance calls and
// of a MIG GPU's aggregate process list; the fake answers everyone unless "fail" scripts it), the driver's own
// choice of placement (the fake takes the first free one in the profile's order), Xid/ECC events, a GPU reset,
// handles going stale after nvmlShutdown (the fake answers UNINITIALIZED instead), and timing.
//
// Error codes are NVML's (3 NOT_SUPPORTED, 4 NO_PERMISSION, 6 NOT_FOUND, 19 IN_USE, 23 INSUFFICIENT_RESOURCES, ...);
// names may be given as "NVML_ERROR_NOT_SUPPORTED" or "NOT_SUPPORTED".
#include <nlohmann/json.hpp>

#include <time.h>

#include "harness/nvml/nvml_abi.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <optional>
#include <map>
#include <mutex>
#include <sstream>
#include <iterator>
#include <string>
#include <vector>

using nlohmann::json;

namespace {

struct ErrorCode {
  nvmlReturn_t code;
  const char* name;
  const char* text;
};

// nvmlErrorString's texts. FAKE_ERROR(X, text) pairs NVML_X (from nvml_abi.h) with its name "X", so a code name
// that nvml_abi.h does not declare does not compile.
#define FAKE_ERROR(name, text) {NVML_##name, #name, text}
const ErrorCode kErrors[] = {
    FAKE_ERROR(SUCCESS, "Success"),
    FAKE_ERROR(ERROR_UNINITIALIZED, "Uninitialized"),
    FAKE_ERROR(ERROR_INVALID_ARGUMENT, "Invalid Argument"),
    FAKE_ERROR(ERROR_NOT_SUPPORTED, "Not Supported"),
    FAKE_ERROR(ERROR_NO_PERMISSION, "Insufficient Permissions"),
    FAKE_ERROR(ERROR_ALREADY_INITIALIZED, "Already Initialized"),
    FAKE_ERROR(ERROR_NOT_FOUND, "Not Found"),
    FAKE_ERROR(ERROR_INSUFFICIENT_SIZE, "Insufficient Size"),
    FAKE_ERROR(ERROR_INSUFFICIENT_POWER, "Insufficient External Power"),
    FAKE_ERROR(ERROR_DRIVER_NOT_LOADED, "Driver Not Loaded"),
    FAKE_ERROR(ERROR_TIMEOUT, "Timeout"),
    FAKE_ERROR(ERROR_IRQ_ISSUE, "Interrupt request issue"),
    FAKE_ERROR(ERROR_LIBRARY_NOT_FOUND, "NVML Shared Library Not Found"),
    FAKE_ERROR(ERROR_FUNCTION_NOT_FOUND, "Function Not Found"),
    FAKE_ERROR(ERROR_CORRUPTED_INFOROM, "Corrupted infoROM"),
    FAKE_ERROR(ERROR_GPU_IS_LOST, "GPU is lost"),
    FAKE_ERROR(ERROR_RESET_REQUIRED, "GPU requires restart"),
    FAKE_ERROR(ERROR_OPERATING_SYSTEM, "The operating system has blocked the request."),
    FAKE_ERROR(ERROR_LIB_RM_VERSION_MISMATCH, "RM has detected an NVML/RM version mismatch."),
    FAKE_ERROR(ERROR_IN_USE, "In use by another client"),
    FAKE_ERROR(ERROR_MEMORY, "Insufficient Memory"),
    FAKE_ERROR(ERROR_NO_DATA, "No data"),
    FAKE_ERROR(ERROR_VGPU_ECC_NOT_SUPPORTED, "vGPU ECC not supported"),
    FAKE_ERROR(ERROR_INSUFFICIENT_RESOURCES, "Insufficient resources"),
    FAKE_ERROR(ERROR_FREQ_NOT_SUPPORTED, "Frequency not supported"),
    FAKE_ERROR(ERROR_ARGUMENT_VERSION_MISMATCH, "Argument version mismatch"),
    FAKE_ERROR(ERROR_DEPRECATED, "Deprecated"),
    FAKE_ERROR(ERROR_NOT_READY, "Not ready"),
    FAKE_ERROR(ERROR_GPU_NOT_FOUND, "GPU not found"),
    FAKE_ERROR(ERROR_INVALID_STATE, "Invalid state"),
    FAKE_ERROR(ERROR_UNKNOWN, "Unknown Error"),
};
#undef FAKE_ERROR

// A code from the config: a number, "ok", "NVML_ERROR_X", "ERROR_X" or "X".
int code_from(const json& v) {
  if (v.is_number_integer()) return v.get<int>();
  if (!v.is_string()) return NVML_ERROR_UNKNOWN;
  std::string s = v.get<std::string>();
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (s == "OK" || s == "SUCCESS" || s == "NVML_SUCCESS") return NVML_SUCCESS;
  if (s.rfind("NVML_", 0) == 0) s = s.substr(5);
  if (s.rfind("ERROR_", 0) != 0) s = "ERROR_" + s;
  for (const auto& e : kErrors)
    if (s == e.name) return e.code;
  return NVML_ERROR_UNKNOWN;
}

// ---- handles: stable addresses, never freed ----
enum class Kind { device, mig, gi, ci };
struct Handle {
  Kind kind;
  unsigned dev;
  unsigned gi;
  unsigned ci;
};
std::deque<Handle> g_handles;

Handle* intern(Kind kind, unsigned dev, unsigned gi = 0, unsigned ci = 0) {
  for (auto& h : g_handles)
    if (h.kind == kind && h.dev == dev && h.gi == gi && h.ci == ci) return &h;
  g_handles.push_back({kind, dev, gi, ci});
  return &g_handles.back();
}

Handle* lookup(const void* p, Kind kind) {
  if (!p) return nullptr;
  for (auto& h : g_handles)
    if (&h == p) return h.kind == kind ? &h : nullptr;
  return nullptr;
}

template <typename T>
T as(Handle* h) {
  return reinterpret_cast<T>(h);
}

// ---- configuration and state ----
json g_config;
int g_init_count = 0;
std::vector<json> g_memory_ops;  // when $FAKE_NVML_STATE is not set

const json& devices() {
  static const json empty = json::array();
  auto it = g_config.find("devices");
  return it != g_config.end() && it->is_array() ? *it : empty;
}

const json& device_config(unsigned dev) { return devices().at(dev); }

template <typename T>
T get_or(const json& j, const char* key, T fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  return it->get<T>();
}

unsigned as_unsigned(const json& j, const char* key, unsigned fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (it->is_boolean()) return it->get<bool>() ? 1u : 0u;
  return it->get<unsigned>();
}

// Scripted failure for `fn` (global "fail", then the device's "fail").
int scripted(const char* fn, int dev = -1) {
  auto check = [fn](const json& j) -> int {
    auto f = j.find("fail");
    if (f == j.end() || !f->is_object()) return NVML_SUCCESS;
    auto it = f->find(fn);
    return it == f->end() ? NVML_SUCCESS : code_from(*it);
  };
  if (int rc = check(g_config)) return rc;
  if (dev >= 0 && static_cast<size_t>(dev) < devices().size()) return check(device_config(dev));
  return NVML_SUCCESS;
}

const char* state_path() {
  const char* p = std::getenv("FAKE_NVML_STATE");
  return p && *p ? p : nullptr;
}

std::vector<json> read_ops() {
  const char* path = state_path();
  if (!path) return g_memory_ops;
  std::vector<json> ops;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      ops.push_back(json::parse(line));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fake_nvml: bad line in %s: %s\n", path, e.what());
    }
  }
  return ops;
}

void append_op(const json& op) {
  const char* path = state_path();
  if (!path) {
    g_memory_ops.push_back(op);
    return;
  }
  std::ofstream out(path, std::ios::app);
  out << op.dump() << "\n";
}

unsigned slices_of_name(const std::string& profile) {
  // "1g.18gb" -> 1, "1c.2g.35gb" -> 2
  auto g = profile.find('g');
  if (g == std::string::npos) return 1;
  auto start = profile.rfind('.', g);
  start = start == std::string::npos ? 0 : start + 1;
  try {
    return static_cast<unsigned>(std::stoul(profile.substr(start, g - start)));
  } catch (...) {
    return 1;
  }
}

struct Gi {
  unsigned id;
  std::string profile;
  unsigned profile_id;
  unsigned slices;
  unsigned sm;
  unsigned long long memory_mb;
  unsigned start;  // its placement: memory slices [start, start + size)
  unsigned size;
};
struct Ci {
  unsigned gi;
  unsigned ci;
  unsigned profile_id;
  std::string profile;
  std::string uuid;
  unsigned sm;
  unsigned long long memory_mb;
  unsigned slot;
  unsigned slices;
};
struct DevState {
  std::vector<Gi> gis;
  std::vector<Ci> cis;
  Gi* find_gi(unsigned id) {
    for (auto& g : gis)
      if (g.id == id) return &g;
    return nullptr;
  }
  Ci* find_ci(unsigned gi, unsigned ci) {
    for (auto& c : cis)
      if (c.gi == gi && c.ci == ci) return &c;
    return nullptr;
  }
};

const json* profile_by(const json& dev, const std::function<bool(const json&)>& pred) {
  auto it = dev.find("profiles");
  if (it == dev.end() || !it->is_array()) return nullptr;
  for (const auto& p : *it)
    if (pred(p)) return &p;
  return nullptr;
}

// The GPU and compute instance profile indices of each slice count the fake offers (the _REV variants are only
// reachable through a profile's explicit "index").
struct SliceProfile {
  unsigned slices;
  unsigned gpu_instance_profile;      // NVML_GPU_INSTANCE_PROFILE_*
  unsigned compute_instance_profile;  // NVML_COMPUTE_INSTANCE_PROFILE_*
};
constexpr SliceProfile kSliceProfiles[] = {
    {1, NVML_GPU_INSTANCE_PROFILE_1_SLICE, NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE},
    {2, NVML_GPU_INSTANCE_PROFILE_2_SLICE, NVML_COMPUTE_INSTANCE_PROFILE_2_SLICE},
    {3, NVML_GPU_INSTANCE_PROFILE_3_SLICE, NVML_COMPUTE_INSTANCE_PROFILE_3_SLICE},
    {4, NVML_GPU_INSTANCE_PROFILE_4_SLICE, NVML_COMPUTE_INSTANCE_PROFILE_4_SLICE},
    {7, NVML_GPU_INSTANCE_PROFILE_7_SLICE, NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE},
    {8, NVML_GPU_INSTANCE_PROFILE_8_SLICE, NVML_COMPUTE_INSTANCE_PROFILE_8_SLICE},
    {6, NVML_GPU_INSTANCE_PROFILE_6_SLICE, NVML_COMPUTE_INSTANCE_PROFILE_6_SLICE},
};

// NVML_GPU_INSTANCE_PROFILE_* index for a slice count, or -1.
int gi_profile_for_slices(unsigned slices) {
  for (const auto& p : kSliceProfiles)
    if (p.slices == slices) return static_cast<int>(p.gpu_instance_profile);
  return -1;
}
// NVML_COMPUTE_INSTANCE_PROFILE_* index for a slice count, or -1.
int ci_profile_for_slices(unsigned slices) {
  for (const auto& p : kSliceProfiles)
    if (p.slices == slices) return static_cast<int>(p.compute_instance_profile);
  return -1;
}
// Slice count of a NVML_COMPUTE_INSTANCE_PROFILE_* index, or -1.
int slices_for_ci_index(unsigned index) {
  for (const auto& p : kSliceProfiles)
    if (p.compute_instance_profile == index) return static_cast<int>(p.slices);
  return -1;
}

// A profile's possible placements (see "placements" at the top of this file).
std::vector<nvmlGpuInstancePlacement_t> placements_of(const json& p) {
  std::vector<nvmlGpuInstancePlacement_t> out;
  auto it = p.find("placements");
  if (it != p.end() && it->is_array()) {
    for (const auto& pl : *it) {
      if (pl.is_array() && pl.size() == 2)
        out.push_back({pl[0].get<unsigned>(), pl[1].get<unsigned>()});
      else if (pl.is_object())
        out.push_back({as_unsigned(pl, "start", 0), as_unsigned(pl, "size", 1)});
    }
    return out;
  }
  unsigned slices = as_unsigned(p, "slices", slices_of_name(get_or<std::string>(p, "name", "")));
  switch (slices) {
    case 1:
      if (as_unsigned(p, "capacity", 1) <= 4)
        out = {{0, 2}, {2, 2}, {4, 2}, {6, 2}};  // the 2-memory-slice 1g profile (1g.35gb on an H200)
      else
        for (unsigned k = 0; k < 7; ++k) out.push_back({k, 1});
      break;
    case 2: out = {{0, 2}, {2, 2}, {4, 2}}; break;
    case 3: out = {{0, 4}, {4, 4}}; break;
    case 4: out = {{0, 4}}; break;
    case 7: out = {{0, 8}}; break;
    default:
      for (unsigned k = 0; k < as_unsigned(p, "capacity", 1); ++k) out.push_back({k * slices, slices});
  }
  return out;
}

// Whether [start, start + size) overlaps a GPU instance of `s`.
bool placement_taken(const DevState& s, const nvmlGpuInstancePlacement_t& pl) {
  return std::any_of(s.gis.begin(), s.gis.end(), [&](const Gi& g) {
    return pl.start < g.start + g.size && g.start < pl.start + pl.size;
  });
}

// Where the fake puts a new GPU instance of profile `p` without a placement asked for: the first of its
// possible placements (NVML's order) that overlaps nothing in `s`; none when every one does.
std::optional<nvmlGpuInstancePlacement_t> first_free_placement(const json& p, const DevState& s) {
  for (const auto& pl : placements_of(p))
    if (!placement_taken(s, pl)) return pl;
  return std::nullopt;
}

DevState state_of(unsigned dev) {
  DevState s;
  const json& d = device_config(dev);
  auto inst = d.find("instances");
  if (inst != d.end() && inst->is_array()) {
    unsigned seq = 0;
    for (const auto& i : *inst) {
      const bool no_ci = i.contains("ci") && i["ci"].is_null();
      Ci c;
      c.gi = as_unsigned(i, "gi", 0);
      c.ci = as_unsigned(i, "ci", 0);
      c.profile = get_or<std::string>(i, "profile", "1g.18gb");
      c.uuid = get_or<std::string>(i, "uuid", "MIG-fake-" + std::to_string(dev) + "-" + std::to_string(c.gi) + "-" +
                                                  std::to_string(c.ci));
      c.sm = as_unsigned(i, "sm", 16);
      c.memory_mb = get_or<unsigned long long>(i, "memory_mb", 16384);
      c.slot = as_unsigned(i, "slot", seq);
      c.slices = slices_of_name(c.profile);
      c.profile_id =
          as_unsigned(i, "ci_profile_id", static_cast<unsigned>(std::max(0, ci_profile_for_slices(c.slices))));
      ++seq;
      if (!s.find_gi(c.gi)) {
        // The GPU instance's profile: a compute instance named "1c.2g.35gb" sits in a 2g.35gb.
        const auto dot = c.profile.find("c.");
        const std::string gi_profile = dot != std::string::npos && c.profile.find('g') > dot ? c.profile.substr(dot + 2)
                                                                                               : c.profile;
        const json* p = profile_by(d, [&](const json& p) { return get_or<std::string>(p, "name", "") == gi_profile; });
        Gi g{c.gi, gi_profile, p ? as_unsigned(*p, "id", 0) : 0u, c.slices, c.sm, c.memory_mb, 0, c.slices};
        auto at = i.find("placement");
        if (at != i.end() && at->is_array() && at->size() == 2) {
          g.start = (*at)[0].get<unsigned>();
          g.size = (*at)[1].get<unsigned>();
        } else if (auto free = p ? first_free_placement(*p, s) : std::nullopt) {
          g.start = free->start;
          g.size = free->size;
        }
        s.gis.push_back(g);
      }
      if (!no_ci) s.cis.push_back(c);
    }
  }
  for (const auto& op : read_ops()) {
    if (as_unsigned(op, "device", 0) != dev) continue;
    std::string kind = get_or<std::string>(op, "op", "");
    unsigned gi = as_unsigned(op, "gi", 0);
    if (kind == "create_gi") {
      const json placement = op.value("placement", json::array({0, as_unsigned(op, "slices", 1)}));
      s.gis.push_back({gi, get_or<std::string>(op, "profile", ""), as_unsigned(op, "profile_id", 0),
                       as_unsigned(op, "slices", 1), as_unsigned(op, "sm", 0),
                       get_or<unsigned long long>(op, "memory_mb", 0), placement[0].get<unsigned>(),
                       placement[1].get<unsigned>()});
    } else if (kind == "create_ci") {
      s.cis.push_back({gi, as_unsigned(op, "ci", 0), as_unsigned(op, "profile_id", 0),
                       get_or<std::string>(op, "profile", ""), get_or<std::string>(op, "uuid", ""),
                       as_unsigned(op, "sm", 0), get_or<unsigned long long>(op, "memory_mb", 0),
                       as_unsigned(op, "slot", 0), as_unsigned(op, "slices", 1)});
    } else if (kind == "destroy_ci") {
      unsigned ci = as_unsigned(op, "ci", 0);
      s.cis.erase(std::remove_if(s.cis.begin(), s.cis.end(), [&](const Ci& c) { return c.gi == gi && c.ci == ci; }),
                  s.cis.end());
    } else if (kind == "destroy_gi") {
      s.gis.erase(std::remove_if(s.gis.begin(), s.gis.end(), [&](const Gi& g) { return g.id == gi; }), s.gis.end());
    }
  }
  return s;
}

struct MigInfo {
  bool supported;
  unsigned current;
  unsigned pending;
  unsigned max_devices;
  unsigned slices;
};
MigInfo mig_of(unsigned dev) {
  const json& d = device_config(dev);
  auto m = d.find("mig");
  if (m == d.end() || !m->is_object() || !get_or<bool>(*m, "supported", true)) return {false, 0, 0, 0, 0};
  return {true, as_unsigned(*m, "current", 0), as_unsigned(*m, "pending", as_unsigned(*m, "current", 0)),
          as_unsigned(*m, "max_devices", 7), as_unsigned(*m, "slices", 7)};
}

std::string new_uuid(unsigned dev, unsigned gi, unsigned ci, size_t salt) {
  std::hash<std::string> h;
  std::string base = get_or<std::string>(device_config(dev), "uuid", "GPU-fake") + "/" + std::to_string(gi) + "/" +
                     std::to_string(ci) + "/" + std::to_string(salt);
  unsigned long long a = h(base), b = h(base + "#");
  char buf[64];
  std::snprintf(buf, sizeof buf, "MIG-%08llx-%04llx-%04llx-%04llx-%012llx", a >> 32, (a >> 16) & 0xffff, a & 0xffff,
                b >> 48, b & 0xffffffffffffULL);
  return buf;
}

// ---- telemetry series ----
std::mutex g_calls_mutex;
std::map<std::string, size_t> g_calls;  // "<device>/<entry point>/<argument>" -> calls so far

// The series entry for the next call of `fn` (with `arg`) on `dev`, advancing its counter; `n` receives the entry's
// call number. Returns an empty object when the device has no "telemetry".
json telemetry_entry(unsigned dev, const char* fn, int arg, size_t* n = nullptr) {
  size_t k;
  {
    std::lock_guard<std::mutex> lock(g_calls_mutex);
    k = g_calls[std::to_string(dev) + "/" + fn + "/" + std::to_string(arg)]++;
  }
  if (n) *n = k;
  const json& d = device_config(dev);
  auto it = d.find("telemetry");
  if (it == d.end() || it->is_null()) return json::object();
  if (it->is_object()) return *it;
  if (!it->is_array() || it->empty()) return json::object();
  return (*it)[std::min(k, it->size() - 1)];
}

// The entry's scripted failure for `fn`, else the value of `key` (absent: `fallback`; null: NOT_SUPPORTED).
int series_value(const json& entry, const char* fn, const char* key, const json& fallback, json* out) {
  auto f = entry.find("fail");
  if (f != entry.end() && f->is_object()) {
    auto it = f->find(fn);
    if (it != f->end())
      if (int rc = code_from(*it)) return rc;
  }
  auto it = entry.find(key);
  if (it == entry.end()) {
    *out = fallback;
    return NVML_SUCCESS;
  }
  if (it->is_null()) return NVML_ERROR_NOT_SUPPORTED;
  *out = *it;
  return NVML_SUCCESS;
}

int copy_string(const std::string& s, char* out, unsigned length) {
  if (!out) return NVML_ERROR_INVALID_ARGUMENT;
  if (s.size() + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(out, s.c_str(), s.size() + 1);
  return NVML_SUCCESS;
}

// Resolves a device-or-MIG handle; returns the device index or -1.
int device_of(nvmlDevice_t h, Handle** out = nullptr) {
  Handle* p = lookup(h, Kind::device);
  if (!p) p = lookup(h, Kind::mig);
  if (out) *out = p;
  return p ? static_cast<int>(p->dev) : -1;
}

#define FAKE_REQUIRE_INIT() \
  if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED

// The processes NVML lists on a device or on one GPU instance of it (defined with the process calls below).
int listed_processes(int dev, std::optional<unsigned> mig_gi, json* list);

// Whether a process NVML lists sits on GPU instance `gi` (and, `ci` given, on that compute instance): NVML refuses
// to destroy an instance in use (nvml.h, nvmlComputeInstanceDestroy and nvmlGpuInstanceDestroy: "NVML_ERROR_IN_USE
// If the compute instance is in use. This error would be returned if processes (e.g. CUDA application) are active
// on the compute instance"; for a GPU instance "... or compute instances are active").
bool instance_in_use(unsigned dev, unsigned gi, std::optional<unsigned> ci) {
  json list;
  if (listed_processes(static_cast<int>(dev), gi, &list) != NVML_SUCCESS) return false;
  return std::any_of(list.begin(), list.end(), [&](const json& p) {
    return !ci || as_unsigned(p, "ci", *ci) == *ci;
  });
}

}  // namespace

extern "C" {

const char* nvmlErrorString(nvmlReturn_t result) {
  for (const auto& e : kErrors)
    if (e.code == result) return e.text;
  return "Unknown Error";
}

// nvml.h, nvmlInit_v2: "A reference count of the number of initializations is maintained. Shutdown only occurs when
// the reference count reaches zero"; NVML_ERROR_DRIVER_NOT_LOADED "if NVIDIA driver is not running" (here: no
// $FAKE_NVML_CONFIG). Every other call answers NVML_ERROR_UNINITIALIZED until then (FAKE_REQUIRE_INIT).
nvmlReturn_t nvmlInit_v2(void) {
  const char* path = std::getenv("FAKE_NVML_CONFIG");
  if (!path || !*path) return NVML_ERROR_DRIVER_NOT_LOADED;
  json config;
  try {
    std::ifstream in(path);
    if (!in) {
      std::fprintf(stderr, "fake_nvml: cannot read %s\n", path);
      return NVML_ERROR_UNKNOWN;
    }
    config = json::parse(in);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake_nvml: bad config %s: %s\n", path, e.what());
    return NVML_ERROR_UNKNOWN;
  }
  g_config = std::move(config);
  auto init = g_config.find("init");
  if (init != g_config.end())
    if (int rc = code_from(*init)) return rc;
  if (int rc = scripted("nvmlInit_v2")) return rc;
  if (g_init_count++ == 0) {
    g_memory_ops.clear();
    std::lock_guard<std::mutex> lock(g_calls_mutex);
    g_calls.clear();
  }
  return NVML_SUCCESS;
}

// nvml.h, nvmlShutdown: "once for each call to nvmlInit_v2()"; NVML_ERROR_UNINITIALIZED "if the library has not
// been successfully initialized" (the header also says no error is reported for one shutdown too many; the fake
// follows the listed return code, which the harness ignores either way).
nvmlReturn_t nvmlShutdown(void) {
  FAKE_REQUIRE_INIT();
  --g_init_count;
  return scripted("nvmlShutdown");
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  FAKE_REQUIRE_INIT();
  if (int rc = scripted("nvmlDeviceGetCount_v2")) return rc;
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  *count = static_cast<unsigned>(devices().size());
  return NVML_SUCCESS;
}

// nvml.h, nvmlDeviceGetHandleByIndex_v2: INVALID_ARGUMENT "if index is invalid or device is NULL"; NO_PERMISSION,
// INSUFFICIENT_POWER, IRQ_ISSUE and GPU_IS_LOST are real answers for a device nvmlDeviceGetCount_v2 counts ("returns
// count of all devices in the system even if nvmlDeviceGetHandleByIndex_v2 returns NVML_ERROR_NO_PERMISSION"): the
// fake gives them only when the device's "fail" scripts them.
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  FAKE_REQUIRE_INIT();
  if (int rc = scripted("nvmlDeviceGetHandleByIndex_v2", static_cast<int>(index))) return rc;
  if (!device || index >= devices().size()) return NVML_ERROR_INVALID_ARGUMENT;
  *device = as<nvmlDevice_t>(intern(Kind::device, index));
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  FAKE_REQUIRE_INIT();
  Handle* h = nullptr;
  int dev = device_of(device, &h);
  if (dev < 0) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = scripted("nvmlDeviceGetName", dev)) return rc;
  std::string base = get_or<std::string>(device_config(dev), "name", "NVIDIA H200");
  if (h->kind == Kind::device) return copy_string(base, name, length);
  DevState s = state_of(h->dev);
  Ci* c = s.find_ci(h->gi, h->ci);
  if (!c) return NVML_ERROR_INVALID_ARGUMENT;
  return copy_string(base + " MIG " + c->profile, name, length);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  FAKE_REQUIRE_INIT();
  Handle* h = nullptr;
  int dev = device_of(device, &h);
  if (dev < 0) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = scripted("nvmlDeviceGetUUID", dev)) return rc;
  if (h->kind == Kind::device)
    return copy_string(get_or<std::string>(device_config(dev), "uuid", "GPU-fake-" + std::to_string(dev)), uuid,
                       length);
  DevState s = state_of(h->dev);
  Ci* c = s.find_ci(h->gi, h->ci);
  if (!c) return NVML_ERROR_INVALID_ARGUMENT;
  return copy_string(c->uuid, uuid, length);
}

nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t device, nvmlComputeMode_t* mode) {
  FAKE_REQUIRE_INIT();
  int dev = device_of(device);
  if (dev < 0 || !mode) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = scripted("nvmlDeviceGetComputeMode", dev)) return rc;
  *mode = get_or<int>(device_config(dev), "compute_mode", 0);
  return NVML_SUCCESS;
}

// nvml.h, nvmlDeviceGetMigMode: NOT_SUPPORTED "If device doesn't support MIG mode"; pending is "the target mode
// following the next activation trigger" (configured: "mig": {"current", "pending"}).
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int* current, unsigned int* pending) {
  FAKE_REQUIRE_INIT();
  Handle* h = lookup(device, Kind::device);
  if (!h || !current || !pending) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = scripted("nvmlDeviceGetMigMode", static_cast<int>(h->dev))) return rc;
  MigInfo m = mig_of(h->dev);
  if (!m.supported) return NVML_ERROR_NOT_SUPPORTED;
  *current = m.current;
  *pending = m.pending;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int* count) {
  FAKE_REQUIRE_INIT();
  Handle* h = lookup(device, Kind::device);
  if (!h || !count) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = scripted("nvmlDeviceGetMaxMigDeviceCount", static_cast<int>(h->dev))) return rc;
  MigInfo m = mig_of(h->dev);
  if (!m.supported) return NVML_ERROR_NOT_SUPPORTED;
  *count = m.max_devices;
  return NVML_SUCCESS;
}

// nvml.h, nvmlDeviceGetMigDeviceHandleByIndex: INVALID_ARGUMENT "if device, index or migDevice reference is
// invalid" (index past nvmlDeviceGetMaxMigDeviceCount), NOT_FOUND "if no valid MIG device was found at index"
// (indices may have holes: "slot"), and a handle whose compute instance is destroyed "would remain invalid" (the
// fake's calls on it answer INVALID_ARGUMENT).
nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index, nvmlDevice_t* mig) {
  FAKE_REQUIRE_INIT();
  Handle* h = lookup(device, Kind::device);
  if (!h || !mig) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = scripted("nvmlDeviceGetMigDeviceHandleByIndex", static_cast<int>(h->dev))) return rc;
  MigInfo m = mig_of(h->dev);
  if (!m.supported) return NVML_ERROR_NOT_SUPPORTED;
  if (index >= m.max_devices) return NVML_ERROR_INVALID_ARGUMENT;
  if (!m.current) return NVML_ERROR_NOT_FOUND;
  DevState s = state_of(h->dev);
  for (const auto& c : s.cis)
    if (c.slot == index) {
      *mig = as<nvmlDevice_t>(intern(Kind::mig, h->dev, c.gi, c.ci));
      return NVML_SUCCESS;
    }
  return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int* id) {
  FAKE_REQUIRE_INIT();
  Handle* h = nullptr;
  int dev = device_of(device, &h);
  if (dev < 0 || !id) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = scripted("nvmlDeviceGetGpuInstanceId", dev)) return rc;
  if (h->kind != Kind::mig) return NVML_ERROR_NOT_SUPPORTED;
  *id = h->gi;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int* id) {
  FAKE_REQUIRE_INIT();
  Handle* h = nullptr;
  int dev = device_of(device, &h);
  if (dev < 0 || !id) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = scripted("nvmlDeviceGetComputeInstanceId", dev)) return rc;
  if (h->kind != Kind::mig) return NVML_ERROR_NOT_SUPPORTED;
  *id = h->ci;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  FAKE_REQUIRE_INIT();
  Handle* h = nullptr;
  int dev = device_of(device, &h);
  if (dev < 0 || !memory) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = scripted("nvmlDeviceGetMemoryInfo", dev)) return rc;
  unsigned long long mb = get_or<unsigned long long>(device_config(dev), "memory_mb", 143771);
  if (h->kind == Kind::mig) {
    DevState s = state_of(h->dev);
    Ci* c = s.find_ci(h->gi, h->ci);
    if (!c) return NVML_ERROR_INVALID_ARGUMENT;
    mb = c->memory_mb;
  }
  memory->total = mb << 20;
  memory->used = 0;
  if (h->kind == Kind::device) {
    json used;
    if (int rc = series_value(telemetry_entry(h->dev, "nvmlDeviceGetMemoryInfo", 0), "nvmlDeviceGetMemoryInfo",
                              "memory_used_mb", 0, &used))
      return rc;
    memory->used = std::min(memory->total, used.get<unsigned long long>() << 20);
  }
  memory->free = memory->total - memory->used;
  return NVML_SUCCESS;
}

// nvml.h, nvmlDeviceGetAttributes_v2: "This API currently only supports MIG device handles" (a whole GPU's
// handle: NOT_SUPPORTED unless "attributes_on_device" says a driver answers it).
nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t device, nvmlDeviceAttributes_t* attributes) {
  FAKE_REQUIRE_INIT();
  Handle* h = nullptr;
  int dev = device_of(device, &h);
  if (dev < 0 || !attributes) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = scripted("nvmlDeviceGetAttributes_v2", dev)) return rc;
  if (h->kind != Kind::mig) {  // NVML documents this call for MIG device handles only
    const json& d = device_config(h->dev);
    if (!get_or<bool>(d, "attributes_on_device", false)) return NVML_ERROR_NOT_SUPPORTED;
    *attributes = {};
    attributes->multiprocessorCount = as_unsigned(d, "sm", 132);
    attributes->memorySizeMB = get_or<unsigned long long>(d, "memory_mb", 143771);
    return NVML_SUCCESS;
  }
  DevState s = state_of(h->dev);
  Ci* c = s.find_ci(h->gi, h->ci);
  Gi* g = s.find_gi(h->gi);
  if (!c) return NVML_ERROR_INVALID_ARGUMENT;
  *attributes = {};
  attributes->multiprocessorCount = c->sm;
  attributes->memorySizeMB = c->memory_mb;
  attributes->gpuInstanceSliceCount = g ? g->slices : c->slices;
  attributes->computeInstanceSliceCount = c->slices;
  attributes->sharedCopyEngineCount = 1;
  return NVML_SUCCESS;
}

}  // extern "C"

namespace {

// The configured GPU instance profile at NVML_GPU_INSTANCE_PROFILE_* index `index`, or an error code.
int gi_profile_at(unsigned dev, unsigned index, const json** out) {
  MigInfo m = mig_of(dev);
  if (!m.supported || !m.current) return NVML_ERROR_NOT_SUPPORTED;
  const json* p = profile_by(device_config(dev), [&](const json& p) {
    unsigned slices = as_unsigned(p, "slices", slices_of_name(get_or<std::string>(p, "name", "")));
    int idx = p.contains("index") ? static_cast<int>(as_unsigned(p, "index", 0)) : gi_profile_for_slices(slices);
    return idx == static_cast<int>(index);
  });
  if (!p) return index < 32 ? NVML_ERROR_NOT_SUPPORTED : NVML_ERROR_INVALID_ARGUMENT;
  *out = p;
  return NVML_SUCCESS;
}

template <typename Info>
void fill_gi_profile(const json& p, Info* info) {
  std::string name = get_or<std::string>(p, "name", "");
  info->id = as_unsigned(p, "id", 0);
  info->isP2pSupported = 0;
  info->sliceCount = as_unsigned(p, "slices", slices_of_name(name));
  info->instanceCount = as_unsigned(p, "capacity", 1);
  info->multiprocessorCount = as_unsigned(p, "sm", 16);
  info->copyEngineCount = 1;
  info->decoderCount = info->encoderCount = info->jpegCount = info->ofaCount = 0;
  info->memorySizeMB = get_or<unsigned long long>(p, "memory_mb", 16384);
}

// Both GPU instance creations: the profile's instance count and the GPU's compute slices, then the placement
// (the one asked for, which must be one of the profile's and free; else the first free one). nvml.h,
// nvmlDeviceCreateGpuInstance(WithPlacement): NOT_SUPPORTED "If device doesn't have MIG mode enabled",
// INSUFFICIENT_RESOURCES "If the requested GPU instance could not be created"; nvmlDeviceGetGpuInstancePossible-
// Placements_v2: "Creation of new GPU instance will fail if there is overlap with the already occupied memory
// slices". Which free placement a real driver picks without one asked for is not documented (not modelled).
nvmlReturn_t create_gi(Handle* h, unsigned profileId, const nvmlGpuInstancePlacement_t* asked, nvmlGpuInstance_t* gi) {
  MigInfo m = mig_of(h->dev);
  if (!m.supported || !m.current) return NVML_ERROR_NOT_SUPPORTED;
  const json& d = device_config(h->dev);
  const json* p = profile_by(d, [&](const json& p) { return as_unsigned(p, "id", 0) == profileId; });
  if (!p) return NVML_ERROR_INVALID_ARGUMENT;
  if (p->contains("create_fails")) return code_from((*p)["create_fails"]);
  std::string name = get_or<std::string>(*p, "name", "");
  unsigned slices = as_unsigned(*p, "slices", slices_of_name(name));
  DevState s = state_of(h->dev);
  unsigned same = 0, used = 0;
  for (const auto& g : s.gis) {
    used += g.slices;
    if (g.profile == name) ++same;
  }
  if (same >= as_unsigned(*p, "capacity", 1) || used + slices > m.slices) return NVML_ERROR_INSUFFICIENT_RESOURCES;
  std::optional<nvmlGpuInstancePlacement_t> at;
  if (asked) {
    const auto all = placements_of(*p);
    if (std::none_of(all.begin(), all.end(), [&](const auto& pl) { return pl.start == asked->start && pl.size == asked->size; }))
      return NVML_ERROR_INVALID_ARGUMENT;
    if (placement_taken(s, *asked)) return NVML_ERROR_INSUFFICIENT_RESOURCES;
    at = *asked;
  } else {
    at = first_free_placement(*p, s);
    if (!at) return NVML_ERROR_INSUFFICIENT_RESOURCES;
  }
  unsigned id = 1;
  while (s.find_gi(id)) ++id;
  append_op({{"op", "create_gi"}, {"device", h->dev}, {"gi", id}, {"profile", name}, {"profile_id", profileId},
             {"slices", slices}, {"sm", as_unsigned(*p, "sm", 16)},
             {"memory_mb", get_or<unsigned long long>(*p, "memory_mb", 16384)}, {"placement", {at->start, at->size}},
             {"asked", asked != nullptr}});
  *gi = as<nvmlGpuInstance_t>(intern(Kind::gi, h->dev, id));
  return NVML_SUCCESS;
}

}  // namespace

extern "C" {

// nvml.h: "returns all the possible placements for the given profile regardless of whether MIG is enabled or not";
// placements "Can be NULL to discover number of allowed placements"; a buffer too small: INSUFFICIENT_SIZE (the
// header says it "must be large enough"; what a real driver answers to a short one is not documented).
nvmlReturn_t nvmlDeviceGetGpuInstancePossiblePlacements_v2(nvmlDevice_t device, unsigned int profileId,
                                                           nvmlGpuInstancePlacement_t* placements,
                                                           unsigned int* count) {
  FAKE_REQUIRE_INIT();
  Handle* h = lookup(device, Kind::device);
  if (!h || !count) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = scripted("nvmlDeviceGetGpuInstancePossiblePlacements_v2", static_cast<int>(h->dev))) return rc;
  if (!mig_of(h->dev).supported) return NVML_ERROR_NOT_SUPPORTED;  // answered whether MIG is enabled or not
  const json* p =
      profile_by(device_config(h->dev), [&](const json& p) { return as_unsigned(p, "id", 0) == profileId; });
  if (!p) return NVML_ERROR_INVALID_ARGUMENT;
  auto all = placements_of(*p);
  unsigned n = static_cast<unsigned>(all.size());
  if (!placements) {
    *count = n;
    return NVML_SUCCESS;
  }
  if (*count < n) {
    *count = n;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  std::copy(all.begin(), all.end(), placements);
  *count = n;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfo(nvmlDevice_t device, unsigned int profile,
                                                 nvmlGpuInstanceProfileInfo_t* info) {
  FAKE_REQUIRE_INIT();
  Handle* h = lookup(device, Kind::device);
  if (!h || !info) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = scripted("nvmlDeviceGetGpuInstanceProfileInfo", static_cast<int>(h->dev))) return rc;
  const json* p = nullptr;
  if (int rc = gi_profile_at(h->dev, profile, &p)) return rc;
  fill_gi_profile(*p, info);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfoV(nvmlDevice_t device, unsigned int profile,
                                                  nvmlGpuInstanceProfileInfo_v2_t* info) {
  FAKE_REQUIRE_INIT();
  Handle* h = lookup(device, Kind::device);
  if (!h || !info) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = scripted("nvmlDeviceGetGpuInstanceProfileInfoV", static_cast<int>(h->dev))) return rc;
  if (info->version != nvmlGpuInstanceProfileInfo_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  const json* p = nullptr;
  if (int rc = gi_profile_at(h->dev, profile, &p)) return rc;
  fill_gi_profile(*p, info);
  std::snprintf(info->name, sizeof info->name, "MIG %s", get_or<std::string>(*p, "name", "").c_str());
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceCreateGpuInstance(nvmlDevice_t device, unsigned int profileId, nvmlGpuInstance_t* gi) {
  FAKE_REQUIRE_INIT();
  Handle* h = lookup(device, Kind::device);
  if (!h || !gi) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = scripted("nvmlDeviceCreateGpuInstance", static_cast<int>(h->dev))) return rc;
  return create_gi(h, profileId, nullptr, gi);
}

nvmlReturn_t nvmlDeviceCreateGpuInstanceWithPlacement(nvmlDevice_t device, unsigned int profileId,
                                                      const nvmlGpuInstancePlacement_t* placement,
                                                      nvmlGpuInstance_t* gi) {
  FAKE_REQUIRE_INIT();
  Handle* h = lookup(device, Kind::device);
  if (!h || !gi || !placement) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = scripted("nvmlDeviceCreateGpuInstanceWithPlacement", static_cast<int>(h->dev))) return rc;
  return create_gi(h, profileId, placement, gi);
}

nvmlReturn_t nvmlDeviceGetGpuInstanceById(nvmlDevice_t device, unsigned int id, nvmlGpuInstance_t* gi) {
  FAKE_REQUIRE_INIT();
  Handle* h = lookup(device, Kind::device);
  if (!h || !gi) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = scripted("nvmlDeviceGetGpuInstanceById", static_cast<int>(h->dev))) return rc;
  MigInfo m = mig_of(h->dev);
  if (!m.supported || !m.current) return NVML_ERROR_NOT_SUPPORTED;
  DevState s = state_of(h->dev);
  if (!s.find_gi(id)) return NVML_ERROR_NOT_FOUND;
  *gi = as<nvmlGpuInstance_t>(intern(Kind::gi, h->dev, id));
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuInstances(nvmlDevice_t device, unsigned int profileId, nvmlGpuInstance_t* gpuInstances,
                                       unsigned int* count) {
  FAKE_REQUIRE_INIT();
  Handle* h = lookup(device, Kind::device);
  if (!h || !gpuInstances || !count) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = scripted("nvmlDeviceGetGpuInstances", static_cast<int>(h->dev))) return rc;
  MigInfo m = mig_of(h->dev);
  if (!m.supported || !m.current) return NVML_ERROR_NOT_SUPPORTED;
  const json* p =
      profile_by(device_config(h->dev), [&](const json& p) { return as_unsigned(p, "id", 0) == profileId; });
  if (!p) return NVML_ERROR_INVALID_ARGUMENT;
  // nvml.h, nvmlDeviceGetGpuInstances: "the buffer must be large enough to accommodate the instances supported by
  // the profile" (its instanceCount); there is no NULL-buffer query.
  const unsigned room = as_unsigned(*p, "capacity", 1);
  const std::string name = get_or<std::string>(*p, "name", "");
  DevState s = state_of(h->dev);
  unsigned n = 0;
  for (const Gi& g : s.gis)
    if (g.profile == name && n < room) gpuInstances[n++] = as<nvmlGpuInstance_t>(intern(Kind::gi, h->dev, g.id));
  *count = n;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gpuInstance, nvmlGpuInstanceInfo_t* info) {
  FAKE_REQUIRE_INIT();
  Handle* h = lookup(gpuInstance, Kind::gi);
  if (!h || !info) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = scripted("nvmlGpuInstanceGetInfo", static_cast<int>(h->dev))) return rc;
  DevState s = state_of(h->dev);
  Gi* g = s.find_gi(h->gi);
  if (!g) return NVML_ERROR_INVALID_ARGUMENT;
  info->device = as<nvmlDevice_t>(intern(Kind::device, h->dev));
  info->id = g->id;
  info->profileId = g->profile_id;
  info->placement = {g->start, g->size};
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfo(nvmlGpuInstance_t gpuInstance, unsigned int profile,
                                                          unsigned int engProfile,
                                                          nvmlComputeInstanceProfileInfo_t* info) {
  FAKE_REQUIRE_INIT();
  Handle* h = lookup(gpuInstance, Kind::gi);
  if (!h || !info || engProfile != NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = scripted("nvmlGpuInstanceGetComputeInstanceProfileInfo", static_cast<int>(h->dev))) return rc;
  DevState s = state_of(h->dev);
  Gi* g = s.find_gi(h->gi);
  if (!g) return NVML_ERROR_INVALID_ARGUMENT;
  int slices = slices_for_ci_index(profile);
  if (slices < 0)
    return profile < NVML_COMPUTE_INSTANCE_PROFILE_COUNT ? NVML_ERROR_NOT_SUPPORTED : NVML_ERROR_INVALID_ARGUMENT;
  if (static_cast<unsigned>(slices) > g->slices) return NVML_ERROR_NOT_SUPPORTED;
  *info = {};
  info->id = profile;
  info->sliceCount = static_cast<unsigned>(slices);
  info->instanceCount = g->slices / static_cast<unsigned>(slices);
  info->multiprocessorCount = g->sm * static_cast<unsigned>(slices) / g->slices;
  return NVML_SUCCESS;
}

// A compute instance takes slices of its GPU instance and a MIG device index (slot) of the GPU's
// nvmlDeviceGetMaxMigDeviceCount; none left: INSUFFICIENT_RESOURCES (nvml.h, nvmlGpuInstanceCreateComputeInstance:
// "If the requested compute instance could not be created").
nvmlReturn_t nvmlGpuInstanceCreateComputeInstance(nvmlGpuInstance_t gpuInstance, unsigned int profileId,
                                                  nvmlComputeInstance_t* ci) {
  FAKE_REQUIRE_INIT();
  Handle* h = lookup(gpuInstance, Kind::gi);
  if (!h || !ci) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = scripted("nvmlGpuInstanceCreateComputeInstance", static_cast<int>(h->dev))) return rc;
  DevState s = state_of(h->dev);
  Gi* g = s.find_gi(h->gi);
  if (!g) return NVML_ERROR_INVALID_ARGUMENT;
  int slices_i = slices_for_ci_index(profileId);
  if (slices_i < 0) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned slices = static_cast<unsigned>(slices_i);
  if (slices > g->slices) return NVML_ERROR_NOT_SUPPORTED;
  unsigned used = 0;
  for (const auto& c : s.cis)
    if (c.gi == g->id) used += c.slices;
  if (used + slices > g->slices) return NVML_ERROR_INSUFFICIENT_RESOURCES;
  MigInfo m = mig_of(h->dev);
  unsigned slot = 0;
  auto slot_used = [&](unsigned k) {
    return std::any_of(s.cis.begin(), s.cis.end(), [&](const Ci& c) { return c.slot == k; });
  };
  while (slot < m.max_devices && slot_used(slot)) ++slot;
  if (slot >= m.max_devices) return NVML_ERROR_INSUFFICIENT_RESOURCES;
  unsigned id = 0;
  while (s.find_ci(g->id, id)) ++id;
  std::string profile = slices == g->slices ? g->profile : std::to_string(slices) + "c." + g->profile;
  std::string uuid = new_uuid(h->dev, g->id, id, read_ops().size());
  append_op({{"op", "create_ci"}, {"device", h->dev}, {"gi", g->id}, {"ci", id}, {"profile_id", profileId},
             {"profile", profile}, {"uuid", uuid}, {"sm", g->sm * slices / g->slices}, {"memory_mb", g->memory_mb},
             {"slot", slot}, {"slices", slices}});
  *ci = as<nvmlComputeInstance_t>(intern(Kind::ci, h->dev, g->id, id));
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstanceById(nvmlGpuInstance_t gpuInstance, unsigned int id,
                                                   nvmlComputeInstance_t* ci) {
  FAKE_REQUIRE_INIT();
  Handle* h = lookup(gpuInstance, Kind::gi);
  if (!h || !ci) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = scripted("nvmlGpuInstanceGetComputeInstanceById", static_cast<int>(h->dev))) return rc;
  DevState s = state_of(h->dev);
  if (!s.find_gi(h->gi)) return NVML_ERROR_INVALID_ARGUMENT;
  if (!s.find_ci(h->gi, id)) return NVML_ERROR_NOT_FOUND;
  *ci = as<nvmlComputeInstance_t>(intern(Kind::ci, h->dev, h->gi, id));
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlComputeInstanceGetInfo_v2(nvmlComputeInstance_t computeInstance, nvmlComputeInstanceInfo_t* info) {
  FAKE_REQUIRE_INIT();
  Handle* h = lookup(computeInstance, Kind::ci);
  if (!h || !info) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = scripted("nvmlComputeInstanceGetInfo_v2", static_cast<int>(h->dev))) return rc;
  DevState s = state_of(h->dev);
  Ci* c = s.find_ci(h->gi, h->ci);
  if (!c) return NVML_ERROR_INVALID_ARGUMENT;
  info->device = as<nvmlDevice_t>(intern(Kind::device, h->dev));
  info->gpuInstance = as<nvmlGpuInstance_t>(intern(Kind::gi, h->dev, h->gi));
  info->id = c->ci;
  info->profileId = c->profile_id;
  info->placement = {0, c->slices};
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlComputeInstanceDestroy(nvmlComputeInstance_t computeInstance) {
  FAKE_REQUIRE_INIT();
  Handle* h = lookup(computeInstance, Kind::ci);
  if (!h) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = scripted("nvmlComputeInstanceDestroy", static_cast<int>(h->dev))) return rc;
  DevState s = state_of(h->dev);
  if (!s.find_ci(h->gi, h->ci)) return NVML_ERROR_INVALID_ARGUMENT;
  if (instance_in_use(h->dev, h->gi, h->ci)) return NVML_ERROR_IN_USE;
  append_op({{"op", "destroy_ci"}, {"device", h->dev}, {"gi", h->gi}, {"ci", h->ci}});
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceDestroy(nvmlGpuInstance_t gpuInstance) {
  FAKE_REQUIRE_INIT();
  Handle* h = lookup(gpuInstance, Kind::gi);
  if (!h) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = scripted("nvmlGpuInstanceDestroy", static_cast<int>(h->dev))) return rc;
  DevState s = state_of(h->dev);
  if (!s.find_gi(h->gi)) return NVML_ERROR_INVALID_ARGUMENT;
  for (const auto& c : s.cis)
    if (c.gi == h->gi) return NVML_ERROR_IN_USE;  // NVML refuses while compute instances exist (nvml.h)
  if (instance_in_use(h->dev, h->gi, std::nullopt)) return NVML_ERROR_IN_USE;  // or processes run on it
  append_op({{"op", "destroy_gi"}, {"device", h->dev}, {"gi", h->gi}});
  return NVML_SUCCESS;
}

}  // extern "C"

// ---- telemetry and facts ----

namespace {

// A whole-GPU handle's device index, or -1 (MIG handles: -2, answered NOT_SUPPORTED).
int whole_device(nvmlDevice_t device) {
  Handle* h = nullptr;
  int dev = device_of(device, &h);
  if (dev < 0) return -1;
  return h->kind == Kind::device ? dev : -2;
}

// The configured answers for the pair of whole GPUs (d1, d2): "topology"'s defaults overridden by its entry in
// "pairs" (either order). NOT_SUPPORTED without "topology"; INVALID_ARGUMENT for a bad handle or the same GPU twice.
template <typename Out>
int topology_pair(nvmlDevice_t d1, nvmlDevice_t d2, const char* fn, Out* out, json* pair) {
  FAKE_REQUIRE_INIT();
  const int a = whole_device(d1), b = whole_device(d2);
  if (a < 0 || b < 0 || a == b || !out) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = scripted(fn, a)) return rc;
  auto topo = g_config.find("topology");
  if (topo == g_config.end() || !topo->is_object()) return NVML_ERROR_NOT_SUPPORTED;
  *pair = json{{"pci", topo->value("pci", "system")}, {"nvlink", topo->value("nvlink", false)}};
  for (const json& p : topo->value("pairs", json::array())) {
    const int pa = p.value("a", -1), pb = p.value("b", -1);
    if ((pa == a && pb == b) || (pa == b && pb == a))
      for (const auto& [k, v] : p.items())
        if (k != "a" && k != "b") (*pair)[k] = v;
  }
  return NVML_SUCCESS;
}

#define FAKE_WHOLE_DEVICE(fn, out)              \
  FAKE_REQUIRE_INIT();                          \
  int dev = whole_device(device);               \
  if (dev == -1 || !(out)) return NVML_ERROR_INVALID_ARGUMENT; \
  if (int rc = scripted(fn, dev)) return rc;    \
  if (dev == -2) return NVML_ERROR_NOT_SUPPORTED

// One unsigned telemetry value from the series.
int series_unsigned(int dev, const char* fn, int arg, const char* key, unsigned long long fallback,
                    unsigned long long* out) {
  json v;
  if (int rc = series_value(telemetry_entry(static_cast<unsigned>(dev), fn, arg), fn, key, fallback, &v)) return rc;
  *out = v.get<unsigned long long>();
  return NVML_SUCCESS;
}

// Watts from the series as NVML's milliwatts.
int series_milliwatts(int dev, const char* fn, const char* key, double fallback, unsigned* out) {
  json v;
  if (int rc = series_value(telemetry_entry(static_cast<unsigned>(dev), fn, 0), fn, key, fallback, &v)) return rc;
  *out = static_cast<unsigned>(v.get<double>() * 1000.0 + 0.5);
  return NVML_SUCCESS;
}

// A static device fact: absent -> fallback, null -> NOT_SUPPORTED.
int fact(const json& j, const char* key, const json& fallback, json* out) {
  auto it = j.find(key);
  if (it == j.end()) {
    *out = fallback;
    return NVML_SUCCESS;
  }
  if (it->is_null()) return NVML_ERROR_NOT_SUPPORTED;
  *out = *it;
  return NVML_SUCCESS;
}

}  // namespace

extern "C" {

// Telemetry on a MIG device handle answers NOT_SUPPORTED (FAKE_WHOLE_DEVICE): the harness reads telemetry through
// the whole GPU only, and which of these calls a real MIG handle answers is not listed in nvml.h (not modelled).
// nvml.h, nvmlDeviceGetClockInfo / GetMaxClockInfo: NOT_SUPPORTED "if the device cannot report the specified clock".
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock) {
  FAKE_WHOLE_DEVICE("nvmlDeviceGetClockInfo", clock);
  const char* key = type == NVML_CLOCK_SM ? "sm_clock" : type == NVML_CLOCK_MEM ? "mem_clock" : nullptr;
  if (!key) return NVML_ERROR_NOT_SUPPORTED;
  unsigned long long v = 0;
  if (int rc = series_unsigned(dev, "nvmlDeviceGetClockInfo", type, key, type == NVML_CLOCK_SM ? 1980 : 3201, &v))
    return rc;
  *clock = static_cast<unsigned>(v);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock) {
  FAKE_WHOLE_DEVICE("nvmlDeviceGetMaxClockInfo", clock);
  const char* key = type == NVML_CLOCK_SM ? "max_sm_clock" : type == NVML_CLOCK_MEM ? "max_mem_clock" : nullptr;
  if (!key) return NVML_ERROR_NOT_SUPPORTED;
  unsigned long long v = 0;
  if (int rc = series_unsigned(dev, "nvmlDeviceGetMaxClockInfo", type, key, type == NVML_CLOCK_SM ? 1980 : 3201, &v))
    return rc;
  *clock = static_cast<unsigned>(v);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power) {
  FAKE_WHOLE_DEVICE("nvmlDeviceGetPowerUsage", power);
  return series_milliwatts(dev, "nvmlDeviceGetPowerUsage", "power_w", 100.0, power);
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int* limit) {
  FAKE_WHOLE_DEVICE("nvmlDeviceGetEnforcedPowerLimit", limit);
  return series_milliwatts(dev, "nvmlDeviceGetEnforcedPowerLimit", "power_limit_w", 700.0, limit);
}

nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device, unsigned int* limit) {
  FAKE_WHOLE_DEVICE("nvmlDeviceGetPowerManagementDefaultLimit", limit);
  return series_milliwatts(dev, "nvmlDeviceGetPowerManagementDefaultLimit", "default_power_limit_w", 700.0, limit);
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensor, unsigned int* temp) {
  FAKE_WHOLE_DEVICE("nvmlDeviceGetTemperature", temp);
  if (sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;  // the only sensor
  unsigned long long v = 0;
  if (int rc = series_unsigned(dev, "nvmlDeviceGetTemperature", 0, "temp_c", 40, &v)) return rc;
  *temp = static_cast<unsigned>(v);
  return NVML_SUCCESS;
}

// nvml.h, nvmlDeviceGetCurrentClocksEventReasons (ThrottleReasons its deprecated name): a bit mask of
// nvmlClocksEventReason*; NOT_SUPPORTED "if the device does not support this feature".
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long* reasons) {
  FAKE_WHOLE_DEVICE("nvmlDeviceGetCurrentClocksEventReasons", reasons);
  return series_unsigned(dev, "nvmlDeviceGetCurrentClocksEventReasons", 0, "reasons", 0, reasons);
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device, unsigned long long* reasons) {
  FAKE_WHOLE_DEVICE("nvmlDeviceGetCurrentClocksThrottleReasons", reasons);
  return series_unsigned(dev, "nvmlDeviceGetCurrentClocksThrottleReasons", 0, "reasons", 0, reasons);
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization) {
  FAKE_WHOLE_DEVICE("nvmlDeviceGetUtilizationRates", utilization);
  // nvml.h, nvmlDeviceGetUtilizationRates: "On MIG-enabled GPUs, querying device utilization rates is not currently
  // supported."
  const json& cfg = device_config(static_cast<unsigned>(dev));
  if (cfg.contains("mig") && cfg["mig"].value("current", 0) == 1) return NVML_ERROR_NOT_SUPPORTED;
  json entry = telemetry_entry(static_cast<unsigned>(dev), "nvmlDeviceGetUtilizationRates", 0);
  json gpu, mem;
  if (int rc = series_value(entry, "nvmlDeviceGetUtilizationRates", "util_gpu", 0, &gpu)) return rc;
  if (int rc = series_value(entry, "nvmlDeviceGetUtilizationRates", "util_mem", 0, &mem)) return rc;
  utilization->gpu = gpu.get<unsigned>();
  utilization->memory = mem.get<unsigned>();
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetViolationStatus(nvmlDevice_t device, nvmlPerfPolicyType_t policy,
                                          nvmlViolationTime_t* violation) {
  FAKE_WHOLE_DEVICE("nvmlDeviceGetViolationStatus", violation);
  const char* key = policy == NVML_PERF_POLICY_POWER     ? "power_violation_ns"
                    : policy == NVML_PERF_POLICY_THERMAL ? "thermal_violation_ns"
                                                         : nullptr;
  if (!key) return NVML_ERROR_NOT_SUPPORTED;
  size_t n = 0;
  json entry = telemetry_entry(static_cast<unsigned>(dev), "nvmlDeviceGetViolationStatus", policy, &n);
  json v, ref;
  if (int rc = series_value(entry, "nvmlDeviceGetViolationStatus", key, 0, &v)) return rc;
  if (int rc = series_value(entry, "nvmlDeviceGetViolationStatus", "violation_ref_us",
                            static_cast<unsigned long long>(n) * 100000ull, &ref))
    return rc;
  violation->violationTime = v.get<unsigned long long>();
  violation->referenceTime = ref.get<unsigned long long>();
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  FAKE_REQUIRE_INIT();
  if (int rc = scripted("nvmlSystemGetDriverVersion")) return rc;
  json v;
  if (int rc = fact(g_config, "driver_version", "550.90.07", &v)) return rc;
  return copy_string(v.get<std::string>(), version, length);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* version) {
  FAKE_REQUIRE_INIT();
  if (!version) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = scripted("nvmlSystemGetCudaDriverVersion_v2")) return rc;
  json v;
  if (int rc = fact(g_config, "cuda_driver_version", 12040, &v)) return rc;
  *version = v.get<int>();
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int* major, int* minor) {
  FAKE_WHOLE_DEVICE("nvmlDeviceGetCudaComputeCapability", major && minor);
  json v;
  if (int rc = fact(device_config(dev), "cc", "9.0", &v)) return rc;
  if (v.is_array() && v.size() == 2) {
    *major = v[0].get<int>();
    *minor = v[1].get<int>();
  } else {
    std::string s = v.get<std::string>();
    auto dot = s.find('.');
    *major = std::atoi(s.substr(0, dot).c_str());
    *minor = dot == std::string::npos ? 0 : std::atoi(s.substr(dot + 1).c_str());
  }
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, nvmlEnableState_t* current, nvmlEnableState_t* pending) {
  FAKE_WHOLE_DEVICE("nvmlDeviceGetEccMode", current && pending);
  json v;
  if (int rc = fact(device_config(dev), "ecc", json{{"current", 1}, {"pending", 1}}, &v)) return rc;
  *current = static_cast<int>(as_unsigned(v, "current", 1));
  *pending = static_cast<int>(as_unsigned(v, "pending", static_cast<unsigned>(*current)));
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t device, char* version, unsigned int length) {
  FAKE_WHOLE_DEVICE("nvmlDeviceGetVbiosVersion", version);
  json v;
  if (int rc = fact(device_config(dev), "vbios", "96.00.74.00.01", &v)) return rc;
  return copy_string(v.get<std::string>(), version, length);
}

nvmlReturn_t nvmlDeviceGetVirtualizationMode(nvmlDevice_t device, nvmlGpuVirtualizationMode_t* mode) {
  FAKE_WHOLE_DEVICE("nvmlDeviceGetVirtualizationMode", mode);
  json v;
  if (int rc = fact(device_config(dev), "virtualization_mode", 0, &v)) return rc;
  *mode = v.get<int>();
  return NVML_SUCCESS;
}

}  // extern "C"

namespace {

int pcie_value(nvmlDevice_t device, const char* fn, const char* key, unsigned fallback, unsigned* out) {
  FAKE_WHOLE_DEVICE(fn, out);
  json pcie;
  if (int rc = fact(device_config(dev), "pcie", json::object(), &pcie)) return rc;
  json v;
  if (int rc = fact(pcie, key, fallback, &v)) return rc;
  *out = v.get<unsigned>();
  return NVML_SUCCESS;
}

}  // namespace

extern "C" {

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int* gen) {
  return pcie_value(device, "nvmlDeviceGetCurrPcieLinkGeneration", "gen", 5, gen);
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int* width) {
  return pcie_value(device, "nvmlDeviceGetCurrPcieLinkWidth", "width", 16, width);
}

// "pci_device_id": a number or "0x233510DE" string (default 0x233510DE, an H200 SXM); null: NOT_SUPPORTED.
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  FAKE_WHOLE_DEVICE("nvmlDeviceGetPciInfo_v3", pci);
  json v;
  if (int rc = fact(device_config(dev), "pci_device_id", 0x233510DEu, &v)) return static_cast<nvmlReturn_t>(rc);
  *pci = nvmlPciInfo_t{};
  pci->pciDeviceId = v.is_string() ? static_cast<unsigned>(std::stoul(v.get<std::string>(), nullptr, 16)) : v.get<unsigned>();
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int* gen) {
  return pcie_value(device, "nvmlDeviceGetMaxPcieLinkGeneration", "max_gen", 5, gen);
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int* width) {
  return pcie_value(device, "nvmlDeviceGetMaxPcieLinkWidth", "max_width", 16, width);
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, nvmlEnableState_t* active) {
  FAKE_WHOLE_DEVICE("nvmlDeviceGetNvLinkState", active);
  const json& d = device_config(dev);
  auto it = d.find("nvlink");
  if (it == d.end() || !it->is_object()) return NVML_ERROR_NOT_SUPPORTED;
  unsigned links = as_unsigned(*it, "links", 18);
  if (link >= links || link >= NVML_NVLINK_MAX_LINKS) return NVML_ERROR_INVALID_ARGUMENT;
  *active = link < as_unsigned(*it, "up", links) ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t device1, nvmlDevice_t device2,
                                                 nvmlGpuTopologyLevel_t* pathInfo) {
  json pair;
  if (int rc = topology_pair(device1, device2, "nvmlDeviceGetTopologyCommonAncestor", pathInfo, &pair)) return rc;
  const std::string level = get_or<std::string>(pair, "pci", "system");
  static const std::pair<const char*, nvmlGpuTopologyLevel_t> kLevels[] = {
      {"internal", NVML_TOPOLOGY_INTERNAL}, {"single", NVML_TOPOLOGY_SINGLE}, {"multiple", NVML_TOPOLOGY_MULTIPLE},
      {"hostbridge", NVML_TOPOLOGY_HOSTBRIDGE}, {"node", NVML_TOPOLOGY_NODE}, {"system", NVML_TOPOLOGY_SYSTEM}};
  for (const auto& [name, value] : kLevels)
    if (level == name) {
      *pathInfo = value;
      return NVML_SUCCESS;
    }
  return NVML_ERROR_UNKNOWN;
}

nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2, nvmlGpuP2PCapsIndex_t p2pIndex,
                                    nvmlGpuP2PStatus_t* p2pStatus) {
  json pair;
  if (int rc = topology_pair(device1, device2, "nvmlDeviceGetP2PStatus", p2pStatus, &pair)) return rc;
  const char* key = p2pIndex == NVML_P2P_CAPS_INDEX_READ     ? "read"
                    : p2pIndex == NVML_P2P_CAPS_INDEX_WRITE  ? "write"
                    : p2pIndex == NVML_P2P_CAPS_INDEX_NVLINK ? "nvlink"
                                                             : nullptr;
  if (!key) return NVML_ERROR_INVALID_ARGUMENT;
  const bool fallback = p2pIndex != NVML_P2P_CAPS_INDEX_NVLINK;
  *p2pStatus = get_or<bool>(pair, key, fallback) ? NVML_P2P_STATUS_OK : NVML_P2P_STATUS_NOT_SUPPORTED;
  return NVML_SUCCESS;
}

}  // extern "C"

namespace {
// The PIDs of `parent`'s children that are not zombies (from /proc/<pid>/stat: state, ppid after the ')').
std::vector<unsigned long> live_children_of(unsigned long parent) {
  std::vector<unsigned long> out;
  DIR* proc = opendir("/proc");
  if (!proc) return out;
  while (const dirent* e = readdir(proc)) {
    char* end = nullptr;
    const unsigned long pid = std::strtoul(e->d_name, &end, 10);
    if (pid == 0 || *end != '\0') continue;
    std::ifstream in(std::string("/proc/") + e->d_name + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 1));
    std::string state;
    unsigned long ppid = 0;
    if (fields >> state >> ppid && ppid == parent && state != "Z") out.push_back(pid);
  }
  closedir(proc);
  return out;
}

// Whether `pid` is a live process (not a zombie): NVML lists a process while it holds a CUDA context, which goes
// with the process.
bool alive(unsigned long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = stat.rfind(')');
  return close != std::string::npos && stat.find(" Z ", close) != close + 1;
}

// The processes NVML lists on device `dev`: every configured one on a whole-GPU handle; on a MIG device handle
// (mig_gi set) those of its GPU instance, as NVML's nvmlDeviceGetComputeRunningProcesses_v3 doc says ("In MIG
// mode ... Per-instance information can be queried by using specific MIG device handles"; nvml.h in
// github.com/NVIDIA/go-nvml, pkg/nvml/nvml.h). A "pid_file" entry lists the live PIDs in its file only: the
// fake MPS server's PID stays in that file after it exits, and NVML does not list a process that has ended.
// Fails with the device's "processes": null (NOT_SUPPORTED) or its scripted failure.
int listed_processes(int dev, std::optional<unsigned> mig_gi, json* list) {
  json configured;
  if (int rc = fact(device_config(dev), "processes", json::array(), &configured)) return rc;
  *list = json::array();
  for (const json& p : configured) {
    if (mig_gi && as_unsigned(p, "gi", NVML_NO_INSTANCE_ID) != *mig_gi) continue;
    std::vector<unsigned long> pids;
    if (p.contains("pid_file")) {
      std::ifstream in(p.at("pid_file").get<std::string>());
      for (unsigned long pid = 0; in >> pid;)
        if (alive(pid)) pids.push_back(pid);
    } else if (p.value("children", false)) {
      pids = live_children_of(static_cast<unsigned long>(getpid()));
    } else {
      list->push_back(p);
      continue;
    }
    for (unsigned long pid : pids) {
      json one = p;
      one["pid"] = pid;
      list->push_back(one);
    }
  }
  return NVML_SUCCESS;
}

}  // namespace

extern "C" {

// The documented two-call protocol (nvml.h, nvmlDeviceGetComputeRunningProcesses_v3): "*infoCount = 0" (infos
// may be NULL) answers NVML_SUCCESS when there are none, else NVML_ERROR_INSUFFICIENT_SIZE with *infoCount set to
// the number needed; a buffer too small for the list at the second call gets INSUFFICIENT_SIZE again (the list is
// read at each call: "pid_file" and "children" entries change between the two calls as processes come and go).
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int* count,
                                                     nvmlProcessInfo_t* infos) {
  FAKE_REQUIRE_INIT();
  Handle* h = nullptr;
  const int dev = device_of(device, &h);
  if (dev < 0 || !count) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = scripted("nvmlDeviceGetComputeRunningProcesses_v3", dev)) return rc;
  json list;
  if (int rc = listed_processes(dev, h->kind == Kind::mig ? std::optional<unsigned>(h->gi) : std::nullopt, &list))
    return rc;
  unsigned n = static_cast<unsigned>(list.size());
  if (*count < n) {
    *count = n;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  if (n > 0 && !infos) return NVML_ERROR_INVALID_ARGUMENT;
  // "process_info_bytes": 32 writes the entries an early R535 NVML wrote (nvmlProcessInfo_v3_t), else 24.
  const bool v3 = as_unsigned(device_config(dev), "process_info_bytes", 24) == 32;
  for (unsigned i = 0; i < n; ++i) {
    const json& p = list[i];
    nvmlProcessInfo_v3_t e{};
    e.pid = as_unsigned(p, "pid", 0);
    e.usedGpuMemory = get_or<unsigned long long>(p, "used_mb", 0) << 20;
    e.gpuInstanceId = as_unsigned(p, "gi", NVML_NO_INSTANCE_ID);
    e.computeInstanceId = as_unsigned(p, "ci", NVML_NO_INSTANCE_ID);
    e.usedGpuCcProtectedMemory = 0;
    if (v3) {
      std::memcpy(reinterpret_cast<unsigned char*>(infos) + i * sizeof e, &e, sizeof e);
    } else {
      infos[i] = {e.pid, e.usedGpuMemory, e.gpuInstanceId, e.computeInstanceId};
    }
  }
  *count = n;
  return NVML_SUCCESS;
}

// nvml.h, nvmlDeviceGetProcessUtilization: a NULL buffer first to learn the count, then the buffer; "If no valid
// sample entries are found since the lastSeenTimeStamp, NVML_ERROR_NOT_FOUND is returned"; one sample per process
// "that had some non-zero utilization during the last sample period" (the fake gives one per live child, smUtil
// possibly 0: kinder to a reader that skips zeros, harmless to ours, which looks for busy ones).
nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device, nvmlProcessUtilizationSample_t* utilization,
                                             unsigned int* count, unsigned long long last_seen_us) {
  FAKE_REQUIRE_INIT();
  Handle* h = nullptr;
  const int dev = device_of(device, &h);
  if (dev < 0 || !count) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = scripted("nvmlDeviceGetProcessUtilization", dev)) return rc;
  const json& d = device_config(dev);
  const auto it = d.find("process_utilization");
  if (h->kind == Kind::mig || it == d.end() || it->is_null()) return NVML_ERROR_NOT_SUPPORTED;
  // nvml.h, nvmlDeviceGetProcessUtilization: "On MIG-enabled GPUs, querying process utilization is not currently
  // supported" (the whole GPU's handle too, as for nvmlDeviceGetUtilizationRates).
  if (mig_of(static_cast<unsigned>(dev)).current) return NVML_ERROR_NOT_SUPPORTED;
  static int calls = 0;  // this process's calls (one caller: the harness)
  const int busy_calls = it->value("busy_calls", -1);
  const unsigned sm = (busy_calls < 0 || calls < busy_calls) ? as_unsigned(*it, "sm_util", 50) : 0u;
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  const unsigned long long now_us = static_cast<unsigned long long>(ts.tv_sec) * 1000000ull + ts.tv_nsec / 1000;
  if (now_us <= last_seen_us) return NVML_ERROR_NOT_FOUND;
  const std::vector<unsigned long> pids =
      it->value("children", true) ? live_children_of(static_cast<unsigned long>(getpid())) : std::vector<unsigned long>{};
  if (pids.empty()) return NVML_ERROR_NOT_FOUND;
  if (!utilization || *count < pids.size()) {
    *count = static_cast<unsigned>(pids.size());
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  ++calls;
  for (std::size_t i = 0; i < pids.size(); ++i)
    utilization[i] = {static_cast<unsigned>(pids[i]), now_us, sm, 0, 0, 0};
  *count = static_cast<unsigned>(pids.size());
  return NVML_SUCCESS;
}

}  // extern "C"
