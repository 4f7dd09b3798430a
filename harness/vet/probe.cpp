// Platform probe, its checklist and the cost advice (see probe.h and docs/telemetry.md).
#include "harness/vet/probe.h"

#include "harness/core/text.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "harness/stats/stats.h"

namespace ib {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::string mib(unsigned long long bytes) { return formatted("%.0f MiB", static_cast<double>(bytes) / kMiB); }

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// ---- nominal memory table ----
struct ModelSize {
  int gb;                  // as marketed
  unsigned long long mib;  // nominal MiB (GB × 1024, except where NVML's whole-card total is known and larger)
};
struct ModelEntry {
  const char* key;  // matched at word boundaries, case-insensitive
  std::vector<ModelSize> sizes;
};

const std::vector<ModelEntry>& model_table() {
  static const std::vector<ModelEntry> table = {
      {"H200", {{141, 143771}}},  // NVML reports 143771 MiB for a whole H200 141 GB
      {"GH200", {{96, 98304}, {144, 147456}}},
      {"H100", {{80, 81920}}},  // SXM and PCIe
      {"H100 NVL", {{94, 96256}}},
      {"B200", {{180, 184320}}},
      {"A100", {{40, 40960}, {80, 81920}}},
      {"A10", {{24, 24576}}},
      {"A10G", {{24, 24576}}},
      {"A30", {{24, 24576}}},
      {"L4", {{24, 24576}}},
      {"L40", {{48, 49152}}},
      {"L40S", {{48, 49152}}},
      {"V100", {{16, 16384}, {32, 32768}}},
      {"V100S", {{32, 32768}}},
      {"T4", {{16, 16384}}},
      {"RTX 4090", {{24, 24576}}},
      {"RTX 3090", {{24, 24576}}},
  };
  return table;
}

// Every "<digits>GB" / "<digits>G" token of the name (e.g. "A100-SXM4-80GB" -> 80, "144G HBM3e" -> 144).
std::vector<int> sizes_in_name(const std::string& lname) {
  std::vector<int> out;
  for (size_t i = 0; i < lname.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(lname[i])) || (i > 0 && alnum(lname[i - 1]))) continue;
    size_t j = i;
    while (j < lname.size() && std::isdigit(static_cast<unsigned char>(lname[j]))) ++j;
    size_t k = j;
    if (k < lname.size() && lname[k] == 'g') {
      ++k;
      if (k < lname.size() && lname[k] == 'b') ++k;
      if (k == lname.size() || !alnum(lname[k])) out.push_back(std::atoi(lname.substr(i, j - i).c_str()));
    }
    i = j;
  }
  return out;
}

std::string version_text(int cuda) { return std::to_string(cuda / 1000) + "." + std::to_string((cuda % 1000) / 10); }

ProbeCheck make(const char* id, const char* title, const char* threshold, const char* source) {
  ProbeCheck c;
  c.id = id;
  c.title = title;
  c.threshold = threshold;
  c.source = source;
  return c;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

const TelemetryReading* any_reading(const ProbeFacts& f) {
  if (f.reading) return &*f.reading;
  if (!f.idle_samples.empty()) return &f.idle_samples.back().r;
  return nullptr;
}

}  // namespace

// ---- host ----

void parse_meminfo(const std::string& text, HostFacts& out) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream l(line);
    std::string key, unit;
    unsigned long long value = 0;
    if (!(l >> key >> value)) continue;
    l >> unit;
    unsigned long long scale = unit == "kB" ? 1024ull : 1ull;
    if (key == "MemTotal:") out.memory_total_bytes = value * scale;
    if (key == "MemAvailable:") out.memory_available_bytes = value * scale;
  }
}

HostFacts read_host_facts() {
  HostFacts h;
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  h.online_cores = online > 0 ? static_cast<unsigned>(online) : 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  h.usable_cores = sched_getaffinity(0, sizeof(set), &set) == 0 ? static_cast<unsigned>(CPU_COUNT(&set))
                                                                 : h.online_cores;
  std::ifstream in("/proc/meminfo");
  if (in) {
    std::stringstream ss;
    ss << in.rdbuf();
    parse_meminfo(ss.str(), h);
  }
  return h;
}

ProbeFacts collect_probe_facts(Nvml& nvml, unsigned device, double idle_window_s, double hz) {
  ProbeFacts f;
  f.device = device;
  f.idle_window_s = idle_window_s;
  if (idle_window_s > 0) {
    TelemetrySampler sampler(nvml, device, hz);
    sampler.start();
    // The window is the measurement: wait for its readings (deadline: the window plus one second).
    size_t expected = static_cast<size_t>(std::floor(idle_window_s * hz)) + 1;
    sampler.wait_for_samples(expected, std::chrono::milliseconds(static_cast<long long>(idle_window_s * 1000) + 1000));
    sampler.stop();
    if (auto err = sampler.error()) throw NvmlError(*err);
    f.idle_samples = sampler.samples();
    f.telemetry_notes = sampler.notes();
  }
  TelemetryReading r = nvml.read_telemetry(device);
  if (f.telemetry_notes.empty()) f.telemetry_notes = r.unsupported;
  r.unsupported.clear();
  f.reading = std::move(r);
  f.gpu = nvml.device_facts(device);
  f.mig = nvml.mig_mode(device);
  f.mig_instances = nvml.mig_instances(device);
  f.own_pids = {static_cast<unsigned>(getpid())};
  f.host = read_host_facts();
  return f;
}

// ---- nominal memory ----

std::optional<NominalMemory> nominal_memory(const std::string& name) {
  std::string lname = lower(name);
  const ModelEntry* best = nullptr;
  for (const auto& e : model_table()) {
    std::string key = lower(e.key);
    for (size_t pos = lname.find(key); pos != std::string::npos; pos = lname.find(key, pos + 1)) {
      bool left = pos == 0 || !alnum(lname[pos - 1]);
      size_t end = pos + key.size();
      bool right = end == lname.size() || !alnum(lname[end]);
      if (left && right && (!best || key.size() > std::string(best->key).size())) best = &e;
      if (left && right) break;
    }
  }
  if (!best) return std::nullopt;
  NominalMemory m;
  m.model = best->key;
  std::vector<int> stated = sizes_in_name(lname);
  for (const auto& s : best->sizes)
    if (std::find(stated.begin(), stated.end(), s.gb) != stated.end()) {
      m.sizes_mib = {s.mib};
      m.label = std::to_string(s.gb) + " GB";
      return m;
    }
  std::vector<std::string> labels;
  for (const auto& s : best->sizes) {
    m.sizes_mib.push_back(s.mib);
    labels.push_back(std::to_string(s.gb));
  }
  m.label = join(labels, " or ") + " GB";
  return m;
}

double pcie_link_gbps(unsigned generation, unsigned width) {
  // GB/s per lane and direction after line encoding: 8b/10b (Gen1-2), 128b/130b (Gen3-5), FLIT (Gen6).
  static const double per_lane[] = {0.0, 0.25, 0.5, 0.985, 1.969, 3.938, 7.563};
  if (generation == 0 || generation > 6) return 0.0;
  return per_lane[generation] * width;
}

const char* check_status_name(CheckStatus s) {
  switch (s) {
    case CheckStatus::pass: return "pass";
    case CheckStatus::warn: return "warn";
    case CheckStatus::fail: return "fail";
    case CheckStatus::unknown: return "unknown";
  }
  return "unknown";
}

// ---- checks ----

std::vector<ProbeCheck> evaluate_probe(const ProbeFacts& f, const ProbeThresholds& th) {
  std::vector<ProbeCheck> out;
  const bool gpu = f.nvml_available;
  const DeviceFacts& g = f.gpu;
  const char* no_nvml = "NVML not available: not checked";

  if (!gpu) {
    auto c = make("nvml", "NVML (driver management library)", "NVML must load and initialise for any GPU check",
                  "DESIGN.md section 5");
    c.status = CheckStatus::fail;
    c.evidence = f.nvml_error.empty() ? "NVML not available" : f.nvml_error;
    out.push_back(c);
  }

  {  // identity
    auto c = make("identity", "GPU identity", "report only", "DESIGN.md section 6");
    if (!gpu) {
      c.evidence = no_nvml;
    } else {
      c.status = CheckStatus::pass;
      std::vector<std::string> parts = {
          g.name, g.uuid, "driver " + g.driver_version.value_or("unsupported"),
          "CUDA " + (g.cuda_driver_version ? version_text(*g.cuda_driver_version) : std::string("unsupported")),
          "compute capability " + (g.cc_major ? std::to_string(*g.cc_major) + "." + std::to_string(g.cc_minor.value_or(0))
                                              : std::string("unsupported")),
          "SMs " + (g.sm_count ? std::to_string(*g.sm_count) : std::string("not reported by NVML"))};
      c.evidence = join(parts, ", ");
    }
    out.push_back(c);
  }

  {  // memory total vs nominal
    auto c = make("memory_total", "Memory total vs the model's nominal memory",
                  "warn below 90% of nominal (slice or vGPU suspected)", "seed 001; DESIGN.md section 6");
    c.threshold = "warn below " + formatted("%.0f%%", th.min_memory_fraction * 100) +
                  " of the model's nominal memory (slice or vGPU suspected)";
    if (!gpu) {
      c.evidence = no_nvml;
    } else {
      double total = static_cast<double>(g.memory_total_bytes) / kMiB;
      auto nominal = nominal_memory(g.name);
      if (!nominal) {
        c.status = CheckStatus::unknown;
        c.evidence = formatted("%.0f MiB total; model '", total) + g.name +
                     "' is not in the table of nominal memory: not judged";
      } else {
        // Several sizes (the name does not say which): the largest one the total reaches.
        double best_ratio = 0;
        unsigned long long best = nominal->sizes_mib.front();
        for (auto s : nominal->sizes_mib) {
          double ratio = total / static_cast<double>(s);
          if (ratio >= th.min_memory_fraction && (best_ratio < th.min_memory_fraction || s > best)) {
            best = s;
            best_ratio = ratio;
          } else if (best_ratio < th.min_memory_fraction && ratio > best_ratio) {
            best = s;
            best_ratio = ratio;
          }
        }
        bool ok = best_ratio >= th.min_memory_fraction;
        c.status = ok ? CheckStatus::pass : CheckStatus::warn;
        c.evidence = formatted("%.0f MiB total", total) + formatted(" = %.1f%%", best_ratio * 100) + " of the " + nominal->model +
                     " nominal " + std::to_string(best) + " MiB (" + nominal->label + ")";
        if (nominal->sizes_mib.size() > 1)
          c.evidence += "; the model comes in " + nominal->label + " and the name does not say which";
        if (!ok) c.evidence += ": slice or vGPU suspected";
      }
      if (f.mig && f.mig->current)
        c.evidence += "; MIG mode is on: this is the whole GPU's total, work runs in a MIG instance with less "
                      "(see the mig check)";
    }
    out.push_back(c);
  }

  {  // MIG
    auto c = make("mig", "MIG mode and visible instances",
                  "MIG off or unsupported: pass (whole GPU); MIG on: warn (work runs on a slice)",
                  "seed 002; DESIGN.md sections 6-7");
    if (!gpu) {
      c.evidence = no_nvml;
    } else if (!f.mig) {
      c.status = CheckStatus::pass;
      c.evidence = "MIG not supported on this GPU: whole GPU";
    } else if (!f.mig->current) {
      c.status = CheckStatus::pass;
      c.evidence = "MIG disabled: whole GPU";
      if (f.mig->pending) c.evidence += " (MIG enabling is pending a GPU reset)";
    } else {
      c.status = CheckStatus::warn;
      std::vector<std::string> inst;
      for (const auto& m : f.mig_instances)
        inst.push_back(m.profile + " (GI " + std::to_string(m.gpu_instance_id) + ", CI " +
                       std::to_string(m.compute_instance_id) + ", " + mib(m.memory_bytes) + ", " +
                       std::to_string(m.sm_count) + " SMs, " + m.uuid + ")");
      c.evidence = "MIG mode is on: " + std::to_string(f.mig_instances.size()) + " instance(s) visible" +
                   (inst.empty() ? std::string() : ": " + join(inst, "; ")) +
                   "; a MIG instance is a partition with its own memory boundary, not the whole card";
      if (!f.mig->pending) c.evidence += " (MIG disabling is pending a GPU reset)";
    }
    out.push_back(c);
  }

  {  // virtualization
    auto c = make("virtualization", "Virtualisation mode",
                  "NONE or PASSTHROUGH: pass; VGPU, HOST_VGPU, HOST_VSGA: warn (shared physical GPU)",
                  "seed 001; DESIGN.md section 6");
    if (!gpu) {
      c.evidence = no_nvml;
    } else if (!g.virtualization) {
      c.status = CheckStatus::unknown;
      c.evidence = "virtualisation mode not supported by NVML here";
    } else {
      VirtualizationMode m = *g.virtualization;
      std::string name = virtualization_mode_name(m);
      switch (m) {
        case VirtualizationMode::none:
          c.status = CheckStatus::pass;
          c.evidence = name + ": bare metal";
          break;
        case VirtualizationMode::passthrough:
          c.status = CheckStatus::pass;
          c.evidence = name + ": the whole GPU is passed through to this virtual machine (not shared by the "
                              "hypervisor)";
          break;
        case VirtualizationMode::vgpu:
          c.status = CheckStatus::warn;
          c.evidence = name + ": a vGPU inside a virtual machine, a time-sliced or partitioned share of a physical "
                              "GPU";
          break;
        case VirtualizationMode::host_vgpu:
        case VirtualizationMode::host_vsga:
          c.status = CheckStatus::warn;
          c.evidence = name + ": this is a hypervisor host sharing the GPU with virtual machines";
          break;
        case VirtualizationMode::unknown:
          c.status = CheckStatus::unknown;
          c.evidence = "unknown virtualisation mode value";
          break;
      }
    }
    out.push_back(c);
  }

  {  // neighbours
    auto c = make("neighbours", "Foreign compute processes and utilisation while we run nothing", "",
                  "seed 001; DESIGN.md section 6");
    c.threshold = "fail: mean GPU utilisation over the idle window above " + formatted("%g%%", th.idle_util_pct) +
                  "; warn: any compute process that is not ours, or peak utilisation above " +
                  formatted("%g%%", th.idle_util_pct) + "; pass otherwise";
    if (!gpu) {
      c.evidence = no_nvml;
    } else {
      std::vector<std::string> foreign;
      if (g.processes)
        for (const auto& p : *g.processes)
          if (std::find(f.own_pids.begin(), f.own_pids.end(), p.pid) == f.own_pids.end())
            foreign.push_back("pid " + std::to_string(p.pid) +
                              (p.used_bytes ? " using " + mib(*p.used_bytes) : std::string()) +
                              (p.gpu_instance_id ? " in GI " + std::to_string(*p.gpu_instance_id) : std::string()));
      std::vector<double> util;
      for (const auto& s : f.idle_samples)
        if (s.r.util_gpu_pct) util.push_back(*s.r.util_gpu_pct);
      std::vector<std::string> ev;
      bool have_procs = g.processes.has_value(), have_util = !util.empty();
      double mean_util = have_util ? mean(util) : 0, peak = have_util ? *std::max_element(util.begin(), util.end()) : 0;
      if (have_procs)
        ev.push_back(foreign.empty() ? "no foreign compute process"
                                     : std::to_string(foreign.size()) + " foreign compute process(es): " +
                                           join(foreign, ", "));
      else
        ev.push_back("compute process list unavailable (not supported or not permitted)");
      if (have_util)
        ev.push_back(formatted("GPU utilisation over %.1f s idle window", f.idle_window_s) + formatted(": mean %.1f%%", mean_util) +
                     formatted(", peak %.0f%%", peak) + " (" + std::to_string(util.size()) + " readings)");
      else
        ev.push_back(f.idle_samples.empty() ? "no idle-window readings"
                                            : "utilisation unsupported (e.g. MIG mode): judged on processes only");
      if (!f.idle_samples.empty() && f.idle_samples.front().r.memory_used_bytes)
        ev.push_back("memory used while idle " + mib(*f.idle_samples.front().r.memory_used_bytes));
      if (!have_procs && !have_util)
        c.status = CheckStatus::unknown;
      else if (have_util && mean_util > th.idle_util_pct)
        c.status = CheckStatus::fail;
      else if (!foreign.empty() || (have_util && peak > th.idle_util_pct))
        c.status = CheckStatus::warn;
      else
        c.status = CheckStatus::pass;
      c.evidence = join(ev, "; ");
    }
    out.push_back(c);
  }

  const TelemetryReading* r = any_reading(f);
  {  // power limit
    auto c = make("power_limit", "Enforced vs default power limit", "warn when the enforced limit is below the default",
                  "seed 003; DESIGN.md sections 5-6");
    if (!gpu) {
      c.evidence = no_nvml;
    } else if (!r || !r->power_limit_w || !r->default_power_limit_w) {
      c.status = CheckStatus::unknown;
      c.evidence = "enforced or default power limit not supported by NVML here";
    } else {
      bool locked = *r->power_limit_w < *r->default_power_limit_w;
      c.status = locked ? CheckStatus::warn : CheckStatus::pass;
      c.evidence = formatted("enforced %.0f W", *r->power_limit_w) + formatted(", default %.0f W", *r->default_power_limit_w) +
                   (locked ? formatted(": power-locked at %.1f%% of the default", 100 * *r->power_limit_w /
                                                                            *r->default_power_limit_w)
                           : std::string());
    }
    out.push_back(c);
  }

  {  // max SM clock
    auto c = make("max_sm_clock", "Maximum SM clock", "report only", "DESIGN.md section 6");
    if (!gpu) {
      c.evidence = no_nvml;
    } else if (!r || !r->max_sm_clock_mhz) {
      c.status = CheckStatus::unknown;
      c.evidence = "maximum SM clock not supported by NVML here";
    } else {
      c.status = CheckStatus::pass;
      c.evidence = std::to_string(*r->max_sm_clock_mhz) + " MHz" +
                   (r->sm_clock_mhz ? " (current " + std::to_string(*r->sm_clock_mhz) + " MHz)" : std::string());
    }
    out.push_back(c);
  }

  {  // PCIe
    auto c = make("pcie", "PCIe link, current vs max",
                  "warn when the current generation or width is below the maximum (an idle GPU may downshift the "
                  "link to save power: re-check under load)",
                  "seed 001; DESIGN.md section 6");
    if (!gpu) {
      c.evidence = no_nvml;
    } else if (!g.pcie_gen_current || !g.pcie_width_current || !g.pcie_gen_max || !g.pcie_width_max) {
      c.status = CheckStatus::unknown;
      c.evidence = "PCIe link generation/width not supported by NVML here";
    } else {
      std::string cur = "Gen" + std::to_string(*g.pcie_gen_current) + " x" + std::to_string(*g.pcie_width_current);
      std::string max = "Gen" + std::to_string(*g.pcie_gen_max) + " x" + std::to_string(*g.pcie_width_max);
      bool degraded = *g.pcie_gen_current < *g.pcie_gen_max || *g.pcie_width_current < *g.pcie_width_max;
      c.status = degraded ? CheckStatus::warn : CheckStatus::pass;
      c.evidence = "current " + cur + ", max " + max +
                   (degraded ? ": link degraded; while idle this may be power saving, re-check under load"
                             : std::string());
    }
    out.push_back(c);
  }

  {  // NVLink
    auto c = make("nvlink", "NVLink links",
                  "report; warn when the GPU has NVLink links but none is active (multi-GPU traffic falls back to "
                  "PCIe)",
                  "DESIGN.md section 6");
    if (!gpu) {
      c.evidence = no_nvml;
    } else if (!g.nvlink_links_up) {
      c.status = CheckStatus::pass;
      c.evidence = "no NVLink (not supported on this GPU)";
    } else {
      c.status = *g.nvlink_links_up == 0 && g.nvlink_links_queried > 0 ? CheckStatus::warn : CheckStatus::pass;
      c.evidence = std::to_string(*g.nvlink_links_up) + " of " + std::to_string(g.nvlink_links_queried) +
                   " NVLink links active";
    }
    out.push_back(c);
  }

  {  // ECC
    auto c = make("ecc", "ECC mode", "pass when ECC is on; warn when off or when a change is pending a reboot",
                  "DESIGN.md section 6");
    if (!gpu) {
      c.evidence = no_nvml;
    } else if (!g.ecc_current) {
      c.status = CheckStatus::unknown;
      c.evidence = "ECC not supported by this GPU or driver";
    } else {
      bool pending_change = g.ecc_pending && *g.ecc_pending != *g.ecc_current;
      c.status = (*g.ecc_current && !pending_change) ? CheckStatus::pass : CheckStatus::warn;
      c.evidence = std::string("ECC ") + (*g.ecc_current ? "enabled" : "disabled") +
                   (pending_change ? std::string(", ") + (*g.ecc_pending ? "enabling" : "disabling") +
                                         " pending a reboot"
                                   : std::string()) +
                   (!*g.ecc_current ? " (datacenter GPUs ship with ECC on)" : "");
    }
    out.push_back(c);
  }

  {  // host
    auto c = make("host", "Host cores and memory", "", "seed 001; DESIGN.md section 6");
    c.threshold = "warn below " + std::to_string(th.min_host_cores) + " usable cores, or host memory below " +
                  formatted("%g", th.min_host_memory_ratio) + "x the GPU memory";
    const HostFacts& h = f.host;
    std::vector<std::string> ev, problems;
    ev.push_back(std::to_string(h.usable_cores) + " usable of " + std::to_string(h.online_cores) + " online cores");
    if (h.usable_cores < th.min_host_cores) problems.push_back("few cores");
    if (h.memory_total_bytes) {
      ev.push_back("memory " + mib(*h.memory_total_bytes) +
                   (h.memory_available_bytes ? " (" + mib(*h.memory_available_bytes) + " available)" : std::string()));
      if (gpu && g.memory_total_bytes > 0 &&
          static_cast<double>(*h.memory_total_bytes) < th.min_host_memory_ratio * g.memory_total_bytes)
        problems.push_back("host memory below the GPU memory (" + mib(g.memory_total_bytes) + ")");
    } else {
      ev.push_back("memory unknown (/proc/meminfo unreadable)");
    }
    if (h.usable_cores == 0 && !h.memory_total_bytes)
      c.status = CheckStatus::unknown;
    else
      c.status = problems.empty() ? CheckStatus::pass : CheckStatus::warn;
    c.evidence = join(ev, ", ") + (problems.empty() ? std::string() : ": " + join(problems, "; "));
    out.push_back(c);
  }

  {  // H2D bandwidth
    auto c = make("h2d_bandwidth", "Pinned vs pageable host-to-device bandwidth", "",
                  "seed 001; DESIGN.md section 6");
    c.threshold = "warn when pinned H2D is below " + formatted("%.0f%%", th.min_h2d_link_fraction * 100) +
                  " of the maximum PCIe link's theoretical rate";
    const HostFacts& h = f.host;
    if (!h.h2d_pinned_gbps) {
      c.status = CheckStatus::unknown;
      c.evidence = "not measured";
    } else {
      std::string ev = formatted("pinned %.1f GB/s", *h.h2d_pinned_gbps);
      if (h.h2d_pageable_gbps)
        ev += formatted(", pageable %.1f GB/s", *h.h2d_pageable_gbps) +
              (*h.h2d_pinned_gbps > 0 ? formatted(" (%.0f%% of pinned)", 100 * *h.h2d_pageable_gbps / *h.h2d_pinned_gbps)
                                      : std::string());
      double link = gpu && g.pcie_gen_max && g.pcie_width_max ? pcie_link_gbps(*g.pcie_gen_max, *g.pcie_width_max) : 0;
      c.status = CheckStatus::pass;
      if (link > 0) {
        ev += formatted("; link Gen%.0f", g.pcie_gen_max.value_or(0)) + formatted(" x%.0f", g.pcie_width_max.value_or(0)) +
              formatted(" theoretical %.1f GB/s", link) + formatted(" (pinned = %.0f%%)", 100 * *h.h2d_pinned_gbps / link);
        if (*h.h2d_pinned_gbps < th.min_h2d_link_fraction * link) c.status = CheckStatus::warn;
      } else {
        ev += "; link rate unknown: not judged";
      }
      c.evidence = ev;
    }
    out.push_back(c);
  }

  {  // utilisation under our own load
    auto c = make("load_utilization", "GPU utilisation under our own load", "", "seed 004; DESIGN.md section 6");
    c.threshold = "warn below " + formatted("%g%%", th.min_load_util_pct) + " (the bottleneck is elsewhere)";
    if (!f.load_util_pct) {
      c.status = CheckStatus::unknown;
      c.evidence = "not measured";
    } else {
      c.status = *f.load_util_pct < th.min_load_util_pct ? CheckStatus::warn : CheckStatus::pass;
      c.evidence = formatted("mean GPU utilisation %.1f%% under our load", *f.load_util_pct) +
                   (c.status == CheckStatus::warn ? ": the bottleneck is elsewhere (CPU, I/O, input pipeline)" : "");
    }
    out.push_back(c);
  }
  return out;
}

// ---- cost advice ----

const char* recommendation_name(Recommendation r) {
  switch (r) {
    case Recommendation::exclusive: return "exclusive";
    case Recommendation::shared: return "shared";
    case Recommendation::undecided: return "undecided";
  }
  return "undecided";
}

CostAdvice cost_advice(double throughput_exclusive, double throughput_shared, double price_exclusive_per_h,
                       double price_shared_per_h, bool p95_cutoff_passed) {
  CostAdvice a;
  a.p95_cutoff_passed = p95_cutoff_passed;
  a.exclusive.throughput = throughput_exclusive;
  a.exclusive.price_per_h = price_exclusive_per_h;
  a.shared.throughput = throughput_shared;
  a.shared.price_per_h = price_shared_per_h;
  auto valid_tp = [](double t) { return std::isfinite(t) && t > 0; };
  auto valid_price = [](double p) { return std::isfinite(p) && p >= 0; };
  if (!valid_tp(throughput_exclusive) || !valid_tp(throughput_shared)) {
    a.reason = "throughputs must be positive and finite (exclusive " + formatted("%g", throughput_exclusive) +
               ", shared " + formatted("%g", throughput_shared) + ")";
    return a;
  }
  if (!valid_price(price_exclusive_per_h) || !valid_price(price_shared_per_h)) {
    a.reason = "prices must be non-negative and finite (exclusive " + formatted("%g", price_exclusive_per_h) + ", shared " +
               formatted("%g", price_shared_per_h) + ")";
    return a;
  }
  for (CostOption* o : {&a.exclusive, &a.shared}) {
    o->time_per_unit_s = 1.0 / o->throughput;
    o->cost_per_unit = o->price_per_h / 3600.0 / o->throughput;
  }
  a.shared_to_exclusive_cost = a.exclusive.cost_per_unit > 0 ? a.shared.cost_per_unit / a.exclusive.cost_per_unit
                                                             : (a.shared.cost_per_unit > 0 ? INFINITY : 1.0);
  std::string costs = "cost per unit of work: exclusive " + formatted("%.6g", a.exclusive.cost_per_unit) + ", shared " +
                      formatted("%.6g", a.shared.cost_per_unit);
  bool shared_cheaper = a.shared.cost_per_unit < a.exclusive.cost_per_unit;
  if (!p95_cutoff_passed) {
    a.recommendation = Recommendation::exclusive;
    a.reason = costs + "; the shared option did not pass the P95 cutoff (failed, inconclusive or not compared), so it is not recommended" +
               (shared_cheaper ? " even though it is cheaper" : "");
  } else if (shared_cheaper) {
    a.recommendation = Recommendation::shared;
    a.reason = costs + "; shared is cheaper per unit of work (" + formatted("%.1f%%", 100 * (1 - a.shared_to_exclusive_cost)) +
               " less) and passed the P95 cutoff";
  } else {
    a.recommendation = Recommendation::exclusive;
    a.reason = costs + "; exclusive costs " + (a.shared.cost_per_unit == a.exclusive.cost_per_unit ? "the same (tie "
                                                                                                       "goes to "
                                                                                                       "exclusive)"
                                                                                                     : "less") +
               " (seed 000: switch when T_share x P_share > T_excl x P_excl)";
  }
  return a;
}

ProbeCheck baseline_model_check(const std::string& baseline_gpu, const std::string& this_gpu,
                                const std::string& baseline_file) {
  ProbeCheck c;
  c.id = "baseline_model";
  c.title = "Baseline from the same GPU model";
  c.threshold = "the baseline's GPU name equals this GPU's";
  c.source = "DESIGN.md section 6 (P95 slowdown against an exclusive card of the same model)";
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
