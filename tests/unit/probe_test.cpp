// Probe: nominal memory table, every check's pass/warn/fail/unknown, NVML missing, the probe against the fake NVML,
// and the cost advice arithmetic. Every expected number is computed by hand in a comment next to it.
#include "harness/vet/probe.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cmath>
#include <iterator>

#include <string>
#include <vector>

#include "harness/nvml/nvml.h"
#include "tests/unit/fake_nvml_env.h"
#include "tests/unit/test_support.h"

using nlohmann::json;

namespace {

using namespace ib::test;

constexpr unsigned long long kMiB = 1ull << 20;


// A healthy whole H200 passed through to a VM, with nothing else on it.
ib::ProbeFacts healthy() {
  ib::ProbeFacts f;
  f.gpu.name = "NVIDIA H200";
  f.gpu.uuid = "GPU-12345678-aaaa-bbbb-cccc-1234567890ab";
  f.gpu.driver_version = "550.90.07";
  f.gpu.cuda_driver_version = 12040;
  f.gpu.cc_major = 9;
  f.gpu.cc_minor = 0;
  f.gpu.memory_total_bytes = 143771 * kMiB;
  f.gpu.ecc_current = true;
  f.gpu.ecc_pending = true;
  f.gpu.virtualization = ib::VirtualizationMode::passthrough;
  f.gpu.pcie_gen_current = 5;
  f.gpu.pcie_width_current = 16;
  f.gpu.pcie_gen_max = 5;
  f.gpu.pcie_width_max = 16;
  f.gpu.processes = std::vector<ib::ComputeProcess>{};
  f.mig = ib::MigModeState{false, false};
  ib::TelemetryReading r;
  r.sm_clock_mhz = 345;
  r.max_sm_clock_mhz = 1980;
  r.power_limit_w = 700;
  r.default_power_limit_w = 700;
  r.util_gpu_pct = 0;
  f.reading = r;
  for (int i = 0; i < 50; ++i) f.idle_samples.push_back({i * 100'000'000ll, r});
  f.idle_window_s = 5;
  f.own_pids = {1000};
  f.host.online_cores = 16;
  f.host.usable_cores = 16;
  f.host.memory_total_bytes = 256ull << 30;
  f.host.memory_available_bytes = 200ull << 30;
  return f;
}

const ib::ProbeCheck& check(const std::vector<ib::ProbeCheck>& checks, const std::string& id) {
  for (const auto& c : checks)
    if (c.id == id) return c;
  static ib::ProbeCheck missing;
  missing.id = "(missing " + id + ")";
  return missing;
}

ib::CheckStatus status(const ib::ProbeFacts& f, const std::string& id) {
  auto checks = ib::evaluate_probe(f);
  return check(checks, id).status;
}

// ---------------------------------------------------------------------------------------------------------------
// Nominal memory table

TEST(ProbeNominalMemory, LongestMatchAtWordBoundaries) {
  auto m = ib::nominal_memory("NVIDIA H200");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->model, "H200");
  EXPECT_EQ(m->sizes_mib, (std::vector<unsigned long long>{143771}));
  EXPECT_EQ(m->label, "141 GB");
  // "GH200" is not "H200" (boundary); the name's "480GB" is not a listed size: both GH200 sizes stay.
  m = ib::nominal_memory("NVIDIA GH200 480GB");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->model, "GH200");
  EXPECT_EQ(m->sizes_mib, (std::vector<unsigned long long>{98304, 147456}));  // 96 × 1024, 144 × 1024
  EXPECT_EQ(m->label, "96 or 144 GB");
  EXPECT_EQ(ib::nominal_memory("NVIDIA H100 NVL")->model, "H100 NVL");  // longer than "H100"
  EXPECT_EQ(ib::nominal_memory("NVIDIA H100 NVL")->sizes_mib[0], 96256u);  // 94 × 1024
  EXPECT_EQ(ib::nominal_memory("NVIDIA H100 80GB HBM3")->sizes_mib[0], 81920u);
  EXPECT_EQ(ib::nominal_memory("NVIDIA H100 PCIe")->sizes_mib[0], 81920u);
  // The size in the name picks one of the model's sizes.
  EXPECT_EQ(ib::nominal_memory("NVIDIA A100-SXM4-40GB")->sizes_mib, (std::vector<unsigned long long>{40960}));
  EXPECT_EQ(ib::nominal_memory("NVIDIA A100 80GB PCIe")->sizes_mib, (std::vector<unsigned long long>{81920}));
  EXPECT_EQ(ib::nominal_memory("Tesla V100-SXM2-16GB")->sizes_mib, (std::vector<unsigned long long>{16384}));
  EXPECT_EQ(ib::nominal_memory("Tesla V100S-PCIE-32GB")->model, "V100S");
  // "A10" does not match inside "A100"; "L4" not inside "L40S"; "A30" not inside "A3000".
  EXPECT_EQ(ib::nominal_memory("NVIDIA A10")->model, "A10");
  EXPECT_EQ(ib::nominal_memory("NVIDIA A10G")->model, "A10G");
  EXPECT_EQ(ib::nominal_memory("NVIDIA L4")->model, "L4");
  EXPECT_EQ(ib::nominal_memory("NVIDIA L40S")->model, "L40S");
  EXPECT_EQ(ib::nominal_memory("NVIDIA L40S")->sizes_mib[0], 49152u);  // 48 × 1024
  EXPECT_EQ(ib::nominal_memory("NVIDIA A30")->sizes_mib[0], 24576u);
  EXPECT_EQ(ib::nominal_memory("Tesla T4")->sizes_mib[0], 16384u);
  EXPECT_EQ(ib::nominal_memory("NVIDIA GeForce RTX 4090")->model, "RTX 4090");
  EXPECT_EQ(ib::nominal_memory("NVIDIA GeForce RTX 3090 Ti")->model, "RTX 3090");
  EXPECT_EQ(ib::nominal_memory("NVIDIA B200")->sizes_mib[0], 184320u);  // 180 × 1024
  EXPECT_FALSE(ib::nominal_memory("NVIDIA RTX A3000 Laptop GPU"));
  EXPECT_FALSE(ib::nominal_memory("NVIDIA Foo 9000"));
}

// ---------------------------------------------------------------------------------------------------------------
// Checks

TEST(ProbeChecks, HealthyWholeGpuPasses) {
  auto checks = ib::evaluate_probe(healthy());
  std::vector<std::string> ids;
  for (const auto& c : checks) ids.push_back(c.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"identity", "memory_total", "mig", "virtualization", "neighbours",
                                           "power_limit", "max_sm_clock", "pcie", "nvlink", "interconnect", "ecc",
                                           "host", "h2d_bandwidth", "load_utilization"}));
  for (const auto& c : checks) {
    EXPECT_FALSE(c.title.empty()) << c.id;
    EXPECT_FALSE(c.threshold.empty()) << c.id;
    EXPECT_FALSE(c.source.empty()) << c.id;
    EXPECT_FALSE(c.evidence.empty()) << c.id;
    if (c.id == "h2d_bandwidth" || c.id == "load_utilization")
      EXPECT_EQ(c.status, ib::CheckStatus::unknown) << c.id << ": " << c.evidence;  // not measured
    else
      EXPECT_EQ(c.status, ib::CheckStatus::pass) << c.id << ": " << c.evidence;
  }
  EXPECT_EQ(check(checks, "identity").evidence,
            "NVIDIA H200, GPU-12345678-aaaa-bbbb-cccc-1234567890ab, driver 550.90.07, CUDA 12.4, compute capability "
            "9.0, SMs not reported by NVML");
  // 143771 / 143771 = 100.0%
  EXPECT_EQ(check(checks, "memory_total").evidence,
            "143771 MiB total = 100.0% of the H200 nominal 143771 MiB (141 GB)");
  EXPECT_TRUE(contains(check(checks, "virtualization").evidence, "passed through"));
  EXPECT_EQ(check(checks, "max_sm_clock").evidence, "1980 MHz (current 345 MHz)");
  EXPECT_EQ(check(checks, "nvlink").evidence, "no NVLink (not supported on this GPU)");
  EXPECT_STREQ(ib::check_status_name(ib::CheckStatus::warn), "warn");
}

TEST(ProbeChecks, SliceSizedMemoryTotalWarns) {
  auto f = healthy();
  f.gpu.memory_total_bytes = 71424 * kMiB;  // 71424 / 143771 = 49.68% < 90%
  auto checks = ib::evaluate_probe(f);
  const auto& c = check(checks, "memory_total");
  EXPECT_EQ(c.status, ib::CheckStatus::warn);
  EXPECT_EQ(c.evidence, "71424 MiB total = 49.7% of the H200 nominal 143771 MiB (141 GB): slice or vGPU suspected");
  // 90% boundary: 0.9 × 143771 = 129393.9 MiB; 129394 MiB passes, 129393 MiB warns.
  f.gpu.memory_total_bytes = 129394 * kMiB;
  EXPECT_EQ(status(f, "memory_total"), ib::CheckStatus::pass);
  f.gpu.memory_total_bytes = 129393 * kMiB;
  EXPECT_EQ(status(f, "memory_total"), ib::CheckStatus::warn);
  // An H100 80GB shows 81559 MiB: 81559 / 81920 = 99.56% -> pass.
  f.gpu.name = "NVIDIA H100 80GB HBM3";
  f.gpu.memory_total_bytes = 81559 * kMiB;
  EXPECT_EQ(status(f, "memory_total"), ib::CheckStatus::pass);
  // Ambiguous GH200 (96 or 144 GB) with 97871 MiB: 97871 / 98304 = 99.56% of the 96 GB size -> pass, says so.
  f.gpu.name = "NVIDIA GH200 480GB";
  f.gpu.memory_total_bytes = 97871 * kMiB;
  checks = ib::evaluate_probe(f);
  EXPECT_EQ(check(checks, "memory_total").status, ib::CheckStatus::pass);
  EXPECT_TRUE(contains(check(checks, "memory_total").evidence, "99.6% of the GH200 nominal 98304 MiB"));
  EXPECT_TRUE(contains(check(checks, "memory_total").evidence, "the name does not say which"));
}

TEST(ProbeChecks, UnknownModelIsUnknownNotGuessed) {
  auto f = healthy();
  f.gpu.name = "NVIDIA Foo 9000";
  auto checks = ib::evaluate_probe(f);
  EXPECT_EQ(check(checks, "memory_total").status, ib::CheckStatus::unknown);
  EXPECT_TRUE(contains(check(checks, "memory_total").evidence, "not in the table"));
}

TEST(ProbeChecks, MigModeOnWarnsAndListsInstances) {
  auto f = healthy();
  f.mig = ib::MigModeState{true, true};
  ib::MigInstance m;
  m.gpu_instance_id = 1;
  m.compute_instance_id = 0;
  m.profile = "3g.71gb";
  m.uuid = "MIG-11111111-0000-0000-0000-000000000000";
  m.sm_count = 60;
  m.memory_bytes = 71424 * kMiB;
  f.mig_instances = {m};
  auto checks = ib::evaluate_probe(f);
  EXPECT_EQ(check(checks, "mig").status, ib::CheckStatus::warn);
  EXPECT_TRUE(contains(check(checks, "mig").evidence,
                       "1 instance(s) visible: 3g.71gb (GI 1, CI 0, 71424 MiB, 60 SMs, MIG-11111111"));
  EXPECT_TRUE(contains(check(checks, "memory_total").evidence, "MIG mode is on"));
  f.mig = std::nullopt;
  EXPECT_EQ(status(f, "mig"), ib::CheckStatus::pass);
}

TEST(ProbeChecks, VirtualizationModes) {
  auto f = healthy();
  f.gpu.virtualization = ib::VirtualizationMode::none;
  EXPECT_EQ(status(f, "virtualization"), ib::CheckStatus::pass);
  f.gpu.virtualization = ib::VirtualizationMode::vgpu;
  EXPECT_EQ(status(f, "virtualization"), ib::CheckStatus::warn);
  f.gpu.virtualization = ib::VirtualizationMode::host_vgpu;
  EXPECT_EQ(status(f, "virtualization"), ib::CheckStatus::warn);
  f.gpu.virtualization = std::nullopt;
  EXPECT_EQ(status(f, "virtualization"), ib::CheckStatus::unknown);
}

TEST(ProbeChecks, ForeignProcessesAndIdleUtilisation) {
  auto f = healthy();
  f.gpu.processes->push_back({1000, 512 * kMiB, std::nullopt, std::nullopt});  // ours
  EXPECT_EQ(status(f, "neighbours"), ib::CheckStatus::pass);
  f.gpu.processes->push_back({4242, 1024 * kMiB, std::nullopt, std::nullopt});  // a neighbour
  auto checks = ib::evaluate_probe(f);
  EXPECT_EQ(check(checks, "neighbours").status, ib::CheckStatus::warn);
  EXPECT_TRUE(contains(check(checks, "neighbours").evidence, "1 foreign compute process(es): pid 4242 using 1024 MiB"))
      << check(checks, "neighbours").evidence;

  // Utilisation: 50 readings, 10 of them at 25%: mean 10 × 25 / 50 = 5.0% (not above 5) but peak 25% -> warn.
  f = healthy();
  for (int i = 0; i < 10; ++i) f.idle_samples[i].r.util_gpu_pct = 25;
  checks = ib::evaluate_probe(f);
  EXPECT_EQ(check(checks, "neighbours").status, ib::CheckStatus::warn);
  EXPECT_TRUE(contains(check(checks, "neighbours").evidence, "mean 5.0%, peak 25%"));
  // 11 of them: mean 11 × 25 / 50 = 5.5% > 5% -> fail.
  f.idle_samples[10].r.util_gpu_pct = 25;
  EXPECT_EQ(status(f, "neighbours"), ib::CheckStatus::fail);

  // MIG: no utilisation; judged on the processes only.
  f = healthy();
  for (auto& s : f.idle_samples) s.r.util_gpu_pct.reset();
  checks = ib::evaluate_probe(f);
  EXPECT_EQ(check(checks, "neighbours").status, ib::CheckStatus::pass);
  EXPECT_TRUE(contains(check(checks, "neighbours").evidence, "judged on processes only"));
  f.gpu.processes.reset();
  EXPECT_EQ(status(f, "neighbours"), ib::CheckStatus::unknown);
}

TEST(ProbeChecks, LockedPowerLimitWarns) {
  auto f = healthy();
  f.reading->power_limit_w = 600;
  auto checks = ib::evaluate_probe(f);
  EXPECT_EQ(check(checks, "power_limit").status, ib::CheckStatus::warn);
  // 600 / 700 = 85.71%
  EXPECT_EQ(check(checks, "power_limit").evidence,
            "enforced 600 W, default 700 W: power-locked at 85.7% of the default");
  f.reading->default_power_limit_w.reset();
  EXPECT_EQ(status(f, "power_limit"), ib::CheckStatus::unknown);
}

TEST(ProbeChecks, DegradedPcieLinkWarnsWithThePowerSavingNote) {
  auto f = healthy();
  f.gpu.pcie_gen_current = 1;
  auto checks = ib::evaluate_probe(f);
  EXPECT_EQ(check(checks, "pcie").status, ib::CheckStatus::warn);
  EXPECT_TRUE(contains(check(checks, "pcie").evidence, "current Gen1 x16, max Gen5 x16: link degraded"));
  EXPECT_TRUE(contains(check(checks, "pcie").evidence, "power saving"));
  f = healthy();
  f.gpu.pcie_width_current = 8;
  EXPECT_EQ(status(f, "pcie"), ib::CheckStatus::warn);
  f.gpu.pcie_gen_max.reset();
  EXPECT_EQ(status(f, "pcie"), ib::CheckStatus::unknown);
}

// Eight GPUs, every pair answered: all NVLink passes; none, or some, over PCIe only warns and names the pairs.
TEST(ProbeChecks, InterconnectSaysWhetherTheGpusReachEachOtherOverNvlink) {
  auto f = healthy();
  EXPECT_EQ(status(f, "interconnect"), ib::CheckStatus::pass);  // one GPU
  f.gpu_count = 8;
  EXPECT_EQ(status(f, "interconnect"), ib::CheckStatus::unknown);  // NVML would not say
  for (unsigned a = 0; a < 8; ++a)
    for (unsigned b = a + 1; b < 8; ++b) {
      ib::GpuPairPath p;
      p.a = a;
      p.b = b;
      p.pci = a / 4 == b / 4 ? ib::PciPath::host_bridge : ib::PciPath::across_numa;
      p.nvlink = false;
      f.gpu_pairs.push_back(p);
    }
  auto checks = ib::evaluate_probe(f);
  EXPECT_EQ(check(checks, "interconnect").status, ib::CheckStatus::warn);
  EXPECT_TRUE(contains(check(checks, "interconnect").evidence,
                       "these 8 GPUs reach each other over PCIe only (no NVLink): 0-1 (host bridge), "))
      << check(checks, "interconnect").evidence;
  EXPECT_TRUE(contains(check(checks, "interconnect").evidence, "3-4 (across NUMA nodes)"));
  for (auto& p : f.gpu_pairs) p.nvlink = true;
  checks = ib::evaluate_probe(f);
  EXPECT_EQ(check(checks, "interconnect").status, ib::CheckStatus::pass);
  EXPECT_EQ(check(checks, "interconnect").evidence, "these 8 GPUs reach each other over NVLink (every pair)");
  f.gpu_pairs[27].nvlink = false;  // pair 6-7
  checks = ib::evaluate_probe(f);
  EXPECT_EQ(check(checks, "interconnect").status, ib::CheckStatus::warn);
  EXPECT_EQ(check(checks, "interconnect").evidence, "1 of 28 GPU pairs over PCIe only (no NVLink): 6-7 (host bridge)");
  f.gpu_pairs[27].nvlink.reset();
  EXPECT_EQ(status(f, "interconnect"), ib::CheckStatus::unknown);
}

TEST(ProbeChecks, NvlinkEccHostH2dAndLoadUtilisation) {
  auto f = healthy();
  f.gpu.nvlink_links_up = 18;
  f.gpu.nvlink_links_queried = 18;
  EXPECT_EQ(status(f, "nvlink"), ib::CheckStatus::pass);
  f.gpu.nvlink_links_up = 0;
  EXPECT_EQ(status(f, "nvlink"), ib::CheckStatus::warn);

  f = healthy();
  f.gpu.ecc_current = false;
  f.gpu.ecc_pending = false;
  EXPECT_EQ(status(f, "ecc"), ib::CheckStatus::warn);
  f.gpu.ecc_current = true;  // on, but disabling pending a reboot
  EXPECT_EQ(status(f, "ecc"), ib::CheckStatus::warn);
  f.gpu.ecc_current.reset();
  EXPECT_EQ(status(f, "ecc"), ib::CheckStatus::unknown);

  f = healthy();
  f.host.usable_cores = 2;  // below 4
  EXPECT_EQ(status(f, "host"), ib::CheckStatus::warn);
  f = healthy();
  f.host.memory_total_bytes = 64ull << 30;  // 65536 MiB < 143771 MiB of GPU memory
  auto checks = ib::evaluate_probe(f);
  EXPECT_EQ(check(checks, "host").status, ib::CheckStatus::warn);
  EXPECT_TRUE(contains(check(checks, "host").evidence, "host memory below the GPU memory (143771 MiB)"));

  // Gen5 x16 = 3.938 × 16 = 63.008 GB/s; pinned 50 -> 79% (pass); pinned 20 -> 31.7% < 50% (warn).
  EXPECT_DOUBLE_EQ(ib::pcie_link_gbps(5, 16), 3.938 * 16);
  EXPECT_DOUBLE_EQ(ib::pcie_link_gbps(3, 16), 0.985 * 16);
  EXPECT_EQ(ib::pcie_link_gbps(9, 16), 0.0);
  f = healthy();
  f.host.h2d_pinned_gbps = 50;
  f.host.h2d_pageable_gbps = 10;  // 20% of pinned
  checks = ib::evaluate_probe(f);
  EXPECT_EQ(check(checks, "h2d_bandwidth").status, ib::CheckStatus::pass);
  EXPECT_EQ(check(checks, "h2d_bandwidth").evidence,
            "pinned 50.0 GB/s, pageable 10.0 GB/s (20% of pinned); link Gen5 x16 theoretical 63.0 GB/s (pinned = 79%)");
  f.host.h2d_pinned_gbps = 20;
  EXPECT_EQ(status(f, "h2d_bandwidth"), ib::CheckStatus::warn);

  f = healthy();
  f.load_util_pct = 20;  // below 30% (seed 004)
  EXPECT_EQ(status(f, "load_utilization"), ib::CheckStatus::warn);
  f.load_util_pct = 85;
  EXPECT_EQ(status(f, "load_utilization"), ib::CheckStatus::pass);
}

TEST(ProbeChecks, MeminfoParsing) {
  ib::HostFacts h;
  ib::parse_meminfo("MemTotal:       263856256 kB\nMemFree:        1000 kB\nMemAvailable:   200000000 kB\n", h);
  EXPECT_EQ(h.memory_total_bytes, 263856256ull * 1024);
  EXPECT_EQ(h.memory_available_bytes, 200000000ull * 1024);
  auto real = ib::read_host_facts();
  EXPECT_GE(real.online_cores, 1u);
  EXPECT_GE(real.usable_cores, 1u);
  EXPECT_TRUE(real.memory_total_bytes);
}

// ---------------------------------------------------------------------------------------------------------------
// The check table, one check function at a time: hand-made facts -> the exact status and evidence.

// The check `id` of evaluate_probe(f, th), by value.
ib::ProbeCheck one(const ib::ProbeFacts& f, const std::string& id, const ib::ProbeThresholds& th = {}) {
  return check(ib::evaluate_probe(f, th), id);
}

void expect_check(const ib::ProbeFacts& f, const std::string& id, ib::CheckStatus status, const std::string& evidence,
                  const ib::ProbeThresholds& th = {}) {
  const ib::ProbeCheck c = one(f, id, th);
  EXPECT_EQ(c.status, status) << id << ": " << c.evidence;
  EXPECT_EQ(c.evidence, evidence) << id;
}

TEST(ProbeCheckTable, IdsTitlesSourcesAndDefaultThresholdsInOrder) {
  struct Row {
    const char* id;
    const char* title;
    const char* threshold;
    const char* source;
  };
  const Row rows[] = {
      {"nvml", "NVML (driver management library)", "NVML must load and initialise for any GPU check",
       "docs/design.md section 5"},
      {"identity", "GPU identity", "report only", "docs/design.md section 6"},
      {"memory_total", "Memory total vs the model's nominal memory",
       "warn below 90% of the model's nominal memory (slice or vGPU suspected)", "seed 001; docs/design.md section 6"},
      {"mig", "MIG mode and visible instances",
       "MIG off or unsupported: pass (whole GPU); MIG on: warn (work runs on a slice)",
       "seed 002; docs/design.md sections 6-7"},
      {"virtualization", "Virtualisation mode",
       "NONE or PASSTHROUGH: pass; VGPU, HOST_VGPU, HOST_VSGA: warn (shared physical GPU)",
       "seed 001; docs/design.md section 6"},
      {"neighbours", "Foreign compute processes and utilisation while we run nothing",
       "fail: mean GPU utilisation over the idle window above 5%; warn: any compute process that is not ours, or peak "
       "utilisation above 5%; pass otherwise",
       "seed 001; docs/design.md section 6"},
      {"power_limit", "Enforced vs default power limit", "warn when the enforced limit is below the default",
       "seed 003; docs/design.md sections 5-6"},
      {"max_sm_clock", "Maximum SM clock", "report only", "docs/design.md section 6"},
      {"pcie", "PCIe link, current vs max",
       "warn when the current generation or width is below the maximum (an idle GPU may downshift the link to save "
       "power: re-check under load)",
       "seed 001; docs/design.md section 6"},
      {"nvlink", "NVLink links",
       "report; warn when the GPU has NVLink links but none is active (multi-GPU traffic falls back to PCIe)",
       "docs/design.md section 6"},
      {"interconnect", "How the GPUs reach each other (NVLink or PCIe)",
       "pass: NVLink between every pair of GPUs, or one GPU; warn: a pair over PCIe only (multi-GPU training and "
       "collectives want NVLink); unknown: NVML would not say",
       "seeds 002, 003; docs/design.md section 13"},
      {"ecc", "ECC mode", "pass when ECC is on; warn when off or when a change is pending a reboot",
       "docs/design.md section 6"},
      {"host", "Host cores and memory", "warn below 4 usable cores, or host memory below 1x the GPU memory",
       "seed 001; docs/design.md section 6"},
      {"h2d_bandwidth", "Pinned vs pageable host-to-device bandwidth",
       "warn when pinned H2D is below 50% of the maximum PCIe link's theoretical rate",
       "seed 001; docs/design.md section 6"},
      {"load_utilization", "GPU utilisation under our own load", "warn below 30% (the bottleneck is elsewhere)",
       "seed 004; docs/design.md section 6"},
  };
  auto f = healthy();
  f.nvml_available = false;  // the only way to see the nvml row
  const auto checks = ib::evaluate_probe(f);
  ASSERT_EQ(checks.size(), std::size(rows));
  for (size_t i = 0; i < checks.size(); ++i) {
    EXPECT_EQ(checks[i].id, rows[i].id) << i;
    EXPECT_EQ(checks[i].title, rows[i].title) << rows[i].id;
    EXPECT_EQ(checks[i].threshold, rows[i].threshold) << rows[i].id;
    EXPECT_EQ(checks[i].source, rows[i].source) << rows[i].id;
  }
}

TEST(ProbeCheckTable, WithoutNvmlGpuChecksAreUnknownAndHostChecksAreStillJudged) {
  auto f = healthy();
  f.nvml_available = false;  // no nvml_error: the nvml check says so plainly
  f.gpu.virtualization = ib::VirtualizationMode::vgpu;  // would warn with NVML: must not be judged without it
  f.gpu.pcie_gen_current = 1;                           // would warn too
  f.host.memory_total_bytes = 64ull << 30;  // below the GPU's 143771 MiB, but without NVML there is no GPU memory
  f.host.h2d_pinned_gbps = 12;              // and no link rate to judge it against
  ib::ProbeThresholds th;
  th.min_memory_fraction = 0.8;
  th.idle_util_pct = 7;
  const auto checks = ib::evaluate_probe(f, th);
  EXPECT_EQ(check(checks, "nvml").status, ib::CheckStatus::fail);
  EXPECT_EQ(check(checks, "nvml").evidence, "NVML not available");
  for (const char* id : {"identity", "memory_total", "mig", "virtualization", "neighbours", "power_limit",
                         "max_sm_clock", "pcie", "nvlink", "ecc"}) {
    EXPECT_EQ(check(checks, id).status, ib::CheckStatus::unknown) << id;
    EXPECT_EQ(check(checks, id).evidence, "NVML not available: not checked") << id;
  }
  // Thresholds are still reported, built from the options.
  EXPECT_EQ(check(checks, "memory_total").threshold,
            "warn below 80% of the model's nominal memory (slice or vGPU suspected)");
  EXPECT_TRUE(contains(check(checks, "neighbours").threshold, "idle window above 7%; warn"))
      << check(checks, "neighbours").threshold;
  // 64 GiB = 65536 MiB; 200 GiB = 204800 MiB.
  EXPECT_EQ(check(checks, "host").status, ib::CheckStatus::pass);
  EXPECT_EQ(check(checks, "host").evidence, "16 usable of 16 online cores, memory 65536 MiB (204800 MiB available)");
  EXPECT_EQ(check(checks, "h2d_bandwidth").status, ib::CheckStatus::pass);
  EXPECT_EQ(check(checks, "h2d_bandwidth").evidence, "pinned 12.0 GB/s; link rate unknown: not judged");
  EXPECT_EQ(check(checks, "load_utilization").status, ib::CheckStatus::unknown);
  EXPECT_EQ(check(checks, "load_utilization").evidence, "not measured");
}

TEST(ProbeCheckTable, Identity) {
  auto f = healthy();
  f.gpu.driver_version.reset();
  f.gpu.cuda_driver_version.reset();
  f.gpu.cc_major.reset();
  expect_check(f, "identity", ib::CheckStatus::pass,
               "NVIDIA H200, GPU-12345678-aaaa-bbbb-cccc-1234567890ab, driver unsupported, CUDA unsupported, compute "
               "capability unsupported, SMs not reported by NVML");
  // 12080 = CUDA 12.8 (12080 / 1000 = 12, 12080 % 1000 / 10 = 8); a major without a minor reads as .0.
  f.gpu.cuda_driver_version = 12080;
  f.gpu.cc_major = 10;
  f.gpu.cc_minor.reset();
  f.gpu.sm_count = 132;
  EXPECT_EQ(one(f, "identity").evidence,
            "NVIDIA H200, GPU-12345678-aaaa-bbbb-cccc-1234567890ab, driver unsupported, CUDA 12.8, compute capability "
            "10.0, SMs 132");
}

TEST(ProbeCheckTable, MemoryTotal) {
  auto f = healthy();
  // A GH200 comes in 96 GB (98304 MiB) and 144 GB (147456 MiB). 147000 MiB reaches 90% of both (149.5%, 99.7%):
  // judged against the largest one reached, 147000 / 147456 = 99.69%.
  f.gpu.name = "NVIDIA GH200 480GB";
  f.gpu.memory_total_bytes = 147000 * kMiB;
  expect_check(f, "memory_total", ib::CheckStatus::pass,
               "147000 MiB total = 99.7% of the GH200 nominal 147456 MiB (96 or 144 GB); the model comes in 96 or 144 "
               "GB and the name does not say which");
  // 80000 MiB reaches neither (81.38% of 98304, 54.25% of 147456): judged against the closer, 81.4% -> warn.
  f.gpu.memory_total_bytes = 80000 * kMiB;
  expect_check(f, "memory_total", ib::CheckStatus::warn,
               "80000 MiB total = 81.4% of the GH200 nominal 98304 MiB (96 or 144 GB); the model comes in 96 or 144 GB "
               "and the name does not say which: slice or vGPU suspected");
  // The fraction is an option: 71424 / 143771 = 49.68% passes at 45%.
  f = healthy();
  f.gpu.memory_total_bytes = 71424 * kMiB;
  ib::ProbeThresholds th;
  th.min_memory_fraction = 0.45;
  expect_check(f, "memory_total", ib::CheckStatus::pass,
               "71424 MiB total = 49.7% of the H200 nominal 143771 MiB (141 GB)", th);
  // Unknown model, in MIG mode: not judged, and the MIG note is added.
  f = healthy();
  f.gpu.name = "NVIDIA Foo 9000";
  f.mig = ib::MigModeState{true, true};
  expect_check(f, "memory_total", ib::CheckStatus::unknown,
               "143771 MiB total; model 'NVIDIA Foo 9000' is not in the table of nominal memory: not judged; MIG mode "
               "is on: this is the whole GPU's total, work runs in a MIG instance with less (see the mig check)");
}

TEST(ProbeCheckTable, Mig) {
  auto f = healthy();
  f.mig.reset();
  expect_check(f, "mig", ib::CheckStatus::pass, "MIG not supported on this GPU: whole GPU");
  f.mig = ib::MigModeState{false, false};
  expect_check(f, "mig", ib::CheckStatus::pass, "MIG disabled: whole GPU");
  f.mig = ib::MigModeState{false, true};
  expect_check(f, "mig", ib::CheckStatus::pass, "MIG disabled: whole GPU (MIG enabling is pending a GPU reset)");
  f.mig = ib::MigModeState{true, false};
  expect_check(f, "mig", ib::CheckStatus::warn,
               "MIG mode is on: 0 instance(s) visible; a MIG instance is a partition with its own memory boundary, not "
               "the whole card (MIG disabling is pending a GPU reset)");
  f.mig = ib::MigModeState{true, true};
  ib::MigInstance a, b;
  a.gpu_instance_id = 1;
  a.profile = "3g.71gb";
  a.uuid = "MIG-a";
  a.sm_count = 60;
  a.memory_bytes = 71424 * kMiB;
  b.gpu_instance_id = 2;
  b.compute_instance_id = 1;
  b.profile = "1c.2g.35gb";
  b.uuid = "MIG-b";
  b.sm_count = 16;
  b.memory_bytes = 32768 * kMiB;
  f.mig_instances = {a, b};
  expect_check(
      f, "mig", ib::CheckStatus::warn,
      "MIG mode is on: 2 instance(s) visible: 3g.71gb (GI 1, CI 0, 71424 MiB, 60 SMs, MIG-a); 1c.2g.35gb (GI "
      "2, CI 1, 32768 MiB, 16 SMs, MIG-b); a MIG instance is a partition with its own memory boundary, not the "
      "whole card");
}

TEST(ProbeCheckTable, Virtualization) {
  auto f = healthy();
  using V = ib::VirtualizationMode;
  const struct {
    V mode;
    ib::CheckStatus status;
    const char* evidence;
  } cases[] = {
      {V::none, ib::CheckStatus::pass, "NONE: bare metal"},
      {V::passthrough, ib::CheckStatus::pass,
       "PASSTHROUGH: the whole GPU is passed through to this virtual machine (not shared by the hypervisor)"},
      {V::vgpu, ib::CheckStatus::warn,
       "VGPU: a vGPU inside a virtual machine, a time-sliced or partitioned share of a physical GPU"},
      {V::host_vgpu, ib::CheckStatus::warn,
       "HOST_VGPU: this is a hypervisor host sharing the GPU with virtual machines"},
      {V::host_vsga, ib::CheckStatus::warn,
       "HOST_VSGA: this is a hypervisor host sharing the GPU with virtual machines"},
      {V::unknown, ib::CheckStatus::unknown, "unknown virtualisation mode value"},
  };
  for (const auto& c : cases) {
    f.gpu.virtualization = c.mode;
    expect_check(f, "virtualization", c.status, c.evidence);
  }
  f.gpu.virtualization.reset();
  expect_check(f, "virtualization", ib::CheckStatus::unknown, "virtualisation mode not supported by NVML here");
}

TEST(ProbeCheckTable, Neighbours) {
  auto f = healthy();
  f.gpu.processes = std::vector<ib::ComputeProcess>{{1000, 512 * kMiB, std::nullopt, std::nullopt},  // ours
                                                    {4242, 1024 * kMiB, 2u, 0u},
                                                    {5151, std::nullopt, std::nullopt, std::nullopt}};
  f.idle_samples.front().r.memory_used_bytes = 2048 * kMiB;
  // 50 readings at 0%: mean 0.0%, peak 0%; two processes are not ours -> warn.
  expect_check(f, "neighbours", ib::CheckStatus::warn,
               "2 foreign compute process(es): pid 4242 using 1024 MiB in GI 2, pid 5151; GPU utilisation over 5.0 s "
               "idle window: mean 0.0%, peak 0% (50 readings); memory used while idle 2048 MiB");
  // Nothing to judge on: no process list and no readings.
  f.gpu.processes.reset();
  f.idle_samples.clear();
  expect_check(f, "neighbours", ib::CheckStatus::unknown,
               "compute process list unavailable (not supported or not permitted); no idle-window readings");
  // The utilisation threshold is an option: 50 readings, 10 at 25% -> mean 5.0%, peak 25%; with 30% neither is above.
  f = healthy();
  for (int i = 0; i < 10; ++i) f.idle_samples[i].r.util_gpu_pct = 25;
  ib::ProbeThresholds th;
  th.idle_util_pct = 30;
  expect_check(f, "neighbours", ib::CheckStatus::pass,
               "no foreign compute process; GPU utilisation over 5.0 s idle window: mean 5.0%, peak 25% (50 readings)",
               th);
}

TEST(ProbeCheckTable, PowerLimitAndMaxSmClock) {
  auto f = healthy();
  expect_check(f, "power_limit", ib::CheckStatus::pass, "enforced 700 W, default 700 W");
  // Without the final reading, the last idle-window reading is used: 650 / 700 = 92.86% -> power-locked.
  f.reading.reset();
  f.idle_samples.back().r.power_limit_w = 650;
  f.idle_samples.back().r.sm_clock_mhz.reset();
  expect_check(f, "power_limit", ib::CheckStatus::warn,
               "enforced 650 W, default 700 W: power-locked at 92.9% of the default");
  expect_check(f, "max_sm_clock", ib::CheckStatus::pass, "1980 MHz");
  // No reading at all.
  f.idle_samples.clear();
  expect_check(f, "power_limit", ib::CheckStatus::unknown,
               "enforced or default power limit not supported by NVML here");
  expect_check(f, "max_sm_clock", ib::CheckStatus::unknown, "maximum SM clock not supported by NVML here");
}

TEST(ProbeCheckTable, Pcie) {
  auto f = healthy();
  expect_check(f, "pcie", ib::CheckStatus::pass, "current Gen5 x16, max Gen5 x16");
  f.gpu.pcie_gen_current = 4;
  f.gpu.pcie_width_current = 8;
  expect_check(
      f, "pcie", ib::CheckStatus::warn,
      "current Gen4 x8, max Gen5 x16: link degraded; while idle this may be power saving, re-check under load");
  f.gpu.pcie_width_current.reset();
  expect_check(f, "pcie", ib::CheckStatus::unknown, "PCIe link generation/width not supported by NVML here");
}

TEST(ProbeCheckTable, Nvlink) {
  auto f = healthy();
  f.gpu.nvlink_links_up = 18;
  f.gpu.nvlink_links_queried = 18;
  expect_check(f, "nvlink", ib::CheckStatus::pass, "18 of 18 NVLink links active");
  f.gpu.nvlink_links_up = 0;
  expect_check(f, "nvlink", ib::CheckStatus::warn, "0 of 18 NVLink links active");
  f.gpu.nvlink_links_queried = 0;  // supported, but no link answered: nothing that should be up
  expect_check(f, "nvlink", ib::CheckStatus::pass, "0 of 0 NVLink links active");
}

TEST(ProbeCheckTable, Ecc) {
  auto f = healthy();
  expect_check(f, "ecc", ib::CheckStatus::pass, "ECC enabled");
  f.gpu.ecc_pending.reset();
  expect_check(f, "ecc", ib::CheckStatus::pass, "ECC enabled");
  f.gpu.ecc_pending = false;
  expect_check(f, "ecc", ib::CheckStatus::warn, "ECC enabled, disabling pending a reboot");
  f.gpu.ecc_current = false;
  expect_check(f, "ecc", ib::CheckStatus::warn, "ECC disabled (datacenter GPUs ship with ECC on)");
  f.gpu.ecc_pending = true;
  expect_check(f, "ecc", ib::CheckStatus::warn,
               "ECC disabled, enabling pending a reboot (datacenter GPUs ship with ECC on)");
  f.gpu.ecc_current.reset();
  expect_check(f, "ecc", ib::CheckStatus::unknown, "ECC not supported by this GPU or driver");
}

TEST(ProbeCheckTable, Host) {
  auto f = healthy();
  // 256 GiB = 262144 MiB, 200 GiB = 204800 MiB.
  expect_check(f, "host", ib::CheckStatus::pass,
               "16 usable of 16 online cores, memory 262144 MiB (204800 MiB available)");
  // Exactly 4 usable cores is not below 4: pass; 3 is.
  f.host.usable_cores = 4;
  EXPECT_EQ(one(f, "host").status, ib::CheckStatus::pass);
  f.host.usable_cores = 3;
  f.host.memory_total_bytes = 64ull << 30;  // 65536 MiB < 1 x 143771 MiB
  f.host.memory_available_bytes.reset();
  expect_check(
      f, "host", ib::CheckStatus::warn,
      "3 usable of 16 online cores, memory 65536 MiB: few cores; host memory below the GPU memory (143771 MiB)");
  // Options: 2 cores and 0.25 x the GPU memory (35942.75 MiB) are enough.
  ib::ProbeThresholds th;
  th.min_host_cores = 2;
  th.min_host_memory_ratio = 0.25;
  EXPECT_EQ(one(f, "host", th).status, ib::CheckStatus::pass);
  EXPECT_EQ(one(f, "host", th).threshold, "warn below 2 usable cores, or host memory below 0.25x the GPU memory");
  // Nothing readable: unknown, though 0 cores still counts as "few" in the evidence.
  f.host = ib::HostFacts{};
  expect_check(f, "host", ib::CheckStatus::unknown,
               "0 usable of 0 online cores, memory unknown (/proc/meminfo unreadable): few cores");
}

TEST(ProbeCheckTable, H2dBandwidth) {
  auto f = healthy();
  const double link = ib::pcie_link_gbps(5, 16);  // 3.938 x 16 = 63.008 GB/s
  // Exactly half the link is not below half: pass; the next double below is.
  f.host.h2d_pinned_gbps = 0.5 * link;
  expect_check(f, "h2d_bandwidth", ib::CheckStatus::pass,
               "pinned 31.5 GB/s; link Gen5 x16 theoretical 63.0 GB/s (pinned = 50%)");
  f.host.h2d_pinned_gbps = std::nextafter(0.5 * link, 0.0);
  EXPECT_EQ(one(f, "h2d_bandwidth").status, ib::CheckStatus::warn);
  // Pinned 0 with a pageable figure: no "of pinned" ratio (it would divide by 0).
  f.host.h2d_pinned_gbps = 0;
  f.host.h2d_pageable_gbps = 5;
  expect_check(f, "h2d_bandwidth", ib::CheckStatus::warn,
               "pinned 0.0 GB/s, pageable 5.0 GB/s; link Gen5 x16 theoretical 63.0 GB/s (pinned = 0%)");
  // Unknown link rate: reported, not judged.
  f.gpu.pcie_width_max.reset();
  expect_check(f, "h2d_bandwidth", ib::CheckStatus::pass,
               "pinned 0.0 GB/s, pageable 5.0 GB/s; link rate unknown: not judged");
  f.host.h2d_pinned_gbps.reset();
  expect_check(f, "h2d_bandwidth", ib::CheckStatus::unknown, "not measured");
}

TEST(ProbeCheckTable, LoadUtilization) {
  auto f = healthy();
  expect_check(f, "load_utilization", ib::CheckStatus::unknown, "not measured");
  f.load_util_pct = 30;  // exactly 30% is not below 30%
  expect_check(f, "load_utilization", ib::CheckStatus::pass, "mean GPU utilisation 30.0% under our load");
  f.load_util_pct = 29.9;
  expect_check(f, "load_utilization", ib::CheckStatus::warn,
               "mean GPU utilisation 29.9% under our load: the bottleneck is elsewhere (CPU, I/O, input pipeline)");
  ib::ProbeThresholds th;
  th.min_load_util_pct = 20;
  EXPECT_EQ(one(f, "load_utilization", th).status, ib::CheckStatus::pass);
  EXPECT_EQ(one(f, "load_utilization", th).threshold, "warn below 20% (the bottleneck is elsewhere)");
}

// ---------------------------------------------------------------------------------------------------------------
// NVML missing, and the probe against the fake NVML

class ProbeNvmlTest : public ib_test::FakeNvmlEnv {};

TEST_F(ProbeNvmlTest, NvmlMissingFailsTheNvmlCheckAndLeavesGpuChecksUnknown) {
  std::string missing = (dir_ / "libnvidia-ml-missing.so.1").string();
  setenv("INTERFERENCE_BENCH_NVML", missing.c_str(), 1);
  ib::ProbeFacts f;
  try {
    ib::Nvml::load();
    FAIL() << "expected NvmlError";
  } catch (const ib::NvmlError& e) {
    f.nvml_available = false;
    f.nvml_error = e.what();
  }
  EXPECT_EQ(f.nvml_error.rfind("NVML not available: cannot load " + missing, 0), 0u) << f.nvml_error;
  f.host = ib::read_host_facts();
  auto checks = ib::evaluate_probe(f);
  ASSERT_FALSE(checks.empty());
  EXPECT_EQ(checks[0].id, "nvml");
  EXPECT_EQ(checks[0].status, ib::CheckStatus::fail);
  EXPECT_EQ(checks[0].evidence, f.nvml_error);
  for (const char* id : {"identity", "memory_total", "mig", "virtualization", "neighbours", "power_limit",
                         "max_sm_clock", "pcie", "nvlink", "ecc"}) {
    EXPECT_EQ(check(checks, id).status, ib::CheckStatus::unknown) << id;
    EXPECT_EQ(check(checks, id).evidence, "NVML not available: not checked") << id;
  }
  EXPECT_NE(check(checks, "host").status, ib::CheckStatus::unknown);  // the host is still probed
}

TEST_F(ProbeNvmlTest, CollectsFactsFromTheFakeAndFlagsAShare) {
  // A "rented H200" that is really a 71 GB slice, power-locked at 600 W, with a neighbour, on a degraded link.
  json dev = {{"name", "NVIDIA H200"},
              {"memory_mb", 71424},
              {"virtualization_mode", 2},
              {"telemetry", {{"power_limit_w", 600}, {"util_gpu", 0}, {"sm_clock", 345}}},
              {"pcie", {{"gen", 4}, {"width", 8}}},
              {"processes", json::array({{{"pid", 4242}, {"used_mb", 30000}}})}};
  write_config({{"devices", json::array({dev})}});
  auto nvml = ib::Nvml::load();
  ib::ProbeFacts f = ib::collect_probe_facts(*nvml, 0, 0.2, 50.0);  // 0.2 s idle window at 50 Hz
  EXPECT_GE(f.idle_samples.size(), 2u);
  EXPECT_EQ(f.own_pids, (std::vector<unsigned>{static_cast<unsigned>(getpid())}));
  EXPECT_FALSE(f.mig);  // no "mig" in the config: MIG not supported
  auto checks = ib::evaluate_probe(f);
  EXPECT_EQ(check(checks, "memory_total").status, ib::CheckStatus::warn);
  EXPECT_EQ(check(checks, "virtualization").status, ib::CheckStatus::warn);
  EXPECT_EQ(check(checks, "neighbours").status, ib::CheckStatus::warn);
  EXPECT_EQ(check(checks, "power_limit").status, ib::CheckStatus::warn);
  EXPECT_EQ(check(checks, "pcie").status, ib::CheckStatus::warn);
  EXPECT_EQ(check(checks, "pcie").evidence.rfind("current Gen4 x8, max Gen5 x16", 0), 0u);
  EXPECT_EQ(check(checks, "mig").status, ib::CheckStatus::pass);
  EXPECT_EQ(check(checks, "ecc").status, ib::CheckStatus::pass);
  EXPECT_EQ(check(checks, "max_sm_clock").evidence, "1980 MHz (current 345 MHz)");
}

// ---------------------------------------------------------------------------------------------------------------
// Cost advice

TEST(CostAdvice, CheaperSharedIsRecommendedWhenP95Passes) {
  // Exclusive: 100 units/s at 3.60/h -> 3.60 / 3600 / 100 = 1.0e-5 per unit.
  // Shared:     60 units/s at 1.80/h -> 1.80 / 3600 / 60  = 8.333e-6 per unit; ratio 8.333e-6 / 1e-5 = 0.8333.
  auto a = ib::cost_advice(100, 60, 3.60, 1.80, true);
  EXPECT_NEAR(a.exclusive.cost_per_unit, 1.0e-5, 1e-15);
  EXPECT_NEAR(a.shared.cost_per_unit, 8.3333333333e-6, 1e-15);
  EXPECT_NEAR(a.exclusive.time_per_unit_s, 0.01, 1e-15);  // 1 / 100
  EXPECT_NEAR(a.shared.time_per_unit_s, 1.0 / 60, 1e-15);
  EXPECT_NEAR(a.shared_to_exclusive_cost, 5.0 / 6.0, 1e-12);
  EXPECT_EQ(a.recommendation, ib::Recommendation::shared);
  EXPECT_TRUE(contains(a.reason, "16.7% less")) << a.reason;  // 1 - 5/6 = 16.67%
  EXPECT_STREQ(ib::recommendation_name(a.recommendation), "shared");
}

TEST(CostAdvice, NeverSharedWhenP95CutoffFails) {
  auto a = ib::cost_advice(100, 60, 3.60, 1.80, false);  // shared is cheaper (as above) but failed P95
  EXPECT_EQ(a.recommendation, ib::Recommendation::exclusive);
  EXPECT_TRUE(contains(a.reason, "not recommended even though it is cheaper")) << a.reason;
  EXPECT_NEAR(a.shared.cost_per_unit, 8.3333333333e-6, 1e-15);  // the costs are still reported
}

TEST(CostAdvice, SeedFormulaSwitchesToExclusive) {
  // Shared 40 units/s at 1.80/h: T_share × P_share = (1/40) × 1.80 = 0.045 > T_excl × P_excl = (1/100) × 3.60 =
  // 0.036 -> exclusive. Per unit: 1.80 / 3600 / 40 = 1.25e-5 > 1.0e-5.
  auto a = ib::cost_advice(100, 40, 3.60, 1.80, true);
  EXPECT_NEAR(a.shared.cost_per_unit, 1.25e-5, 1e-15);
  EXPECT_NEAR(a.shared_to_exclusive_cost, 1.25, 1e-12);
  EXPECT_EQ(a.recommendation, ib::Recommendation::exclusive);
  // Tie: 4.00/h at 100 units/s and 2.00/h at 50 units/s both cost 4 / 3600 / 100 = 1.111e-5: exclusive.
  a = ib::cost_advice(100, 50, 4.0, 2.0, true);
  EXPECT_EQ(a.shared.cost_per_unit, a.exclusive.cost_per_unit);
  EXPECT_EQ(a.recommendation, ib::Recommendation::exclusive);
  EXPECT_TRUE(contains(a.reason, "tie goes to exclusive")) << a.reason;
}

TEST(CostAdvice, InvalidInputsAreUndecided) {
  EXPECT_EQ(ib::cost_advice(0, 50, 4, 2, true).recommendation, ib::Recommendation::undecided);
  EXPECT_EQ(ib::cost_advice(100, -1, 4, 2, true).recommendation, ib::Recommendation::undecided);
  EXPECT_EQ(ib::cost_advice(100, 50, -4, 2, true).recommendation, ib::Recommendation::undecided);
  EXPECT_EQ(ib::cost_advice(100, 50, 4, std::nan(""), true).recommendation, ib::Recommendation::undecided);
  EXPECT_TRUE(contains(ib::cost_advice(0, 50, 4, 2, true).reason, "throughputs must be positive"));
  // A free shared option (price 0) is valid: cost 0 < exclusive -> shared.
  EXPECT_EQ(ib::cost_advice(100, 50, 4, 0, true).recommendation, ib::Recommendation::shared);
}

TEST(BaselineModel, SameModelPassesAnotherWarnsUnnamedIsUnknown) {
  EXPECT_EQ(ib::baseline_model_check("NVIDIA H200", "NVIDIA H200", "b.json").status, ib::CheckStatus::pass);
  const auto other = ib::baseline_model_check("NVIDIA H100 80GB HBM3", "NVIDIA H200", "b.json");
  EXPECT_EQ(other.status, ib::CheckStatus::warn);
  EXPECT_TRUE(contains(other.evidence, "baseline measured on NVIDIA H100 80GB HBM3, this GPU is NVIDIA H200"))
      << other.evidence;
  const auto unnamed = ib::baseline_model_check("", "NVIDIA H200", "b.json");
  EXPECT_EQ(unnamed.status, ib::CheckStatus::unknown);
  EXPECT_TRUE(contains(unnamed.evidence, "b.json does not name its GPU"));
}

}  // namespace
