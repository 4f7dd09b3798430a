// Platform probe (probe.h, docs/telemetry.md): the facts it collects (the host from /proc, the GPU through NVML
// with an idle telemetry window), the nominal memory of known GPU models, PCIe link bandwidth. Its checklist:
// probe_checks.cpp; the cost advice: cost_advice.cpp.
#include "harness/vet/probe.h"

#include "harness/core/errors.h"
#include "harness/core/text.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>

namespace ib {

namespace {

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

ProbeFacts collect_probe_facts(Nvml& nvml, unsigned device, double idle_window_s, double hz,
                               const std::function<bool()>& stop) {
  ProbeFacts f;
  f.device = device;
  f.idle_window_s = idle_window_s;
  if (idle_window_s > 0) {
    TelemetrySampler sampler(nvml, device, hz);
    sampler.start();
    // The window is the measurement: wait for its readings (deadline: the window plus one second).
    // Waited for in slices of at most 100 ms, so that a stop signal is answered within one.
    const size_t expected = static_cast<size_t>(std::floor(idle_window_s * hz)) + 1;
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(static_cast<long long>(idle_window_s * 1000) + 1000);
    while (!sampler.wait_for_samples(expected, std::chrono::milliseconds(100)) &&
           std::chrono::steady_clock::now() < deadline && !sampler.error()) {
      if (stop && stop()) {
        sampler.stop();
        throw Interrupted();
      }
    }
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
  f.gpu_count = nvml.device_count();
  for (unsigned a = 0; a < f.gpu_count; ++a)
    for (unsigned b = a + 1; b < f.gpu_count; ++b)
      if (auto path = nvml.gpu_pair_path(a, b)) f.gpu_pairs.push_back(std::move(*path));
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
  m.label = joined(labels, " or ") + " GB";
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

}  // namespace ib
