// meta.devices[] (docs/design.md section 8): what the numbers came from. A GPU is described through NVML (the
// facts probe reads: identity, driver, ECC, PCIe; and compute mode, MIG mode, power limits); the host
// backend's device is the host itself (CPU model from /proc/cpuinfo, cores, memory from /proc/meminfo).
#pragma once

#include "harness/nvml/nvml.h"
#include "harness/results/results.h"
#include "harness/vet/probe.h"
#include "kernels/workload.h"

#include <string>
#include <vector>

namespace ib {

// The "model name" of the first processor in the text of /proc/cpuinfo (or "Processor", "cpu model",
// "Hardware" on other architectures); empty when none is there.
std::string parse_cpu_model(const std::string& cpuinfo_text);

// NVML's CUDA driver version (1000 * major + 10 * minor, e.g. 12040) as "12.4".
std::string cuda_version_text(int nvml_cuda_version);

// The host as the device of the host backend.
DeviceRecord host_device_record(const HostFacts& host, const std::string& cpu_model, const std::string& node);

// GPU `device` through NVML. NVML errors other than "unsupported" land in the record's `error`.
DeviceRecord gpu_device_record(Nvml& nvml, unsigned device, const std::string& node);

// A GPU record that could not be read (no NVML): its index, the node and why.
DeviceRecord unreadable_gpu_record(unsigned device, const std::string& node, const std::string& why);

// The devices of a run: with the host backend the host; otherwise each GPU index in `gpus` (in order,
// once each), through `nvml`, or unreadable with `nvml_error` when it is null.
std::vector<DeviceRecord> describe_run_devices(Backend backend, const std::vector<int>& gpus, Nvml* nvml,
                                               const std::string& nvml_error);

// The host as it is now: /proc/cpuinfo, read_host_facts, gethostname.
DeviceRecord this_host_record();

}  // namespace ib
