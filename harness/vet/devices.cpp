#include "harness/vet/devices.h"
#include "harness/core/host.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace ib {

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::string read_text(const char* path) {
  std::ifstream in(path);
  std::stringstream ss;
  if (in) ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string parse_cpu_model(const std::string& cpuinfo_text) {
  // x86: "model name"; arm64 and others: "Processor", "cpu model" (MIPS), "Hardware"; first one wins by
  // preference order, not by position.
  const char* keys[] = {"model name", "Processor", "cpu model", "Hardware"};
  for (const char* key : keys) {
    std::istringstream in(cpuinfo_text);
    std::string line;
    while (std::getline(in, line)) {
      const auto colon = line.find(':');
      if (colon == std::string::npos || trim(line.substr(0, colon)) != key) continue;
      const std::string value = trim(line.substr(colon + 1));
      if (!value.empty()) return value;
    }
  }
  return "";
}

std::string cuda_version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

DeviceRecord host_device_record(const HostFacts& host, const std::string& cpu_model, const std::string& node) {
  DeviceRecord d;
  d.kind = DeviceKind::host;
  d.name = cpu_model.empty() ? "unknown CPU" : cpu_model;
  d.node = node;
  d.cores_online = host.online_cores;
  d.cores_usable = host.usable_cores;
  d.memory_total_bytes = host.memory_total_bytes;
  if (cpu_model.empty()) d.unsupported.push_back("name: no model name in /proc/cpuinfo");
  return d;
}

DeviceRecord unreadable_gpu_record(unsigned device, const std::string& node, const std::string& why) {
  DeviceRecord d;
  d.kind = DeviceKind::gpu;
  d.index = static_cast<int>(device);
  d.name = "unknown GPU";
  d.node = node;
  d.error = why;
  return d;
}

DeviceRecord gpu_device_record(Nvml& nvml, unsigned device, const std::string& node) {
  DeviceRecord d = unreadable_gpu_record(device, node, "");
  try {
    const DeviceFacts f = nvml.device_facts(device);
    d.name = f.name;
    d.uuid = f.uuid;
    d.driver_version = f.driver_version;
    if (f.cuda_driver_version) d.cuda_version = cuda_version_text(*f.cuda_driver_version);
    d.vbios_version = f.vbios_version;
    if (f.ecc_current) d.ecc = CurrentPending{*f.ecc_current, f.ecc_pending.value_or(*f.ecc_current)};
    d.pcie_gen_current = f.pcie_gen_current;
    d.pcie_width_current = f.pcie_width_current;
    d.pcie_gen_max = f.pcie_gen_max;
    d.pcie_width_max = f.pcie_width_max;
    d.memory_total_bytes = f.memory_total_bytes;
    d.unsupported = f.unsupported;
    d.compute_mode = compute_mode_name(nvml.compute_mode(device));
    if (const auto mig = nvml.mig_mode(device)) d.mig_mode = CurrentPending{mig->current, mig->pending};
    const TelemetryReading r = nvml.read_telemetry(device);
    d.power_limit_w = r.power_limit_w;
    d.default_power_limit_w = r.default_power_limit_w;
    for (const auto& note : r.unsupported)
      if (note.rfind("power_limit", 0) == 0 || note.rfind("default_power_limit", 0) == 0) d.unsupported.push_back(note);
  } catch (const NvmlError& e) {
    d.error = e.what();
  }
  return d;
}

DeviceRecord this_host_record() {
  return host_device_record(read_host_facts(), parse_cpu_model(read_text("/proc/cpuinfo")), host_name());
}

std::vector<DeviceRecord> describe_run_devices(Backend backend, const std::vector<int>& gpus, Nvml* nvml,
                                               const std::string& nvml_error) {
  if (backend == Backend::host) return {this_host_record()};
  const std::string node = host_name();
  std::vector<DeviceRecord> out;
  std::vector<int> seen;
  for (int g : gpus) {
    if (std::find(seen.begin(), seen.end(), g) != seen.end()) continue;
    seen.push_back(g);
    const auto index = static_cast<unsigned>(g);
    out.push_back(nvml ? gpu_device_record(*nvml, index, node) : unreadable_gpu_record(index, node, nvml_error));
  }
  return out;
}

}  // namespace ib
