// Probe: nominal memory table, every check's pass/warn/fail/unknown, NVML missing, the probe against the fake NVML,
// and the cost advice arithmetic. Every expected number is computed by hand in a comment next to it.
#include "harness/vet/probe.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cmath>

#include <string>
#include <vector>

#include "harness/nvml/nvml.h"
#include "tests/unit/fake_nvml_env.h"

using nlohmann::json;

namespace {

constexpr unsigned long long kMiB = 1ull << 20;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

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
                                           "power_limit", "max_sm_clock", "pcie", "nvlink", "ecc", "host",
                                           "h2d_bandwidth", "load_utilization"}));
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
  EXPECT_EQ(check(checks, "memory_total").evidence, "143771 MiB total = 100.0% of the H200 nominal 143771 MiB (141 GB)");
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
  EXPECT_EQ(check(checks, "power_limit").evidence, "enforced 600 W, default 700 W: power-locked at 85.7% of the default");
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
