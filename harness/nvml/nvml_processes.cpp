// NVML's process lists: the compute processes on a GPU or MIG device (read with the entry stride the driver wrote,
// nvmlProcessInfo_v2_t or _v3_t) and their recent SM utilization.
#include "harness/nvml/dl_nvml.h"

#include <cstring>

namespace ib {

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

// The documented two-step query: *infoCount = 0 answers SUCCESS (none) or INSUFFICIENT_SIZE with the count;
// then a buffer with headroom (the list can grow between the calls), retried a few times. The buffer has room
// for 32-byte entries and is filled with kProcessFill first, so the entries are read with the stride the
// driver wrote (process_entry_bytes): an early R535 NVML writes 32 bytes an entry, R550-R580 24.
void DlNvml::read_processes(nvmlDevice_t h, DeviceFacts& f) const {
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
std::optional<std::vector<ProcessSmSample>> DlNvml::process_utilization(unsigned device, unsigned long long since_us) {
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

}  // namespace ib
