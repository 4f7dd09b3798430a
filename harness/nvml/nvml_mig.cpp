// NVML's MIG calls: MIG mode, the MIG devices and GPU instances of a GPU (with their profiles and placements), one
// instance's usage, and creating and destroying a GPU instance with one compute instance spanning it.
#include "harness/nvml/dl_nvml.h"

namespace ib {

namespace {

constexpr unsigned kProfileIndexLimit = 32;  // beyond every NVML_GPU/COMPUTE_INSTANCE_PROFILE_COUNT so far (0x12)

// "NVIDIA H200 MIG 1g.18gb" -> "1g.18gb"; "MIG 1g.18gb" -> "1g.18gb".
std::string profile_from_name(const std::string& name) {
  const std::string marker = "MIG ";
  auto pos = name.rfind(marker);
  if (pos == std::string::npos) return name;
  return name.substr(pos + marker.size());
}

}  // namespace

std::optional<MigModeState> DlNvml::mig_mode(unsigned device) {
  nvmlDevice_t h = handle(device);
  if (!get_mig_mode_) return std::nullopt;  // a driver that predates MIG
  unsigned current = 0, pending = 0;
  nvmlReturn_t rc = get_mig_mode_(h, &current, &pending);
  if (rc == NVML_ERROR_NOT_SUPPORTED) return std::nullopt;
  check("nvmlDeviceGetMigMode", rc);
  return MigModeState{current != NVML_DEVICE_MIG_DISABLE, pending != NVML_DEVICE_MIG_DISABLE};
}

std::vector<MigInstance> DlNvml::mig_instances(unsigned device) {
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

std::vector<MigGpuInstance> DlNvml::mig_gpu_instances(unsigned device) {
  const std::vector<MigInstance> devices = mig_instances(device);
  auto listed = gpu_instances_by_profile(device);
  if (!listed) listed = gpu_instances_of(devices);
  for (MigGpuInstance& g : *listed)
    for (const MigInstance& m : devices)
      if (m.gpu_instance_id == g.id && g.uuid.empty()) g.uuid = m.uuid;
  std::sort(listed->begin(), listed->end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return *listed;
}

// Every GPU instance, profile by profile (nvmlDeviceGetGpuInstances): those without a compute instance too. None
// where the driver lacks the call or refuses it (not root): then only the compute instances' view is left.
std::optional<std::vector<MigGpuInstance>> DlNvml::gpu_instances_by_profile(unsigned device) {
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

// The GPU instances that hold a compute instance, from the MIG devices: one per GPU instance.
std::vector<MigGpuInstance> DlNvml::gpu_instances_of(const std::vector<MigInstance>& devices) {
  std::vector<MigGpuInstance> out;
  for (const MigInstance& m : devices)
    if (std::none_of(out.begin(), out.end(), [&m](const MigGpuInstance& g) { return g.id == m.gpu_instance_id; }))
      out.push_back({m.gpu_instance_id, m.profile, m.placement, m.uuid});
  return out;
}

// Where GPU instance `id` sits, or none when NVML does not say: looking a GPU instance up needs root on most
// drivers (NO_PERMISSION) and an old driver lacks the calls. Whatever the code, the answer is only "not known":
// the instance is still listed (a run on it needs no placement), and what needs one (--mig-create, mig-sweep)
// falls back to letting NVML place new instances.
std::optional<MigPlacement> DlNvml::gpu_instance_placement(nvmlDevice_t h, unsigned id) const {
  if (!get_gi_by_id_ || !gi_get_info_) return std::nullopt;
  nvmlGpuInstance_t gi = nullptr;
  if (get_gi_by_id_(h, id, &gi) != NVML_SUCCESS) return std::nullopt;
  nvmlGpuInstanceInfo_t info{};
  if (gi_get_info_(gi, &info) != NVML_SUCCESS) return std::nullopt;
  return MigPlacement{info.placement.start, info.placement.size};
}

// The MIG device handle of GPU instance `gi`, compute instance `ci`.
nvmlDevice_t DlNvml::mig_handle(unsigned device, unsigned gi, unsigned ci) {
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

MigInstanceUsage DlNvml::mig_instance_usage(unsigned device, unsigned gpu_instance_id, unsigned compute_instance_id) {
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

// The GPU instance profile at NVML_GPU_INSTANCE_PROFILE_* index `p`, named the way nvidia-smi shows it (without
// placements); nullopt when the driver does not offer that index (NOT_SUPPORTED / INVALID_ARGUMENT, whose message
// goes to *refusal). Any other answer throws.
std::optional<MigGpuInstanceProfile> DlNvml::gi_profile_at(nvmlDevice_t h, unsigned p, std::string* refusal) const {
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

// Walks the GPU instance profile indices (NVML_GPU_INSTANCE_PROFILE_*) and returns the one whose name
// ("MIG 1g.18gb") matches. Indices the driver does not offer answer NOT_SUPPORTED / INVALID_ARGUMENT.
MigGpuInstanceProfile DlNvml::find_gi_profile(nvmlDevice_t h, unsigned device, const std::string& profile) {
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

// nvmlDeviceGetGpuInstancePossiblePlacements_v2, the documented two-step query: placements NULL gives the count,
// then a buffer of that length (retried a few times should the driver answer INSUFFICIENT_SIZE).
std::vector<MigPlacement> DlNvml::possible_placements(nvmlDevice_t h, unsigned profile_id) const {
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

std::vector<MigGpuInstanceProfile> DlNvml::mig_gpu_instance_profiles(unsigned device) {
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

CreatedMigInstance DlNvml::create_mig_instance(unsigned device, const std::string& profile,
                                               std::optional<MigPlacement> at) {
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

void DlNvml::destroy_mig_instance(unsigned device, const CreatedMigInstance& instance) {
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

}  // namespace ib
