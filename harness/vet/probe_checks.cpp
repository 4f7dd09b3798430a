// The probe's checklist (probe.h): the table kChecks, one row per check in output order naming the small function
// that judges the facts, evaluate_probe applying it; and the check that a baseline came from this GPU model.
#include "harness/vet/probe.h"

#include "harness/core/text.h"
#include "harness/stats/stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ib {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::string mib(unsigned long long bytes) { return formatted("%.0f MiB", static_cast<double>(bytes) / kMiB); }

std::string version_text(int cuda) { return std::to_string(cuda / 1000) + "." + std::to_string((cuda % 1000) / 10); }

const TelemetryReading* any_reading(const ProbeFacts& f) {
  if (f.reading) return &*f.reading;
  if (!f.idle_samples.empty()) return &f.idle_samples.back().r;
  return nullptr;
}

}  // namespace

// ---- checks ----
//
// The checklist is the table kChecks below: one row per check, in output order, naming the small function that
// judges the facts. Adding a check is one function and one row. A row's kind says what NVML means to it; the rule
// "GPU check without NVML: unknown, not checked" lives in evaluate_probe alone.

namespace {

// What a check function decides; evaluate_probe adds the row's id, title, threshold and source.
struct Judgement {
  CheckStatus status = CheckStatus::unknown;
  std::string evidence;
};

enum class CheckKind {
  nvml_status,  // listed only when NVML is missing, and then it fails
  gpu,          // needs NVML: without it "unknown" and not judged (the function is not called)
  host,         // judged with or without NVML (GPU facts only count when NVML is there)
};

struct CheckSpec {
  const char* id;
  const char* title;
  CheckKind kind;
  const char* threshold;                                   // the rule, when it does not depend on the thresholds
  std::string (*threshold_from)(const ProbeThresholds&);   // else the rule built from them
  const char* source;
  Judgement (*judge)(const ProbeFacts&, const ProbeThresholds&);
};

constexpr const char* kNotCheckedWithoutNvml = "NVML not available: not checked";

Judgement check_nvml(const ProbeFacts& f, const ProbeThresholds&) {
  return {CheckStatus::fail, f.nvml_error.empty() ? "NVML not available" : f.nvml_error};
}

Judgement check_identity(const ProbeFacts& f, const ProbeThresholds&) {
  const DeviceFacts& g = f.gpu;
  std::vector<std::string> parts = {
      g.name, g.uuid, "driver " + g.driver_version.value_or("unsupported"),
      "CUDA " + (g.cuda_driver_version ? version_text(*g.cuda_driver_version) : std::string("unsupported")),
      "compute capability " + (g.cc_major ? std::to_string(*g.cc_major) + "." + std::to_string(g.cc_minor.value_or(0))
                                          : std::string("unsupported")),
      "SMs " + (g.sm_count ? std::to_string(*g.sm_count) : std::string("not reported by NVML"))};
  return {CheckStatus::pass, joined(parts, ", ")};
}

struct NominalMatch {
  unsigned long long mib = 0;  // the nominal size compared against
  double ratio = 0;            // total / mib
};

// The nominal size a total of `total_mib` is judged against, among the sizes a model comes in: the largest one the
// total reaches (ratio >= min_fraction), else the one it comes closest to.
NominalMatch closest_nominal(double total_mib, const std::vector<unsigned long long>& sizes_mib, double min_fraction) {
  NominalMatch best{sizes_mib.front(), 0.0};
  for (auto s : sizes_mib) {
    double ratio = total_mib / static_cast<double>(s);
    if (ratio >= min_fraction && (best.ratio < min_fraction || s > best.mib))
      best = {s, ratio};
    else if (best.ratio < min_fraction && ratio > best.ratio)
      best = {s, ratio};
  }
  return best;
}

std::string memory_total_threshold(const ProbeThresholds& th) {
  return "warn below " + formatted("%.0f%%", th.min_memory_fraction * 100) +
         " of the model's nominal memory (slice or vGPU suspected)";
}

Judgement check_memory_total(const ProbeFacts& f, const ProbeThresholds& th) {
  const DeviceFacts& g = f.gpu;
  Judgement j;
  double total = static_cast<double>(g.memory_total_bytes) / kMiB;
  auto nominal = nominal_memory(g.name);
  if (!nominal) {
    j.evidence = formatted("%.0f MiB total; model '", total) + g.name +
                 "' is not in the table of nominal memory: not judged";
  } else {
    NominalMatch best = closest_nominal(total, nominal->sizes_mib, th.min_memory_fraction);
    bool ok = best.ratio >= th.min_memory_fraction;
    j.status = ok ? CheckStatus::pass : CheckStatus::warn;
    j.evidence = formatted("%.0f MiB total", total) + formatted(" = %.1f%%", best.ratio * 100) + " of the " +
                 nominal->model + " nominal " + std::to_string(best.mib) + " MiB (" + nominal->label + ")";
    if (nominal->sizes_mib.size() > 1)
      j.evidence += "; the model comes in " + nominal->label + " and the name does not say which";
    if (!ok) j.evidence += ": slice or vGPU suspected";
  }
  if (f.mig && f.mig->current)
    j.evidence += "; MIG mode is on: this is the whole GPU's total, work runs in a MIG instance with less "
                  "(see the mig check)";
  return j;
}

Judgement check_mig(const ProbeFacts& f, const ProbeThresholds&) {
  if (!f.mig) return {CheckStatus::pass, "MIG not supported on this GPU: whole GPU"};
  if (!f.mig->current)
    return {CheckStatus::pass,
            std::string("MIG disabled: whole GPU") + (f.mig->pending ? " (MIG enabling is pending a GPU reset)" : "")};
  std::vector<std::string> inst;
  for (const auto& m : f.mig_instances)
    inst.push_back(m.profile + " (GI " + std::to_string(m.gpu_instance_id) + ", CI " +
                   std::to_string(m.compute_instance_id) + ", " + mib(m.memory_bytes) + ", " +
                   std::to_string(m.sm_count) + " SMs, " + m.uuid + ")");
  std::string evidence = "MIG mode is on: " + std::to_string(f.mig_instances.size()) + " instance(s) visible" +
                         (inst.empty() ? std::string() : ": " + joined(inst, "; ")) +
                         "; a MIG instance is a partition with its own memory boundary, not the whole card";
  if (!f.mig->pending) evidence += " (MIG disabling is pending a GPU reset)";
  return {CheckStatus::warn, evidence};
}

Judgement check_virtualization(const ProbeFacts& f, const ProbeThresholds&) {
  if (!f.gpu.virtualization) return {CheckStatus::unknown, "virtualisation mode not supported by NVML here"};
  VirtualizationMode m = *f.gpu.virtualization;
  std::string name = virtualization_mode_name(m);
  switch (m) {
    case VirtualizationMode::none: return {CheckStatus::pass, name + ": bare metal"};
    case VirtualizationMode::passthrough:
      return {CheckStatus::pass,
              name + ": the whole GPU is passed through to this virtual machine (not shared by the hypervisor)"};
    case VirtualizationMode::vgpu:
      return {CheckStatus::warn,
              name + ": a vGPU inside a virtual machine, a time-sliced or partitioned share of a physical GPU"};
    case VirtualizationMode::host_vgpu:
    case VirtualizationMode::host_vsga:
      return {CheckStatus::warn, name + ": this is a hypervisor host sharing the GPU with virtual machines"};
    case VirtualizationMode::unknown: break;
  }
  return {CheckStatus::unknown, "unknown virtualisation mode value"};
}

// "pid 4242 using 1024 MiB in GI 1" for each compute process that is not one of ours.
std::vector<std::string> foreign_processes(const ProbeFacts& f) {
  std::vector<std::string> out;
  if (!f.gpu.processes) return out;
  for (const auto& p : *f.gpu.processes)
    if (std::find(f.own_pids.begin(), f.own_pids.end(), p.pid) == f.own_pids.end())
      out.push_back("pid " + std::to_string(p.pid) + (p.used_bytes ? " using " + mib(*p.used_bytes) : std::string()) +
                    (p.gpu_instance_id ? " in GI " + std::to_string(*p.gpu_instance_id) : std::string()));
  return out;
}

std::string neighbours_threshold(const ProbeThresholds& th) {
  return "fail: mean GPU utilisation over the idle window above " + formatted("%g%%", th.idle_util_pct) +
         "; warn: any compute process that is not ours, or peak utilisation above " +
         formatted("%g%%", th.idle_util_pct) + "; pass otherwise";
}

Judgement check_neighbours(const ProbeFacts& f, const ProbeThresholds& th) {
  const bool have_procs = f.gpu.processes.has_value();
  const std::vector<std::string> foreign = foreign_processes(f);
  std::vector<double> util;
  for (const auto& s : f.idle_samples)
    if (s.r.util_gpu_pct) util.push_back(*s.r.util_gpu_pct);
  const bool have_util = !util.empty();
  const double mean_util = have_util ? mean(util) : 0;
  const double peak = have_util ? *std::max_element(util.begin(), util.end()) : 0;

  std::vector<std::string> ev;
  if (have_procs)
    ev.push_back(foreign.empty()
                     ? "no foreign compute process"
                     : std::to_string(foreign.size()) + " foreign compute process(es): " + joined(foreign, ", "));
  else
    ev.push_back("compute process list unavailable (not supported or not permitted)");
  if (have_util)
    ev.push_back(formatted("GPU utilisation over %.1f s idle window", f.idle_window_s) +
                 formatted(": mean %.1f%%", mean_util) + formatted(", peak %.0f%%", peak) + " (" +
                 std::to_string(util.size()) + " readings)");
  else
    ev.push_back(f.idle_samples.empty() ? "no idle-window readings"
                                        : "utilisation unsupported (e.g. MIG mode): judged on processes only");
  if (!f.idle_samples.empty() && f.idle_samples.front().r.memory_used_bytes)
    ev.push_back("memory used while idle " + mib(*f.idle_samples.front().r.memory_used_bytes));

  CheckStatus status = CheckStatus::pass;
  if (!have_procs && !have_util)
    status = CheckStatus::unknown;
  else if (have_util && mean_util > th.idle_util_pct)
    status = CheckStatus::fail;
  else if (!foreign.empty() || (have_util && peak > th.idle_util_pct))
    status = CheckStatus::warn;
  return {status, joined(ev, "; ")};
}

Judgement check_power_limit(const ProbeFacts& f, const ProbeThresholds&) {
  const TelemetryReading* r = any_reading(f);
  if (!r || !r->power_limit_w || !r->default_power_limit_w)
    return {CheckStatus::unknown, "enforced or default power limit not supported by NVML here"};
  bool locked = *r->power_limit_w < *r->default_power_limit_w;
  return {locked ? CheckStatus::warn : CheckStatus::pass,
          formatted("enforced %.0f W", *r->power_limit_w) + formatted(", default %.0f W", *r->default_power_limit_w) +
              (locked ? formatted(": power-locked at %.1f%% of the default",
                                  100 * *r->power_limit_w / *r->default_power_limit_w)
                      : std::string())};
}

Judgement check_max_sm_clock(const ProbeFacts& f, const ProbeThresholds&) {
  const TelemetryReading* r = any_reading(f);
  if (!r || !r->max_sm_clock_mhz) return {CheckStatus::unknown, "maximum SM clock not supported by NVML here"};
  return {CheckStatus::pass,
          std::to_string(*r->max_sm_clock_mhz) + " MHz" +
              (r->sm_clock_mhz ? " (current " + std::to_string(*r->sm_clock_mhz) + " MHz)" : std::string())};
}

Judgement check_pcie(const ProbeFacts& f, const ProbeThresholds&) {
  const DeviceFacts& g = f.gpu;
  if (!g.pcie_gen_current || !g.pcie_width_current || !g.pcie_gen_max || !g.pcie_width_max)
    return {CheckStatus::unknown, "PCIe link generation/width not supported by NVML here"};
  std::string cur = "Gen" + std::to_string(*g.pcie_gen_current) + " x" + std::to_string(*g.pcie_width_current);
  std::string max = "Gen" + std::to_string(*g.pcie_gen_max) + " x" + std::to_string(*g.pcie_width_max);
  bool degraded = *g.pcie_gen_current < *g.pcie_gen_max || *g.pcie_width_current < *g.pcie_width_max;
  return {degraded ? CheckStatus::warn : CheckStatus::pass,
          "current " + cur + ", max " + max +
              (degraded ? ": link degraded; while idle this may be power saving, re-check under load" : std::string())};
}

Judgement check_nvlink(const ProbeFacts& f, const ProbeThresholds&) {
  const DeviceFacts& g = f.gpu;
  if (!g.nvlink_links_up) return {CheckStatus::pass, "no NVLink (not supported on this GPU)"};
  return {
      *g.nvlink_links_up == 0 && g.nvlink_links_queried > 0 ? CheckStatus::warn : CheckStatus::pass,
      std::to_string(*g.nvlink_links_up) + " of " + std::to_string(g.nvlink_links_queried) + " NVLink links active"};
}

// How every pair of GPUs is joined: NVLink for all pairs passes, PCIe only for some or all warns (seeds 002,
// 003: multi-card training wants NVLink), a pair NVML would not answer is unknown.
Judgement check_interconnect(const ProbeFacts& f, const ProbeThresholds&) {
  if (f.gpu_count <= 1) return {CheckStatus::pass, "one GPU: no peer to reach"};
  const std::string n = std::to_string(f.gpu_count);
  if (f.gpu_pairs.empty()) return {CheckStatus::unknown, "NVML cannot say how these " + n + " GPUs reach each other"};
  std::vector<std::string> pcie_only, unknown;
  for (const GpuPairPath& p : f.gpu_pairs) {
    const std::string pair = std::to_string(p.a) + "-" + std::to_string(p.b);
    if (!p.nvlink) unknown.push_back(pair);
    else if (!*p.nvlink) pcie_only.push_back(pair + " (" + pci_path_name(p.pci) + ")");
  }
  if (pcie_only.size() == f.gpu_pairs.size())
    return {CheckStatus::warn, "these " + n + " GPUs reach each other over PCIe only (no NVLink): " + joined(pcie_only, ", ")};
  if (!pcie_only.empty())
    return {CheckStatus::warn, std::to_string(pcie_only.size()) + " of " + std::to_string(f.gpu_pairs.size()) +
                                   " GPU pairs over PCIe only (no NVLink): " + joined(pcie_only, ", ")};
  if (!unknown.empty())
    return {CheckStatus::unknown, "NVML would not say whether NVLink joins GPUs " + joined(unknown, ", ")};
  return {CheckStatus::pass, "these " + n + " GPUs reach each other over NVLink (every pair)"};
}

Judgement check_ecc(const ProbeFacts& f, const ProbeThresholds&) {
  const DeviceFacts& g = f.gpu;
  if (!g.ecc_current) return {CheckStatus::unknown, "ECC not supported by this GPU or driver"};
  bool pending_change = g.ecc_pending && *g.ecc_pending != *g.ecc_current;
  return {(*g.ecc_current && !pending_change) ? CheckStatus::pass : CheckStatus::warn,
          std::string("ECC ") + (*g.ecc_current ? "enabled" : "disabled") +
              (pending_change ? std::string(", ") + (*g.ecc_pending ? "enabling" : "disabling") + " pending a reboot"
                              : std::string()) +
              (!*g.ecc_current ? " (datacenter GPUs ship with ECC on)" : "")};
}

std::string host_threshold(const ProbeThresholds& th) {
  return "warn below " + std::to_string(th.min_host_cores) + " usable cores, or host memory below " +
         formatted("%g", th.min_host_memory_ratio) + "x the GPU memory";
}

Judgement check_host(const ProbeFacts& f, const ProbeThresholds& th) {
  const HostFacts& h = f.host;
  const DeviceFacts& g = f.gpu;
  std::vector<std::string> ev, problems;
  ev.push_back(std::to_string(h.usable_cores) + " usable of " + std::to_string(h.online_cores) + " online cores");
  if (h.usable_cores < th.min_host_cores) problems.push_back("few cores");
  if (h.memory_total_bytes) {
    ev.push_back("memory " + mib(*h.memory_total_bytes) +
                 (h.memory_available_bytes ? " (" + mib(*h.memory_available_bytes) + " available)" : std::string()));
    if (f.nvml_available && g.memory_total_bytes > 0 &&
        static_cast<double>(*h.memory_total_bytes) < th.min_host_memory_ratio * g.memory_total_bytes)
      problems.push_back("host memory below the GPU memory (" + mib(g.memory_total_bytes) + ")");
  } else {
    ev.push_back("memory unknown (/proc/meminfo unreadable)");
  }
  CheckStatus status = problems.empty() ? CheckStatus::pass : CheckStatus::warn;
  if (h.usable_cores == 0 && !h.memory_total_bytes) status = CheckStatus::unknown;
  return {status, joined(ev, ", ") + (problems.empty() ? std::string() : ": " + joined(problems, "; "))};
}

std::string h2d_threshold(const ProbeThresholds& th) {
  return "warn when pinned H2D is below " + formatted("%.0f%%", th.min_h2d_link_fraction * 100) +
         " of the maximum PCIe link's theoretical rate";
}

Judgement check_h2d_bandwidth(const ProbeFacts& f, const ProbeThresholds& th) {
  const HostFacts& h = f.host;
  const DeviceFacts& g = f.gpu;
  if (!h.h2d_pinned_gbps) return {CheckStatus::unknown, "not measured"};
  std::string ev = formatted("pinned %.1f GB/s", *h.h2d_pinned_gbps);
  if (h.h2d_pageable_gbps)
    ev += formatted(", pageable %.1f GB/s", *h.h2d_pageable_gbps) +
          (*h.h2d_pinned_gbps > 0 ? formatted(" (%.0f%% of pinned)", 100 * *h.h2d_pageable_gbps / *h.h2d_pinned_gbps)
                                  : std::string());
  double link = f.nvml_available && g.pcie_gen_max && g.pcie_width_max
                    ? pcie_link_gbps(*g.pcie_gen_max, *g.pcie_width_max)
                    : 0;
  if (link <= 0) return {CheckStatus::pass, ev + "; link rate unknown: not judged"};
  ev += formatted("; link Gen%.0f", g.pcie_gen_max.value_or(0)) + formatted(" x%.0f", g.pcie_width_max.value_or(0)) +
        formatted(" theoretical %.1f GB/s", link) + formatted(" (pinned = %.0f%%)", 100 * *h.h2d_pinned_gbps / link);
  return {*h.h2d_pinned_gbps < th.min_h2d_link_fraction * link ? CheckStatus::warn : CheckStatus::pass, ev};
}

std::string load_utilization_threshold(const ProbeThresholds& th) {
  return "warn below " + formatted("%g%%", th.min_load_util_pct) + " (the bottleneck is elsewhere)";
}

Judgement check_load_utilization(const ProbeFacts& f, const ProbeThresholds& th) {
  if (!f.load_util_pct) return {CheckStatus::unknown, "not measured"};
  bool low = *f.load_util_pct < th.min_load_util_pct;
  return {low ? CheckStatus::warn : CheckStatus::pass,
          formatted("mean GPU utilisation %.1f%% under our load", *f.load_util_pct) +
              (low ? ": the bottleneck is elsewhere (CPU, I/O, input pipeline)" : "")};
}

// The checklist, in output order.
const CheckSpec kChecks[] = {
    {"nvml", "NVML (driver management library)", CheckKind::nvml_status,
     "NVML must load and initialise for any GPU check", nullptr, "docs/design.md section 5", check_nvml},
    {"identity", "GPU identity", CheckKind::gpu, "report only", nullptr, "docs/design.md section 6", check_identity},
    {"memory_total", "Memory total vs the model's nominal memory", CheckKind::gpu, nullptr, memory_total_threshold,
     "seed 001; docs/design.md section 6", check_memory_total},
    {"mig", "MIG mode and visible instances", CheckKind::gpu,
     "MIG off or unsupported: pass (whole GPU); MIG on: warn (work runs on a slice)", nullptr,
     "seed 002; docs/design.md sections 6-7", check_mig},
    {"virtualization", "Virtualisation mode", CheckKind::gpu,
     "NONE or PASSTHROUGH: pass; VGPU, HOST_VGPU, HOST_VSGA: warn (shared physical GPU)", nullptr,
     "seed 001; docs/design.md section 6", check_virtualization},
    {"neighbours", "Foreign compute processes and utilisation while we run nothing", CheckKind::gpu, nullptr,
     neighbours_threshold, "seed 001; docs/design.md section 6", check_neighbours},
    {"power_limit", "Enforced vs default power limit", CheckKind::gpu,
     "warn when the enforced limit is below the default", nullptr, "seed 003; docs/design.md sections 5-6",
     check_power_limit},
    {"max_sm_clock", "Maximum SM clock", CheckKind::gpu, "report only", nullptr, "docs/design.md section 6",
     check_max_sm_clock},
    {"pcie", "PCIe link, current vs max", CheckKind::gpu,
     "warn when the current generation or width is below the maximum (an idle GPU may downshift the link to save "
     "power: re-check under load)",
     nullptr, "seed 001; docs/design.md section 6", check_pcie},
    {"nvlink", "NVLink links", CheckKind::gpu,
     "report; warn when the GPU has NVLink links but none is active (multi-GPU traffic falls back to PCIe)", nullptr,
     "docs/design.md section 6", check_nvlink},
    {"interconnect", "How the GPUs reach each other (NVLink or PCIe)", CheckKind::gpu,
     "pass: NVLink between every pair of GPUs, or one GPU; warn: a pair over PCIe only (multi-GPU training and "
     "collectives want NVLink); unknown: NVML would not say",
     nullptr, "seeds 002, 003; docs/design.md section 13", check_interconnect},
    {"ecc", "ECC mode", CheckKind::gpu, "pass when ECC is on; warn when off or when a change is pending a reboot",
     nullptr, "docs/design.md section 6", check_ecc},
    {"host", "Host cores and memory", CheckKind::host, nullptr, host_threshold, "seed 001; docs/design.md section 6",
     check_host},
    {"h2d_bandwidth", "Pinned vs pageable host-to-device bandwidth", CheckKind::host, nullptr, h2d_threshold,
     "seed 001; docs/design.md section 6", check_h2d_bandwidth},
    {"load_utilization", "GPU utilisation under our own load", CheckKind::host, nullptr, load_utilization_threshold,
     "seed 004; docs/design.md section 6", check_load_utilization},
};

}  // namespace

std::vector<ProbeCheck> evaluate_probe(const ProbeFacts& f, const ProbeThresholds& th) {
  std::vector<ProbeCheck> out;
  for (const CheckSpec& spec : kChecks) {
    if (spec.kind == CheckKind::nvml_status && f.nvml_available) continue;
    ProbeCheck c;
    c.id = spec.id;
    c.title = spec.title;
    c.threshold = spec.threshold_from ? spec.threshold_from(th) : spec.threshold;
    c.source = spec.source;
    Judgement j = spec.kind == CheckKind::gpu && !f.nvml_available
                      ? Judgement{CheckStatus::unknown, kNotCheckedWithoutNvml}
                      : spec.judge(f, th);
    c.status = j.status;
    c.evidence = std::move(j.evidence);
    out.push_back(std::move(c));
  }
  return out;
}

ProbeCheck baseline_model_check(const std::string& baseline_gpu, const std::string& this_gpu,
                                const std::string& baseline_file) {
  ProbeCheck c;
  c.id = "baseline_model";
  c.title = "Baseline from the same GPU model";
  c.threshold = "the baseline's GPU name equals this GPU's";
  c.source = "docs/design.md section 6 (P95 slowdown against an exclusive card of the same model)";
  if (baseline_gpu.empty()) {
    c.status = CheckStatus::unknown;
    c.evidence = baseline_file + " does not name its GPU (written without NVML)";
  } else if (baseline_gpu == this_gpu) {
    c.status = CheckStatus::pass;
    c.evidence = "both " + this_gpu;
  } else {
    c.status = CheckStatus::warn;
    c.evidence = "baseline measured on " + baseline_gpu + ", this GPU is " + this_gpu +
                 ": the P95 comparison is across models";
  }
  return c;
}

}  // namespace ib
